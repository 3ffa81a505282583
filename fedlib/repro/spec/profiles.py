"""Profiles: named settings for regenerating a paper: ``paper``, ``quick``, ``smoke``.

Every notebook takes all its settings from one profile of its paper
(:attr:`fedlib.repro.spec.paper.Paper.profiles`), so the same notebook reproduces the
paper on a GPU (``paper``), shows the paper's effects on a 2-core CPU within
an hour (``quick``) or just checks that everything runs (``smoke``, seconds
per notebook, for CI).

A profile is plain data (:class:`Profile`):

* ``seeds`` -- the seeds of every grid cell;
* ``datasets`` -- dataset substitutions: a paper dataset mapped to the one
  actually used (``None``: never run in this profile);
* ``image`` / ``synthetic`` -- configuration overrides for every run on an
  image dataset / on Synthetic(α, β) (rounds, training subset, …);
* ``per_dataset`` -- further overrides for every run on one dataset (keyed by
  the dataset actually used), after ``image``/``synthetic``: a paper whose
  datasets need different reductions (a cheap MLP on one, a CNN on another);
* ``experiments`` -- per experiment (a paper table or figure, see
  :attr:`fedlib.repro.spec.paper.Paper.experiments`): grid restrictions (``columns``,
  ``rows``, …) and further overrides;
* ``notes`` -- extra deviation text per experiment;
* ``cost`` / ``device`` / ``gpu_precision`` -- the ``paper`` profile's measured unit costs
  (:class:`fedlib.repro.budget.costs.CostModel`), where it trains, and the precision of the GPU runs its
  cells read from the store.  The profile only declares
  them: whether a cell trains here, comes from the store, or is "not run: needs a GPU
  (est. …)" is decided in one place, :func:`fedlib.repro.budget.gate.decide`, for tables and
  studies alike.

:meth:`Profile.deviations` lists, for one experiment, every way the profile's
runs differ from the paper's setup; each table and figure prints that list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Profile", "get_profile", "DEFAULT_PROFILE", "PROFILE_NAMES", "DEVICE_ENV", "merge_notes", "changed",
           "resolve_device"]

DEFAULT_PROFILE = "quick"
#: Where a profile without its own ``device`` trains (``cpu`` or ``cuda[:n]``).
DEVICE_ENV = "FEDLIB_DEVICE"
#: The profiles every paper has, from the most to the least expensive.
PROFILE_NAMES = ("paper", "quick", "smoke")

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
    "model": "model {v} (paper: {models})",
}
@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    seeds: tuple[int, ...]
    paper: str = ""  # the paper companion this profile belongs to (fedlib.papers)
    datasets: dict[str, str | None] = field(default_factory=dict)
    image: dict[str, Any] = field(default_factory=dict)
    synthetic: dict[str, Any] = field(default_factory=dict)
    per_dataset: dict[str, dict[str, Any]] = field(default_factory=dict)  # used dataset -> overrides
    experiments: dict[str, Any] = field(default_factory=dict)  # experiment -> its Settings (written as a dict)
    notes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    explanations: dict[str, str] = field(default_factory=dict)  # why a configuration key deviates
    workers: int = 1  # parallel worker processes for grids (1 = in-process)
    cpus_per_run: float = 1  # CPUs of each run's Ray task (executor "ray", fedlib.repro.run.executors)
    gpus_per_run: float = 0  # GPUs of each run's Ray task: a fraction where runs share a GPU
    budget_minutes: float | None = None  # the wall-time target of a full regeneration
    cost: Any = None  # fedlib.repro.budget.costs.CostModel: runs a CPU cannot afford are "not run: needs a GPU"
    device: str | None = None  # None: $FEDLIB_DEVICE, else cpu (see fedlib.repro.budget.costs)
    # the precision of the GPU runs a cell it cannot afford reads from the store (fedlib.repro.budget.gate): one a
    # profile, so that no cell mixes precisions and both rows of a comparison share one (docs/gpu_and_cluster.md)
    gpu_precision: str = "float32"

    def __post_init__(self):
        from ...precision import PRECISIONS
        from .settings import Settings

        object.__setattr__(self, "experiments", {
            name: Settings.parse(values, where=f"{self.paper} profile {self.name!r}, experiment {name!r}")
            for name, values in self.experiments.items()})

        if self.gpu_precision not in PRECISIONS:
            raise ValueError(f"gpu_precision of profile {self.name!r} must be one of {', '.join(PRECISIONS)}, "
                             f"got {self.gpu_precision!r}")

    # ------------------------------------------------------------------ settings
    @property
    def companion(self):
        """The :class:`fedlib.repro.spec.paper.Paper` this profile belongs to."""
        from .paper import get_paper

        return get_paper(self.paper)

    def experiment(self, name: str) -> dict[str, Any]:
        """The settings of one experiment, as the dict they were written as (``{}`` when it has none);
        :meth:`settings` gives the typed :class:`fedlib.repro.spec.settings.Settings`."""
        return dict(self.settings(name))

    def settings(self, name: str):
        """The typed settings of one experiment (:class:`fedlib.repro.spec.settings.Settings`)."""
        from .settings import Settings

        known = self.companion.experiments
        if name not in known:
            raise KeyError(f"unknown experiment {name!r} of {self.paper}; known: {', '.join(known)}")
        return self.experiments.get(name, Settings())

    def setting(self, experiment: str, key: str, default: Any = None) -> Any:
        return self.experiment(experiment).get(key, default)

    def seeds_for(self, experiment: str) -> tuple[int, ...]:
        return tuple(self.setting(experiment, "seeds", self.seeds))

    def dataset(self, name: str) -> str | None:
        """The dataset this profile uses for the paper's ``name`` (None: not run)."""
        return self.datasets.get(name, name)

    def resolve(self, base: dict, experiment: str | None = None, *,
                substitute: bool = True) -> tuple[dict | None, str]:
        """Turn a paper configuration into this profile's: substitute the dataset
        (unless ``substitute`` is False), apply the ``image``/``synthetic``
        overrides, the ``per_dataset`` ones, then the experiment's ``overrides``.  Returns ``(config,
        note)``; ``config`` is None when the profile never runs the cell (``note`` says why).  Pure:
        whether this machine can afford the cell, or the store holds it, is
        :func:`fedlib.repro.budget.gate.decide`'s question."""
        pp = self.companion
        ds = base.get("dataset")
        if ds in pp.unsupported:
            return None, f"not run: {pp.unsupported[ds]}"
        used = self.dataset(ds) if substitute else ds
        if used is None:
            return None, f"not run: {pp.dataset_label(ds)} is not used by the {self.name!r} profile"
        cfg = dict(base)
        cfg["dataset"] = used
        cfg.update(self.synthetic if used == "synthetic" else self.image)
        cfg.update(self.per_dataset.get(used, {}))
        if experiment is not None:
            extra = self.setting(experiment, "overrides", {})
            cfg.update(extra.get("synthetic" if used == "synthetic" else "image", {}) if
                       ("image" in extra or "synthetic" in extra) else extra)
        from ...data import DATASETS

        if used in DATASETS and DATASETS[used].natural_clients:
            cfg.pop("max_train_samples", None)  # its clients come with the data (Synthetic, FEMNIST)
            cfg.pop("max_test_samples", None)
        note = "" if used == ds else f"{pp.dataset_label(ds)} → {pp.dataset_label(used)}"
        return cfg, note

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
            models = ", ".join(f"the {m} for {self.companion.dataset_label(d)}"
                               for d, m in self.companion.model_labels.items()) or "not stated"
            line = text.format(k=key, v=value, p=ref if ref is not None else "not stated", models=models)
            if key in self.explanations:
                line += ": " + self.explanations[key]
            lines.append(line)
        return lines

    def datasets_of(self, experiment: str) -> list[str]:
        """The paper datasets an experiment involves."""
        pp = self.companion
        if experiment in pp.tables:
            return sorted({c.dataset for c in pp.tables[experiment].columns})
        return list(self.setting(experiment, "paper_datasets", pp.experiment_datasets.get(experiment, ())))

    def deviations(self, experiment: str) -> list[str]:
        """Every way this profile's runs of ``experiment`` differ from the paper's setup."""
        pp = self.companion
        opts = self.experiment(experiment)
        lines: list[str] = []
        seeds = self.seeds_for(experiment)
        if len(seeds) != len(pp.seeds) and opts.get("uses_seeds", True):
            lines.append(f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''} ({', '.join(map(str, seeds))}) "
                         f"instead of the paper's {len(pp.seeds)}; std over seeds is "
                         f"{'not available' if len(seeds) < 2 else 'from ' + str(len(seeds)) + ' seeds'}")
        substitute = opts.get("substitute", True)
        for ds in self.datasets_of(experiment):
            if ds in pp.unsupported:
                lines.append(f"{pp.dataset_label(ds)}: not run ({pp.unsupported[ds]})")
                continue
            used = self.dataset(ds) if substitute else ds
            if used is None:
                lines.append(f"{pp.dataset_label(ds)}: not run in this profile")
            elif used != ds:
                lines.append(f"{pp.dataset_label(ds)} replaced by {pp.dataset_label(used)} "
                             f"({pp.model_labels.get(used, 'default model')} instead of the "
                             f"{pp.model_labels.get(ds, 'paper model')}) to fit the CPU budget")
        used = {self.dataset(d) if substitute else d for d in self.datasets_of(experiment)
                if d not in pp.unsupported} - {None}
        reference = {**pp.setup, **(pp.tables[experiment].params if experiment in pp.tables else {})}
        if opts.get("trains", True):
            if used - {"synthetic"}:
                over = {**self.image, **self._exp_overrides(opts, "image")}
                rounds = opts.get("pretrain_rounds", opts.get("rounds"))
                if rounds is not None:
                    over["rounds"] = rounds
                for key in ("num_clients", "partition_beta", "partition_alpha"):
                    if key in opts and key not in reference:
                        reference = {**reference, key: None}
                # per dataset: the per_dataset keys, and keys the paper sets per column (its rounds, say)
                own = {k for d in used for k in self.per_dataset.get(d, {})} | \
                      {k for k in over if k not in reference and k in self._column_keys(experiment)}
                lines += self._override_lines({k: v for k, v in over.items() if k not in own}, reference)
                for d in sorted(used - {"synthetic"}):
                    mine = {k: v for k, v in {**over, **self.per_dataset.get(d, {})}.items() if k in own}
                    lines += [f"{pp.dataset_label(d)}: {s}" for s in
                              self._override_lines(mine, self._dataset_reference(experiment, d, reference))]
            if "synthetic" in used:
                over = {**self.synthetic, **self._exp_overrides(opts, "synthetic")}
                lines += [f"Synthetic: {s}" for s in self._override_lines(over, reference)]
        if experiment in pp.tables:
            t = pp.tables[experiment]
            if opts.get("columns") is not None:
                dropped = [c.label for c in t.columns if c.key not in opts["columns"]
                           and c.dataset not in pp.unsupported and self.dataset(c.dataset) is not None]
                if dropped:
                    lines.append("columns not run (grid reduced): " + ", ".join(dropped))
            if opts.get("rows") is not None:
                dropped = [f"{r.group} {r.label}".strip() for r in t.rows if r.key not in opts["rows"]]
                if dropped:
                    lines.append("rows not run (grid reduced): " + ", ".join(dropped))
        lines += list(self.notes.get("*", ())) + list(self.notes.get(experiment, ()))
        return lines

    def _table_of(self, experiment: str) -> str | None:
        """The paper table an experiment is (or reuses, by its ``table`` setting)."""
        tables = self.companion.tables
        return experiment if experiment in tables else self.setting(experiment, "table")

    def _column_keys(self, experiment: str) -> set:
        table = self._table_of(experiment)
        return {k for c in self.companion.tables[table].columns for k in c.params} if table else set()

    def _dataset_reference(self, experiment: str, dataset: str, reference: dict) -> dict:
        """The paper's values for runs on ``dataset``: ``reference`` and, for a table (or an
        experiment whose ``table`` setting names the table it reuses), the parameters of the
        table's first column on that dataset (e.g. its rounds)."""
        pp = self.companion
        table = self._table_of(experiment)
        if table in pp.tables:
            paper_ds = {d for d in self.datasets_of(experiment) if self.dataset(d) == dataset} or {dataset}
            cols = [c for c in pp.tables[table].columns if c.dataset in paper_ds]
            if cols:
                return {**reference, **cols[0].params}
        return reference

    @staticmethod
    def _exp_overrides(opts: dict, kind: str) -> dict:
        extra = opts.get("overrides", {})
        if "image" in extra or "synthetic" in extra:
            return dict(extra.get(kind, {}))
        return dict(extra)

    def to_dict(self) -> dict:
        return {"name": self.name, "paper": self.paper, "description": self.description, "seeds": list(self.seeds),
                "datasets": dict(self.datasets), "image": dict(self.image), "synthetic": dict(self.synthetic),
                "per_dataset": {k: dict(v) for k, v in self.per_dataset.items()},
                "experiments": {k: dict(v) for k, v in self.experiments.items()},
                "notes": {k: list(v) for k, v in self.notes.items()}, "explanations": dict(self.explanations),
                "workers": self.workers, "cpus_per_run": self.cpus_per_run, "gpus_per_run": self.gpus_per_run,
                "budget_minutes": self.budget_minutes,
                **({"device": self.resolved_device()} if self.cost is not None else {})}

    def resolved_device(self) -> str:
        """Where this profile's runs train: :attr:`device`, else ``$FEDLIB_DEVICE``, else cpu."""
        return resolve_device(self.device)


def resolve_device(device: str | None = None) -> str:
    """``device``, else ``$FEDLIB_DEVICE``, else ``"cpu"``; anything but ``cpu`` / ``cuda[:n]`` is an error."""
    import os

    value = device or os.environ.get(DEVICE_ENV) or "cpu"
    if value != "cpu" and not value.startswith("cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda' (or 'cuda:<n>'), got {value!r}")
    return value


def merge_notes(*dicts: dict) -> dict:
    """Deviation notes per experiment, concatenated in order (``"*"``: every experiment)."""
    out: dict[str, tuple[str, ...]] = {}
    for d in dicts:
        for k, v in d.items():
            out[k] = out.get(k, ()) + tuple(v)
    return out


def changed(experiments: dict, changes: dict) -> dict:
    """``experiments`` with each experiment's settings updated by ``changes[name]``
    (experiments only in ``changes`` are added): a profile written as "the paper's,
    with these changes"."""
    return {name: {**experiments.get(name, {}), **changes.get(name, {})}
            for name in {**experiments, **changes}}


def get_profile(profile: "str | Profile | None" = None, paper: str | None = None) -> Profile:
    """A profile by name of ``paper`` (None: ``$FEDLIB_PROFILE`` or ``quick``); a Profile passes through."""
    if isinstance(profile, Profile):
        return profile
    if paper is None:
        raise ValueError("get_profile needs the paper a profile name belongs to "
                         "(paper=<a companion in fedlib/papers/>)")
    from .paper import get_paper

    return get_paper(paper).profile(profile)
