"""What :func:`fedlib.repro.artefacts.saving.save_figure` marks on every figure before the rules of
:mod:`fedlib.repro.artefacts.figure_checks_data` check it: each series at chance, flagged; each bar
too short to see, labelled with its value; the profile and the seeds, beside "Trained on: …"."""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from .figure_artists import MARK, segments
from .figure_checks_data import CHANCE_MARGIN_PP, at_chance, chance_level, flagged, short_bars
from .figure_lines import public
from .page_text import number_ranges

__all__ = ["mend", "stamp_setting"]


def mend(fig, datasets: Iterable[str] | None = None, *, dpi: float = 200.0) -> None:
    """Flag on ``fig`` what needs no judgement: each series at chance, named in a note above the data ("at chance
    (1/K = …): <series>"; a line's points at chance ringed, a bar's marked), each bar too short to see (its value
    as a label)."""
    fig.canvas.draw()
    for ax in fig.axes:
        hits = [h for h in at_chance(ax, datasets, CHANCE_MARGIN_PP) if not flagged(ax, fig, h[0])]
        if hits:
            chance, _ = chance_level(ax, datasets)
            lo, hi = sorted(ax.get_ylim())
            if lo <= chance <= hi:
                ax.axhline(chance, color="0.45", ls=(0, (1, 2)), lw=0.9, zorder=0.6)
            names, top = [], chance + (CHANCE_MARGIN_PP if hi > 1.5 else CHANCE_MARGIN_PP / 100)
            for label, _, artist in hits:
                bars = _chance_bars(ax, artist, top, chance)
                if bars:
                    names += [f"{n} ({label})" if public(label) else n for n in bars]
                elif _point(ax, label, artist, top):  # a line's points at chance: ringed, named in the note
                    names.append(f"{label} (ringed)")
                elif public(label):
                    names.append(label)
            if names or not all(public(lab) for lab, _, _ in hits):
                k = round(1 / (chance / (100 if hi > 1.5 else 1)))
                names = list(dict.fromkeys(names))
                series = list(dict.fromkeys(lab for lab, _, _ in hits if public(lab)))
                which = ", ".join(names) if 0 < len(names) <= 6 else (  # a long list says less than the marks
                    f"{len(names)} bars, each marked, of {', '.join(series)}" if names else "bars")
                _note(ax, f"at chance (1/{k} = {chance:g}): {which}")
        for c, orient, p, v in short_bars(ax, fig, dpi):
            x = p.get_x() + p.get_width() / 2 if orient == "vertical" else v
            y = v if orient == "vertical" else p.get_y() + p.get_height() / 2
            va = "bottom" if v >= 0 else "top"
            kw = {"ha": "center", "va": va} if orient == "vertical" else {"ha": "left" if v >= 0 else "right",
                                                                          "va": "center"}
            ax.text(x, y, f"{v:+.2f}".replace("-", "−"), fontsize=7, color="0.15", zorder=6, clip_on=True, **kw)


def _note(ax, text: str) -> None:
    """``text`` at the top left of ``ax``, wrapped to the axes' width, in headroom added above the data (the
    y limit raised by the note's height), so that it covers no bar or point."""
    import textwrap

    box = ax.get_window_extent()
    lines = textwrap.wrap(text, width=max(24, int(box.width / ax.figure.dpi * 17)))  # about 17 chars an inch at 7 pt
    frac = min(0.45, (len(lines) * 7 * 1.25 / 72 * ax.figure.dpi + 6) / max(box.height, 1.0))
    lo, hi = ax.get_ylim()
    if not ax.yaxis_inverted() and ax.get_yscale() == "linear":
        ticks = [t for t in ax.get_yticks() if lo <= t <= hi]
        ax.set_ylim(lo, lo + (hi - lo) / (1 - frac))
        ax.set_yticks(ticks)  # the headroom is for the note: no tick past the data's range (an accuracy of 150 %)
    ax.text(0.01, 0.99, "\n".join(lines), transform=ax.transAxes, ha="left", va="top", fontsize=7,
            color="firebrick", zorder=6, linespacing=1.1)


def _point(ax, label: str, artist, top: float) -> bool:
    """Ring each point of a line at chance, in the line's colour (no text: a label beside a point lands on the
    other curves, which crowd near chance); False for what is no line, has no name or no point at chance."""
    from matplotlib.lines import Line2D

    if not isinstance(artist, Line2D) or not public(label):
        return False
    xy = np.asarray(artist.get_xydata(), dtype=float).reshape(-1, 2)
    xy = xy[np.isfinite(xy).all(axis=1) & (xy[:, 1] <= top)]
    if not len(xy):
        return False
    ax.plot(xy[:, 0], xy[:, 1], ls="none", marker="o", ms=9, mfc="none", mec=artist.get_color(), mew=1.2,
            zorder=6, label="_at chance", clip_on=False, gid=MARK)
    return True


def _chance_bars(ax, artist, top: float, chance: float | None = None) -> list[str]:
    """Mark each bar of ``artist`` (a bar series) at or under ``top`` "at chance" over it; returns their
    tick labels (the bars' names)."""
    from matplotlib.container import BarContainer

    if not isinstance(artist, BarContainer):
        return []
    ticks = {round(float(t), 6): lab.get_text() for t, lab in zip(ax.get_xticks(), ax.get_xticklabels())}
    whiskers = _whisker_tops(artist)
    names = []
    for p in artist.patches:
        v = p.get_y() + p.get_height()
        if not (math.isfinite(v) and v <= top):
            continue
        x = p.get_x() + p.get_width() / 2
        below = v < top - 2 * (top - chance) if chance is not None else False  # well under chance, not at it
        above = max([v, 0.0] + [t for wx, t in whiskers if abs(wx - x) <= p.get_width() / 2])  # over its error bar
        ax.text(x, above, "at chance or below" if below else "at chance", rotation=90, ha="center",
                va="bottom", fontsize=7, color="firebrick", zorder=6)
        near = min(ticks, key=lambda t: abs(t - x)) if ticks else None
        if near is not None and abs(near - x) <= p.get_width():
            names.append(ticks[near].replace("\n", " "))
    return names


def _seeds_text(seeds) -> str:
    if seeds is None or (not isinstance(seeds, (int, np.integer)) and not len(list(seeds))):
        return ""
    if isinstance(seeds, (int, np.integer)):
        return f"{int(seeds)} seed{'s' if int(seeds) != 1 else ''}"
    seeds = sorted(set(seeds))
    if len(seeds) == 1:
        return f"1 seed ({seeds[0]})"
    # the seeds its cells hold, together, not counted as a cell's: a decided cell may hold seeds others lack
    return f"seeds {number_ranges(seeds)}"


def stamp_setting(fig, stamp, meta: dict) -> None:
    """Add the profile and the seeds (``meta``'s) to the "Trained on: …" stamp (``stamp``, the Text
    :func:`~fedlib.repro.artefacts.figure_rules.stamp_datasets` returned), or write them alone under
    the figure when there is none."""
    profile = meta.get("profile")
    profile = getattr(profile, "name", profile)
    seeds, some = meta.get("seeds"), [int(x) for x in meta.get("seeds_some") or ()]
    said = _seeds_text(seeds)
    if said and some and not isinstance(seeds, (int, np.integer)):
        every = [x for x in sorted(set(seeds)) if x not in some]
        said = (f"{_seeds_text(every) if every else 'no seed'} in every cell that ran; seed{'s' if len(some) != 1 else ''} "
                f"{number_ranges(some)} in some cells only (added to decide a claim)")
    elif said and meta.get("seeds_fewer"):
        fewer, cells = meta["seeds_fewer"]
        said += f" ({fewer} of the {cells} cells that ran hold{'s' if fewer == 1 else ''} fewer)"
    parts = ([f"profile: {profile}"] if profile else []) + ([said] if said else [])
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


def _whisker_tops(artist) -> list[tuple[float, float]]:
    """(x, top) of each error bar a bar series drew (``yerr``), so that a mark over a bar clears its whisker."""
    lines = getattr(getattr(artist, "errorbar", None), "lines", None)
    return [(float(seg[:, 0].mean()), float(seg[:, 1].max())) for collection in (lines[2] if lines else ())
            for seg in segments(collection) if np.isfinite(seg).all()]
