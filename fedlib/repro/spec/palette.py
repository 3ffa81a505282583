"""A fixed colour per method, the same in every figure of a paper: :func:`method_colors`, from seaborn's
colour-blind-safe ``"colorblind"`` palette (:data:`PALETTE`); :mod:`fedlib.repro.artefacts.style` applies it with the
shared figure style, and :attr:`fedlib.repro.spec.paper.Paper.method_colors` gives a paper's."""

from __future__ import annotations

from typing import Iterable

__all__ = ["PALETTE", "method_colors"]

PALETTE = "colorblind"


def method_colors(order: Iterable[str] = (), extra: Iterable[str] | None = None) -> dict[str, tuple]:
    """A fixed colour per method, given an order: the methods of ``order`` first (a paper's
    :attr:`fedlib.repro.spec.paper.Paper.method_order`), then every other registered method token in
    registration order, then the ``extra`` names not among them; colours from :data:`PALETTE`
    in that order (cycling after its 10 colours)."""
    import seaborn as sns

    from ...algorithms import METHODS

    order = list(dict.fromkeys(order))
    order += [m for m in METHODS if m not in order and not m.startswith("toy_")]
    colors = sns.color_palette(PALETTE, len(order))
    table = dict(zip(order, colors))
    more = [m for m in (extra or ()) if m not in table]
    for m, c in zip(more, sns.color_palette(PALETTE, len(order) + len(more))[len(order):]):
        table[m] = c
    return table
