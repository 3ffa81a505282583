"""What an axes draws and what a figure says, as the figure rules see them: the data artists of an axes (lines,
bars, points, filled areas, heatmaps, error bars), whether a value lies within limits, and the texts of titles and
legends, with a dataset's names as a figure may write them."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

__all__ = ["MARK", "visible", "errorbar_parts", "data_lines", "bars", "scatters", "areas", "meshes", "segments",
           "axes_name", "has_data", "within", "norm", "dataset_names", "legend_texts", "titles", "figure_texts",
           "text_data_position", "all_texts"]


_ALIASES = {"fmnist": ("fashionmnist", "fashion-mnist", "fmnist"), "cifar10": ("cifar-10", "cifar10"),
            "cifar100": ("cifar-100", "cifar100")}


#: the gid of what the figure tools draw over the data to flag it (a ring around a point at chance): a mark, not data,
#: so no rule reads it as a series, a point under a legend or a line hiding another
MARK = "fedlib-mark"


# ------------------------------------------------------------------------ what an axes draws
def _in_data(artist, ax) -> bool:
    t = artist.get_transform()
    return t is ax.transData or t == ax.transData


def visible(artist) -> bool:
    return artist.get_visible() and artist.get_alpha() != 0


def errorbar_parts(ax) -> tuple[set[int], list]:
    """ids of the cap lines of every error bar, and the error bars' LineCollections."""
    from matplotlib.container import ErrorbarContainer

    caps, cols = set(), []
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer):
            _, caplines, barcols = c.lines
            caps |= {id(ln) for ln in caplines}
            cols += list(barcols)
    return caps, cols


def data_lines(ax) -> list:
    caps, _ = errorbar_parts(ax)
    return [ln for ln in ax.lines if id(ln) not in caps and visible(ln) and _in_data(ln, ax) and ln.get_gid() != MARK]


def bars(ax) -> list[tuple[Any, str]]:
    """(container, orientation) of every bar series."""
    from matplotlib.container import BarContainer

    return [(c, getattr(c, "orientation", None) or "vertical") for c in ax.containers if isinstance(c, BarContainer)]


def scatters(ax) -> list:
    from matplotlib.collections import PathCollection

    return [c for c in ax.collections if isinstance(c, PathCollection) and visible(c)
            and (c.get_offset_transform() is ax.transData or c.get_offset_transform() == ax.transData)]


def areas(ax) -> list:
    """Filled areas in data coordinates (``fill_between``: PolyCollections that are not scatter points)."""
    from matplotlib.collections import PolyCollection

    return [c for c in ax.collections if isinstance(c, PolyCollection) and visible(c) and _in_data(c, ax)]


def meshes(ax) -> list:
    from matplotlib.collections import QuadMesh

    return [c for c in ax.collections if isinstance(c, QuadMesh) and visible(c) and _in_data(c, ax)]


def segments(col) -> list[np.ndarray]:
    return [np.asarray(s, dtype=float) for s in col.get_segments() if len(s)]


def axes_name(ax, fig) -> str:
    i = fig.axes.index(ax) + 1 if ax in fig.axes else 0
    title = ax.get_title() or ax.get_title(loc="left") or ax.get_title(loc="right")
    return f"axes {i}" + (f" {title!r}" if title else "")


def has_data(ax) -> bool:
    return bool(data_lines(ax) or bars(ax) or scatters(ax) or errorbar_parts(ax)[1])


def within(v: float, lim: tuple[float, float], log: bool) -> bool:
    lo, hi = sorted(lim)
    if log:
        if v <= 0:
            return False
        v, lo, hi = math.log10(v), math.log10(lo), math.log10(hi)
    tol = 1e-9 * max(hi - lo, 1e-12)
    return lo - tol <= v <= hi + tol


def norm(text: str) -> str:
    return re.sub(r"[\s_]+", "", text.lower())


def dataset_names(name: str) -> tuple[str, ...]:
    from ...data import DATASETS

    names = {norm(name)}
    if name in DATASETS:
        names.add(norm(DATASETS[name].label))
    names |= {norm(a) for a in _ALIASES.get(name, ())}
    return tuple(names)


def legend_texts(legend) -> list[str]:
    if legend is None:
        return []
    return [t.get_text() for t in legend.get_texts()] + [legend.get_title().get_text()]


def titles(ax) -> list[str]:
    return [ax.get_title(loc=loc) for loc in ("center", "left", "right")]


def figure_texts(fig) -> list[str]:
    texts = [fig.get_suptitle()]
    for leg in fig.legends:
        texts += legend_texts(leg)
    return texts


def text_data_position(text, ax) -> tuple[float, float] | None:
    try:
        disp = text.get_transform().transform(text.get_position())
        x, y = ax.transData.inverted().transform(disp)
        return float(x), float(y)
    except (ValueError, np.linalg.LinAlgError):
        return None


def all_texts(fig) -> list[str]:
    from matplotlib.text import Text

    return [t.get_text() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
