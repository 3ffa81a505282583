"""The paper companions: one package per paper, found by discovery.

Each subpackage ``fedlib/papers/<name>/`` is the companion of one paper and
defines ``PAPER``, a :class:`fedlib.repro.spec.paper.Paper` (``Paper(name=..., tables=reported.TABLES,
profiles=profiles.PROFILES, ...)``, one keyword a field).
A companion has the same modules in every paper:

* ``reported`` -- the paper's numbers as data: ``TABLES``, ``METHOD_LABELS``, ``SETUP``, ``SEEDS`` and
  ``METHOD_ORDER`` (the paper's methods in its row order: :attr:`Paper.method_order`, from which
  :attr:`Paper.method_colors` gives every figure of the paper the same colour per method);
* ``deviations`` -- how fedlib departs from the paper: ``DEVIATIONS`` (one dict per departure: what,
  paper, code, fedlib, param) and ``NOTES`` (experiment -> the deviation lines every profile lists;
  ``"*"``: every experiment).  Read the same way in every paper: ``profiles`` imports ``NOTES`` and
  each profile's notes are ``NOTES`` or ``merge_notes(NOTES, {<its own lines>})``;
* ``profiles`` -- ``smoke``, ``quick``, ``paper`` (:class:`fedlib.repro.spec.profiles.Profile`);
* ``studies`` -- ``STUDIES``: every figure, ablation, sensitivity study and analysis that is not one of
  the paper's tables, each a :class:`fedlib.repro.spec.study.Study` declared as data (typed options, its
  cells, summary and findings), run by ``ctx.study(name)``; the tables are ``reported``'s and run by
  ``ctx.table(id)``;
* ``budget`` -- the paper profile's cost model from measured unit costs (``COST``, read by
  :func:`fedlib.repro.budget.gate.decide`: which cells a CPU affords, the rest "not run: needs a GPU") and its
  budget ladder;
* modules of its own, named after concepts (a study's build functions, its plots): none over 400 lines.
  A study's cell is a table's cell (``TABLE1.config(row, column)``) or the paper's setting with the
  study's parameters (``PAPER.base(dataset, **params)``), handed to the gate
  (:func:`fedlib.repro.budget.gate.decide`) with what the cell fixes after the profile as ``then``.

Its notebooks are ``notebooks/<name>/NN_<section>.ipynb`` (a parameters cell, calls into the companion,
a table or a figure; at most 40 code lines), each declared as a ``View`` in its ``__init__``, and its outputs
``figures/<name>/<profile>/``.  ``python -m fedlib.repro.new NAME`` scaffolds all three
(``docs/architecture.md#adding-a-paper``).

Adding a paper is adding one folder in each of those three places: neither the training core
nor the reproduction machinery (:mod:`fedlib.repro`) names a paper.
"""

import os

from ..repro.spec.paper import Paper, all_papers, get_paper

#: Further folders of companion packages (os.pathsep-separated), e.g. one scaffolded outside the repository
#: by ``python -m fedlib.repro.new NAME --root DIR`` (``DIR/fedlib/papers``): found as ``fedlib.papers.NAME``.
PAPERS_ENV = "FEDLIB_PAPERS"
__path__ = [*__path__, *(p for p in os.environ.get(PAPERS_ENV, "").split(os.pathsep) if p)]

__all__ = ["Paper", "all_papers", "get_paper"]
