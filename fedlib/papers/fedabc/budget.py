"""FedABC at its own scale: the ``paper`` profile's cost model and the headline's budget ladder.

:data:`PAPER_ESTIMATE` is the arithmetic (unit costs measured here, ``benchmarks/unit_costs.py``);
:data:`COST` is what the ``paper`` profile gates its cells with (:mod:`fedlib.repro.costs`);
:data:`LADDER` is FedABC − FedAvg at MNIST Dir(0.3), Table 1, from quick's 20 rounds to the
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
* CIFAR-10, ConvNet, FedAvg Dir(0.3), 20,000 samples, E = 1 (2,000 sample-epochs per round): 1
  round 40.5 s, 5 rounds 49.1 s → **1.07 ms per sample-epoch** (load 4; 0.99 ms at 5,000 samples);
  the 38 s fixed part holds loading (≈ 17 s) and the personalized evaluation (every client's E
  epochs: 20,000 sample-epochs ≈ 21 s).  The paper cell trains 0.1 · 50,000 · 5 = 25,000
  sample-epochs per round and its personalized evaluation 250,000: 17 + 267 + 200 × 26.7 s ≈
  5,600 s = **1.6 CPU-h per run**.

The paper profile on this 2-core CPU (a run fits when it is estimated at ≤ 30 CPU-min):

* Tables 1-2, MNIST (the same runs): 9 methods × 4 Dir(β) × 3 seeds = 108 runs × 162 s × 1.1
  (the methods differ by up to ≈ 10 %) ≈ 19,200 s = **5.3 CPU-h** (2.7 h on 2 workers).
  Measured end to end (commit c7c288a, empty store, 2 workers, quiet cores):
  ``python -m fedlib.repro.regenerate --profile paper --paper fedabc --only 03 --only 04`` took
  **123.2 min**, ≈ 137 s of CPU a run (committed in ``figures/fedabc/paper/``).
* the sensitivity study (MNIST Dir(0.3), 100 rounds, 80 % of the data): 4 values × 4
  hyperparameters + the center, FedABC_wi and FedAvg ≈ 16 settings × 3 seeds × ≈ 150 s ≈ 2.0 CPU-h;
  measured (``--only 06`` at 17520d9, empty store, 2 workers, partly beside the test suite): **50.5 min**;
  Fig. 2 (one client, no federation) seconds.
* Tables 1-2 CIFAR-10 (108 runs) and Fig. 5 (FedABC_wi on CIFAR-10, 12 runs): not run on this
  CPU, ≈ 1.6 CPU-h each: **≈ 190 CPU-h**, a GPU job; GPU time not measured (no GPU lent).

Total of the paper profile here (``fedlib.repro.plan.plan('fedabc')``): 180 runs fit (Tables 1-2's 108
MNIST runs, the sensitivity study's 48 and the budget ladder's 24), ≈ 7.4 CPU-h, ≈ 3.7 h on the profile's
2 workers; 120 runs need a GPU (≈ 190 CPU-h).  The budget ladder (:data:`LADDER`) under quick: 4 rungs × 2 runs of 20 / 34 /
58 / 100 rounds ≈ (48 + 68 + 102 + 162) s × 2 ≈ 13 CPU-min, ≈ 6 min on 2 workers (within its
8-minute budget, so the paper's own 100 rounds are reached in quick).  Under paper the same rungs with
the 3 seeds: 24 runs, est. 0.6 CPU-h, 19 min on 2 workers; measured (``--only 07`` at 17520d9, empty
store, nice, 2 workers): **16.7 min**.
"""

_MLP = UnitCost(s_per_sample_epoch=4.73e-5, fixed_s=19.7,
                measured="fedabc_mnist_mlp: 2/6 rounds 22.5/28.2 s, 2026-11-24, load 10")
# fixed: loading (≈ 17 s) + the personalized evaluation of the paper cell (250,000 sample-epochs)
_CONVNET = UnitCost(s_per_sample_epoch=1.07e-3, fixed_s=17.0 + 250_000 * 1.07e-3,
                    measured="fedabc_cifar10_convnet: 20,000 samples, E = 1, 1/5 rounds 40.5/49.1 s, 2026-11-24, load 4")

COST = CostModel(units={"mlp": _MLP, "convnet": _CONVNET}, cpu_run_limit_s=CPU_RUN_LIMIT_S)

LADDER = LadderSpec(paper="fedabc", table="table1", column="mnist_dir0.3", method="fedabc", baseline="fedavg",
                    metric="personalized_accuracy", quick_budget_minutes=8,
                    notes=("quick's 20 rounds to the paper's 100, MNIST with the MLP; E = 5 and the full training "
                           "set at every rung (quick keeps them)",))
