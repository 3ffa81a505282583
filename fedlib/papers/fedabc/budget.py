"""FedABC at its own scale: the ``paper`` profile's cost model and the headline's budget ladder.

:data:`PAPER_ESTIMATE` is the arithmetic (unit costs measured here, ``benchmarks/unit_costs.py``);
:data:`COST` is what the ``paper`` profile gates its cells with (:mod:`fedlib.repro.budget.costs`);
:data:`LADDER` is FedABC − FedAvg at MNIST Dir(0.3), Table 1, from quick's 20 rounds to the
paper's 100 (:mod:`fedlib.repro.budget.ladder`).

:func:`rungs_text`, :func:`paper_gap_text`, :func:`ladder_title` and :func:`ladder_finding` are what
notebook 07 prints: the rungs as the plan has them and the paper's gap (never typed into prose), a title
without internal keys, and the finding
(at ``smoke``, whose numbers mean nothing, no trend verdict).
"""

from __future__ import annotations

import pandas as pd

from ...repro.budget.costs import CostModel, UnitCost
from ...repro.budget.ladder import LadderSpec

__all__ = ["COST", "LADDER", "PAPER_ESTIMATE", "CPU_RUN_LIMIT_S", "ladder_title", "rungs_text", "paper_gap_text",
           "ladder_finding"]

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

Total of the paper profile here (``fedlib.repro.budget.plan.plan('fedabc')``): 180 runs fit (Tables 1-2's 108
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


#: How :func:`rungs_text` names the ladder's scaled settings.
_SCALED = {"rounds": "rounds", "local_epochs": "local epochs E", "max_train_samples": "training samples"}


def rungs_text(plan: pd.DataFrame, keys=LADDER.scale_keys) -> str:
    """The rungs of :func:`fedlib.repro.budget.ladder.plan_frame`'s ``plan`` in words: each scaled setting
    that changes from rung to rung (``rounds 20 → 34 → 58 → 100``), then those that do not ("… at
    every rung"); ``max_train_samples`` 0 is the whole training set."""
    def shown(key, v):
        return "all" if key == "max_train_samples" and int(v) == 0 else f"{int(v):,}"

    moving, fixed = [], []
    for key in keys:
        values = [shown(key, v) for v in plan[key]]
        name = _SCALED.get(key, key)
        if len(set(values)) > 1:
            moving.append(f"{name} {' → '.join(values)}")
        else:
            fixed.append(f"{values[0]} {name}" if key == "max_train_samples" else f"{name} = {values[0]}")
    return "; ".join(moving) + (f" ({' and '.join(fixed)} at every rung)" if fixed else "")


def paper_gap_text(spec=LADDER) -> str:
    """The paper's values of the ladder's cell: ``98.7 − 98.3 = +0.40 pp``."""
    from ...repro.budget.ladder import paper_values

    method, baseline = paper_values(spec)
    if method is None or baseline is None:
        return "not given"
    return f"{method:.1f} − {baseline:.1f} = {method - baseline:+.2f} pp"


def ladder_title(spec=LADDER) -> str:
    """``Budget ladder: FedABC − FedAvg at MNIST Dir(0.3), Table 1``."""
    from ...repro.spec.paper import get_paper

    paper = get_paper(spec.paper)
    table = paper.table(spec.table)
    return (f"Budget ladder: {paper.gain_label(spec.method, spec.baseline)} at {table.column(spec.column).label}, "
            f"Table {table.number}")


def ladder_finding(table: pd.DataFrame, profile, spec=LADDER) -> str:
    """:func:`fedlib.repro.budget.ladder.finding` (toward / away / not at all), except under ``smoke``: its
    runs only check that the notebook works, so its numbers mean nothing and no trend is read from them."""
    from ...repro.budget.ladder import finding

    if profile.name == "smoke":
        return (f"{ladder_title(spec)}: the smoke profile only checks that the notebook runs; its numbers mean "
                "nothing, so no trend is read from them")
    return finding(spec, table)
