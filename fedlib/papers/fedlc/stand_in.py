"""Is the profile's stand-in for CIFAR-10 faithful?  Tables 1-2's effects on the stand-in and on CIFAR-10.

A profile may train Tables 1-2's CIFAR-10 columns on a stand-in (``quick``: FashionMNIST).  The
``stand_in`` study runs a few of those cells twice -- on the stand-in (the very configuration of
its table cell, so that the store shares the run) and on CIFAR-10 itself with the profile's
``overrides`` -- and compares the paper's effects (FedLC − FedAvg, FedLC − FedRS, FedAvg's drop
from IID) on the paper, the stand-in and CIFAR-10.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from . import PAPER
from . import reported as paper
from .experiments import skew_label, skew_params
from ...repro.budget.gate import decide
from ...repro.spec.profiles import Profile

__all__ = ["STAND_IN", "ON_CIFAR10", "stand_in_cells", "stand_in_comparison", "stand_in_findings"]

STAND_IN, ON_CIFAR10 = "stand-in", "CIFAR-10"


def stand_in_cells(profile, opts) -> list[dict]:
    """Is the profile's stand-in for CIFAR-10 faithful?  Each of the experiment's
    ``settings`` (Tables 1-2's CIFAR-10 columns, ``"cifar10_iid"`` for Fig. 1's
    IID reference, FedAvg only) × ``methods`` is run twice: on the stand-in,
    with exactly the configuration of its Table 1/2 (or Fig. 1) cell so that the
    store shares the run, and on CIFAR-10 itself, the same configuration with
    the experiment's ``overrides`` (e.g. a smaller model).  Cells are labelled
    ``trained_on`` = :data:`STAND_IN` / :data:`ON_CIFAR10`.  Empty when the
    profile trains on CIFAR-10 itself (nothing to check)."""
    prof = PAPER.profile(profile)
    settings = prof.experiment("stand_in")
    if not settings or prof.dataset("cifar10") in (None, "cifar10"):
        return []
    overrides = Profile._exp_overrides(settings, "image")
    cells = []
    for key in opts.settings:
        skew = skew_params(key)
        iid = skew["partition"] == "iid"
        source = "fig1" if iid else ("table1" if skew["partition"] == "dirichlet" else "table2")
        for method in ("fedavg",) if iid else opts.methods:
            base = PAPER.base("cifar10", **skew, method=method) if iid else paper.table(source).config(method, key)
            stand_in, _ = decide(prof, base, source)
            # the same cell on CIFAR-10 itself, with the profile's reductions and the experiment's overrides
            on_cifar10, _ = decide(prof, base, source, then={"dataset": "cifar10", **overrides})
            for trained_on, cfg in ((STAND_IN, stand_in), (ON_CIFAR10, on_cifar10)):
                cells.append({"setting": skew_label(key), "column": key, "source": source, "method": method,
                              "trained_on": trained_on, "config": cfg, "note": ""})
    return cells


def stand_in_comparison(grid) -> tuple[pd.DataFrame, pd.DataFrame]:
    """From the grid of :func:`stand_in_cells`: ``(accuracy, effects)``.

    ``accuracy``: one row per (setting, method) with the paper's value (Tables
    1-2; NaN for IID) and ours (mean, std over seeds) on the stand-in and on
    CIFAR-10.  ``effects``: per skewed setting and source, the paper's effects
    measured three ways -- FedLC − FedAvg, FedLC − FedRS (when run) and FedAvg's
    drop from IID (Fig. 1) -- for the paper, the stand-in and CIFAR-10."""
    agg = grid.aggregate(["setting", "column", "source", "method", "trained_on"])
    rows: dict[tuple, dict] = {}
    for r in agg.itertuples(index=False):
        rec = rows.setdefault((r.setting, r.column, r.source, r.method),
                              {"setting": r.setting, "column": r.column, "source": r.source, "method": r.method})
        rec[r.trained_on], rec[r.trained_on + " std"] = r.ours_mean, r.ours_std
    acc = pd.DataFrame(list(rows.values()),
                       columns=["setting", "column", "source", "method", STAND_IN, ON_CIFAR10,
                                STAND_IN + " std", ON_CIFAR10 + " std"])

    reported = {(s, r.column, r.row): r.paper_mean for s in set(acc.source) if s in paper.TABLES
                for r in paper.table(s).frame().itertuples(index=False)}
    acc.insert(4, "paper", [float(reported.get(key, math.nan)) for key in zip(acc.source, acc.column, acc.method)])
    acc["method"] = acc.method.map(lambda m: paper.METHOD_LABELS.get(m, m))

    def value(col, setting, method):
        hit = acc[(acc.setting == setting) & (acc.method == paper.METHOD_LABELS[method])]
        return float(hit[col].iloc[0]) if len(hit) else math.nan

    iid = acc[acc.column.str.endswith("iid")]
    iid_setting = iid.setting.iloc[0] if len(iid) else None
    fig1_drop = paper.FIGURE_CLAIMS["fig1"]["drop_vs_iid"]
    rows = []
    for setting, column, source in acc[["setting", "column", "source"]].drop_duplicates().itertuples(index=False):
        if column.endswith("iid"):
            continue
        effects = [("FedLC − FedAvg", "fedlc", "fedavg"), ("FedLC − FedRS", "fedlc", "fedrs")]
        for effect, a, b in effects:
            rec = {"setting": setting, "effect": effect}
            for col in ("paper", STAND_IN, ON_CIFAR10):
                rec[col] = value(col, setting, a) - value(col, setting, b)
            if not all(math.isnan(rec[c]) for c in (STAND_IN, ON_CIFAR10)):
                rows.append(rec)
        if iid_setting is not None:
            rec = {"setting": setting, "effect": "FedAvg drop from IID (Fig. 1)",
                   "paper": fig1_drop.get(column.split("_", 1)[1], math.nan)}
            for col in (STAND_IN, ON_CIFAR10):
                rec[col] = value(col, iid_setting, "fedavg") - value(col, setting, "fedavg")
            rows.append(rec)
    effects = pd.DataFrame(rows, columns=["setting", "effect", "paper", STAND_IN, ON_CIFAR10])
    if len(effects):
        both = effects[STAND_IN].notna() & effects[ON_CIFAR10].notna()
        effects["same sign"] = np.where(both, np.sign(effects[STAND_IN]) == np.sign(effects[ON_CIFAR10]), None)
    return acc, effects


def stand_in_findings(effects: pd.DataFrame, stand_in_label: str) -> list[str]:
    """Plain-language lines from :func:`stand_in_comparison`'s ``effects``."""
    out = []
    for effect, grp in effects.groupby("effect", sort=False):
        parts = ", ".join(f"{r.setting}: {r[ON_CIFAR10]:+.2f} (stand-in {r[STAND_IN]:+.2f}"
                          + ("" if pd.isna(r.paper) else f", paper {r.paper:+.2f}") + ")"
                          for _, r in grp.iterrows())
        agree = grp["same sign"].dropna()
        out.append(f"stand-in check, {effect} on CIFAR-10 itself (pp): {parts}; the sign agrees with the "
                   f"{stand_in_label} stand-in in {int(agree.astype(bool).sum())} of {len(agree)}")
    return out


def stand_in_summary(grid, opts) -> dict | None:
    """``accuracy`` and ``effects`` (:func:`stand_in_comparison`), the stand-in's name and the datasets
    trained on; None when the profile trains on CIFAR-10 itself (nothing to check)."""
    if not len(grid.runs):
        return None
    acc, effects = stand_in_comparison(grid)
    stand_in = ", ".join(paper.DATASET_LABELS.get(d, d) for d in
                         grid.runs.loc[grid.runs.trained_on == STAND_IN, "dataset_used"].dropna().unique())
    return {"accuracy": acc, "effects": effects, "stand_in": stand_in,
            "datasets": grid.runs.dataset_used.dropna().unique()}


def stand_in_study_findings(summary, opts) -> list[str]:
    return [] if summary is None else stand_in_findings(summary["effects"], summary["stand_in"])
