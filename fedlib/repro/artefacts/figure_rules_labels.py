"""The figure rules on what a figure says: ``stand_in_named``, ``cells_labelled``, ``error_bars_seeds``,
``axes_not_blank``, ``groups_shown``, ``dataset_named``, ``seeds_marked`` and ``chance_flagged``, each a check that
returns its violations (:func:`~fedlib.repro.artefacts.figure_rules.check_figure` runs them)."""

from __future__ import annotations

import math
import re

import numpy as np

from .figure_artists import (all_texts, bars, data_lines, dataset_names, errorbar_parts, figure_texts, legend_texts,
                             norm, segments, text_data_position, titles, visible, within)
from .figure_declarations import facts
from .figure_rule_errors import CELL_STATUSES

__all__ = ["stand_in_named", "cells_labelled", "error_bars", "axes_not_blank", "groups_shown", "dataset_named",
           "seeds_marked", "chance_flagged"]


# ------------------------------------------------------------------------ the rules
_ZERO = re.compile(r"^[+\-−±]?\s*0+(?:[.,]0+)?\s*(?:%|pp|\s*pp)?$")


def stand_in_named(ax, name, fig) -> list[str]:
    f = facts(ax)
    if not f.stand_in:
        return []
    shown = norm(" ".join(titles(ax) + legend_texts(ax.get_legend()) + figure_texts(fig)))
    return [f"plots a stand-in ({ds}) but names it in neither its title nor a legend"
            for ds in f.stand_in if not any(n in shown for n in dataset_names(ds))]


def cells_labelled(ax, name) -> list[str]:
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
        shown = " ".join(titles(ax) + [t.get_text() for t in texts] + legend_texts(ax.get_legend())).lower()
        if "paper only" not in shown:
            out.append("shows no result of ours (declare(ax, ours=False)) but does not say 'paper only'")
    for c, orient in bars(ax):
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
                pos = text_data_position(t, ax)
                if pos is not None and lo - 1e-9 <= (pos[0] if orient == "vertical" else pos[1]) <= hi + 1e-9:
                    over.append(t.get_text().strip())
            if h == 0 and not any(_ZERO.match(s) for s in over):
                out.append(f"bar {c.get_label()!r} at {lo:g}..{hi:g} has height 0 and no value label reading 0 "
                           f"over it")
            elif not math.isfinite(h) and not any(over):
                out.append(f"bar {c.get_label()!r} at {lo:g}..{hi:g} has no value (drawn as nothing) and no label "
                           f"over it ('not run', 'diverged', …)")
            elif not math.isfinite(h) and not all(within(v, lim, log) for v in (lo, hi)):
                # matplotlib sets no limit for a bar without a value: where one bar of a panel has a value,
                # the others' places (and their labels) can lie outside the axes
                out.append(f"bar {c.get_label()!r} at {lo:g}..{hi:g} has no value and lies outside the axes: its "
                           f"label is not seen (label_empty_bars keeps its place inside)")
    return out


def error_bars(ax, name, caption: str, seeds: int | None) -> list[str]:
    from matplotlib.container import ErrorbarContainer

    drawn = [c for c in ax.containers if isinstance(c, ErrorbarContainer)
             and (c.has_yerr or c.has_xerr) and any(segments(col) for col in c.lines[2])]
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


def _is_blank(ax) -> bool:
    """No finite line point, bar, scatter point, area, mesh, image, patch or table in ``ax``."""
    if any(np.isfinite(np.asarray(ln.get_xydata(), dtype=float)).all(axis=1).any()
           for ln in ax.lines if visible(ln) and id(ln) not in errorbar_parts(ax)[0]):
        return False
    if bars(ax) or ax.get_images() or ax.tables:
        return False
    if any(visible(c) and (len(c.get_paths()) if hasattr(c, "get_paths") else True) for c in ax.collections):
        return False
    return not any(visible(p) for p in ax.patches)


def axes_not_blank(ax, name) -> list[str]:
    f = facts(ax)
    if not ax.axison or getattr(ax, "_colorbar", None) is not None or not _is_blank(ax):
        return []
    if f.empty and any(t.get_visible() and t.get_text() == f.empty for t in ax.texts):
        return []
    if f.cells:
        return []  # its cells' labels say why (cells_labelled checks them)
    return ["has no data and does not say what it would show and why it is empty (mark_empty(ax, shows, why))"]


def groups_shown(ax, name, fig) -> list[str]:
    groups = facts(ax).groups
    if not groups:
        return []
    words = [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()] + \
        [t.get_text() for t in ax.texts if t.get_visible()] + titles(ax) + legend_texts(ax.get_legend())
    shown = norm(" ".join(words))
    dropped = [g for g in groups if norm(g) not in shown]
    return [f"declares the group(s) {dropped} but names them nowhere in it (a tick label, text, title or legend; "
            f"label_groups)"] if dropped else []


def dataset_named(fig, datasets) -> list[tuple[str, str]]:
    names = [str(d) for d in (datasets if datasets is not None else []) if d is not None]
    if not names:
        return []
    shown = norm(" ".join(all_texts(fig)))
    return [("the figure", f"trained on {d} but does not name it (stamp_datasets)")
            for d in dict.fromkeys(names) if not any(n in shown for n in dataset_names(d))]


def seeds_marked(ax, name, fig, caption: str) -> list[str]:
    m = re.search(r"std over (\d+) seeds", caption or "")
    f = facts(ax)
    if not m or not f.series_seeds:
        return []
    total = int(m.group(1))
    texts = all_texts(fig)
    out = []
    for series, n in f.series_seeds.items():
        if n >= total:
            continue
        mark = re.compile(rf"\b{n} (?:of {total} )?seeds?\b")
        if not any(series in t and mark.search(t) for t in texts):
            out.append(f"series {series!r} is over {n} seed(s), the caption says 'std over {total} seeds', and no "
                       f"text names it with '{n} of {total} seeds' (seeds_label)")
    return out


def chance_flagged(ax, name, fig) -> list[str]:
    f = facts(ax)
    if f.chance is None:
        return []
    values = [y for ln in data_lines(ax) for y in np.asarray(ln.get_xydata(), dtype=float)[:, 1] if math.isfinite(y)]
    for c, orient in bars(ax):
        values += [(p.get_y() + p.get_height()) if orient == "vertical" else (p.get_x() + p.get_width())
                   for p in c.patches]
    low = [v for v in values if math.isfinite(v) and v <= f.chance + f.chance_margin]
    if not low:
        return []
    said = " ".join([t.get_text() for t in ax.texts if t.get_visible()] + titles(ax) + legend_texts(ax.get_legend())
                    + figure_texts(fig)).lower()
    if "chance" in said:
        return []
    return [f"a value ({min(low):g}) sits at chance ({f.chance:g} + {f.chance_margin:g}) and nothing in the axes says "
            f"'chance' (mark_chance)"]
