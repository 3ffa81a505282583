"""The reporting machinery in one import (each piece lives in its own module):

* :mod:`fedlib.repro.run.grid` -- :func:`run_grid`, :class:`GridResult`, :func:`aggregate`;
* :mod:`fedlib.repro.verdict.compare` -- paper vs ours: :func:`compare`, :func:`winners`,
  :func:`gains`, :func:`summarize`, :func:`findings`;
* :mod:`fedlib.repro.artefacts.tables` -- a paper table run and saved: :func:`reproduce_table`, :func:`grid_cells`;
* :mod:`fedlib.repro.artefacts.context` -- :class:`Context`, what a notebook needs;
* :mod:`fedlib.repro.artefacts.index` -- :func:`build_index`, ``figures/README.md`` across papers and
  ``figures/<paper>/README.md`` per paper.
"""

from ..verdict.compare import MARK, STATUS, add_column_param, compare, gains, summarize, winners
from .comparison_text import findings, render_comparison
from .context import Context
from ..run.grid import GridResult, aggregate, default_store, run_grid
from .index import build_index
from .tables import grid_cells, reproduce_table

__all__ = ["Context", "GridResult", "default_store", "run_grid", "aggregate", "compare", "winners", "gains",
           "render_comparison", "findings", "add_column_param", "grid_cells", "reproduce_table", "build_index",
           "summarize", "STATUS", "MARK"]
