"""FedConcat's profiles: ``paper`` (the setup recovered from the public code), ``quick`` (a 2-core CPU
in under an hour) and ``smoke`` (seconds, for CI), as :class:`FedConcatProfile` data.

**The baselines' rounds.**  Table 1 compares the baselines "with same communication cost"
and states no number; every cell without its own ``rounds`` gets the budget that FedConcat's
own K, T_e and T_c imply for its model (:func:`.analysis.with_budget`):
R = T_e + K·|E|/(2M) + T_c·|C|/M rounds of one cluster model (147 on FMNIST and 120 on
CIFAR-10/SVHN at the paper's K = 5, T_e = 50, T_c = 1000).  The Centralized column is one
client training 10 epochs on the whole training set (the code's ``alg=all_in``).  The
deviation list of each table states the values.

**The quick profile** (the arithmetic behind its ≈ 30 min, measured as CPU seconds of one
thread -- ``time.process_time``, which the other users of the shared 2-core development
machine, load average 2.5-4, do not inflate the way they inflate wall time -- and divided by
the profile's 2 workers):

* FMNIST row of Table 1, all four partitions, all eight methods, 1 seed, 40 clients, 15,000
  training samples (a seeded quarter: 375 per client) at batch 16 (so a client takes 24 SGD
  steps per epoch, as with the paper's 1,500 samples at batch 64), E = 1 (paper 10),
  T_e = 6, T_c = 60 (paper 50, 1000), hence R = 14 baseline rounds (paper 147), the full
  test set evaluated every round.  Unit costs: a FedAvg/FedRS/FedLC round 2.7 s + 0.7 s
  evaluation, FedProx 3.1 s, MOON 4.9 s, a stage-2 round (all 5 clusters) 4.0 s, the
  stage-3 features once 5.3 s, a stage-3 round 0.12 s, FedConcat-ID's probe (40 clients ×
  10,000 inputs) 21 s, a centralized epoch 2.4 s.  Per partition: 3 × 14 × 3.4 + 14 × 3.8 +
  14 × 5.6 + (6 × 4.0 + 5.3 + 60 × 0.12) + (that + 24) ≈ 143 + 53 + 78 + 37 + 61 ≈ 370 s;
  four partitions + Centralized (10 × 2.4 s) ≈ 1,500 s.
* CIFAR-10 #C=2 (the column of Figs. 3-4), same setting (R = 13): a round costs ≈ 1.6× FMNIST's
  (FedAvg 4.0 s at 12,500 samples, + 20 % for 15,000; evaluation 0.9 s; MOON 7.5 s; probe
  39 s), less the channels-last gain (1.49× per CIFAR-10 round, ``benchmarks/README.md``):
  ≈ (3 × 13 × 5.7 + 13 × 6.3 + 13 × 9.9 + 50 + 90) / 1.49 + 75 (Centralized) ≈ 450 s.
* Fig. 3 (one FedConcat run with random groups): ≈ 50 s.  Fig. 1: ≈ 15 s.
* Fig. 4 (the five baselines on FedConcat's 5-encoder architecture, CIFAR-10 #C=2, for the
  same communication, ≈ 3 rounds): a round costs 6× (FedAvg 24.6 s + 4.4 s evaluation, MOON
  49 s): ≈ 3 × (4 × 31 + 54) / 1.49 ≈ 360 s.
* Table 2 at 100 clients, #C=2, FedAvg, FedRS, FedLC, FedConcat, FedConcat-ID (15,000
  samples: 150 per client, 9 steps per epoch, as the paper's 500 at batch 64):
  ≈ (3 × 13 × 5.7 + 2 × 50) / 1.49 + the probe (100 × 10,000 inputs ≈ 100 s) ≈ 320 s.
* The budget ladder (notebook 09, FMNIST #C=2 at the paper's batch 64, :data:`.budget.LADDER`):
  ≈ 8 CPU-min = 480 s.
* Table 1's rows "inputs in [0, 1]" (issue 35: FedAvg and FedConcat again with the code's input scaling, on
  each column quick runs): 4 × (14 × 3.4 + 37) + (13 × 5.7 + 50) / 1.49 ≈ 420 s (estimated, not yet measured
  in a regeneration).

Total ≈ 1,500 + 450 + 50 + 15 + 360 + 320 + 480 ≈ 3,200 CPU-seconds of grid work, ≈ 27 min on 2
workers, plus notebook start-up and data loading (≈ 2 min): ≈ 29 min; with the [0, 1] rows ≈ 3,600 s,
≈ 32 min.  The last cold
regeneration (at d2125e6: T_e = 10, T_c = 100, Table 2 at 100 and 200 clients, no ladder,
≈ 46 min estimated) took 60 min; scaled by that 1.3, **≈ 29–38 min**.  Notebooks 03-05 read
Table 1's runs from the store (the same configurations) and train nothing new.  SVHN and
CIFAR-100/Tiny-ImageNet are absent here: "not run".  Where SVHN is present the quick profile
runs its #C=2 column too (≈ +5 min).

*What issue 24 changed* (the four quick profiles together within two hours on 2 cores): T_e 10 → 6
and T_c 100 → 60 (the baselines' rounds follow: 22 → 14), Table 2 at 100 clients only (200: the
paper profile), the ladder's budget 30 → 4 min.  Quick's Table 1 cells already sat 9 to 37 pp
below the paper at T_e = 10 (quick decides little here at any of these budgets); the budget
ladder is where FedConcat's gap is followed toward the paper's scale.

**The paper profile on a CPU** (:data:`fedlib.papers.fedconcat.budget.PAPER_ESTIMATE`, measured 2026-11-24):
the simple CNN costs 0.12 ms (FMNIST) and 0.18 ms (CIFAR-10) per client sample-epoch, so a baseline
at the paper's 147 rounds of E = 10 costs ≈ 2.9 CPU-h and FedConcat ≈ 1.3 CPU-h: "not run: needs a
GPU" unless the profile's device is ``cuda``; the Centralized cells (≈ 72-90 s) run on this CPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...repro.spec.profiles import Profile, changed, merge_notes
from . import reported
from .budget import COST
from .deviations import NOTES
from .analysis import CENTRALIZED_EPOCHS, budget_of, with_budget
from .reported import DATASET_LABELS, SETUP

__all__ = ["FedConcatProfile", "PAPER_PROFILE", "QUICK", "SMOKE", "PROFILES", "EXPERIMENTS", "EXPERIMENT_DATASETS",
           "MODEL_LABELS", "BUDGET_VARIANTS", "budget_lines"]


@dataclass(frozen=True)
class FedConcatProfile(Profile):
    """A :class:`fedlib.repro.spec.profiles.Profile` whose cells also get the rounds Table 1's "same
    communication cost" implies (:func:`.analysis.with_budget`): a cell that sets no
    ``rounds`` gets FedConcat's communication in rounds of its model; a centralized cell (one
    client) 10 epochs in one round."""

    def resolve(self, base: dict, experiment: str | None = None, *,
                substitute: bool = True) -> tuple[dict | None, str]:
        cfg, note = super().resolve(base, experiment, substitute=substitute)
        return (None if cfg is None else with_budget(cfg)), note


#: Experiment names: one per paper table / figure, and the notebooks' own studies.
EXPERIMENTS = {
    "fig1": "Fig. 1: accuracy of two clients' local models and of their average under label skew (measured)",
    "table1": "Table 1: FMNIST, CIFAR-10, SVHN under #C=2, #C=3, Dir(0.1), Dir(0.5)",
    "budget": "The baselines' round budget ('same communication cost') and the ranking under other budgets",
    "fedlc_third_party": "FedLC − FedAvg: claimed by the FedLC paper, measured by FedConcat's Table 1, measured here",
    "clusters": "The clients' label distributions ordered by cluster (K-means on Eq. 2 / Eq. 3)",
    "fig3": "Fig. 3: FedConcat with vs without clustering (CIFAR-10, 40 clients)",
    "fig4": "Fig. 4: the baselines trained on FedConcat's final architecture (CIFAR-10, 40 clients, #C=2)",
    "table2": "Table 2: 100 and 200 clients (CIFAR-10)",
    "table3": "Table 3: CIFAR-100 and Tiny-ImageNet (ResNet-50)",
}

#: The paper's model per dataset, for deviation lines (inferred: notes §1a).
MODEL_LABELS = {"fmnist": "simple CNN (1×28×28)", "cifar10": "simple CNN", "svhn": "simple CNN",
                "cifar100": "ResNet-50", "tinyimagenet": "ResNet-50"}

#: The paper datasets of the experiments that are not tables (for deviation lines).
EXPERIMENT_DATASETS = {
    "fig1": ("cifar10",), "budget": ("fmnist", "cifar10", "svhn"), "fedlc_third_party": ("fmnist", "cifar10", "svhn"),
    "clusters": ("fmnist", "cifar10", "svhn"), "fig3": ("cifar10",), "fig4": ("cifar10",),
}

#: Ways to count "same communication cost" (notebook 03): name -> budget_of keywords.
BUDGET_VARIANTS = {
    "sent and received (default)": {},
    "sent only (uploads)": {"count": "upload"},
    "received only (downloads)": {"count": "download"},
    "stage 2 only (the code's comm_round = T_e)": {"include": ("encoders",)},
    "stage 2 + the encoders' broadcast": {"include": ("encoders", "broadcast")},
    "FedConcat-ID (+ its probe round)": {"probe_round": True},
}

_ALL_T1 = tuple(c.key for c in reported.TABLE1.columns)
_CIFAR_T1 = tuple(c.key for c in reported.TABLE1.columns if c.dataset == "cifar10")


def budget_lines(image: dict) -> tuple[str, ...]:
    """Deviation lines stating the baselines' rounds and the Centralized setting under ``image``."""
    knobs = {k: image.get(k, SETUP[k]) for k in ("num_clusters", "encoder_rounds", "classifier_rounds")}
    rounds = {ds: budget_of({"dataset": ds, "model": SETUP["model"], **knobs}).rounds
              for ds in ("fmnist", "cifar10", "svhn")}
    text = ", ".join(f"{DATASET_LABELS[d]} {r}" for d, r in rounds.items())
    return (f"baselines (FedAvg, FedProx, MOON, FedRS, FedLC) run R rounds, FedConcat's own communication per client "
            f"with K = {knobs['num_clusters']}, T_e = {knobs['encoder_rounds']}, T_c = {knobs['classifier_rounds']} "
            f"(the paper's 'same communication cost' states no number; R = T_e + K·|E|/(2M) + T_c·|C|/M, "
            f"fedlib.papers.fedconcat.analysis): {text}",
            f"Centralized: one client holding the whole training set, {CENTRALIZED_EPOCHS} epochs (the code's "
            "alg=all_in with run.sh's epochs = 10; not stated in the paper)")


_BUDGETED = ("table1", "table2", "table3", "budget", "fedlc_third_party", "fig4")


def _with_budget_lines(image: dict) -> dict:
    """The deviation notes of a profile training with ``image``: the common ones and its budget lines."""
    return merge_notes(NOTES, {e: budget_lines(image) for e in _BUDGETED})

PAPER_PROFILE = FedConcatProfile(
    name="paper",
    paper="fedconcat",
    description="The setup recovered from the public code (notes/fedconcat.md): 3 seeds, the full datasets, 40 "
                "clients (100 and 200 in Table 2), all participating, E = 10, batch 64, SGD lr 0.01 with momentum 0.9 "
                "and weight decay 1e-5, K = 5, T_e = 50, T_c = 1000 (Algorithm 1's E local epochs in stage 3), the "
                "simple CNN; baselines for FedConcat's communication (147 rounds on FMNIST, 120 on CIFAR-10/SVHN).  "
                "Needs a GPU (days of CPU time).",
    seeds=reported.SEEDS,
    datasets={},
    image={},
    experiments={
        "fig1": {"column": "cifar10_c2", "local_epochs": SETUP["local_epochs"], "uses_seeds": False, "trains": False},
        "budget": {"columns": _ALL_T1, "variants": tuple(BUDGET_VARIANTS)},
        "fedlc_third_party": {"columns": _ALL_T1},
        "clusters": {"columns": _ALL_T1, "methods": ("fedconcat", "fedconcat_id")},
        "fig3": {"columns": _CIFAR_T1},
        "fig4": {"column": "cifar10_c2", "model": "concat5_simple_cnn", "budget": "rounds",
                 "methods": ("fedavg", "fedprox", "moon", "fedrs", "fedlc")},
    },
    notes=_with_budget_lines({}),
    workers=2,  # the machine's two cores, as FedLC's and FedABC's paper profiles (numbers do not depend on it)
    cost=COST,
)

_QUICK_IMAGE = {"max_train_samples": 15_000, "batch_size": 16, "local_epochs": 1, "encoder_rounds": 6,
                "classifier_rounds": 60}
_QUICK_T1 = ("fmnist_c2", "fmnist_c3", "fmnist_dir0.1", "fmnist_dir0.5", "cifar10_c2", "svhn_c2")

QUICK = FedConcatProfile(
    name="quick",
    paper="fedconcat",
    description="Table 1's FMNIST row at 40 clients with all eight methods and all four partitions, 1 seed, a "
                "seeded quarter of the training set (15,000 samples) at batch 16 (24 local steps per epoch, as the "
                "paper's full set at batch 64), E = 1, T_e = 6, T_c = 60 and so 14 baseline rounds (paper: 3 "
                "seeds, E = 10, T_e = 50, T_c = 1000, 147 rounds); CIFAR-10 in its #C=2 column (Figs. 3-4's "
                "setting); Table 2 at 100 clients, #C=2, with five methods; Table 3 not run (ResNet-50 is a GPU job).  "
                "About 29-38 min on 2 cores (the arithmetic: fedlib/papers/fedconcat/profiles.py).",
    seeds=(0,),
    datasets={"cifar100": None, "tinyimagenet": None},
    image=_QUICK_IMAGE,
    experiments=changed(PAPER_PROFILE.experiments, {
        "table1": {"columns": _QUICK_T1},
        "budget": {"columns": _QUICK_T1},
        "fedlc_third_party": {"columns": _QUICK_T1},
        "clusters": {"columns": _QUICK_T1},
        # one seed gives the clustering claim no interval; 3 measured its paired std (1.98 pp), at which 5 decide
        # it (python -m fedlib.repro.decide --all --dry-run, 2026-12-06)
        "fig3": {"columns": ("cifar10_c2",), "seeds": (0, 1, 2, 3, 4)},
        # one seed gives Fig. 4's gaps no interval: 3 seeds measured their paired spread (over FedAvg: +10.83, sd
        # 5.20), at which 4 decide it (python -m fedlib.repro.decide --all --dry-run, 2026-12-07: 11 runs ≈ 23 CPU-min)
        "fig4": {"budget": "communication", "seeds": (0, 1, 2, 3)},
        "table2": {"columns": ("n100_cifar10_c2",),
                   "rows": ("fedavg", "fedrs", "fedlc", "fedconcat", "fedconcat_id")},
    }),
    explanations={
        "max_train_samples": "375 samples per client (paper: 1,500 on FMNIST, 1,250 on CIFAR-10); with batch 16 a "
                             "client still takes 24 SGD steps per local epoch, as with the paper's data at batch 64",
        "batch_size": "keeps the paper's 24 local steps per epoch on the quarter-size training set",
        "local_epochs": "the paper's 10 local epochs per round cost 10× more; Fig. 1 keeps E = 10",
        "encoder_rounds": "T_e and T_c scaled down; the baselines' rounds follow from them (14 instead of 147)",
        "classifier_rounds": "stage 3 is cheap (a linear model on precomputed features) but T_c sets the baselines' "
                             "budget: 1000 stage-3 rounds would mean about 100 baseline rounds",
    },
    notes=merge_notes(_with_budget_lines(_QUICK_IMAGE), {
        "fig4": ("the baselines on the 5-encoder model run for FedConcat's communication (≈ 4 rounds of the 5× larger "
                 "model), not for as many rounds as Table 1's baselines (the paper profile's choice): 5× cheaper",),
        "table3": ("CIFAR-100 and Tiny-ImageNet with ResNet-50: a GPU job, not run in the quick profile",),
        "fig1": ("the quick profile's training subset (15,000 samples: 375 per client) at batch 16; E = 10 local "
                 "epochs as the paper",),
        "table2": ("Table 2: only #C=2 at 100 clients, without FedProx and MOON (budget)",),
    }),
    workers=2,
    budget_minutes=30,  # issue 24: the four quick profiles within two hours on 2 cores
)

_SMOKE_IMAGE = {"max_train_samples": 600, "max_test_samples": 200, "batch_size": 16, "local_epochs": 1,
                "encoder_rounds": 1, "classifier_rounds": 2, "min_client_size": 2, "fedconcat_id_probe_size": 100}

SMOKE = FedConcatProfile(
    name="smoke",
    paper="fedconcat",
    description="A tiny setting that only checks that every notebook runs (CI): 1 seed, 600 training and 200 test "
                "samples, T_e = 1, T_c = 2 (so 4 baseline rounds), a 100-input probe, one column per table.  Its "
                "numbers mean nothing.",
    seeds=(0,),
    datasets={"cifar100": None, "tinyimagenet": None},
    image=_SMOKE_IMAGE,
    experiments={
        "fig1": {"column": "cifar10_c2", "local_epochs": 1, "uses_seeds": False, "trains": False},
        # at most 8 runs a table: FedProx and FedRS (both also in FedLC's smoke) make room for the [0, 1] rows
        "table1": {"columns": ("fmnist_c2",), "rows": tuple(r.key for r in reported.TABLE1.rows
                                                            if r.params.get("method") not in ("fedprox", "fedrs"))},
        "budget": {"columns": ("fmnist_c2",), "variants": tuple(BUDGET_VARIANTS)},
        "fedlc_third_party": {"columns": ("fmnist_c2",)},
        "clusters": {"columns": ("fmnist_c2",), "methods": ("fedconcat", "fedconcat_id")},
        "fig3": {"columns": ("cifar10_c2",)},
        "fig4": {"column": "cifar10_c2", "model": "concat5_simple_cnn", "budget": "communication",
                 "methods": ("fedavg", "fedlc")},
        "table2": {"columns": ("n100_cifar10_c2",), "rows": ("fedavg", "fedconcat")},
        "table3": {"columns": ("cifar100_c2",), "rows": ("fedavg",)},
    },
    notes=merge_notes(_with_budget_lines(_SMOKE_IMAGE),
                      {"*": ("smoke profile: a run-everything check; the numbers mean nothing",)}),
    workers=1,
    budget_minutes=5,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (SMOKE, QUICK, PAPER_PROFILE)}
