"""Fig. 4: the baselines trained on FedConcat's final architecture (K encoders side by side and one
linear layer), beside the same baselines on one cluster model and FedConcat itself.

The paper does not say for how many rounds; :func:`fig4_rounds` gives both readings ("rounds":
as many as Table 1's baselines; "communication": FedConcat's communication in rounds of the bigger
model), and :func:`communication_curves` plots every run against the parameters a client has sent
and received, so both can be compared where the runs reach them.
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from . import reported as paper
from .analysis import budget_of, rounds_for_model
from .cells import model_params
from ...repro.budget.gate import decide

__all__ = ["ONE_MODEL", "FINAL", "fig4_rounds", "communication_curves"]

#: The architectures of Fig. 4's bars.
ONE_MODEL, FINAL = "one cluster model (Table 1)", "FedConcat's final architecture"


def fig4_rounds(config: dict, model: str, budget: str) -> int:
    """Rounds of a baseline trained on ``model`` (FedConcat's final architecture) in Fig. 4:
    ``"rounds"``: as many as Table 1's baselines (R); ``"communication"``: FedConcat's
    communication per client in rounds of ``model`` (R·M/M_model, at least 1)."""
    b = budget_of(config)
    if budget == "rounds":
        return b.rounds
    if budget != "communication":
        raise ValueError(f"budget must be 'rounds' or 'communication', got {budget!r}")
    return max(1, int(round(rounds_for_model(b, model_params(config), model_params({**config, "model": model})))))


def communication_curves(grid, cells: Sequence[dict]) -> pd.DataFrame:
    """Fig. 4 as curves: each run's test accuracy against the parameters one client has sent and
    received so far (millions), from the grid of Fig. 4's ``cells``: a baseline round costs 2·M of its
    model; FedConcat's whole run costs its budget (one point, its final accuracy)."""
    configs = {(c["method"], c["architecture"]): c["config"] for c in cells if c.get("config")}
    rows = []
    hist = grid.histories
    if len(hist):
        hist = hist[hist.method != "fedconcat"]
        for (method, arch), g in hist.groupby(["method", "architecture"], sort=False):
            m = model_params(configs[(method, arch)])
            for rnd, acc in g.groupby("round").test_accuracy.mean().items():
                rows.append({"method": method, "architecture": arch, "round": int(rnd),
                             "communication_M": 2.0 * m * rnd / 1e6, "accuracy": float(acc)})
    runs = grid.ok()
    fc = runs[runs.method == "fedconcat"]
    if len(fc):
        cfg = configs[("fedconcat", "FedConcat")]
        rows.append({"method": "fedconcat", "architecture": "FedConcat", "round": math.nan,
                     "communication_M": 2.0 * model_params(cfg) * budget_of(cfg).total / 1e6,
                     "accuracy": float(fc.accuracy.mean())})
    return pd.DataFrame(rows, columns=["method", "architecture", "round", "communication_M", "accuracy"])


# ------------------------------------------------------------------ the study (fedlib.papers.fedconcat.studies)
def _cells(profile, opts) -> list[dict]:
    """Each baseline on one cluster model (Table 1's run) and on the final architecture (``opts.model``)
    for ``opts.budget``, and FedConcat (Table 1's run), in ``opts.column``."""
    cells = []
    for method in opts.methods:
        table1 = paper.TABLE1.config(method, opts.column)
        one, _ = decide(profile, table1, "table1")
        big = None if one is None else decide(profile, table1, "table1", then={
            "model": opts.model, "rounds": fig4_rounds(one, opts.model, opts.budget)})[0]
        cells.append({"method": method, "architecture": ONE_MODEL, "config": one})
        cells.append({"method": method, "architecture": FINAL, "config": big})
    cells.append({"method": "fedconcat", "architecture": "FedConcat",
                  "config": decide(profile, paper.TABLE1.config("fedconcat", opts.column), "table1")[0]})
    return [{**c, "column": opts.column, "note": "" if c["config"] else "not run in this profile"} for c in cells]


def _summary(grid, opts) -> dict:
    """``final`` (final accuracy per method and architecture, with its rounds) and ``curves``
    (:func:`communication_curves`)."""
    cells = _cells(opts.profile, opts)
    final = grid.aggregate(["method", "architecture"])
    rounds = {(c["method"], c["architecture"]): (c["config"] or {}).get("rounds") for c in cells}
    final["rounds"] = [rounds.get((m, a)) for m, a in zip(final.method, final.architecture)]
    final["label"] = final.method.map(paper.METHOD_LABELS)
    return {"final": final, "curves": communication_curves(grid, cells)}


def _findings(summary: dict, opts) -> list[str]:
    final = summary["final"]
    fc = final[final.method == "fedconcat"].ours_mean
    base = final[final.method != "fedconcat"]
    out = []
    for m in dict.fromkeys(base.method):
        d = base[base.method == m].set_index("architecture").ours_mean
        if d.notna().all() and len(fc) and pd.notna(fc.iloc[0]):
            r = int(base[(base.method == m) & (base.architecture == FINAL)].rounds.iloc[0])
            out.append(f"Fig. 4: {paper.METHOD_LABELS[m]} reaches {d.iloc[1]:.2f}% on FedConcat's final "
                       f"architecture ({r} round{'s' * (r != 1)}) and {d.iloc[0]:.2f}% on one cluster model; "
                       f"FedConcat {fc.iloc[0]:.2f}%")
    return out
