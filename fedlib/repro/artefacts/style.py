"""One look for every figure: the shared matplotlib/seaborn style and a fixed colour per method.

* :func:`use_style` -- seaborn's colour-blind-safe ``"colorblind"`` palette (:data:`PALETTE`),
  TrueType fonts embedded in PDF/PS (``pdf.fonttype = ps.fonttype = 42``), one size for text;
* :func:`method_colors` -- a method's colour, the same in every figure of a paper.
"""

from __future__ import annotations

from typing import Iterable

__all__ = ["PALETTE", "RC", "use_style", "method_colors"]

PALETTE = "colorblind"

RC = {
    "pdf.fonttype": 42,  # TrueType, embedded (not Type 3)
    "ps.fonttype": 42,
    "svg.fonttype": "none",
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "image.cmap": "viridis",
}


def use_style() -> None:
    """Apply the shared style (idempotent); call before plotting."""
    import matplotlib
    import seaborn as sns

    sns.set_theme(context="paper", style="ticks", palette=PALETTE, rc=RC)
    matplotlib.rcParams.update(RC)


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
