"""FedLC's figures of the motivation and the analysis (Figs. 1-3, the deviation bound, Figs. 6-7),
drawn from the studies' summaries (:mod:`.studies`) and saved through the notebook's
:class:`fedlib.repro.artefacts.context.Context` (the shared style of :mod:`fedlib.repro.artefacts.figures`, one colour
per method from :attr:`fedlib.repro.spec.paper.Paper.method_colors`).  The results' figures (the
calibration study, the tables as curves, Figs. 4-5, the stand-in check) are in :mod:`.result_plots`.

Each function draws one figure, saves it (``ctx.save_figure``) and returns it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...repro.artefacts import figures as F
from ...repro.artefacts.figure_rules import declare, label_empty_bars, merge_coinciding
from ...repro.artefacts.not_run import short_reason
from . import PAPER
from . import reported as paper
from .deviation_study import LOSS_NAMES
from .experiments import skew_text
from .local_models import ROLES
from .toy import toy_panels

__all__ = ["ROLE_COLORS", "fig1_bars", "fig2_before_after", "fig3_toy", "deviation_bound", "fig6_before_after",
           "fig7_tsne"]

#: Colours of a client's class roles (Definition 2).
ROLE_COLORS = dict(zip(ROLES, ("#0173b2", "#de8f05", "#cc78bc")))


def _dataset(name: str) -> str:
    """A dataset's label in this paper (the token when it has none)."""
    return paper.DATASET_LABELS.get(name, PAPER.dataset_label(name))


def _std(frame: pd.DataFrame):
    """``(yerr, n)``: the std over seeds where the frame's cells have >= 2 seeds (NaN, so no error bar, for a cell
    of one seed: a zero-height cap would read "no spread"; None where no cell has two), and n."""
    n = F.seeds_of(frame)
    return (frame.ours_std.where(frame.n_seeds >= 2) if n >= 2 else None), n


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
    if yerr is not None:  # the error bars' seeds: the cells' (a GPU's cells may have fewer than the profile's)
        declare(ax, seeds=n)
    # why a bar has no value, in a few words where every such bar has the same reason (a GPU, absent data)
    notes = fig1.get("note", pd.Series("", index=fig1.index))[fig1.ours_mean.isna()]
    reasons = {short_reason(n, ctx.profile.name) for n in notes}
    label_empty_bars(ax, missing=reasons.pop() if len(reasons) == 1 else "not run")  # (keeps their places in the axes)
    for i, (_, row) in enumerate(fig1.iterrows()):  # at the bar's position, whatever the frame's index
        if pd.notna(row.ours_mean):  # above the error bar's cap, where there is one
            cap = row.ours_std if yerr is not None and row.n_seeds >= 2 and pd.notna(row.ours_std) else 0.0
            ax.text(i, row.ours_mean + cap + 1, f"{row.ours_mean:.1f}", ha="center", fontsize=7)
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
    from matplotlib.lines import Line2D

    # a key for the bars drawn; a missing class draws no bar (0 samples): its key says so, in words
    drawn = set(ba.loc[ba.n_train > 0, "role"])
    roles = [r for r in ROLE_COLORS if r in drawn]
    handles = [plt.Rectangle((0, 0), 1, 1, color=ROLE_COLORS[r]) for r in roles] + [Line2D([], [], ls="none")]
    fig.legend(handles + ax2.get_legend_handles_labels()[0],
               roles + ["missing: 0 samples, a '0' in its slot"] + ax2.get_legend_handles_labels()[1],
               loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3)
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
    clients' local models and FedAvg), the global optimum's class boundaries as black lines."""
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
            # solid: where two boundaries of the argmax meet (class 0 next to class 2) their dashes would overlap
            ax.contour(xx, yy, regions("global optimum"), levels=np.arange(0.5, 3.5), colors="k", linestyles="-",
                       linewidths=0.8)
            pts = toy.data if c == 2 else toy.data[toy.data.client == c + 1]
            ax.scatter(pts.x, pts.y, c=pts.label, cmap=cmap, s=4, vmin=-0.5, vmax=3.5)
            ax.set_title(f"{name}\nbalanced accuracy {acc[name]:.1f}%", fontsize=9)
            ax.grid(False)
    for ax in axes[1]:
        ax.set_xlabel("x₁")
    for row in axes:
        row[0].set_ylabel("x₂")
    from matplotlib.lines import Line2D

    classes = sorted(int(k) for k in toy.data.label.unique())
    fig.legend([Line2D([], [], ls="none", marker="o", color=cmap(k)) for k in classes]
               + [Line2D([], [], color="k", ls="-", lw=0.8)], [f"class {k}" for k in classes]
               + ["global optimum's class boundaries"],
               loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(classes) + 1, fontsize=8)
    fig.suptitle(f"Toy data: {len(classes)} classes of 2-D points, two clients with skewed class counts "
                 f"{toy.class_counts.tolist()}; columns: client 1's and client 2's local models, FedAvg's global model",
                 fontsize=9)
    fig.tight_layout()
    ctx.save_figure(fig, "fig3_toy_two_clients", experiment="fig3",
                    title="Fig. 3: two skewed clients — local optima, FedAvg and the global optimum (measured)",
                    caption=f"Client class counts {toy.class_counts.tolist()}; black lines = the global optimum's "
                            "class boundaries.",
                    parameters=ctx.profile.experiment("fig3"))
    return fig


def deviation_bound(ctx, start, dev: pd.DataFrame):
    """§3-4: D_jr against n_j/n_r for CE and FedLC (deviated or not), and the deviation rate
    against (n_j/n_r)/D_jr (Theorem 1)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
    for ax, (loss, name) in zip(axes[:2], LOSS_NAMES.items()):
        d = dev[(dev.loss == loss) & dev.D_valid]
        cats = [(True, "o", "deviated (both signs)"), (False, "x", "not deviated")]
        # the larger category first, the smaller over it (it would lie hidden under the dense one), counts stated
        cats.sort(key=lambda c: -int((d.deviated == c[0]).sum()))
        for z, (flag, marker, lab) in enumerate(cats):
            s = d[d.deviated == flag]
            ax.scatter(s.ratio, s.D, marker=marker, s=18 if flag else 14, alpha=0.75 if z else 0.35,
                       label=f"{lab}: {len(s)} of {len(d)}", color="#d55e00" if flag else "#0173b2", zorder=2 + z,
                       linewidths=0.8)
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
    merge_coinciding(axes[2])  # equal rates: one legend entry "A = B"
    axes[2].legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.26), ncol=2)
    cfg = start.config
    fig.suptitle(f"Deviation bound on {_dataset(cfg.dataset)}: client {dev.client.iloc[0]}, seed {cfg.seed}, one "
                 f"local epoch from FedAvg's global model after {cfg.rounds} rounds", fontsize=10)
    fig.tight_layout()
    ctx.save_figure(fig, "deviation_bound", experiment="deviation",
                    title="§3–4: deviation bound D_jr vs n_j/n_r, softmax CE and FedLC, and the measured deviation",
                    caption=f"Client {dev.client.iloc[0]} of {cfg.dataset}, {cfg.num_clients} clients "
                            f"D(β={cfg.partition_beta}), global model after {cfg.rounds} FedAvg rounds; "
                            "every (majority j, minority r) pair at every local step. Deviated: Δw_r·h̄_r < 0 and "
                            "Δw_j·h̄_r > 0.",
                    datasets=[cfg.dataset], parameters={**cfg.to_dict(), **ctx.profile.experiment("deviation")})
    return fig


def _chance_note(ax, series: dict, k: int) -> None:
    """Name, at the top of ``ax``, each class at chance (1/k) or below in each series (``{label: Series of
    accuracy by class}``), with its value: one note, not a mark per bar that would cover its neighbours."""
    import textwrap

    from ...repro.artefacts.figure_checks_data import CHANCE_MARGIN_PP

    chance = 100 / k
    low = {name: v[v <= chance + CHANCE_MARGIN_PP] for name, v in series.items()}
    said = [f"{name}: " + ", ".join(f"class {c} ({x:.1f})" for c, x in v.items()) for name, v in low.items() if len(v)]
    if said:
        text = f"at chance (1/{k} = {chance:g} %) or below: " + "; ".join(said)
        ax.text(0.01, 0.99, "\n".join(textwrap.wrap(text, 70)), transform=ax.transAxes, ha="left", va="top",
                fontsize=7, color="firebrick", linespacing=1.1)


def fig6_before_after(ctx, start, per_class: pd.DataFrame):
    """Fig. 6: per-class accuracy after the local update and after aggregation, FedAvg vs FedLC."""
    import matplotlib.pyplot as plt

    colors = PAPER.method_colors
    k = int(per_class["class"].nunique())
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
    for ax, col, title in ((axes[0], "after_local_update", "after the local update (mean over clients)"),
                           (axes[1], "after_aggregation", "after aggregation")):
        series = {}
        for i, m in enumerate(["fedavg", "fedlc"]):
            d = per_class[per_class.method == m]
            x = d["class"] + (i - 0.5) * 0.4
            ax.bar(x, d[col], width=0.4, color=colors[m], label=F._label(m, PAPER))
            series[F._label(m, PAPER)] = d.set_index("class")[col]
            for xi, v in zip(x, d[col]):  # a bar too short to see: its value, upright within its own width
                if v < 4:
                    ax.text(xi, v + 0.5, f"{v:.1f}", rotation=90, ha="center", va="bottom", fontsize=7)
        d = per_class[per_class.method == "fedavg"]
        ax.plot(d["class"], d.before, "k_", ms=14, mew=2, label="global model before")
        series["global model before"] = d.set_index("class").before
        _chance_note(ax, series, k)
        ax.axhline(100 / k, color="0.45", ls=(0, (1, 2)), lw=0.9, zorder=0.6)
        ax.set_xticks(sorted(per_class["class"].unique()))
        ax.set_ylim(0, 125)  # headroom for the note: the ticks stop at 100 %
        ax.set_yticks(range(0, 101, 20))
        ax.set(title=title, xlabel="class")
    axes[0].set_ylabel("test accuracy (%)")
    fig.legend(*axes[1].get_legend_handles_labels(), loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3,
               fontsize=8)
    cfg = start.config
    fig.suptitle(f"Per-class accuracy, FedAvg vs FedLC, {_dataset(cfg.dataset)}: {cfg.num_clients} clients under "
                 f"{skew_text(cfg.to_dict())}, seed {cfg.seed}, one local epoch from FedAvg's global model after "
                 f"{cfg.rounds} rounds", fontsize=10)
    fig.tight_layout()
    ctx.save_figure(fig, "fig6_before_after_aggregation", experiment="fig6",
                    title="Fig. 6: per-class accuracy after the local update and after aggregation, FedAvg vs FedLC",
                    caption=f"Same global model (FedAvg, {cfg.rounds} rounds, accuracy "
                            f"{100 * start.final_accuracy:.1f}%) and the same data for both; {cfg.num_clients} "
                            f"clients, seed {cfg.seed}, one local epoch; dotted: chance (1/{k}).",
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
            if len(s):  # translucent, so that no class hides another; the points drawn counted
                ax.scatter(s.x, s.y, s=6, color=c, alpha=0.6, label=f"{r} (class {s['class'].iloc[0]}, "
                                                                      f"n_train={s.n_train.iloc[0]}): {len(s)} points")
        sc = scores.set_index("method").loc[m]
        ax.set_title(f"{F._label(m, PAPER)}: silhouette {sc.silhouette_features:.2f}, "
                     f"5-NN {100 * sc.knn5_accuracy_tsne:.0f}%")
        ax.set_xticks([]), ax.set_yticks([])
        ax.legend(fontsize=7, markerscale=2, loc="upper center", bbox_to_anchor=(0.5, -0.02))
    cfg = start.config
    fig.suptitle(f"t-SNE of test features, {_dataset(cfg.dataset)}: client {scores.client.iloc[0]} of "
                 f"{cfg.num_clients} under {skew_text(cfg.to_dict())}, seed {cfg.seed}, one local epoch from the "
                 "same global model", fontsize=10)
    fig.tight_layout()
    ctx.save_figure(fig, "fig7_tsne", experiment="fig7",
                    title="Fig. 7: t-SNE of test features of a missing, a minority and a majority class after the "
                          "local update",
                    caption=f"Client {scores.client.iloc[0]}; one local epoch from the same global model; the "
                            "silhouette score (features) and the 5-NN accuracy (embedding) measure how well the three "
                            "classes separate.",
                    datasets=[start.config.dataset])
    return fig
