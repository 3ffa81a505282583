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

Declaring what an axes shows (the checker cannot see it in the artists)::

    from fedlib.repro.artefacts.figure_rules import declare, label_cell, mark_broken_axis

    declare(ax, stand_in="fmnist", seeds=1)           # this panel's runs are on FMNIST
    declare(ax, cells={"FEDIC, D_aux = 400": "diverged"})
    label_cell(ax, 400, 10, "diverged")              # draws the label (and declares the cell)
    declare(ax, ours=False); ax.set_title("SVHN (paper only)")
    mark_broken_axis(ax, "y")                        # bars may start below the visible range
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

__all__ = ["RULES", "CELL_STATUSES", "FigureRuleError", "ValueOutsideAxes", "StandInUnnamed", "CellUnlabelled",
           "SeriesAlike", "LegendCoversData", "ErrorBarsWithoutSeeds", "declare", "declare_stand_ins", "facts",
           "label_cell", "label_empty_bars", "std_caption", "mark_broken_axis", "check_figure"]


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


_ERRORS = (ValueOutsideAxes, StandInUnnamed, CellUnlabelled, SeriesAlike, LegendCoversData, ErrorBarsWithoutSeeds)
#: The rules, in the order they are checked.
RULES = tuple(e.rule for e in _ERRORS)
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
            ours: bool | None = None, seeds: int | None = None):
    """Declare what ``ax`` shows, for the rules.

    ``stand_in``: the dataset(s) (a token such as ``"fmnist"`` or a label) actually used
    for the axes' cells in place of the paper's; ``cells``: ``{cell: status}`` with a status
    of :data:`CELL_STATUSES` (or ``"ok"``); ``ours=False``: the axes has no result of ours;
    ``seeds``: the number of seeds its means (and error bars) are taken over.  Repeated calls
    add to earlier ones.  Returns ``ax``."""
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
    the default label ("not run", "diverged", "0", "†").  Returns the Text."""
    if status not in CELL_STATUSES:
        raise ValueError(f"status must be one of {', '.join(map(repr, CELL_STATUSES))}, got {status!r}")
    label = text if text is not None else (CELL_STATUSES[status] or "0")
    kw = {"ha": "center", "va": "bottom", "fontsize": 7, "color": "0.25", "clip_on": False}
    kw.update(text_kw)
    artist = ax.text(x, y, label, **kw)
    f = facts(ax)
    f.cells[key if key is not None else f"cell {len(f.cells) + 1} at ({x:g}, {y:g})"] = status
    return artist


def label_empty_bars(ax, missing: str = "not run", *, fmt: str = "0", **text_kw: Any) -> int:
    """Label every bar of ``ax`` that draws nothing: a bar of height 0 with ``fmt`` ("0"),
    a bar whose height is not a number with ``missing`` ("not run", "diverged", …), at the
    bar's base.  Returns how many bars were labelled."""
    kw = {"fontsize": 6, "color": "0.25", "clip_on": False}
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
                ax.text(x, base, text, ha="center", va="bottom", rotation=0 if len(text) <= 4 else 90, **kw)
            else:
                y = p.get_y() + p.get_height() / 2
                base = p.get_x() if math.isfinite(p.get_x()) else 0.0
                ax.text(base, y, text, ha="left", va="center", **kw)
            n += 1
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
        key = ("line", _rgba(ln.get_color()), ln.get_linestyle(), str(ln.get_marker()), open_marker)
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


def _display_points(ax) -> list[np.ndarray]:
    """The axes' data in display coordinates: line vertices and points along each segment
    (every 2 px), scatter points, error-bar segments; only what lies inside the axes."""
    pts = []

    def densify(xy: np.ndarray, connected: bool) -> np.ndarray:
        xy = xy[np.isfinite(xy).all(axis=1)]
        if len(xy) < 2 or not connected:
            return xy
        out = [xy[:1]]
        for a, b in zip(xy[:-1], xy[1:]):
            n = int(min(max(np.hypot(*(b - a)) / 2.0, 1), 500))
            t = np.linspace(0, 1, n + 1)[1:, None]
            out.append(a + t * (b - a))
        return np.vstack(out)

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


# ------------------------------------------------------------------------ the check
def check_figure(fig, *, name: str = "figure", caption: str = "", seeds: int | Iterable[int] | None = None,
                 waive: dict[str, str] | None = None) -> dict[str, bool]:
    """Check ``fig`` against :data:`RULES` (drawing it once); raise the
    :class:`FigureRuleError` subclass of the first rule broken, listing every violation.

    ``caption``: the caption the figure is saved with; ``seeds``: the figure's seeds (a
    number or the seeds themselves) for axes that declare none; ``waive``: ``{rule:
    reason}`` for a rule this figure is known to break (its violations are not raised and
    the rule is recorded as false).  Returns ``{rule: passed}``."""
    waive = dict(waive or {})
    unknown = [r for r in waive if r not in RULES]
    if unknown:
        raise ValueError(f"waive: unknown rule(s) {unknown}; rules: {', '.join(RULES)}")
    if seeds is not None and not isinstance(seeds, (int, np.integer)):
        seeds = len(set(seeds)) or None
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found: dict[str, list[tuple[str, str]]] = {r: [] for r in RULES}
    for ax in fig.axes:
        name_ax = _axes_name(ax, fig)
        for rule, fn in (("values_within_axes", lambda: _values_within_axes(ax, name_ax)),
                         ("stand_in_named", lambda: _stand_in_named(ax, name_ax, fig)),
                         ("cells_labelled", lambda: _cells_labelled(ax, name_ax)),
                         ("series_distinct", lambda: _series_distinct(ax, name_ax)),
                         ("error_bars_seeds", lambda: _error_bars(ax, name_ax, caption, seeds))):
            found[rule] += [(name_ax, w) for w in fn()]
    found["legend_clear"] = _legend_clear(fig, renderer)
    for rule, error in zip(RULES, _ERRORS):
        if found[rule] and rule not in waive:
            violations = [(r, a, w) for r in RULES if r not in waive for a, w in found[r]]
            raise error(name, violations)
    return {rule: not found[rule] for rule in RULES}
