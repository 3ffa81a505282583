"""What is drawn, for :mod:`fedlib.repro.artefacts.figure_checks_data`'s rules ``scatter_uncovered`` (each
scatter category rasterised alone and against the categories drawn over it) and ``legend_drawn`` (every
legend entry stands for a drawn artist, by its label or, for a key, by its style)."""

from __future__ import annotations

import re

import numpy as np

from .figure_artists import figure_texts, scatters, visible

__all__ = ["draws"]


def axes_tag(ax, fig) -> str:
    i = fig.axes.index(ax) + 1 if ax in fig.axes else 0
    title = ax.get_title() or ax.get_title(loc="left")
    return f"axes {i}" + (f" {title!r}" if title else "")


def all_text(fig, extra=()) -> str:
    """Every visible text of ``fig`` (its legends' too) and ``extra`` (a title, a caption), joined."""
    from matplotlib.text import Text

    found = [t.get_text() for t in fig.findobj(Text) if t.get_visible()]
    return " ".join(found + list(figure_texts(fig)) + list(extra))


def _render(fig) -> np.ndarray:
    fig.canvas.draw()
    return np.asarray(fig.canvas.buffer_rgba())[..., :3].astype(np.int16).copy()


def _opaque(sc) -> bool:
    alpha = sc.get_alpha()
    fc = sc.get_facecolors()
    face = float(np.max(fc[:, 3])) if len(fc) else 0.0
    return (1.0 if alpha is None else alpha) * max(face, 0.0 if len(fc) else 1.0) > 0.6 or (
        len(fc) == 0 and (1.0 if alpha is None else alpha) > 0.6)


def scatter_rule(ax, fig) -> list[str]:
    cats = [sc for sc in scatters(ax) if len(np.asarray(sc.get_offsets()).reshape(-1, 2))]
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
    said = all_text(fig)
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

    if not visible(artist):
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
            return any(np.isfinite(p.vertices).all(axis=1).any() for p in artist.get_paths() if len(p.vertices))
    else:
        return True
    ok = np.isfinite(xy).all(axis=1) & (xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1)
    return bool(ok.any())


def draws(ax) -> bool:
    """Whether ``ax`` draws anything of data: an image, or an artist with a finite point in its limits."""
    return bool(ax.images) or bool(_drawn([ax]))


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
        if not isinstance(artist, Collection):
            return False
        from matplotlib.collections import PathCollection  # a point key: a scatter; a line key: lines, contours

        return (_line_kind(handle.get_linestyle()) == "none") == isinstance(artist, PathCollection)
    if isinstance(handle, Patch):
        return isinstance(artist, Patch) and (handle.get_hatch() or None) == (artist.get_hatch() or None)
    return isinstance(artist, Collection)


def _colours(artist) -> set:
    """The RGB colours an artist draws in (a scatter coloured by class: each of its points' colours)."""
    from matplotlib.colors import to_rgb

    try:
        if hasattr(artist, "get_color") and not hasattr(artist, "get_offsets"):
            return {tuple(round(v, 3) for v in to_rgb(artist.get_color()))}
        fc = np.asarray(artist.get_facecolor(), dtype=float)
        fc = fc.reshape(-1, fc.shape[-1]) if fc.size else fc.reshape(0, 4)
        return {tuple(round(float(v), 3) for v in row[:3]) for row in fc}
    except (ValueError, TypeError):
        return set()


def _colour(artist):
    found = _colours(artist)
    return next(iter(found)) if len(found) == 1 else None


def _grey(handle) -> bool:
    c = _colour(handle)
    return c is None or (max(c) - min(c)) < 0.02


def legend_rule(fig) -> list[tuple[str, str]]:
    out = []
    legends = [(ax.get_legend(), [ax], axes_tag(ax, fig)) for ax in fig.axes if ax.get_legend() is not None]
    legends += [(leg, list(fig.axes), "figure legend") for leg in fig.legends]
    for leg, scope, where in legends:
        drawn = _drawn(scope)
        labels = {a.get_label() for a, _ in drawn}
        # artists that carry data (a line of no points is a legend proxy, as seaborn adds them)
        named = {a.get_label() for ax in scope for a in list(ax.lines) + list(ax.patches) + list(ax.collections)
                 if not (hasattr(a, "get_xydata") and not len(a.get_xydata()))}
        for ax in scope:
            for c in ax.containers:
                named.add(c.get_label())
                if any(_has_point(a, ax) for a in c.get_children() if a is not None):
                    labels.add(c.get_label())
        for handle, text in zip(leg.legend_handles, leg.get_texts()):
            label = text.get_text()
            if handle is None or not label.strip() or label in labels:
                continue
            ls, marker = getattr(handle, "get_linestyle", lambda: "-")(), getattr(handle, "get_marker", lambda: "o")()
            no_line = _line_kind(ls) == "none" or getattr(handle, "get_linewidth", lambda: 1)() == 0
            if no_line and str(marker) in ("None", "none", ""):
                continue  # a text-only entry (a header or a note)
            alike = [a for a, _ in drawn if _style_match(handle, a)]
            if not _grey(handle):  # a coloured key stands for an artist of its colour
                alike = [a for a in alike if not _colours(a) or _colour(handle) in _colours(a)]
            if label in named or not alike:
                out.append((where, f"legend entry {label!r} stands for nothing drawn (no artist of that label or "
                                   f"style has a point in the axes)"))
    return out
