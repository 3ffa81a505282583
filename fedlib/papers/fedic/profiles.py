"""The FEDIC paper's profiles: ``paper`` (its setup), ``quick`` (a 2-core CPU in under an hour) and
``smoke`` (seconds, for CI), as :class:`fedlib.repro.spec.profiles.Profile` data.

**Why quick trains on FashionMNIST-LT.**  The paper's setting (ResNet-8 on CIFAR-10-LT, 200 rounds,
8 clients × 10 local epochs per round, 300 server Adam steps per round) costs hours per run on a
2-core CPU; the phase-1 measurement (``benchmarks/bench_fedic.py``) put one ResNet-8 FedAvg round at
E = 10 far beyond the budget.  ``quick`` therefore trains the 2-layer CNN (``cnn_mnist``) on
FashionMNIST made long-tailed exactly as the paper makes CIFAR-10 (D_aux of 100 per class taken
out first, then IF = 100 / 50 / 10), with MNIST's training images as D_ulb: another dataset, as
CIFAR-100 is for CIFAR-10 (not the in-distribution samples the long tail drops).  Everything else
(20 equal-sized clients, D(α = 0.1), 8 clients per round, batch 128, lr 0.1, FEDIC's server steps
and every baseline's settings) is the paper's.

**The quick budget** (:data:`QUICK_ESTIMATE`): unit costs measured on this machine with the load
average noted, as CPU seconds of one single-threaded process (the regeneration runs two workers on
two cores), then summed over the runs the notebooks need (runs shared by several tables and figures
run once).

**The paper profile on a CPU** (:data:`fedlib.papers.fedic.budget.PAPER_ESTIMATE`, measured 2026-11-24):
ResNet-8 on CIFAR-10-LT costs 11.2 ms per client sample-epoch, so a FedAvg run at the paper's 200 rounds
of 8 clients × 10 local epochs costs ≈ 30 CPU-h (FEDIC's server steps add 745 s a round: ≈ 72 CPU-h): every CIFAR-10 cell is
"not run: needs a GPU" unless the profile's device is ``cuda``.
"""

from __future__ import annotations

from ...repro.spec.profiles import Profile, changed, merge_notes
from .budget import COST
from .deviations import NOTES
from .reported import SEEDS

__all__ = ["PAPER_PROFILE", "QUICK", "SMOKE", "PROFILES", "EXPERIMENTS", "EXPERIMENT_DATASETS", "MODEL_LABELS",
           "QUICK_ESTIMATE"]

#: Experiment names: one per paper table / figure (and the notebooks' own look at the data).
EXPERIMENTS = {
    "long_tail": "§3.1: the long-tailed training set, D_aux, D_ulb and the many/medium/few groups",
    "table1": "Table 1: CIFAR-10/100-LT at IF 100/50/10, twelve methods",
    "table2": "Table 2: ImageNet-LT, All / Many / Medium / Few",
    "table3": "Table 3: ablation of FT, LA and KD (CIFAR-10-LT, IF = 100), All / Many / Medium / Few",
    "fig3": "Fig. 3: size of D_aux (and of D_ulb): FedAvg, FT and FEDIC (CIFAR-10-LT, IF = 100)",
    "fig4": "Fig. 4: λ of Eq. 9 (CIFAR-10-LT, IF = 100)",
    "fig5": "Fig. 5: non-IID degree α from 1.0 to 0.01 (CIFAR-10-LT, IF = 100)",
    "learns": "Table 1's headline (IF = 100) at the budget where FedAvg learns: FedAvg against the budget, FEDIC "
              "and FedAvg over 3 seeds there (issue 49)",
}

#: The paper's model for each dataset, for deviation lines.
MODEL_LABELS = {"cifar10": "ResNet-8", "cifar100": "ResNet-8", "imagenet_lt": "ResNet-50",
                "fmnist": "2-layer CNN (cnn_mnist)"}

#: The paper datasets of the experiments that are not tables (for deviation lines).
EXPERIMENT_DATASETS = {"long_tail": ("cifar10",), "fig3": ("cifar10",), "fig4": ("cifar10",), "fig5": ("cifar10",),
                       "learns": ("cifar10",)}

PAPER_PROFILE = Profile(
    name="paper",
    paper="fedic",
    description="The paper's setup (§3.1 and the released code): 1 run (seed 0), ResNet-8, 200 rounds, 20 "
                "equal-sized clients under D(α = 0.1), 8 per round, 10 local epochs, batch 128, SGD lr 0.1; D_aux "
                "100 per class taken out before the long tail; FEDIC's server steps I = J = 100 (Adam 1e-3), "
                "λ = 0.5.  Needs a GPU (hours per run on a CPU).",
    seeds=SEEDS,
    datasets={},
    image={"eval_every": 10},
    # the figures' grids are their studies' declared defaults (fedlib.papers.fedic.studies)
    experiments={"long_tail": {"uses_seeds": False, "trains": False},
                 # at the paper's 200 rounds FedAvg learns (52.12 %): its own budget is the one compared (a GPU's)
                 "learns": {"multiples": (1,)}},
    notes=NOTES,
    workers=2,  # two runs at once (a run's numbers do not depend on it): the budget ladder's on a 2-core CPU
    cost=COST,
)

#: Quick's unit costs and the estimate of a cold regeneration (see the module docstring).
QUICK_ESTIMATE = """
Unit costs, CPU seconds of one single-threaded run (measured 2026-11-21 with /tmp scripts calling fedlib.run on
FashionMNIST-LT IF = 100, 20 clients, 8 per round, batch 128, cnn_mnist; load average 6 on the 2 shared cores, so
these are upper bounds -- contention inflates CPU time):
  client training        c = 1.26 s per local epoch per round (8 clients, IF = 100; ×1.11 at IF = 50, ×1.62 at
                         IF = 10: the long-tailed set has 14.9k / 16.5k / 24.1k samples)
  FEDIC server step      14 s per round (FT 100 + calibration 100 + distillation 100 Adam steps)
  FedDF server step      10 s per round (100 distillation steps, 8 teachers)
  FedBE server step      20 s per round (100 distillation steps, 8 clients + mean + 10 samples)
  cRT / τ-norm / LWS, Ratio Loss, FedProx, FedNova, FedAvgM, Fed-Focal: ≈ FedAvg (post-hoc steps: ~2 s once)
  per-run overhead       ≈ 3 s (LT split, partition, 3 evaluations on 2,000 test images)
Runs (R = 8 rounds, E = 2 local epochs; runs shared between tables and figures counted once):
  Table 1  12 methods × IF 100                        12 runs: client 12·c·R·E = 15.1·R·E
                                                             server (14+10+20)·R = 44·R
  Table 3  (e), (f), (g) ((h) is Table 1's FEDIC)     3 runs: 3.8·R·E + 42·R
  Fig. 3   D_aux {25, 400} × (FedAvg, FT, FEDIC)       6 runs: 7.6·R·E + 56·R  (100/class: Tables 1, 3)
  Fig. 4   λ {0, 1} (0.5: Table 1)                     2 runs: 2.5·R·E + 28·R
  Fig. 5   α {1, 0.01} × (FedAvg, FedDF, FEDIC)         6 runs: 7.6·R·E + 48·R  (0.1: Table 1)
  total    29 runs: 36.6·R·E + 218·R + 29·3 s = 36.6·16 + 218·8 + 87 = 586 + 1744 + 87 ≈ 2420 CPU s
Two workers on two cores (≈ 1.8× with the longest runs last): 2420 / 1.8 ≈ 1340 s ≈ 22 min; the last cold
regeneration (at 5bc4cfa: R = 12, IF = 100 and 10, 4730 CPU s estimated, 44 min) took 54 min, so scaled by
that 1.23: ≈ 22–28 min.  The budget ladder (notebook 06, ResNet-8 on CIFAR-10-LT) does not fit quick: its
lowest rung alone is ≈ 124 CPU-min (shown as not run, with its cost).
Issue 24 (the four quick profiles together within two hours on 2 cores) took quick from R = 12 and Table 1
at IF = 100 and 10 (≈ 44 min estimated) to R = 8 and IF = 100 only: the IF = 10 column (12 runs, ≈ 12 min)
and a third of the rounds (the server steps per round dominate) are where the verdicts lose least -- the
headline (FEDIC − FedAvg at IF = 100) and every figure keep their cells; IF = 10 and IF = 50 are left to
the paper profile.
Spot check of the unit costs (quick's Table 1 IF = 100 cells, load average 7.7, with min_client_size = 10 before
the setup's change to 1): FedAvg 31 s CPU (estimate 30), FEDIC 191 s (estimate 198), FedDF 163 s (estimate 150);
accuracy FedAvg 33.8 %, FedDF 25.9 %, FEDIC 77.7 % (teacher 78.9 %).
"""

QUICK = Profile(
    name="quick",
    paper="fedic",
    description="A reduced setting for a 2-core CPU in under 45 minutes (≈ 22–28 min estimated for the tables and "
                "figures, QUICK_ESTIMATE in fedlib/papers/fedic/profiles.py, and ≈ 28 CPU-min for the study of "
                "where FedAvg learns, fedlib/papers/fedic/learns.py: 42 min of wall time under load): CIFAR-10-LT replaced by FashionMNIST-LT (D_aux 100 per class "
                "out first, then the long tail, as the paper does) with the 2-layer CNN and MNIST's training images "
                "as D_ulb; 8 rounds of 2 local epochs; 2,000 test images; 1 seed (Figs. 3-4: 3, Fig. 5: 4); Table 1 at IF = 100; "
                "every server step at the paper's settings.  CIFAR-100-LT and ImageNet-LT are absent here (not run).",
    seeds=(0,),
    datasets={"cifar10": "fmnist", "cifar100": None, "imagenet_lt": None},
    image={"model": "cnn_mnist", "server_unlabeled": "mnist", "rounds": 8, "local_epochs": 2,
           "max_test_samples": 2000, "eval_every": 4},
    experiments=changed(PAPER_PROFILE.experiments, {
        "table1": {"columns": ("cifar10_if100",)},
        # Figs. 3-4 at 3 seeds: one seed gives their findings no interval (decide's plan: 3 seeds, ≈ 31 CPU-min)
        "fig3": {"aux_per_class": (25, 100, 400), "ulb_sizes": (0,), "seeds": (0, 1, 2, 3, 4, 5, 6, 7)},
        "fig4": {"lambdas": (0.0, 0.5, 1.0), "seeds": (0, 1, 2)},
        # Fig. 5 at 20 seeds: FEDIC's gap held 0 at 4 seeds (plan: 14 at the paired spread 1.24 pp) and at 14
        # (plan: 18 at 1.09); seed 2's Dir(0.01) partition cannot be drawn (a client would hold no sample)
        "fig5": {"alphas": (1.0, 0.1, 0.01), "methods": ("fedavg", "feddf", "fedic"), "seeds": tuple(range(20))},
        # the learns study (issue 49): FedAvg at 8-64 rounds, FEDIC and FedAvg over 3 seeds where FedAvg learns
        "learns": {"multiples": (1, 2, 4, 8)},
    }),
    explanations={"model": "the ResNet-8 on CIFAR-10 costs hours per run on 2 CPU cores; the 2-layer CNN on "
                           "FashionMNIST-LT keeps every client at the paper's ≈600 samples (IF = 100: 14.9k samples "
                           "over 20 clients; the paper's CIFAR-10-LT: 12.1k)",
                  "local_epochs": "the code's 10 local epochs cost 5× as much per round; the server steps (the "
                                  "paper's, 100 Adam steps each) dominate the budget and are kept",
                  "rounds": "FashionMNIST-LT with the small CNN converges in far fewer rounds than CIFAR-10-LT with "
                            "ResNet-8; all methods are compared at the same round, where FEDIC's server training on "
                            "D_aux helps most early",
                  "server_unlabeled": "the paper's D_ulb is CIFAR-100, absent here; MNIST's training images are "
                                      "another dataset, as CIFAR-100 is for CIFAR-10 (not the in-distribution "
                                      "samples the long tail drops, which would make distillation easier)",
                  "max_test_samples": "a seeded subset (≈200 per class) of the balanced test set"},
    notes=merge_notes(NOTES, {
        "table1": ("CIFAR-100-LT: absent here (the paper profile runs it where the files are)",),
        "table2": ("ImageNet-LT: absent here (the paper profile runs it where the files are)",),
        "fig3": ("D_ulb: all of it (no fraction curves)",),
        "fig5": ("three of the four methods (FedAvg, FedDF, FEDIC) and three α values",),
    }),
    workers=2,
    budget_minutes=45,  # issue 24's two hours for the four quick profiles, plus issue 49's study of where FedAvg learns
)

SMOKE = Profile(
    name="smoke",
    paper="fedic",
    description="A tiny setting that only checks that every notebook runs (CI): 1 seed, 2 rounds, FashionMNIST-LT "
                "from a 3,000-sample subset, 5 server steps, a few grid points.  Its numbers mean "
                "nothing.",
    seeds=(0,),
    datasets={"cifar10": "fmnist", "cifar100": None, "imagenet_lt": None},
    image={"model": "cnn_mnist", "server_unlabeled": "mnist", "server_unlabeled_size": 500, "rounds": 2,
           "local_epochs": 1, "max_train_samples": 3000, "max_test_samples": 200, "min_client_size": 1, "eval_every": 1, "fedic_finetune_steps": 5, "fedic_calibration_steps": 5,
           "fedic_distill_steps": 5, "distill_steps": 5, "fedbe_samples": 2, "posthoc_epochs": 2},
    experiments={
        "long_tail": {"uses_seeds": False, "trains": False},
        "table1": {"columns": ("cifar10_if100",), "rows": ("fedavg", "feddf", "crt", "fedic")},
        "table3": {"rows": ("d", "h")},  # one run: the teacher (d) and the student (h)
        "fig3": {"aux_per_class": (20, 100), "ulb_sizes": (0,)},
        "fig4": {"lambdas": (0.5, 1.0)},
        "fig5": {"alphas": (1.0, 0.1), "methods": ("fedavg", "fedic")},
        "learns": {"multiples": (1, 2), "margin_pp": -100.0, "compare_seeds": (0, 1)},  # any budget: runs it all
    },
    notes=merge_notes(NOTES, {"*": ("smoke profile: a run-everything check; the numbers mean nothing",)}),
    workers=1,
    budget_minutes=5,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (SMOKE, QUICK, PAPER_PROFILE)}
