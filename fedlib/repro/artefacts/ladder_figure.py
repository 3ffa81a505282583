"""A budget ladder's figure: the gap per rung against the paper's and both methods' accuracy
(:func:`ladder_figure`), its caption (:func:`figure_caption`) and the rungs' tick labels (:func:`rung_ticks`)."""

from __future__ import annotations

import pandas as pd

from ..budget.ladder_finding import at_chance, paper_values
from ..budget.ladder_spec import LadderSpec

__all__ = ["ladder_figure", "figure_caption", "compact_count", "rung_ticks"]


def _seeds(table: pd.DataFrame) -> int:
    """The most seeds behind a rung that ran (0 when none ran): the seeds of the ladder's means, which a rung
    over fewer (a GPU's top rung, 2 of the CPU rungs' 3) is drawn and named apart from (:func:`_fewer`)."""
    n = table["n_seeds"].dropna() if "n_seeds" in table else pd.Series(dtype=float)
    return int(n[n > 0].max()) if (n > 0).any() else 0


def _fewer(table: pd.DataFrame) -> dict[int, pd.Series]:
    """``{seeds: the rungs that ran over that many}`` for each count below :func:`_seeds`."""
    if "n_seeds" not in table:
        return {}
    n, most = table["n_seeds"].fillna(0), _seeds(table)
    return {int(k): (n == k) for k in sorted(set(n[(n > 0) & (n < most)]))}


def figure_caption(table: pd.DataFrame) -> str:
    """The caption of :func:`ladder_figure`, with the error bars' seeds where it draws them (and those of the
    rungs over fewer seeds, drawn as open squares)."""
    from .figure_rules import std_caption

    if not table.gap.notna().any():  # nothing is drawn (ladder_figure): the caption says no more than that
        return "No rung ran in this profile, so nothing is drawn; the ladder's table gives each rung's estimated cost."
    text = ("The gap per rung (client sample-epochs of a run, log) against the paper's (dashed); right: both "
            "methods and the paper's values (dotted).")
    most = _seeds(table)
    fewer = [f"the rung{'s' if sel.sum() > 1 else ''} over {n} of {most} seeds (open squares): "
             + (f"std over {n} seeds" if n >= 2 else "one seed, no error bar")
             for n, sel in _fewer(table).items()] if most >= 2 else []
    std = std_caption(most)
    if fewer:
        std = std.rstrip(".") + "; " + "; ".join(fewer) + "."
    return " ".join(t for t in (text, std) if t)


def compact_count(value: float) -> str:
    """A count for a tick label: 600000 → '600k', 1020000 → '1.02M', 20000000 → '20M'."""
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


def rung_ticks(ax, x, min_gap: float = 0.12) -> None:
    """One labelled tick per rung on a log axis: the default log ticks of a short range (3×10⁶ beside 4×10⁶)
    overlap.  A rung whose label would sit within ``min_gap`` of the axis's log width of the label before it
    on the first line goes on a second line (FEDIC's 4.86k and 9.72k on an axis up to 9.72M; FedConcat's
    4.27M and 9.25M): every rung's budget stays readable.  The second line is the axis's minor ticks, their
    labels padded one line further down (a label starting with a newline overlapped the first line's
    neighbour, and its number was lost in the PNG)."""
    import math

    import matplotlib as mpl
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ticks = sorted(set(float(v) for v in x))
    lo, hi = ax.get_xlim()
    width = math.log10(hi / lo) if lo > 0 and hi > lo else 1.0
    second, last_first = set(), None
    for v in ticks:
        if last_first is not None and math.log10(v / last_first) < min_gap * width:
            second.add(v)
        else:
            last_first = v
    label = FuncFormatter(lambda v, _: compact_count(v))
    ax.xaxis.set_major_locator(FixedLocator([v for v in ticks if v not in second]))
    ax.xaxis.set_major_formatter(label)
    ax.xaxis.set_minor_locator(FixedLocator(sorted(second)) if second else NullLocator())
    ax.xaxis.set_minor_formatter(label)
    if second:  # as long as a major tick, its label a line below the first line's
        size = mpl.font_manager.FontProperties(size=mpl.rcParams["xtick.labelsize"]).get_size_in_points()
        ax.tick_params(axis="x", which="minor", length=mpl.rcParams["xtick.major.size"],
                       width=mpl.rcParams["xtick.major.width"], labelsize=mpl.rcParams["xtick.labelsize"],
                       pad=mpl.rcParams["xtick.major.pad"] + 1.25 * size)


def _nothing_ran(spec: LadderSpec, pp, table: pd.DataFrame, x: pd.Series, title: str):
    """The ladder of a profile that ran no rung: one axes saying what it would show (the gap per rung beside
    the paper's) and why nothing is there (each rung's estimated CPU time), which
    :func:`fedlib.repro.artefacts.saving.save_figure` keeps in the sidecar instead of drawing empty axes over
    the paper's line."""
    import matplotlib.pyplot as plt

    from .figure_rules import mark_empty

    fig, ax = plt.subplots(figsize=(7.5, 2.4))
    gain = pp.gain_label(spec.method, spec.baseline)
    paper = f", beside the paper's {float(table.paper_gap.iloc[0]):+.2f} pp" if table.paper_gap.notna().any() else ""
    costs = "; ".join(f"{compact_count(v)} sample-epochs: {c:.0f} CPU-min" if pd.notna(c) else compact_count(v)
                      for v, c in zip(x, table.get("est_cpu_min", pd.Series([float("nan")] * len(x)))))
    mark_empty(ax, f"{gain} (pp) per rung of the budget ladder{paper}",
               f"no rung ran in this profile (est. CPU time of each rung's runs on one core: {costs}); the paper "
               "profile runs the rungs its device affords")
    ax.set_axis_off()
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def ladder_figure(spec: LadderSpec, table: pd.DataFrame, title: str = ""):
    """Left: the gap per rung against the client sample-epochs of a run (log), the paper's gap
    dashed, not-run rungs labelled "not run" at the bottom, rungs whose baseline is at chance (:func:`at_chance`: the
    finding leaves them out) as open markers off the line; right: both methods' accuracy per rung (a rung not run
    labelled in place) and the paper's values.  A profile that ran no rung gets one axes saying so
    (:func:`_nothing_ran`), which is not drawn."""
    import matplotlib.pyplot as plt

    from .figure_rules import declare, label_cell, seeds_label
    from ..spec.paper import get_paper

    pp = get_paper(spec.paper)
    pm, pb = paper_values(spec)
    x = table.sample_epochs.astype(float).where(table.sample_epochs.notna(), table.rung + 1)
    ran = table.gap.notna()
    if not ran.any():  # a figure of nothing is not drawn: its sidecar says what would be there, and why
        return _nothing_ran(spec, pp, table, x, title)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.6))
    chance = ran & at_chance(spec, table)  # their gap measures nothing: not on the line the finding reads
    counted = ran & ~chance
    most, fewer = _seeds(table), _fewer(table)
    if most >= 2:  # error bars only over ≥ 2 seeds (fedlib.repro.artefacts.figure_rules)
        # a rung over fewer seeds than the others (a GPU's top rung) is an open square, named in the legend
        # (seeds_label) and the caption; the line joins every rung the finding reads
        ax1.plot(x[counted], table.gap[counted], color="C0", label="_")
        full = counted & (table["n_seeds"] == most)
        if full.any():  # (every rung over the most seeds may be at chance, drawn apart below)
            ax1.errorbar(x[full], table.gap[full], yerr=table.gap_std[full].fillna(0), marker="o", color="C0",
                         ls="none", capsize=3, label="ours")
        marked = {}
        for n, sel in fewer.items():
            sel = sel & counted
            if not sel.any():
                continue
            name = seeds_label("ours", n, most)
            ax1.errorbar(x[sel], table.gap[sel], yerr=table.gap_std[sel].fillna(0) if n >= 2 else None, marker="s",
                         mfc="white", color="C0", ls="none", capsize=3, label=name)
            marked[name] = n
        declare(ax1, seeds=most, series_seeds=marked or None)
    elif counted.any():  # one seed: no spread measured, said in the key beside the points
        ax1.plot(x[counted], table.gap[counted], marker="o", color="C0",
                 label="ours (1 seed per rung: no spread measured)" if most == 1 else "ours")
    if chance.any():
        ax1.plot(x[chance], table.gap[chance], "o", mfc="none", color="C0", ls="none",
                 label=f"ours, {pp.method_label(spec.baseline)} at chance (left out)")
    if table.paper_gap.notna().any():
        ax1.axhline(float(table.paper_gap.iloc[0]), color="k", ls="--", lw=1, label="paper")
    for v, rung in zip(x[~ran], table.rung[~ran]):  # a word at the bottom, not a marker on the paper's line
        label_cell(ax1, float(v), 0.03, "not run", key=f"gap, rung {int(rung)}", transform=ax1.get_xaxis_transform(),
                   va="bottom", rotation=90)
    lo, hi = float(x.min()), float(x.max())
    for ax in (ax1, ax2):
        ax.set_xlim(lo / 1.6, hi * 1.6)
    ax1.set_xscale("log")
    rung_ticks(ax1, x)
    ax1.set_xlabel("client sample-epochs per run")
    ax1.set_ylabel(f"{pp.gain_label(spec.method, spec.baseline)} (pp)")
    # below the axes: a key inside it (its lines name the seeds and the paper's value) covers the rungs' points
    ax1.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.36), ncol=1)
    for i, (row, ref) in enumerate(((spec.baseline, pb), (spec.method, pm))):
        label = pp.method_label(row)
        # the baseline's circles, the method's smaller diamonds: two curves at the same accuracy stay told apart
        ax2.plot(x[ran], table[f"{row}_mean"][ran], marker="oD"[i], markersize=(6, 4)[i], color=f"C{i}",
                 label=label if ran.any() else "_")
        if ref is not None:  # the paper's value, in the method's colour; named in the legend when nothing ran
            ax2.axhline(ref, color=f"C{i}", ls=":", lw=1, label="_" if ran.any() else f"{label}: paper")
    if ran.any():  # a rung of ours not run: labelled in place, as the gap panel marks it
        for v, rung in zip(x[~ran], table.rung[~ran]):
            label_cell(ax2, float(v), 0.03, "not run", key=f"rung {int(rung)}", transform=ax2.get_xaxis_transform(),
                       va="bottom", rotation=90)
    ax2.set_xscale("log")
    rung_ticks(ax2, x)
    ax2.set_xlabel("client sample-epochs per run")
    ax2.set_ylabel(f"{spec.metric.replace('_', ' ')} (%)\ndotted: paper")  # one line ran into the title
    for n, sel in (fewer.items() if most >= 2 else ()):  # the means over fewer seeds, named at their rung (a
        # marker of their own would hide one method's under the other's where the two are close)
        for v in x[sel & ran]:
            ax2.text(float(v), 0.03, f"{n} of {most} seeds", transform=ax2.get_xaxis_transform(), rotation=90,
                     ha="center", va="bottom", fontsize=7, color="0.35")
    # below the axes too: inside, "best" found no free corner between the paper's dotted lines and the curves
    # (FEDIC smoke: the key sat on FEDIC's peak)
    ax2.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.36), ncol=2)
    used = sorted({d for v in table.get("dataset_used", pd.Series(dtype=object)).dropna() for d in str(v).split(", ")})
    if used:  # every axes names the dataset its runs trained on (a stand-in in reduced profiles)
        where = "run on " + ", ".join(pp.dataset_label(d) for d in used)
        ax1.set_title(f"the gap ({where})", fontsize=9)
        ax2.set_title(f"accuracy ({where})", fontsize=9)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.canvas.draw()
    for ax in (ax1, ax2):  # each key under its x label, wherever the ticks put it (staggered ticks pushed it onto it)
        if ax.get_legend() is not None:
            below = ax.transAxes.inverted().transform((0, ax.xaxis.label.get_window_extent().y0))[1]
            ax.get_legend().set_bbox_to_anchor((0.5, below - 0.03), transform=ax.transAxes)
    return fig
