"""FedABC at its own scale: the ``paper`` profile's cost model and the headline's budget ladder.

:data:`PAPER_ESTIMATE` is the arithmetic (unit costs measured here, ``benchmarks/unit_costs.py``);
:data:`COST` is what the ``paper`` profile gates its cells with (:mod:`fedlib.repro.costs`);
:data:`LADDER` is FedABC − FedAvg at MNIST Dir(0.3), Table 1, from quick's 40 rounds to the
paper's 100 (:mod:`fedlib.repro.ladder`).
"""

from __future__ import annotations

from ...repro.costs import CostModel, UnitCost
from ...repro.ladder import LadderSpec

__all__ = ["COST", "LADDER", "PAPER_ESTIMATE", "CPU_RUN_LIMIT_S"]

#: A run fits this CPU when its estimate is at most this (one core): every MNIST cell does.
CPU_RUN_LIMIT_S = 1800.0

PAPER_ESTIMATE = """
Unit costs (``python benchmarks/unit_costs.py --only fedabc_mnist_mlp --only fedabc_cifar10_convnet``,
2026-11-24, load average ≈ 10 on 2 cores, CPU seconds of one single-threaded process):

* MNIST, MLP, FedAvg Dir(0.3), the paper cell (100 clients, 10 per round, E = 5, the full
  60,000 samples: 30,000 client sample-epochs per round): 2 rounds 22.5 s, 6 rounds 28.2 s →
  1.42 s per round (4.7e-5 s per sample-epoch) + 19.7 s fixed (loading, the personalized
  evaluation).  100 rounds ≈ 19.7 + 142 = **162 s per run** (the issue measured ≈ 160 s).
* CIFAR-10, ConvNet, FedAvg Dir(0.3), 5,000 samples, E = 1 (500 sample-epochs per round):
  see CONVNET below; the paper cell trains 0.1 · 50,000 · 5 = 25,000 sample-epochs per round.

The paper profile on this 2-core CPU (a run fits when it is estimated at ≤ 30 CPU-min):

* Tables 1-2, MNIST (the same runs): 9 methods × 4 Dir(β) × 3 seeds = 108 runs × 162 s × 1.1
  (the methods differ by up to ≈ 10 %) ≈ 19,200 s = **5.3 CPU-h** (2.7 h on 2 workers).
* the sensitivity study (MNIST Dir(0.3), 100 rounds, 80 % of the data): 4 values × 4
  hyperparameters + the center, FedABC_wi and FedAvg ≈ 16 settings × 3 seeds × ≈ 150 s ≈ 2.0 CPU-h;
  Fig. 2 (one client, no federation) seconds.
* Tables 1-2 CIFAR-10 (108 runs) and Fig. 5 (FedABC_wi on CIFAR-10, 12 runs): not run on this
  CPU, ≈ 3.4 CPU-h each (200 rounds × 25,000 sample-epochs × the ConvNet's unit cost): **≈ 400
  CPU-h**, a GPU job; GPU time not measured (no GPU lent).

Total of the paper profile here: ≈ 7.3 CPU-h for what fits (≈ 3.7 h on 2 workers), ≈ 410 CPU-h
for all of it.  The budget ladder (:data:`LADDER`) under quick: 4 rungs × 2 runs of 40 / 54 /
74 / 100 rounds ≈ (77 + 96 + 125 + 162) s × 2 × 1.1 ≈ 17 CPU-min, ≈ 9 min on 2 workers.
"""

_MLP = UnitCost(s_per_sample_epoch=4.73e-5, fixed_s=19.7,
                measured="fedabc_mnist_mlp: 2/6 rounds 22.5/28.2 s, 2026-11-24, load 10")
# CONVNET is replaced by the measurement when benchmarks/unit_costs.py has run it (see PAPER_ESTIMATE).
_CONVNET = UnitCost(s_per_sample_epoch=2.0e-3, fixed_s=60.0,
                    measured="≈ 2 ms per sample-epoch on one core (the quick profile's earlier probe)")

COST = CostModel(units={"mlp": _MLP, "convnet": _CONVNET}, cpu_run_limit_s=CPU_RUN_LIMIT_S)

LADDER = LadderSpec(paper="fedabc", table="table1", column="mnist_dir0.3", method="fedabc", baseline="fedavg",
                    metric="personalized_accuracy", quick_budget_minutes=15,
                    notes=("quick's 40 rounds to the paper's 100, MNIST with the MLP; E = 5 and the full training "
                           "set at every rung (quick keeps them)",))
