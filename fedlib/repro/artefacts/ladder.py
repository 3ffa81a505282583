"""The budget ladder as a notebook uses it: :mod:`fedlib.repro.budget.ladder` (the rungs, their training, the
table and the finding) and its figure (:mod:`fedlib.repro.artefacts.ladder_figure`), in one namespace
(``from fedlib.repro import ladder as L``)."""

from __future__ import annotations

from ..budget.ladder import *  # noqa: F401,F403 -- the ladder's API, re-exported for the notebooks
from ..budget.ladder import __all__ as _budget_all
from .ladder_figure import compact_count, figure_caption, ladder_figure, rung_ticks  # noqa: F401

__all__ = [*_budget_all, "ladder_figure", "figure_caption", "compact_count", "rung_ticks"]
