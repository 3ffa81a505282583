"""Figure rules that need no declaration: read from the drawn artists and the figure's setting.

:func:`fedlib.repro.artefacts.saving.save_figure` runs :func:`check_data` after
:func:`~fedlib.repro.artefacts.figure_rules.check_figure`; the sidecar's ``figure_checks`` records
each of :data:`DATA_RULES` beside the others.  Before checking, :func:`fedlib.repro.artefacts.figure_marks.mend`
flags what it can on the figure itself (a series at chance, a bar too short to see), and
:func:`~fedlib.repro.artefacts.figure_marks.stamp_setting` names the profile and the seeds.

``chance_from_data``
    An accuracy axes (its y label says "accuracy" and not a gap) whose dataset is known (the
    figure's single dataset, or the one its title names; :data:`fedlib.data.DATASETS` gives the
    classes) flags every series that sits within :data:`CHANCE_MARGIN_PP` of 1/classes: a text
    "at chance" naming the series (or, for unlabelled bars, any "at chance" text).
``values_visible``
    Every finite, non-zero bar is drawn at least :data:`MIN_BAR_PX` pixels long at the saved
    size, or a text over it reads its value.
``scatter_uncovered``
    In an axes with two or more scatter categories, no category's pixels are more than half
    covered by the (opaque) categories drawn over it -- each category is rasterised alone and
    against the others -- and every category's count is stated (legend or text).
``legend_drawn``
    Every legend entry stands for something drawn: an artist of that label with a finite point in
    its axes, or (a key such as "ours: solid") a drawn artist of the entry's style.
``noise_shown``
    A figure over one seed says "1 seed"; an axes declared with its noise (:func:`declare_noise`)
    whose values differ by less than twice that noise draws error bars or a band and names its
    seed count ("N seeds").
``setting_named``
    The figure names its dataset, profile and seeds (``save_figure``'s stamp) and its partition
    with its parameter ("Dir(0.5)", "β = 0.5", "#C=2", "IF = 100" …), or says it is centralized (one client
    holding the training set), in a text, title or caption.
    Report-only (:data:`DATA_REPORT_ONLY`): figures without a partition (a toy, a schematic) warn.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable

import numpy as np

from .figure_artists import (bars, data_lines, dataset_names, errorbar_parts, figure_texts, legend_texts, norm,
                             scatters, titles, visible)
from .figure_checks_drawn import all_text, axes_tag, legend_rule, scatter_rule
from .figure_lines import public
from .figure_rule_errors import FigureRuleError, report

__all__ = ["DATA_RULES", "DATA_REPORT_ONLY", "CHANCE_MARGIN_PP", "MIN_BAR_PX", "ChanceFromData", "ValueInvisible",
           "CategoryCovered", "LegendEntryEmpty", "NoiseHidden", "SettingUnnamed", "declare_noise", "chance_level",
           "check_data"]

#: how close (pp of accuracy; 0.01 on a 0-1 axis) to 1/classes a value "sits at chance"
CHANCE_MARGIN_PP = 2.0
#: the shortest bar (pixels at the saved size) that shows without a label
MIN_BAR_PX = 4.0
_ATTR = "_fedlib_noise"
_ACC = re.compile(r"accura|\bacc\b|top-?1", re.I)
_NOT_ACC = re.compile(r"gap|differ|Δ|\bdelta\b|drop|change|gain|\bpp\b|−|minus|\bvs\b", re.I)
_PARTITION = re.compile(r"dir\s*\(|β\s*=|α\s*=|#c\s*=|\bif\s*=|\bq\(|\bd\(|\biid\b|shard|partition|long[- ]tail|"
                        r"imbalance|label skew|classes per client|two clients|toy|centrali[sz]ed", re.I)
_NUMBER = re.compile(r"[−\-+]?\d+(?:[.,]\d+)?")


class ChanceFromData(FigureRuleError): rule = "chance_from_data"  # noqa: E701
class ValueInvisible(FigureRuleError): rule = "values_visible"  # noqa: E701
class CategoryCovered(FigureRuleError): rule = "scatter_uncovered"  # noqa: E701
class LegendEntryEmpty(FigureRuleError): rule = "legend_drawn"  # noqa: E701
class NoiseHidden(FigureRuleError): rule = "noise_shown"  # noqa: E701
class SettingUnnamed(FigureRuleError): rule = "setting_named"  # noqa: E701


_ERRORS = (ChanceFromData, ValueInvisible, CategoryCovered, LegendEntryEmpty, NoiseHidden, SettingUnnamed)
DATA_RULES = tuple(e.rule for e in _ERRORS)
#: rules that warn (and record false) instead of raising
DATA_REPORT_ONLY: set[str] = {"setting_named"}


def declare_noise(ax, std: float, seeds: int):
    """Declare the noise (one std, in the axes' units) of the differences ``ax`` draws and the seeds
    it was measured over, for ``noise_shown``.  Returns ``ax``."""
    if not (math.isfinite(std) and std >= 0) or int(seeds) < 1:
        raise ValueError(f"declare_noise: std must be finite >= 0 and seeds >= 1, got std={std!r}, seeds={seeds!r}")
    setattr(ax, _ATTR, (float(std), int(seeds)))
    return ax


# ------------------------------------------------------------------------ reading the figure
def _texts(ax) -> list:
    return [t for t in ax.texts if t.get_visible() and t.get_text().strip()]


def _ylabel(ax) -> str:
    """The axes' y label, else that of an axes of its figure's row (a shared label on the first panel)."""
    if ax.get_ylabel() or ax.figure is None:
        return ax.get_ylabel()
    row = [a.get_ylabel() for a in ax.figure.axes if a.get_ylabel()
           and abs(a.get_position().y0 - ax.get_position().y0) < 1e-3]
    return (row or [""])[0]


def _is_accuracy(ax) -> bool:
    label = _ylabel(ax)
    return bool(_ACC.search(label)) and not _NOT_ACC.search(label)


def _over_training(ax) -> bool:
    """A learning curve (x: rounds, epochs, communication): only where it ends is its result."""
    label = ax.get_xlabel()  # ("… per run": each point is a run of its own, judged on its own)
    return bool(re.search(r"round|epoch|step|communicat|sent|parameters", label, re.I)) and "per run" not in label


def chance_level(ax, datasets: Iterable[str] | None) -> tuple[float, str] | None:
    """(chance in the axes' unit, dataset) of an accuracy axes, or None when unknown: the figure's one
    dataset, else the one its title names, else None (classes differ and the axes does not say)."""
    from ...data import DATASETS

    known = [d for d in dict.fromkeys([] if datasets is None else list(datasets)) if d in DATASETS]
    if not known or not _is_accuracy(ax):
        return None
    if len(known) > 1:
        title = norm(" ".join(titles(ax)))
        named = [d for d in known if any(n in title for n in dataset_names(d))]
        if len(named) == 1:
            known = named
        elif len({DATASETS[d].num_classes for d in known}) > 1:
            return None
    k = DATASETS[known[0]].num_classes
    lo, hi = sorted(ax.get_ylim())
    percent = "%" in _ylabel(ax) or hi > 1.5
    return (100.0 / k if percent else 1.0 / k), known[0]


def _series(ax) -> list[tuple[str, list[float], Any]]:
    """(label, values, artist) of each line, bar series and scatter of ``ax``."""
    from matplotlib.container import ErrorbarContainer

    out = []
    named = {id(c.lines[0]): c.get_label() for c in ax.containers  # an error-bar series' name is its container's
             if isinstance(c, ErrorbarContainer) and c.lines[0] is not None}
    for ln in data_lines(ax):
        ys = [float(y) for y in np.asarray(ln.get_ydata(), dtype=float) if math.isfinite(y)]
        if _over_training(ax) and len(ys) > 2:
            ys = ys[-1:]  # a learning curve: its result is where it ends, not its first rounds
        out.append((named.get(id(ln), ln.get_label()), ys, ln))
    for c, orient in bars(ax):
        vals = [(p.get_y() + p.get_height()) if orient == "vertical" else (p.get_x() + p.get_width())
                for p in c.patches]
        out.append((c.get_label(), [float(v) for v in vals if math.isfinite(v)], c))
    for sc in scatters(ax):
        ys = np.asarray(sc.get_offsets(), dtype=float).reshape(-1, 2)[:, 1]
        out.append((sc.get_label(), [float(y) for y in ys if math.isfinite(y)], sc))
    return out


def at_chance(ax, datasets, margin_pp: float) -> list[tuple[str, float, Any]]:
    level = chance_level(ax, datasets)
    if level is None:
        return []
    chance, _ = level
    margin = margin_pp if chance > 1.0 or ax.get_ylim()[1] > 1.5 else margin_pp / 100
    out = []
    for label, vals, artist in _series(ax):
        low = [v for v in vals if v <= chance + margin]
        if low:
            out.append((label, min(low), artist))
    return out


def flagged(ax, fig, label: str) -> bool:
    texts = [t.get_text() for t in _texts(ax)] + legend_texts(ax.get_legend()) + figure_texts(fig)
    said = [" ".join(t.split()) for t in texts if "chance" in t.lower()]  # a wrapped note names a label all the same
    if not public(label):
        return any("at chance" in t.lower() for t in said)
    return any(label in t for t in said) or "chance" in label.lower()


def short_bars(ax, fig, dpi: float) -> list:
    scale = dpi / fig.dpi
    out = []
    for c, orient in bars(ax):
        for p in c.patches:
            v = (p.get_y() + p.get_height()) if orient == "vertical" else (p.get_x() + p.get_width())
            size = p.get_height() if orient == "vertical" else p.get_width()
            if not (math.isfinite(size) and size != 0 and p.get_visible()):
                continue
            bb = p.get_window_extent()
            px = (bb.height if orient == "vertical" else bb.width) * scale
            if px < MIN_BAR_PX and not _labelled(ax, p, orient, v):
                out.append((c, orient, p, v))
    return out


def _labelled(ax, p, orient, value) -> bool:
    lo, hi = (p.get_x(), p.get_x() + p.get_width()) if orient == "vertical" else (p.get_y(), p.get_y() + p.get_height())
    tol = max(0.051, 0.02 * abs(value))
    for t in _texts(ax):
        try:
            pos = ax.transData.inverted().transform(t.get_transform().transform(t.get_position()))
        except (ValueError, np.linalg.LinAlgError):
            continue
        at = pos[0] if orient == "vertical" else pos[1]
        if not (min(lo, hi) - 1e-9 <= at <= max(lo, hi) + 1e-9):
            continue
        for num in _NUMBER.findall(t.get_text().replace("−", "-")):
            if abs(float(num.replace(",", ".")) - value) <= tol:
                return True
    return False


# ------------------------------------------------------------------------ the rules
def _chance_rule(ax, fig, datasets) -> list[str]:
    return [f"series {lab if public(lab) else '(bars)'!r} sits at chance ({v:g}; 1/classes of "
            f"{chance_level(ax, datasets)[1]}) and no text says it is 'at chance'"
            for lab, v, _ in at_chance(ax, datasets, CHANCE_MARGIN_PP) if not flagged(ax, fig, lab)]


def _visible_rule(ax, fig, dpi) -> list[str]:
    return [f"a bar of value {v:g} is under {MIN_BAR_PX:g} px long at the saved size and no text over it reads "
            f"its value" for _, _, _, v in short_bars(ax, fig, dpi)]


def _noise_rule(ax, fig, seeds: int | None, told: Iterable[str] = ()) -> list[str]:
    out = []
    declared = getattr(ax, _ATTR, None)
    said = all_text(fig, told).lower()
    if declared is not None:
        std, n = declared
        vals = [v for _, vs, _ in _series(ax) for v in vs]
        if len(vals) >= 2 and (max(vals) - min(vals)) < 2 * std:
            bands = ("PolyCollection", "FillBetweenPolyCollection")
            band = bool(errorbar_parts(ax)[1]) or any(type(c).__name__ in bands for c in ax.collections if visible(c))
            if not band:
                out.append(f"values differ by {max(vals) - min(vals):.3g}, under twice their noise (std {std:g}), "
                           f"and no error bar or band shows it")
            if not re.search(rf"\b{n}\s+seeds?\b" if n > 1 else r"\b(1|one)\s+seed\b", said):
                out.append(f"the noise is over {n} seed(s) and no text says '{n} seed{'s' if n > 1 else ''}'")
    if seeds == 1 and (data_lines(ax) or bars(ax) or scatters(ax)) and not re.search(r"\b(1|one)\s+seed\b", said):
        out.append("the figure is over one seed and no text says '1 seed'")
    return out


def _setting_rule(fig, meta: dict, title: str, caption: str) -> list[tuple[str, str]]:
    said = all_text(fig, [title, caption])
    out = []
    profile = meta.get("profile")
    profile = getattr(profile, "name", profile)
    if profile and str(profile).lower() not in said.lower():
        out.append(("figure", f"the profile {profile!r} is not named"))
    seeds = meta.get("seeds")
    some = seeds is not None and (isinstance(seeds, (int, np.integer)) or len(list(seeds)) > 0)
    if some and not re.search(r"\bseeds?\b", said, re.I):
        out.append(("figure", "the seeds are not named"))
    if not _PARTITION.search(said):
        out.append(("figure", "no partition and parameter is named (Dir(β), #C=k, IF = …, IID)"))
    return out


def check_data(fig, *, name: str = "figure", title: str = "", caption: str = "", meta: dict | None = None,
               dpi: float = 200.0, waive: dict[str, str] | None = None) -> dict[str, bool]:
    """Check ``fig`` against :data:`DATA_RULES`; raise the first broken rule's error (listing every
    violation), warn for :data:`DATA_REPORT_ONLY`.  ``meta``: what ``save_figure`` is given
    (``datasets``, ``seeds``, ``profile``).  Returns ``{rule: passed}``."""
    meta, waive = dict(meta or {}), dict(waive or {})
    datasets = meta.get("datasets")
    datasets = [datasets] if isinstance(datasets, str) else ([] if datasets is None else list(datasets))
    seeds = meta.get("seeds")
    seeds = seeds if seeds is None or isinstance(seeds, (int, np.integer)) else (len(set(seeds)) or None)
    fig.canvas.draw()
    found: dict[str, list[tuple[str, str]]] = {r: [] for r in DATA_RULES}
    for ax in fig.axes:
        where = axes_tag(ax, fig)
        found["chance_from_data"] += [(where, w) for w in _chance_rule(ax, fig, datasets)]
        found["values_visible"] += [(where, w) for w in _visible_rule(ax, fig, dpi)]
        found["scatter_uncovered"] += [(where, w) for w in scatter_rule(ax, fig)]
        found["noise_shown"] += [(where, w) for w in _noise_rule(ax, fig, seeds, [title, caption])]
    found["legend_drawn"] = legend_rule(fig)
    found["setting_named"] = _setting_rule(fig, meta, title, caption)
    raised = [r for r in DATA_RULES if r not in waive and r not in DATA_REPORT_ONLY]
    for rule, error in zip(DATA_RULES, _ERRORS):
        if found[rule] and rule in raised:
            raise error(name, [(r, a, w) for r in raised for a, w in found[r]])
    for rule in DATA_REPORT_ONLY:
        if found[rule] and rule not in waive:
            report(name, rule, found[rule])
    return {rule: not found[rule] for rule in DATA_RULES}
