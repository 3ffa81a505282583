"""Named settings for regenerating the FedLC paper: ``paper``, ``quick``, ``smoke``.

Every notebook takes all its settings from one profile, so the same notebook
reproduces the paper on a GPU (``paper``), shows the paper's effects on a
2-core laptop CPU within about an hour (``quick``) or just checks that
everything runs (``smoke``, seconds per notebook, for CI).

A profile is plain data (:class:`Profile`):

* ``seeds`` -- the seeds of every grid cell;
* ``datasets`` -- dataset substitutions: a paper dataset mapped to the one
  actually used (``None``: never run in this profile);
* ``image`` / ``synthetic`` -- configuration overrides for every run on an
  image dataset / on Synthetic(α, β) (rounds, training subset, …);
* ``experiments`` -- per experiment (a paper table or figure, see
  :data:`EXPERIMENTS`): grid restrictions (``columns``, ``rows``, ``taus``, …)
  and further overrides;
* ``notes`` -- extra deviation text per experiment.

:meth:`Profile.deviations` lists, for one experiment, every way the profile's
runs differ from the paper's setup; each table and figure prints that list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .papers.fedlc import reported as paper

__all__ = ["Profile", "PROFILES", "EXPERIMENTS", "get_profile", "DEFAULT_PROFILE"]

DEFAULT_PROFILE = "quick"

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

# How a configuration key is described in a deviation line: (text, paper value).
_KEY_TEXT = {
    "rounds": "{v} communication rounds (paper: {p})",
    "max_train_samples": "a seeded random subset of {v} training samples, split over the clients "
                         "(paper: the full training set)",
    "max_test_samples": "accuracy on a seeded random subset of {v} test samples (paper: the full test set)",
    "lr": "learning rate {v} (paper: {p})",
    "batch_size": "batch size {v} (paper: {p})",
    "num_clients": "{v} clients (paper: {p})",
    "local_epochs": "{v} local epochs (paper: {p})",
    "model": "model {v} (paper: the Table 9 CNN for CIFAR-10/100 and SVHN, the Table 8 CNN for (F)MNIST)",
}
_MODEL_OF = {"cifar10": "Table 9 CNN", "svhn": "Table 9 CNN", "cifar100": "Table 9 CNN",
             "fmnist": "Table 8 CNN", "mnist": "Table 8 CNN"}


def _dataset_label(name: str) -> str:
    return paper.DATASET_LABELS.get(name, name)


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    seeds: tuple[int, ...]
    datasets: dict[str, str | None] = field(default_factory=dict)
    image: dict[str, Any] = field(default_factory=dict)
    synthetic: dict[str, Any] = field(default_factory=dict)
    experiments: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    explanations: dict[str, str] = field(default_factory=dict)  # why a configuration key deviates
    workers: int = 1  # parallel worker processes for grids (1 = in-process)
    budget_minutes: float | None = None  # the wall-time target of a full regeneration

    # ------------------------------------------------------------------ settings
    def experiment(self, name: str) -> dict[str, Any]:
        """The settings of one experiment (a copy; ``{}`` when it has none)."""
        if name not in EXPERIMENTS:
            raise KeyError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")
        return dict(self.experiments.get(name, {}))

    def setting(self, experiment: str, key: str, default: Any = None) -> Any:
        return self.experiment(experiment).get(key, default)

    def seeds_for(self, experiment: str) -> tuple[int, ...]:
        return tuple(self.setting(experiment, "seeds", self.seeds))

    def dataset(self, name: str) -> str | None:
        """The dataset this profile uses for the paper's ``name`` (None: not run)."""
        return self.datasets.get(name, name)

    def config(self, base: dict, experiment: str | None = None, *,
               substitute: bool = True) -> tuple[dict | None, str]:
        """Turn a paper configuration into this profile's: substitute the dataset
        (unless ``substitute`` is False), apply the ``image``/``synthetic``
        overrides, then the experiment's ``overrides``.  Returns ``(config,
        note)``; ``config`` is None when the cell is not run here (``note`` says
        why)."""
        ds = base.get("dataset")
        if ds in paper.UNSUPPORTED_DATASETS:
            return None, f"not run: {paper.UNSUPPORTED_DATASETS[ds]}"
        used = self.dataset(ds) if substitute else ds
        if used is None:
            return None, f"not run: {_dataset_label(ds)} is not used by the {self.name!r} profile"
        cfg = dict(base)
        cfg["dataset"] = used
        cfg.update(self.synthetic if used == "synthetic" else self.image)
        if experiment is not None:
            extra = self.setting(experiment, "overrides", {})
            cfg.update(extra.get("synthetic" if used == "synthetic" else "image", {}) if
                       ("image" in extra or "synthetic" in extra) else extra)
        if used == "synthetic":
            cfg.pop("max_train_samples", None)  # Synthetic has generated clients
            cfg.pop("max_test_samples", None)
        note = "" if used == ds else f"{_dataset_label(ds)} → {_dataset_label(used)}"
        return cfg, note

    def table_cells(self, table_id: str) -> list[dict]:
        """Every cell of a paper table with this profile's configuration (or why it
        is not run): dicts with row, column, config (None if not run), note."""
        t = paper.table(table_id)
        opts = self.experiment(t.id)
        cols, rows = opts.get("columns"), opts.get("rows")
        out = []
        for r in t.rows:
            for c in t.columns:
                cfg, note = self.config(t.config(r.key, c.key), t.id)
                if cfg is not None and ((cols is not None and c.key not in cols)
                                        or (rows is not None and r.key not in rows)):
                    cfg, note = None, f"not run: grid reduced in the {self.name!r} profile"
                out.append({"row": r.key, "column": c.key, "config": cfg, "note": note})
        return out

    # ------------------------------------------------------------------ deviations
    def _override_lines(self, overrides: dict, reference: dict) -> list[str]:
        lines = []
        for key, value in overrides.items():
            if key in ("eval_every", "engine", "device"):
                continue
            ref = reference.get(key)
            if ref == value:
                continue
            text = _KEY_TEXT.get(key, "{k}={v} (paper: {p})")
            line = text.format(k=key, v=value, p=ref if ref is not None else "not stated")
            if key in self.explanations:
                line += ": " + self.explanations[key]
            lines.append(line)
        return lines

    def datasets_of(self, experiment: str) -> list[str]:
        """The paper datasets an experiment involves."""
        if experiment in paper.TABLES:
            return sorted({c.dataset for c in paper.TABLES[experiment].columns})
        return list(self.setting(experiment, "paper_datasets", _EXPERIMENT_DATASETS.get(experiment, ())))

    def deviations(self, experiment: str) -> list[str]:
        """Every way this profile's runs of ``experiment`` differ from the paper's setup."""
        opts = self.experiment(experiment)
        lines: list[str] = []
        seeds = self.seeds_for(experiment)
        if len(seeds) != len(paper.SEEDS) and opts.get("uses_seeds", True):
            lines.append(f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''} ({', '.join(map(str, seeds))}) "
                         f"instead of the paper's 5; std over seeds is "
                         f"{'not available' if len(seeds) < 2 else 'from ' + str(len(seeds)) + ' seeds'}")
        substitute = opts.get("substitute", True)
        for ds in self.datasets_of(experiment):
            if ds in paper.UNSUPPORTED_DATASETS:
                lines.append(f"{_dataset_label(ds)}: not run ({paper.UNSUPPORTED_DATASETS[ds]})")
                continue
            used = self.dataset(ds) if substitute else ds
            if used is None:
                lines.append(f"{_dataset_label(ds)}: not run in this profile")
            elif used != ds:
                lines.append(f"{_dataset_label(ds)} replaced by {_dataset_label(used)} "
                             f"({_MODEL_OF.get(used, 'default model')} instead of the "
                             f"{_MODEL_OF.get(ds, 'paper model')}) to fit the CPU budget")
        used = {self.dataset(d) if substitute else d for d in self.datasets_of(experiment)
                if d not in paper.UNSUPPORTED_DATASETS} - {None}
        reference = {**paper.SETUP, **(paper.TABLES[experiment].params if experiment in paper.TABLES else {})}
        if opts.get("trains", True):
            if used - {"synthetic"}:
                over = {**self.image, **self._exp_overrides(opts, "image")}
                rounds = opts.get("pretrain_rounds", opts.get("rounds"))
                if rounds is not None:
                    over["rounds"] = rounds
                for key in ("num_clients", "partition_beta", "partition_alpha"):
                    if key in opts and key not in reference:
                        reference = {**reference, key: None}
                lines += self._override_lines(over, reference)
            if "synthetic" in used:
                over = {**self.synthetic, **self._exp_overrides(opts, "synthetic")}
                lines += [f"Synthetic: {s}" for s in self._override_lines(over, reference)]
        if experiment in paper.TABLES:
            t = paper.TABLES[experiment]
            if opts.get("columns") is not None:
                dropped = [c.label for c in t.columns if c.key not in opts["columns"]
                           and c.dataset not in paper.UNSUPPORTED_DATASETS and self.dataset(c.dataset) is not None]
                if dropped:
                    lines.append("columns not run (grid reduced): " + ", ".join(dropped))
            if opts.get("rows") is not None:
                dropped = [f"{r.group} {r.label}".strip() for r in t.rows if r.key not in opts["rows"]]
                if dropped:
                    lines.append("rows not run (grid reduced): " + ", ".join(dropped))
        lines += list(self.notes.get("*", ())) + list(self.notes.get(experiment, ()))
        return lines

    @staticmethod
    def _exp_overrides(opts: dict, kind: str) -> dict:
        extra = opts.get("overrides", {})
        if "image" in extra or "synthetic" in extra:
            return dict(extra.get(kind, {}))
        return dict(extra)

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "seeds": list(self.seeds),
                "datasets": dict(self.datasets), "image": dict(self.image), "synthetic": dict(self.synthetic),
                "experiments": {k: dict(v) for k, v in self.experiments.items()},
                "notes": {k: list(v) for k, v in self.notes.items()}, "explanations": dict(self.explanations),
                "workers": self.workers,
                "budget_minutes": self.budget_minutes}


_EXPERIMENT_DATASETS = {
    "fig1": ("cifar10",), "fig2": ("cifar10",), "fig4": ("cifar10",), "fig5": ("imagenet_subset", "cifar10"),
    "fig6": ("cifar10",), "fig7": ("cifar10",), "deviation": ("cifar10",), "calibration": ("cifar10",),
    "synthetic_alpha": ("synthetic",), "fig3": (), "stand_in": ("cifar10",),
}

# Deviations of fedlib itself from the paper, true in every profile.
_ALWAYS = {
    "*": (),
    "fig3": ("Fig. 3 is a schematic in the paper; here it is measured on a two-client toy problem "
             "(2-D Gaussian classes, linear softmax model).",),
    "fig5": ("ImageNet-subset is not available: CIFAR-10 (or its stand-in) with FedLC vs FedRS is shown instead.",),
    "calibration": ("τ is not given in the paper; the sweep shows its effect.",),
}
_TAU_NOTE = "τ = 1.0 (not given in the paper; fedlib's default), local epochs E = 1 (not stated)"
for _exp in ("table1", "table2", "table4", "table6", "table7", "fig1", "fig5"):
    _ALWAYS[_exp] = _ALWAYS.get(_exp, ()) + (_TAU_NOTE,)
_ALWAYS["table5"] = ("τ = 1.0 (not given in the paper); rounds not stated in the paper (400 assumed)",)


def _merge_notes(*dicts: dict) -> dict:
    out: dict[str, tuple[str, ...]] = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, ()) + tuple(v)
    return out


def _changed(experiments: dict, changes: dict) -> dict:
    """``experiments`` with each experiment's settings updated by ``changes[name]``
    (experiments only in ``changes`` are added)."""
    return {name: {**experiments.get(name, {}), **changes.get(name, {})}
            for name in {**experiments, **changes}}


# ============================================================================ profiles
PAPER = Profile(
    name="paper",
    description="The paper's setup (§5.2-§5.6): 5 seeds, 400 rounds (300 for Synthetic), the full datasets, "
                "20 clients, batch 128, SGD lr 0.01, no weight decay.  Needs a GPU (days of CPU time).",
    seeds=paper.SEEDS,
    datasets={},
    image={"eval_every": 10},
    synthetic={"eval_every": 10},
    experiments={
        "fig1": {"iid": True, "alphas": (2, 4, 6, 8), "betas": (0.05, 0.1, 0.2, 0.3, 0.5)},
        "fig2": {"dataset": "cifar10", "num_clients": 5, "partition": "dirichlet", "partition_beta": 0.5,
                 "rounds": 400, "uses_seeds": False},
        "fig3": {"points_per_class": 400, "local_steps": 100, "rounds": 50, "std": 1.5, "tau": 3.0, "uses_seeds": False, "trains": False},
        "deviation": {"dataset": "cifar10", "partition": "dirichlet", "partition_beta": 0.1, "pretrain_rounds": 50,
                      "epochs": 1, "uses_seeds": False},
        "calibration": {"settings": ("cifar10_alpha2", "cifar10_beta0.1", "cifar10_beta0.5"),
                        "taus": (0.1, 0.3, 1.0, 3.0, 10.0), "tau_setting": "cifar10_beta0.1"},
        "fig4": {"uses_seeds": False, "trains": False, "substitute": False},
        "synthetic_alpha": {"alphas": (0.0, 0.5, 1.0, 2.0), "betas": (0.0, 0.5, 1.0), "uses_seeds": False,
                            "trains": False},
        "fig5": {"settings": ("cifar10_alpha2", "cifar10_alpha4", "cifar10_beta0.1", "cifar10_beta0.3"),
                 "num_clients": 40},
        "fig6": {"dataset": "cifar10", "num_clients": 20, "partition": "dirichlet", "partition_beta": 0.1,
                 "rounds": 400, "uses_seeds": False},
        "fig7": {"dataset": "cifar10", "num_clients": 20, "partition": "dirichlet", "partition_beta": 0.1,
                 "rounds": 400, "tsne_samples": 300, "uses_seeds": False},
    },
    notes=_ALWAYS,
    workers=1,
)

QUICK = Profile(
    name="quick",
    description="A reduced setting for a 2-core CPU in about an hour: 1 seed (2 for Tables 1, 2, 4); CIFAR-10 "
                "replaced by FashionMNIST "
                "with the Table 8 CNN; a 6,000-sample training subset with batch 16 (so that every client still "
                "takes ≈19 local steps per round, as with the full data and batch 128); 30 rounds; 2,000 test "
                "samples; Synthetic as in the paper (300 rounds, 100 clients); a stand-in check runs a few "
                "Table 1-2 cells on CIFAR-10 itself with the Table 8 CNN.  SVHN and CIFAR-100 are absent "
                "here (not run).",
    seeds=(0,),
    datasets={"cifar10": "fmnist"},
    image={"rounds": 30, "max_train_samples": 6000, "max_test_samples": 2000, "batch_size": 16, "eval_every": 3},
    synthetic={"eval_every": 10},
    # the paper's experiments with fewer rounds / points, fewer settings, 20 clients in Fig. 5
    experiments=_changed(PAPER.experiments, {
        "fig2": {"rounds": 30},
        "fig3": {"points_per_class": 200, "rounds": 20},
        "deviation": {"pretrain_rounds": 30},
        "calibration": {"settings": ("cifar10_alpha2", "cifar10_beta0.1")},
        "fig5": {"num_clients": 20},
        "fig6": {"rounds": 30},
        "fig7": {"rounds": 30, "tsne_samples": 200},
        "table1": {"seeds": (0, 1)},
        "table2": {"seeds": (0, 1)},
        "table4": {"seeds": (0, 1)},
        "table5": {"overrides": {"rounds": 10, "max_train_samples": 2000}},
        "table6": {"overrides": {"rounds": 20}},
        "stand_in": {"settings": ("cifar10_iid", "cifar10_beta0.1", "cifar10_beta0.5", "cifar10_alpha2"),
                     "methods": ("fedavg", "fedrs", "fedlc"), "seeds": (0, 1), "substitute": False,
                     "overrides": {"model": "cnn_mnist"}},
    }),
    explanations={"batch_size": "with the 6,000-sample subset each of 20 clients holds ~300 samples and so still "
                                "takes ≈19 local SGD steps per round at the paper's lr 0.01, as with the full data "
                                "(2,500 samples per client, batch 128)",
                  "model": "the Table 8 CNN (with 3 input channels) on CIFAR-10: the Table 9 CNN trains at "
                           "≈500 samples/s on 2 CPU cores, ~25× slower, too slow for this profile"},
    notes=_merge_notes(_ALWAYS, {
        "table5": ("Table 5: 10 rounds on a 2,000-sample subset (10 clients × ~200 samples, ≈13 steps per local "
                   "epoch): E = 20 costs 20× E = 1",),
        "fig5": ("Fig. 5 reuses Table 1/2 runs: 20 clients instead of the paper's 40.",),
        "fig6": ("the 'well-trained' global model is FedAvg after 30 rounds of the quick setting (the Table 1 "
                 "D(β=0.1) run)",),
        "fig7": ("the 'well-trained' global model is FedAvg after 30 rounds of the quick setting (the Table 1 "
                 "D(β=0.1) run)",),
    }),
    workers=2,
    budget_minutes=90,
)

SMOKE = Profile(
    name="smoke",
    description="A tiny setting that only checks that every notebook runs (CI): 1 seed, 2 rounds, "
                "FashionMNIST with 600 training and 200 test samples, a few grid points.  Its numbers mean nothing.",
    seeds=(0,),
    datasets={"cifar10": "fmnist"},
    image={"rounds": 2, "max_train_samples": 600, "max_test_samples": 200, "min_client_size": 2, "eval_every": 1},
    synthetic={"rounds": 2, "num_clients": 10, "eval_every": 1},
    experiments={
        "fig1": {"iid": True, "alphas": (2,), "betas": (0.1,)},
        "fig2": {"dataset": "cifar10", "num_clients": 5, "partition": "dirichlet", "partition_beta": 0.5,
                 "rounds": 2, "uses_seeds": False},
        "fig3": {"points_per_class": 50, "local_steps": 20, "rounds": 3, "std": 1.5, "tau": 3.0, "uses_seeds": False, "trains": False},
        "deviation": {"dataset": "cifar10", "partition": "dirichlet", "partition_beta": 0.1, "pretrain_rounds": 1,
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
        "fig6": {"dataset": "cifar10", "num_clients": 10, "partition": "dirichlet", "partition_beta": 0.1,
                 "rounds": 2, "uses_seeds": False},
        "fig7": {"dataset": "cifar10", "num_clients": 10, "partition": "dirichlet", "partition_beta": 0.1,
                 "rounds": 2, "tsne_samples": 30, "uses_seeds": False},
        "table5": {"columns": ("cifar10_beta0.5",), "rows": ("E1/fedavg", "E1/fedlc", "E5/fedavg", "E5/fedlc")},
        "table6": {"columns": ("m10", "m30"), "rows": ("fedavg", "fedlc")},
        "table7": {"columns": ("cifar10_alpha5",)},
        "stand_in": {"settings": ("cifar10_iid", "cifar10_beta0.1"), "methods": ("fedavg", "fedlc"),
                     "substitute": False, "overrides": {"model": "cnn_mnist"}},
    },
    notes=_merge_notes(_ALWAYS, {"*": ("smoke profile: a run-everything check; the numbers mean nothing",)}),
    workers=1,
    budget_minutes=10,
)

PROFILES: dict[str, Profile] = {p.name: p for p in (SMOKE, QUICK, PAPER)}


def get_profile(profile: str | Profile | None = None) -> Profile:
    """A profile by name (``None``: ``$FEDLIB_PROFILE`` or ``quick``); a Profile passes through."""
    import os

    if isinstance(profile, Profile):
        return profile
    name = profile or os.environ.get("FEDLIB_PROFILE") or DEFAULT_PROFILE
    if name not in PROFILES:
        raise KeyError(f"unknown profile {name!r}; known: {', '.join(PROFILES)}")
    return PROFILES[name]
