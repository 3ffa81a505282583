"""FEDIC at its own scale: the ``paper`` profile's cost model and the headline's budget ladder.

:data:`PAPER_ESTIMATE` is the arithmetic (unit costs measured here, ``benchmarks/unit_costs.py``);
:data:`COST` is what the ``paper`` profile gates its cells with (:mod:`fedlib.repro.budget.costs`);
:data:`LADDER` is FEDIC − FedAvg at CIFAR-10-LT IF = 100, Table 1, on CIFAR-10-LT with ResNet-8, from
the quick profile's rounds and local epochs toward the paper's, and on a CPU, where quick's scale does not
fit a run, from a floor of 1 round of E = 1 (:mod:`fedlib.repro.budget.ladder`).
"""

from __future__ import annotations

from ...repro.budget.costs import CostModel, UnitCost
from ...repro.budget.ladder import LadderSpec

__all__ = ["COST", "LADDER", "PAPER_ESTIMATE", "CPU_RUN_LIMIT_S"]

#: A run fits this CPU when its estimate is at most this (one core).
CPU_RUN_LIMIT_S = 1800.0

PAPER_ESTIMATE = """
Unit costs (CPU seconds of one single-threaded process; E = 1 so that a round is cheap):

* CIFAR-10-LT (IF = 100, D_aux taken out first: 12,156 training samples), ResNet-8, FedAvg, 8 of 20
  clients a round (4,862 sample-epochs at E = 1; ``python benchmarks/unit_costs.py --only
  fedic_cifar10lt_resnet8``, 2026-11-24, load average ≈ 6): 1 round 112.3 s, 2 rounds 166.7 s → **11.2 ms
  per client sample-epoch** + 57.8 s fixed (loading, the long tail, one evaluation of the 10,000 test images).
  The paper's cell (200 rounds, E = 10: 48,624 sample-epochs a round) ≈ 200 × 48,624 × 11.2 ms ≈
  **30 CPU-h per FedAvg run**.
* FEDIC's server steps (FT, calibration and distillation, with ResNet-8 and the 8 clients' models as
  teachers; 2026-11-25, load average ≈ 1): one round at E = 1 with 10 and with 30 steps of each stage,
  488.7 and 637.7 s (``python benchmarks/unit_costs.py --only fedic_cifar10lt_resnet8_server_steps`` runs the
  pair; these two evaluated the teacher too, which the difference cancels)
  → **7.45 s per step of the three, 745 s a round** at the paper's 100 (the distillation's
  teacher forward passes, 9 models × 128 D_ulb images a step, are most of it).  The teacher's evaluation on
  the test set at the last round (``fedic_teacher_eval = 'final'``) adds ≈ 304 s once (the same run without
  it: 184.3 s).  A FEDIC run at the paper's scale ≈ 30 CPU-h + 200 × 745 s ≈ **72 CPU-h**.  FedDF's and
  FedBE's distillation are priced from it with the quick profile's measured ratios (10 and 20 s against
  FEDIC's 14 s a round).

The paper profile on this 2-core CPU (a table's run fits when it is estimated at ≤ 30 CPU-min;
``fedlib.repro.budget.plan.plan('fedic')``): no table run fits (Table 1's cheapest cell, cRT at CIFAR-100-LT IF = 100, is
≈ 26 CPU-h); 140 runs need a GPU, ≈ 7,223 CPU-h here, 7 more have no measured cost (ResNet-18 on
ImageNet-LT, absent here).  GPU time: not measured.  CIFAR-100 and ImageNet-LT are absent here.

The budget ladder (:data:`LADDER`): under quick no rung runs (quick's 8 rounds of E = 2 on CIFAR-10-LT with
ResNet-8 is ≈ 124 CPU-min for its two runs, beyond the ladder's 60 min on 2 workers, and quick's two-hour
total leaves no room).  Under the paper profile on a CPU, a run of quick's scale does not fit either (FEDIC:
58 + 8 × (745 + 2 × 54.5) ≈ 6,900 s), so the ladder climbs from a floor of 1 round of E = 1 with runs of at
most 60 CPU-min: rungs (rounds, E) = (1, 1), (2, 1), (4, 2), the paper's (200, 10) not run; one seed (the
paper's single run); FEDIC ≈ 858, 1,657 and 3,474 s, FedAvg 112, 167 and 494 s: ≈ 113 CPU-min, ≈ 1 h on 2
workers.  The CPU reaches 0.4 % of the paper's client sample-epochs; a GPU (``--device cuda``) runs every
rung from quick's scale.  With one seed the finding's tolerance is 6.4 pp: twice the largest std of FEDIC
− FedAvg over seeds 0-2 measured at quick (3.20 pp, ``python -m fedlib.repro.measure_spread fedic --profile quick``).
"""

_RESNET8 = UnitCost(s_per_sample_epoch=1.12e-2, fixed_s=57.8,
                    measured="fedic_cifar10lt_resnet8: E = 1, 1/2 rounds 112.3/166.7 s, 2026-11-24, load 6")
# FEDIC's server steps, 2026-11-25 (one round at E = 1 with 10 and with 30 steps of each of FT, calibration and
# distillation: 488.7 and 637.7 CPU s): 7.45 s per step of the three, so 745 s a round at the paper's 100.
# FedDF's and FedBE's distillation are priced from it with the quick profile's measured ratios (10 and 20 s
# against FEDIC's 14 s a round on FashionMNIST-LT, QUICK_ESTIMATE).
_SERVER_S = 745.0
_UNITS = {"resnet8": _RESNET8,
          "resnet8+fedic": UnitCost(s_per_sample_epoch=_RESNET8.s_per_sample_epoch, fixed_s=_RESNET8.fixed_s,
                                    s_per_round=_SERVER_S,
                                    measured="FEDIC, 1 round at E = 1 with 10 / 30 server steps: 488.7 / 637.7 s, "
                                             "2026-11-25, load ≈ 1"),
          "resnet8+feddf": UnitCost(s_per_sample_epoch=_RESNET8.s_per_sample_epoch, fixed_s=_RESNET8.fixed_s,
                                    s_per_round=_SERVER_S * 10 / 14,
                                    measured="FEDIC's server step × 10/14 (quick's ratio)"),
          "resnet8+fedbe": UnitCost(s_per_sample_epoch=_RESNET8.s_per_sample_epoch, fixed_s=_RESNET8.fixed_s,
                                    s_per_round=_SERVER_S * 20 / 14,
                                    measured="FEDIC's server step × 20/14 (quick's ratio)")}

COST = CostModel(units=_UNITS, cpu_run_limit_s=CPU_RUN_LIMIT_S)



def _student_only(cfg: dict) -> dict:
    """A ladder run of FEDIC does not evaluate its teacher on the test set (≈ 300 CPU s a run on this CPU):
    the ladder compares the students, the global models Table 1 reports."""
    return {**cfg, "fedic_teacher_eval": "never"} if cfg.get("method") == "fedic" else cfg


LADDER = LadderSpec(paper="fedic", table="table1", column="cifar10_if100", method="fedic", baseline="fedavg",
                    quick_budget_minutes=60, cpu_floor={"rounds": 1, "local_epochs": 1}, cpu_run_limit_s=3600.0,
                    tolerance_pp=6.4, adjust=_student_only,
                    notes=("CIFAR-10-LT (IF = 100) with ResNet-8 at every rung (quick's tables run on FashionMNIST-LT "
                           "with a 2-layer CNN); the long-tailed training set and FEDIC's server steps are the "
                           "paper's at every rung",
                           "FEDIC's teacher is not evaluated on the test set (fedic_teacher_eval = 'never'): the "
                           "ladder compares the students, which Table 1 reports; the teacher's evaluation costs "
                           "≈ 5 CPU-min a run",
                           "on a CPU, runs of at most 60 CPU-min (LadderSpec.cpu_run_limit_s; the tables' limit "
                           "is 30): FEDIC's server steps alone cost 745 CPU s a round",
                           "a rung whose FedAvg is at chance (within 1 pp of 10 %) is left out of the trend: its "
                           "gap measures nothing; on a CPU FedAvg is at 10.00 % at rungs (2, 1) and (4, 2) and "
                           "13.34 % at (1, 1), and no affordable rung lets it learn (FEDIC ≈ 745 CPU s a round)"))
