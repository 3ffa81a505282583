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

PAPER_ESTIMATE = """
Unit costs (``python benchmarks/unit_costs.py --only fedic_cifar10lt_resnet8 --only fedic_cifar10lt_resnet8_fedic``,
2026-11-24, load average ≈ 6 on 2 cores, CPU seconds of one single-threaded process; E = 1 so that a round
is cheap):

* CIFAR-10-LT (IF = 100, D_aux taken out first: 12,156 training samples), ResNet-8, FedAvg, 8 of 20
  clients a round (4,862 sample-epochs at E = 1): 1 round 112.3 s, 2 rounds 166.7 s → **11.2 ms per
  client sample-epoch** + 57.8 s fixed (loading, the long tail, one evaluation of the 10,000 test images).
  The paper's cell (200 rounds, E = 10: 48,624 sample-epochs a round) ≈ 200 × 48,624 × 11.2 ms ≈
  **30 CPU-h per FedAvg run**.
* FEDIC's server steps (FT, calibration and distillation, 100 Adam steps each, with ResNet-8 and the 8
  clients' models as teachers): the 1- and 2-round timing was stopped unfinished after
  41 CPU-min (py-spy: in the distillation's teacher forward passes), so t(1) + t(2) = 2 · 58 + 3 · 54 + 3 · S >
  2,470 s gives **S > 700 s a round**, a lower bound: a FEDIC run at the paper's scale > 30 CPU-h + 200 · 700 s
  ≈ **69 CPU-h**.  FedDF's and FedBE's distillation are priced from it with the quick profile's measured
  ratios (10 and 20 s against FEDIC's 14 s a round): lower bounds too.

The paper profile on this 2-core CPU (a run fits when it is estimated at ≤ 30 CPU-min;
``fedlib.repro.plan.plan('fedic')``): no run fits (Table 1's cheapest cell, FedAvg, is
  ≈ 26 CPU-h); 140 runs need a GPU, ≈ 7,100 CPU-h here (a lower bound), 7 more have no measured cost
  (ResNet-18 on ImageNet-LT, absent here).  GPU time: not measured (no GPU lent).  CIFAR-100 and
ImageNet-LT are absent here.

The budget ladder (:data:`LADDER`) under quick, one seed: rung 0 is quick's 8 rounds of E = 2 on CIFAR-10-LT
with ResNet-8 (FedAvg ≈ 58 + 8 × 9,725 × 11.2 ms ≈ 930 s; FEDIC that plus 8 × 700 s of server steps),
≈ 124 CPU-min for the two runs, more than the ladder's 60 min on 2 workers: under quick no rung runs (each is
shown with its estimate: 124, 396, 1,536 and 5,966 CPU-min), and the finding is "undecided"; a GPU
(``--device cuda``, paper profile) runs every rung.
"""

_RESNET8 = UnitCost(s_per_sample_epoch=1.12e-2, fixed_s=57.8,
                    measured="fedic_cifar10lt_resnet8: E = 1, 1/2 rounds 112.3/166.7 s, 2026-11-24, load 6")
# FEDIC's server steps: the 1- and 2-round timing of FEDIC (E = 1) was stopped unfinished after 41 CPU-min,
# so t(1) + t(2) = 2 · 58 + 3 · 54 + 3 · S > 2,470 s gives S > 700 s a round: a lower bound.  FedDF's and
# FedBE's distillation are priced from it with the quick profile's measured ratios (10 and 20 s against
# FEDIC's 14 s a round on FashionMNIST-LT, QUICK_ESTIMATE): lower bounds too.
_SERVER_S = 700.0
_UNITS = {"resnet8": _RESNET8,
          "resnet8+fedic": UnitCost(s_per_sample_epoch=_RESNET8.s_per_sample_epoch, fixed_s=_RESNET8.fixed_s,
                                    s_per_round=_SERVER_S,
                                    measured="fedic_cifar10lt_resnet8_fedic: > 41 CPU-min for 1 + 2 rounds (a lower bound)"),
          "resnet8+feddf": UnitCost(s_per_sample_epoch=_RESNET8.s_per_sample_epoch, fixed_s=_RESNET8.fixed_s,
                                    s_per_round=_SERVER_S * 10 / 14, measured="FEDIC's lower bound × 10/14 (quick's ratio)"),
          "resnet8+fedbe": UnitCost(s_per_sample_epoch=_RESNET8.s_per_sample_epoch, fixed_s=_RESNET8.fixed_s,
                                    s_per_round=_SERVER_S * 20 / 14, measured="FEDIC's lower bound × 20/14 (quick's ratio)")}

COST = CostModel(units=_UNITS, cpu_run_limit_s=CPU_RUN_LIMIT_S)

LADDER = LadderSpec(paper="fedic", table="table1", column="cifar10_if100", method="fedic", baseline="fedavg",
                    quick_budget_minutes=60,
                    notes=("CIFAR-10-LT (IF = 100) with ResNet-8 at every rung (quick's tables run on FashionMNIST-LT "
                           "with a 2-layer CNN); the long-tailed training set and FEDIC's server steps are the "
                           "paper's at every rung",))
