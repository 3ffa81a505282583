"""The reproduction machinery: everything between a paper companion and its tables and figures.

The layer above the training core, in five sub-packages and two commands (nothing here names a paper,
and the training core never imports this package: ``tests/test_import_graph.py``):

* :mod:`.spec` -- what a paper reports and how we run it: reported values (``PaperTable``), a companion's
  descriptor and registry (``paper``), the profiles smoke / quick / paper, a study declared as data
  (``Study``), the shared definition of class roles;
* :mod:`.run` -- from cells to finished runs: the one gate (trains here, from the store, or not run, and
  why), grids on local processes or Ray, packs of runs in one process, chosen cells on a GPU, and the
  machine a number was computed on;
* :mod:`.budget` -- what a regeneration costs: unit costs, the plan, cold times, budget ladders;
* :mod:`.verdict` -- paper vs ours: verdicts that respect the noise, and the spreads they use (pure:
  results in, verdicts out);
* :mod:`.artefacts` -- tables and figures and where they came from: a paper table run and saved, a
  notebook's context, style, plots and their rules, saving with sidecars, views, the index;
* ``python -m fedlib.repro.regenerate`` (every notebook, then the index) and ``python -m
  fedlib.repro.lease`` (a GPU lease's one command).
"""

from .spec.reported import PaperTable
from .spec.study import Option, Options, Study, StudyResult

__all__ = ["PaperTable", "Study", "Option", "Options", "StudyResult"]
