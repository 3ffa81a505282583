"""The cells of a paper's table as a profile configures them on a device: the runs
``python -m fedlib.repro.gpu_cells`` trains (:mod:`fedlib.repro.gpu_cells`)."""

from __future__ import annotations

import dataclasses

from .gate import decide

__all__ = ["cell_jobs"]


def cell_jobs(paper: str, table: str, *, profile: str = "paper", rows=None, columns=None, device: str = "cuda",
              precision: str | None = None) -> list[dict]:
    """The table's cells (``rows`` × ``columns``; None: all) as the ``profile`` configures them on
    ``device`` (on a GPU in ``precision``; None: the profile's ``gpu_precision``): dicts of row, column,
    config.  An unknown row or column is an error naming the known ones."""
    from ..spec.paper import get_paper

    pp = get_paper(paper)
    if table not in pp.tables:
        raise ValueError(f"table must be one of {', '.join(pp.tables)} for {paper}, got {table!r}")
    t = pp.table(table)
    known_rows, known_cols = [r.key for r in t.rows], [c.key for c in t.columns]
    for name, asked, known in (("rows", rows, known_rows), ("columns", columns, known_cols)):
        bad = [a for a in asked or () if a not in known]
        if bad:
            raise ValueError(f"{name} must be among {', '.join(known)} ({paper} {table}), got {', '.join(bad)}")
    prof = dataclasses.replace(pp.profile(profile), device=device)
    if precision is not None:
        prof = dataclasses.replace(prof, gpu_precision=precision)
    out = []
    for r in rows or known_rows:
        for c in columns or known_cols:
            cfg, note = decide(prof, t.config(r, c), table)  # on a GPU, in the profile's gpu_precision
            out.append({"row": r, "column": c, "config": cfg, "note": note})
    return out
