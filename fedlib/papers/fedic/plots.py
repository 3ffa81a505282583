"""FEDIC's figures, drawn from the frames of :mod:`.experiments` and saved through the notebook's
:class:`fedlib.repro.context.Context` (the shared style of :mod:`fedlib.repro.figures`).

Each function draws one figure of a notebook, saves it (``ctx.save_figure``) and returns it.
"""

from __future__ import annotations

import pandas as pd

from .experiments import datasets_used

__all__ = ["GROUP_COLORS", "long_tail_counts", "table3_groups", "fig3_aux_size", "fig4_lambda", "fig5_alpha"]

#: Colours of the many / medium / few class groups.
GROUP_COLORS = {"many": "tab:blue", "medium": "tab:orange", "few": "tab:red"}


def long_tail_counts(ctx, counts: pd.DataFrame | None, info: dict):
    """§3.1: training samples per class after D_aux and the long tail, coloured by group, and D_aux
    per class (a placeholder when the dataset is absent)."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    fig, ax = plt.subplots(figsize=(6.5, 3.2))
    if counts is not None:
        ax.bar(counts["class"] - 0.2, counts.train_count, width=0.4, color=[GROUP_COLORS[g] for g in counts.group])
        ax.bar(counts["class"] + 0.2, counts.aux_count, width=0.4, color="0.6")
        ax.legend(handles=[Patch(color=c, label=f"{g} (training)") for g, c in GROUP_COLORS.items()]
                  + [Patch(color="0.6", label="D_aux")], fontsize=8)
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
                    parameters=info)
    return fig


def fig3_aux_size(ctx, fig3: pd.DataFrame, grid):
    """Fig. 3: FedAvg, FT and FEDIC against the size of D_aux (per D_ulb)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for (name, ulb), s in fig3.groupby(["curve", "ulb"], sort=False):
        ax.errorbar(s.aux_per_class, s.ours_mean, yerr=s.ours_std.fillna(0), marker="o", capsize=2,
                    label=name if name == "FedAvg" else f"{name}, D_ulb {ulb}")
    ax.set_xscale("log")
    ax.set_xlabel("D_aux per class")
    ax.set_ylabel("test accuracy (%)")
    ax.legend(fontsize=8)
    ax.set_title("Fig. 3: FedAvg, FT and FEDIC against the size of D_aux")
    fig.tight_layout()
    ctx.save_figure(fig, "fig3_aux_size", experiment="fig3", title="Fig. 3: accuracy against the size of D_aux",
                    caption="FT: the global model fine-tuned on D_aux (the teacher of FEDIC with LA off).",
                    datasets=datasets_used(grid), placeholder=not fig3.ours_mean.notna().any())
    return fig


def fig4_lambda(ctx, fig4: pd.DataFrame, grid):
    """Fig. 4: FEDIC against λ of Eq. 9."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.0, 3.2))
    ax.errorbar(fig4["lambda"], fig4.ours_mean, yerr=fig4.ours_std.fillna(0), marker="o", capsize=2, label="FEDIC")
    ax.set_xlabel("λ (weight of the KL in Eq. 9)")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title("Fig. 4: FEDIC against λ")
    fig.tight_layout()
    ctx.save_figure(fig, "fig4_lambda", experiment="fig4", title="Fig. 4: FEDIC's accuracy against λ",
                    datasets=datasets_used(grid), placeholder=not fig4.ours_mean.notna().any())
    return fig


def fig5_alpha(ctx, fig5: pd.DataFrame, grid):
    """Fig. 5: every method against the non-IID degree α (smaller: more non-IID)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    for name, s in fig5.groupby("curve", sort=False):
        ax.errorbar(s.alpha, s.ours_mean, yerr=s.ours_std.fillna(0), marker="o", capsize=2, label=name)
    ax.set_xscale("log")
    ax.invert_xaxis()
    ax.set_xlabel("α of D(α) (smaller: more non-IID)")
    ax.set_ylabel("test accuracy (%)")
    ax.legend(fontsize=8)
    ax.set_title("Fig. 5: accuracy against the non-IID degree")
    fig.tight_layout()
    ctx.save_figure(fig, "fig5_alpha", experiment="fig5", title="Fig. 5: accuracy against the non-IID degree α",
                    datasets=datasets_used(grid), placeholder=not fig5.ours_mean.notna().any())
    return fig


def table3_groups(ctx, comp3: pd.DataFrame, grid):
    """Table 3 (ours) by row and group: the teachers (a)-(d) and distilled students (e)-(h)."""
    import matplotlib.pyplot as plt

    wide = comp3.pivot_table(index="row_label", columns="column_label", values="ours_mean", sort=False)
    fig, ax = plt.subplots(figsize=(7.5, 3.2))
    if wide.notna().any().any():
        wide[[c for c in ("All", "Many", "Medium", "Few") if c in wide]].plot.bar(ax=ax, rot=0)
        ax.set_ylabel("test accuracy (%)")
        ax.set_xlabel("")
    else:
        ax.text(0.5, 0.5, "not run", ha="center", va="center")
        ax.set_axis_off()
    ax.set_title("Table 3 (ours): teachers (a)-(d) and distilled students (e)-(h), by group")
    fig.tight_layout()
    ctx.save_figure(fig, "table3_groups", experiment="table3", title="Table 3 (ours) by row and group",
                    caption="Bars: ours, accuracy of all classes and of the many / medium / few groups.",
                    datasets=datasets_used(grid), placeholder=not datasets_used(grid))
    return fig
