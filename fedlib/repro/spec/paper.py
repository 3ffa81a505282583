"""A paper companion's descriptor (:class:`Paper`) and the registry that finds them.

Each subpackage ``fedlib/papers/<name>/`` is the companion of one paper and
defines ``PAPER``, a :class:`Paper`: the reported values (:mod:`fedlib.repro.spec.reported`
tables), the paper's profiles (``smoke``, ``quick``, ``paper``), its
experiments, labels, the method order and colours of its figures, and the method whose gain
the summary reports.  The registry finds them by discovery (:func:`all_papers`), by
package name only: the reproduction machinery imports no paper, and lists none.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Paper", "View", "all_papers", "get_paper", "COMPANIONS"]

#: The package whose subpackages are the paper companions.
COMPANIONS = "fedlib.papers"


@dataclass(frozen=True)
class View:
    """One notebook of a companion, as the reproduction machinery sees it: what it reads.  The cost
    plan of ``--only`` and the contract tests read these declarations, never the notebook's text
    (``tests/test_companions.py`` checks each against the calls in its notebook)."""

    notebook: str  # the file's stem in notebooks/<paper>/: "03_pfl_accuracy"
    tables: tuple[str, ...] = ()  # the paper tables it reproduces (ctx.table)
    studies: tuple[str, ...] = ()  # the studies it runs (ctx.study)
    ladder: bool = False  # it draws the paper's budget ladder


@dataclass(frozen=True)
class Paper:
    name: str  # the folder name in fedlib/papers/, notebooks/ and figures/
    title: str  # short, for the index: "FedLC (ICML 2022)"
    citation: str  # the full reference
    source: str  # the paper's text, relative to the shared papers folder
    tables: dict  # table id -> fedlib.repro.spec.reported.PaperTable
    profiles: dict  # profile name -> fedlib.repro.spec.profiles.Profile (smoke, quick, paper)
    experiments: dict[str, str]  # experiment id (a table or figure) -> what it is
    method_labels: dict[str, str]
    dataset_labels: dict[str, str] = field(default_factory=dict)
    setup: dict = field(default_factory=dict)  # the paper's common setting
    seeds: tuple[int, ...] = (0,)
    headline: tuple[str, str] | None = None  # (method, baseline): the gain the summary reports, e.g. FedLC − FedAvg
    experiment_datasets: dict[str, tuple[str, ...]] = field(default_factory=dict)  # for experiments that are not tables
    model_labels: dict[str, str] = field(default_factory=dict)  # dataset -> the paper's model, for deviation lines
    unsupported: dict[str, str] = field(default_factory=dict)  # dataset -> why its cells are never run
    metric: str = "test accuracy (%)"  # what the tables report
    notes: tuple[str, ...] = ()
    method_order: tuple[str, ...] = ()  # the paper's methods in its row order: their order and colours in figures
    reads: tuple[str, ...] = ()  # the companions whose outputs this one's notebooks read: regenerated before it
    # experiment -> the setting keys its companion code reads that are neither a FIELDS setting nor a study's option
    # (fedlib.repro.spec.settings: any other key in a profile fails at import)
    settings_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    views: tuple[View, ...] = ()  # its notebooks and what each reads (fedlib.repro.budget.plan reads them)

    def check(self) -> "Paper":
        """Check every profile's settings against the tables and studies
        (:func:`fedlib.repro.spec.settings.check_paper`); each companion's ``__init__`` calls it, so a
        misspelt key, a column the table lacks or a study option out of range fails at import."""
        from .settings import check_paper

        check_paper(self)
        return self

    def base(self, dataset: str | None = None, /, **params: Any) -> dict:
        """The paper's configuration of a cell that is not a table's: its common setting (:attr:`setup`)
        on ``dataset`` (None: the setting's own), with ``params`` on top.  A study hands it, or a table's
        cell (:meth:`fedlib.repro.spec.reported.PaperTable.config`), to the gate
        (:func:`fedlib.repro.budget.gate.decide`), which decides once what trains:

        >>> cfg, note = decide(profile, PAPER.base("cifar10", method="fedavg"), "fig1")  # doctest: +SKIP
        """
        return {**self.setup, **({} if dataset is None else {"dataset": dataset}), **params}

    def views_of(self, notebooks) -> list:
        """The declared :class:`View` s of the notebooks named (file stems), in declaration order."""
        stems = {notebooks} if isinstance(notebooks, str) else set(notebooks)
        return [v for v in self.views if v.notebook in stems]

    def table(self, table_id: Any):
        """A table by id (``"table1"``) or number (``1``)."""
        key = f"table{table_id}" if isinstance(table_id, int) or str(table_id).isdigit() else str(table_id)
        if key not in self.tables:
            raise KeyError(f"{self.name}: unknown table {table_id!r}; known: {', '.join(self.tables)}")
        return self.tables[key]

    @property
    def studies(self) -> dict:
        """The companion's studies (:class:`fedlib.repro.spec.study.Study`), by name: ``STUDIES`` of its
        ``studies`` module, read when first asked for (its studies import the companion, so the
        descriptor cannot hold them at construction); ``{}`` for a companion without one."""
        try:
            module = importlib.import_module(f"{COMPANIONS}.{self.name}.studies")
        except ModuleNotFoundError as err:
            if err.name != f"{COMPANIONS}.{self.name}.studies":
                raise
            return {}
        return {s.name: s for s in getattr(module, "STUDIES", ())}

    def study(self, name: str):
        """A study by name (:attr:`studies`)."""
        studies = self.studies
        if name not in studies:
            raise KeyError(f"{self.name}: unknown study {name!r}; known: {', '.join(studies) or 'none'}")
        return studies[name]

    def profile(self, name: str | None = None):
        """A profile by name (None: ``$FEDLIB_PROFILE`` or ``quick``); a
        :class:`fedlib.repro.spec.profiles.Profile` (anything not a name) passes through."""
        import os

        if name is not None and not isinstance(name, str):
            return name
        name = name or os.environ.get("FEDLIB_PROFILE") or "quick"
        if name not in self.profiles:
            raise KeyError(f"{self.name}: unknown profile {name!r}; known: {', '.join(self.profiles)}")
        return self.profiles[name]

    @property
    def method_colors(self) -> dict:
        """A fixed colour per method in every figure of this paper: :attr:`method_order` first,
        then every other registered method (:func:`fedlib.repro.spec.palette.method_colors`)."""
        from .palette import method_colors

        return method_colors(self.method_order)

    def dataset_label(self, name: str) -> str:
        from ...data import DATASETS

        if name in self.dataset_labels:
            return self.dataset_labels[name]
        return DATASETS[name].label if name in DATASETS else name

    def method_label(self, method: str) -> str:
        return self.method_labels.get(method, method)

    def plain_label(self, method: str) -> str:
        """A method's label without the paper's "(ours)" ("FedLC (ours)" → "FedLC"): where every series is ours,
        or in a gain's name."""
        return self.method_label(method).replace(" (ours)", "")

    def gain_label(self, method: str, baseline: str, sep: str = " − ") -> str:
        """"FedLC − FedAvg": a gain's name (the paper's own method without its "(ours)")."""
        return f"{self.plain_label(method)}{sep}{self.method_label(baseline)}"


def all_papers() -> dict[str, Paper]:
    """Every companion package's ``PAPER``, by name (sorted)."""
    out = {}
    companions = importlib.import_module(COMPANIONS)
    for info in sorted(pkgutil.iter_modules(companions.__path__), key=lambda m: m.name):
        if not info.ispkg or info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{COMPANIONS}.{info.name}")
        paper = getattr(module, "PAPER", None)
        if paper is not None:
            out[paper.name] = paper
    return out


def get_paper(name: str | Paper) -> Paper:
    if isinstance(name, Paper):
        return name
    papers = all_papers()
    if name not in papers:
        raise KeyError(f"unknown paper {name!r}; known: {', '.join(papers)}")
    return papers[name]
