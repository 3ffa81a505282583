"""Train chosen cells of a paper's table into the store: the GPU cells of a paper profile, a few at a time.

A paper-profile regeneration on a CPU marks the cells it cannot afford "not run: needs a GPU".  On a
machine with a GPU, this command trains a chosen few of them (rows × columns × seeds of one table) on
that device, into the results store, exactly as the regeneration would configure them::

    python -m fedlib.repro.cells --paper fedlc --table table1 --columns cifar10_beta0.5 \\
        --rows fedavg,fedlc --seeds 0,1 --device cuda --store results/ --workers 4

A later regeneration that reads the same store, on any machine, shows those cells with the trained
numbers and the device they ran on (:func:`fedlib.repro.costs.CostModel.gate` looks a cell up on the
GPU before marking it "not run").  Each run's time and device are printed, and also written beside the
store as ``cells-<paper>-<table>.json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

__all__ = ["cell_jobs", "train_cells", "main"]


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [t for t in text.split(",") if t]


def cell_jobs(paper: str, table: str, *, profile: str = "paper", rows=None, columns=None, device: str = "cuda"
              ) -> list[dict]:
    """The table's cells (``rows`` × ``columns``; None: all) as the ``profile`` configures them on
    ``device``: dicts of row, column, config.  An unknown row or column is an error naming the known ones."""
    from .paper import get_paper

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
    out = []
    for r in rows or known_rows:
        for c in columns or known_cols:
            cfg, note = prof.config(t.config(r, c), table)
            out.append({"row": r, "column": c, "config": cfg, "note": note})
    return out


def train_cells(paper: str, table: str, *, seeds, profile: str = "paper", rows=None, columns=None,
                device: str = "cuda", store=None, workers: int = 1, progress: bool = True):
    """Train the chosen cells (each seed in ``seeds``) into ``store``; returns the grid's runs
    (:class:`fedlib.repro.grid.GridResult`)."""
    from .grid import run_grid

    seeds = [int(s) for s in seeds]
    if not seeds or any(s < 0 for s in seeds):
        raise ValueError(f"seeds must be one or more integers ≥ 0, got {seeds!r}")
    jobs = cell_jobs(paper, table, profile=profile, rows=rows, columns=columns, device=device)
    return run_grid(jobs, seeds=seeds, store=store, workers=workers, progress=progress,
                    desc=f"{paper} {table} on {device}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedlib.repro.cells", description=__doc__.split("\n\n")[0])
    ap.add_argument("--paper", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--rows", help="comma-separated row keys (default: all)")
    ap.add_argument("--columns", help="comma-separated column keys (default: all)")
    ap.add_argument("--seeds", default="0", help="comma-separated seeds (default: 0)")
    ap.add_argument("--profile", default="paper")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--store", help="results store folder (default: $FEDLIB_STORE or the regeneration store)")
    ap.add_argument("--workers", type=int, default=1, help="runs trained at once (on one GPU they share it)")
    a = ap.parse_args(argv)
    t0 = time.time()
    grid = train_cells(a.paper, a.table, seeds=_split(a.seeds), profile=a.profile, rows=_split(a.rows),
                       columns=_split(a.columns), device=a.device, store=a.store, workers=a.workers)
    cols = [c for c in ("row", "column", "seed", "status", "accuracy", "wall_time_s", "device_name", "note")
            if c in grid.runs]
    print(grid.runs[cols].to_string(index=False))
    print(f"{len(grid.runs)} runs in {time.time() - t0:.0f} s")
    if a.store:
        record = {"paper": a.paper, "table": a.table, "profile": a.profile, "device": a.device,
                  "wall_s": time.time() - t0, "runs": json.loads(grid.runs[cols].to_json(orient="records"))}
        Path(a.store).mkdir(parents=True, exist_ok=True)
        (Path(a.store) / f"cells-{a.paper}-{a.table}.json").write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
