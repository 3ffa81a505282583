"""FedConcat's figures, drawn from its tables and studies (:mod:`.studies`) and saved through the
notebook's :class:`fedlib.repro.artefacts.context.Context` (the shared style of :mod:`fedlib.repro.artefacts.figures`,
one colour per method from :attr:`fedlib.repro.spec.paper.Paper.method_colors`: FedConcat's table order).

Each function draws one figure of a notebook, saves it (``ctx.save_figure``) and returns it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...repro.artefacts import figures as F
from ...repro.artefacts.figure_rules import (declare, label_cell, label_empty_bars, mark_empty, merge_coinciding,
                                             why_empty)
from . import PAPER
from . import reported as paper
from .cells import BASELINES, partition_label
from .fig1 import FIG1_MODELS, FIG1_TESTS

__all__ = ["fig1_bars", "table1_bars", "budget_curves", "clusters_heatmap", "fig3_curves", "fig4_bars",
           "fig4_communication", "table2_curves"]


def fig1_bars(ctx, fig1: pd.DataFrame | None, info: dict):
    """Fig. 1: accuracy of two clients' local models and their average on A's, B's and all classes."""
    import matplotlib.pyplot as plt

    A, B, ALL = FIG1_TESTS
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    if fig1 is not None:
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        width = 0.8 / len(FIG1_MODELS)
        for i, model in enumerate(FIG1_MODELS):
            d = fig1[fig1["model"] == model].set_index("test set").loc[list(FIG1_TESTS)]
            ax.bar(np.arange(3) + (i - (len(FIG1_MODELS) - 1) / 2) * width, d.accuracy, width, label=model,
                   color=colors[i])
        label_empty_bars(ax, fontsize=7)  # a model at 0 % on a test set is a result, not a gap
        names = {A: f"{A}\n{info['classes']['A']}", B: f"{B}\n{info['classes']['B']}", ALL: ALL}
        ax.set_xticks(range(3), [names[t] for t in FIG1_TESTS])
        ax.set_ylabel("test accuracy (%)")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), ncol=2)
        ax.set_title(f"Clients {info['clients'][0]} (A) and {info['clients'][1]} (B), "
                     f"{info['config']['local_epochs']} local epoch(s), "
                     f"{PAPER.dataset_label(info['config']['dataset'])}")
    else:
        ax.text(0.5, 0.5, "not run: " + info["reason"], ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
    ctx.save_figure(fig, "fig1_two_clients", experiment="fig1",
                    title="Fig. 1: accuracy of two clients' local models and of their average under label skew",
                    caption="Two clients of Table 1's CIFAR-10 #C=2 partition with disjoint classes train E local "
                            "epochs from the same initial model; their average is weighted by their sample counts.",
                    placeholder=fig1 is None, datasets=[info["config"]["dataset"]] if fig1 is not None else [],
                    seeds=[ctx.profile.seeds[0]], parameters=info)
    return fig


def table1_bars(ctx, comp1: pd.DataFrame, grid1):
    """Table 1: ours (filled) beside the paper (hatched), one panel per column run."""
    import matplotlib.pyplot as plt

    ran = comp1.ours_mean.notna() | comp1.get("run_status", pd.Series("", index=comp1.index)).eq("diverged")
    if not (ran & comp1.row.ne("centralized")).any():  # no method ran: not a page of "not run" grids
        return _centralized_only(ctx, comp1, grid1)
    columns = list(dict.fromkeys(comp1.loc[ran, "column"]))
    per_panel = max(3.3, 0.42 * len(paper.TABLE1.rows) + 0.8)  # room for every row's tick label
    ncols = min(2, max(1, len(columns)))  # at most two panels a row: the figure stays under 3,000 px wide
    nrows = -(-max(1, len(columns)) // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(per_panel * ncols + 1.0, 3.8 * nrows), squeeze=False,
                             sharey=True)
    axes = [list(grid.ravel())]
    for ax in axes[0][len(columns):]:
        ax.set_axis_off()  # the last row's spare panel
    colors = PAPER.method_colors
    n = F.seeds_of(comp1[comp1.column.isin(columns)])
    for ax, column in zip(axes[0], columns):
        # every row of the table (the [0, 1]-input group too), in its order; none dropped for want of a colour
        # a row of ours that did not run here is labelled in place, never dropped
        d = comp1[comp1.column == column].set_index("row").reindex([r.key for r in paper.TABLE1.rows])
        x = np.arange(len(d))
        shades = [colors.get(k.split("/")[-1], "0.6") for k in d.index]  # a [0, 1] row in its method's colour
        drawn = d.ours_mean.notna().to_numpy()
        # a cell over one seed has no std: no error bar at all (a zero-height cap would read "no spread")
        yerr = d.ours_std.where(d.n_seeds >= 2)[drawn] if n >= 2 else None
        ax.bar(x[drawn] - 0.2, d.ours_mean[drawn], 0.4, yerr=yerr, color=[c for c, k in zip(shades, drawn) if k],
               capsize=2, label="ours")
        if yerr is not None:  # the means are over up to n seeds (a decision may have added seeds to some cells)
            declare(ax, seeds=n)
        ax.bar(x + 0.2, d.paper_mean, 0.4, color=shades, alpha=0.35, hatch="//", label="paper")
        for xi, (m, r) in enumerate(d.iterrows()):
            if pd.isna(r.ours_mean):
                status = "diverged" if r.get("run_status", "") == "diverged" else "not run"
                label_cell(ax, xi - 0.2, 0, status, key=f"{m} @ {column}", rotation=90)
        label_empty_bars(ax, missing="not in paper")
        ax.set_xticks(x, list(d.row_label), rotation=60, ha="right")
        ax.set_title(d.column_label.dropna().iloc[0] if d.column_label.notna().any() else column)
        top = np.nanmax(np.r_[d.ours_mean[drawn] + (yerr.fillna(0) if yerr is not None else 0), d.paper_mean, [100.0]])
        ax.set_ylim(0, top)  # bars start at 0: a gap of a few points is not drawn as a large one
    axes[0][0].set_ylabel("test accuracy (%)")
    from matplotlib.patches import Patch

    axes[0][min(ncols, len(axes[0])) - 1].legend(handles=[Patch(facecolor="0.45", label="ours"),
                                Patch(facecolor="0.45", alpha=0.35, hatch="//", label="paper")],
                       loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False)
    fig.tight_layout()
    ctx.save_figure(fig, "table1_bars", experiment="table1", title="Table 1: ours (filled) beside the paper (hatched)",
                    caption="Final test accuracy per method in each column run in this profile; columns not run "
                            "here are in the table. " + F.std_caption(n)
                            + (" A cell over fewer seeds shows its own std (one seed: none; its seeds are in the "
                               "table)." if n >= 2 and comp1.n_seeds[comp1.n_seeds >= 1].min() < n else ""),
                    datasets=grid1.runs.dataset_used.dropna().unique())
    return fig


def _centralized_only(ctx, comp1: pd.DataFrame, grid1):
    """Table 1 where only Centralized ran (one value a dataset): ours beside the paper's per dataset, and one
    line on why the methods are absent and what they cost."""
    import matplotlib.pyplot as plt

    c = comp1[comp1.row.eq("centralized")].drop_duplicates("dataset")
    fig, ax = plt.subplots(figsize=(5.2, 3.2))
    x = np.arange(len(c))
    n = F.seeds_of(c)
    yerr = c.ours_std.where(c.n_seeds >= 2) if n >= 2 else None  # one seed: no error bar
    ax.bar(x - 0.2, c.ours_mean, 0.4, yerr=yerr, capsize=2, color="0.35", label="Centralized, ours")
    ax.bar(x + 0.2, c.paper_mean, 0.4, color="0.75", hatch="//", label="Centralized, paper")
    label_empty_bars(ax, missing="not run")
    ax.set_xticks(x, [PAPER.dataset_label(d) for d in c.dataset])
    ax.set_ylim(0, 100)
    ax.set_ylabel("test accuracy (%)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False, fontsize=8)
    why = next((str(n) for n in comp1[comp1.row.ne("centralized")].note if isinstance(n, str) and n.strip()),
               f"not run under the '{ctx.profile.name}' profile")
    ax.set_title(f"Only Centralized ran; the methods: {why}", fontsize=7, wrap=True)
    fig.tight_layout()
    ctx.save_figure(fig, "table1_bars", experiment="table1", title="Table 1: ours (filled) beside the paper (hatched)",
                    caption="Centralized (one client holding the training set), one value a dataset: every column of "
                            "a dataset trains the same model. The methods' columns are in the table. "
                            + F.std_caption(n), datasets=grid1.runs.dataset_used.dropna().unique())
    return fig


def budget_curves(ctx, budget):
    """The ``budget`` study's baselines: accuracy per round, R of each way of counting marked,
    FedConcat's and FedConcat-ID's final accuracy as horizontal lines."""
    import matplotlib.pyplot as plt

    grid1, rounds = budget.grid, budget.summary["rounds"]
    columns = list(dict.fromkeys(rounds.column))
    hist = grid1.histories
    hist = hist[hist.method.isin(BASELINES) & hist.column.isin(columns)] if len(hist) else hist
    ncols = min(3, max(1, len(columns)))  # at most three panels a row: under 3,000 px wide
    nrows = -(-max(1, len(columns)) // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.3 * nrows), squeeze=False)
    axes = [list(grid.ravel())]
    for ax in axes[0][max(1, len(columns)):]:
        ax.set_axis_off()  # the last row's spare panels
    colors = PAPER.method_colors
    letter = {v: "abcdefghij"[i] for i, v in enumerate(dict.fromkeys(rounds.variant))}  # the lines' key
    if not columns:
        mark_empty(axes[0][0], "the baselines per round", why_empty(grid1, ctx.profile.name))
    for ax, column in zip(axes[0], columns):
        if not len(hist) or not (hist.column == column).any():
            mark_empty(ax, f"{paper.TABLE1.column(column).label}: the baselines per round",
                       why_empty(grid1, ctx.profile.name))
            ax.set_title(paper.TABLE1.column(column).label)
            continue
        for m, g in hist[hist.column == column].groupby("method", sort=False):
            s = g.groupby("round").test_accuracy.mean()
            ax.plot(s.index, s.values, color=colors.get(m), lw=1.4, label=paper.METHOD_LABELS[m])
        fin = grid1.ok()
        for m, ls in (("fedconcat", "-"), ("fedconcat_id", ":")):
            v = fin[(fin.column == column) & (fin.method == m)].accuracy
            if len(v):
                ax.axhline(v.mean(), color=colors.get(m), ls=ls, lw=1.6, label=paper.METHOD_LABELS[m] + " (final)")
        here = rounds[rounds.column == column][["variant", "rounds"]].drop_duplicates()
        for r, g in here.groupby("rounds", sort=True):
            ax.axvline(r, color="0.5", ls="--", lw=0.7)
            keys = ",".join(letter[v] for v in dict.fromkeys(g.variant))
            ax.text(r, ax.get_ylim()[0], f" {r} ({keys})", fontsize=7, color="0.4", va="bottom", rotation=90)
        merge_coinciding(ax)  # baselines with identical curves: one legend entry "A = B"
        ax.set_title(paper.TABLE1.column(column).label)
        ax.set_xlabel("baseline round")
    axes[0][0].set_ylabel("test accuracy (%)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    if handles:
        from matplotlib.lines import Line2D

        handles += [Line2D([], [], color="0.5", ls="--", lw=0.7)] + [Line2D([], [], ls="none") for _ in letter]
        labels += ["R of a way of counting (its letters):"] + [f"{k}: {v}" for v, k in letter.items()]
        fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=4, fontsize=8)
    fig.tight_layout()
    ctx.save_figure(fig, "budget_sensitivity_curves", experiment="budget",
                    title="The baselines per round, each way of counting the budget marked",
                    caption="Dashed vertical lines: R of each way of counting (its number and letters at the "
                            "bottom, the letters keyed in the legend); horizontal lines: FedConcat's and "
                            "FedConcat-ID's final accuracy.",
                    datasets=grid1.runs.dataset_used.dropna().unique())
    return fig


def _heat(ax, view: pd.DataFrame, prefix: str, title: str) -> None:
    cols = [c for c in view.columns if c.startswith(prefix)]
    image = ax.imshow(view[cols].to_numpy(), aspect="auto", cmap="Blues", vmin=0, vmax=1, interpolation="nearest")
    for b in np.flatnonzero(np.diff(view.cluster.to_numpy())) + 0.5:
        ax.axhline(b, color="white", lw=2)
    ax.set_xticks(range(len(cols)))
    ax.set_xlabel("class")
    ax.set_title(title, fontsize=9)
    ax.grid(False)
    return image


def clusters_heatmap(ctx, clusters):
    """The ``clusters`` study's label distributions ordered by cluster: FedConcat's (Eq. 2),
    FedConcat-ID's inferred ones (Eq. 3) and the true ones in FedConcat-ID's order."""
    import matplotlib.pyplot as plt

    views, grid = clusters.summary["views"], clusters.grid
    shown = [c for c in clusters.options.columns if (c, "fedconcat") in views]
    if not shown:  # nothing trained here: one axes that says what it would show and why
        fig, ax = plt.subplots(figsize=(7, 2.4))
        mark_empty(ax, "the clients' label distributions ordered by FedConcat's clusters",
                   why_empty(grid, ctx.profile.name))
        ax.set_xticks([]), ax.set_yticks([])
    else:
        fig, axes = plt.subplots(len(shown), 3, figsize=(11, 3.2 * len(shown)), squeeze=False)
    for row, column in zip(axes if shown else (), shown):
        ds = views[(column, "fedconcat")]
        setting = f"{paper.DATASET_LABELS[column.split('_')[-2]]} {partition_label(column)}, {len(ds)} clients"
        _heat(row[0], ds, "p_", f"{setting}: FedConcat, P(y) (Eq. 2) by cluster")
        row[0].set_ylabel("clients, by cluster")
        if (column, "fedconcat_id") in views:
            vi = views[(column, "fedconcat_id")]
            _heat(row[1], vi, "p_", "FedConcat-ID: inferred P^ID(y) (Eq. 3)")
            _heat(row[2], vi, "true_", "true P(y) in FedConcat-ID's order")
        else:
            row[1].set_axis_off(), row[2].set_axis_off()
    fig.tight_layout()
    if shown:  # one colour scale for every panel: P(y) in [0, 1]
        fig.colorbar(axes[0][0].images[0], ax=axes.ravel().tolist(), fraction=0.02, pad=0.01, label="P(y)")
    ctx.save_figure(fig, "clusters_heatmap", experiment="clusters",
                    title="The clients' label distributions ordered by cluster (K = 5)",
                    caption="Rows: clients ordered by cluster (white lines between clusters); columns: classes; "
                            "colour: probability. Left: FedConcat's K-means on Eq. 2; middle and right: FedConcat-ID's "
                            "clusters of its inferred Eq. 3 rows, and the true rows in that order. #C=2 gives each "
                            "client the same two classes on every dataset at one seed "
                            "(fedlib.partition.classes_per_client), so its left panels nearly agree across datasets.",
                    datasets=grid.runs.dataset_used.dropna().unique())
    return fig


def fig3_curves(ctx, f3):
    """Fig. 3: stage-3 test accuracy per round with K-means clusters and with random groups
    (nothing when no run has a history)."""
    hist = f3.histories
    if not len(hist):
        return None
    curves = hist[hist["stage"] == "classifier"] if "stage" in hist else hist
    fig = F.plot_histories(curves.rename(columns={"clustering": "grouping"}), panel="partition", hue="grouping",
                           title="FedConcat with vs without clustering: stage-3 test accuracy per round",
                           paper=ctx.paper)
    for ax in fig.axes:
        ax.set_xlabel("classifier round (stage 3)")
    ctx.save_figure(fig, "fig3_clustering_curves", experiment="fig3",
                    title="Fig. 3: training curves with clustering versus without clustering",
                    caption="Stage-3 rounds of FedConcat's concatenated model: K-means on the label distributions vs "
                            "a random assignment into K groups; the same stage 2 and 3 otherwise.",
                    datasets=f3.runs.dataset_used.dropna().unique())
    return fig


def fig4_bars(ctx, fig4):
    """Fig. 4 (the ``fig4`` study): every baseline on one cluster model and on FedConcat's final
    architecture, FedConcat dashed."""
    import matplotlib.pyplot as plt

    final4, grid4 = fig4.summary["final"], fig4.grid
    fc = final4[final4.method == "fedconcat"].ours_mean
    base = final4[final4.method != "fedconcat"]
    fig, ax = plt.subplots(figsize=(7, 3.3))
    archs = list(dict.fromkeys(base.architecture))
    methods = list(dict.fromkeys(base.method))
    for i, arch in enumerate(archs):
        d = base[base.architecture == arch].set_index("method").reindex(methods)
        ax.bar(np.arange(len(methods)) + (i - 0.5) * 0.4, d.ours_mean, 0.4,
               yerr=d.ours_std.where(d.n_seeds >= 2) if F.seeds_of(base) >= 2 else None, capsize=2,
               label=f"{arch}", color=["0.55", "0.2"][i])
    if not base.ours_mean.notna().any():  # nothing ran here: say what the axes would show and why, on the % scale
        mark_empty(ax, "the baselines on one cluster model and on FedConcat's final architecture",
                   why_empty(grid4, ctx.profile.name))
        ax.set_ylim(0, 100)
    label_empty_bars(ax, missing="not run")
    if len(fc) and pd.notna(fc.iloc[0]):
        ax.axhline(fc.iloc[0], color="k", ls="--", lw=1, label=f"FedConcat ({fc.iloc[0]:.1f}%)")
    ax.set_xticks(range(len(methods)), [paper.METHOD_LABELS[m] for m in methods])
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(_fig4_setting(fig4), fontsize=9)
    if base.ours_mean.notna().any():  # a key only for bars drawn
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    budget = fig4.options.budget
    ctx.save_figure(fig, "fig4_final_architecture", experiment="fig4",
                    title="Fig. 4: the baselines on one cluster model and on FedConcat's final architecture",
                    caption=f"Final test accuracy; on the final architecture the baselines run for the '{budget}' "
                            "budget (rounds in the table). " + F.std_caption(F.seeds_of(base)),
                    datasets=grid4.runs.dataset_used.dropna().unique())
    return fig


def _fig4_setting(fig4) -> str:
    """Fig. 4's partition, as its Table 1 column trains it ("40 clients, #C=2")."""
    column = fig4.options.column
    return f"{paper.TABLE1.config('fedavg', column)['num_clients']} clients, {partition_label(column)}"


def _seeds_phrase(n: int) -> str:
    return "its one seed" if n == 1 else f"the {n} seeds"


def fig4_communication(ctx, fig4):
    """Fig. 4 against communication: accuracy per parameter sent and received per client."""
    import matplotlib.pyplot as plt

    curves, grid4 = fig4.summary["curves"], fig4.grid
    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    colors = PAPER.method_colors
    baselines = list(dict.fromkeys(curves.method[curves.method != "fedconcat"]))
    for (m, arch), g in curves[curves.method != "fedconcat"].groupby(["method", "architecture"], sort=False):
        final = arch.startswith("FedConcat")
        # the final architecture's few points: a marker of its own per method, so that two methods at one
        # point (FedAvg's and FedRS's at quick) both show there
        marker = "osD^vP"[baselines.index(m) % 6] if final else None
        ax.plot(g.communication_M, g.accuracy, color=colors.get(m), marker=marker, ms=5 if final else 3,
                mfc="none" if final and baselines.index(m) % 2 else colors.get(m), ls="-" if final else ":", lw=1.3,
                label=f"{paper.METHOD_LABELS[m]}, {'final architecture' if final else 'one cluster model'}")
    point = curves[curves.method == "fedconcat"]
    if not len(curves):
        mark_empty(ax, "accuracy against the parameters each client sends and receives",
                   why_empty(grid4, ctx.profile.name))
    if len(point):
        ax.scatter(point.communication_M, point.accuracy, color="k", marker="*", s=120, zorder=5, label="FedConcat")
        ax.axvline(point.communication_M.iloc[0], color="0.5", ls="--", lw=0.7)
    ax.set_xlabel("parameters sent and received per client (millions)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(_fig4_setting(fig4), fontsize=9)
    merge_coinciding(ax)  # curves drawn over one another: one legend entry "A = B"
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    ctx.save_figure(fig, "fig4_communication_curves", experiment="fig4",
                    title="Fig. 4 against communication: accuracy per parameter sent and received",
                    caption="Dotted: baselines on one cluster model (Table 1's runs); solid with markers: on "
                            "FedConcat's final architecture; star and dashed line: FedConcat at its total "
                            "communication. Each line is the mean over "
                            f"{_seeds_phrase(F.seeds_of(fig4.summary['final']))} at each round, drawn without its "
                            "spread: the final accuracies with their std are in fig4_final_architecture.",
                    datasets=grid4.runs.dataset_used.dropna().unique())
    return fig


def table2_curves(ctx, comp2: pd.DataFrame, grid2):
    """Table 2 as curves: accuracy against the number of clients, ours solid, the paper dashed, one
    panel per partition run (every partition when none ran)."""
    from ...repro.verdict.compare import add_column_param
    from .cells import partition_label

    plot2 = add_column_param(comp2, ctx.paper.table("table2"), "num_clients", "clients")
    plot2["partition"] = plot2.column.map(partition_label)
    ran = set(plot2.loc[plot2.ours_mean.notna(), "partition"])
    dropped = [p for p in dict.fromkeys(plot2.partition) if p not in ran] if ran else []
    plot2 = plot2[plot2.partition.isin(ran) | plot2.ours_mean.isna().all()]
    title = "Table 2: accuracy against the number of clients, paper (dashed) vs ours"
    if dropped:  # a partition not run is said, not silently dropped
        title += f"\nnot run here (in the table): {', '.join(dropped)}"
    fig = F.plot_paper_vs_ours(plot2, x="clients", panel="partition", x_label="clients", paper=ctx.paper,
                               title=title)
    ctx.save_figure(fig, "table2_curves", experiment="table2",
                    title="Table 2 as curves: accuracy against the number of clients",
                    caption="Ours: solid, filled markers; the paper: dashed, open markers. "
                            + F.std_caption(F.seeds_of(plot2)), datasets=grid2.runs.dataset_used.dropna().unique())
    return fig


