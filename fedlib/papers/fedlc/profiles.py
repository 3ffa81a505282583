"""The FedLC paper's profiles: ``paper`` (its setup), ``quick`` (a 2-core CPU in under an hour) and
``smoke`` (seconds, for CI), as :class:`fedlib.repro.spec.profiles.Profile` data.

The ``quick`` profile is written as "the paper's, with these changes" (:func:`fedlib.repro.spec.profiles.changed`);
every table and figure lists the resulting deviations (:meth:`Profile.deviations`).

**The quick budget** (issue 24: the four quick profiles together within two hours on 2 cores).
The last cold regeneration at the old settings (30 image rounds; at bbd1c16, one quiet run) took
44 min, of which the image cells (Figs. 1-2, 5-7, the calibration study, Tables 1, 2, 5-7 and the
stand-in check on FashionMNIST or CIFAR-10 with the Table 8 CNN, ≈ 1.1-1.2 s per round: 230 runs)
took ≈ 38 and Table 4's Synthetic runs (logistic regression, 300 rounds, ≈ 11 s a run) and the
notebook kernels the rest.  Quick now trains the image cells for 15 rounds (Table 5 keeps its 10,
Table 6 goes from 20 to 15; the stand-in check's CIFAR-10 rounds gain 1.52× from channels-last),
≈ 38 × 15/30 × 0.9 ≈ 17 min, + 6: **≈ 23 min on 2 quiet cores**.  The rounds are where the verdicts
lose least: at 30 rounds no image cell fell within the paper's std either (quick decides little;
the paper-profile Table 4 and the budget ladder are where FedLC is answered), and every table keeps
its cells and seeds (2 for Tables 1, 2 and 4: the seed-to-seed spread that decides the verdicts).
The budget ladder (notebook 09: CIFAR-10 with the Table 9 CNN) runs no rung under quick: its lowest
rung alone costs ≈ 12 CPU-min and buys no trend; ``--profile paper`` runs the rungs a CPU affords.

**The paper profile on a CPU** (:data:`fedlib.papers.fedlc.budget.PAPER_ESTIMATE`, measured 2026-11-24):
a Synthetic run (logistic regression, 100 clients, 300 rounds) costs ≈ 11 s, so Table 4's Synthetic
columns (105 runs, ≈ 25 CPU-min) run on this CPU; a CIFAR-10 run with the Table 9 CNN costs 3.75 ms per
client sample-epoch, ≈ 21 CPU-h at the paper's 400 rounds, and is "not run: needs a GPU" unless the
profile's device is ``cuda`` (``python -m fedlib.repro.regenerate --profile paper --device cuda``).

**Table 1's masked reading** (row ``mask/fedlc``: FedLC with ``fedlc_missing="mask"``, issue 49).  A profile's
``columns``, ``rows`` and ``seeds`` hold for a whole table (:func:`fedlib.repro.budget.gate.table_cells`; no row
has columns or seeds of its own), so the row runs wherever the FedLC row runs: ``quick``, the four CIFAR-10
columns on the FMNIST stand-in at seeds 0 and 1 (8 runs, ≈ 4 CPU-min; the headline reads only
``cifar10_beta0.5``; SVHN and CIFAR-100 are "not run: absent" as for every row); ``smoke`` leaves it out (its
Table 1 runs FedAvg and FedLC only); ``paper``, "not run: needs a GPU" like every CIFAR-10 cell on a CPU.
"""

from __future__ import annotations

from ...repro.spec.profiles import Profile, changed, merge_notes
from .budget import COST
from .deviations import NOTES
from .reported import SEEDS

__all__ = ["PAPER_PROFILE", "QUICK", "SMOKE", "PROFILES", "EXPERIMENTS", "EXPERIMENT_DATASETS", "MODEL_LABELS"]

#: Experiment names: one per paper table / figure (and the notebooks' own studies).
EXPERIMENTS = {
    "fig1": "Fig. 1: FedAvg under IID, Q(α) and D(β) skews (CIFAR-10)",
    "fig2": "Fig. 2: per-class accuracy before/after the local update vs class size",
    "fig3": "Fig. 3: two-client toy example (2-D Gaussians)",
    "deviation": "§3 Def. 3, Thm 1, 3: deviation bound D_jr and the update signs",
    "calibration": "§4: FedLC loss variants and τ sensitivity",
    "fig4": "Fig. 4: Q(α=4) and D(β=0.5) partitions of CIFAR-10 on 5 clients",
    "table4": "Table 4: Synthetic(α,β) and FEMNIST",
    "synthetic_alpha": "Synthetic(α,β): does α change the data?",
    "table1": "Table 1: D(β) on SVHN, CIFAR-10, CIFAR-100",
    "table2": "Table 2: Q(α) on CIFAR-10, CIFAR-100",
    "table3": "Table 3: ImageNet-subset",
    "fig5": "Fig. 5: accuracy curves FedLC vs FedRS",
    "fig6": "Fig. 6: per-class accuracy before/after aggregation, FedAvg vs FedLC",
    "fig7": "Fig. 7: t-SNE of missing / minority / majority classes",
    "table5": "Table 5: local epochs E",
    "table6": "Table 6: number of clients m",
    "table7": "Table 7: FedLC + Scaffold / FedProx",
    "stand_in": "Stand-in check: Tables 1-2's CIFAR-10 cells on CIFAR-10 itself, beside the profile's stand-in",
}

#: The paper's model for each dataset, for deviation lines.
MODEL_LABELS = {"cifar10": "Table 9 CNN", "svhn": "Table 9 CNN", "cifar100": "Table 9 CNN",
                "fmnist": "Table 8 CNN", "mnist": "Table 8 CNN"}

#: The paper datasets of the experiments that are not tables (for deviation lines).
EXPERIMENT_DATASETS = {
    "fig1": ("cifar10",), "fig2": ("cifar10",), "fig4": ("cifar10",), "fig5": ("imagenet_subset", "cifar10"),
    "fig6": ("cifar10",), "fig7": ("cifar10",), "deviation": ("cifar10",), "calibration": ("cifar10",),
    "synthetic_alpha": ("synthetic",), "fig3": (), "stand_in": ("cifar10",),
}

PAPER_PROFILE = Profile(
    name="paper",
    paper="fedlc",
    description="The paper's setup (§5.2-§5.6): 5 seeds, 400 rounds (300 for Synthetic), the full datasets, "
                "20 clients, batch 128, SGD lr 0.01, no weight decay.  Needs a GPU (days of CPU time).",
    seeds=SEEDS,
    datasets={},
    image={"eval_every": 10},
    synthetic={"eval_every": 10},
    experiments={
        "fig1": {"iid": True, "alphas": (2, 4, 6, 8), "betas": (0.05, 0.1, 0.2, 0.3, 0.5)},
        "fig2": {"dataset": "cifar10", "num_clients": 5, "partition_beta": 0.5,
                 "rounds": 400, "uses_seeds": False},
        "fig3": {"points_per_class": 400, "local_steps": 100, "rounds": 50, "std": 1.5, "tau": 3.0, "uses_seeds": False, "trains": False},
        "deviation": {"dataset": "cifar10", "partition_beta": 0.1, "pretrain_rounds": 50,
                      "epochs": 1, "uses_seeds": False},
        "calibration": {"settings": ("cifar10_alpha2", "cifar10_beta0.1", "cifar10_beta0.5"),
                        "taus": (0.1, 0.3, 1.0, 3.0, 10.0), "tau_setting": "cifar10_beta0.1"},
        "fig4": {"uses_seeds": False, "trains": False, "substitute": False},
        "synthetic_alpha": {"alphas": (0.0, 0.5, 1.0, 2.0), "betas": (0.0, 0.5, 1.0), "uses_seeds": False,
                            "trains": False},
        "fig5": {"settings": ("cifar10_alpha2", "cifar10_alpha4", "cifar10_beta0.1", "cifar10_beta0.3"),
                 "num_clients": 40},
        "fig6": {"dataset": "cifar10", "num_clients": 20, "partition_beta": 0.1,
                 "rounds": 400, "uses_seeds": False},
        "fig7": {"dataset": "cifar10", "num_clients": 20, "partition_beta": 0.1,
                 "rounds": 400, "tsne_samples": 300, "uses_seeds": False},
    },
    notes=NOTES,
    workers=2,  # the cells a CPU affords run one per core (a GPU is shared by the two)
    cost=COST,
)

QUICK = Profile(
    name="quick",
    paper="fedlc",
    description="A reduced setting for a 2-core CPU in about an hour: 1 seed (2 for Tables 1, 2, 4); CIFAR-10 "
                "replaced by FashionMNIST "
                "with the Table 8 CNN; a 6,000-sample training subset with batch 16 (so that every client still "
                "takes ≈19 local steps per round, as with the full data and batch 128); 15 rounds; 2,000 test "
                "samples; Synthetic as in the paper (300 rounds, 100 clients); a stand-in check runs a few "
                "Table 1-2 cells on CIFAR-10 itself with the Table 8 CNN.  SVHN and CIFAR-100 are absent "
                "here (not run).",
    seeds=(0,),
    datasets={"cifar10": "fmnist", "imagenet_subset": None},
    image={"rounds": 15, "max_train_samples": 6000, "max_test_samples": 2000, "batch_size": 16, "eval_every": 3},
    synthetic={"eval_every": 10},
    # the paper's experiments with fewer rounds / points, fewer settings, 20 clients in Fig. 5
    experiments=changed(PAPER_PROFILE.experiments, {
        "fig2": {"rounds": 15},
        "fig3": {"points_per_class": 200, "rounds": 20},
        "deviation": {"pretrain_rounds": 15},
        "calibration": {"settings": ("cifar10_alpha2", "cifar10_beta0.1")},
        "fig5": {"num_clients": 20},
        "fig6": {"rounds": 15},
        "fig7": {"rounds": 15, "tsne_samples": 200},
        "table1": {"seeds": (0, 1)},
        "table2": {"seeds": (0, 1)},
        "table4": {"seeds": (0, 1)},
        "table5": {"overrides": {"rounds": 10, "max_train_samples": 2000}},
        "table6": {"overrides": {"rounds": 15}},
        "stand_in": {"settings": ("cifar10_iid", "cifar10_beta0.1", "cifar10_beta0.5", "cifar10_alpha2"),
                     "methods": ("fedavg", "fedrs", "fedlc"), "seeds": (0, 1), "substitute": False,
                     "overrides": {"model": "cnn_mnist"}},
    }),
    explanations={"batch_size": "with the 6,000-sample subset each of 20 clients holds ~300 samples and so still "
                                "takes ≈19 local SGD steps per round at the paper's lr 0.01, as with the full data "
                                "(2,500 samples per client, batch 128)",
                  "model": "the Table 8 CNN (with 3 input channels) on CIFAR-10: the Table 9 CNN trains at "
                           "≈500 samples/s on 2 CPU cores, ~25× slower, too slow for this profile"},
    notes=merge_notes(NOTES, {
        "table3": ("the ImageNet subset with ResNet-18 is a GPU job: the quick profile leaves it out (the paper "
                   "profile runs it where the files are)",),
        "table5": ("Table 5: 10 rounds on a 2,000-sample subset (10 clients × ~200 samples, ≈13 steps per local "
                   "epoch): E = 20 costs 20× E = 1",),
        "fig5": ("Fig. 5 reuses Table 1/2 runs: 20 clients instead of the paper's 40.",),
        "fig6": ("the 'well-trained' global model is FedAvg after 15 rounds of the quick setting (the Table 1 "
                 "D(β=0.1) run)",),
        "fig7": ("the 'well-trained' global model is FedAvg after 15 rounds of the quick setting (the Table 1 "
                 "D(β=0.1) run)",),
    }),
    workers=2,
    budget_minutes=30,  # issue 24: the four quick profiles within two hours on 2 cores
)

SMOKE = Profile(
    name="smoke",
    paper="fedlc",
    description="A tiny setting that only checks that every notebook runs (CI): 1 seed, 2 rounds, "
                "FashionMNIST with 600 training and 200 test samples, a few grid points.  Its numbers mean nothing.",
    seeds=(0,),
    datasets={"cifar10": "fmnist", "imagenet_subset": None},
    image={"rounds": 2, "max_train_samples": 600, "max_test_samples": 200, "min_client_size": 2, "eval_every": 1},
    synthetic={"rounds": 2, "num_clients": 10, "eval_every": 1},
    experiments={
        "fig1": {"iid": True, "alphas": (2,), "betas": (0.1,)},
        "fig2": {"dataset": "cifar10", "num_clients": 5, "partition_beta": 0.5,
                 "rounds": 2, "uses_seeds": False},
        "fig3": {"points_per_class": 50, "local_steps": 20, "rounds": 3, "std": 1.5, "tau": 3.0, "uses_seeds": False, "trains": False},
        "deviation": {"dataset": "cifar10", "partition_beta": 0.1, "pretrain_rounds": 1,
                      "epochs": 1, "max_steps": 3, "uses_seeds": False},
        "calibration": {"settings": ("cifar10_beta0.1",), "taus": (0.3, 1.0), "tau_setting": "cifar10_beta0.1",
                        "variants": ("standard", "eq7_printed")},
        "fig4": {"uses_seeds": False, "trains": False, "substitute": False},
        "synthetic_alpha": {"alphas": (0.0, 1.0), "betas": (0.0, 1.0), "num_clients": 10, "uses_seeds": False,
                            "trains": False},
        "table1": {"columns": ("cifar10_beta0.05",), "rows": ("fedavg", "fedlc")},
        "table2": {"columns": ("cifar10_alpha2",), "rows": ("fedavg", "fedlc")},
        "table4": {"columns": ("synthetic_1_1",), "rows": ("fedavg", "fedlc")},
        "fig5": {"settings": ("cifar10_alpha2",), "num_clients": 20},
        "fig6": {"dataset": "cifar10", "num_clients": 10, "partition_beta": 0.1,
                 "rounds": 2, "uses_seeds": False},
        "fig7": {"dataset": "cifar10", "num_clients": 10, "partition_beta": 0.1,
                 "rounds": 2, "tsne_samples": 30, "uses_seeds": False},
        "table5": {"columns": ("cifar10_beta0.5",), "rows": ("E1/fedavg", "E1/fedlc", "E5/fedavg", "E5/fedlc")},
        "table6": {"columns": ("m10", "m30"), "rows": ("fedavg", "fedlc")},
        "table7": {"columns": ("cifar10_alpha5",)},
        "stand_in": {"settings": ("cifar10_iid", "cifar10_beta0.1"), "methods": ("fedavg", "fedlc"),
                     "substitute": False, "overrides": {"model": "cnn_mnist"}},
    },
    notes=merge_notes(NOTES, {"*": ("smoke profile: a run-everything check; the numbers mean nothing",)}),
    workers=1,
    budget_minutes=10,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (SMOKE, QUICK, PAPER_PROFILE)}
