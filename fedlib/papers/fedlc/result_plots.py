"""FedLC's figures of the results: the calibration study (§4), the label-skew partitions (Fig. 4),
the paper's tables as curves, Fig. 5 and the stand-in check, drawn from the studies' summaries and
the reproduced tables, and saved through the notebook's :class:`fedlib.repro.artefacts.context.Context`.

Each function draws one figure, saves it (``ctx.save_figure``) and returns it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...repro.artefacts import figures as F
from ...repro.verdict.compare import add_column_param
from ...repro.artefacts.figure_rules import declare, label_cell
from ...repro.artefacts.gap_curves import gap_caption, plot_gaps
from ...repro.artefacts.not_run import short_reason
from . import PAPER
from ...repro.budget.gate import data_view, decide
from .label_skew import FIG4_SETTINGS
from .plots import _dataset, _palette, _std
from .stand_in import ON_CIFAR10, STAND_IN

__all__ = ["calibration_bars", "tau_curve", "partitions", "profile_partitions", "table_curve", "fig5_curves",
           "stand_in_effects", "table7_curve"]

_OURS_VS_PAPER = "Ours: solid, filled markers; the paper: dashed, open markers."


def _spread_caption(spread: dict) -> str:
    """The error bars' caption when panels' bars are over different numbers of seeds (``{panel: seeds}``):
    "Error bars: std over 3 seeds (D(β=0.5): std over 2 seeds)."."""
    if not spread:
        return ""
    most = max(spread.values(), key=list(spread.values()).count)
    others = "; ".join(f"{k}: std over {n} seeds" for k, n in spread.items() if n != most)
    return F.std_caption(most) if not others else F.std_caption(most)[:-1] + f" ({others})."


def calibration_bars(ctx, calib: dict, name: str = "calibration_variants_bars",
                     title: str = "§4: FedLC loss variants in federated runs", heading: str = "FedLC loss variants"):
    """§4: accuracy of every loss variant per setting (horizontal bars; dashed: FedAvg), from the
    ``calibration`` study's summary (or the ``absent_classes`` study's, saved as ``name``)."""
    import matplotlib.pyplot as plt

    plot = calib["var"].copy()
    order = list(dict.fromkeys(plot.label))
    fig, axes = plt.subplots(1, plot.setting.nunique(), figsize=(4.6 * plot.setting.nunique(), 3.6), squeeze=False)
    palette = dict(zip(order, _palette()))
    spread = {}  # setting -> the seeds its error bars are over (a GPU's cells may have fewer than the CPU's)
    for ax, (setting, d) in zip(axes[0], plot.groupby("setting", sort=False)):
        d = d.set_index("label").reindex(order)
        xerr, n = _std(d)
        if xerr is not None:
            declare(ax, seeds=n)
            spread[setting] = n
        ax.barh(range(len(d)), d.ours_mean, xerr=xerr, color=[palette[lab] for lab in d.index])
        # on a white ground above the dashed FedAvg rule, which otherwise strikes through a value near it
        ax.bar_label(ax.containers[-1], fmt="%.1f", fontsize=7, padding=2, zorder=5,
                     bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.85})
        notes = d.get("note", pd.Series("", index=d.index))
        for i, st in enumerate(d.get("status", pd.Series("ok", index=d.index))):
            if pd.isna(d.ours_mean.iloc[i]):  # why, in a few words: a GPU, an absent dataset, the profile
                label_cell(ax, 0, i, "diverged" if st == "diverged" else "not run", key=str(d.index[i]),
                           text=None if st == "diverged" else short_reason(notes.iloc[i], ctx.profile.name),
                           ha="left", va="center")
        ax.axvline(d.loc[plot.label[plot.variant == "fedavg"].iloc[0], "ours_mean"], color="k", ls="--", lw=0.8,
                   label="FedAvg (ours)")
        ax.set_yticks(range(len(d)), d.index if ax is axes[0][0] else [""] * len(d))
        ax.set_ylim(len(d) - 0.5, -0.5)  # every variant, top to bottom: a bar without a value sets no limit
        ax.set_title(setting)
        ax.set_xlabel("test accuracy (%)")
        ax.set_xlim(0, max(100.0, float(np.nanmax(d.ours_mean + (d.ours_std.fillna(0) if n >= 2 else 0)))
                           if d.ours_mean.notna().any() else 100.0) * 1.12)
    axes[0][-1].legend(loc="lower right", fontsize=7, frameon=False)  # the dashed rule, named in the image
    used = calib["datasets"]
    fig.suptitle(f"{heading}, " + ", ".join(_dataset(u) for u in used))
    fig.tight_layout()
    ctx.save_figure(fig, name, experiment="calibration", title=title,
                    caption=f"Dashed: FedAvg. {calib['tau_text']}. " + _spread_caption(spread),
                    datasets=calib["datasets"])
    return fig


def tau_curve(ctx, sweep: dict, grid=None):
    """§4: accuracy against τ per margin, FedAvg and FedRS as horizontal lines, from the
    ``calibration_tau`` study's summary (``grid``: its grid, to say why nothing ran where nothing did)."""
    import matplotlib.pyplot as plt

    from ...repro.artefacts.figure_rules import mark_empty, why_empty

    tau_tab, base = sweep["tau"], sweep["baselines"]
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    if not tau_tab.ours_mean.notna().any() and not base.ours_mean.notna().any():
        mark_empty(ax, "FedLC's test accuracy against τ, beside FedAvg and FedRS", why_empty(grid, ctx.profile.name))
        ctx.save_figure(fig, "calibration_tau_curve", experiment="calibration",
                        title="§4: sensitivity of FedLC to τ", caption="Nothing of this sweep ran here.",
                        datasets=[], placeholder=True)
        return fig
    floor = tau_tab.ours_mean.min() if tau_tab.ours_mean.notna().any() else 0.0
    for (v, lab), d in tau_tab.groupby(["variant", "label"], sort=False):
        line = ax.errorbar(d.tau, d.ours_mean, yerr=_std(d)[0], marker="o", capsize=2, label=lab)
        for r in d[d.ours_mean.isna()].itertuples():
            label_cell(ax, r.tau, floor, "diverged" if getattr(r, "status", "") == "diverged" else "not run",
                       key=f"{lab} @ τ = {r.tau:g}", color=line.lines[0].get_color(), va="top", rotation=90)
    for (_, r), ls in zip(base.iterrows(), ("--", ":")):
        ax.axhline(r.ours_mean, color="k", ls=ls, lw=0.8, label=r.label)
    ax.set_xscale("log")
    ax.set_xticks(sorted(tau_tab.tau.dropna().unique()), [f"{t:g}" for t in sorted(tau_tab.tau.dropna().unique())])
    ax.minorticks_off()
    ax.set_xlabel("τ")
    ax.set_ylabel("test accuracy (%)")
    used = ", ".join(_dataset(u) for u in sweep["datasets"])
    ax.set_title(f"τ sweep, {base.setting.iloc[0] if len(base) else ''} ({used})")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ctx.save_figure(fig, "calibration_tau_curve", experiment="calibration", title="§4: sensitivity of FedLC to τ",
                    caption="Dashed / dotted: FedAvg / FedRS in the same setting. "
                            + F.std_caption(F.seeds_of(tau_tab)),
                    datasets=sweep["datasets"])
    return fig


def partitions(ctx, counts: dict, seed: int):
    """Fig. 4: the class counts of Q(α=4) and D(β=0.5) on CIFAR-10, 5 clients (the ``fig4`` study's
    ``counts``; a placeholder panel where CIFAR-10 is absent)."""
    import matplotlib.pyplot as plt

    settings = FIG4_SETTINGS
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.0))
    for ax, name in zip(axes, settings):
        if name in counts:
            spans = _spanning(counts[name], settings[name]["partition_alpha"]) \
                if "partition_alpha" in settings[name] else ""
            F.heatmap_counts(counts[name], ax, title=f"{name}, CIFAR-10, 5 clients{spans}")
        else:
            ax.text(0.5, 0.5, "CIFAR-10 not available: not run", ha="center", va="center")
            ax.set_axis_off()
    fig.tight_layout()
    ctx.save_figure(fig, "fig4_partitions_cifar10", experiment="fig4",
                    title="Fig. 4: Q(α=4) and D(β=0.5) on CIFAR-10, 5 clients",
                    caption="Number of training samples of each class (columns) on each client (rows).",
                    datasets=["cifar10"] if counts else [], seeds=[seed], placeholder=not counts,
                    parameters={"num_clients": 5, "seed": seed, **{k: v for k, v in settings.items()}})
    return fig


def _spanning(counts, alpha: int) -> str:
    """Q(α) as §5.1 cuts it (label-sorted samples in m·α equal shards, α a client) gives a client more than α
    labels where a shard spans a label's end: said under the panel's title, or "" where none does."""
    counts = np.asarray(counts)
    held = (counts > 0).sum(axis=1)
    more = held[held > alpha]
    if not len(more):
        return ""
    lo, hi = int(more.min()), int(more.max())
    size = int(counts.sum() // (len(held) * alpha))
    return (f"\n{len(more)} of {len(held)} clients hold {lo}{'' if lo == hi else f'–{hi}'} labels: a shard of "
            f"{size} label-sorted samples spans two")


def profile_partitions(ctx, seed: int):
    """The most skewed partitions of Tables 1-2 (Q(α=2), D(β=0.05)) as this profile configures them: a
    partition needs no training, so a cell that only a GPU trains (the paper profile's) shows its partition too."""
    import matplotlib.pyplot as plt

    from ...config import Config
    from ...data import DatasetNotFoundError
    from ...repro.artefacts.figure_rules import mark_empty
    from ...repro.budget.costs import ungated
    from ...simulation import prepare

    cases = {"Q(α=2)": {"partition": "shards", "partition_alpha": 2},
             "D(β=0.05)": {"partition": "dirichlet", "partition_beta": 0.05}}
    fig, axes = plt.subplots(1, 2, figsize=(11, 6.5))
    used, shown, absent = None, [], []
    for ax, (name, params) in zip(axes, cases.items()):
        table_id = "table2" if params["partition"] == "shards" else "table1"
        cfg, note = decide(ungated(ctx.profile), {"dataset": "cifar10", "num_clients": 20, **params}, table_id)
        shows = f"samples per class and client of {name}, 20 clients"
        if cfg is None:
            mark_empty(ax, shows, note)
            absent.append(name)
            continue
        try:
            exp = prepare(Config.from_dict(data_view(cfg, seed, device="cpu")))
            used = cfg["dataset"]
            spans = _spanning(exp.class_counts, params["partition_alpha"]) if "partition_alpha" in params else ""
            F.heatmap_counts(exp.class_counts, ax, title=f"{name}, {cfg['dataset']}, 20 clients{spans}")
            shown.append(name)
        except DatasetNotFoundError as err:
            mark_empty(ax, shows, f"not run: {err.name} absent")
            absent.append(name)
    fig.tight_layout()
    ctx.save_figure(fig, "fig4_partitions_profile", experiment="table1",
                    title=f"Partitions used by the '{ctx.profile.name}' profile's runs (Tables 1-2 setting)",
                    caption="Samples per class and client" + (f" of {', '.join(shown)}, as this profile "
                                                                     f"configures them (one draw, seed {int(seed)}: "
                                                                     "a partition is drawn, not trained)"
                                                                     if shown else "") +
                            (f"; {', '.join(absent)}: not run by this profile" if absent else "") + ".",
                    datasets=[used] if used else [], placeholder=used is None,
                    seeds=[int(seed)] if shown else [])  # one partition draw: its seed, not the table's
    return fig


def table_curve(ctx, comparison: pd.DataFrame, grid, table_id: str, param: str, x: str, *, title: str,
                plot_title: str, panel: str = "column_group", source: str = "column", panel_text: str | None = None,
                gaps_to: str | None = None, **plot):
    """A table as curves: accuracy against one of its parameters (``param``, shown as ``x``),
    ours against the paper's, one panel per ``panel`` (``panel_text``: one panel with this title); with
    ``gaps_to`` (a method), also each method's gap to it (``<table>_gaps``: the band of curves drawn apart)."""
    frame = add_column_param(comparison, ctx.paper.table(table_id), param, x, source=source)
    if panel_text is not None:
        frame, panel = frame.assign(panel=panel_text), "panel"
    fig = F.plot_paper_vs_ours(frame, x=x, panel=panel, title=plot_title, paper=ctx.paper, **plot)
    ctx.save_figure(fig, f"{table_id}_curve", experiment=table_id, title=title,
                    caption=f"{_OURS_VS_PAPER} {F.spread_caption(frame)}".strip()
                    + (f" Each method's gap to {ctx.paper.method_label(gaps_to)}, where the lines run close: "
                       f"{table_id}_gaps.png." if gaps_to is not None else ""),
                    datasets=grid.runs.dataset_used.dropna().unique())
    if gaps_to is not None:
        base = ctx.paper.plain_label(gaps_to)
        gfig, gaps = plot_gaps(frame, x=x, baseline=gaps_to, panel=panel, paper=ctx.paper,
                               title=f"{plot_title.split(':')[0]}: each method − {base}, paper (dashed) vs ours",
                               **{k: v for k, v in plot.items() if k in ("x_label", "x_log", "panel_labels")})
        ctx.save_figure(gfig, f"{table_id}_gaps", experiment=table_id, title=f"{title.split(':')[0]}: gaps to {base}",
                        caption=gap_caption(gaps, base), datasets=grid.runs.dataset_used.dropna().unique())
    return fig


def fig5_curves(ctx, fig5):
    """Fig. 5: test accuracy per round of FedLC and FedRS (nothing when no run has a history), from
    the ``fig5`` study's result."""
    hist = fig5.summary["histories"]
    if not len(hist):
        return None
    datasets = fig5.grid.runs.dataset_used.dropna().unique()
    names = ", ".join(ctx.paper.dataset_label(d) for d in datasets)
    fig = F.plot_histories(hist, panel="setting", hue="method", paper=ctx.paper, title=f"FedLC vs FedRS ({names})")
    for ax in fig.axes:  # every panel names what its runs trained on (a stand-in in reduced profiles)
        ax.set_title(f"{ax.get_title()} (run on {names})", fontsize=9)
    ctx.save_figure(fig, "fig5_curves", experiment="fig5", title="Fig. 5: test accuracy per round, FedLC vs FedRS",
                    caption="The paper shows ImageNet-subset with 40 clients; here the profile's CIFAR-10 settings (or "
                            "its stand-in), with the profile's number of clients.",
                    datasets=datasets, findings=fig5.findings)
    return fig


def stand_in_effects(ctx, effects: pd.DataFrame, stand_in: str, datasets):
    """The stand-in check: the paper's effects on the paper, the stand-in and CIFAR-10."""
    fig = F.plot_effects(effects, sources=["paper", STAND_IN, ON_CIFAR10],
                         title=f"The paper's effects on the paper, the {stand_in} stand-in and CIFAR-10")
    ctx.save_figure(fig, "stand_in_effects_bars", experiment="stand_in", datasets=datasets,
                    title="Stand-in check: the paper's effects on the stand-in and on CIFAR-10",
                    caption="Bars: FedLC − FedAvg, FedLC − FedRS and FedAvg's drop from IID, in percentage points; "
                            "'n/a': the source has no such value (the paper reports none, or the cell was not run).")
    return fig


def table7_curve(ctx, comp7: pd.DataFrame, grid7):
    """Table 7 as curves: FedAvg → FedLC → FedLC + X, ours against the paper's."""
    import matplotlib.pyplot as plt

    order = {"fedavg": 0, "fedlc": 1, "fedlc+scaffold": 2, "fedlc+fedprox": 3}
    plot7 = comp7.assign(step=comp7.row.map(order), series=comp7.column_label)
    fig, ax = plt.subplots(figsize=(6, 3.4))
    n = F.seeds_of(plot7)
    top = plot7.groupby("step").ours_mean.transform("max")  # each step's highest point of ours: its count goes above
    last = max(order.values())
    for (col, d), color in zip(plot7.groupby("series", sort=False), _palette()):
        d = d.sort_values("step")
        if d.ours_mean.notna().any():
            yerr = d.ours_std.where(d.n_seeds >= 2) if n >= 2 else None  # one seed: no bar, not a 0-height cap
            ax.errorbar(d.step, d.ours_mean, yerr=yerr, marker="o", color=color, capsize=2, label=f"{col} (ours)")
            if n >= 2 and d.n_seeds.nunique() > 1:  # decide added seeds to some steps: each point's count,
                for x, y, k, hi in zip(d.step, d.ours_mean, d.n_seeds, d.ours_mean == top[d.index]):
                    if pd.notna(y):  # above the higher series, below the lower, inside the axes at the last step
                        ax.annotate(f"n={int(k)}", (x, y), xytext=(-4 if x == last else 4, 4 if hi else -11),
                                    textcoords="offset points", fontsize=7, color=color,
                                    ha="right" if x == last else "left")
        ax.plot(d.step, d.paper_mean, ls="--", marker="o", mfc="none", color=color, label=f"{col} (paper)")
    ax.set_xticks(list(order.values()), [F._label(m, PAPER) for m in order])
    ax.set_ylabel("test accuracy (%)")
    used = [_dataset(u) for u in grid7.runs.dataset_used.dropna().unique()]
    ax.set_title("FedAvg → FedLC → FedLC + X" + (f" (ours run on {', '.join(used)})" if used else " (paper only)"))
    if not used:  # why nothing of ours is drawn, in the key (as the tables' curves say it)
        notes = comp7.get("note", pd.Series(dtype=object)).dropna()
        ax.plot([], [], ls="none", label="ours: " + F.not_run_summary(notes, PAPER.dataset_label))
    ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ctx.save_figure(fig, "table7_curve", experiment="table7", title="Table 7 as curves: FedAvg → FedLC → FedLC + X",
                    caption=_OURS_VS_PAPER + (" " + F.std_caption(n) + " n: the seeds of each point of ours."
                                              if n >= 2 else ""),
                    datasets=grid7.runs.dataset_used.dropna().unique())
    return fig
