"""The figure rules on how the data is drawn: ``values_within_axes``, ``series_distinct``, ``legend_clear``,
``series_visible`` and ``text_legible``, each a check that returns its violations
(:func:`~fedlib.repro.artefacts.figure_rules.check_figure` runs them)."""

from __future__ import annotations

import math

import numpy as np

from .figure_artists import (all_texts, areas, axes_name, bars, data_lines, errorbar_parts, has_data, meshes, scatters,
                             segments, within)
from .figure_declarations import facts
from .figure_lines import covered, dash_key, display_points, drawn_lines, line_name, public, rgba, told_apart
from .figure_rule_errors import MAX_WIDTH_PX, MIN_FONT_PT

__all__ = ["values_within_axes", "series_distinct", "legend_clear", "series_visible", "text_legible"]


# ------------------------------------------------------------------------ the rules
def values_within_axes(ax, name) -> list[str]:
    f = facts(ax)
    xl, yl = ax.get_xlim(), ax.get_ylim()
    xlog, ylog = ax.get_xscale() == "log", ax.get_yscale() == "log"
    out: list[str] = []

    def check(xs, ys, what):
        for x, y in zip(np.ravel(xs), np.ravel(ys)):
            if not (math.isfinite(x) and math.isfinite(y)):  # a point with a missing coordinate is not drawn
                continue
            if not within(x, xl, xlog):
                out.append(f"{what} x = {x:g} outside the x-limits [{min(xl):g}, {max(xl):g}]")
                return
            if not within(y, yl, ylog):
                out.append(f"{what} y = {y:g} outside the y-limits [{min(yl):g}, {max(yl):g}]")
                return

    for ln in data_lines(ax):
        xy = np.asarray(ln.get_xydata(), dtype=float)
        if xy.size:
            check(xy[:, 0], xy[:, 1], f"line {ln.get_label()!r}:")
    for sc in scatters(ax):
        off = np.asarray(sc.get_offsets(), dtype=float)
        if off.size:
            check(off[:, 0], off[:, 1], f"points {sc.get_label()!r}:")
    for col in errorbar_parts(ax)[1]:
        for seg in segments(col):
            check(seg[:, 0], seg[:, 1], "error bar end:")
    for col in areas(ax):  # fill_between bands: every vertex
        for path in col.get_paths():
            v = np.asarray(path.vertices, dtype=float)
            if v.size:
                check(v[:, 0], v[:, 1], f"filled area {col.get_label()!r}:")
    for mesh in meshes(ax):  # heatmaps (pcolormesh, seaborn.heatmap): every cell corner
        xy = np.asarray(mesh.get_coordinates(), dtype=float).reshape(-1, 2)
        check(xy[:, 0], xy[:, 1], "heatmap cell:")
    for im in ax.get_images():  # imshow: its extent
        x0, x1, y0, y1 = im.get_extent()
        check([x0, x1], [y0, y1], "image edge:")
    for c, orient in bars(ax):
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
                if not within(v, lim, log):
                    out.append(f"bar {c.get_label()!r}: {which} {value_axis} = {v:g} outside the {value_axis}-limits "
                               f"[{min(lim):g}, {max(lim):g}]" + ("" if broken else
                                                                  f" (mark_broken_axis(ax, {value_axis!r}) if the "
                                                                  f"axis is meant not to start at 0)"))
                    break
            plim, plog = (xl, xlog) if value_axis == "y" else (yl, ylog)
            if not all(within(v, plim, plog) for v in pos if math.isfinite(v)):
                out.append(f"bar {c.get_label()!r} at {pos[0]:g}..{pos[1]:g} outside the axes")
        if c.patches and not broken and not within(0.0, lim, log):
            out.append(f"bars {c.get_label()!r} do not start at 0: the {value_axis}-limits "
                       f"[{min(lim):g}, {max(lim):g}] exclude 0")
    return list(dict.fromkeys(out))


def series_distinct(ax, name) -> list[str]:
    seen: dict[tuple, str] = {}
    out: list[str] = []

    def add(key, label, what):
        if key in seen:
            other = seen[key]
            if public(label) and label == other:
                return
            out.append(f"{what} {label!r} and {other!r} share colour, line style and marker")
        else:
            seen[key] = label

    for ln in data_lines(ax):
        if not np.isfinite(np.asarray(ln.get_xydata(), dtype=float)).all(axis=1).any():
            continue
        mfc = ln.get_markerfacecolor()
        open_marker = isinstance(mfc, str) and mfc.lower() == "none"
        key = ("line", rgba(ln.get_color()), dash_key(ln), str(ln.get_marker()), open_marker)
        add(key, ln.get_label(), "lines")
    for c, _ in bars(ax):
        if not c.patches:
            continue
        colors = tuple(dict.fromkeys(rgba(p.get_facecolor()) for p in c.patches))
        key = ("bar", colors, c.patches[0].get_hatch())
        add(key, c.get_label(), "bar series")
    for sc in scatters(ax):
        key = ("points", rgba(sc.get_facecolor()), tuple(np.round(sc.get_sizes(), 3)))
        add(key, sc.get_label(), "point series")
    return out


def legend_clear(fig, renderer) -> list[tuple[str, str]]:
    from matplotlib.transforms import Bbox

    legends = [(ax.get_legend(), axes_name(ax, fig)) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(leg, "the figure") for leg in fig.legends]
    out = []
    for leg, owner in legends:
        if not leg.get_visible():
            continue
        bb = leg.get_window_extent(renderer)
        inner = Bbox.from_extents(bb.x0 + 1, bb.y0 + 1, bb.x1 - 1, bb.y1 - 1)
        for ax in fig.axes:
            if not has_data(ax):
                continue
            hit = None
            for p in display_points(ax):
                inside = (p[:, 0] > inner.x0) & (p[:, 0] < inner.x1) & (p[:, 1] > inner.y0) & (p[:, 1] < inner.y1)
                if inside.any():
                    hit = "a plotted point"
                    break
            if hit is None:
                for c, _ in bars(ax):
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
                out.append((owner, f"its legend covers {hit} of {axes_name(ax, fig)}"))
    return out


def series_visible(ax, name, fig) -> list[str]:
    lines = drawn_lines(ax)
    shown = all_texts(fig)
    declared = [(set(map(id, group)), text) for group, text in facts(ax).coinciding if any(text in t for t in shown)]
    out = []
    for i, low in enumerate(lines):
        for high in lines[i + 1:]:
            if public(low.get_label()) and low.get_label() == high.get_label():
                continue  # one series
            if told_apart(low, high) or any({id(low), id(high)} <= ids for ids, _ in declared):
                continue
            if covered(low, high, ax):
                out.append(f"line {line_name(low, ax)} is drawn under line {line_name(high, ax)} (every point within "
                           f"the line width): tell them apart by markers or an offset, or merge_coinciding(ax) "
                           f"for one legend entry 'A = B'")
                break
    return out


def _shown_tick_labels(axis) -> list:
    lo, hi = sorted(axis.get_view_interval())
    tol = 1e-9 * max(hi - lo, 1e-12)
    out = []
    for locs, labels in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                         (axis.get_minorticklocs(), axis.get_minorticklabels())):
        out += [t for v, t in zip(locs, labels) if lo - tol <= v <= hi + tol and t.get_visible() and t.get_text().strip()]
    return out


def text_legible(fig, renderer, dpi: float) -> list[tuple[str, str]]:
    from matplotlib.text import Text

    out = []
    owner = {id(t): axes_name(ax, fig) for ax in reversed(fig.axes) for t in ax.findobj(Text)}
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
                    out.append((axes_name(ax, fig), f"{'x' if along == 0 else 'y'} tick labels {t0.get_text()!r} and "
                                                     f"{t1.get_text()!r} overlap"))
                    break
    box = fig.get_tightbbox(renderer)
    width = (box.width + 2 * 0.1) * dpi  # bbox_inches="tight" pads 0.1 in
    if width > MAX_WIDTH_PX:
        out.append(("the figure", f"is {width:.0f} px wide when saved at {dpi:g} dpi, above {MAX_WIDTH_PX} px"))
    return out
