"""FedLC at its own scale: the ``paper`` profile's cost model and the headline's budget ladder.

:data:`PAPER_ESTIMATE` is the arithmetic (unit costs measured here, ``benchmarks/unit_costs.py``);
:data:`COST` is what the ``paper`` profile gates its cells with (:mod:`fedlib.repro.budget.costs`);
:data:`LADDER` is FedLC − FedAvg at CIFAR-10 D(β = 0.5), Table 1, on CIFAR-10 with the Table 9 CNN,
from the quick profile's scale toward the paper's (:mod:`fedlib.repro.budget.ladder`).
"""

from __future__ import annotations

from ...repro.budget.costs import CostModel, UnitCost
from ...repro.budget.ladder import LadderSpec

__all__ = ["COST", "LADDER", "PAPER_ESTIMATE", "CPU_RUN_LIMIT_S"]

#: A run fits this CPU when its estimate is at most this (one core).
CPU_RUN_LIMIT_S = 1800.0

PAPER_ESTIMATE = """
Unit costs (``python benchmarks/unit_costs.py --only fedlc_synthetic_logreg --only fedlc_cifar10_cnn``,
2026-11-24, load average 7-10 on 2 cores, CPU seconds of one single-threaded process):

* Synthetic(1, 1), logistic regression, 100 clients, FedAvg (Table 4's cell): 5 rounds 0.30 s,
  25 rounds 1.02 s → 0.036 s per round + 0.12 s fixed: **300 rounds ≈ 11 s per run**.
* CIFAR-10, Table 9 CNN, FedAvg D(0.5), 4,000 samples (20 clients, E = 1): 1 round 40.4 s,
  3 rounds 70.4 s → 15.0 s per round = **3.75 ms per client sample-epoch**, + 25 s fixed
  (loading, one evaluation of the 10,000 test images).  The paper's cell (all 50,000 samples,
  400 rounds) ≈ 400 × 50,000 × 3.75 ms ≈ **20.8 CPU-h per run**.

The paper profile on this 2-core CPU (a run fits when it is estimated at ≤ 30 CPU-min):

* Table 4's Synthetic columns: 7 methods × 3 settings × 5 seeds = 105 runs × ≈ 11 s (× 1.2 for the
  methods with extra state) ≈ **25 CPU-min**: run.  FEMNIST is absent here and its cost not measured.
* every CIFAR-10 cell (Tables 1, 2, 5, 6, 7; Figs. 1, 2, 5-7; the calibration study): ≈ 21 CPU-h a
  run at E = 1 (Table 5's E = 5 and 10: 5× and 10×): not run, "needs a GPU" (the plan of
  ``fedlib.repro.budget.plan.plan('fedlc')`` sums them; GPU time not measured, no GPU lent).  SVHN,
  CIFAR-100 and the ImageNet subset are absent here.

``fedlib.repro.budget.plan.plan('fedlc')`` on this CPU: Table 4's 105 Synthetic runs and the budget ladder's
three lower rungs fit.  The ladder runs 3 of the table's 5 seeds on a CPU (``LADDER.cpu_seeds``): its
rungs (15 / 25 / 41 rounds on 6,000 / 8,322 / 11,542 samples) cost ≈ 6 / 13 / 30 CPU-min a run, so
2 methods × 3 seeds ≈ 36 + 81 + 180 ≈ **297 CPU-min**, ≈ 2.5 h on the profile's 2 workers by the estimate
(with all 5 seeds it would be ≈ 8.2 CPU-h).  Measured with 2 seeds (``--profile paper --paper fedlc --only 09``
at 17520d9, empty store, nice, 2 workers, quiet cores): the runs took 4.4 / 10.4 / 23.9 min each (0.73-0.80 of
the estimate), **77.6 min** of wall time for the 12.  With 3 seeds (at ec5bdac, the same way, beside the
test suite for 14 min): 4.5 / 10.1 / 23.3-31.7 min a run, **123.0 min** for the 18; seeds 0 and 1 identical to
those at 17520d9.  The third seed makes the gap's std, against which the ladder judges its trend, a std over 3
rather than over 2.  ``--only 05`` plans Table 4 alone (≈ 10 min), ``--only 09`` the
ladder alone.  1,545 runs need a GPU (≈ 97,000 CPU-h here), 175 more have no measured cost (FEMNIST, the
ImageNet subset).  With a GPU (``--device cuda``) the ladder runs every seed and every rung.

On a GPU, the lease of 2026-11-26 (``python -m fedlib.repro.lease``, at 0e54ef9, one NVIDIA H200, torch 2.11,
CUDA 13.0; ``benchmarks/leases/``, ``benchmarks/results_gpu.md``): one round of Table 1 D(0.5) -- 20 clients,
50,000 sample-epochs, 14.9 TFLOP counted from the model -- takes **0.95 s** on the vectorized engine in float32
(tf32 0.61 s, bf16 0.56 s; the sequential engine 1.25 / 0.97 / 1.08 s), the best of 2 rounds after a warm-up;
trained alone, 170 rounds with their evaluations and checkpoints took 164 s, **0.965 s a round = 1.93e-5 s per
client sample-epoch**.  Two runs sharing the GPU each took 1.81 s a round: together no faster than one alone.
A 400-round Table 1 run is then ≈ 6.5 GPU-min, one run at a time; Table 1's CIFAR-10 columns (7 methods × 4 β ×
5 seeds = 140 runs) ≈ 15 GPU-h.  The earlier upper bound (2026-11-24, an H100 shared by 4 to 12 runs, ≤ 4.4 s a
round, 8.7e-5 s per sample-epoch) is superseded.  Their progress: ``figures/fedlc/paper/gpu/``.

The budget ladder (:data:`LADDER`) under quick: no rung runs (a ladder budget of 0 min).  Its rung 0, 15
rounds on 6,000 samples, would cost 2 × (25 + 15 × 6,000 × 3.75 ms) ≈ 12 CPU-min and alone shows no
trend; the next rung ≈ 27 CPU-min for its 2 runs.  It was 60 min on 2 workers (three rungs) before issue 24
took the four quick profiles to two hours together; ``--profile paper`` runs the rungs a CPU affords (runs
of at most 30 CPU-min, 3 seeds).
"""

_LOGREG = UnitCost(fixed_s=0.12, s_per_round=0.036,
                   measured="fedlc_synthetic_logreg: 5/25 rounds 0.30/1.02 s, 2026-11-24, load 10")
_CNN_CIFAR = UnitCost(s_per_sample_epoch=3.75e-3, fixed_s=25.4, gpu_s_per_sample_epoch=1.93e-5,
                      measured="fedlc_cifar10_cnn: 4,000 samples, 1/3 rounds 40.4/70.4 s, 2026-11-24, load 7; GPU: "
                               "Table 1 D(0.5) alone on an H200, vectorized float32, 170 rounds in 164 s "
                               "(lease of 2026-11-26)")

COST = CostModel(units={"logreg": _LOGREG, "cnn_cifar": _CNN_CIFAR}, cpu_run_limit_s=CPU_RUN_LIMIT_S)

LADDER = LadderSpec(paper="fedlc", table="table1", column="cifar10_beta0.5", method="fedlc", baseline="fedavg",
                    quick_budget_minutes=0, cpu_seeds=3,
                    notes=("CIFAR-10 with the Table 9 CNN at every rung (quick's CIFAR-10 cells run on "
                           "FashionMNIST); quick's rung 0: 15 rounds on a 6,000-sample subset at the paper's batch "
                           "128 (quick itself uses batch 16)",))
