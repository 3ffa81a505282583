"""How a notebook shows a reproduced paper table: a styled DataFrame, never printed markdown.

:func:`comparison_view` turns a comparison (what ``ctx.table`` returns; one row per cell with the
paper's value, ours and Δ) into one row per method (per row group and method where the table has groups, e.g. ``E=5 · FedAvg``) and, per
column run here, the paper's value, ours
and Δ = ours − paper, Δ shaded (blue above the paper, red below).  A column run on a stand-in dataset
says so in its heading; the columns not run here are named in the caption; where nothing ran, the
cells and the reason they did not run.
"""

from __future__ import annotations

from typing import Callable

import pandas as pd

__all__ = ["comparison_view"]


def comparison_view(comparison: pd.DataFrame, dataset_label: Callable[[str], str] = str, *,
                    metric: str = "Test accuracy (%)", shade: float = 20.0):
    """A comparison as a styled DataFrame (module docstring); ``dataset_label`` names a stand-in
    dataset in a column's heading; ``shade``: the |Δ| (pp) of the darkest colour."""
    comp = comparison.copy()
    groups = comp["row_group"].fillna("").astype(str) if "row_group" in comp else pd.Series("", index=comp.index)
    comp["row_label"] = [f"{g} · {lab}" if g else lab for g, lab in zip(groups, comp.row_label)]  # E=1 · FedAvg
    used = comp["dataset_used"] if "dataset_used" in comp else comp["dataset"]
    heading = {c: lab + (f" (run on {dataset_label(u)})" if isinstance(u, str) and u != d else "")
               for c, lab, d, u in zip(comp.column, comp.column_label, comp.dataset, used)}
    ran = comp.groupby("column", sort=False).ours_mean.apply(lambda s: s.notna().any())
    if not ran.any():  # nothing ran here: which cells, and why
        notes = comp[["row_label", "column_label", "paper_mean", "note"]].rename(
            columns={"row_label": "method", "column_label": "column", "paper_mean": "paper"})
        return notes.style.format(precision=2, na_rep="—").hide(axis="index").set_caption("Not run here")
    shown = comp[comp.column.map(ran)]
    frame = shown.pivot(index="row_label", columns="column", values=["paper_mean", "ours_mean", "delta"])
    frame = frame.rename(columns={"paper_mean": "paper", "ours_mean": "ours", "delta": "Δ"}).swaplevel(axis=1)
    order = [(heading[c], v) for c in dict.fromkeys(shown.column) for v in ("paper", "ours", "Δ")]
    frame = frame.rename(columns=heading, level=0).reindex(columns=pd.MultiIndex.from_tuples(order))
    frame = frame.reindex(list(dict.fromkeys(comp.row_label))).rename_axis(index=None)
    not_run = [heading[c] for c, r in ran.items() if not r]
    deltas = [c for c in frame.columns if c[1] == "Δ"]
    return (frame.style.format("{:.2f}", na_rep="—")
            .background_gradient(cmap="RdBu", subset=deltas, vmin=-shade, vmax=shade)
            .set_caption(f"{metric}: the paper, ours, Δ = ours − paper" +
                         (f"; not run here: {', '.join(not_run)}" if not_run else "")))
