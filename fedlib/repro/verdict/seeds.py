"""Seed-to-seed spread of a table's headline comparison, from its runs (pure: it trains nothing).

A verdict is decided only against a measured spread (:mod:`fedlib.repro.verdict.spread`).  Where a cell ran
with one seed, the spread its verdict needs is the seed-to-seed spread of the table's headline comparison
(the paper's method and baseline in every column the profile runs): :func:`seed_spread` reads it from runs
with several seeds.  ``python -m fedlib.repro.measure_spread`` trains those runs and records the result.
"""

from __future__ import annotations

import pandas as pd

from .compare import method_of

__all__ = ["seed_spread"]


def seed_spread(runs: pd.DataFrame, headline: tuple[str, str], value: str = "value") -> dict | None:
    """The seed-to-seed spread of a table's headline comparison from its runs (one row per cell and seed:
    ``row``, ``column``, ``seed``, ``value``; rows whose method, :func:`fedlib.repro.verdict.compare.method_of`, is
    one of ``headline``).  Returns {"seeds", "cells" (with ≥ 2 seeds), "median_std", "max_std" (sample std
    over seeds of a cell), "gains", "max_gain_std" (sample std over seeds of method − baseline per column)}
    or None when no cell has two seeds."""
    df = runs.dropna(subset=[value]).copy()
    df["_method"] = df["row"].map(method_of)
    df = df[df._method.isin(headline)]
    per_cell = df.groupby(["row", "column"])[value].agg(["std", "count"])
    per_cell = per_cell[per_cell["count"] >= 2]
    if per_cell.empty:
        return None
    wide = df.pivot_table(index=["column", "seed"], columns="_method", values=value, aggfunc="mean")
    gain_std = []
    if set(headline) <= set(wide.columns):
        g = (wide[headline[0]] - wide[headline[1]]).dropna()
        by_col = g.groupby(level="column").agg(["std", "count"])
        gain_std = by_col.loc[by_col["count"] >= 2, "std"].tolist()
    return {"seeds": sorted(int(s) for s in df.seed.unique()), "cells": int(len(per_cell)),
            "median_std": float(per_cell["std"].median()), "max_std": float(per_cell["std"].max()),
            "gains": len(gain_std), "max_gain_std": float(max(gain_std)) if gain_std else None}
