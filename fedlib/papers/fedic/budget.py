"""FEDIC at its own scale: the ``paper`` profile's cost model and the headline's budget ladder.

:data:`PAPER_ESTIMATE` is the arithmetic (unit costs measured here, ``benchmarks/unit_costs.py``);
:data:`COST` is what the ``paper`` profile gates its cells with (:mod:`fedlib.repro.costs`);
:data:`LADDER` is FEDIC − FedAvg at CIFAR-10-LT IF = 100, Table 1, on CIFAR-10-LT with ResNet-8, from
the quick profile's rounds and local epochs toward the paper's (:mod:`fedlib.repro.ladder`).
"""

from __future__ import annotations

from ...repro.costs import CostModel, UnitCost
from ...repro.ladder import LadderSpec

__all__ = ["COST", "LADDER", "PAPER_ESTIMATE", "CPU_RUN_LIMIT_S"]

#: A run fits this CPU when its estimate is at most this (one core).
CPU_RUN_LIMIT_S = 1800.0

PAPER_ESTIMATE = """(being measured)"""

_RESNET8 = UnitCost(s_per_sample_epoch=1.12e-2, fixed_s=57.8,
                    measured="fedic_cifar10lt_resnet8: E = 1, 1/2 rounds 112.3/166.7 s, 2026-11-24, load 6")
_UNITS = {"resnet8": _RESNET8}

COST = CostModel(units=_UNITS, cpu_run_limit_s=CPU_RUN_LIMIT_S)

LADDER = LadderSpec(paper="fedic", table="table1", column="cifar10_if100", method="fedic", baseline="fedavg",
                    quick_budget_minutes=60,
                    notes=("CIFAR-10-LT (IF = 100) with ResNet-8 at every rung (quick's tables run on FashionMNIST-LT "
                           "with a 2-layer CNN); the long-tailed training set and FEDIC's server steps are the "
                           "paper's at every rung",))
