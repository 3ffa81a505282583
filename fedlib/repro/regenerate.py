"""Regenerate every table and figure of the papers by executing their notebooks.

    python -m fedlib.repro.regenerate                                  # every paper, profile quick
    python -m fedlib.repro.regenerate --paper fedlc --profile smoke    # one paper
    python -m fedlib.repro.regenerate --paper fedlc --only 04          # one notebook (name, number or substring)
    python -m fedlib.repro.regenerate --profile paper --paper fedabc   # the cells this CPU affords (budget-checked)
    python -m fedlib.repro.regenerate --profile paper --device cuda    # every cell, on a GPU
    make figures PAPER=fedlc PROFILE=paper NB=06                 # the same through make

Each notebook ``notebooks/<paper>/NN_<section>.ipynb`` (in name order) runs with
papermill (kernel ``python3``) with the parameters ``profile`` and ``out_dir``;
the executed copy goes to ``figures/<paper>/<profile>/executed/`` (the sources
are never overwritten) and the notebooks write their tables and figures into
``figures/<paper>/<profile>/``, one folder per profile, so a regeneration under
one profile never overwrites another's outputs.  Afterwards the index
``figures/README.md`` and each paper's page ``figures/<paper>/README.md`` are rebuilt
(:func:`fedlib.repro.artefacts.index.build_index`).

The terminal shows where a long regeneration is: the notebook being run and,
inside it, each grid's runs done and total and the time left (the grids write
their progress to a file this process reads, :data:`fedlib.repro.run.grid.PROGRESS_ENV`).

Runs are cached in the results store: ``$FEDLIB_STORE`` if set, else
``<repo>/.fedlib-store``; a second regeneration with the same code takes
seconds.  A full regeneration of a paper (no ``--only``) first removes that
paper's previous artefacts of the profile.  The exit status is 1 if any
notebook failed.  Committed outputs name no machine paths.

Each paper's folder keeps the run records its outputs were computed from (``_records.jsonl.gz``,
:mod:`fedlib.repro.run.records`); ``--render records`` renders every table, figure and the index from
them again, training nothing, in minutes.  A regeneration records each run as it finishes and goes on
from the runs a stopped one finished, or that the committed records hold, under the same code
(:func:`fedlib.repro.run.records.resumable`): ``python -m fedlib.repro.run.records fold
figures/<paper>/<profile>`` puts a long regeneration's finished runs in the committed file as it goes.

Executing one notebook lives in :mod:`fedlib.repro.regenerate_notebook` and what a run record keeps of the
earlier one in :mod:`fedlib.repro.regenerate_record`; this module plans, runs every notebook, renders from
records and is the command line.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from .artefacts.notebooks import notebooks, papers_with_notebooks, select
from .artefacts.provenance import repo_root as _repo  # patched by the tests as regenerate._repo
from .regenerate_notebook import Watcher, environment, execute, executor_environment, strip
from .regenerate_reach import reach_fingerprint
from .regenerate_record import cold_timing, earlier_timings, still_rendered
from .run.records import (MODE_ENV, PLAIN_RECORDS, RECORDS_ENV, RECORDS_FILE, RESUME_ENV, STOPPED_RECORDS,
                          NeedsTraining, RecordsConflict, merge, set_aside_stopped)


__all__ = ["main", "notebooks", "select", "regenerate", "strip", "earlier_timings", "cold_timing",
           "papers_with_notebooks"]

_ARTEFACT_SUFFIXES = {".pdf", ".png", ".json", ".csv", ".md"}


def _clean(out: Path) -> None:
    for path in out.glob("*"):
        if path.is_file() and path.suffix in _ARTEFACT_SUFFIXES and not path.name.startswith("_spread"):
            path.unlink()
    executed = out / "executed"
    if executed.is_dir():
        for path in executed.glob("*.ipynb"):
            path.unlink()


def _plan(profile: str, papers, only, notebooks_dir) -> list[tuple]:
    """``(paper, profile, notebooks)`` for each paper with a selected notebook; none at all is an error."""
    from .spec.paper import get_paper

    papers = papers or papers_with_notebooks(notebooks_dir)
    plan = [(name, get_paper(name).profile(profile), select(notebooks(name, notebooks_dir), only)) for name in papers]
    plan = [entry for entry in plan if entry[2]]
    if not plan:
        raise SystemExit(f"no notebooks match: papers {papers}, only {only}; notebooks are in notebooks/<paper>/")
    return plan


def _claims_and_index(root: Path, papers: list[str] | None = None) -> Path:
    """The claims ledgers, headline figures and README block (:mod:`fedlib.repro.claims`), then the index, which
    counts the claims' verdicts; ``papers``: those regenerated, whose files alone are rewritten."""
    from .artefacts.index import build_index
    from .claims import regenerate as claims

    claims(root, only=papers)
    return build_index(root, only=papers)


def regenerate(profile: str = "quick", papers: list[str] | None = None, only: list[str] | None = None,
               figures_root: str | os.PathLike | None = None, store: str | None = None, timeout: int | None = None,
               index: bool = True, notebooks_dir: str | os.PathLike | None = None, progress: bool = True,
               budget_hours: float | None = None, allow_over: bool = False, render: str = "train",
               allow_dirty: bool = False, force: bool = False) -> dict:
    """Execute the (selected) notebooks of the (selected) papers under ``profile``; returns
    ``{paper: run record}`` and ``"failed"``.  With ``budget_hours``, a profile without a cost model
    (quick, smoke) whose estimate (:mod:`fedlib.repro.budget.cold_times`) exceeds it is refused before any
    output is touched (:class:`fedlib.repro.budget.plan.PlanError`), unless ``allow_over``.

    ``render``: ``"train"`` (train what the store lacks, and write the run records
    ``figures/<paper>/<profile>/_records.jsonl.gz``) or ``"records"`` (train nothing: every grid is
    answered from those records, :mod:`fedlib.repro.run.records`; a notebook that needs what records do
    not keep keeps its committed outputs, untouched, and says why; a notebook nothing of whose reach changed
    since its last render is left as it is, unless ``force``: :mod:`fedlib.repro.regenerate_reach`).

    Writing into the repository's ``figures/`` (the default root) with uncommitted code under ``fedlib/``
    or ``notebooks/`` is refused (:class:`fedlib.repro.artefacts.provenance.DirtyTree`) before anything is
    touched, except for the ``smoke`` profile (never committed) or with ``allow_dirty`` (the outputs' sidecars
    then say ``-dirty``, which the test over ``figures/`` refuses to see committed)."""
    if render not in ("train", "records"):
        raise ValueError(f"render must be 'train' or 'records', got {render!r}")
    if profile != "smoke" and not allow_dirty:
        from .artefacts.provenance import refuse_dirty

        refuse_dirty(Path(figures_root) if figures_root is not None else _repo() / "figures", _repo())
    if render == "records":
        return _render_from_records(profile, papers, only, figures_root, store, timeout, index, notebooks_dir,
                                    progress, force)
    from .artefacts.provenance import relative_to_repo, scrub_paths, store_label

    root = Path(figures_root).resolve() if figures_root is not None else _repo() / "figures"
    env = environment(store)
    plan = _plan(profile, papers, only, notebooks_dir)
    from .budget.cold_times import estimate, read_record

    text, minutes = estimate(plan, [root, _repo() / "figures"])
    if text:
        print(text, flush=True)
    if text and budget_hours is not None and not allow_over and (minutes is None or minutes > budget_hours * 60):
        from .budget.plan import PlanError

        raise PlanError(f"refused: the estimate ({'unknown' if minutes is None else f'{minutes:.0f} min'}) exceeds "
                        f"--budget-hours {budget_hours:g}; pass --over-budget to run it anyway, or a larger budget")
    total = sum(len(p) for _, _, p in plan)
    records, failed, count = {}, [], 0
    trained_keys: set = set()  # every run trained in this regeneration, across notebooks and papers
    for name, prof, paths in plan:
        out = root / name / prof.name
        (out / "executed").mkdir(parents=True, exist_ok=True)
        old = read_record(out / "_run.json")  # read before the clean removes it (its cold timing may carry over)
        if not only:
            _clean(out)
        started = _dt.datetime.now().astimezone()
        t0 = time.perf_counter()
        os.environ.update({RECORDS_ENV: str(out / PLAIN_RECORDS), MODE_ENV: "write"})
        set_aside_stopped(out)
        record = {"paper": name, "profile": prof.name, "store": store_label(env["store"]),
                  **({"device": prof.resolved_device()} if prof.cost is not None else {}),
                  "started": started.isoformat(timespec="seconds"), "notebooks": [], "only": only or []}
        for nb in paths:
            count += 1
            label = f"[{count}/{total}] {name}/{nb.stem} ({prof.name})"
            print(f"{label} …", flush=True)
            os.environ["FEDLIB_NOTEBOOK"] = f"{name}/{nb.stem}"
            channel = Path(tempfile.mkstemp(prefix="fedlib-progress-", suffix=".jsonl")[1])
            os.environ["FEDLIB_PROGRESS"] = str(channel)
            watcher = Watcher(channel, label, progress)
            t = time.perf_counter()
            status, error = "ok", ""
            try:
                execute(nb, out, prof, root, timeout)
            except Exception as err:  # noqa: BLE001 -- report and go on with the other notebooks
                status, error = "failed", scrub_paths(f"{type(err).__name__}: {str(err).strip()[-2000:]}")
                failed.append(f"{name}/{nb.stem}")
            finally:
                watcher.close()
                counts = watcher.counts(trained_keys)
                channel.unlink(missing_ok=True)
                os.environ.pop("FEDLIB_PROGRESS", None)
            dt = time.perf_counter() - t
            record["notebooks"].append({"name": nb.stem, "status": status, "wall_time_s": round(dt, 1), **counts,
                                        **({"error": error} if error else {})})
            print(f"{label}: {status} in {dt:.1f} s" + (f"\n{error}" if error else ""), flush=True)
        record["total_wall_time_s"] = round(time.perf_counter() - t0, 1)
        record["runs"] = {k: sum(n.get(k, 0) for n in record["notebooks"])
                          for k in ("runs", "trained", "reused", "not_run", "trained_again")}
        record["finished"] = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
        from .artefacts.provenance import git_commit

        record["git_commit"] = git_commit()
        if old is not None:
            try:
                if only:  # keep the timings of the notebooks not rerun, and which of them were rendered
                    record["previous"] = earlier_timings(record, old)
                    rendered = still_rendered(record, old)
                    if rendered is not None:
                        record["rendered"] = rendered
                cold = cold_timing(record, old)  # rendered again from the store: keep what filling it cost
                if cold is not None:
                    record["cold"] = cold
            except (KeyError, TypeError):  # a record of another shape: its timings are not carried
                pass
        try:
            kept = merge(out / PLAIN_RECORDS, out / RECORDS_FILE, replace=not only)
        except RecordsConflict as err:  # the committed records stay as they were; this run's wait beside them
            kept = None
            failed.append(f"{name} (records)")
            print(f"{name}: {scrub_paths(str(err))}", flush=True)
        (out / STOPPED_RECORDS).unlink(missing_ok=True)  # what it resumed from is in the records it wrote
        for var in (RECORDS_ENV, MODE_ENV):
            os.environ.pop(var, None)
        record["records"] = {"file": RECORDS_FILE, "runs": kept}
        (out / "_run.json").write_text(json.dumps(record, indent=1) + "\n")
        records[name] = record
        print(f"{name} ({prof.name}): {record['total_wall_time_s'] / 60:.1f} min for {len(paths)} notebook(s)",
              flush=True)
    if index:
        print(f"index: {relative_to_repo(_claims_and_index(root, papers and [p[0] for p in plan]))}")
    records["failed"] = failed
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return records


def _render_from_records(profile, papers, only, figures_root, store, timeout, index, notebooks_dir, progress,
                         force=False) -> dict:
    """:func:`regenerate` with ``render="records"``: each selected notebook runs with its grids answered from
    the paper's run records (nothing trains).  A notebook that fails (a run without a record, a study that
    needs trained models the store lacks) has its outputs put back as they were, so a folder never mixes a
    failed render with earlier outputs; ``_run.json`` keeps the training's record and gains ``rendered``.

    A notebook whose reach (:mod:`fedlib.repro.regenerate_reach`: its file, its records, the code it reaches)
    has the fingerprint of its last render is left as it is, unless ``force``: a change re-renders what it
    reaches, and the claims, pages and index of those papers only."""
    from .artefacts.provenance import git_commit, scrub_paths
    from .spec.paper import get_paper

    root = Path(figures_root).resolve() if figures_root is not None else _repo() / "figures"
    plan = _plan(profile, papers, only, notebooks_dir)
    missing = [f"{n}/{prof.name}" for n, prof, _ in plan if not (root / n / prof.name / RECORDS_FILE).exists()]
    if missing:
        raise SystemExit(f"no run records ({RECORDS_FILE}) for {', '.join(missing)}: regenerate them once with "
                         "training (without --render records)")
    scratch = Path(tempfile.mkdtemp(prefix="fedlib-render-"))
    environment(store or str(scratch / "store"))  # a fresh store unless one is given: nothing to read, nothing trains
    out_records, failed = {}, []
    reran = []
    for name, prof, paths in plan:
        out = root / name / prof.name
        os.environ.update({RECORDS_ENV: str(out / RECORDS_FILE), MODE_ENV: "read"})
        run_path = out / "_run.json"
        record = json.loads(run_path.read_text()) if run_path.exists() else {}
        reach = dict(record.get("rendered", {}).get("reach", {}))
        companions = (name, *get_paper(name).reads)
        rendered = []
        for nb in paths:
            fingerprint = reach_fingerprint(nb, out / RECORDS_FILE, _repo(), companions)
            if not force and reach.get(nb.stem) == fingerprint:  # nothing it reaches changed: its outputs stand
                if progress:
                    print(f"{name}/{nb.stem} ({prof.name}): unchanged since its last render", flush=True)
                continue
            backup = scratch / f"{name}-{nb.stem}"
            shutil.copytree(out, backup)
            t = time.perf_counter()
            try:
                execute(nb, out, prof, root, timeout)
                status = {"name": nb.stem, "status": "rendered"}
                reach[nb.stem] = fingerprint
            except Exception as err:  # noqa: BLE001 -- put its outputs back, say why, go on
                shutil.rmtree(out)
                shutil.copytree(backup, out)
                reason = scrub_paths(f"{getattr(err, 'ename', type(err).__name__)}: {getattr(err, 'evalue', err)}")
                status = {"name": nb.stem, "status": "kept", "reason": reason.strip()[:400]}
                if getattr(err, "ename", "") != NeedsTraining.__name__:  # needing trained models is said, not failed
                    failed.append(f"{name}/{nb.stem}")
            shutil.rmtree(backup, ignore_errors=True)
            if progress:
                print(f"{name}/{nb.stem} ({prof.name}): {status['status']} in {time.perf_counter() - t:.1f} s"
                      + (f": {status['reason']}" if "reason" in status else ""), flush=True)
            rendered.append(status)
        if not rendered:  # every notebook unchanged: its record stands as it is
            out_records[name] = record
            continue
        reran.append(name)
        earlier = {n["name"]: n for n in record.get("rendered", {}).get("notebooks", [])}
        earlier.update({n["name"]: n for n in rendered})
        record["rendered"] = {"from": RECORDS_FILE, "git_commit": git_commit(),
                              "at": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
                              "notebooks": list(earlier.values()), "reach": dict(sorted(reach.items()))}
        run_path.write_text(json.dumps(record, indent=1) + "\n")
        out_records[name] = record
    for var in (RECORDS_ENV, MODE_ENV):
        os.environ.pop(var, None)
    shutil.rmtree(scratch, ignore_errors=True)
    if index and reran:  # the claims, pages and index of the papers re-rendered, and of no other
        _claims_and_index(root, reran)
    out_records["failed"] = failed
    return out_records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedlib.repro.regenerate", description=__doc__.splitlines()[0])
    parser.add_argument("--paper", action="append", default=[],
                        help="regenerate this paper only (repeatable; default: every paper with notebooks)")
    parser.add_argument("--profile", default=os.environ.get("FEDLIB_PROFILE", "quick"),
                        help="smoke, quick (default) or paper")
    parser.add_argument("--only", action="append", default=[],
                        help="run only this notebook (name, number or substring); repeatable")
    parser.add_argument("--figures", default=None, help="figures root (default <repo>/figures)")
    parser.add_argument("--store", default=None, help="results store (default $FEDLIB_STORE or <repo>/.fedlib-store)")
    parser.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds")
    parser.add_argument("--no-index", action="store_true",
                        help="do not rebuild figures/README.md and the papers' pages")
    parser.add_argument("--quiet", action="store_true", help="no progress lines from inside the notebooks")
    parser.add_argument("--device", default=None,
                        help="cpu or cuda: where a profile with a cost model (paper) trains; on cpu only the cells "
                             "it affords run (default $FEDLIB_DEVICE or cpu)")
    parser.add_argument("--budget-hours", type=float, default=None,
                        help="refuse to start when the estimated wall time exceeds this (default: the profile's "
                             "budget, else fedlib.repro.budget.costs.DEFAULT_BUDGET_HOURS)")
    parser.add_argument("--over-budget", action="store_true", help="start even when the estimate exceeds the budget")
    parser.add_argument("--render", choices=("train", "records"), default="train",
                        help="train (default: train what the store lacks, and write the run records) or records "
                             "(train nothing: render every table and figure from the committed run records; a "
                             "notebook nothing of whose reach changed since its last render is left as it is)")
    parser.add_argument("--force", action="store_true",
                        help="with --render records: render every selected notebook, changed or not")
    parser.add_argument("--resume", action="store_true", help="go on from the committed run records trained by "
                        "this code (a long training begun on another machine; docs/regenerating.md)")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="write into figures/ from uncommitted code (outputs marked -dirty: not for committing)")
    parser.add_argument("--list", action="store_true", help="list the notebooks and exit")
    parser.add_argument("--strip", action="store_true", help="strip outputs from notebooks/**/*.ipynb and exit")
    parser.add_argument("--executor", choices=("local", "ray"), default=None,
                        help="where the grids' runs train: local worker processes (default) or a Ray cluster, "
                             "one task per run (needs fedlib[ray])")
    parser.add_argument("--ray-address", default=None,
                        help="the Ray cluster to use (default: $RAY_ADDRESS, else the one `ray start` began on "
                             "this machine, else a new local one)")
    parser.add_argument("--gpus-per-run", type=float, default=None,
                        help="GPUs per Ray task, a fraction where runs share a GPU (default: the profile's, else 0)")
    args = parser.parse_args(argv)
    if args.resume:
        os.environ[RESUME_ENV] = "1"
    code = executor_environment(args)
    if code:
        return code
    if args.strip:
        for p in strip():
            print(f"stripped {p}")
        return 0
    papers = [p for item in args.paper for p in item.split(",") if p]
    if args.list:
        for paper in papers or papers_with_notebooks():
            for p in notebooks(paper):
                print(f"{paper}/{p.stem}")
        return 0
    from .spec.paper import all_papers

    unknown = [p for p in papers if p not in all_papers()]
    if unknown:
        print(f"fedlib.repro.regenerate: error: unknown paper(s) {unknown}; known: {', '.join(all_papers())}",
              file=sys.stderr)
        return 2
    only = [o for item in args.only for o in item.split(",") if o]
    for paper in papers or papers_with_notebooks():
        if args.profile not in all_papers()[paper].profiles:
            print(f"fedlib.repro.regenerate: error: --profile must be one of {', '.join(all_papers()[paper].profiles)} "
                  f"for {paper}, got {args.profile!r}", file=sys.stderr)
            return 2
    from .artefacts.provenance import DirtyTree
    from .budget.plan import PlanError, preflight

    try:
        text = None if args.render == "records" else preflight(  # rendering trains nothing: no budget to check
            papers or papers_with_notebooks(), args.profile, device=args.device, store=args.store,
            budget_hours=args.budget_hours, allow_over=args.over_budget, only=only or None)
    except (PlanError, ValueError) as err:
        print(f"fedlib.repro.regenerate: {err}", file=sys.stderr)
        return 2
    if text:
        print(text, flush=True)
    try:
        records = regenerate(args.profile, papers or None, only or None, args.figures, args.store, args.timeout,
                             not args.no_index, progress=not args.quiet, budget_hours=args.budget_hours,
                             allow_over=args.over_budget, render=args.render, allow_dirty=args.allow_dirty,
                             force=args.force)
    except DirtyTree as err:
        print(f"fedlib.repro.regenerate: {err}", file=sys.stderr)
        return 2
    except PlanError as err:
        print(f"fedlib.repro.regenerate: {err}", file=sys.stderr)
        return 2
    return 1 if records["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())