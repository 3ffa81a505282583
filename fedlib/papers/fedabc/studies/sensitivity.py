"""FedABC's four hyperparameters (blank in the paper, §Configuration) on held-out local training data.

Not in the paper: FedABC on one dataset and Dir(β) with a fraction of every client's training set held
out (``validation_fraction``), one hyperparameter at a time around ``center`` over ``grid``, plus the
profile's own setting, FedABC_wi and FedAvg as references.  The test sets of Tables 1-2 are never used.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ....algorithms.fedabc import FEDABC_WI
from ....repro.budget.gate import decide
from ..experiments import HYPERPARAMETERS, column_key, fedabc_setting
from ..reported import TABLE1

__all__ = ["OFF", "describe", "choice_frame"]

#: Values that switch one of FedABC's two imbalance strategies off (FedABC_wi's values).
OFF = {"fedabc_tau_pos": 1.0, "fedabc_tau_neg_present": 0.0, "fedabc_tau_neg_absent": 0.0, "fedabc_gamma": 0.0}


def describe(setting: dict) -> str:
    """``{"fedabc_gamma": 2.0, ...}`` -> ``"(γ 2, ...)"``."""
    return "(" + ", ".join(f"{HYPERPARAMETERS[k]} {float(v):g}" for k, v in setting.items()) + ")"


def build_cells(profile, opts) -> list[dict]:
    """The center, each value of ``opts.grid`` with the others at the center, the profile's setting
    (when it is not the center), FedABC_wi and FedAvg, all with ``validation_fraction`` held out.
    Labels: factor (a hyperparameter, ``"setting"`` or ``"reference"``), value, label."""
    center = dict(opts.center)
    held = {"validation_fraction": float(opts.validation_fraction)}
    cells = []

    def add(factor, value, label, **params):
        method = params.pop("method", "fedabc")
        cfg, note = decide(profile, TABLE1.config(method, column_key(opts.dataset, opts.beta)), "sensitivity",
                           then={**held, **params})
        cells.append({"factor": factor, "value": value, "label": label, "config": cfg, "note": note})

    add("setting", math.nan, "center " + describe(center), **center)
    for name, values in opts.grid.items():
        for v in values:
            if float(v) != float(center.get(name, math.nan)):
                add(name, float(v), f"{HYPERPARAMETERS[name]} = {v:g}", **{**center, name: float(v)})
    chosen = fedabc_setting(profile, opts.dataset)
    if chosen and chosen != {k: float(v) for k, v in center.items()}:
        add("setting", math.nan, "profile's setting " + describe(chosen), **chosen)
    add("reference", math.nan, "FedABC_wi (one-vs-all BCE)", **FEDABC_WI)
    add("reference", math.nan, "FedAvg (softmax + CE)", method="fedavg")
    return cells


def build_summary(grid, opts) -> dict:
    """``cells``: per cell the validation personalized accuracy (%) and its difference to the center;
    ``choice``: ``best``, the best value of each hyperparameter one factor at a time (the center's
    value unless another beats it); ``chosen``, the same among the values that keep both of FedABC's
    strategies on (γ > 0, τ_pos < 1, τ_neg > 0: the paper's FedABC uses under-sampling and hard-sample
    mining; the values that switch one off are shown, not chosen); ``profile``, the profile's setting,
    and whether it is the one ``chosen`` (``agree``); ``center`` and ``center_accuracy``."""
    center = {k: float(v) for k, v in opts.center.items()}
    agg = grid.aggregate(["factor", "value", "label"], value="personalized_accuracy")
    frame = agg[["factor", "value", "label", "ours_mean", "ours_std", "n_seeds", "ours_seeds"]].rename(
        columns={"ours_mean": "validation_accuracy", "ours_std": "validation_std"})
    base = frame.loc[frame.label.str.startswith("center"), "validation_accuracy"]
    base = float(base.iloc[0]) if len(base) else math.nan
    frame["delta_vs_center"] = frame.validation_accuracy - base

    def best(strategies_on: bool) -> dict:
        out = {}
        for name in HYPERPARAMETERS:
            value, acc = center.get(name), base
            for r in frame[frame.factor == name].dropna(subset=["validation_accuracy"]).itertuples(index=False):
                if strategies_on and float(r.value) == OFF[name]:
                    continue
                if r.validation_accuracy > acc + 1e-12:
                    value, acc = float(r.value), r.validation_accuracy
            if value is not None:
                out[name] = value
        return out

    chosen, profile_setting = best(True), fedabc_setting(opts.profile, opts.dataset)
    return {"cells": frame, "choice": {"best": best(False), "chosen": chosen, "profile": profile_setting,
                                       "agree": bool(chosen) and chosen == profile_setting, "center": center,
                                       "center_accuracy": base}}


def choice_frame(choice: dict) -> pd.DataFrame:
    """The summary's ``choice`` as a table: one row per hyperparameter; the center, the best value one
    factor at a time, the best with both strategies on, and the profile's setting."""
    columns = {"center": "center", "best": "best (one at a time)", "chosen": "best, both strategies on",
               "profile": "profile's setting"}
    return pd.DataFrame({label: {HYPERPARAMETERS[k]: v for k, v in choice.get(key, {}).items()}
                         for key, label in columns.items()}).reindex(list(HYPERPARAMETERS.values()))


def build_findings(summary: dict, opts) -> list[str]:
    """The range of each hyperparameter's validation accuracy, the references', and the choice."""
    frame, choice = summary["cells"], summary["choice"]
    out = []
    center = choice.get("center_accuracy", math.nan)
    spread = {k: float(np.nanmax(np.r_[v, center]) - np.nanmin(np.r_[v, center]))
              for k, v in frame.groupby("factor").validation_accuracy if k in HYPERPARAMETERS}
    if spread:
        out.append("sensitivity: range of validation PFL accuracy over each hyperparameter's values (others at the "
                   "center): " + ", ".join(f"{HYPERPARAMETERS[k]} {v:.2f} pp" for k, v in spread.items()))
    refs = {r.label: r.validation_accuracy for r in frame.itertuples(index=False)
            if r.factor in ("setting", "reference")}
    if refs:
        out.append("sensitivity: validation PFL accuracy (%): " + ", ".join(f"{k} {v:.2f}" for k, v in refs.items()))
    if choice.get("chosen"):
        out.append("sensitivity: one-factor-at-a-time best " + describe(choice["best"]) + "; with both "
                   "strategies on " + describe(choice["chosen"]) + "; the profile uses " + describe(choice["profile"])
                   + (" (the same)" if choice["agree"] else " (different)"))
    return out
