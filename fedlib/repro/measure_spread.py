"""Measure a paper table's seed-to-seed spread: its headline comparison trained with several seeds.

A verdict is decided only against a measured spread (:mod:`fedlib.repro.verdict.spread`).  Where a cell ran
with one seed, the spread its verdict needs is the seed-to-seed spread of the table's headline
comparison (the paper's method and baseline in every column the profile runs)::

    python -m fedlib.repro.measure_spread fedabc --profile quick --seeds 0,1,2 --write

runs those cells (store-backed: a cell already in the store is not trained again) and records, per
table, the std over seeds of every headline cell and of the headline gain
(:func:`fedlib.repro.verdict.seeds.seed_spread`) in ``figures/<paper>/<profile>/_spread.json``
(:func:`fedlib.repro.verdict.spread.record_seed_spread`), which the comparisons read.  It trains, so it is an
entry module, above the verdicts (which are pure).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterable

from .artefacts.provenance import default_output_dir, git_commit
from .artefacts.tables import cell_values, grid_cells, metric_of
from .run.grid import default_store, run_grid
from .spec.paper import get_paper
from .verdict.compare import method_of
from .verdict.seeds import seed_spread
from .verdict.spread import SEED_COMMAND, record_seed_spread

__all__ = ["measure_seed_spread", "main"]


def measure_seed_spread(paper: str, profile: str = "quick", seeds: Iterable[int] = (0, 1, 2), *,
                        tables: Iterable[str] | None = None, out_dir: str | Path | None = None, store=None,
                        workers: int = 1, progress: bool = True) -> dict[str, dict]:
    """Run the headline cells (the paper's method and baseline, every column the profile runs) of each paper
    table with ``seeds`` and return {table id: :func:`seed_spread`}.  The metric of each table is the one its
    committed sidecar in ``out_dir`` reports (``parameters.value``; accuracy when there is none)."""
    pp = get_paper(paper)
    prof = pp.profile(profile)
    if pp.headline is None:
        raise ValueError(f"paper {paper!r} has no headline comparison to measure")
    out_dir = Path(out_dir) if out_dir is not None else default_output_dir(pp.name, prof.name)
    out = {}
    for tid in (tables or pp.tables):
        cells = [c for c in grid_cells(prof, tid) if c["config"] is not None and method_of(c["row"]) in pp.headline]
        if not cells:
            continue
        try:
            meta = json.loads((out_dir / f"{tid}.json").read_text())
            value = (meta.get("parameters") or {}).get("value") or "accuracy"
        except (OSError, json.JSONDecodeError):
            value = "accuracy"
        if isinstance(value, dict):
            pairs = {tuple(k.split("/", 1)): v for k, v in value.items()}
            metric = (lambda pairs: lambda r, c: pairs.get((r, c), "accuracy"))(pairs)
        else:
            metric = metric_of(value, pp.table(tid))
        grid = run_grid(cells, seeds=tuple(seeds), store=default_store() if store is None else store,
                        workers=workers, progress=progress, desc=f"{pp.name} {tid} seed-to-seed")
        runs = cell_values(grid.runs[grid.runs.status == "ok"], metric)
        s = seed_spread(runs, pp.headline)
        if s is not None:
            out[tid] = s
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedlib.repro.measure_spread",
                                     description="measure the seed-to-seed spread of a paper's headline cells")
    parser.add_argument("paper")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    parser.add_argument("--tables", default="", help="comma-separated table ids (default: every table)")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--write", action="store_true", help="record it in figures/<paper>/<profile>/_spread.json")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    if len(seeds) < 2:
        parser.error("--seeds: give at least 2 seeds")
    tables = [t for t in args.tables.split(",") if t] or None
    found = measure_seed_spread(args.paper, args.profile, seeds, tables=tables, workers=args.workers)
    if not found:
        print("fedlib.repro.measure_spread: error: no headline cell ran with two seeds", file=sys.stderr)
        return 2
    for name, s in found.items():
        gain = "—" if s["max_gain_std"] is None else f"{s['max_gain_std']:.3f}"
        print(f"{name}: {s['cells']} cells, seeds {s['seeds']}, median std {s['median_std']:.3f}, "
              f"max std {s['max_std']:.3f}, max std of the gain {gain}")
    if args.write:
        folder = default_output_dir(args.paper, args.profile)
        command = SEED_COMMAND.format(paper=args.paper, profile=args.profile).replace("0,1,2", args.seeds)
        print(f"recorded in {record_seed_spread(folder, found, command, git_commit())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
