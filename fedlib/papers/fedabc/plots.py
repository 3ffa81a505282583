"""FedABC's figures, drawn from the summaries of its studies (:mod:`.studies`) (the shared style and
method colours of :mod:`fedlib.repro.artefacts.figures`)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...repro.artefacts.figure_checks_data import declare_noise
from ...repro.artefacts.figure_rules import declare, label_empty_bars, std_caption
from . import PAPER
from .experiments import HYPERPARAMETERS
from .reported import METHOD_LABELS

__all__ = ["placeholder", "bubble_plot", "per_class_bars", "fig5_bars", "sensitivity_plot", "sensitivity_caption"]


def placeholder(text: str):
    """A blank figure that says why it is empty (its data is not run in this profile)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 2))
    ax.text(0.5, 0.5, text, ha="center", va="center")
    ax.set_axis_off()
    return fig


def bubble_plot(counts: pd.DataFrame, *, title: str = "", max_size: float = 60.0):
    """Fig. 4 (FedGen's style): one panel per Dir(β); x = client, y = class, marker area
    proportional to that client's number of training samples of the class (the same scale in
    every panel)."""
    import matplotlib.pyplot as plt

    betas = list(dict.fromkeys(counts.beta))
    clients = int(counts.client.max()) + 1 if len(counts) else 1
    classes = int(counts["class"].max()) + 1 if len(counts) else 1
    fig, axes = plt.subplots(len(betas), 1, figsize=(max(6.0, 0.11 * clients + 1.5), 1.7 * len(betas) + 0.6),
                             squeeze=False, sharex=True)
    top = max(float(counts["count"].max()), 1.0) if len(counts) else 1.0
    for ax, beta in zip(axes[:, 0], betas):
        sub = counts[(counts.beta == beta) & (counts["count"] > 0)]
        ax.scatter(sub.client, sub["class"], s=max_size * sub["count"] / top, color="tab:red", alpha=0.6, lw=0)
        ax.set_ylabel(f"Dir({beta:g})\nclass")
        ax.set_yticks(range(classes))
        ax.tick_params(axis="y", labelsize=7)
        ax.set_ylim(-0.7, classes - 0.3)
        ax.grid(True, alpha=0.2)
    axes[-1, 0].set_xlabel("client")
    axes[-1, 0].set_xlim(-1, clients)
    # the size key: three counts on the panels' common scale
    keys = sorted({max(1, int(round(top * f, -1 if top >= 100 else 0))) for f in (0.1, 0.5, 1.0)})
    handles = [axes[0, 0].scatter([], [], s=max_size * k / top, color="tab:red", alpha=0.6, lw=0) for k in keys]
    fig.legend(handles, [f"{k} samples" for k in keys], title="marker area", loc="upper left",
               bbox_to_anchor=(1.0, 0.95), frameon=False, fontsize=7, title_fontsize=7)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def per_class_bars(frame: pd.DataFrame, *, title: str = ""):
    """Fig. 2: per-class test accuracy of each model, one panel per ``panel``; classes ordered
    by the client's training count and labelled with it and their role."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    panels = list(dict.fromkeys(frame.panel))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.2 * len(panels), 3.4), squeeze=False, sharey=True)
    models = list(dict.fromkeys(frame.model))
    colors = dict(zip(models, sns.color_palette("colorblind", len(models))))
    for ax, panel in zip(axes[0], panels):
        sub = frame[frame.panel == panel]
        order = (sub.drop_duplicates("class").sort_values(["n_train", "class"], ascending=[False, True]))
        ticks = [f"{c}\n{r[:3]}.\nn={n}" for c, r, n in zip(order["class"], order.role, order.n_train)]
        here = [m for m in models if m in set(sub.model)]
        width = 0.8 / max(len(here), 1)
        for i, m in enumerate(here):
            acc = sub[sub.model == m].set_index("class").loc[order["class"], "accuracy"]
            ax.bar(np.arange(len(order)) + (i - (len(here) - 1) / 2) * width, acc, width, color=colors[m], label=m)
        label_empty_bars(ax)
        ax.set_xticks(range(len(order)), ticks, fontsize=7)
        ax.set_title(panel)
        ax.set_ylim(0, 105)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[m]) for m in models]
    fig.legend(handles, models, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(models), fontsize=7)
    return _finish(fig, axes, "per-class test accuracy (%)", title)


def fig5_bars(summary: pd.DataFrame, *, title: str = ""):
    """Fig. 5: personalized accuracy of FedABC_wi and FedABC per Dir(β), one panel per
    dataset, the gain written above each pair."""
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(summary.dataset))
    fig, axes = plt.subplots(1, len(datasets), figsize=(4.6 * len(datasets), 3.3), squeeze=False)
    colors = PAPER.method_colors
    for ax, ds in zip(axes[0], datasets):
        sub = summary[summary.dataset == ds].sort_values("beta")
        x = np.arange(len(sub))
        ax.bar(x - 0.2, sub.fedabc_wi, 0.4, color="0.7", label=METHOD_LABELS["fedabc_wi"])
        ax.bar(x + 0.2, sub.fedabc, 0.4, color=colors["fedabc"], label=METHOD_LABELS["fedabc"])
        for xi, (hi, g) in enumerate(zip(np.fmax(sub.fedabc, sub.fedabc_wi), sub.gain)):
            if not math.isnan(g):
                ax.text(xi, hi + 0.5, f"{g:+.2f}", ha="center", va="bottom", fontsize=8)
        label_empty_bars(ax, missing="not run")
        ax.set_xticks(x, [f"Dir({b:g})" for b in sub.beta])
        ax.set_ylim(0, 108)  # bars from 0: the gain is written above each pair, not drawn as a bar length
        ax.set_title(ds)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8)
    return _finish(fig, axes, "PFL accuracy (%)", title)


def sensitivity_plot(frame: pd.DataFrame, *, references: dict | None = None, title: str = ""):
    """Validation personalized accuracy against each hyperparameter (the others at the
    center), with the center and the references (FedABC_wi, FedAvg, the profile's setting) as
    horizontal lines."""
    import matplotlib.pyplot as plt

    names = [n for n in HYPERPARAMETERS if n in set(frame.factor)]
    fig, axes = plt.subplots(1, max(len(names), 1), figsize=(3.0 * max(len(names), 1), 3.0), squeeze=False,
                             sharey=True)
    center = frame[frame.label.str.startswith("center")]
    lines = {r.label: r.validation_accuracy for r in frame[frame.factor.isin(["setting", "reference"])]
             .itertuples(index=False)}
    styles = ["-", "--", ":", "-."]
    for ax, name in zip(axes[0], names):
        sub = pd.concat([frame[frame.factor == name],
                         center.assign(value=(references or {}).get(name, math.nan))]).dropna(subset=["value"])
        sub = sub.sort_values("value")
        n = int(sub.n_seeds.max()) if "n_seeds" in sub and sub.n_seeds.notna().any() else 1
        std = sub.validation_std if "validation_std" in sub and n >= 2 else None
        # the seeds' spread beside differences of a few hundredths of a point: error bars over >= 2 seeds
        ax.errorbar(sub.value, sub.validation_accuracy, yerr=None if std is None else std.fillna(0), marker="o",
                    color="tab:blue", capsize=2)
        if std is not None and std.notna().any():
            declare(ax, seeds=n)
            declare_noise(ax, float(std.max()), n)
        ax.set_title(f"mean ± std, {n} seeds" if n >= 2 else "1 seed: no spread measured", fontsize=8)
        for (label, acc), ls in zip(lines.items(), styles):
            ax.axhline(acc, color="0.4", ls=ls, lw=0.9, label=label)
        ax.set_xlabel(HYPERPARAMETERS[name])
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2, fontsize=8)
    return _finish(fig, axes, "validation PFL accuracy (%)", title)


def sensitivity_caption(frame: pd.DataFrame) -> str:
    """The sentence :func:`sensitivity_plot`'s error bars need ("" over one seed)."""
    n = int(frame.n_seeds.max()) if "n_seeds" in frame and frame.n_seeds.notna().any() else 1
    return std_caption(n)


def _finish(fig, axes, ylabel: str, title: str):
    axes[0][0].set_ylabel(ylabel)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
