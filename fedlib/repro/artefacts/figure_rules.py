"""The rules every saved figure obeys, checked on the live matplotlib ``Figure``.

:func:`fedlib.repro.artefacts.saving.save_figure` calls :func:`check_figure` before it writes
anything: a figure that breaks a rule is not saved, and the error (a subclass of
:class:`FigureRuleError`) names the rule and the axes.  The sidecar records the rules that
passed, ``"figure_checks": {rule: true, …}``.

The rules (:data:`RULES`, in the order they are checked):

``values_within_axes``
    Every finite plotted value (line vertices, scatter points, bar tops and bottoms,
    error-bar ends) lies within its axes' limits, and the value axis of a bar chart
    includes 0, so that bars start at zero -- unless the axis is marked as broken
    (:func:`mark_broken_axis`, which also draws the break marks): then the bars' bottoms
    may lie below the axis, their tops may not (so on a log axis, which has no 0).
``stand_in_named``
    An axes declared to show a stand-in dataset (``declare(ax, stand_in=…)``) names
    it in its title or legend (or the figure's title or legend).
``cells_labelled``
    Every declared cell that is not run, diverged, zero or a suspect paper value
    (``declare(ax, cells={key: status})``) has its label in the axes ("not run",
    "diverged", a value label reading 0, "†"), one per cell; an axes declared to show
    no result of ours (``declare(ax, ours=False)``) says "paper only".  Bars are checked
    without a declaration: a bar of height 0 needs a value label reading 0 over it, a bar
    whose height is not a number a label over it (a cell drawn as nothing is not allowed;
    :func:`label_empty_bars` writes both).
``series_distinct``
    No two series in one axes share colour, line style and marker (bars: colour and
    hatch).  Artists with the same (public) label are one series.
``legend_clear``
    No legend (of an axes or of the figure) covers data: after a draw, no line vertex,
    point on a line segment, scatter point, error-bar segment or bar lies inside a
    legend's window extent.
``error_bars_seeds``
    Error bars are drawn only where the values are means over >= 2 seeds (``seeds``
    from ``declare(ax, seeds=N)``, else the figure's), and the caption then says
    "std over N seeds".
``series_visible``
    No line series is drawn under another: where every drawn point of a line lies within
    the line width of a line drawn over it, the two are told apart by the lower one's
    markers (shape or fill differ), by a dashed upper line of another colour, or by one
    legend entry naming both (:func:`merge_coinciding`: "FedNova = FedAvg").
``axes_not_blank``
    An axes with its axis shown and nothing plotted (no finite point, bar, area, image)
    says what it would show and why it is empty (:func:`mark_empty`), or labels its
    declared cells.
``text_legible``
    At the saved size: no text below 7 pt, no two tick labels of an axis overlapping,
    the saved image at most 3,000 px wide.
``groups_shown``
    Every group (column, panel, setting) the plot declares it shows
    (``declare(ax, groups=…)``, :func:`label_groups`) is named in the axes (a tick
    label, text, title or legend) -- a group with no value of ours is labelled, not dropped.
``dataset_named``
    Every dataset the figure's runs trained on (``datasets`` of the sidecar) is named in
    the figure; :func:`save_figure <fedlib.repro.artefacts.saving.save_figure>` stamps
    "Trained on: …" under every figure (:func:`stamp_datasets`), so no plot can forget it.
``seeds_marked``
    A series declared with fewer seeds than the caption's "std over N seeds"
    (``declare(ax, series_seeds={name: n})``) is marked as such in the figure
    (:func:`seeds_label`: "FedLC (2 of 3 seeds)").
``chance_flagged``
    In an axes declared with a chance accuracy (``declare(ax, chance=10)``), a value at
    or below chance (+ ``chance_margin``) is flagged by a text saying "chance"
    (:func:`mark_chance` draws the level and says so).

Rules in :data:`REPORT_ONLY` warn (:class:`FigureRuleWarning`) instead of raising and are
recorded false in the sidecar; ``FEDLIB_FIGURE_REPORT`` (a path) also appends each such
violation to that file as a JSON line.

Declaring what an axes shows (the checker cannot see it in the artists)::

    from fedlib.repro.artefacts.figure_rules import declare, label_cell, mark_broken_axis

    declare(ax, stand_in="fmnist", seeds=1)           # this panel's runs are on FMNIST
    declare(ax, cells={"FEDIC, D_aux = 400": "diverged"})
    label_cell(ax, 400, 10, "diverged")              # draws the label (and declares the cell)
    declare(ax, ours=False); ax.set_title("SVHN (paper only)")
    mark_broken_axis(ax, "y")                        # bars may start below the visible range
    merge_coinciding(ax); ax.legend()                # "FedNova = FedAvg": one legend entry
    mark_empty(ax, "FEDIC on SVHN", "not run under this profile")
    label_groups(ax, ["CIFAR-10", "SVHN"], without=["SVHN"])
    mark_chance(ax, 10.0)                            # a baseline at chance is flagged
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

__all__ = ["RULES", "REPORT_ONLY", "CELL_STATUSES", "MIN_FONT_PT", "MAX_WIDTH_PX", "FigureRuleError",
           "FigureRuleWarning", "ValueOutsideAxes", "StandInUnnamed", "CellUnlabelled", "SeriesAlike",
           "LegendCoversData", "ErrorBarsWithoutSeeds", "SeriesHidden", "AxesBlank", "TextIllegible", "GroupDropped",
           "DatasetUnnamed", "SeedsUnmarked", "ChanceUnflagged", "declare", "declare_stand_ins", "facts",
           "label_cell", "label_empty_bars", "std_caption", "mark_broken_axis", "merge_coinciding", "mark_empty",
           "why_empty", "label_groups", "seeds_label", "mark_chance", "stamp_datasets", "check_figure"]


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


_ERRORS = (ValueOutsideAxes, StandInUnnamed, CellUnlabelled, SeriesAlike, LegendCoversData, ErrorBarsWithoutSeeds,
           SeriesHidden, AxesBlank, TextIllegible, GroupDropped, DatasetUnnamed, SeedsUnmarked, ChanceUnflagged)
#: The rules, in the order they are checked.
RULES = tuple(e.rule for e in _ERRORS)
#: Rules that warn instead of raising (figures the companions made before the rule existed).
REPORT_ONLY: set[str] = set()
#: The smallest font size (pt) of any text at the saved size.
MIN_FONT_PT = 7.0
#: The widest saved image (px).
MAX_WIDTH_PX = 3000
#: A cell's status -> what its label in the figure must contain ("zero": a number reading 0).
CELL_STATUSES = {"not run": "not run", "diverged": "diverged", "zero": None, "suspect": "†"}
_OK_STATUSES = {"ok", "value", ""}
_ALIASES = {"fmnist": ("fashionmnist", "fashion-mnist", "fmnist"), "cifar10": ("cifar-10", "cifar10"),
            "cifar100": ("cifar-100", "cifar100")}
_ZERO = re.compile(r"^[+\-−±]?\s*0+(?:[.,]0+)?\s*(?:%|pp|\s*pp)?$")


# ------------------------------------------------------------------------ declarations
@dataclass
class AxesFacts:
    """What an axes shows that its artists cannot tell (set by :func:`declare`)."""

    stand_in: tuple[str, ...] = ()  # datasets actually used in place of the paper's
    stand_in_declared: bool = False  # declared (possibly as none): figure-wide stand-ins do not apply
    cells: dict[str, str] = field(default_factory=dict)  # cell key -> status (CELL_STATUSES or "ok")
    ours: bool = True  # False: the axes plots only the paper's values
    seeds: int | None = None  # the number of seeds its means are taken over
    broken: set[str] = field(default_factory=set)  # "x" / "y": axes marked as broken
    coinciding: list[tuple[tuple, str]] = field(default_factory=list)  # (lines drawn as one, their legend text)
    empty: str = ""  # the text saying what an axes without data would show and why it is empty
    groups: tuple[str, ...] = ()  # the groups (columns, settings) the axes shows
    series_seeds: dict[str, int] = field(default_factory=dict)  # series name -> seeds its means are over
    chance: float | None = None  # chance accuracy of the axes' dataset (same unit as the values)
    chance_margin: float = 1.0  # a value <= chance + margin "sits at chance"


_ATTR = "_fedlib_figure_facts"


def facts(ax) -> AxesFacts:
    """The declarations of ``ax`` (created empty on first use)."""
    found = getattr(ax, _ATTR, None)
    if found is None:
        found = AxesFacts()
        setattr(ax, _ATTR, found)
    return found


def _names(datasets: str | Iterable[str] | None) -> tuple[str, ...]:
    if datasets is None:
        return ()
    return (datasets,) if isinstance(datasets, str) else tuple(datasets)


def declare(ax, *, stand_in: str | Iterable[str] | None = None, cells: dict[str, str] | None = None,
            ours: bool | None = None, seeds: int | None = None, groups: Iterable[str] | None = None,
            series_seeds: dict[str, int] | None = None, chance: float | None = None,
            chance_margin: float | None = None):
    """Declare what ``ax`` shows, for the rules.

    ``stand_in``: the dataset(s) (a token such as ``"fmnist"`` or a label) actually used
    for the axes' cells in place of the paper's; ``cells``: ``{cell: status}`` with a status
    of :data:`CELL_STATUSES` (or ``"ok"``); ``ours=False``: the axes has no result of ours;
    ``seeds``: the number of seeds its means (and error bars) are taken over; ``groups``: the
    groups (the paper's columns, settings) it shows, each to be named in it;
    ``series_seeds``: ``{series: seeds}`` of series over fewer seeds than the rest;
    ``chance``: the chance accuracy of its dataset, ``chance_margin`` how close to it a value
    "sits at chance" (default 1).  Repeated calls add to earlier ones.  Returns ``ax``."""
    f = facts(ax)
    if stand_in is not None:
        f.stand_in = tuple(dict.fromkeys(f.stand_in + _names(stand_in)))
        f.stand_in_declared = True
    for key, status in (cells or {}).items():
        if status not in CELL_STATUSES and status not in _OK_STATUSES:
            raise ValueError(f"cells[{key!r}]: status must be one of {', '.join(map(repr, CELL_STATUSES))} or 'ok', "
                             f"got {status!r}")
        f.cells[str(key)] = status
    if ours is not None:
        f.ours = bool(ours)
    if seeds is not None:
        if int(seeds) < 1:
            raise ValueError(f"seeds must be an integer >= 1, got {seeds!r}")
        f.seeds = int(seeds)
    if groups is not None:
        f.groups = tuple(dict.fromkeys(f.groups + tuple(str(g) for g in groups)))
    for key, n in (series_seeds or {}).items():
        if int(n) < 1:
            raise ValueError(f"series_seeds[{key!r}] must be an integer >= 1, got {n!r}")
        f.series_seeds[str(key)] = int(n)
    if chance is not None:
        if not (math.isfinite(chance) and chance >= 0):
            raise ValueError(f"chance must be a finite number >= 0, got {chance!r}")
        f.chance = float(chance)
    if chance_margin is not None:
        if not (math.isfinite(chance_margin) and chance_margin >= 0):
            raise ValueError(f"chance_margin must be a finite number >= 0, got {chance_margin!r}")
        f.chance_margin = float(chance_margin)
    return ax


def std_caption(seeds: int | None) -> str:
    """The caption sentence that error bars over ``seeds`` seeds need ("" below 2 seeds,
    where no error bars may be drawn)."""
    return f"Error bars: std over {int(seeds)} seeds." if seeds is not None and seeds >= 2 else ""


def declare_stand_ins(fig, stand_ins: Iterable[str]) -> None:
    """Declare ``stand_ins`` (datasets used in place of the paper's somewhere in ``fig``) on
    every axes of ``fig`` that plots data of ours and declared no stand-in of its own: each must then
    name them (its title or legend, or the figure's).  :class:`fedlib.repro.artefacts.context.Context`
    does this with the profile's substitutions among the figure's ``datasets``."""
    names = tuple(stand_ins)
    if not names:
        return
    for ax in fig.axes:
        if _has_data(ax) and facts(ax).ours and not facts(ax).stand_in_declared:
            declare(ax, stand_in=names)


def label_cell(ax, x: float, y: float, status: str, *, key: str | None = None, text: str | None = None,
               **text_kw: Any):
    """Draw the label of a cell that has no bar or point to show (``status`` one of
    :data:`CELL_STATUSES`) at data position ``(x, y)`` and declare the cell; ``text`` replaces
    the default label ("not run", "diverged", "0", "†").  It is drawn above the data on a white
    ground, so that curves passing through it hide no letter.  Returns the Text."""
    if status not in CELL_STATUSES:
        raise ValueError(f"status must be one of {', '.join(map(repr, CELL_STATUSES))}, got {status!r}")
    label = text if text is not None else (CELL_STATUSES[status] or "0")
    # above every line and marker, on a white ground: a label drawn where curves pass stays readable
    kw = {"ha": "center", "va": "bottom", "fontsize": 7, "color": "0.25", "clip_on": False, "zorder": 10,
          "bbox": {"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85}}
    kw.update(text_kw)
    artist = ax.text(x, y, label, **kw)
    f = facts(ax)
    f.cells[key if key is not None else f"cell {len(f.cells) + 1} at ({x:g}, {y:g})"] = status
    return artist


def label_empty_bars(ax, missing: str = "not run", *, fmt: str = "0", **text_kw: Any) -> int:
    """Label every bar of ``ax`` that draws nothing: a bar of height 0 with ``fmt`` ("0"),
    a bar whose height is not a number with ``missing`` ("not run", "diverged", …), at the
    bar's base.  Returns how many bars were labelled."""
    kw = {"fontsize": 7, "color": "0.25", "clip_on": False}
    kw.update(text_kw)
    n = 0
    for c, orient in _bars(ax):
        for p in c.patches:
            h = p.get_height() if orient == "vertical" else p.get_width()
            if math.isfinite(h) and h != 0:
                continue
            text = fmt if math.isfinite(h) else missing
            if orient == "vertical":
                x = p.get_x() + p.get_width() / 2
                base = p.get_y() if math.isfinite(p.get_y()) else 0.0
                # upright: a bar is narrower than a word ("n/a" beside "n/a" read "n/an/a")
                ax.text(x, base, text, ha="center", va="bottom", rotation=0 if len(text) <= 1 else 90, **kw)
                if not math.isfinite(h):  # matplotlib sets no limit for a bar without a value: its place
                    ax.update_datalim([(p.get_x(), base), (p.get_x() + p.get_width(), base)], updatey=False)
            else:
                y = p.get_y() + p.get_height() / 2
                base = p.get_x() if math.isfinite(p.get_x()) else 0.0
                ax.text(base, y, text, ha="left", va="center", **kw)
                if not math.isfinite(h):
                    ax.update_datalim([(base, p.get_y()), (base, p.get_y() + p.get_height())], updatex=False)
            n += 1
    ax.autoscale_view()
    return n


def mark_broken_axis(ax, axis: str = "y"):
    """Mark ``ax``'s ``axis`` ("x" or "y") as broken: its range need not include 0, and bars
    may start below it.  Draws the usual break marks (two short slanted strokes) at the
    axis' lower end so that the reader sees it.  Returns ``ax``."""
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    facts(ax).broken.add(axis)
    d = 0.012
    kw = {"transform": ax.transAxes, "color": "0.2", "clip_on": False, "lw": 1.0}
    for off in (-d, d):
        if axis == "y":
            ax.plot([-2 * d, 2 * d], [off + 0.02 - d, off + 0.02 + d], **kw)
        else:
            ax.plot([off + 0.02 - d, off + 0.02 + d], [-2 * d, 2 * d], **kw)
    return ax


def merge_coinciding(ax, names: dict | None = None, *, sep: str = " = ") -> list[str]:
    """Give every group of line series of ``ax`` drawn within a line width of one another over
    their whole length and not told apart (the ``series_visible`` test) one legend entry naming them all, e.g.
    "FedNova = FedAvg": the top line takes it as its label, the others' labels are hidden,
    and the group is declared.  ``names``: ``{line: name}`` for lines without a public
    label.  Returns the entries (a plot that builds its legend by hand must show them)."""
    ax.figure.canvas.draw()
    lines = _drawn_lines(ax)
    parent = list(range(len(lines)))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i, a in enumerate(lines):
        for j in range(i + 1, len(lines)):
            if not _told_apart(a, lines[j]) and (_covered(a, lines[j], ax) or _covered(lines[j], a, ax)):
                parent[root(j)] = root(i)
    groups: dict[int, list] = {}
    for i, ln in enumerate(lines):
        groups.setdefault(root(i), []).append(ln)
    texts = []
    for group in (g for g in groups.values() if len(g) > 1):
        named = [(names or {}).get(ln, ln.get_label()) for ln in group]
        unnamed = [i for i, n in enumerate(named) if not _public(n)]
        if unnamed:
            raise ValueError(f"names: lines {unnamed} of a coinciding group have no public label; "
                             f"pass names={{line: name}}")
        text = sep.join(dict.fromkeys(reversed(named)))  # the top line first
        group[-1].set_label(text)
        for ln in group[:-1]:
            ln.set_label("_" + ln.get_label().lstrip("_"))
        facts(ax).coinciding.append((tuple(group), text))
        texts.append(text)
    return texts


def mark_empty(ax, shows: str, why: str, **text_kw: Any):
    """Write in an axes without data what it would show and why it is empty
    ("FEDIC on SVHN: not run under the quick profile") and declare it.  Returns the Text."""
    for param, value in (("shows", shows), ("why", why)):
        if not str(value).strip():
            raise ValueError(f"{param} must say what the axes would show and why it is empty, got {value!r}")
    text = f"{shows}:\n{why}"
    kw = {"ha": "center", "va": "center", "fontsize": 8, "color": "0.3", "wrap": True, "transform": ax.transAxes}
    kw.update(text_kw)
    facts(ax).empty = text
    return ax.text(0.5, 0.5, text, **kw)


def why_empty(grid, profile: str) -> str:
    """Why a study's grid has nothing to draw, for :func:`mark_empty`: its first cell's note (a GPU's, an
    absent dataset's), else that the profile does not run it."""
    runs = getattr(grid, "runs", None)
    notes = [] if runs is None or "note" not in runs else [str(n) for n in runs["note"] if isinstance(n, str) and n.strip()]
    return notes[0] if notes else f"not run under the '{profile}' profile"


def label_groups(ax, groups: Iterable[str], without: Iterable[str] = (), *, axis: str = "x",
                 status: str = "not run", **text_kw: Any) -> dict[str, int]:
    """Put every group of ``groups`` (the paper's columns or settings) on ``axis`` at 0, 1, …
    and label each of ``without`` (no value of ours) in place with ``status``; declares the
    groups.  Returns ``{group: position}``."""
    from matplotlib.transforms import blended_transform_factory

    groups = [str(g) for g in groups]
    missing = [str(g) for g in without if str(g) not in groups]
    if missing:
        raise ValueError(f"without: {missing} are not among groups {groups}")
    if axis not in ("x", "y"):
        raise ValueError(f"axis must be 'x' or 'y', got {axis!r}")
    pos = {g: i for i, g in enumerate(groups)}
    (ax.set_xticks if axis == "x" else ax.set_yticks)(range(len(groups)), groups)
    for g in without:
        if axis == "x":
            kw = {"transform": blended_transform_factory(ax.transData, ax.transAxes), "rotation": 90,
                  "va": "bottom"}
            xy = (pos[str(g)], 0.03)
        else:
            kw = {"transform": blended_transform_factory(ax.transAxes, ax.transData), "ha": "left",
                  "va": "center"}
            xy = (0.03, pos[str(g)])
        kw.update(text_kw)
        label_cell(ax, *xy, status, key=str(g), **kw)
    declare(ax, groups=groups)
    return pos


def seeds_label(name: str, n: int, total: int) -> str:
    """A series' legend label saying it has fewer seeds than the rest ("FedLC (2 of 3 seeds)")."""
    if n < 1 or total < 1:
        raise ValueError(f"n and total must be >= 1, got n={n!r}, total={total!r}")
    return f"{name} ({n} of {total} seeds)" if n < total else name


def mark_chance(ax, level: float, *, margin: float | None = None, text: str | None = None, **text_kw: Any):
    """Draw the chance accuracy ``level`` of ``ax``'s dataset (a dotted line, labelled "chance")
    and declare it, so that a value sitting at chance is seen as such.  Returns the Text."""
    declare(ax, chance=level, chance_margin=margin)
    ax.axhline(level, color="0.5", ls=":", lw=1.0, zorder=0.5)
    kw = {"ha": "right", "va": "bottom", "fontsize": 7, "color": "0.35",
          "transform": ax.get_yaxis_transform()}
    kw.update(text_kw)
    return ax.text(0.99, level, text if text is not None else f"chance ({level:g})", **kw)


_STAMP = "fedlib-datasets"


def stamp_datasets(fig, datasets: Iterable[str] | None, stand_in: dict[str, str] | None = None):
    """Write "Trained on: …" (the datasets' labels; a stand-in followed by "in place of" the
    paper's) under everything else in ``fig``, replacing an earlier stamp.  Nothing for no
    datasets.  Returns the Text or None."""
    from matplotlib.text import Text

    from ...data import DATASETS

    for t in fig.findobj(Text):
        if t.get_gid() == _STAMP:
            t.remove()
    names = sorted(dict.fromkeys(str(d) for d in (datasets if datasets is not None else []) if d is not None))
    if not names:
        return None
    instead = {}
    for paper_ds, used in (stand_in or {}).items():
        instead.setdefault(str(used), []).append(DATASETS[paper_ds].label if paper_ds in DATASETS else str(paper_ds))
    label = [(DATASETS[d].label if d in DATASETS else d) + (f" (in place of {', '.join(instead[d])})"
                                                            if d in instead else "") for d in names]
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    w, h = fig.get_size_inches()
    return fig.text(box.x0 / w, (box.y0 - 0.04) / h, "Trained on: " + ", ".join(label) + ".", ha="left", va="top",
                    fontsize=7, color="0.3", gid=_STAMP)


# ------------------------------------------------------------------------ what an axes draws
def _in_data(artist, ax) -> bool:
    t = artist.get_transform()
    return t is ax.transData or t == ax.transData


def _visible(artist) -> bool:
    return artist.get_visible() and artist.get_alpha() != 0


def _errorbar_parts(ax) -> tuple[set[int], list]:
    """ids of the cap lines of every error bar, and the error bars' LineCollections."""
    from matplotlib.container import ErrorbarContainer

    caps, cols = set(), []
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            _, caplines, barcols = c.lines
            caps |= {id(ln) for ln in caplines}
            cols += list(barcols)
    return caps, cols


def _data_lines(ax) -> list:
    caps, _ = _errorbar_parts(ax)
    return [ln for ln in ax.lines if id(ln) not in caps and _visible(ln) and _in_data(ln, ax)]


def _bars(ax) -> list[tuple[Any, str]]:
    """(container, orientation) of every bar series."""
    from matplotlib.container import BarContainer

    return [(c, getattr(c, "orientation", None) or "vertical") for c in ax.containers if isinstance(c, BarContainer)]


def _scatters(ax) -> list:
    from matplotlib.collections import PathCollection

    return [c for c in ax.collections if isinstance(c, PathCollection) and _visible(c)
            and (c.get_offset_transform() is ax.transData or c.get_offset_transform() == ax.transData)]


def _areas(ax) -> list:
    """Filled areas in data coordinates (``fill_between``: PolyCollections that are not scatter points)."""
    from matplotlib.collections import PolyCollection

    return [c for c in ax.collections if isinstance(c, PolyCollection) and _visible(c) and _in_data(c, ax)]


def _meshes(ax) -> list:
    from matplotlib.collections import QuadMesh

    return [c for c in ax.collections if isinstance(c, QuadMesh) and _visible(c) and _in_data(c, ax)]


def _segments(col) -> list[np.ndarray]:
    return [np.asarray(s, dtype=float) for s in col.get_segments() if len(s)]


def _axes_name(ax, fig) -> str:
    i = fig.axes.index(ax) + 1 if ax in fig.axes else 0
    title = ax.get_title() or ax.get_title(loc="left") or ax.get_title(loc="right")
    return f"axes {i}" + (f" {title!r}" if title else "")


def _has_data(ax) -> bool:
    return bool(_data_lines(ax) or _bars(ax) or _scatters(ax) or _errorbar_parts(ax)[1])


# ------------------------------------------------------------------------ the rules
def _within(v: float, lim: tuple[float, float], log: bool) -> bool:
    lo, hi = sorted(lim)
    if log:
        if v <= 0:
            return False
        v, lo, hi = math.log10(v), math.log10(lo), math.log10(hi)
    tol = 1e-9 * max(hi - lo, 1e-12)
    return lo - tol <= v <= hi + tol


def _values_within_axes(ax, name) -> list[str]:
    f = facts(ax)
    xl, yl = ax.get_xlim(), ax.get_ylim()
    xlog, ylog = ax.get_xscale() == "log", ax.get_yscale() == "log"
    out: list[str] = []

    def check(xs, ys, what):
        for x, y in zip(np.ravel(xs), np.ravel(ys)):
            if not (math.isfinite(x) and math.isfinite(y)):  # a point with a missing coordinate is not drawn
                continue
            if not _within(x, xl, xlog):
                out.append(f"{what} x = {x:g} outside the x-limits [{min(xl):g}, {max(xl):g}]")
                return
            if not _within(y, yl, ylog):
                out.append(f"{what} y = {y:g} outside the y-limits [{min(yl):g}, {max(yl):g}]")
                return

    for ln in _data_lines(ax):
        xy = np.asarray(ln.get_xydata(), dtype=float)
        if xy.size:
            check(xy[:, 0], xy[:, 1], f"line {ln.get_label()!r}:")
    for sc in _scatters(ax):
        off = np.asarray(sc.get_offsets(), dtype=float)
        if off.size:
            check(off[:, 0], off[:, 1], f"points {sc.get_label()!r}:")
    for col in _errorbar_parts(ax)[1]:
        for seg in _segments(col):
            check(seg[:, 0], seg[:, 1], "error bar end:")
    for col in _areas(ax):  # fill_between bands: every vertex
        for path in col.get_paths():
            v = np.asarray(path.vertices, dtype=float)
            if v.size:
                check(v[:, 0], v[:, 1], f"filled area {col.get_label()!r}:")
    for mesh in _meshes(ax):  # heatmaps (pcolormesh, seaborn.heatmap): every cell corner
        xy = np.asarray(mesh.get_coordinates(), dtype=float).reshape(-1, 2)
        check(xy[:, 0], xy[:, 1], "heatmap cell:")
    for im in ax.get_images():  # imshow: its extent
        x0, x1, y0, y1 = im.get_extent()
        check([x0, x1], [y0, y1], "image edge:")
    for c, orient in _bars(ax):
        value_axis = "y" if orient == "vertical" else "x"
        lim, log = (yl, ylog) if value_axis == "y" else (xl, xlog)
        # on a log axis there is no 0: bars rise from the axis' bottom edge
        broken = value_axis in f.broken or log
        for p in c.patches:
            x0, y0, w, h = p.get_x(), p.get_y(), p.get_width(), p.get_height()
            if orient == "vertical":
                base, top, pos = y0, y0 + h, (x0, x0 + w)
            else:
                base, top, pos = x0, x0 + w, (y0, y0 + h)
            if not (math.isfinite(base) and math.isfinite(top)):
                continue
            ends = ((top, "top"),) if broken else ((base, "bottom"), (top, "top"))
            for v, which in ends:
                if not _within(v, lim, log):
                    out.append(f"bar {c.get_label()!r}: {which} {value_axis} = {v:g} outside the {value_axis}-limits "
                               f"[{min(lim):g}, {max(lim):g}]" + ("" if broken else
                                                                  f" (mark_broken_axis(ax, {value_axis!r}) if the "
                                                                  f"axis is meant not to start at 0)"))
                    break
            plim, plog = (xl, xlog) if value_axis == "y" else (yl, ylog)
            if not all(_within(v, plim, plog) for v in pos if math.isfinite(v)):
                out.append(f"bar {c.get_label()!r} at {pos[0]:g}..{pos[1]:g} outside the axes")
        if c.patches and not broken and not _within(0.0, lim, log):
            out.append(f"bars {c.get_label()!r} do not start at 0: the {value_axis}-limits "
                       f"[{min(lim):g}, {max(lim):g}] exclude 0")
    return list(dict.fromkeys(out))


def _norm(text: str) -> str:
    return re.sub(r"[\s_]+", "", text.lower())


def _dataset_names(name: str) -> tuple[str, ...]:
    from ...data import DATASETS

    names = {_norm(name)}
    if name in DATASETS:
        names.add(_norm(DATASETS[name].label))
    names |= {_norm(a) for a in _ALIASES.get(name, ())}
    return tuple(names)


def _legend_texts(legend) -> list[str]:
    if legend is None:
        return []
    return [t.get_text() for t in legend.get_texts()] + [legend.get_title().get_text()]


def _titles(ax) -> list[str]:
    return [ax.get_title(loc=loc) for loc in ("center", "left", "right")]


def _figure_texts(fig) -> list[str]:
    texts = [fig.get_suptitle()]
    for leg in fig.legends:
        texts += _legend_texts(leg)
    return texts


def _stand_in_named(ax, name, fig) -> list[str]:
    f = facts(ax)
    if not f.stand_in:
        return []
    shown = _norm(" ".join(_titles(ax) + _legend_texts(ax.get_legend()) + _figure_texts(fig)))
    return [f"plots a stand-in ({ds}) but names it in neither its title nor a legend"
            for ds in f.stand_in if not any(n in shown for n in _dataset_names(ds))]


def _text_data_position(text, ax) -> tuple[float, float] | None:
    try:
        disp = text.get_transform().transform(text.get_position())
        x, y = ax.transData.inverted().transform(disp)
        return float(x), float(y)
    except (ValueError, np.linalg.LinAlgError):
        return None


def _cells_labelled(ax, name) -> list[str]:
    f = facts(ax)
    out: list[str] = []
    texts = [t for t in ax.texts if t.get_visible()]
    words = [t.get_text() for t in texts] + [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
    low = [w.lower() for w in words]
    for status, needle in CELL_STATUSES.items():
        wanted = sorted(k for k, s in f.cells.items() if s == status)
        if not wanted:
            continue
        if needle is None:
            have = sum(bool(_ZERO.match(w.strip())) for w in words)
        else:
            have = sum(w.count(needle.lower()) for w in low)
        if have < len(wanted):
            label = "a value label reading 0" if needle is None else repr(needle)
            out.append(f"{len(wanted)} cell(s) {status} ({', '.join(wanted)}) but {have} label(s) {label} in the axes")
    if not f.ours:
        shown = " ".join(_titles(ax) + [t.get_text() for t in texts] + _legend_texts(ax.get_legend())).lower()
        if "paper only" not in shown:
            out.append("shows no result of ours (declare(ax, ours=False)) but does not say 'paper only'")
    for c, orient in _bars(ax):
        lim, log = (ax.get_xlim(), ax.get_xscale() == "log") if orient == "vertical" else \
            (ax.get_ylim(), ax.get_yscale() == "log")
        for p in c.patches:
            h = p.get_height() if orient == "vertical" else p.get_width()
            if math.isfinite(h) and h != 0:
                continue
            lo, hi = (p.get_x(), p.get_x() + p.get_width()) if orient == "vertical" else \
                (p.get_y(), p.get_y() + p.get_height())
            if not (math.isfinite(lo) and math.isfinite(hi)):
                continue
            over = []
            for t in texts:
                pos = _text_data_position(t, ax)
                if pos is not None and lo - 1e-9 <= (pos[0] if orient == "vertical" else pos[1]) <= hi + 1e-9:
                    over.append(t.get_text().strip())
            if h == 0 and not any(_ZERO.match(s) for s in over):
                out.append(f"bar {c.get_label()!r} at {lo:g}..{hi:g} has height 0 and no value label reading 0 "
                           f"over it")
            elif not math.isfinite(h) and not any(over):
                out.append(f"bar {c.get_label()!r} at {lo:g}..{hi:g} has no value (drawn as nothing) and no label "
                           f"over it ('not run', 'diverged', …)")
            elif not math.isfinite(h) and not all(_within(v, lim, log) for v in (lo, hi)):
                # matplotlib sets no limit for a bar without a value: where one bar of a panel has a value,
                # the others' places (and their labels) can lie outside the axes
                out.append(f"bar {c.get_label()!r} at {lo:g}..{hi:g} has no value and lies outside the axes: its "
                           f"label is not seen (label_empty_bars keeps its place inside)")
    return out


def _rgba(color) -> tuple:
    from matplotlib.colors import to_rgba

    try:
        return tuple(round(v, 3) for v in to_rgba(color))
    except (ValueError, TypeError):
        arr = np.atleast_2d(np.asarray(color, dtype=float))
        return tuple(tuple(round(v, 3) for v in row) for row in arr)


def _public(label: str) -> bool:
    return bool(label) and not label.startswith("_")


def _dash_key(ln) -> tuple:
    """A line's style as drawn: its named style and, for dashes, their pattern (matplotlib reports every custom
    pattern, such as seaborn's ``style=`` dashes, as ``'--'``)."""
    pattern = getattr(ln, "_unscaled_dash_pattern", None)  # (offset, (on, off, ...)) or (0, None) for solid
    seq = pattern[1] if isinstance(pattern, tuple) and len(pattern) == 2 else None
    return ln.get_linestyle(), tuple(np.round(seq, 3)) if seq else None


def _series_distinct(ax, name) -> list[str]:
    seen: dict[tuple, str] = {}
    out: list[str] = []

    def add(key, label, what):
        if key in seen:
            other = seen[key]
            if _public(label) and label == other:
                return
            out.append(f"{what} {label!r} and {other!r} share colour, line style and marker")
        else:
            seen[key] = label

    for ln in _data_lines(ax):
        if not np.isfinite(np.asarray(ln.get_xydata(), dtype=float)).all(axis=1).any():
            continue
        mfc = ln.get_markerfacecolor()
        open_marker = isinstance(mfc, str) and mfc.lower() == "none"
        key = ("line", _rgba(ln.get_color()), _dash_key(ln), str(ln.get_marker()), open_marker)
        add(key, ln.get_label(), "lines")
    for c, _ in _bars(ax):
        if not c.patches:
            continue
        colors = tuple(dict.fromkeys(_rgba(p.get_facecolor()) for p in c.patches))
        key = ("bar", colors, c.patches[0].get_hatch())
        add(key, c.get_label(), "bar series")
    for sc in _scatters(ax):
        key = ("points", _rgba(sc.get_facecolor()), tuple(np.round(sc.get_sizes(), 3)))
        add(key, sc.get_label(), "point series")
    return out


def _densify(xy: np.ndarray, connected: bool) -> np.ndarray:
    """The finite points of ``xy`` (display coordinates) and, if ``connected``, points every
    2 px along the segments between them."""
    xy = xy[np.isfinite(xy).all(axis=1)]
    if len(xy) < 2 or not connected:
        return xy
    out = [xy[:1]]
    for a, b in zip(xy[:-1], xy[1:]):
        n = int(min(max(np.hypot(*(b - a)) / 2.0, 1), 500))
        t = np.linspace(0, 1, n + 1)[1:, None]
        out.append(a + t * (b - a))
    return np.vstack(out)


def _display_points(ax) -> list[np.ndarray]:
    """The axes' data in display coordinates: line vertices and points along each segment
    (every 2 px), scatter points, error-bar segments; only what lies inside the axes."""
    pts = []
    densify = _densify
    for ln in _data_lines(ax):
        xy = np.asarray(ln.get_xydata(), dtype=float)
        if xy.size:
            with np.errstate(all="ignore"):
                disp = ax.transData.transform(xy)
            pts.append(densify(disp, ln.get_linestyle() not in ("None", "", " ")))
    for sc in _scatters(ax):
        off = np.asarray(sc.get_offsets(), dtype=float)
        if off.size:
            pts.append(densify(ax.transData.transform(off), False))
    for col in _errorbar_parts(ax)[1]:
        for seg in _segments(col):
            pts.append(densify(ax.transData.transform(seg), True))
    box = ax.bbox
    return [p[(p[:, 0] >= box.x0) & (p[:, 0] <= box.x1) & (p[:, 1] >= box.y0) & (p[:, 1] <= box.y1)]
            for p in pts if len(p)]


def _legend_clear(fig, renderer) -> list[tuple[str, str]]:
    from matplotlib.transforms import Bbox

    legends = [(ax.get_legend(), _axes_name(ax, fig)) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(leg, "the figure") for leg in fig.legends]
    out = []
    for leg, owner in legends:
        if not leg.get_visible():
            continue
        bb = leg.get_window_extent(renderer)
        inner = Bbox.from_extents(bb.x0 + 1, bb.y0 + 1, bb.x1 - 1, bb.y1 - 1)
        for ax in fig.axes:
            if not _has_data(ax):
                continue
            hit = None
            for p in _display_points(ax):
                inside = (p[:, 0] > inner.x0) & (p[:, 0] < inner.x1) & (p[:, 1] > inner.y0) & (p[:, 1] < inner.y1)
                if inside.any():
                    hit = "a plotted point"
                    break
            if hit is None:
                for c, _ in _bars(ax):
                    for p in c.patches:
                        if not (math.isfinite(p.get_height()) and math.isfinite(p.get_width())):
                            continue
                        pb = Bbox.intersection(p.get_window_extent(renderer), ax.bbox)
                        if pb is not None and pb.width > 0 and pb.height > 0 and Bbox.intersection(pb, inner) \
                                is not None and Bbox.intersection(pb, inner).width > 0 \
                                and Bbox.intersection(pb, inner).height > 0:
                            hit = f"bar {c.get_label()!r}"
                            break
                    if hit:
                        break
            if hit:
                out.append((owner, f"its legend covers {hit} of {_axes_name(ax, fig)}"))
    return out


def _error_bars(ax, name, caption: str, seeds: int | None) -> list[str]:
    from matplotlib.container import ErrorbarContainer

    drawn = [c for c in ax.containers if isinstance(c, ErrorbarContainer)
             and (c.has_yerr or c.has_xerr) and any(_segments(col) for col in c.lines[2])]
    if not drawn:
        return []
    n = facts(ax).seeds if facts(ax).seeds is not None else seeds
    if n is None:
        return ["draws error bars but the number of seeds is not known (declare(ax, seeds=N) or the figure's seeds)"]
    if n < 2:
        return [f"draws error bars over {n} seed: a std needs >= 2 seeds (draw no error bars)"]
    if not re.search(rf"std over {n} seeds", caption or ""):
        return [f"draws error bars over {n} seeds but the caption does not say 'std over {n} seeds'"]
    return []


def _connected(ln) -> bool:
    return ln.get_linestyle() not in ("None", "", " ")


def _marker_look(ln) -> tuple | None:
    """A line's markers as the reader sees them: (shape, filled), None without markers."""
    m = ln.get_marker()
    if m in (None, "None", "none", "", " ", ",") or not ln.get_markersize():
        return None
    mfc = ln.get_markerfacecolor()
    return str(m), not (isinstance(mfc, str) and mfc.lower() == "none")


def _drawn_lines(ax) -> list:
    """The data lines with a finite point, in drawing order (z-order, then order added)."""
    lines = [ln for ln in _data_lines(ax) if np.isfinite(np.asarray(ln.get_xydata(), dtype=float)).all(axis=1).any()]
    return sorted(lines, key=lambda ln: ln.get_zorder())


def _covered(low, high, ax) -> bool:
    """Whether every drawn point of line ``low`` (inside the axes) lies within the line width
    (markers only: the marker size) of line ``high``."""
    px = ax.figure.dpi / 72.0
    with np.errstate(all="ignore"):
        a = _densify(ax.transData.transform(np.asarray(low.get_xydata(), dtype=float)), _connected(low))
        b = ax.transData.transform(np.asarray(high.get_xydata(), dtype=float))
    box = ax.bbox
    a = a[(a[:, 0] >= box.x0) & (a[:, 0] <= box.x1) & (a[:, 1] >= box.y0) & (a[:, 1] <= box.y1)]
    if not len(a):
        return False
    width = [ln.get_linewidth() if _connected(ln) else ln.get_markersize() for ln in (low, high)]
    tol = max(max(width) * px / 2.0, 1.0)
    ok = np.isfinite(b).all(axis=1)
    if _connected(high):
        pairs = ok[:-1] & ok[1:]
        p0, p1 = b[:-1][pairs], b[1:][pairs]
    else:
        p0 = p1 = b[ok]
    if not len(p0):
        p0 = p1 = b[ok]
    if not len(p0):
        return False
    for chunk in np.array_split(a, max(1, len(a) * len(p0) // 200_000 + 1)):
        d = p1 - p0  # (m, 2): point-to-segment distances, every point against every segment
        len2 = np.maximum((d ** 2).sum(axis=1), 1e-12)
        t = np.clip(((chunk[:, None, :] - p0[None]) * d[None]).sum(axis=2) / len2[None], 0.0, 1.0)
        near = p0[None] + t[..., None] * d[None]
        if (np.hypot(*(chunk[:, None, :] - near).transpose(2, 0, 1)).min(axis=1) > tol).any():
            return False
    return True


def _told_apart(low, high) -> bool:
    """Whether a line drawn under another still shows: its own markers, or through the
    gaps of a dashed upper line of another colour and another line style."""
    mine = _marker_look(low)
    if mine is not None and mine != _marker_look(high):
        return True
    return high.get_linestyle() not in ("-", "solid") and _connected(high) and _connected(low) \
        and low.get_linestyle() != high.get_linestyle() and _rgba(low.get_color()) != _rgba(high.get_color())


def _all_texts(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def _line_name(ln, ax) -> str:
    label = ln.get_label()
    return repr(label) if _public(label) else f"line {ax.lines.index(ln) + 1} (colour {_rgba(ln.get_color())[:3]})"


def _series_visible(ax, name, fig) -> list[str]:
    lines = _drawn_lines(ax)
    shown = _all_texts(fig)
    declared = [(set(map(id, group)), text) for group, text in facts(ax).coinciding if any(text in t for t in shown)]
    out = []
    for i, low in enumerate(lines):
        for high in lines[i + 1:]:
            if _public(low.get_label()) and low.get_label() == high.get_label():
                continue  # one series
            if _told_apart(low, high) or any({id(low), id(high)} <= ids for ids, _ in declared):
                continue
            if _covered(low, high, ax):
                out.append(f"line {_line_name(low, ax)} is drawn under line {_line_name(high, ax)} (every point within "
                           f"the line width): tell them apart by markers or an offset, or merge_coinciding(ax) "
                           f"for one legend entry 'A = B'")
                break
    return out


def _is_blank(ax) -> bool:
    """No finite line point, bar, scatter point, area, mesh, image, patch or table in ``ax``."""
    if any(np.isfinite(np.asarray(ln.get_xydata(), dtype=float)).all(axis=1).any()
           for ln in ax.lines if _visible(ln) and id(ln) not in _errorbar_parts(ax)[0]):
        return False
    if _bars(ax) or ax.get_images() or ax.tables:
        return False
    if any(_visible(c) and (len(c.get_paths()) if hasattr(c, "get_paths") else True) for c in ax.collections):
        return False
    return not any(_visible(p) for p in ax.patches)


def _axes_not_blank(ax, name) -> list[str]:
    f = facts(ax)
    if not ax.axison or getattr(ax, "_colorbar", None) is not None or not _is_blank(ax):
        return []
    if f.empty and any(t.get_visible() and t.get_text() == f.empty for t in ax.texts):
        return []
    if f.cells:
        return []  # its cells' labels say why (cells_labelled checks them)
    return ["has no data and does not say what it would show and why it is empty (mark_empty(ax, shows, why))"]


def _shown_tick_labels(axis) -> list:
    lo, hi = sorted(axis.get_view_interval())
    tol = 1e-9 * max(hi - lo, 1e-12)
    out = []
    for locs, labels in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                         (axis.get_minorticklocs(), axis.get_minorticklabels())):
        out += [t for v, t in zip(locs, labels) if lo - tol <= v <= hi + tol and t.get_visible() and t.get_text().strip()]
    return out


def _text_legible(fig, renderer, dpi: float) -> list[tuple[str, str]]:
    from matplotlib.text import Text

    out = []
    owner = {id(t): _axes_name(ax, fig) for ax in reversed(fig.axes) for t in ax.findobj(Text)}
    small: dict[tuple[str, float], list[str]] = {}
    for t in fig.findobj(Text):
        if t.get_visible() and t.get_text().strip() and t.get_fontsize() < MIN_FONT_PT - 1e-9:
            small.setdefault((owner.get(id(t), "the figure"), t.get_fontsize()), []).append(t.get_text().strip()[:40])
    for (who, size), texts in small.items():
        shown = ", ".join(map(repr, texts[:3])) + (f" and {len(texts) - 3} more" if len(texts) > 3 else "")
        out.append((who, f"text {shown} is {size:g} pt, below {MIN_FONT_PT:g} pt"))
    for ax in fig.axes:
        for axis, along in ((ax.xaxis, 0), (ax.yaxis, 1)):
            labels = _shown_tick_labels(axis)
            boxes = sorted(((t.get_window_extent(renderer), t) for t in labels), key=lambda bt: bt[0].get_points()[:, along].mean())
            for (b0, t0), (b1, t1) in zip(boxes, boxes[1:]):
                rot = math.radians(t0.get_rotation() % 180)
                if min(abs(math.sin(rot)), abs(math.cos(rot))) < 1e-6:  # horizontal or vertical text: its box
                    w = min(b0.x1, b1.x1) - max(b0.x0, b1.x0)
                    h = min(b0.y1, b1.y1) - max(b0.y0, b1.y0)
                    overlap = w > 0.5 and h > 0.5
                else:  # slanted text: the gap across the text's direction against its height
                    shift = abs(b1.get_points()[:, along].mean() - b0.get_points()[:, along].mean())
                    across = shift * (abs(math.sin(rot)) if along == 0 else abs(math.cos(rot)))
                    overlap = across < 0.9 * renderer.points_to_pixels(t0.get_fontsize())
                if overlap:
                    out.append((_axes_name(ax, fig), f"{'x' if along == 0 else 'y'} tick labels {t0.get_text()!r} and "
                                                     f"{t1.get_text()!r} overlap"))
                    break
    box = fig.get_tightbbox(renderer)
    width = (box.width + 2 * 0.1) * dpi  # bbox_inches="tight" pads 0.1 in
    if width > MAX_WIDTH_PX:
        out.append(("the figure", f"is {width:.0f} px wide when saved at {dpi:g} dpi, above {MAX_WIDTH_PX} px"))
    return out


def _groups_shown(ax, name, fig) -> list[str]:
    groups = facts(ax).groups
    if not groups:
        return []
    words = [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()] + \
        [t.get_text() for t in ax.texts if t.get_visible()] + _titles(ax) + _legend_texts(ax.get_legend())
    shown = _norm(" ".join(words))
    dropped = [g for g in groups if _norm(g) not in shown]
    return [f"declares the group(s) {dropped} but names them nowhere in it (a tick label, text, title or legend; "
            f"label_groups)"] if dropped else []


def _dataset_named(fig, datasets) -> list[tuple[str, str]]:
    names = [str(d) for d in (datasets if datasets is not None else []) if d is not None]
    if not names:
        return []
    shown = _norm(" ".join(_all_texts(fig)))
    return [("the figure", f"trained on {d} but does not name it (stamp_datasets)")
            for d in dict.fromkeys(names) if not any(n in shown for n in _dataset_names(d))]


def _seeds_marked(ax, name, fig, caption: str) -> list[str]:
    m = re.search(r"std over (\d+) seeds", caption or "")
    f = facts(ax)
    if not m or not f.series_seeds:
        return []
    total = int(m.group(1))
    texts = _all_texts(fig)
    out = []
    for series, n in f.series_seeds.items():
        if n >= total:
            continue
        mark = re.compile(rf"\b{n} (?:of {total} )?seeds?\b")
        if not any(series in t and mark.search(t) for t in texts):
            out.append(f"series {series!r} is over {n} seed(s), the caption says 'std over {total} seeds', and no "
                       f"text names it with '{n} of {total} seeds' (seeds_label)")
    return out


def _chance_flagged(ax, name, fig) -> list[str]:
    f = facts(ax)
    if f.chance is None:
        return []
    values = [y for ln in _data_lines(ax) for y in np.asarray(ln.get_xydata(), dtype=float)[:, 1] if math.isfinite(y)]
    for c, orient in _bars(ax):
        values += [(p.get_y() + p.get_height()) if orient == "vertical" else (p.get_x() + p.get_width())
                   for p in c.patches]
    low = [v for v in values if math.isfinite(v) and v <= f.chance + f.chance_margin]
    if not low:
        return []
    said = " ".join([t.get_text() for t in ax.texts if t.get_visible()] + _titles(ax) + _legend_texts(ax.get_legend())
                    + _figure_texts(fig)).lower()
    if "chance" in said:
        return []
    return [f"a value ({min(low):g}) sits at chance ({f.chance:g} + {f.chance_margin:g}) and nothing in the axes says "
            f"'chance' (mark_chance)"]


def _report(name: str, rule: str, violations: list[tuple[str, str]]) -> None:
    lines = "; ".join(f"{a}: {w}" for a, w in violations)
    warnings.warn(f"figure {name!r} breaks the rule {rule!r} (reported, not raised): {lines}", FigureRuleWarning,
                  stacklevel=3)
    path = os.environ.get("FEDLIB_FIGURE_REPORT")
    if path:
        with open(path, "a") as fh:
            for a, w in violations:
                fh.write(json.dumps({"figure": name, "notebook": os.environ.get("FEDLIB_NOTEBOOK", ""), "rule": rule,
                                     "axes": a, "what": w}) + "\n")


# ------------------------------------------------------------------------ the check
def check_figure(fig, *, name: str = "figure", caption: str = "", seeds: int | Iterable[int] | None = None,
                 datasets: Iterable[str] | None = None, dpi: float | None = None,
                 waive: dict[str, str] | None = None) -> dict[str, bool]:
    """Check ``fig`` against :data:`RULES` (drawing it once); raise the
    :class:`FigureRuleError` subclass of the first rule broken, listing every violation.

    ``caption``: the caption the figure is saved with; ``seeds``: the figure's seeds (a
    number or the seeds themselves) for axes that declare none; ``datasets``: the datasets
    its runs trained on; ``dpi``: the resolution it is saved at (default the style's);
    ``waive``: ``{rule: reason}`` for a rule this figure is known to break (its violations
    are not raised and the rule is recorded as false).  A rule of :data:`REPORT_ONLY` warns
    instead.  Returns ``{rule: passed}``."""
    waive = dict(waive or {})
    unknown = [r for r in waive if r not in RULES]
    if unknown:
        raise ValueError(f"waive: unknown rule(s) {unknown}; rules: {', '.join(RULES)}")
    if seeds is not None and not isinstance(seeds, (int, np.integer)):
        seeds = len(set(seeds)) or None
    if dpi is None:
        from .style import RC

        dpi = RC["savefig.dpi"]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found: dict[str, list[tuple[str, str]]] = {r: [] for r in RULES}
    for ax in fig.axes:
        name_ax = _axes_name(ax, fig)
        for rule, fn in (("values_within_axes", lambda: _values_within_axes(ax, name_ax)),
                         ("stand_in_named", lambda: _stand_in_named(ax, name_ax, fig)),
                         ("cells_labelled", lambda: _cells_labelled(ax, name_ax)),
                         ("series_distinct", lambda: _series_distinct(ax, name_ax)),
                         ("error_bars_seeds", lambda: _error_bars(ax, name_ax, caption, seeds)),
                         ("series_visible", lambda: _series_visible(ax, name_ax, fig)),
                         ("axes_not_blank", lambda: _axes_not_blank(ax, name_ax)),
                         ("groups_shown", lambda: _groups_shown(ax, name_ax, fig)),
                         ("seeds_marked", lambda: _seeds_marked(ax, name_ax, fig, caption)),
                         ("chance_flagged", lambda: _chance_flagged(ax, name_ax, fig))):
            found[rule] += [(name_ax, w) for w in fn()]
    found["legend_clear"] = _legend_clear(fig, renderer)
    found["text_legible"] = _text_legible(fig, renderer, float(dpi))
    found["dataset_named"] = _dataset_named(fig, datasets)
    raised = [r for r in RULES if r not in waive and r not in REPORT_ONLY]
    for rule, error in zip(RULES, _ERRORS):
        if found[rule] and rule in raised:
            violations = [(r, a, w) for r in raised for a, w in found[r]]
            raise error(name, violations)
    for rule in RULES:
        if found[rule] and rule in REPORT_ONLY and rule not in waive:
            _report(name, rule, found[rule])
    return {rule: not found[rule] for rule in RULES}
