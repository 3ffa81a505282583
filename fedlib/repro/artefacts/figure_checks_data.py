"""Figure rules that need no declaration: read from the drawn artists and the figure's setting.

:func:`fedlib.repro.artefacts.saving.save_figure` runs :func:`check_data` after
:func:`~fedlib.repro.artefacts.figure_rules.check_figure`; the sidecar's ``figure_checks`` records
each of :data:`DATA_RULES` beside the others.  Before checking, :func:`mend` flags what it can on
the figure itself (a series at chance, a bar too short to see, the profile and seeds).

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
    with its parameter ("Dir(0.5)", "β = 0.5", "#C=2", "IF = 100" …) in a text, title or caption.
    Report-only (:data:`DATA_REPORT_ONLY`): figures without a partition (a toy, a schematic) warn.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable

import numpy as np

from .figure_rules import (FigureRuleError, _bars, _data_lines, _errorbar_parts, _figure_texts, _legend_texts,
                           _norm, _public, _report, _scatters, _titles, _visible)

__all__ = ["stamp_setting", "DATA_RULES", "DATA_REPORT_ONLY", "CHANCE_MARGIN_PP", "MIN_BAR_PX", "ChanceFromData", "ValueInvisible",
           "CategoryCovered", "LegendEntryEmpty", "NoiseHidden", "SettingUnnamed", "declare_noise", "chance_level",
           "mend", "check_data"]

#: how close (pp of accuracy; 0.01 on a 0-1 axis) to 1/classes a value "sits at chance"
CHANCE_MARGIN_PP = 2.0
#: the shortest bar (pixels at the saved size) that shows without a label
MIN_BAR_PX = 4.0
_ATTR = "_fedlib_noise"
_ACC = re.compile(r"accura|\bacc\b|top-?1", re.I)
_NOT_ACC = re.compile(r"gap|differ|Δ|\bdelta\b|drop|change|gain|\bpp\b|−|minus|\bvs\b", re.I)
_PARTITION = re.compile(r"dir\s*\(|β\s*=|α\s*=|#c\s*=|\bif\s*=|\bq\(|\bd\(|\biid\b|shard|partition|long[- ]tail|"
                        r"imbalance|label skew|classes per client|two clients|toy", re.I)
_NUMBER = re.compile(r"[−\-+]?\d+(?:[.,]\d+)?")


class ChanceFromData(FigureRuleError):
    rule = "chance_from_data"


class ValueInvisible(FigureRuleError):
    rule = "values_visible"


class CategoryCovered(FigureRuleError):
    rule = "scatter_uncovered"


class LegendEntryEmpty(FigureRuleError):
    rule = "legend_drawn"


class NoiseHidden(FigureRuleError):
    rule = "noise_shown"


class SettingUnnamed(FigureRuleError):
    rule = "setting_named"


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
def _name(ax, fig) -> str:
    i = fig.axes.index(ax) + 1 if ax in fig.axes else 0
    title = ax.get_title() or ax.get_title(loc="left")
    return f"axes {i}" + (f" {title!r}" if title else "")


def _texts(ax) -> list:
    return [t for t in ax.texts if t.get_visible() and t.get_text().strip()]


def _all_text(fig, extra: Iterable[str] = ()) -> str:
    from matplotlib.text import Text

    found = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    return " ".join(found + list(_figure_texts(fig)) + list(extra))


def _is_accuracy(ax) -> bool:
    label = ax.get_ylabel()
    return bool(_ACC.search(label)) and not _NOT_ACC.search(label)


def chance_level(ax, datasets: Iterable[str] | None) -> tuple[float, str] | None:
    """(chance in the axes' unit, dataset) of an accuracy axes, or None when unknown: the figure's one
    dataset, else the one its title names, else None (classes differ and the axes does not say)."""
    from ...data import DATASETS

    from .figure_rules import _dataset_names

    known = [d for d in dict.fromkeys(datasets or []) if d in DATASETS]
    if not known or not _is_accuracy(ax):
        return None
    if len(known) > 1:
        title = _norm(" ".join(_titles(ax)))
        named = [d for d in known if any(n in title for n in _dataset_names(d))]
        if len(named) == 1:
            known = named
        elif len({DATASETS[d].num_classes for d in known}) > 1:
            return None
    k = DATASETS[known[0]].num_classes
    lo, hi = sorted(ax.get_ylim())
    percent = "%" in ax.get_ylabel() or hi > 1.5
    return (100.0 / k if percent else 1.0 / k), known[0]


def _series(ax) -> list[tuple[str, list[float], Any]]:
    """(label, values, artist) of each line, bar series and scatter of ``ax``."""
    out = []
    for ln in _data_lines(ax):
        ys = np.asarray(ln.get_ydata(), dtype=float)
        out.append((ln.get_label(), [float(y) for y in ys if math.isfinite(y)], ln))
    for c, orient in _bars(ax):
        vals = [(p.get_y() + p.get_height()) if orient == "vertical" else (p.get_x() + p.get_width())
                for p in c.patches]
        out.append((c.get_label(), [float(v) for v in vals if math.isfinite(v)], c))
    for sc in _scatters(ax):
        ys = np.asarray(sc.get_offsets(), dtype=float).reshape(-1, 2)[:, 1]
        out.append((sc.get_label(), [float(y) for y in ys if math.isfinite(y)], sc))
    return out


def _at_chance(ax, datasets, margin_pp: float) -> list[tuple[str, float, Any]]:
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


# ------------------------------------------------------------------------ mending
def mend(fig, datasets: Iterable[str] | None = None, *, dpi: float = 200.0) -> None:
    """Flag on ``fig`` what needs no judgement: each series at chance ("<series> at chance (1/K = …)"),
    each bar too short to see (its value as a label)."""
    fig.canvas.draw()
    for ax in fig.axes:
        hits = [h for h in _at_chance(ax, datasets, CHANCE_MARGIN_PP) if not _flagged(ax, fig, h[0])]
        if hits:
            chance, ds = chance_level(ax, datasets)
            names = sorted({lab for lab, _, _ in hits if _public(lab)})
            lo, hi = ax.get_ylim()
            if min(lo, hi) <= chance <= max(lo, hi):
                ax.axhline(chance, color="0.45", ls=(0, (1, 2)), lw=0.9, zorder=0.6)
            what = ", ".join(names) if names else "bars"
            ax.text(0.01, 0.99, f"at chance (1/{round(1 / (chance / (100 if chance > 1 or hi > 1.5 else 1)))} = "
                    f"{chance:g}): {what}", transform=ax.transAxes, ha="left", va="top", fontsize=7,
                    color="firebrick", zorder=6,
                    bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.7, "pad": 1})
        for c, orient, p, v in _short_bars(ax, fig, dpi):
            x = p.get_x() + p.get_width() / 2 if orient == "vertical" else v
            y = v if orient == "vertical" else p.get_y() + p.get_height() / 2
            va = "bottom" if v >= 0 else "top"
            kw = {"ha": "center", "va": va} if orient == "vertical" else {"ha": "left" if v >= 0 else "right",
                                                                          "va": "center"}
            ax.text(x, y, f"{v:+.2f}".replace("-", "−"), fontsize=7, color="0.15", zorder=6, clip_on=True, **kw)


def _flagged(ax, fig, label: str) -> bool:
    texts = [t.get_text() for t in _texts(ax)] + _legend_texts(ax.get_legend()) + _figure_texts(fig)
    said = [t for t in texts if "chance" in t.lower()]
    if not _public(label):
        return any("at chance" in t.lower() for t in said)
    return any(label in t for t in said) or "chance" in label.lower()


def _short_bars(ax, fig, dpi: float) -> list:
    scale = dpi / fig.dpi
    out = []
    for c, orient in _bars(ax):
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


def _seeds_text(seeds) -> str:
    if seeds is None or (not isinstance(seeds, (int, np.integer)) and not len(list(seeds))):
        return ""
    if isinstance(seeds, (int, np.integer)):
        return f"{int(seeds)} seed{'s' if int(seeds) != 1 else ''}"
    seeds = sorted(set(seeds))
    return f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''} ({', '.join(map(str, seeds))})"


def stamp_setting(fig, stamp, meta: dict) -> None:
    """Add the profile and the seeds (``meta``'s) to the "Trained on: …" stamp (``stamp``, the Text
    :func:`~fedlib.repro.artefacts.figure_rules.stamp_datasets` returned), or write them alone under
    the figure when there is none."""
    profile = meta.get("profile")
    profile = getattr(profile, "name", profile)
    parts = ([f"profile: {profile}"] if profile else []) + ([_seeds_text(meta.get("seeds"))]
                                                           if _seeds_text(meta.get("seeds")) else [])
    if not parts:
        return
    text = "; ".join(parts) + "."
    if stamp is not None:
        stamp.set_text(f"{stamp.get_text()} {text[0].upper()}{text[1:]}")
        return
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())
    w, h = fig.get_size_inches()
    fig.text(box.x0 / w, (box.y0 - 0.04) / h, text[0].upper() + text[1:], ha="left", va="top", fontsize=7,
             color="0.3", gid="fedlib-setting")


# ------------------------------------------------------------------------ the rules
def _chance_rule(ax, fig, datasets) -> list[str]:
    return [f"series {lab if _public(lab) else '(bars)'!r} sits at chance ({v:g}; 1/classes of "
            f"{chance_level(ax, datasets)[1]}) and no text says it is 'at chance'"
            for lab, v, _ in _at_chance(ax, datasets, CHANCE_MARGIN_PP) if not _flagged(ax, fig, lab)]


def _visible_rule(ax, fig, dpi) -> list[str]:
    return [f"a bar of value {v:g} is under {MIN_BAR_PX:g} px long at the saved size and no text over it reads "
            f"its value" for _, _, _, v in _short_bars(ax, fig, dpi)]


def _render(fig) -> np.ndarray:
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(np.int16).copy()


def _opaque(sc) -> bool:
    alpha = sc.get_alpha()
    fc = sc.get_facecolors()
    face = float(np.max(fc[:, 3])) if len(fc) else 0.0
    return (1.0 if alpha is None else alpha) * max(face, 0.0 if len(fc) else 1.0) > 0.6 or (
        len(fc) == 0 and (1.0 if alpha is None else alpha) > 0.6)


def _scatter_rule(ax, fig) -> list[str]:
    cats = [sc for sc in _scatters(ax) if len(np.asarray(sc.get_offsets()).reshape(-1, 2))]
    if len(cats) < 2:
        return []
    order = sorted(range(len(cats)), key=lambda i: (cats[i].get_zorder(), ax.get_children().index(cats[i])))
    vis = [sc.get_visible() for sc in cats]
    try:
        for sc in cats:
            sc.set_visible(False)
        base = _render(fig)
        masks = []
        for sc in cats:
            sc.set_visible(True)
            masks.append(np.any(_render(fig) != base, axis=-1))
            sc.set_visible(False)
    finally:
        for sc, v in zip(cats, vis):
            sc.set_visible(v)
    out = []
    said = _all_text(fig)
    for rank, i in enumerate(order):
        above = [masks[j] for j in order[rank + 1:] if _opaque(cats[j])]
        own = masks[i].sum()
        if above and own:
            covered = float((masks[i] & np.logical_or.reduce(above)).sum()) / float(own)
            if covered > 0.5:
                out.append(f"scatter category {cats[i].get_label()!r} is {covered:.0%} covered by the categories "
                           f"drawn over it (draw the minority on top, use transparency, or a panel each)")
        n = len(np.asarray(cats[i].get_offsets()).reshape(-1, 2))
        if not re.search(rf"(?<![\d.]){n}(?![\d.])", said):
            out.append(f"scatter category {cats[i].get_label()!r} has {n} points and no text states the count")
    return out


def _line_kind(ls) -> str:
    ls = str(ls)
    return {"-": "solid", "solid": "solid", "--": "dashed", "dashed": "dashed", ":": "dotted", "dotted": "dotted",
            "-.": "dashdot", "dashdot": "dashdot"}.get(ls, "none" if ls in ("None", "none", "", " ") else ls)


def _has_point(artist, ax) -> bool:
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if not _visible(artist):
        return False
    (x0, x1), (y0, y1) = sorted(ax.get_xlim()), sorted(ax.get_ylim())
    if isinstance(artist, Line2D):
        xy = np.asarray(artist.get_xydata(), dtype=float).reshape(-1, 2)
        if artist.get_transform() != ax.transData:
            return bool(len(xy))
    elif isinstance(artist, Patch):
        return artist.get_window_extent().width * artist.get_window_extent().height > 0
    elif isinstance(artist, Collection):
        xy = np.asarray(artist.get_offsets(), dtype=float).reshape(-1, 2)
        if not len(xy) or not np.isfinite(xy).all(axis=1).any():
            return any(len(p.vertices) for p in artist.get_paths())
    else:
        return True
    ok = np.isfinite(xy).all(axis=1) & (xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1)
    return bool(ok.any())


def _drawn(axes) -> list:
    out = []
    for ax in axes:
        out += [(a, ax) for a in list(ax.lines) + list(ax.patches) + list(ax.collections) if _has_point(a, ax)]
    return out


def _style_match(handle, artist) -> bool:
    from matplotlib.collections import Collection
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    if isinstance(handle, Line2D):
        if isinstance(artist, Line2D):
            same_ls = _line_kind(handle.get_linestyle()) in ("none", _line_kind(artist.get_linestyle()))
            same_m = str(handle.get_marker()) in ("None", "none", "", str(artist.get_marker()))
            return same_ls and same_m
        return isinstance(artist, Collection) and _line_kind(handle.get_linestyle()) == "none"
    if isinstance(handle, Patch):
        return isinstance(artist, Patch) and (handle.get_hatch() or None) == (artist.get_hatch() or None)
    return isinstance(artist, Collection)


def _legend_rule(fig) -> list[tuple[str, str]]:
    out = []
    legends = [(ax.get_legend(), [ax], _name(ax, fig)) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(leg, list(fig.axes), "figure legend") for leg in fig.legends]
    for leg, scope, where in legends:
        drawn = _drawn(scope)
        labels = {a.get_label() for a, _ in drawn}
        named = {a.get_label() for ax in scope for a in list(ax.lines) + list(ax.patches) + list(ax.collections)}
        for ax in scope:
            for c in ax.containers:
                named.add(c.get_label())
                if any(_has_point(a, ax) for a in c.get_children() if a is not None):
                    labels.add(c.get_label())
        for handle, text in zip(leg.legend_handles, leg.get_texts()):
            label = text.get_text()
            if handle is None or not label.strip() or label in labels:
                continue
            lw = getattr(handle, "get_linestyle", lambda: "-")()
            if _line_kind(lw) == "none" and str(getattr(handle, "get_marker", lambda: "o")()) in ("None", "none", ""):
                continue  # a text-only entry (a header or a note)
            if label in named or not any(_style_match(handle, a) for a, _ in drawn):
                out.append((where, f"legend entry {label!r} stands for nothing drawn (no artist of that label or "
                                   f"style has a point in the axes)"))
    return out


def _noise_rule(ax, fig, seeds: int | None) -> list[str]:
    out = []
    declared = getattr(ax, _ATTR, None)
    said = _all_text(fig).lower()
    if declared is not None:
        std, n = declared
        vals = [v for _, vs, _ in _series(ax) for v in vs]
        if len(vals) >= 2 and (max(vals) - min(vals)) < 2 * std:
            band = bool(_errorbar_parts(ax)[1]) or any(type(c).__name__ in ("PolyCollection", "FillBetweenPolyCollection")
                                                       for c in ax.collections if _visible(c))
            if not band:
                out.append(f"values differ by {max(vals) - min(vals):.3g}, under twice their noise (std {std:g}), "
                           f"and no error bar or band shows it")
            if not re.search(rf"\b{n}\s+seeds?\b" if n > 1 else r"\b(1|one)\s+seed\b", said):
                out.append(f"the noise is over {n} seed(s) and no text says '{n} seed{'s' if n > 1 else ''}'")
    if seeds == 1 and (_data_lines(ax) or _bars(ax) or _scatters(ax)) and not re.search(r"\b(1|one)\s+seed\b", said):
        out.append("the figure is over one seed and no text says '1 seed'")
    return out


def _setting_rule(fig, meta: dict, title: str, caption: str) -> list[tuple[str, str]]:
    said = _all_text(fig, [title, caption])
    out = []
    profile = meta.get("profile")
    profile = getattr(profile, "name", profile)
    if profile and str(profile).lower() not in said.lower():
        out.append(("figure", f"the profile {profile!r} is not named"))
    if meta.get("seeds") and not re.search(r"\bseeds?\b", said, re.I):
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
    datasets = [datasets] if isinstance(datasets, str) else list(datasets or [])
    seeds = meta.get("seeds")
    seeds = seeds if seeds is None or isinstance(seeds, (int, np.integer)) else (len(set(seeds)) or None)
    fig.canvas.draw()
    found: dict[str, list[tuple[str, str]]] = {r: [] for r in DATA_RULES}
    for ax in fig.axes:
        where = _name(ax, fig)
        found["chance_from_data"] += [(where, w) for w in _chance_rule(ax, fig, datasets)]
        found["values_visible"] += [(where, w) for w in _visible_rule(ax, fig, dpi)]
        found["scatter_uncovered"] += [(where, w) for w in _scatter_rule(ax, fig)]
        found["noise_shown"] += [(where, w) for w in _noise_rule(ax, fig, seeds)]
    found["legend_drawn"] = _legend_rule(fig)
    found["setting_named"] = _setting_rule(fig, meta, title, caption)
    raised = [r for r in DATA_RULES if r not in waive and r not in DATA_REPORT_ONLY]
    for rule, error in zip(DATA_RULES, _ERRORS):
        if found[rule] and rule in raised:
            raise error(name, [(r, a, w) for r in raised for a, w in found[r]])
    for rule in DATA_REPORT_ONLY:
        if found[rule] and rule not in waive:
            _report(name, rule, found[rule])
    return {rule: not found[rule] for rule in DATA_RULES}
