"""FedConcat at its own scale: the ``paper`` profile's cost model and the headline's budget ladder.

:data:`PAPER_ESTIMATE` is the arithmetic (unit costs measured here, ``benchmarks/unit_costs.py``);
:data:`COST` is what the ``paper`` profile gates its cells with (:mod:`fedlib.repro.budget.costs`): FedConcat's
stage 2 (T_e rounds of every client's E epochs) and stage 3 (T_c rounds on the frozen encoders) are
priced each by its own unit cost, a baseline by the rounds "same communication cost" gives it
(:func:`.analysis.with_budget`); :data:`LADDER` is FedConcat − FedAvg at FMNIST #C=2, Table 1,
from quick's scale to the paper's (:mod:`fedlib.repro.budget.ladder`).
"""

from __future__ import annotations

from ...repro.budget.costs import CostModel, UnitCost
from ...repro.budget.ladder import LadderSpec
from .analysis import with_budget

__all__ = ["COST", "LADDER", "PAPER_ESTIMATE", "CPU_RUN_LIMIT_S"]

#: A run fits this CPU when its estimate is at most this (one core).
CPU_RUN_LIMIT_S = 1800.0

PAPER_ESTIMATE = """
Unit costs (``python benchmarks/unit_costs.py --only fedconcat_fmnist_cnn --only fedconcat_cifar10_cnn
--only fedconcat_fmnist_stage3``, 2026-11-24, load average 6-8 on 2 cores, CPU seconds of one
single-threaded process; 6,000 samples, E = 1, so that a round is cheap):

* FMNIST, simple CNN, FedAvg #C=2 (40 clients, all participating): 1 round 1.67 s, 3 rounds
  3.11 s → **0.12 ms per client sample-epoch** + 0.95 s fixed.  CIFAR-10 (3 channels): 3.49 / 5.64 s
  → **0.18 ms** + 2.4 s.
* FedConcat's stage 3 (a linear classifier on features computed once): T_c = 1 and 41 cost 6.53 and
  6.09 s, i.e. below the timing's resolution: ≤ 2e-6 s per sample-epoch (an upper bound) + 6.5 s for
  the clustering, the K encoders and the feature pass.

At the paper's scale (all data, E = 10, 40 clients: 600,000 sample-epochs a round on FMNIST):

* a baseline on FMNIST (147 rounds of "same communication cost"): 147 × 600,000 × 0.12 ms ≈ 10,600 s
  = **2.9 CPU-h**; on CIFAR-10 (120 rounds × 500,000 × 0.18 ms) ≈ 3.0 CPU-h; MOON costs more (three
  forward passes), priced here as FedAvg (a lower bound);
* FedConcat on FMNIST: T_e = 50 rounds × 600,000 × 0.12 ms = 3,600 s + stage 3 ≤ 1,000 × 600,000 ×
  2e-6 = 1,200 s ≈ **1.3 CPU-h**;
* Centralized (one client, 10 epochs): 600,000 × 0.12 ms ≈ 72 s on FMNIST, 90 s on CIFAR-10: fits.

The paper profile on this 2-core CPU (a run fits when it is estimated at ≤ 30 CPU-min;
``fedlib.repro.budget.plan.plan('fedconcat')``): the Centralized cells and the budget ladder's lower rungs,
27 runs ≈ 2.7 CPU-h; 621 runs need a GPU (≈ 1,190 CPU-h here), 189 more have no measured cost
(ResNet-18 on CIFAR-100 / Tiny-ImageNet, both absent, and Fig. 4's 5-encoder model).  GPU time: not
measured (no GPU lent).  The budget ladder (:data:`LADDER`) under quick, one seed: rungs at (T_e, T_c, E,
samples) = (6, 60, 1, 15,000), (9, 101, 2, 19,422), (13, 171, 2, 25,149): ≈ 0.7 + 2.5 + 4.8 CPU-min ≈ 4 min
on 2 workers (its budget; it was 30 min, from T_e = 10, before issue 24 took quick to two hours for all four
papers); the paper's (50, 1000, 10, 60,000), ≈ 256 CPU-min for its two runs, is shown as not run.

The ladder under ``paper`` (3 seeds, the profile's 2 workers, runs of ≤ 30 CPU-min): rungs (6, 60, 1, 15,000),
(13, 165, 2, 24,703), (28, 454, 5, 40,682), est. 2.0 + 14.0 + 132.6 ≈ 149 CPU-min, 1.2 h on 2 workers.
Measured (``--profile paper --paper fedconcat --only 09`` at 1856cbe, empty store, nice, 2 workers, 14 min of
it beside the test suite): **91.1 min**; the top rung's FedAvg runs took 28-36 min each, its FedConcat
runs 14.  The paper's rung is "not run: needs a GPU".  Trained again with run records at 0ca4811 (the 15 runs
left after a stop in 51.9 min with ``--resume``): the same numbers.
"""


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
                    quick_budget_minutes=4, adjust=rebudget,
                    # 5 seeds on a CPU (the profile's 3 and two more), planned at the top rung's paired std over 3
                    # seeds (1.93 pp); over 5 it measured 2.77, so 5 did not decide it and 9 would (claims.csv)
                    cpu_seeds=5,
                    notes=("FMNIST with the simple CNN at the paper's batch 64 at every rung (quick uses batch 16 on "
                           "its 15,000 samples); the baselines' rounds follow from T_e and T_c at each rung",))
