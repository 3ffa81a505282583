"""FedLC as measured by a third party: FedLC − FedAvg as the FedLC paper claims it, as FedConcat's
Table 1 measures it, as measured here in FedConcat's setting, and as the FedLC companion measured it
in FedLC's own setting (its stand-in check).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from . import reported as paper
from .cells import partition_label

__all__ = ["FEDLC_EQUIVALENTS", "CLAIM", "THIRD_PARTY", "OURS", "COMPANION", "fedlc_gaps", "fedlc_companion_gaps",
           "fedlc_findings"]

#: FedConcat's partitions beside the FedLC paper's: (FedLC table, FedLC column suffix).  #C=2 is set beside
#: Q(α=2) (two shards per client: two labels, FedLC §5.1); #C=3 has no counterpart (α ∈ {2, 4, 6, 8}).
FEDLC_EQUIVALENTS = {"c2": ("table2", "alpha2"), "dir0.1": ("table1", "beta0.1"), "dir0.5": ("table1", "beta0.5")}
CLAIM, THIRD_PARTY, OURS, COMPANION = ("FedLC paper (claim)", "FedConcat Table 1 (third party)",
                                       "ours, FedConcat's setting", "ours, FedLC's setting (FedLC companion)")


def _gap(table, row_a: str, row_b: str, column: str) -> float:
    a, b = table.value(row_a, column), table.value(row_b, column)
    return math.nan if a is None or b is None else a.mean - b.mean


def fedlc_gaps(comparison: pd.DataFrame | None = None) -> pd.DataFrame:
    """FedLC − FedAvg (pp) per Table 1 setting (dataset, partition): as the FedLC paper claims it
    (its Tables 1-2, at the equivalent skew, :data:`FEDLC_EQUIVALENTS`), as FedConcat's Table 1
    measures it, and, given our Table 1 cells' ``comparison`` (``row``, ``column``, ``ours_mean``: a
    grid's :meth:`~fedlib.repro.run.grid.GridResult.aggregate` or :func:`fedlib.repro.artefacts.tables.reproduce_table`'s
    frame), as measured here (NaN where not run).  The FedLC paper's own setting is in ``fedlc_setting``."""
    from ..fedlc import reported as fedlc

    ours = {}
    if comparison is not None:
        pivot = comparison.pivot_table(index="column", columns="row", values="ours_mean")
        for column in pivot.index:
            if {"fedlc", "fedavg"} <= set(pivot.columns):
                ours[column] = float(pivot.loc[column, "fedlc"] - pivot.loc[column, "fedavg"])
    rows = []
    for col in paper.TABLE1.columns:
        kind = col.key.split("_", 1)[1]
        equivalent = FEDLC_EQUIVALENTS.get(kind)
        claim, setting = math.nan, "—"
        if equivalent is not None and col.dataset in {c.dataset for t in fedlc.TABLES.values() for c in t.columns}:
            tid, suffix = equivalent
            key = f"{col.dataset}_{suffix}"
            t = fedlc.table(tid)
            if key in {c.key for c in t.columns}:
                claim, setting = _gap(t, "fedlc", "fedavg", key), f"{t.column(key).label} (FedLC Table {t.number})"
        rows.append({"column": col.key, "dataset": paper.DATASET_LABELS[col.dataset],
                     "partition": partition_label(col.key), "fedlc_setting": setting, CLAIM: claim,
                     THIRD_PARTY: _gap(paper.TABLE1, "fedlc", "fedavg", col.key), OURS: ours.get(col.key, math.nan)})
    return pd.DataFrame(rows)


def fedlc_companion_gaps(folder: str | Path | None) -> pd.DataFrame | None:
    """FedLC − FedAvg as the FedLC companion measured it in FedLC's own setting (its stand-in check,
    ``stand_in_effects.csv`` in its output folder ``folder``): rows (dataset, partition, value) for
    its FMNIST stand-in and for CIFAR-10; None when that output is absent."""
    path = Path(folder) / "stand_in_effects.csv" if folder is not None else None
    if path is None or not path.exists():
        return None
    eff = pd.read_csv(path)
    eff = eff[eff.effect == "FedLC − FedAvg"]
    to_partition = {"Q(α=2)": "#C=2", "D(β=0.1)": "Dir(0.1)", "D(β=0.5)": "Dir(0.5)"}
    rows = []
    for _, r in eff.iterrows():
        if r["setting"] in to_partition:  # its stand-in is FMNIST (the FedLC quick profile), then CIFAR-10 itself
            rows += [{"dataset": "FMNIST", "partition": to_partition[r["setting"]], COMPANION: r["stand-in"]},
                     {"dataset": "CIFAR-10", "partition": to_partition[r["setting"]], COMPANION: r["CIFAR-10"]}]
    return pd.DataFrame(rows)


def fedlc_findings(gaps: pd.DataFrame) -> list[str]:
    """Plain-language lines from :func:`fedlc_gaps` (with the companion's column when present)."""
    out = []
    sources = [s for s in (CLAIM, THIRD_PARTY, OURS, COMPANION) if s in gaps and gaps[s].notna().any()]
    for ds, g in gaps.groupby("dataset", sort=False):
        parts = []
        for s in sources:
            v = g[s].dropna()
            if len(v):
                parts.append(f"{s}: {v.mean():+.1f} pp on average over {len(v)} setting{'s' * (len(v) != 1)} "
                             f"({v.min():+.1f} to {v.max():+.1f})")
        if parts:
            out.append(f"FedLC − FedAvg on {ds}: " + "; ".join(parts))
    both = gaps.dropna(subset=[CLAIM, THIRD_PARTY])
    if len(both):
        out.append(f"where both exist ({len(both)} settings), the FedLC paper claims {both[CLAIM].mean():+.1f} pp and "
                   f"FedConcat's Table 1 measures {both[THIRD_PARTY].mean():+.1f} pp: the third party finds "
                   f"{'no' if both[THIRD_PARTY].mean() <= 0 else 'a smaller'} gain")
    for s in (OURS, COMPANION):
        if s in gaps and gaps[s].notna().any():
            v = gaps[s].dropna()
            out.append(f"{s}: FedLC beats FedAvg in {int((v > 0).sum())} of {len(v)} settings measured, by "
                       f"{v.mean():+.1f} pp on average")
    return out


# ------------------------------------------------------------------ the study (fedlib.papers.fedconcat.studies)
def _cells(profile, opts) -> list[dict]:
    from .cells import table1_cells

    return table1_cells(profile, opts.columns)


def _companion_folder(opts) -> Path | None:
    """The FedLC companion's output folder for this profile: beside ours (``opts.figures_root``) first,
    then the repository's committed one; None when neither holds its stand-in check."""
    from ...repro.artefacts.provenance import repo_root

    roots = ([Path(opts.figures_root)] if opts.figures_root else []) + [repo_root() / "figures"]
    candidates = [root / "fedlc" / opts.profile.name for root in roots]
    return next((p for p in candidates if (p / "stand_in_effects.csv").exists()), None)


def _summary(grid, opts) -> dict:
    """``gaps`` (one row per Table 1 setting, one column per source) and ``source`` (where the FedLC
    companion's column comes from, or why it is missing)."""
    gaps = fedlc_gaps(grid.aggregate(["row", "column"]))
    folder = _companion_folder(opts)
    companion = fedlc_companion_gaps(folder)
    if companion is None:
        return {"gaps": gaps, "source": "the FedLC companion's stand-in check is not in this figures folder (run "
                                        "notebooks/fedlc/06 under this profile)"}
    return {"gaps": gaps.merge(companion, on=["dataset", "partition"], how="left"),
            "source": f"the FedLC companion's stand-in check ({folder.relative_to(folder.parents[2])}/"
                      "stand_in_effects.csv)"}


def _findings(summary: dict, opts) -> list[str]:
    return fedlc_findings(summary["gaps"])
