"""FEDIC's figures and shown tables, drawn from the results of its studies (:mod:`.studies`) and
tables, and saved through the notebook's :class:`fedlib.repro.artefacts.context.Context` (the shared style of
:mod:`fedlib.repro.artefacts.figures`).

Each figure function draws one figure of a notebook, saves it (``ctx.save_figure``, with the study's
findings) and returns it; :func:`values_view` shows a figure study's values as a DataFrame.
"""

from __future__ import annotations

import math

import pandas as pd

from ...repro.artefacts import figures as F
from ...repro.artefacts.figure_rules import label_cell, label_empty_bars, mark_empty, why_empty
from . import reported
from .experiments import CIFAR10_LT, curve, datasets_used

__all__ = ["GROUP_COLORS", "values_view", "long_tail_counts", "table3_groups", "fig3_aux_size",
           "fig4_lambda", "fig5_alpha", "head_share", "head_share_line"]

#: Colours of the many / medium / few class groups.
GROUP_COLORS = {"many": "tab:blue", "medium": "tab:orange", "few": "tab:red"}


def _on(ctx, grid) -> str:
    """" (run on FashionMNIST-LT)" for the datasets a grid trained on ("" when none ran)."""
    used = datasets_used(grid)
    return f" (run on {', '.join(ctx.paper.dataset_label(u) for u in used)})" if used else ""


def _long_tail(params: dict = CIFAR10_LT) -> str:
    """The long tail a figure's runs train under, as its title names it: ``CIFAR10_LT`` for Figs. 3-5, a
    table's column parameters for Table 3."""
    return f", IF = {params['long_tail_if']:g}"


def _std_caption(frame: pd.DataFrame, x: str, name: str) -> str:
    """The error bars' sentence of a :func:`_curves` figure: std over its seeds, and the values of ``x`` (called
    ``name``) where a point holds fewer (a seed without a result, e.g. a partition that could not be drawn)."""
    n = F.seeds_of(frame)
    text = F.std_caption(n)
    ran = frame[frame.ours_mean.notna()]
    fewer = sorted({float(v) for v, k in zip(ran[x], ran.n_seeds) if pd.notna(k) and k < n})
    if text and fewer:
        text = (text[:-1] + f", over fewer at {name} = {', '.join(f'{v:g}' for v in fewer)} (a seed without a "
                "result there: the values table says why).")
    return text


def _curves(ax, frame: pd.DataFrame, x: str, by: str | None, label, why: str = "") -> None:
    """One line per ``by`` group (mean over seeds; error bars only where >= 2 seeds), its cells
    that diverged or did not run labelled at the bottom of the data (:mod:`fedlib.repro.artefacts.figure_rules`);
    ticks at the values of ``x``.  Nothing of ours: nothing drawn but what the axes would show and ``why`` it
    is empty (the paper gives these values only in its image), so that no PNG is written (the caption's seeds:
    :func:`_std_caption`)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    n = F.seeds_of(frame)
    groups = frame.groupby(by, sort=False) if by else [(None, frame)]
    ran = frame.ours_mean.notna().any()
    floor = frame.ours_mean.min() if ran else 0.0
    if not ran:  # a figure of nothing is not drawn (save_figure writes its sidecar only, saying why)
        mark_empty(ax, "accuracy against " + x, (why or "not run in this profile")
                   + "; the paper gives these values only in its image, so there is nothing to draw beside them")
        ax.set_axis_off()
        return
    # the axes span every swept value, drawn or not, so that a label of a cell that did not run lies inside it
    ax.update_datalim([(float(v), floor) for v in frame[x].dropna().unique()])
    ax.autoscale_view(scaley=ran)
    for i, (key, s) in enumerate(groups):
        s = s.sort_values(x)
        yerr = s.ours_std.where(s.n_seeds >= 2) if n >= 2 else None  # one seed: no error bar, not a 0-height one
        # every other curve's marker hollow and larger: where two curves meet (FT and FEDIC in Fig. 3), the one
        # drawn first still shows as a ring around the other
        line = ax.errorbar(s[x], s.ours_mean, yerr=yerr, marker="os^Dv<>"[i % 7], capsize=2, label=label(key),
                           mfc="none" if i % 2 else None, ms=8 if i % 2 else 6)
        for r in s[s.ours_mean.isna()].to_dict("records"):  # records: x may be a keyword ("lambda")
            word = "diverged" if r.get("status", "") == "diverged" else "not run"
            label_cell(ax, r[x], floor, word, key=f"{label(key)} @ {r[x]:g}",
                       color=line.lines[0].get_color(), va="top" if ran else "bottom", rotation=90)
    ticks = sorted(float(v) for v in frame[x].dropna().unique())
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    # a value where a point holds fewer seeds than the others (a seed without a result there) says so at its tick
    counts = frame[frame.ours_mean.notna()].groupby(x).n_seeds.agg(["min", "max"])
    fewer = {float(v): (f"{int(c['min'])}" if c["min"] == c["max"] else f"{int(c['min'])}-{int(c['max'])}")
             for v, c in counts.iterrows() if n >= 2 and pd.notna(c["min"]) and c["min"] < n}
    ax.xaxis.set_major_formatter(FuncFormatter(
        lambda v, _: f"{v:g}" + (f"\n({fewer[float(v)]} of {n} seeds)" if float(v) in fewer else "")))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def head_share(ctx) -> dict | None:
    """The accuracy of a model right on the long-tailed training set's head classes alone (:func:`.learns.head_of`:
    the classes holding half its samples, on the balanced test set), under ``ctx``'s profile: ``share`` (%),
    ``classes`` ("0, 1") and ``margin_pp``, how far above it the learns study counts a model as learnt.  A model
    near it has learned little beyond the head classes, as a series near 1/K has learned nothing.  None where the
    split is not drawn here (the cell does not run under this profile, or its dataset is absent)."""
    from .learns import LEARNS, head_of

    opts = LEARNS.options_for(ctx.profile)
    head = head_of(ctx.profile, opts)
    if math.isnan(head["share"]):
        return None
    return {"share": float(head["share"]), "classes": ", ".join(map(str, head["classes"])),
            "margin_pp": float(opts.margin_pp)}


def head_share_line(ax, head: dict | None) -> str:
    """:func:`head_share` as a dotted line in ``ax``, labelled in place; returns the caption's sentence ("" and
    nothing drawn for None)."""
    if head is None:
        return ""
    ax.axhline(head["share"], color="0.35", ls=":", lw=1.0, zorder=0.6)
    ax.annotate(f"head classes only: {head['share']:.1f} %", xy=(0.33, head["share"]),
                xycoords=("axes fraction", "data"), xytext=(0, 2), textcoords="offset points", ha="center",
                va="bottom", fontsize=7, color="0.3")
    return (f"Dotted: the accuracy of a model right on the head classes {head['classes']} of our long-tailed "
            f"training set alone ({head['share']:.1f} %); a model near it has learned little beyond them.")


def values_view(frame: pd.DataFrame, x: str):
    """A figure study's values (:func:`.experiments.curve`) to show: the swept value ``x`` as given, the
    mean and std over seeds in % with two decimals ("—": not run, or one seed)."""
    return frame.style.format("{:.2f}", subset=["ours_mean", "ours_std"], na_rep="—").format("{:g}", subset=[x])


def long_tail_counts(ctx, data):
    """§3.1 (the ``long_tail`` study): training samples per class after D_aux and the long tail, coloured
    by group, and D_aux per class (a placeholder when the dataset is absent)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    counts, info = data.summary["counts"], data.summary["setting"]

    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    if counts is not None:
        ax.bar(counts["class"] - 0.2, counts.train_count, width=0.4, color=[GROUP_COLORS[g] for g in counts.group])
        ax.bar(counts["class"] + 0.2, counts.aux_count, width=0.4, color="0.6")
        ax.legend(handles=[Patch(color=c, label=f"{g} (training)") for g, c in GROUP_COLORS.items()]
                  + [Patch(color="0.6", label="D_aux")], fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.set_yscale("log")
        ax.set_xticks(counts["class"])
        ax.set_xlabel("class")
        ax.set_ylabel("samples")
        ax.set_title(f"{ctx.paper.dataset_label(info['dataset'])}, IF = {info['long_tail_if']:g}: "
                     f"{info['train']} training samples")
    else:
        ax.text(0.5, 0.5, "dataset absent: not run", ha="center", va="center")
        ax.set_axis_off()
    fig.tight_layout()
    ctx.save_figure(fig, "long_tail_counts", experiment="long_tail",
                    title="§3.1: training samples per class after D_aux and the long tail (IF = 100), by group",
                    caption="Coloured: training count by group (many / medium / few); grey: D_aux per class.",
                    datasets=[info["dataset"]] if counts is not None else [], placeholder=counts is None,
                    parameters=info, findings=data.findings)
    return fig


def fig3_aux_size(ctx, study):
    """Fig. 3 (the ``fig3`` study): FedAvg, FT and FEDIC against the size of D_aux (per D_ulb)."""
    import matplotlib.pyplot as plt

    fig3, grid = study.summary, study.grid

    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    ax.set_xscale("log")
    _curves(ax, fig3, "aux_per_class", ["curve", "ulb"],
            lambda k: "FedAvg (no D_aux;\nclients hold the rest)" if k[0] == "FedAvg" else f"{k[0]}, D_ulb {k[1]}",
            why_empty(grid, ctx.profile.name))
    ax.set_xlabel("D_aux per class")
    ax.set_ylabel("test accuracy (%)")
    if fig3.ours_mean.notna().any():
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("Fig. 3: FedAvg, FT and FEDIC against the size of D_aux" + _long_tail() + _on(ctx, grid),
                 fontsize=9)
    fig.tight_layout()
    ctx.save_figure(fig, "fig3_aux_size", experiment="fig3", title="Fig. 3: accuracy against the size of D_aux",
                    caption="FedAvg trains on no D_aux, but D_aux is taken out of the training set before the long "
                            "tail and the partition (server_aux_per_class), so each size gives its clients another "
                            "split. FT: the global model fine-tuned on D_aux (the teacher of FEDIC with LA off); a run "
                            "whose model stopped being finite is labelled 'diverged'. "
                            + _std_caption(fig3, "aux_per_class", "D_aux per class"),
                    datasets=datasets_used(grid), placeholder=not fig3.ours_mean.notna().any(),
                    findings=study.findings)
    return fig


def fig4_lambda(ctx, study):
    """Fig. 4 (the ``fig4`` study): FEDIC against λ of Eq. 9."""
    import matplotlib.pyplot as plt

    fig4, grid = study.summary, study.grid

    fig, ax = plt.subplots(figsize=(5.0, 3.2))
    _curves(ax, fig4, "lambda", None, lambda k: "FEDIC", why_empty(grid, ctx.profile.name))
    ax.set_xlabel("λ (weight of the KL in Eq. 9)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("Fig. 4: FEDIC against λ" + _long_tail() + _on(ctx, grid))
    fig.tight_layout()
    ctx.save_figure(fig, "fig4_lambda", experiment="fig4", title="Fig. 4: FEDIC's accuracy against λ",
                    caption=_std_caption(fig4, "lambda", "λ"),
                    datasets=datasets_used(grid), placeholder=not fig4.ours_mean.notna().any(),
                    findings=study.findings)
    return fig


def fig5_alpha(ctx, study):
    """Fig. 5 (the ``fig5`` study): every method against the non-IID degree α (smaller: more non-IID)."""
    import matplotlib.pyplot as plt

    fig5, grid = study.summary, study.grid

    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    ax.set_xscale("log")
    _curves(ax, fig5, "alpha", "curve", lambda k: k, why_empty(grid, ctx.profile.name))
    ax.invert_xaxis()
    ax.set_xlabel("α of D(α) (smaller: more non-IID)")
    ax.set_ylabel("test accuracy (%)")
    if fig5.ours_mean.notna().any():
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("Fig. 5: accuracy against the non-IID degree" + _long_tail() + _on(ctx, grid), fontsize=9)
    fig.tight_layout()
    ctx.save_figure(fig, "fig5_alpha", experiment="fig5", title="Fig. 5: accuracy against the non-IID degree α",
                    caption=_std_caption(fig5, "alpha", "α"),
                    datasets=datasets_used(grid), placeholder=not fig5.ours_mean.notna().any(),
                    findings=study.findings)
    return fig


def _seeds_label(counts: pd.Series) -> str:
    """"3 seeds", or "seeds 3/1/1/1" (bar by bar, in the legend's order) where the bars of one row differ."""
    known = counts.dropna()
    if known.nunique() <= 1:
        return f"{int(known.iloc[0])} seed{'s' if int(known.iloc[0]) != 1 else ''}" if len(known) else "not run"
    return "seeds " + "/".join("–" if pd.isna(k) else str(int(k)) for k in counts)


def table3_groups(ctx, study):
    """Table 3 (ours) by row and group (the ``table3_groups`` study): the teachers (a)-(d) and distilled
    students (e)-(h)."""
    import matplotlib.pyplot as plt

    wide, grid = study.summary.dropna(how="all"), study.grid  # the rows that ran
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    n = 1
    if wide.notna().any().any():
        long = curve(grid, ["row_label", "column_label"])  # the summary's means, with their std and seeds
        std = long.pivot(index="row_label", columns="column_label", values="ours_std").reindex_like(wide)
        seeds = long.pivot(index="row_label", columns="column_label", values="n_seeds").reindex_like(wide)
        n = int(seeds.max().max())
        wide.plot.bar(ax=ax, rot=0, yerr=std.where(seeds >= 2) if n >= 2 else None, capsize=2,
                      error_kw={"lw": 0.8})
        if n >= 2:  # the seeds of each row's bars, where they differ (decide added seeds to some cells)
            ax.set_xticks(range(len(wide)), [f"{r}\n({_seeds_label(seeds.loc[r])})" for r in wide.index])
        ax.tick_params(axis="x", labelsize=7)  # eight row labels side by side
        label_empty_bars(ax, missing="not run")
        ax.set_ylabel("test accuracy (%)")
        ax.set_xlabel("")
        ax.legend(title=None, fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        mark_empty(ax, "accuracy of every class and of the many / medium / few groups, row by row",
                   why_empty(grid, ctx.profile.name))
        ax.set_axis_off()
    tails = dict.fromkeys(_long_tail(c.params) for c in reported.TABLES["table3"].columns)  # one IF, the paper's
    ax.set_title("Table 3 (ours): teachers (a)-(d) and distilled students (e)-(h), by group" + "".join(tails)
                 + _on(ctx, grid), fontsize=9)
    fig.tight_layout()
    few = ("" if "fmnist" not in datasets_used(grid) else
           " On the FashionMNIST-LT stand-in the 'few' classes (7-9: sneaker, bag, ankle boot) are FashionMNIST's "
           "easiest, so 'few' accuracy can beat 'many' although they have the fewest training samples; on CIFAR-10-LT "
           "(the paper) the few classes are hard.")
    ctx.save_figure(fig, "table3_groups", experiment="table3", title="Table 3 (ours) by row and group",
                    caption="Bars: ours, mean over seeds of the accuracy of all classes and of the many / medium / "
                            "few groups; under each row, its seeds (bar by bar, in the legend's order, where they differ). " + F.std_caption(n) + few,
                    datasets=datasets_used(grid), placeholder=not datasets_used(grid), findings=study.findings)
    return fig
