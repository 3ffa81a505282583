"""FedLC's label-skew settings (§5.1): Q(α) and D(β), and what they do to federated training.

* Fig. 1 (§1) -- FedAvg's accuracy under IID, Q(α) and D(β) and its drop from IID;
* Fig. 4 (§5.1) -- samples per class and client of Q(α=4) and D(β=0.5) on CIFAR-10, 5 clients;
* Fig. 5 (§5.4) -- accuracy per round of FedLC and FedRS across skew settings.

The studies' build functions (:mod:`.studies` declares them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import PAPER
from . import reported as paper
from .experiments import setting_params, skew_label
from ...repro.budget.gate import decide

__all__ = ["FIG4_SETTINGS", "fig4_counts"]


# ----------------------------------------------------------------------------- Fig. 1
def fig1_cells(profile, opts) -> list[dict]:
    """FedAvg on CIFAR-10 under IID (``iid``), each Q(α) of ``alphas`` and each D(β) of ``betas``."""
    keys = (["cifar10_iid"] if opts.iid else []) \
        + [f"cifar10_alpha{a}" for a in opts.alphas] + [f"cifar10_beta{b}" for b in opts.betas]
    cells = []
    for i, key in enumerate(keys):
        cfg, note = decide(profile, PAPER.base(**setting_params(key), method="fedavg"), "fig1")
        kind = "IID" if key.endswith("iid") else ("Q(α)" if "alpha" in key else "D(β)")
        cells.append({"setting": skew_label(key), "kind": kind, "order": i, "config": cfg, "note": note})
    return cells


def fig1_summary(grid, opts) -> dict[str, pd.DataFrame]:
    """``accuracy``: FedAvg's accuracy per setting (the paper's order) and its drop from IID;
    ``claims``: the two drops the paper quotes in §1, against ours."""
    fig1 = grid.aggregate(["setting", "kind", "order"]).sort_values("order").reset_index(drop=True)
    iid = fig1.loc[fig1.kind == "IID", "ours_mean"]
    fig1["drop_vs_iid"] = (iid.iloc[0] - fig1.ours_mean) if len(iid) else np.nan
    claims = paper.FIGURE_CLAIMS["fig1"]["drop_vs_iid"]
    ours_drop = {r.setting: r.drop_vs_iid for r in fig1.itertuples()}
    table = pd.DataFrame([
        {"claim": "IID − Q(α=2)", "paper_pp": claims["alpha2"], "ours_pp": ours_drop.get("Q(α=2)", np.nan)},
        {"claim": "IID − D(β=0.2)", "paper_pp": claims["beta0.2"], "ours_pp": ours_drop.get("D(β=0.2)", np.nan)},
    ])
    table["delta"] = table.ours_pp - table.paper_pp
    return {"accuracy": fig1, "claims": table}


def fig1_findings(summary, opts) -> list[str]:
    return [f"FedAvg loses {r.ours_pp:.1f} pp vs IID at {r.claim.split('− ')[1]} (paper: {r.paper_pp:.2f})"
            for r in summary["claims"].itertuples() if pd.notna(r.ours_pp)]


# ----------------------------------------------------------------------------- Fig. 4
#: Fig. 4's two partitions (CIFAR-10, 5 clients).
FIG4_SETTINGS = {"Q(α=4)": {"partition": "shards", "partition_alpha": 4},
                 "D(β=0.5)": {"partition": "dirichlet", "partition_beta": 0.5}}


def fig4_counts(seed: int) -> dict[str, np.ndarray]:
    """Samples per class and client of :data:`FIG4_SETTINGS` on the full CIFAR-10 training set
    (``fedlib.partition``, the code every run uses); empty where CIFAR-10 is absent."""
    from ...config import Config
    from ...data import DatasetNotFoundError
    from ...simulation import prepare

    counts = {}
    try:
        for name, params in FIG4_SETTINGS.items():
            counts[name] = prepare(Config(dataset="cifar10", num_clients=5, seed=seed, **params)).class_counts
    except DatasetNotFoundError as err:
        print(f"not run: {err.reason}")
    return counts


def fig4_summary(grid, opts) -> dict:
    """``counts``: {setting: clients × classes}; ``table``: the same, one row per client with its total."""
    counts = fig4_counts(opts.seed)
    rows = [{"setting": name, "client": j, **{f"class {c}": int(v) for c, v in enumerate(row)}, "total": int(row.sum())}
            for name, m in counts.items() for j, row in enumerate(m)]
    return {"counts": counts, "table": pd.DataFrame(rows)}


# ----------------------------------------------------------------------------- Fig. 5
def fig5_cells(profile, opts) -> list[dict]:
    """FedRS and FedLC in each skew setting of ``settings`` with ``num_clients`` clients (Fig. 5)."""
    cells = []
    for key in opts.settings:
        for m in ("fedrs", "fedlc"):
            cfg, note = decide(profile, PAPER.base(**setting_params(key), method=m, num_clients=opts.num_clients),
                               "fig5")
            cells.append({"setting": skew_label(key), "method": m, "config": cfg, "note": note})
    return cells


def fig5_summary(grid, opts) -> dict:
    """``histories`` (accuracy per round), ``final`` (setting × method) and ``runs``."""
    final = grid.aggregate(["setting", "method"]).pivot(index="setting", columns="method", values="ours_mean") \
        if len(grid.runs) else pd.DataFrame()
    return {"histories": grid.histories, "final": final,
            "runs": grid.runs[["setting", "method", "seed", "status", "accuracy", "note"]]}


def fig5_findings(summary, opts) -> list[str]:
    final = summary["final"]
    return [f"Fig. 5 substitute: FedLC ends {r.fedlc - r.fedrs:+.2f} pp vs FedRS at {s}"
            for s, r in final.iterrows() if {"fedlc", "fedrs"} <= set(final.columns)]
