"""Train the runs that would decide inconclusive claims, cheapest decision first, and render the claims again.

    python -m fedlib.repro.decide fedlc/table4-synthetic          # one claim (every inconclusive scale of it)
    python -m fedlib.repro.decide --all --dry-run                 # every plan: runs, scale, cost; trains nothing
    python -m fedlib.repro.decide --all --minutes 60              # the decisions whose estimates fit in 60 min

The plan is :func:`fedlib.repro.artefacts.decision.plan` (seeds from the closed form at the measured paired spread,
cost from the run records or the cost model).  For each decision, in order:

1. **train** exactly its runs (its cells × the seeds each lacks) through the grid
   (:func:`fedlib.repro.run.grid.run_grid`), into the results store, writing their run records into
   ``figures/<paper>/<profile>/_records.jsonl.gz`` (merged beside the committed ones), each as it finishes.
   A decide stopped and started again trains only the runs neither the store nor the records hold under the
   current code (:func:`fedlib.repro.run.records.resumable`), on this machine or another;
2. **declare** the seeds it added, cell by cell, in ``figures/<paper>/<profile>/_decided.jsonl``
   (:func:`declare`; :data:`fedlib.repro.artefacts.tables.DECIDED_FILE`): every later regeneration of the table
   (:func:`fedlib.repro.artefacts.tables.reproduce_table`, from records or training), and every table cell that
   reads the same runs (``share_decided``), runs those cells at those seeds too, so none is lost;
3. **render** the table's decided cells again: each cell's per-seed values (``ours_seeds``: the committed seeds
   and the new runs, from the grid's records) give its mean, std, ``n_seeds`` and ``delta`` in ``<table>.csv``;
   its note says which seeds were added here.  The table's ``.md`` and figure follow at its next regeneration
   or render from records;
4. **decide again**: ``python -m fedlib.repro.claims`` (:func:`fedlib.repro.claims.regenerate`).

Decisions that need a GPU train only with ``--device cuda`` (as :func:`fedlib.repro.gpu_cells.train_cells`
trains a table's cells; a GPU-scale one renders its runs table again, :func:`render_gpu`); on a CPU they are
skipped, and the GPU lease queue takes them in the same order (``order = "plan"`` in
``fedlib/papers/lease_queue.toml``; :func:`fedlib.repro.artefacts.decision.gpu_entries`).

Rows it cannot train are listed with what would decide them (:mod:`fedlib.repro.artefacts.decision_declared`):
a ladder's (its ``cpu_seeds``) and a figure's study (its profile's seeds for the experiment).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from pathlib import Path

import pandas as pd

from .artefacts.decision import Decision, describe, held_seeds, order, plan, recorded_run
from .artefacts.decision_declared import unplanned

__all__ = ["main", "select", "unplanned", "train", "declare", "render", "render_gpu", "decide"]


def _error(msg: str) -> int:
    print(f"fedlib.repro.decide: error: {msg}", file=sys.stderr)
    return 2


def select(targets: list[str], *, everything: bool, root: Path) -> tuple[list[Decision], list[dict]]:
    """The decisions for ``targets`` (``PAPER`` or ``PAPER/CLAIM``; ``everything``: every paper), cheapest
    first, and the inconclusive rows without one.  An unknown paper or claim is a ``ValueError`` naming it and
    what exists."""
    from .artefacts.claims import claims_of
    from .spec.paper import all_papers

    known = list(all_papers())
    wanted: dict[str, set | None] = {p: None for p in known} if everything else {}
    for target in targets:
        paper, _, claim = target.partition("/")
        if paper not in known:
            raise ValueError(f"unknown paper {paper!r}; known: {', '.join(known)}")
        if claim:
            ids = [c.id for c in claims_of(paper)]
            if claim not in ids:
                raise ValueError(f"unknown claim {claim!r} of {paper}; its claims: {', '.join(ids)}")
            if wanted.get(paper, set()) is not None:
                wanted.setdefault(paper, set()).add(claim)
        else:
            wanted[paper] = None
    from .artefacts.claims import evaluate

    decisions, rest = [], []
    for paper, claims in wanted.items():
        if not (root / paper).is_dir():
            continue
        frame = evaluate(paper, root)
        planned = [d for d in plan(paper, frame, root) if claims is None or d.claim in claims]
        decisions += planned
        rest += [u for u in unplanned(paper, frame, planned, root) if claims is None or u["claim"] in claims]
    return order(decisions), rest


@contextlib.contextmanager
def _records_mode(path: Path | None, mode: str | None):
    """The grid's records mode (:mod:`fedlib.repro.run.records`) for the duration, then as it was."""
    from .run.records import MODE_ENV, RECORDS_ENV, RESUME_ENV

    saved = {k: os.environ.get(k) for k in (RECORDS_ENV, MODE_ENV, RESUME_ENV)}
    if path is None:
        for k in saved:
            os.environ.pop(k, None)
    else:  # a decide goes on from the committed records too: they are where its finished runs are kept
        os.environ.update({RECORDS_ENV: str(path), MODE_ENV: mode, RESUME_ENV: "1"})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _cells(d: Decision, root: Path, device: str) -> list[dict]:
    """The decision's runs as grid cells: one per cell and seed it lacks, the seed in its configuration."""
    from .spec.paper import get_paper

    pp = get_paper(d.paper)
    prof = pp.profile(d.profile)
    t = pp.table(d.table)
    held, _ = held_seeds(root / d.paper, pp, d.scale, d.table, d.cells)  # a table regenerating: its records
    out = []
    for r, c in d.cells:
        cfg, note = prof.resolve(t.config(r, c), t.id)
        if cfg is None:
            raise ValueError(f"{d.paper}/{d.table} {r}/{c}: not configured under {d.profile!r}: {note}")
        for s in d.seeds:
            if s not in held.get((r, c), {}):
                out.append({"row": r, "column": c, "config": {**cfg, "device": device, "seed": int(s)}})
    return out


def train(d: Decision, *, root: Path, store, device: str = "cpu", workers: int = 1, progress: bool = True):
    """Train the decision's runs into ``store``, their records into the profile's records file (one under other code
    does not count, ``held_seeds``: it trains again, ``retrain``); returns the grid (stored runs are read)."""
    from .run.grid import run_grid
    from .run.records import RECORDS_FILE, merge

    out = root / d.paper / d.profile
    plain = out / ".records-decide.jsonl"
    if plain.exists():  # a stopped decide's finished runs, each line a whole record: kept, so none trains again
        merge(plain, out / RECORDS_FILE, replace=False, retrain=True)
    with _records_mode(plain, "write"):
        if device != "cpu":  # as a GPU trains a table's cells (engine, precision: what the tables read back)
            from .gpu_cells import train_cells

            grid = train_cells(d.paper, d.table, seeds=d.seeds, profile=d.profile, rows=list(d.rows),
                               columns=list(d.columns), device=device, store=store, workers=workers,
                               progress=progress)
        else:
            grid = run_grid(_cells(d, root, device), seeds=None, store=store, workers=workers, progress=progress,
                            desc=f"decide {d.paper}/{d.claim} ({d.scale})")
    if plain.exists():
        merge(plain, out / RECORDS_FILE, replace=False, retrain=True)
    return grid


def declare(d: Decision, grid, *, root: Path) -> int:
    """Add the seeds the decision's runs gave a result at (ok or diverged), beyond the profile's seeds of its
    table, to ``figures/<paper>/<profile>/_decided.jsonl`` (one sorted JSON line per cell: table, row, column,
    seeds; no machine path), so that every regeneration of the table runs them too.  Returns the cells
    declared.  A GPU-scale decision (its runs table, not the profile's) declares nothing."""
    from .artefacts.tables import read_decided, share_decided, write_decided
    from .spec.paper import get_paper

    if d.scale == "GPU" or grid.runs.empty:
        return 0
    profile = get_paper(d.paper).profile(d.profile)
    profile_seeds = set(profile.seeds_for(d.table))
    runs = grid.runs[grid.runs.status.isin(("ok", "diverged"))]
    out = root / d.paper / d.profile
    cells = read_decided(out)
    n = 0
    for r, c in d.cells:
        seeds = {int(s) for s in runs[(runs.row == r) & (runs.column == c)].seed} & set(d.seeds)
        if seeds - profile_seeds:
            cells.setdefault((d.table, r, c), set()).update(seeds - profile_seeds)
            n += 1
    if cells:
        write_decided(out, cells)
        share_decided(profile, out)  # the cells of other tables that read the same runs
    return n


def _value(out: Path, table: str):
    """The table's sidecar's ``parameters.value`` (a metric's name, or one per cell), "accuracy" where none."""
    try:
        return (json.loads((out / f"{table}.json").read_text()).get("parameters") or {}).get("value") or "accuracy"
    except (OSError, json.JSONDecodeError):
        return "accuracy"


def _metric(out: Path, table: str, pp):
    """The metric the table's cells read (its sidecar's ``parameters.value``, as
    :func:`fedlib.repro.measure_spread.measure_seed_spread` reads it)."""
    from .artefacts.tables import metric_of

    value = _value(out, table)
    if isinstance(value, dict):
        pairs = {tuple(k.split("/", 1)): v for k, v in value.items()}
        return lambda r, c: pairs.get((r, c), "accuracy")
    return metric_of(value, pp.table(table))


def render(d: Decision, grid, *, root: Path) -> list[str]:
    """Write the decided cells of ``<table>.csv`` again from their per-seed values (the committed seeds and the
    grid's new ones); returns one line per cell changed.  A cell whose committed seeds have no per-seed values
    (a CSV written before ``ours_seeds``) is left as it was, and the line says so."""
    from .artefacts.tables import cell_values, parse_seeds
    from .spec.paper import get_paper
    from .verdict.compare import compare
    from .verdict.spread import spread_for

    pp = get_paper(d.paper)
    out = root / d.paper / d.profile
    path = out / f"{d.table}.csv"
    frame = pd.read_csv(path)
    value = _value(out, d.table)
    spreads = spread_for(out, d.table, value if isinstance(value, str) else None)  # as reproduce_table reads them
    ok = grid.runs[grid.runs.status == "ok"]
    values = cell_values(ok, _metric(out, d.table, pp)) if len(ok) else ok.assign(value=[])
    lines = []
    for r, c in d.cells:
        at = (frame.row == r) & (frame.column == c)
        if not at.any():
            continue
        i = frame.index[at][0]
        seeds = parse_seeds(frame.at[i, "ours_seeds"]) if "ours_seeds" in frame else {}
        if not seeds and int(frame.at[i, "n_seeds"] or 0) > 0:
            lines.append(f"{r}/{c}: left as it was: its committed seeds have no per-seed values (ours_seeds)")
            continue
        new = {int(s): float(v) for s, v in zip(values[(values.row == r) & (values.column == c)].seed,
                                                  values[(values.row == r) & (values.column == c)].value)
               if not math.isnan(v) and int(s) not in seeds}
        if not new:
            continue
        seeds.update(new)
        vals = pd.Series([seeds[k] for k in sorted(seeds)])
        frame["ours_seeds"] = frame["ours_seeds"].astype(object)
        frame.at[i, "ours_seeds"] = json.dumps({str(k): seeds[k] for k in sorted(seeds)})
        frame.at[i, "ours_mean"] = float(vals.mean())
        frame.at[i, "ours_std"] = float(vals.std(ddof=1)) if len(vals) > 1 else math.nan
        frame.at[i, "n_seeds"] = len(vals)
        # the cell's spread and its verdict against the paper's ± over its seeds now (verdict.compare, as a render)
        paper_cols = [k for k in ("row", "column", "paper_mean", "paper_std", "dataset", "suspect", "std_over")
                      if k in frame]
        ours_cols = [k for k in ("row", "column", "ours_mean", "ours_std", "n_seeds", "dataset_used") if k in frame]
        cell = compare(frame.loc[[i], paper_cols], frame.loc[[i], ours_cols].assign(status="ok"), spread=spreads)
        for k in [k for k in ("delta", "spread", "spread_source", "within_std", "status") if k in frame]:
            frame[k] = frame[k].astype(object)
            frame.at[i, k] = cell[k].iloc[0]
        note = f"seeds {', '.join(map(str, sorted(new)))} added by python -m fedlib.repro.decide"
        old = frame.at[i, "note"] if "note" in frame and isinstance(frame.at[i, "note"], str) else ""
        frame["note"] = frame["note"].astype(object)
        frame.at[i, "note"] = f"{old}; {note}" if old else note
        lines.append(f"{r}/{c}: {len(vals)} seeds, {vals.mean():.2f} ± {vals.std(ddof=1):.2f}")
    frame.to_csv(path, index=False)
    return lines


def render_gpu(d: Decision, *, root: Path, store, device: str) -> list[str]:
    """The GPU runs' table and curves again (:func:`fedlib.repro.gpu_cells.record`), over the cells and seeds
    they held and the decision's."""
    from .gpu_cells import gpu_folder, record
    from .spec.paper import get_paper

    folder = root / d.paper / "paper" / gpu_folder(get_paper(d.paper).profile("paper").gpu_precision)
    path = folder / f"{d.table}_gpu_runs.csv"
    old = pd.read_csv(path) if path.exists() else pd.DataFrame(columns=["row", "column", "seed"])
    rows, cols = sorted(set(old.row) | set(d.rows)), sorted(set(old.column) | set(d.columns))
    seeds = sorted({int(s) for s in old.seed} | set(d.seeds))
    runs = record(d.paper, d.table, folder, seeds=seeds, rows=rows, columns=cols, device=device, store=store)["runs"]
    return [f"{path.name}: {len(runs)} runs over seeds {', '.join(map(str, seeds))}"]


def decide(decisions: list[Decision], *, root: Path, store, device: str = "cpu", workers: int = 1,
           minutes: float | None = None, progress: bool = True, claims: bool = True, log=None) -> dict:
    """Train and render each decision in order (module docstring) until the next one's estimate would take the
    total past ``minutes``; then the claims again.  Returns counts."""
    log = log or (lambda line: print(line, flush=True))
    spent, done, skipped = 0.0, [], []
    for k, d in enumerate(decisions, 1):
        label = f"[{k}/{len(decisions)}] {d.paper}/{d.claim}{'/' + d.part if d.part else ''} ({d.scale})"
        if d.target is None:
            skipped.append((d, "not decidable by seeds at this spread"))
            continue
        if not d.runs and not d.held:  # rendered before a stop (held runs: train reads them from the records)
            log(f"{label}: {describe(d)}")
            done.append(d)
            continue
        if d.device != device.split(":")[0]:
            skipped.append((d, f"needs {d.device}: the GPU lease queue takes it (fedlib/papers/lease_queue.toml)"))
            log(f"{label}: skipped, needs a GPU ({describe(d)})")
            continue
        est = (d.gpu_hours if device != "cpu" else d.cpu_hours)
        est_min = math.inf if est is None else est * 60 / max(1, workers)
        if minutes is not None and spent + est_min > minutes:  # the rest cost as much or more: none starts
            left = [e for e in decisions[k - 1:] if e.device == device.split(":")[0] and e.target is not None]
            skipped += [(e, f"beyond --minutes {minutes:g}") for e in left]
            log(f"{label}: not started, nor the {len(left) - 1} after it: {spent:.0f} + {est_min:.0f} estimated "
                f"min would pass --minutes {minutes:g}")
            break
        log(f"{label}: {describe(d)} …")
        t0 = time.perf_counter()
        grid = train(d, root=root, store=store, device=device, workers=workers, progress=progress)
        if grid.runs.empty:  # an earlier decision on the same cells trained its runs (the plan was made before)
            log(f"{label}: its cells hold its seeds already (an earlier decision trained them)")
            done.append(d)
            continue
        trained = int((~grid.runs.get("from_store", pd.Series(dtype=bool)).fillna(False).astype(bool)).sum())
        failed = grid.runs[~grid.runs.status.isin(("ok", "diverged"))]
        declare(d, grid, root=root)
        for line in (render_gpu(d, root=root, store=store, device=device) if d.scale == "GPU"
                     else render(d, grid, root=root)):
            log(f"    {line}")
        for r in failed.itertuples():
            log(f"    {r.row}/{r.column} seed {r.seed}: {r.status}: {r.note}")
        spent += est_min
        done.append(d)
        log(f"{label}: {len(grid.runs)} runs ({trained} trained here) in {time.perf_counter() - t0:.0f} s")
    if claims and done:
        from .claims import regenerate

        regenerate(root)
        log(f"claims rendered again under {root}")
    return {"done": done, "skipped": skipped}


def _print_plan(decisions: list[Decision], rest: list[dict], minutes: float | None, workers: int, root: Path) -> None:
    cpu = gpu = 0.0
    for d in decisions:
        part = f"/{d.part}" if d.part else ""
        print(f"{d.paper}/{d.claim}{part} at {d.scale}: {describe(d)}")
        if d.seeds:
            print(f"    runs: {', '.join(d.rows)} × {', '.join(d.columns)} ({d.table}, profile {d.profile!r}), "
                  f"seeds {', '.join(map(str, d.seeds))} on {d.device}")
        print(f"    why: {d.why}")
        cpu += (d.cpu_hours or 0.0) if d.device == "cpu" else 0.0
        gpu += (d.gpu_hours or 0.0) if d.device == "cuda" else 0.0
    for u in rest:
        part = f"/{u['part']}" if u["part"] else ""
        print(f"{u['paper']}/{u['claim']}{part} at {u['scale']}: not trained by decide: {u['why']}")
    runs, records = sum(d.runs for d in decisions), {}
    distinct = {(d.paper, d.profile, d.table, *run) for d in decisions for run in  # a shared cell's run trains once
                ([(x["row"], x["column"], x["config"]["seed"]) for x in _cells(d, root, d.device)
                  if not recorded_run(root / d.paper / d.profile, x["config"], records)]
                 if d.device == "cpu" else [(r, c, s) for r, c in d.cells for s in d.seeds])}
    print(f"{len(decisions)} decisions, {runs} runs ({len(distinct)} distinct: shared cells train once): "
          f"≈ {cpu:.1f} CPU-h (one core a run; {cpu / max(1, workers):.1f} h "
          f"on {workers} worker{'s' if workers != 1 else ''}) and ≈ {gpu:.1f} GPU-h"
          + (f"; --minutes {minutes:g} holds the cheapest ones in turn" if minutes is not None else ""))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedlib.repro.decide", description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", help="PAPER/CLAIM (or PAPER: every claim of it)")
    ap.add_argument("--all", action="store_true", help="every inconclusive claim of every paper")
    ap.add_argument("--dry-run", action="store_true", help="print the plan (runs, scale, cost); train nothing")
    ap.add_argument("--minutes", type=float, default=None,
                    help="start no decision whose estimate would take the total past N minutes")
    ap.add_argument("--figures", default=None, help="figures root (default <repo>/figures)")
    ap.add_argument("--store", default=None, help="results store (default $FEDLIB_STORE or <repo>/.fedlib-store)")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda: decisions on the other are skipped")
    ap.add_argument("--workers", type=int, default=1, help="runs trained at once")
    ap.add_argument("--quiet", action="store_true", help="no progress bars")
    a = ap.parse_args(argv)
    if not a.targets and not a.all:
        ap.error("name PAPER/CLAIM targets or --all")
    if a.minutes is not None and not a.minutes > 0:
        ap.error(f"--minutes must be > 0, got {a.minutes}")
    from .artefacts.provenance import repo_root

    root = Path(a.figures).resolve() if a.figures else repo_root() / "figures"
    try:
        decisions, rest = select(a.targets, everything=a.all, root=root)
    except (ValueError, FileNotFoundError) as err:
        return _error(str(err))
    if a.dry_run:
        if not decisions and not rest:
            print("nothing inconclusive among these claims")
            return 0
        _print_plan(decisions, rest, a.minutes, a.workers, root)
        return 0
    if not decisions:
        print("nothing to decide: no inconclusive row of these claims has a plan"
              + (f" ({len(rest)} without one: --dry-run says why)" if rest else ""))
        return 0
    from .run.grid import as_store

    result = decide(decisions, root=root, store=as_store(a.store), device=a.device, workers=a.workers,
                    minutes=a.minutes, progress=not a.quiet)
    print(f"{len(result['done'])} decisions trained and rendered, {len(result['skipped'])} not started")
    return 0


if __name__ == "__main__":
    sys.exit(main())
