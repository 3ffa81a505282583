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
them again, training nothing, in minutes.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from .artefacts.notebooks import _repo, notebooks, papers_with_notebooks, select
from .run.records import MODE_ENV, RECORDS_ENV, RECORDS_FILE, NeedsTraining, merge

#: Where a regeneration's grids append their run records until the paper is done (then merged, compressed, into
#: :data:`fedlib.repro.run.records.RECORDS_FILE` and removed).
_PLAIN_RECORDS = ".records.jsonl"

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


def _environment(store: str | None) -> dict:
    """Environment for the kernels: the store, the data root, this fedlib on the path."""
    from ..data import resolve_env_path

    repo = _repo()
    os.environ["FEDLIB_STORE"] = store or os.environ.get("FEDLIB_STORE") or str(repo / ".fedlib-store")
    if not os.environ.get("FEDLIB_DATA"):
        shared = repo.parent / "shared" / "data"
        if shared.is_dir():
            os.environ["FEDLIB_DATA"] = str(shared)
    # the kernels run in notebooks/<paper>/: paths relative to the caller's folder (FEDLIB_DATA=../shared/data)
    # must not be re-read from there
    for var in ("FEDLIB_STORE", "FEDLIB_DATA", "FEDLIB_CACHE"):
        if os.environ.get(var):
            os.environ[var] = str(resolve_env_path(os.environ[var]).resolve())
    path = os.environ.get("PYTHONPATH", "")
    if str(repo) not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = str(repo) + (os.pathsep + path if path else "")
    os.environ.setdefault("MPLBACKEND", "Agg")
    return {"store": os.environ["FEDLIB_STORE"], "data": os.environ.get("FEDLIB_DATA", "./data")}


class _Watcher:
    """Shows on this terminal the progress a notebook's grids write to a file."""

    def __init__(self, path: Path, label: str, enabled: bool):
        self.path, self.label, self.enabled = path, label, enabled
        self._stop = threading.Event()
        self._shown = ""
        self._thread = threading.Thread(target=self._loop, daemon=True)
        if enabled:
            self._thread.start()

    def _line(self) -> str:
        from .run.grid import progress_channel

        lines = list(progress_channel(self.path))
        if not lines:
            return ""
        last = lines[-1]
        eta = last.get("eta_s")
        left = "" if eta is None else f", ~{eta / 60:.1f} min left" if eta >= 60 else f", ~{eta:.0f} s left"
        grids = len({ln["desc"] for ln in lines})
        return f"  {self.label} · {last['desc']}: {last['done']}/{last['total']} runs{left} (grid {grids})"

    def _loop(self) -> None:
        while not self._stop.wait(2.0):
            self._show()

    def _show(self) -> None:
        line = self._line()
        if line and line != self._shown:
            print(line, flush=True)
            self._shown = line

    def close(self) -> None:
        if self.enabled:
            self._stop.set()
            self._thread.join(timeout=5)
            self._show()

    def counts(self, trained_before: set) -> dict:
        """Runs done, trained, reused (from the store) and not run (not affordable or absent here, or
        failed) over the notebook's grids, and ``trained_again``: runs trained here whose key was already
        trained earlier in this regeneration (``trained_before``, updated; 0 unless the store failed to
        share a run)."""
        from .run.grid import progress_channel

        lines = list(progress_channel(self.path))
        keys = [ln["run"]["key"] for ln in lines if ln.get("run", {}).get("trained")]
        last: dict[str, dict] = {}
        for line in lines:
            last[line["desc"]] = line
        runs, trained = sum(v["done"] for v in last.values()), sum(v.get("trained", 0) for v in last.values())
        missing = sum(v.get("not_run", 0) for v in last.values())
        again = sum(k in trained_before for k in keys) + len(keys) - len(set(keys))
        trained_before.update(keys)
        return {"runs": runs, "trained": trained, "reused": runs - trained - missing, "not_run": missing,
                "trained_again": again}


def _scrub_executed(path: Path, figures_root: Path | None = None) -> None:
    """The executed notebook without machine paths; a figures root outside the repository
    (``--figures``) is named ``figures``, as if it were the repository's."""
    from .artefacts.provenance import scrub_paths

    if path.exists():
        text = path.read_text()
        if figures_root is not None and len(str(figures_root)) > 1:
            text = text.replace(str(Path(figures_root).resolve()), "figures")
        path.write_text(scrub_paths(text))


def _out_param(out: Path) -> str:
    """The ``out_dir`` given to a notebook: relative to the repository when inside it."""
    from .artefacts.provenance import relative_to_repo

    rel = relative_to_repo(out)
    return str(out) if rel.startswith("…") else rel


def _plan(profile: str, papers, only, notebooks_dir) -> list[tuple]:
    """``(paper, profile, notebooks)`` for each paper with a selected notebook; none at all is an error."""
    from .spec.paper import get_paper

    papers = papers or papers_with_notebooks(notebooks_dir)
    plan = [(name, get_paper(name).profile(profile), select(notebooks(name, notebooks_dir), only)) for name in papers]
    plan = [entry for entry in plan if entry[2]]
    if not plan:
        raise SystemExit(f"no notebooks match: papers {papers}, only {only}; notebooks are in notebooks/<paper>/")
    return plan


def _execute(nb: Path, out: Path, prof, root: Path, timeout: int | None) -> None:
    """Run notebook ``nb`` under ``prof`` with papermill, writing into ``out``; its executed copy goes to
    ``out/executed/`` without machine paths (also when it fails: the error propagates)."""
    import papermill as pm

    try:
        pm.execute_notebook(str(nb), str(out / "executed" / nb.name),
                            parameters={"profile": prof.name, "out_dir": _out_param(out)},
                            kernel_name="python3", cwd=str(nb.parent), progress_bar=False,
                            execution_timeout=timeout, log_output=False)
    finally:
        _scrub_executed(out / "executed" / nb.name, root)


def _claims_and_index(root: Path) -> Path:
    """The claims ledgers, headline figures and README block (:mod:`fedlib.repro.claims`), then the index, which
    counts the claims' verdicts."""
    from .artefacts.index import build_index
    from .claims import regenerate as claims

    claims(root)
    return build_index(root)


def regenerate(profile: str = "quick", papers: list[str] | None = None, only: list[str] | None = None,
               figures_root: str | os.PathLike | None = None, store: str | None = None, timeout: int | None = None,
               index: bool = True, notebooks_dir: str | os.PathLike | None = None, progress: bool = True,
               budget_hours: float | None = None, allow_over: bool = False, render: str = "train",
               allow_dirty: bool = False) -> dict:
    """Execute the (selected) notebooks of the (selected) papers under ``profile``; returns
    ``{paper: run record}`` and ``"failed"``.  With ``budget_hours``, a profile without a cost model
    (quick, smoke) whose estimate (:mod:`fedlib.repro.budget.cold_times`) exceeds it is refused before any
    output is touched (:class:`fedlib.repro.budget.plan.PlanError`), unless ``allow_over``.

    ``render``: ``"train"`` (train what the store lacks, and write the run records
    ``figures/<paper>/<profile>/_records.jsonl.gz``) or ``"records"`` (train nothing: every grid is
    answered from those records, :mod:`fedlib.repro.run.records`; a notebook that needs what records do
    not keep keeps its committed outputs, untouched, and says why).

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
                                    progress)
    from .artefacts.provenance import relative_to_repo, scrub_paths, store_label

    root = Path(figures_root).resolve() if figures_root is not None else _repo() / "figures"
    env = _environment(store)
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
        os.environ.update({RECORDS_ENV: str(out / _PLAIN_RECORDS), MODE_ENV: "write"})
        (out / _PLAIN_RECORDS).unlink(missing_ok=True)  # a killed regeneration's records are not trusted
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
            watcher = _Watcher(channel, label, progress)
            t = time.perf_counter()
            status, error = "ok", ""
            try:
                _execute(nb, out, prof, root, timeout)
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
        kept = merge(out / _PLAIN_RECORDS, out / RECORDS_FILE, replace=not only)
        for var in (RECORDS_ENV, MODE_ENV):
            os.environ.pop(var, None)
        record["records"] = {"file": RECORDS_FILE, "runs": kept}
        (out / "_run.json").write_text(json.dumps(record, indent=1) + "\n")
        records[name] = record
        print(f"{name} ({prof.name}): {record['total_wall_time_s'] / 60:.1f} min for {len(paths)} notebook(s)",
              flush=True)
    if index:
        print(f"index: {relative_to_repo(_claims_and_index(root))}")
    records["failed"] = failed
    if failed:
        print(f"FAILED: {', '.join(failed)}")
    return records


def _render_from_records(profile, papers, only, figures_root, store, timeout, index, notebooks_dir, progress) -> dict:
    """:func:`regenerate` with ``render="records"``: each selected notebook runs with its grids answered from
    the paper's run records (nothing trains).  A notebook that fails (a run without a record, a study that
    needs trained models the store lacks) has its outputs put back as they were, so a folder never mixes a
    failed render with earlier outputs; ``_run.json`` keeps the training's record and gains ``rendered``."""
    from .artefacts.provenance import git_commit, scrub_paths

    root = Path(figures_root).resolve() if figures_root is not None else _repo() / "figures"
    plan = _plan(profile, papers, only, notebooks_dir)
    missing = [f"{n}/{prof.name}" for n, prof, _ in plan if not (root / n / prof.name / RECORDS_FILE).exists()]
    if missing:
        raise SystemExit(f"no run records ({RECORDS_FILE}) for {', '.join(missing)}: regenerate them once with "
                         "training (without --render records)")
    scratch = Path(tempfile.mkdtemp(prefix="fedlib-render-"))
    _environment(store or str(scratch / "store"))  # a fresh store unless one is given: nothing to read, nothing trains
    out_records, failed = {}, []
    for name, prof, paths in plan:
        out = root / name / prof.name
        os.environ.update({RECORDS_ENV: str(out / RECORDS_FILE), MODE_ENV: "read"})
        rendered = []
        for nb in paths:
            backup = scratch / f"{name}-{nb.stem}"
            shutil.copytree(out, backup)
            t = time.perf_counter()
            try:
                _execute(nb, out, prof, root, timeout)
                status = {"name": nb.stem, "status": "rendered"}
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
        run_path = out / "_run.json"
        record = json.loads(run_path.read_text()) if run_path.exists() else {}
        record["rendered"] = {"from": RECORDS_FILE, "git_commit": git_commit(),
                              "at": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
                              "notebooks": rendered}
        run_path.write_text(json.dumps(record, indent=1) + "\n")
        out_records[name] = record
    for var in (RECORDS_ENV, MODE_ENV):
        os.environ.pop(var, None)
    shutil.rmtree(scratch, ignore_errors=True)
    if index:
        _claims_and_index(root)
    out_records["failed"] = failed
    return out_records


def earlier_timings(record: dict, old: dict) -> list[dict]:
    """The notebooks of an earlier run record ``old`` (its own and those it carried
    over, newest first) that ``record`` did not rerun, so that any chain of partial
    regenerations keeps one timing per notebook, each with the commit it ran at."""
    rerun = {n["name"] for n in record["notebooks"]}
    kept: dict[str, dict] = {}
    for n in old.get("notebooks", []):
        if n["name"] not in rerun:
            kept.setdefault(n["name"], {**n, **({"git_commit": old["git_commit"]} if old.get("git_commit") else {})})
    for n in old.get("previous", []):
        if n["name"] not in rerun:
            kept.setdefault(n["name"], n)
    return sorted(kept.values(), key=lambda n: n["name"])


def still_rendered(record: dict, old: dict) -> dict | None:
    """``old``'s ``rendered`` block (the notebooks last rendered from the run records, at its commit) less the
    notebooks ``record`` ran again, or None where none is left: a partial regeneration of one notebook leaves
    the others' outputs as they were rendered, and the record still says so."""
    rendered = old.get("rendered")
    if not isinstance(rendered, dict):
        return None
    rerun = {n["name"] for n in record["notebooks"]}
    left = [n for n in rendered.get("notebooks", []) if n.get("name") not in rerun]
    return {**rendered, "notebooks": left} if left else None


def cold_timing(record: dict, old: dict) -> dict | None:
    """When ``record`` trained no run (every result came from the store) and the earlier
    record ``old`` is of the same commit and notebooks, the timing of the regeneration that
    trained them (``old``'s, or the one ``old`` carried): what regenerating costs from an
    empty store.  Otherwise None."""
    if record.get("only") or any(n.get("trained", 0) for n in record["notebooks"]):
        return None
    if old.get("git_commit") != record.get("git_commit") or old.get("only"):
        return None
    if "cold" in old:
        return old["cold"]
    if not any(n.get("trained", 0) for n in old.get("notebooks", [])):
        return None
    return {k: old[k] for k in ("started", "finished", "total_wall_time_s", "store", "notebooks", "runs") if k in old}


def strip(paths: list[Path] | None = None) -> list[Path]:
    """Remove outputs, execution counts and execution metadata from notebooks
    (in place); returns the notebooks that changed."""
    import nbformat

    changed = []
    for path in paths if paths is not None else sorted((_repo() / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        nb = nbformat.read(str(path), as_version=4)
        before = nbformat.writes(nb)
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs = []
                cell.execution_count = None
            for key in ("execution", "papermill", "collapsed", "scrolled"):
                cell.metadata.pop(key, None)
        nb.metadata.pop("papermill", None)
        if nbformat.writes(nb) != before:
            nbformat.write(nb, str(path))
            changed.append(path)
    return changed


def _executor_environment(args: argparse.Namespace) -> int:
    """Pass the executor flags on to the notebooks' grids (through the environment the kernels
    inherit, :mod:`fedlib.repro.run.executors`); 2 (after one line on stderr) when they cannot be used."""
    from .run.executors import EXECUTOR_ENV, GPUS_ENV, MissingExtraError, check_resources, require_ray

    try:
        if args.gpus_per_run is not None:
            check_resources(1, args.gpus_per_run)
        if args.executor == "ray" or (args.executor is None and os.environ.get(EXECUTOR_ENV) == "ray"):
            require_ray()
    except (MissingExtraError, ValueError) as err:
        print(f"fedlib.repro.regenerate: error: {err}", file=sys.stderr)
        return 2
    if args.executor is not None:
        os.environ[EXECUTOR_ENV] = args.executor
    if args.ray_address is not None:
        os.environ["RAY_ADDRESS"] = args.ray_address
    if args.gpus_per_run is not None:
        os.environ[GPUS_ENV] = repr(args.gpus_per_run)
    return 0


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
                             "(train nothing: render every table and figure from the committed run records)")
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
    code = _executor_environment(args)
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
                             allow_over=args.over_budget, render=args.render, allow_dirty=args.allow_dirty)
    except DirtyTree as err:
        print(f"fedlib.repro.regenerate: {err}", file=sys.stderr)
        return 2
    except PlanError as err:
        print(f"fedlib.repro.regenerate: {err}", file=sys.stderr)
        return 2
    return 1 if records["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
