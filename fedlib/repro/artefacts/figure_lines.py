"""How the series of an axes look and where they lie on screen: their colour, line style and markers, the data
in display coordinates, and whether one line is drawn under another (for the rules ``series_distinct``,
``legend_clear``, ``series_visible`` and :func:`~fedlib.repro.artefacts.figure_rules.merge_coinciding`)."""

from __future__ import annotations

import numpy as np

from .figure_artists import data_lines, errorbar_parts, scatters, segments

__all__ = ["rgba", "public", "dash_key", "display_points", "drawn_lines", "covered", "told_apart", "line_name"]


def rgba(color) -> tuple:
    from matplotlib.colors import to_rgba

    try:
        return tuple(round(v, 3) for v in to_rgba(color))
    except (ValueError, TypeError):
        arr = np.atleast_2d(np.asarray(color, dtype=float))
        return tuple(tuple(round(v, 3) for v in row) for row in arr)


def public(label: str) -> bool:
    return bool(label) and not label.startswith("_")


def dash_key(ln) -> tuple:
    """A line's style as drawn: its named style and, for dashes, their pattern (matplotlib reports every custom
    pattern, such as seaborn's ``style=`` dashes, as ``'--'``)."""
    pattern = getattr(ln, "_unscaled_dash_pattern", None)  # (offset, (on, off, ...)) or (0, None) for solid
    seq = pattern[1] if isinstance(pattern, tuple) and len(pattern) == 2 else None
    return ln.get_linestyle(), tuple(np.round(seq, 3)) if seq else None


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


def display_points(ax) -> list[np.ndarray]:
    """The axes' data in display coordinates: line vertices and points along each segment
    (every 2 px), scatter points, error-bar segments; only what lies inside the axes."""
    pts = []
    densify = _densify
    for ln in data_lines(ax):
        xy = np.asarray(ln.get_xydata(), dtype=float)
        if xy.size:
            with np.errstate(all="ignore"):
                disp = ax.transData.transform(xy)
            pts.append(densify(disp, ln.get_linestyle() not in ("None", "", " ")))
    for sc in scatters(ax):
        off = np.asarray(sc.get_offsets(), dtype=float)
        if off.size:
            pts.append(densify(ax.transData.transform(off), False))
    for col in errorbar_parts(ax)[1]:
        for seg in segments(col):
            pts.append(densify(ax.transData.transform(seg), True))
    box = ax.bbox
    return [p[(p[:, 0] >= box.x0) & (p[:, 0] <= box.x1) & (p[:, 1] >= box.y0) & (p[:, 1] <= box.y1)]
            for p in pts if len(p)]


def _connected(ln) -> bool:
    return ln.get_linestyle() not in ("None", "", " ")


def _marker_look(ln) -> tuple | None:
    """A line's markers as the reader sees them: (shape, filled), None without markers."""
    m = ln.get_marker()
    if m in (None, "None", "none", "", " ", ",") or not ln.get_markersize():
        return None
    mfc = ln.get_markerfacecolor()
    return str(m), not (isinstance(mfc, str) and mfc.lower() == "none")


def drawn_lines(ax) -> list:
    """The data lines with a finite point, in drawing order (z-order, then order added)."""
    lines = [ln for ln in data_lines(ax) if np.isfinite(np.asarray(ln.get_xydata(), dtype=float)).all(axis=1).any()]
    return sorted(lines, key=lambda ln: ln.get_zorder())


def covered(low, high, ax) -> bool:
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


def told_apart(low, high) -> bool:
    """Whether a line drawn under another still shows: its own markers, or through the
    gaps of a dashed upper line of another colour and another line style."""
    mine = _marker_look(low)
    if mine is not None and mine != _marker_look(high):
        return True
    return high.get_linestyle() not in ("-", "solid") and _connected(high) and _connected(low) \
        and low.get_linestyle() != high.get_linestyle() and rgba(low.get_color()) != rgba(high.get_color())


def line_name(ln, ax) -> str:
    label = ln.get_label()
    return repr(label) if public(label) else f"line {ax.lines.index(ln) + 1} (colour {rgba(ln.get_color())[:3]})"
