"""How a notebook shows a reproduced paper table: a styled DataFrame, never printed markdown.

:func:`reader_view` shows any other frame of the reproduction layer (gains, winners, a claims ledger, a
study's summary) as a reader reads it: columns named in words, codes as their verdicts, ids as their
labels, rows where nothing of ours ran dropped (and counted in the caption), text never cut.

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

__all__ = ["comparison_view", "reader_view", "GLOSSARY"]

#: Column names of the reproduction layer's frames, in words.
GLOSSARY = {
    "row_label": "method", "column_label": "column", "row_group": "group", "paper_mean": "paper", "ours_mean": "ours",
    "paper_std": "paper std", "ours_std": "our std", "n_seeds": "seeds", "delta": "Δ = ours − paper (pp)",
    "paper_gain": "paper's gain (pp)", "ours_gain": "our gain (pp)", "spread": "our spread (pp)",
    "spread_source": "spread measured as", "same_sign": "same sign", "face_value": "at face value",
    "stand_in": "on a stand-in", "trained_on": "trained on", "dataset_used": "trained on", "rows_compared": "methods",
    "paper_best": "best in the paper", "ours_best": "best in ours", "paper_tied": "tied in the paper",
    "agree": "same best", "kendall_tau": "Kendall τ (rank agreement)", "within_std": "within the paper's std",
    "status": "cell", "ours_seeds": "each seed", "budget_share": "budget share", "dataset_used_label": "trained on",
}
#: Ids a reader has the label of beside them: dropped when the label is there.
_IDS = {"column": "column_label", "row": "row_label", "table": None, "dataset": "dataset_used", "std_over": None,
        "suspect": None}
#: Columns that hold ours: a row with none of them is a row not run here.
_OURS = ("ours_mean", "ours_gain", "ours_best", "ours", "value", "accuracy")


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


def reader_view(frame: pd.DataFrame, *, precision: int = 2, caption: str = "",
                dataset_label: Callable[[str], str] | None = None):
    """``frame`` as a reader reads it (module docstring): a styled DataFrame, index hidden; ``dataset_label``
    names the datasets a column of ids holds (``trained_on``, ``dataset_used``)."""
    from ..verdict.compare import STATUS, VERDICT

    out = frame.copy()
    ours = [c for c in _OURS if c in out]
    dropped = 0
    if ours:
        ran = out[ours].notna().any(axis=1)
        dropped, out = int((~ran).sum()), out[ran]
    out = out.drop(columns=[c for c, label in _IDS.items() if c in out and (label is None or label in out)])
    if dataset_label is not None:
        for col in ("trained_on", "dataset_used"):
            if col in out:
                out[col] = [dataset_label(v) if isinstance(v, str) else v for v in out[col]]
    for col, words in (("status", STATUS), ("verdict", VERDICT), ("face_value", VERDICT)):
        if col in out:
            out[col] = [words.get(v, v) if isinstance(v, str) else v for v in out[col]]
    out = out.rename(columns=GLOSSARY)
    out = out.loc[:, ~out.columns.duplicated()]
    note = f"{dropped} row{'s' if dropped != 1 else ''} not run here left out" if dropped else ""
    if out.empty:
        out = pd.DataFrame({"": ["nothing of ours ran here (see the cells' notes)"]})
    text = "; ".join(t for t in (caption, note) if t)
    styled = out.style.format(precision=precision, na_rep="—").hide(axis="index")
    return styled.set_caption(text) if text else styled
