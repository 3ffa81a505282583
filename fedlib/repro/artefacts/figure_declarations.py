"""What an axes shows that its artists cannot tell (:class:`AxesFacts`, set by :func:`declare`), and the helpers
that draw a label or mark and declare it at once: a cell's label, empty bars and axes, a broken axis, coinciding
lines, groups, a series over fewer seeds, chance, and the datasets a figure was trained on."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable

from .figure_artists import bars, has_data
from .figure_lines import covered, drawn_lines, public, told_apart
from .figure_rule_errors import CELL_STATUSES

__all__ = ["AxesFacts", "facts", "declare", "std_caption", "spread_caption", "declare_stand_ins", "label_cell",
           "label_empty_bars", "mark_broken_axis", "merge_coinciding", "mark_empty", "why_empty", "label_groups",
           "seeds_label", "mark_chance", "stamp_datasets"]


_OK_STATUSES = {"ok", "value", ""}


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


def spread_caption(comparison) -> str:
    """The error bars' sentence for :func:`plot_paper_vs_ours` of ``comparison``: :func:`std_caption` of its seeds
    where every cell of ours has as many; where they differ, the range, since the key names each line over fewer
    (``"some points: 2 of 5 seeds"``) and a point of one seed has no bar ("" below 2 seeds anywhere)."""
    import pandas as pd

    if "n_seeds" not in comparison or "ours_mean" not in comparison:
        return std_caption(None)
    n = pd.to_numeric(comparison.loc[comparison.ours_mean.notna(), "n_seeds"], errors="coerce").dropna()
    if n.empty or n.max() < 2 or n.min() == n.max():
        return std_caption(None if n.empty else int(n.max()))
    lo, hi = int(n.min()), int(n.max())
    return (f"Error bars: std over {hi} seeds, or over fewer where the key says so ({lo} to {hi} seeds a point"
            + ("; a point of 1 seed has no bar)." if lo < 2 else ")."))


def declare_stand_ins(fig, stand_ins: Iterable[str]) -> None:
    """Declare ``stand_ins`` (datasets used in place of the paper's somewhere in ``fig``) on
    every axes of ``fig`` that plots data of ours and declared no stand-in of its own: each must then
    name them (its title or legend, or the figure's).  :class:`fedlib.repro.artefacts.context.Context`
    does this with the profile's substitutions among the figure's ``datasets``."""
    names = tuple(stand_ins)
    if not names:
        return
    for ax in fig.axes:
        if has_data(ax) and facts(ax).ours and not facts(ax).stand_in_declared:
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
    for c, orient in bars(ax):
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
    lines = drawn_lines(ax)
    parent = list(range(len(lines)))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i, a in enumerate(lines):
        for j in range(i + 1, len(lines)):
            if not told_apart(a, lines[j]) and (covered(a, lines[j], ax) or covered(lines[j], a, ax)):
                parent[root(j)] = root(i)
    groups: dict[int, list] = {}
    for i, ln in enumerate(lines):
        groups.setdefault(root(i), []).append(ln)
    texts = []
    for group in (g for g in groups.values() if len(g) > 1):
        named = [(names or {}).get(ln, ln.get_label()) for ln in group]
        unnamed = [i for i, n in enumerate(named) if not public(n)]
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
