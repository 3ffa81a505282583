"""What a notebook needs, from its parameters cell.

>>> ctx = Context("quick", notebook="fedlc/01_motivation")  # doctest: +SKIP
>>> ctx.save_figure(fig, "fig1_fedavg_skew", experiment="fig1", title="...")  # doctest: +SKIP

``notebook`` is ``"<paper>/<section>"``: the paper companion
(:mod:`fedlib.papers`) gives the profile and the experiments.  **Where outputs
go:** ``figures/<paper>/<profile>/`` unless ``out_dir`` is given, so running a
notebook under one profile never touches another profile's committed outputs;
a run with a ``seed`` other than the profile's goes to
``figures/<paper>/<profile>-seed<k>/``.  ``smoke`` and ``-seed`` folders are not
committed (``.gitignore``).  A figure or table saved as a ``placeholder`` (its
dataset is absent) never replaces a real one.

Every notebook computes with one torch thread and one BLAS/OpenMP thread, so
its numbers do not depend on the machine's core count or on how it was
launched (papermill, JupyterLab).  Saving returns nothing (cell outputs stay
the table or figure); the paths are in ``ctx.saved``.  An output of an
experiment the profile runs on a stand-in dataset says so in its caption, its
findings and its sidecar (``stand_in``; :func:`fedlib.repro.artefacts.comparison_text.mark_stand_in`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from .comparison_text import mark_stand_in
from .provenance import default_output_dir, relative_to_repo, repo_root, store_label
from .saving import save_figure, save_table
from .style import use_style
from ..run.grid import GridResult, default_store, run_grid
from ..spec.paper import get_paper
from ..verdict.spread import load_spread
from ..spec.study import StudyResult
from .tables import decided_seeds, parse_seeds, reproduce_table, with_decided

__all__ = ["Context"]


def _resolve_out(out_dir: str | os.PathLike) -> Path:
    """A relative ``out_dir`` is read from the repository root (the kernel runs in notebooks/<paper>/)."""
    path = Path(out_dir).expanduser()
    return path if path.is_absolute() else repo_root() / path


class Context:
    def __init__(self, profile: Any = None, *, notebook: str, seed: int | None = None,
                 out_dir: str | os.PathLike | None = None, store: Any = None, workers: int | None = None,
                 progress: bool = True, announce: bool = True, options: dict | None = None):
        paper_name, _, section = notebook.partition("/")
        if not section:
            raise ValueError(f"notebook must be '<paper>/<section>' (a companion in fedlib/papers/ and one of its "
                             f"notebooks, e.g. '<paper>/01_motivation'), got {notebook!r}")
        self.paper = get_paper(paper_name)
        prof = self.paper.profile(profile)
        changes: dict[str, Any] = {}
        if seed is not None:
            changes["seeds"] = (int(seed),)
            changes["experiments"] = {k: {kk: vv for kk, vv in v.items() if kk != "seeds"}
                                      for k, v in prof.experiments.items()}
        if workers is not None:
            changes["workers"] = int(workers)
        self.profile = dataclasses.replace(prof, **changes) if changes else prof
        self.notebook = notebook
        self.options = self._check_options(section, dict(options or {}))
        folder = prof.name if seed is None or (int(seed),) == tuple(prof.seeds) else f"{prof.name}-seed{int(seed)}"
        if self.options:  # a study run with options of its own never writes over the profile's outputs
            folder += "-options-" + hashlib.sha256(json.dumps(self.options, sort_keys=True, default=str)
                                                   .encode()).hexdigest()[:8]
        self.out_dir = _resolve_out(out_dir) if out_dir else default_output_dir(self.paper.name, folder)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.store = default_store() if store is None else store
        self.progress = progress
        self.spread = load_spread(self.out_dir)
        self.saved: dict[str, dict] = {}
        # table -> (seeds its cells hold, cells holding fewer of them, cells that ran, seeds every such cell holds)
        self._held: dict[str, tuple[list[int], int, int, set[int]]] = {}
        os.environ.setdefault("FEDLIB_NOTEBOOK", notebook)
        _one_thread()
        use_style()
        if announce:
            print(self.expected_time())

    def __repr__(self) -> str:
        store = getattr(self.store, "root", self.store)
        return (f"Context(paper={self.paper.name!r}, profile={self.profile.name!r}, seeds={self.profile.seeds}, "
                f"notebook={self.notebook!r}, out_dir='{relative_to_repo(self.out_dir)}', "
                f"store='{store_label(store) if store else store}')")

    def deviations(self, experiment: str) -> list[str]:
        return self.profile.deviations(experiment)

    def _meta(self, experiment: str | None, meta: dict) -> dict:
        meta.setdefault("profile", self.profile)
        meta.setdefault("paper", self.paper.name)
        meta.setdefault("notebook", self.notebook)
        if experiment is not None:
            meta.setdefault("experiment", experiment)
            meta.setdefault("deviations", self.profile.deviations(experiment))
            ran = meta.get("datasets")
            if ran is not None and not len(ran):  # nothing of ours trained on any dataset: no seeds to stamp
                meta.setdefault("seeds", [])
            held, fewer, cells, common = self._held.get(experiment, ([], 0, 0, set()))
            from_table = bool(held) and "seeds" not in meta
            if from_table:  # a table this context reproduced: the seeds its cells hold, not the profile's
                meta["seeds"] = held
                if fewer:  # some cells hold fewer (a diverged seed left out, a GPU cell): counted, not hidden
                    meta.setdefault("seeds_fewer", [fewer, cells])
            if self.profile.setting(experiment, "uses_seeds", True):
                meta.setdefault("seeds", self.seeds_of(experiment))
                added = {x for seeds in decided_seeds(self.out_dir, experiment).values() for x in seeds} \
                    if from_table else set(meta["seeds"]) if not isinstance(meta["seeds"], int) else set()
                some = sorted((added & set(meta["seeds"])) - set(self.profile.seeds_for(experiment))
                              - (common if from_table else set())) if not isinstance(meta["seeds"], int) else []
                if some:  # seeds decide added to some cells only: the stamp says so, not "seeds 0-4" everywhere
                    meta.setdefault("seeds_some", some)
        meta.setdefault("deviations", [])
        if self.options:  # the notebook's own study options: named beside every output they made
            meta.setdefault("study_options", self.options)
        return mark_stand_in(meta, self.profile, self.paper) if experiment is not None else meta

    def show(self, frame, **kwargs: Any):
        """A frame as a reader reads it (:func:`fedlib.repro.artefacts.views.reader_view`): columns in words,
        verdicts as words, no rows where nothing of ours ran, text never cut."""
        from .views import reader_view

        kwargs.setdefault("dataset_label", self.paper.dataset_label)
        return reader_view(frame, **kwargs)

    def seeds_of(self, experiment: str) -> tuple[int, ...]:
        """The seeds an experiment's outputs hold: the profile's, and for a table the seeds ``python -m
        fedlib.repro.decide`` added to some of its cells (``_decided.jsonl``), so a figure's stamp names them."""
        seeds = set(self.profile.seeds_for(experiment))
        if experiment in self.paper.tables:
            seeds |= {s for held in decided_seeds(self.out_dir, experiment).values() for s in held}
        return tuple(sorted(seeds))

    def save_figure(self, fig, name: str, *, experiment: str | None = None, placeholder: bool = False,
                    **meta: Any) -> None:
        """:func:`fedlib.repro.artefacts.saving.save_figure` into this notebook's folder; ``placeholder=True`` for a figure
        made without its data (it never replaces a real one).  Every axes plotting data must name the
        profile's stand-ins among ``datasets`` (:meth:`stand_ins`), unless it declared its own."""
        from .figure_rules import declare_stand_ins

        meta = self._meta(experiment, meta)
        declare_stand_ins(fig, self.stand_ins(meta.get("datasets")))
        self.saved[name] = save_figure(fig, name, self.out_dir, placeholder=placeholder, **meta) or {}

    def stand_ins(self, datasets) -> list[str]:
        """The datasets among ``datasets`` that this profile uses in place of a paper's dataset
        (``profile.datasets``): a figure showing them must name them (:mod:`fedlib.repro.artefacts.figure_rules`)."""
        subs = {used for ds, used in self.profile.datasets.items() if used is not None and used != ds}
        return sorted(subs & {str(d) for d in (datasets if datasets is not None else [])})

    def save_table(self, frame, name: str, *, experiment: str | None = None, placeholder: bool = False,
                   **meta: Any) -> None:
        self.saved[name] = save_table(frame, name, self.out_dir, placeholder=placeholder,
                                      **self._meta(experiment, meta)) or {}

    def table(self, table_id: str, **kwargs: Any) -> tuple[pd.DataFrame, GridResult]:
        """:func:`fedlib.repro.artefacts.tables.reproduce_table` under this context (saved as ``table<N>``)."""
        kwargs.setdefault("progress", self.progress)
        frame, grid = reproduce_table(table_id, self.profile, store=self.store, out_dir=self.out_dir,
                                      notebook=self.notebook, **kwargs)
        held = [set(parse_seeds(t)) for t in frame.get("ours_seeds", [])]
        held = [h for h in held if h]
        union = set.union(*held) if held else set()
        common = set.intersection(*held) if held else set()
        self._held[table_id] = (sorted(union), sum(h != union for h in held), len(held), common)
        return frame, grid

    def _check_options(self, section: str, options: dict) -> dict:
        """The notebook's ``options`` parameter (``papermill -y "options: {lambdas: [0.0, 1.0]}"``): each key an
        option of a study its View declares, else refused here, before anything trains, naming it."""
        if not options:
            return {}
        from ...params import ConfigError

        studies = [self.paper.study(s) for v in self.paper.views_of(section) for s in v.studies]
        declared = {o.name for study in studies for o in study.options}
        unknown = sorted(set(options) - declared)
        if unknown:
            raise ConfigError(f"options {unknown} are no option of the studies of {self.notebook}; declared: "
                              f"{', '.join(sorted(declared)) or 'none'}")
        return options

    def study(self, name: str, **options: Any) -> StudyResult:
        """Run one of the companion's studies (:class:`fedlib.repro.spec.study.Study`) under this context:
        its options (the profile's, then the notebook's ``options`` parameter, then ``options``), its cells
        through the gate and the store, its summary and findings."""
        study = self.paper.study(name)
        mine = {o.name for o in study.options}
        options = {**{k: v for k, v in self.options.items() if k in mine}, **options}
        opts = study.options_for(self.profile, **options).bound(self.store)
        grid = None
        if study.trains:
            cells = study.cells(self.profile, opts)
            if study.id in self.paper.tables:  # a study of a table's cells reads the seeds decide added to them too
                extra = with_decided(cells, decided_seeds(self.out_dir, study.id), self.profile.seeds_for(study.id))
                cells += [c for e in extra for c in e["added"]]
            grid = self.grid(cells, study.id)
        summary = study.summarize(grid, opts)
        return StudyResult(study, opts, summary, study.findings(summary, opts), grid)

    def save_study(self, result: StudyResult, name: str, frame: Any = None, *, caption: str | None = None,
                   **meta: Any) -> None:
        """Save a study's table (``frame``, default its summary): titled by the study, captioned by its
        ``doc`` unless ``caption`` is given, with its findings and the datasets its grid trained on."""
        if result.grid is not None and "dataset_used" in result.grid.runs:
            meta.setdefault("datasets", result.grid.runs.dataset_used.dropna().unique())
        meta.setdefault("title", result.study.title)
        self.save_table(result.summary if frame is None else frame, name, experiment=result.study.id,
                        caption=result.study.doc if caption is None else caption, findings=result.findings, **meta)

    def comparison_view(self, comparison: pd.DataFrame, **kwargs: Any):
        """A reproduced table (:meth:`table`'s comparison) as a styled DataFrame
        (:func:`fedlib.repro.artefacts.views.comparison_view`), stand-in datasets named by this paper's labels."""
        from .views import comparison_view

        return comparison_view(comparison, self.paper.dataset_label, **kwargs)

    def expected_time(self) -> str:
        """This notebook's expected wall time under the profile, printed when the context is made, before
        anything trains: under ``smoke``, that its numbers mean nothing; under a profile with a cost model
        (``paper``), the runs of its declared view (:attr:`fedlib.repro.spec.paper.Paper.views`) this CPU
        affords and those that need a GPU (:func:`fedlib.repro.budget.plan.plan`); otherwise the committed
        record of its last regeneration (:func:`fedlib.repro.budget.cold_times.estimate_minutes`)."""
        from ..budget.cold_times import estimate_minutes

        head = f"Expected time for {self.notebook} under the {self.profile.name!r} profile"
        section = self.notebook.partition("/")[2]
        if self.profile.name == "smoke":
            budget = f" (the profile's budget: {self.profile.budget_minutes:g} min for every notebook of the " \
                     "paper)" if self.profile.budget_minutes else ""
            return (f"{head}: seconds to a minute{budget}.  Smoke only checks that the notebook runs: its "
                    "numbers mean nothing.")
        if getattr(self.profile, "cost", None) is not None:
            return f"{head}: {self._planned(section)}"
        roots = [self.out_dir.parent.parent, repo_root() / "figures"]
        minutes, how = estimate_minutes(self.paper.name, self.profile, [section], roots)
        if minutes is None or how.startswith("the profile's budget"):
            return (f"{head}: unknown (no regeneration of it is recorded); runs already in the store take "
                    "seconds.")
        shown = f"{minutes * 60:.0f} s" if minutes < 1.5 else f"{minutes:.0f} min"
        return f"{head}: about {shown} on 2 CPU cores ({how}); runs already in the store take seconds."

    def _planned(self, section: str) -> str:
        """What the cost model plans for this notebook's view: the runs this machine trains, their time, and
        the runs it leaves to a GPU."""
        from ..budget.costs import format_hours
        from ..budget.plan import plan

        views = self.paper.views_of(section)
        if not views:
            return "not estimated (the notebook is not declared among its paper's views)."
        p = plan(self.paper.name, self.profile.name, store=getattr(self.store, "root", self.store), views=views)
        here = (f"{p['runs']} runs to train here (≈ {format_hours(p['wall_s'])} on {p['workers']} "
                f"worker{'s' if p['workers'] != 1 else ''})" if p["cpu_s"] is not None else f"{p['runs']} runs")
        if not p["not_run"]:
            return f"{here}, {p['stored']} already in the store."
        cost = f"; ≈ {p['not_run_cpu_s'] / 3600:.0f} CPU-h on one core" if p["not_run_cpu_s"] else ""
        return (f"{here}, {p['stored']} already in the store, {p['not_run']} not run here (each says why: a GPU's "
                f"cost or absent data{cost}).")

    def grid(self, cells: Iterable[dict], experiment: str, **kwargs: Any) -> GridResult:
        """:func:`fedlib.repro.run.grid.run_grid` with this profile's seeds (for ``experiment``), workers and
        resources per run."""
        kwargs.setdefault("seeds", self.profile.seeds_for(experiment))
        kwargs.setdefault("workers", self.profile.workers)
        kwargs.setdefault("cpus_per_run", self.profile.cpus_per_run)
        kwargs.setdefault("gpus_per_run", self.profile.gpus_per_run)
        kwargs.setdefault("progress", self.progress)
        kwargs.setdefault("desc", f"{self.paper.name} {experiment} ({self.profile.name})")
        return run_grid(cells, store=self.store, **kwargs)


_LIMITS: list = []


def _one_thread() -> None:
    """One torch thread and one BLAS/OpenMP thread for this process (see the module docstring)."""
    import torch

    torch.set_num_threads(1)
    if not _LIMITS:
        try:
            from threadpoolctl import threadpool_limits

            _LIMITS.append(threadpool_limits(limits=1))
        except ImportError:  # pragma: no cover - scikit-learn brings threadpoolctl
            pass
