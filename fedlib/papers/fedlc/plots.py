"""FedLC's figures, drawn from the frames of :mod:`.experiments` and saved through the
notebook's :class:`fedlib.repro.context.Context` (the shared style of :mod:`fedlib.repro.figures`,
one colour per method from :attr:`fedlib.repro.paper.Paper.method_colors`).

Each function draws one figure of a notebook, saves it (``ctx.save_figure``) and returns it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...repro import figures as F
from ...repro.compare import add_column_param
from ...repro.gate import decide
from ...repro.figure_rules import label_cell, label_empty_bars
from . import PAPER
from . import reported as paper
from .experiments import (CALIBRATION_LABELS, LOSS_NAMES, ON_CIFAR10, STAND_IN, Calibration, skew_label,
                          stand_in_cells, stand_in_comparison, stand_in_findings, tau_cells, toy_panels)

__all__ = ["ROLE_COLORS", "fig1_bars", "fig2_before_after", "fig3_toy", "deviation_bound", "calibration_bars",
           "tau_curve", "partitions", "profile_partitions", "table_curve", "fig5_curves", "stand_in_effects",
           "fig6_before_after", "fig7_tsne", "table7_curve", "tau_sweep", "stand_in_check"]

#: Colours of a client's class roles (Definition 2).
ROLE_COLORS = {"majority": "#0173b2", "minority": "#de8f05", "missing": "#cc78bc"}
_OURS_VS_PAPER = "Ours: solid, filled markers; the paper: dashed, open markers."


def _dataset(name: str) -> str:
    """A dataset's label in this paper (the token when it has none)."""
    return paper.DATASET_LABELS.get(name, PAPER.dataset_label(name))


def _std(frame: pd.DataFrame):
    """``(yerr, n)``: the std over seeds where the frame's cells have >= 2 seeds (else None), and n."""
    n = F.seeds_of(frame)
    return (frame.ours_std.where(frame.n_seeds >= 2).fillna(0) if n >= 2 else None), n


def _palette() -> list:
    """The paper's method colours in order, as a plain palette."""
    return list(PAPER.method_colors.values())


def fig1_bars(ctx, fig1: pd.DataFrame):
    """Fig. 1: FedAvg's final accuracy per skew setting."""
    import matplotlib.pyplot as plt

    colors = dict(zip(["IID", "Q(α)", "D(β)"], _palette()))
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    yerr, n = _std(fig1)
    ax.bar(fig1.setting, fig1.ours_mean, yerr=yerr, color=[colors[k] for k in fig1.kind], capsize=2)
    label_empty_bars(ax, missing="not run")
    for i, row in fig1.iterrows():
        if pd.notna(row.ours_mean):
            ax.text(i, row.ours_mean + 1, f"{row.ours_mean:.1f}", ha="center", fontsize=7)
    ax.set_ylabel("FedAvg test accuracy (%)")
    used = fig1.dataset_used.dropna().unique()
    ax.set_title("FedAvg under label skew, " + (paper.DATASET_LABELS.get(used[0], used[0]) + (
        "" if used[0] == "cifar10" else " (stand-in for CIFAR-10)") if len(used) else "not run"))
    plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    ctx.save_figure(fig, "fig1_fedavg_label_skew", experiment="fig1", title="Fig. 1: FedAvg under IID, Q(α) and D(β)",
                    caption="Final test accuracy of FedAvg; lower α / β = more skew. " + F.std_caption(n),
                    datasets=fig1.dataset_used.dropna().unique(), parameters={"cells": fig1.setting.tolist()})
    return fig


def fig2_before_after(ctx, result, ba: pd.DataFrame):
    """Fig. 2: per client, the training samples per class (bars, coloured by role) and the
    per-class accuracy before and after the local update."""
    import matplotlib.pyplot as plt

    clients = sorted(ba.client.unique())
    fig, axes = plt.subplots(1, len(clients), figsize=(3.0 * len(clients), 3.0), squeeze=False)
    for ax, k in zip(axes[0], clients):
        d = ba[ba.client == k].sort_values("class")
        ax.bar(d["class"], d.n_train, color=[ROLE_COLORS[r] for r in d.role])
        label_empty_bars(ax, fmt="0", color=ROLE_COLORS["missing"], fontsize=7)  # missing classes: 0 samples
        ax.set_xticks(d["class"])
        ax.set_xlabel("class")
        ax.set_title(f"client {k}")
        ax2 = ax.twinx()
        ax2.plot(d["class"], d.acc_before, "k--", marker=".", lw=1, label="before (global model)")
        ax2.plot(d["class"], d.acc_after, color="#d55e00", marker="o", lw=1.5, label="after local update")
        ax2.set_ylim(-3, 103)
        ax2.grid(False)
    axes[0][0].set_ylabel("training samples")
    ax2.set_ylabel("test accuracy (%)")
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in ROLE_COLORS.values()]
    fig.legend(handles + ax2.get_legend_handles_labels()[0],
               ["majority", "minority", "missing (0 samples)"] + ax2.get_legend_handles_labels()[1],
               loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=5)
    cfg = result.config
    fig.suptitle(f"Per-class accuracy before and after the local update, {_dataset(cfg.dataset)}")
    fig.tight_layout()
    ctx.save_figure(fig, "fig2_per_class_before_after", experiment="fig2",
                    title="Fig. 2: per-class accuracy before/after the local update vs class size",
                    caption=f"Global model: FedAvg after {cfg.rounds} rounds on {cfg.dataset}, "
                            f"{cfg.num_clients} clients, D(β={cfg.partition_beta}); one local epoch.",
                    datasets=[cfg.dataset], parameters=cfg.to_dict())
    return fig


def fig3_toy(ctx, toy):
    """Fig. 3 measured: decision regions of the toy models (rows: CE, FedLC; columns: the two
    clients' local models and FedAvg), the global optimum dashed."""
    import matplotlib.pyplot as plt

    xx, yy = np.meshgrid(np.linspace(-5.5, 5.5, 300), np.linspace(-5.5, 5.5, 300))
    grid_pts = np.c_[xx.ravel(), yy.ravel()]
    cmap = plt.matplotlib.colors.ListedColormap(_palette()[:4])

    def regions(name):
        m = toy.models[name]
        return (grid_pts @ m["W"].T + m["b"]).argmax(1).reshape(xx.shape)

    acc = toy.accuracy.groupby("model").accuracy.mean()
    fig, axes = plt.subplots(2, 3, figsize=(10, 6.6), sharex=True, sharey=True)
    for r, row in enumerate(toy_panels(toy)):
        for c, name in enumerate(row):
            ax = axes[r][c]
            ax.contourf(xx, yy, regions(name), levels=np.arange(-0.5, 4.5), cmap=cmap, alpha=0.25)
            ax.contour(xx, yy, regions("global optimum"), levels=np.arange(0.5, 3.5), colors="k", linestyles="--",
                       linewidths=0.8)
            pts = toy.data if c == 2 else toy.data[toy.data.client == c + 1]
            ax.scatter(pts.x, pts.y, c=pts.label, cmap=cmap, s=4, vmin=-0.5, vmax=3.5)
            ax.set_title(f"{name}\nbalanced accuracy {acc[name]:.1f}%", fontsize=9)
            ax.grid(False)
    fig.tight_layout()
    ctx.save_figure(fig, "fig3_toy_two_clients", experiment="fig3",
                    title="Fig. 3: two skewed clients — local optima, FedAvg and the global optimum (measured)",
                    caption=f"Client class counts {toy.class_counts.tolist()}; dashed = global optimum.",
                    parameters=ctx.profile.experiment("fig3"))
    return fig


def deviation_bound(ctx, start, dev: pd.DataFrame):
    """§3-4: D_jr against n_j/n_r for CE and FedLC (deviated or not), and the deviation rate
    against (n_j/n_r)/D_jr (Theorem 1)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for ax, (loss, name) in zip(axes[:2], LOSS_NAMES.items()):
        d = dev[(dev.loss == loss) & dev.D_valid]
        for flag, marker, lab in ((True, "o", "deviated (both signs)"), (False, "x", "not deviated")):
            s = d[d.deviated == flag]
            ax.scatter(s.ratio, s.D, marker=marker, s=18, alpha=0.6, label=lab,
                       color="#d55e00" if flag else "#0173b2")
        lim = [min(d.ratio.min(), d.D.min()) * 0.7, max(d.ratio.max(), d.D.max()) * 1.4] if len(d) else [0.1, 10]
        ax.plot(lim, lim, "k--", lw=0.8, label="n_j/n_r = D_jr")
        ax.set(xscale="log", yscale="log", xlabel="n_j / n_r", ylabel="D_jr", title=name)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_minor_formatter(plt.NullFormatter())
            axis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.26), ncol=2)  # off the points
    bins = np.logspace(-2, 3, 11)
    for loss, name in LOSS_NAMES.items():
        d = dev[(dev.loss == loss) & dev.D_valid].copy()
        d["bin"] = pd.cut(d.ratio_over_D, bins)
        rate = d.groupby("bin", observed=True).deviated.mean()
        centers = [np.sqrt(b.left * b.right) for b in rate.index]
        axes[2].plot(centers, 100 * rate.values, marker="o", label=name.split(" (")[0])
    axes[2].axvline(1, color="k", ls="--", lw=0.8)
    axes[2].set(xscale="log", xlabel="(n_j/n_r) / D_jr", ylabel="updates that deviated (%)",
                title="Theorem 1: deviation rate")
    axes[2].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.26), ncol=2)
    cfg = start.config
    fig.suptitle(f"Deviation bound on {_dataset(cfg.dataset)}")
    fig.tight_layout()
    ctx.save_figure(fig, "deviation_bound", experiment="deviation",
                    title="§3–4: deviation bound D_jr vs n_j/n_r, softmax CE and FedLC, and the measured deviation",
                    caption=f"Client {dev.client.iloc[0]} of {cfg.dataset}, {cfg.num_clients} clients "
                            f"D(β={cfg.partition_beta}), global model after {cfg.rounds} FedAvg rounds; "
                            "every (majority j, minority r) pair at every local step. Deviated: Δw_r·h̄_r < 0 and "
                            "Δw_j·h̄_r > 0.",
                    datasets=[cfg.dataset], parameters={**cfg.to_dict(), **ctx.profile.experiment("deviation")})
    return fig


def calibration_bars(ctx, calib):
    """§4: accuracy of every loss variant per setting (horizontal bars; dashed: FedAvg)."""
    import matplotlib.pyplot as plt

    plot = calib.var.copy()
    order = list(dict.fromkeys(plot.label))
    fig, axes = plt.subplots(1, plot.setting.nunique(), figsize=(4.6 * plot.setting.nunique(), 3.6), squeeze=False)
    palette = dict(zip(order, _palette()))
    for ax, (setting, d) in zip(axes[0], plot.groupby("setting", sort=False)):
        d = d.set_index("label").reindex(order)
        xerr, n = _std(d)
        ax.barh(range(len(d)), d.ours_mean, xerr=xerr, color=[palette[lab] for lab in d.index])
        ax.bar_label(ax.containers[-1], fmt="%.1f", fontsize=7, padding=2)
        for i, st in enumerate(d.get("status", pd.Series("ok", index=d.index))):
            if pd.isna(d.ours_mean.iloc[i]):
                label_cell(ax, 0, i, "diverged" if st == "diverged" else "not run", key=str(d.index[i]),
                           ha="left", va="center")
        ax.axvline(d.loc[CALIBRATION_LABELS["fedavg"], "ours_mean"], color="k", ls="--", lw=0.8)
        ax.set_yticks(range(len(d)), d.index if ax is axes[0][0] else [""] * len(d))
        ax.invert_yaxis()
        ax.set_title(setting)
        ax.set_xlabel("test accuracy (%)")
        ax.set_xlim(0, max(100.0, float(np.nanmax(d.ours_mean + (d.ours_std.fillna(0) if n >= 2 else 0)))
                           if d.ours_mean.notna().any() else 100.0) * 1.12)
    used = calib.grid.runs.dataset_used.dropna().unique()
    fig.suptitle("FedLC loss variants, " + ", ".join(_dataset(u) for u in used))
    fig.tight_layout()
    ctx.save_figure(fig, "calibration_variants_bars", experiment="calibration",
                    title="§4: FedLC loss variants in federated runs",
                    caption=f"Dashed: FedAvg. {calib.tau_text}. " + F.std_caption(F.seeds_of(calib.var)),
                    datasets=calib.grid.runs.dataset_used.dropna().unique())
    return fig


def tau_curve(ctx, taus, tau_tab: pd.DataFrame, base: pd.DataFrame):
    """§4: accuracy against τ per margin, FedAvg and FedRS as horizontal lines."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
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
    used = ", ".join(_dataset(u) for u in taus.runs.dataset_used.dropna().unique())
    ax.set_title(f"τ sweep, {base.setting.iloc[0] if len(base) else ''} ({used})")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ctx.save_figure(fig, "calibration_tau_curve", experiment="calibration", title="§4: sensitivity of FedLC to τ",
                    caption="Dashed / dotted: FedAvg / FedRS in the same setting. "
                            + F.std_caption(F.seeds_of(tau_tab)),
                    datasets=taus.runs.dataset_used.dropna().unique())
    return fig


def partitions(ctx, settings: dict, counts: dict, seed: int):
    """Fig. 4: the class counts of Q(α=4) and D(β=0.5) on CIFAR-10, 5 clients (a placeholder
    panel where CIFAR-10 is absent)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 3.0))
    for ax, name in zip(axes, settings):
        if name in counts:
            F.heatmap_counts(counts[name], ax, title=f"{name}, CIFAR-10, 5 clients")
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


def profile_partitions(ctx, seed: int):
    """The most skewed partitions of Tables 1-2 (Q(α=2), D(β=0.05)) as this profile trains them."""
    import matplotlib.pyplot as plt

    from ...config import Config
    from ...data import DatasetNotFoundError
    from ...simulation import prepare

    cases = {"Q(α=2)": {"partition": "shards", "partition_alpha": 2},
             "D(β=0.05)": {"partition": "dirichlet", "partition_beta": 0.05}}
    fig, axes = plt.subplots(1, 2, figsize=(11, 6.5))
    used = None
    for ax, (name, params) in zip(axes, cases.items()):
        table_id = "table2" if params["partition"] == "shards" else "table1"
        cfg, note = decide(ctx.profile, {"dataset": "cifar10", "num_clients": 20, **params}, table_id)
        if cfg is None:
            ax.text(0.5, 0.5, note, ha="center", va="center", transform=ax.transAxes)
            continue
        try:
            exp = prepare(Config.from_dict({**cfg, "seed": seed, "rounds": 1}))
            used = cfg["dataset"]
            F.heatmap_counts(exp.class_counts, ax, title=f"{name}, {cfg['dataset']}, 20 clients")
        except DatasetNotFoundError as err:
            ax.text(0.5, 0.5, f"not run: {err.name} absent", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    ctx.save_figure(fig, "fig4_partitions_profile", experiment="table1",
                    title=f"Partitions used by the '{ctx.profile.name}' profile's runs (Tables 1-2 setting)",
                    caption="Samples per class and client, as trained on by this profile.",
                    datasets=[used] if used else [], placeholder=used is None)
    return fig


def table_curve(ctx, comparison: pd.DataFrame, grid, table_id: str, param: str, x: str, *, title: str,
                plot_title: str, panel: str = "column_group", source: str = "column", panel_text: str | None = None,
                **plot):
    """A table as curves: accuracy against one of its parameters (``param``, shown as ``x``),
    ours against the paper's, one panel per ``panel`` (``panel_text``: one panel with this title)."""
    frame = add_column_param(comparison, ctx.paper.table(table_id), param, x, source=source)
    if panel_text is not None:
        frame, panel = frame.assign(panel=panel_text), "panel"
    fig = F.plot_paper_vs_ours(frame, x=x, panel=panel, title=plot_title, paper=ctx.paper, **plot)
    ctx.save_figure(fig, f"{table_id}_curve", experiment=table_id, title=title,
                    caption=f"{_OURS_VS_PAPER} {F.std_caption(F.seeds_of(frame))}".strip(),
                    datasets=grid.runs.dataset_used.dropna().unique())
    return fig


def fig5_curves(ctx, curves):
    """Fig. 5: test accuracy per round of FedLC and FedRS (nothing when no run has a history)."""
    hist = curves.histories
    if not len(hist):
        return None
    fig = F.plot_histories(hist, panel="setting", hue="method", paper=ctx.paper,
                           title=f"FedLC vs FedRS ({', '.join(curves.runs.dataset_used.dropna().unique())})")
    final = curves.aggregate(["setting", "method"]).pivot(index="setting", columns="method", values="ours_mean")
    ctx.save_figure(fig, "fig5_curves", experiment="fig5", title="Fig. 5: test accuracy per round, FedLC vs FedRS",
                    caption="The paper shows ImageNet-subset with 40 clients; here the profile's CIFAR-10 settings (or "
                            "its stand-in), with the profile's number of clients.",
                    datasets=curves.runs.dataset_used.dropna().unique(),
                    findings=[f"Fig. 5 substitute: FedLC ends {r.fedlc - r.fedrs:+.2f} pp vs FedRS at {s}"
                              for s, r in final.iterrows() if {"fedlc", "fedrs"} <= set(final.columns)])
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


def fig6_before_after(ctx, start, per_class: pd.DataFrame):
    """Fig. 6: per-class accuracy after the local update and after aggregation, FedAvg vs FedLC."""
    import matplotlib.pyplot as plt

    colors = PAPER.method_colors
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4), sharey=True)
    for ax, col, title in ((axes[0], "after_local_update", "after the local update (mean over clients)"),
                           (axes[1], "after_aggregation", "after aggregation")):
        for i, m in enumerate(["fedavg", "fedlc"]):
            d = per_class[per_class.method == m]
            ax.bar(d["class"] + (i - 0.5) * 0.4, d[col], width=0.4, color=colors[m], label=F._label(m, PAPER))
        label_empty_bars(ax)
        d = per_class[per_class.method == "fedavg"]
        ax.plot(d["class"], d.before, "k_", ms=14, mew=2, label="global model before")
        ax.set_xticks(sorted(per_class["class"].unique()))
        ax.set(title=title, xlabel="class")
    axes[0].set_ylabel("test accuracy (%)")
    fig.legend(*axes[1].get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               fontsize=8)
    cfg = start.config
    fig.suptitle(f"Per-class accuracy, FedAvg vs FedLC, {_dataset(cfg.dataset)}")
    fig.tight_layout()
    ctx.save_figure(fig, "fig6_before_after_aggregation", experiment="fig6",
                    title="Fig. 6: per-class accuracy after the local update and after aggregation, FedAvg vs FedLC",
                    caption=f"Same global model (FedAvg, {cfg.rounds} rounds, accuracy "
                            f"{100 * start.final_accuracy:.1f}%) and the same data for both; {cfg.num_clients} "
                            "clients, one local epoch.",
                    datasets=[cfg.dataset], parameters=cfg.to_dict())
    return fig


def fig7_tsne(ctx, start, points: pd.DataFrame, scores: pd.DataFrame):
    """Fig. 7: t-SNE of a missing, a minority and a majority class after the local update."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    for ax, m in zip(axes, ["fedavg", "fedlc"]):
        d = points[points.method == m]
        for r, c in ROLE_COLORS.items():
            s = d[d.role == r]
            if len(s):
                ax.scatter(s.x, s.y, s=6, color=c, label=f"{r} (class {s['class'].iloc[0]}, n={s.n_train.iloc[0]})")
        sc = scores.set_index("method").loc[m]
        ax.set_title(f"{F._label(m, PAPER)}: silhouette {sc.silhouette_features:.2f}, "
                     f"5-NN {100 * sc.knn5_accuracy_tsne:.0f}%")
        ax.set_xticks([]), ax.set_yticks([])
        ax.legend(fontsize=7, markerscale=2, loc="upper center", bbox_to_anchor=(0.5, -0.02))
    fig.suptitle(f"t-SNE of test features, {_dataset(start.config.dataset)}")
    fig.tight_layout()
    ctx.save_figure(fig, "fig7_tsne", experiment="fig7",
                    title="Fig. 7: t-SNE of test features of a missing, a minority and a majority class after the "
                          "local update",
                    caption=f"Client {scores.client.iloc[0]}; one local epoch from the same global model; the "
                            "silhouette score (features) and the 5-NN accuracy (embedding) measure how well the three "
                            "classes separate.",
                    datasets=[start.config.dataset])
    return fig


def table7_curve(ctx, comp7: pd.DataFrame, grid7):
    """Table 7 as curves: FedAvg → FedLC → FedLC + X, ours against the paper's."""
    import matplotlib.pyplot as plt

    order = {"fedavg": 0, "fedlc": 1, "fedlc+scaffold": 2, "fedlc+fedprox": 3}
    plot7 = comp7.assign(step=comp7.row.map(order), series=comp7.column_label)
    fig, ax = plt.subplots(figsize=(6, 3.4))
    for (col, d), color in zip(plot7.groupby("series", sort=False), _palette()):
        d = d.sort_values("step")
        if d.ours_mean.notna().any():
            ax.plot(d.step, d.ours_mean, marker="o", color=color, label=f"{col} (ours)")
        ax.plot(d.step, d.paper_mean, ls="--", marker="o", mfc="none", color=color, label=f"{col} (paper)")
    ax.set_xticks(list(order.values()), [F._label(m, PAPER) for m in order])
    ax.set_ylabel("test accuracy (%)")
    used = [_dataset(u) for u in grid7.runs.dataset_used.dropna().unique()]
    ax.set_title("FedAvg → FedLC → FedLC + X" + (f" (ours run on {', '.join(used)})" if used else " (paper only)"))
    ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ctx.save_figure(fig, "table7_curve", experiment="table7", title="Table 7 as curves: FedAvg → FedLC → FedLC + X",
                    caption=_OURS_VS_PAPER, datasets=grid7.runs.dataset_used.dropna().unique())
    return fig


# ----------------------------------------------------------------------------- tables with their figure
def tau_sweep(ctx, calib: Calibration) -> pd.DataFrame:
    """§4: accuracy against τ for the two full-softmax margins (figure and table)."""
    taus = ctx.grid(tau_cells(ctx.profile), "calibration")
    tau_tab = taus.aggregate(["variant", "label", "tau"])
    var = calib.var
    base = var[var.variant.isin(["fedavg", "fedrs"])
               & (var.setting == skew_label(ctx.profile.experiment("calibration")["tau_setting"]))]
    tau_curve(ctx, taus, tau_tab, base)
    best_tau = tau_tab.loc[tau_tab.groupby("variant").ours_mean.idxmax().dropna()]
    tau_tab = tau_tab[["variant", "label", "tau", "ours_mean", "ours_std", "n_seeds", "dataset_used"]]
    ctx.save_table(tau_tab, "calibration_tau", experiment="calibration", title="§4: accuracy (%) against τ",
                   datasets=taus.runs.dataset_used.dropna().unique(),
                   findings=[f"{r.label}: best τ = {r.tau:g} ({r.ours_mean:.2f}%)" for r in best_tau.itertuples()])
    return tau_tab


def stand_in_check(ctx) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The stand-in check: Tables 1-2's CIFAR-10 cells on the stand-in and on CIFAR-10 (two tables
    and a figure); None when the profile trains on CIFAR-10 itself."""
    check = ctx.grid(stand_in_cells(ctx.profile), "stand_in")
    if not len(check.runs):
        print(f"profile {ctx.profile.name!r} trains Tables 1–2 on CIFAR-10 itself: no stand-in to check")
        return None
    acc, effects = stand_in_comparison(check)
    stand_in = ", ".join(paper.DATASET_LABELS.get(d, d) for d in
                         check.runs.loc[check.runs.trained_on == STAND_IN, "dataset_used"].dropna().unique())
    datasets = check.runs.dataset_used.dropna().unique()
    ctx.save_table(acc.round(2), "stand_in_accuracy", experiment="stand_in", datasets=datasets,
                   title="Stand-in check: accuracy (%) of Tables 1–2's CIFAR-10 cells on the stand-in and on CIFAR-10",
                   caption=f"Paper: Tables 1–2 (400 rounds, Table 9 CNN); ours: this profile, on {stand_in} "
                           "(stand-in) and on CIFAR-10 with the model listed in the deviations.")
    ctx.save_table(effects.round(2), "stand_in_effects", experiment="stand_in", datasets=datasets,
                   title="Stand-in check: the paper's effects (pp) on the paper, the stand-in and CIFAR-10",
                   caption="'same sign': whether the stand-in and CIFAR-10 agree on the effect's direction.",
                   findings=stand_in_findings(effects, stand_in))
    stand_in_effects(ctx, effects, stand_in, datasets)
    return acc.round(2), effects.round(2)
