"""One look for every figure: the shared matplotlib/seaborn style and a fixed colour per method.

* :func:`use_style` -- seaborn's colour-blind-safe ``"colorblind"`` palette (:data:`PALETTE`),
  TrueType fonts embedded in PDF/PS (``pdf.fonttype = ps.fonttype = 42``), one size for text;
* :func:`method_colors` -- a method's colour, the same in every figure of a paper (with :data:`PALETTE`,
  in :mod:`fedlib.repro.spec.palette`: a paper's descriptor reads it; re-exported here).
"""

from __future__ import annotations

from ..spec.palette import PALETTE, method_colors

__all__ = ["PALETTE", "RC", "use_style", "method_colors"]

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
