"""FedConcat at its own scale: the ``paper`` profile's cost model and the headline's budget ladder.

:data:`PAPER_ESTIMATE` is the arithmetic (unit costs measured here, ``benchmarks/unit_costs.py``);
:data:`COST` is what the ``paper`` profile gates its cells with (:mod:`fedlib.repro.costs`): FedConcat's
stage 2 (T_e rounds of every client's E epochs) and stage 3 (T_c rounds on the frozen encoders) are
priced each by its own unit cost, a baseline by the rounds "same communication cost" gives it
(:func:`.communication.with_budget`); :data:`LADDER` is FedConcat − FedAvg at FMNIST #C=2, Table 1,
from quick's scale to the paper's (:mod:`fedlib.repro.ladder`).
"""

from __future__ import annotations

from ...repro.costs import CostModel, UnitCost
from ...repro.ladder import LadderSpec
from .communication import with_budget

__all__ = ["COST", "LADDER", "PAPER_ESTIMATE", "CPU_RUN_LIMIT_S"]

#: A run fits this CPU when its estimate is at most this (one core).
CPU_RUN_LIMIT_S = 1800.0

PAPER_ESTIMATE = """(being measured)"""


def stages(cfg: dict) -> list[tuple[int, str]]:
    """FedConcat's two priced stages, or a baseline's rounds under "same communication cost"."""
    cfg = {k: v for k, v in cfg.items() if k != "device"}
    if str(cfg.get("method", "fedavg")).startswith("fedconcat"):
        return [(int(cfg.get("encoder_rounds", 50)), ""), (int(cfg.get("classifier_rounds", 1000)), "stage3")]
    return [(int(with_budget(cfg)["rounds"]), "")]


def rebudget(cfg: dict) -> dict:
    """A rescaled cell's baseline rounds, recomputed from its T_e and T_c (as the profile does)."""
    if str(cfg.get("method", "fedavg")).startswith("fedconcat"):
        return cfg
    return with_budget({k: v for k, v in cfg.items() if k != "rounds"})


_UNITS: dict = {}

COST = CostModel(units=_UNITS, cpu_run_limit_s=CPU_RUN_LIMIT_S, stages=stages)

LADDER = LadderSpec(paper="fedconcat", table="table1", column="fmnist_c2", method="fedconcat", baseline="fedavg",
                    scale_keys=("encoder_rounds", "classifier_rounds", "local_epochs", "max_train_samples"),
                    quick_budget_minutes=45, adjust=rebudget,
                    notes=("FMNIST with the simple CNN at the paper's batch 64 at every rung (quick uses batch 16 on "
                           "its 15,000 samples); the baselines' rounds follow from T_e and T_c at each rung",))
