"""Tables 1 and 2 under a profile: their cells, FedABC's setting, and its gains per column.

Tables 1 and 2 are the same runs read through two metrics (Eq. 7 and Eq. 8); the studies (Fig. 2,
Fig. 4, Fig. 5, the sensitivity study: :mod:`.studies`) hand Table 1's cells
(``TABLE1.config(method, column_key(dataset, β))``) to the gate (:func:`fedlib.repro.budget.gate.decide`),
their own values as its ``then``, so the store shares their runs.

* :func:`column_key` -- a Table 1/2 column's key; :func:`fedabc_setting` -- the four reconstructed
  hyperparameters a profile uses.
* :func:`gain_table` -- FedABC − FedAvg and FedABC − FedRoD per column.  The claims of "Results and
  analysis" are declared in :mod:`.claims` and decided by :mod:`fedlib.repro.artefacts.claims`.
"""

from __future__ import annotations


import pandas as pd

from ...repro.budget.gate import data_view, decide
from ...repro.spec.profiles import Profile
from . import PAPER
from . import reported as paper

__all__ = ["HYPERPARAMETERS", "column_key", "fedabc_setting", "gain_table"]

#: FedABC's four hyperparameters (blank in the paper): parameter -> symbol.
HYPERPARAMETERS = {"fedabc_tau_pos": "τ_pos", "fedabc_tau_neg_present": "τ_neg^P",
                   "fedabc_tau_neg_absent": "τ_neg^N", "fedabc_gamma": "γ"}


def column_key(dataset: str, beta: float) -> str:
    """``("mnist", 0.3)`` -> ``"mnist_dir0.3"``, the key of a Table 1/2 column."""
    return f"{dataset}_dir{float(beta)}"


def fedabc_setting(profile: "Profile | str | None", dataset: str = "mnist") -> dict[str, float]:
    """The four hyperparameters of the profile's FedABC cells on ``dataset`` (its Dir(0.1) column)."""
    from ...config import Config

    cfg, _ = decide(PAPER.profile(profile), paper.TABLE1.config("fedabc", column_key(dataset, paper.BETAS[0])), "table1")
    if cfg is None:
        return {}
    full = Config.from_dict(data_view(cfg, 0))
    return {k: float(getattr(full, k)) for k in HYPERPARAMETERS}


def gain_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """FedABC − FedAvg (the headline) and FedABC − FedRoD per column, paper vs ours
    (:func:`fedlib.repro.verdict.compare.gains`), one row per (column, baseline)."""
    from ...repro.verdict.compare import gains

    frames = []
    for base in ("fedavg", "fedrod"):
        g = gains(comparison, "fedabc", base)
        if len(g):
            frames.append(g.assign(difference=f"FedABC − {paper.METHOD_LABELS[base]}"))
    columns = ["difference", "column_label", "trained_on", "paper_gain", "ours_gain", "spread", "spread_source",
               "verdict", "face_value"]
    if not frames:
        return pd.DataFrame(columns=columns)
    out = pd.concat(frames, ignore_index=True)
    cols = comparison.drop_duplicates("column_label").set_index("column_label")
    out["trained_on"] = out.column_label.map(cols["dataset_used"] if "dataset_used" in cols else cols["dataset"])
    return out[[c for c in columns if c in out]]


