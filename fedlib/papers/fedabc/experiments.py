"""Tables 1 and 2 under a profile: their cells, FedABC's setting, and the claims of the text.

Tables 1 and 2 are the same runs read through two metrics (Eq. 7 and Eq. 8); the studies (Fig. 2,
Fig. 4, Fig. 5, the sensitivity study: :mod:`.studies`) reuse Table 1's cells through
:func:`cell_config`, so the store shares their runs.

* :func:`cell_config` -- a Table 1/2 cell (method × dataset × Dir(β)) under a profile, through
  :func:`fedlib.repro.run.gate.decide`; :func:`fedabc_setting` -- the four reconstructed
  hyperparameters a profile uses.
* :func:`text_claims`, :func:`claim_findings` -- the claims of "Results and analysis", counted on
  the paper's numbers and on ours; :func:`gain_table` -- FedABC − FedAvg and FedABC − FedRoD per column.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ...repro.run.gate import decide
from ...repro.spec.profiles import Profile
from . import PAPER
from . import reported as paper

__all__ = ["HYPERPARAMETERS", "column_key", "cell_config", "fedabc_setting", "text_claims", "claim_findings",
           "gain_table"]

#: FedABC's four hyperparameters (blank in the paper): parameter -> symbol.
HYPERPARAMETERS = {"fedabc_tau_pos": "τ_pos", "fedabc_tau_neg_present": "τ_neg^P",
                   "fedabc_tau_neg_absent": "τ_neg^N", "fedabc_gamma": "γ"}


def column_key(dataset: str, beta: float) -> str:
    """``("mnist", 0.3)`` -> ``"mnist_dir0.3"``, the key of a Table 1/2 column."""
    return f"{dataset}_dir{float(beta)}"


def cell_config(profile: "Profile | str | None", method: str, dataset: str, beta: float, experiment: str,
                **extra: Any) -> tuple[dict | None, str]:
    """The configuration of Table 1's (= Table 2's) cell ``method`` × ``dataset`` Dir(β) under
    ``profile``, with ``experiment``'s overrides and then ``extra`` on top (``extra`` wins: a
    study's own values); ``(None, why)`` when it is not run.  An experiment with the table's
    overrides gets exactly the table's cell, so the store shares the run."""
    prof = PAPER.profile(profile)
    cfg, note = decide(prof, paper.TABLE1.config(method, column_key(dataset, beta)), experiment)
    return (None, note) if cfg is None else ({**cfg, **extra}, note)


def fedabc_setting(profile: "Profile | str | None", dataset: str = "mnist") -> dict[str, float]:
    """The four hyperparameters of the profile's FedABC cells on ``dataset`` (its Dir(0.1) column)."""
    from ...config import Config

    cfg, _ = cell_config(profile, "fedabc", dataset, paper.BETAS[0], "table1")
    if cfg is None:
        return {}
    full = Config.from_dict({**cfg, "seed": 0})
    return {k: float(getattr(full, k)) for k in HYPERPARAMETERS}


# ----------------------------------------------------------------------------- §Results and analysis
_GENERIC = ("fedavg", "fedprox", "scaffold")
_PFL = ("lg_fedavg", "fedper", "fedrep", "fedrod")
_BASELINES = ("local",) + _GENERIC + _PFL


def _wide(comparison: pd.DataFrame, value: str) -> pd.DataFrame:
    """rows: methods, columns: table columns; the paper's suspect cells are NaN for ``paper_mean``."""
    df = comparison.copy()
    if value == "paper_mean" and "suspect" in df:
        df.loc[df.suspect.astype(str) != "", "paper_mean"] = math.nan
    return df.pivot(index="row", columns="column", values=value)


def _holds(wide: pd.DataFrame, test) -> tuple[int, int]:
    """In how many columns (with every value needed present) ``test(column values)`` holds."""
    held = total = 0
    for col in wide.columns:
        v = wide[col]
        out = test(v)
        if out is None:
            continue
        total += 1
        held += bool(out)
    return held, total


def _best_is(v: pd.Series, method: str, among) -> bool | None:
    sub = v.reindex(list(among)).dropna()
    if method not in sub or len(sub) < 2:
        return None
    return bool(sub[method] >= sub.max() - 1e-9)


def _at_least(v: pd.Series, method: str, others) -> bool | None:
    sub = v.reindex(list(others)).dropna()
    if pd.isna(v.get(method)) or sub.empty:
        return None
    return bool(v[method] >= sub.max() - 1e-9)


def _decreasing(wide: pd.DataFrame) -> tuple[int, int]:
    """Series (method × dataset) whose values fall with every step to a larger β."""
    held = total = 0
    for method, row in wide.iterrows():
        for ds in paper.DATASETS:
            vals = [row.get(column_key(ds, b)) for b in paper.BETAS]
            if any(v is None or pd.isna(v) for v in vals):
                continue
            total += 1
            held += all(a >= b - 1e-9 for a, b in zip(vals, vals[1:]))
    return held, total


def text_claims(comparison: pd.DataFrame, table_id: str) -> pd.DataFrame:
    """The claims of "Results and analysis" about one table, each counted on the paper's
    printed numbers (suspect cells left out) and on ours: ``claim``, ``paper`` and ``ours``
    as "k of n" (columns, or method × dataset series, where it holds), and the counts."""
    if table_id == "table1":
        claims = [
            ("FedABC ≥ every baseline (per column)", lambda v: _at_least(v, "fedabc", _BASELINES)),
            ("FedRoD is the best baseline (per column)", lambda v: _best_is(v, "fedrod", _BASELINES)),
            ("a generic method's PM (FedAvg/FedProx/Scaffold) ≥ LG-FedAvg, FedPer, FedRep (per column)",
             lambda v: None if v.reindex(list(_GENERIC)).dropna().empty else
             _at_least(pd.concat([v, pd.Series({"generic": v.reindex(list(_GENERIC)).max()})]), "generic",
                       ("lg_fedavg", "fedper", "fedrep"))),
            ("accuracy falls as β grows (per method and dataset)", None),
        ]
    elif table_id == "table2":
        claims = [
            ("Scaffold is the best method (per column)", lambda v: _best_is(v, "scaffold", paper.METHODS)),
            ("FedABC ≥ the PFL baselines LG-FedAvg, FedPer, FedRep, FedRoD (per column)",
             lambda v: _at_least(v, "fedabc", _PFL)),
            ("FedABC − FedRoD > 0 (per column)",
             lambda v: None if pd.isna(v.get("fedabc")) or pd.isna(v.get("fedrod")) else
             bool(v["fedabc"] > v["fedrod"])),
        ]
    else:
        raise KeyError(f"no claims for {table_id!r}")
    comparison = comparison[comparison.row.isin(paper.METHODS)]  # the paper's rows (not the readings beside them)
    wide = {"paper": _wide(comparison, "paper_mean"), "ours": _wide(comparison, "ours_mean")}
    recs = []
    for text, test in claims:
        rec = {"claim": text}
        for side, w in wide.items():
            held, total = _decreasing(w) if test is None else _holds(w, test)
            rec[side] = f"{held} of {total}" if total else "—"
            rec[f"{side}_held"], rec[f"{side}_total"] = held, total
        recs.append(rec)
    return pd.DataFrame(recs)


def claim_findings(claims: pd.DataFrame, table_id: str) -> list[str]:
    """Plain-language lines from :func:`text_claims`."""
    label = f"Table {table_id[-1]}"
    return [f"{label}: '{r.claim}' holds in {r.ours} here (paper: {r.paper})" for r in claims.itertuples(index=False)]


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


