"""Each method's gap to a baseline against a table's parameter, ours beside the paper's.

A table drawn as accuracy curves (:func:`fedlib.repro.artefacts.figures.plot_paper_vs_ours`) puts a dozen lines
into a band a few points wide where every method learns about as well: FedAvg under FedProx and FedABC, the
paper's dashed lines under ours.  The claims are about gaps (FedABC − FedAvg, FedLC − FedAvg), and a gap removes
the trend every method shares, so the lines part.  Ours is the mean over the seeds both cells ran of the per-seed
differences (a seed gives both the same split and initialization), with their std as the error bar where there
are two or more; the paper's is the difference of its printed means.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from .figure_rules import declare, label_cell, merge_coinciding, std_caption
from .figures import stand_in_labels, suspect_rows
from .not_run import not_run_summary
from .style import method_colors
from .tables import parse_seeds

__all__ = ["gap_frame", "plot_gaps", "gap_caption"]


def _ours_gap(a: pd.Series, b: pd.Series) -> tuple[float, float, int]:
    """``(gap, std, n)`` of cell ``a`` minus cell ``b``: paired over their common seeds where both keep each seed's
    value (``ours_seeds``), else the difference of their means (std NaN, n 1 or 0 where either is missing)."""
    sa, sb = parse_seeds(a.get("ours_seeds")), parse_seeds(b.get("ours_seeds"))  # finite: seeds_text writes no NaN
    common = sorted(set(sa) & set(sb))
    if common:
        d = np.array([sa[s] - sb[s] for s in common])
        return float(d.mean()), (float(d.std(ddof=1)) if len(d) >= 2 else float("nan")), len(d)
    gap = float(a.ours_mean) - float(b.ours_mean) if pd.notna(a.ours_mean) and pd.notna(b.ours_mean) else np.nan
    return gap, float("nan"), int(np.isfinite(gap))


def gap_frame(comparison: pd.DataFrame, *, x: str, baseline: str, panel: str = "column") -> pd.DataFrame:
    """One row per (panel, method other than ``baseline``, x): ``ours_gap``, ``ours_gap_std``, ``n_seeds``
    (the seeds paired) and ``paper_gap`` (none from a paper value flagged as a probable typo).  Only rows that are
    a method's own (no reading such as ``"held/fedavg"``) take part; ``method`` is taken from ``row`` where the
    frame has none."""
    df = comparison.copy()
    if "method" not in df:
        df["method"] = df["row"].astype(str).str.split("/").str[-1]
    if "row" in df:
        df = df[~df.row.astype(str).str.contains("/")]
    df.loc[suspect_rows(df), "paper_mean"] = np.nan  # a probable typo of the paper's makes no gap (its table marks it)
    if baseline not in set(df.method):
        raise ValueError(f"baseline must be a method of the comparison, got {baseline!r} "
                         f"(methods: {sorted(set(df.method))})")
    rows = []
    for (pv, xv), cell in df.groupby([panel, x], sort=False):
        base = cell[cell.method == baseline]
        if base.empty:
            continue
        b = base.iloc[0]
        for _, a in cell[cell.method != baseline].iterrows():
            gap, std, n = _ours_gap(a, b)
            paper = a.paper_mean - b.paper_mean if pd.notna(a.paper_mean) and pd.notna(b.paper_mean) else np.nan
            rows.append({panel: pv, x: xv, "method": a.method, "ours_gap": gap, "ours_gap_std": std,
                         "n_seeds": n, "paper_gap": paper, "dataset": a.get("dataset"),
                         "dataset_used": a.get("dataset_used")})
    out = pd.DataFrame(rows)
    out.attrs["panel"] = panel  # gap_caption names the seeds panel by panel
    return out


def plot_gaps(comparison: pd.DataFrame, *, x: str, baseline: str, panel: str = "column", x_label: str = "",
              x_log: bool = False, title: str = "", ylabel: str = "", panel_labels: dict | None = None, paper=None):
    """One panel per ``panel`` value: each method minus ``baseline`` against ``x``, ours solid with filled
    markers (error bars: the std of the per-seed differences, where two or more seeds pair), the paper's dashed
    with open markers; 0 drawn.  A panel where nothing of ours ran says "paper only"; one run on a stand-in
    names it.  Returns ``(figure, gaps)``: the frame of :func:`gap_frame` it drew."""
    import matplotlib.pyplot as plt

    gaps = gap_frame(comparison, x=x, baseline=baseline, panel=panel)
    gaps.attrs["panel_labels"] = dict(panel_labels or {})
    panels = list(dict.fromkeys(gaps[panel])) if len(gaps) else []
    if not panels:
        raise ValueError(f"no cell of the comparison has {baseline!r} beside another method: no gap to draw")
    label = paper.plain_label if paper is not None else str
    order = list(paper.method_order) if paper is not None else []
    colors = method_colors(order, list(dict.fromkeys(gaps.method)))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.2), squeeze=False)
    handles, names = {}, {}
    for ax, pv in zip(axes[0], panels):
        sub = gaps[gaps[panel] == pv].sort_values(x)
        ours_here = sub.ours_gap.notna().any()
        for m, s in sub.groupby("method", sort=False):
            c = colors.get(m)
            if s.ours_gap.notna().any():
                err = s.ours_gap_std.where(s.n_seeds >= 2)
                bars = ax.errorbar(s[x], s.ours_gap, yerr=None if err.isna().all() else err, color=c, marker="o",
                                   lw=1.6, ms=4, capsize=2)
                handles.setdefault(f"{label(m)} (ours)", bars.lines[0])
                names[bars.lines[0]] = f"{label(m)} (ours)"
                for r in s[s.ours_gap.isna()].itertuples():  # a point of the paper's with none of ours beside it
                    if pd.notna(r.paper_gap):
                        label_cell(ax, getattr(r, x), r.paper_gap, "not run", key=f"{m} @ {getattr(r, x)}", color=c,
                                   va="top")
            if s.paper_gap.notna().any():
                line, = ax.plot(s[x], s.paper_gap, color=c, ls="--", marker="o", mfc="none", lw=1, ms=4)
                handles.setdefault(f"{label(m)} (paper)", line)
                names[line] = f"{label(m)} (paper)"
        ax.axhline(0, color="0.3", lw=0.7, zorder=0.5)
        name = (panel_labels or {}).get(pv, str(pv))
        if not ours_here:  # the paper's gaps alone: the panel says why ours is absent (its cells' notes)
            declare(ax, ours=False, stand_in=[])
            notes = comparison.loc[comparison[panel] == pv, "note"] if "note" in comparison else []
            why = not_run_summary(notes, label=getattr(paper, "dataset_label", None))
            name += " (paper only)\n" + "\n".join(textwrap.wrap(why, 38))
        else:
            labels = stand_in_labels(sub[sub.ours_gap.notna()], paper)
            declare(ax, stand_in=labels, seeds=int(sub.n_seeds.max()) if sub.n_seeds.max() >= 2 else None)
            if labels:
                name += f"\n(run on {', '.join(labels)})"
        ax.set_title(name)
        ax.set_xlabel(x_label or x)
        if x_log:
            ax.set_xscale("log")
        ticks = sorted(float(v) for v in sub[x].dropna().unique())
        ax.set_xticks(ticks, [f"{v:g}" for v in ticks])
        ax.minorticks_off()
    from matplotlib.lines import Line2D

    axes[0][0].set_ylabel(ylabel or f"method − {label(baseline)} (pp)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()  # the final geometry, where lines drawn as one are found: one key entry "A = B" each
    for ax in axes[0]:
        where = ax.get_title().split("\n")[0]
        for text in merge_coinciding(ax, {ln: n for ln, n in names.items() if ln.axes is ax}):
            handles.setdefault(f"{where}: {text}", Line2D([], [], ls="none"))
    if suspect_rows(comparison).any():  # said in the key: a gap the paper's table would give is missing on purpose
        handles["the paper's gaps from a value flagged as a probable typo (†): left out"] = Line2D([], [], ls="none")
    fig.legend(list(handles.values()), list(handles), loc="upper center", bbox_to_anchor=(0.5, 0.0),
               ncol=min(4, len(handles)), fontsize=8)
    return fig, gaps


def gap_caption(gaps: pd.DataFrame, baseline_label: str) -> str:
    """The caption of :func:`plot_gaps`' figure: what each line is, and the seeds its error bars are over (panel by
    panel where the panels' points hold different numbers: each panel declares its own, ``figure_rules``)."""
    n = int(gaps.n_seeds.max()) if len(gaps) and gaps.n_seeds.notna().any() else 1
    some = " where two or more pair; some points over fewer" if len(gaps) and gaps.n_seeds.min() < n else ""
    bars = f"{std_caption(n).rstrip('.')}, of the per-seed differences{some}."
    panel = gaps.attrs.get("panel")
    if n >= 2 and panel in gaps:
        most = gaps[gaps.ours_gap.notna()].groupby(panel, sort=False).n_seeds.max()
        counts = sorted({int(k) for k in most if k >= 2}, reverse=True)
        if len(counts) > 1:
            labels = gaps.attrs.get("panel_labels", {})
            names = {k: ", ".join(str(labels.get(p, p)) for p, v in most.items() if v == k) for k in counts}
            per = "; ".join(f"std over {k} seeds in {names[k]}" for k in counts)
            bars = f"Error bars: {per}, of the per-seed differences{some}."
    return (f"Each method − {baseline_label}. Ours (solid): the mean of the per-seed differences (a seed gives both "
            f"the same split and initialization); the paper (dashed): the difference of its printed means. "
            + (bars if n >= 2 else "One seed: no error bars."))
