"""The paper companions: one package per paper, found by discovery.

Each subpackage ``fedlib/papers/<name>/`` is the companion of one paper and
defines ``PAPER``, a :class:`fedlib.repro.paper.Paper`.  A companion has the same
modules in every paper: ``reported`` (the paper's numbers), ``profiles`` (smoke, quick,
paper), ``experiments`` (its grids), ``deviations`` (how its runs differ from the paper,
read by the profiles), ``plots`` (its figures), and optionally ``analysis``.  Its notebooks are
``notebooks/<name>/NN_<section>.ipynb`` and its outputs ``figures/<name>/<profile>/``.

Adding a paper is adding one folder in each of those three places: neither the training core
nor the reproduction machinery (:mod:`fedlib.repro`) names a paper.
"""

from ..repro.paper import Paper, all_papers, get_paper

__all__ = ["Paper", "all_papers", "get_paper"]
