"""The figure rules' names and errors: one :class:`FigureRuleError` subclass per rule (:data:`RULES`, in the order
they are checked), the limits the rules check against, and how a rule that is only reported is reported
(:func:`report`).  :mod:`fedlib.repro.artefacts.figure_rules` re-exports them."""

from __future__ import annotations

import json
import os
import warnings

__all__ = ["RULES", "ERRORS", "CELL_STATUSES", "MIN_FONT_PT", "MAX_WIDTH_PX", "FigureRuleError", "FigureRuleWarning",
           "ValueOutsideAxes", "StandInUnnamed", "CellUnlabelled", "SeriesAlike", "LegendCoversData",
           "ErrorBarsWithoutSeeds", "SeriesHidden", "AxesBlank", "TextIllegible", "GroupDropped", "DatasetUnnamed",
           "SeedsUnmarked", "ChanceUnflagged", "report"]


class FigureRuleError(ValueError):
    """A figure breaks a rule.  ``rule``: the first rule broken; ``violations``: every
    ``(rule, axes, what)`` found."""

    rule = ""

    def __init__(self, name: str, violations: list[tuple[str, str, str]]):
        self.figure = name
        self.violations = violations
        self.axes = violations[0][1] if violations else ""
        lines = "\n".join(f"  - {r} in {a}: {w}" for r, a, w in violations)
        super().__init__(f"figure {name!r} breaks the rule {self.rule!r} in {self.axes}; not saved "
                         f"(fedlib.repro.artefacts.figure_rules):\n{lines}")


class ValueOutsideAxes(FigureRuleError):
    rule = "values_within_axes"


class StandInUnnamed(FigureRuleError):
    rule = "stand_in_named"


class CellUnlabelled(FigureRuleError):
    rule = "cells_labelled"


class SeriesAlike(FigureRuleError):
    rule = "series_distinct"


class LegendCoversData(FigureRuleError):
    rule = "legend_clear"


class ErrorBarsWithoutSeeds(FigureRuleError):
    rule = "error_bars_seeds"


class SeriesHidden(FigureRuleError):
    rule = "series_visible"


class AxesBlank(FigureRuleError):
    rule = "axes_not_blank"


class TextIllegible(FigureRuleError):
    rule = "text_legible"


class GroupDropped(FigureRuleError):
    rule = "groups_shown"


class DatasetUnnamed(FigureRuleError):
    rule = "dataset_named"


class SeedsUnmarked(FigureRuleError):
    rule = "seeds_marked"


class ChanceUnflagged(FigureRuleError):
    rule = "chance_flagged"


class FigureRuleWarning(UserWarning):
    """A rule of :data:`REPORT_ONLY` is broken: reported, not raised."""


ERRORS = (ValueOutsideAxes, StandInUnnamed, CellUnlabelled, SeriesAlike, LegendCoversData, ErrorBarsWithoutSeeds,
           SeriesHidden, AxesBlank, TextIllegible, GroupDropped, DatasetUnnamed, SeedsUnmarked, ChanceUnflagged)
#: The rules, in the order they are checked.
RULES = tuple(e.rule for e in ERRORS)


#: The smallest font size (pt) of any text at the saved size.
MIN_FONT_PT = 7.0
#: The widest saved image (px).
MAX_WIDTH_PX = 3000
#: A cell's status -> what its label in the figure must contain ("zero": a number reading 0).
CELL_STATUSES = {"not run": "not run", "diverged": "diverged", "zero": None, "suspect": "†"}


def report(name: str, rule: str, violations: list[tuple[str, str]]) -> None:
    lines = "; ".join(f"{a}: {w}" for a, w in violations)
    warnings.warn(f"figure {name!r} breaks the rule {rule!r} (reported, not raised): {lines}", FigureRuleWarning,
                  stacklevel=3)
    path = os.environ.get("FEDLIB_FIGURE_REPORT")
    if path:
        with open(path, "a") as fh:
            for a, w in violations:
                fh.write(json.dumps({"figure": name, "notebook": os.environ.get("FEDLIB_NOTEBOOK", ""), "rule": rule,
                                     "axes": a, "what": w}) + "\n")
