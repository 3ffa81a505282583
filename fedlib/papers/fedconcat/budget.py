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


_FMNIST = UnitCost(s_per_sample_epoch=1.20e-4, fixed_s=0.95,
                   measured="fedconcat_fmnist_cnn: 6,000 samples, E = 1, 1/3 rounds 1.67/3.11 s, 2026-11-24, load 7")
_CIFAR10 = UnitCost(s_per_sample_epoch=1.79e-4, fixed_s=2.41,
                    measured="fedconcat_cifar10_cnn: 6,000 samples, E = 1, 1/3 rounds 3.49/5.64 s, 2026-11-24, load 6")
# stage 3 trains a linear classifier on features computed once: 40 more rounds cost less than the timing's
# resolution (1 / 41 rounds: 6.53 / 6.09 s), so ≤ 0.5 s / (40 · 6,000) per sample-epoch; the fixed part is
# the clustering, K encoders' setup and the feature pass
_STAGE3 = UnitCost(s_per_sample_epoch=2e-6, fixed_s=6.5,
                   measured="fedconcat_fmnist_stage3: T_e = 1, T_c 1/41 6.53/6.09 s, 2026-11-24, load 8 (an upper bound)")
_UNITS = {"simple_cnn@fmnist": _FMNIST, "simple_cnn@cifar10": _CIFAR10, "simple_cnn@svhn": _CIFAR10,
          "simple_cnn:stage3": _STAGE3}

COST = CostModel(units=_UNITS, cpu_run_limit_s=CPU_RUN_LIMIT_S, stages=stages)

LADDER = LadderSpec(paper="fedconcat", table="table1", column="fmnist_c2", method="fedconcat", baseline="fedavg",
                    scale_keys=("encoder_rounds", "classifier_rounds", "local_epochs", "max_train_samples"),
                    quick_budget_minutes=30, adjust=rebudget,
                    notes=("FMNIST with the simple CNN at the paper's batch 64 at every rung (quick uses batch 16 on "
                           "its 15,000 samples); the baselines' rounds follow from T_e and T_c at each rung",))
