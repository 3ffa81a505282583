"""The reproduction machinery: everything between a paper companion and its tables and figures.

The layer above the training core, in five sub-packages and two commands (nothing here names a paper,
and the training core never imports this package: ``tests/test_import_graph.py``):

* :mod:`.spec` -- what a paper reports and how we run it: reported values (``PaperTable``), a companion's
  descriptor and registry (``paper``), the profiles smoke / quick / paper, a study declared as data
  (``Study``), the shared definition of class roles;
* :mod:`.run` -- from cells to finished runs: grids on local processes or Ray, packs of runs in one process,
  chosen cells on a GPU, and the machine a number was computed on;
* :mod:`.budget` -- what a regeneration costs: the one gate (trains here, from the store, or not run, and
  why), unit costs, the plan, cold times, budget ladders;
* :mod:`.verdict` -- paper vs ours: verdicts that respect the noise, and the spreads they use (pure:
  results in, verdicts out);
* :mod:`.artefacts` -- tables and figures and where they came from: a paper table run and saved, a
  notebook's context, style, plots and their rules, saving with sidecars, views, the index;
* ``python -m fedlib.repro.regenerate`` (every notebook, then the index), ``python -m fedlib.repro.decide``,
  ``python -m fedlib.repro.new`` (a companion scaffolded) and ``python -m fedlib.repro.lease`` (a GPU lease's one
  command).

What a notebook uses is exported here (a notebook imports from ``fedlib.repro`` and from its own companion only:
``tests/test_notebooks.py``), each loaded when first asked for, so that importing the declarations stays light.
"""

import importlib

from .spec.reported import PaperTable
from .spec.study import Option, Options, Study, StudyResult

#: Name -> the module that defines it (a module itself where the name is one), loaded on first use.
_LAZY = {
    "Context": "fedlib.repro.artefacts.context", "figures": "fedlib.repro.artefacts.figures",
    "ladder": "fedlib.repro.artefacts.ladder", "claims_of": "fedlib.repro.artefacts.claims",
    "evaluate": "fedlib.repro.artefacts.claims", "findings": "fedlib.repro.artefacts.comparison_text",
    "table_cells": "fedlib.repro.budget.gate", "add_column_param": "fedlib.repro.verdict.compare",
    "gains": "fedlib.repro.verdict.compare", "summarize": "fedlib.repro.verdict.compare",
    "winners": "fedlib.repro.verdict.compare", "plot_gaps": "fedlib.repro.artefacts.gap_curves",
    "gap_caption": "fedlib.repro.artefacts.gap_curves",
}

__all__ = ["PaperTable", "Study", "Option", "Options", "StudyResult", *_LAZY]


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'fedlib.repro' has no attribute {name!r}")
    module = importlib.import_module(_LAZY[name])
    value = module if module.__name__.rsplit(".", 1)[-1] == name else getattr(module, name)
    globals()[name] = value
    return value
