"""One notebook of a regeneration (``python -m fedlib.repro.regenerate``): the environment its kernel inherits
(the store, the data root, this fedlib on the path, the executor flags), its execution with papermill, the
progress its grids show on this terminal (:class:`Watcher`), its executed copy without machine paths; and the
source notebooks stripped of their outputs (``--strip``)."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import threading
from pathlib import Path

__all__ = ["environment", "executor_environment", "Watcher", "steady", "scrub_executed", "execute", "strip"]


def environment(store: str | None) -> dict:
    """Environment for the kernels: the store, the data root, this fedlib on the path."""
    from ..data import resolve_env_path
    from .artefacts.provenance import repo_root

    repo = repo_root()
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


class Watcher:
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


#: What papermill and Jupyter record of an execution itself, not of its outputs: when each cell ran, how long it
#: took, the random id of the injected parameters cell, and the progress bars' widget models (random ids; a
#: static copy shows no live widget).  :func:`steady` drops them, so a notebook rendered again from the same
#: records and code writes the same executed copy, byte for byte, and a render touches only what changed.
_TIMINGS = ("start_time", "end_time", "duration")
_WIDGET = "application/vnd.jupyter.widget-view+json"
_STYLER_ID = re.compile(r"T_[0-9a-f]{5}(?![0-9a-f])")  # pandas' Styler: a random table id a render
_ADDRESS = re.compile(r" at 0x[0-9a-f]+>")  # an object's repr: its memory address


def steady(nb: dict) -> dict:
    """The executed notebook ``nb`` without what changes at every execution (:data:`_TIMINGS`, the execution
    timestamps, the injected cell's random id, widget outputs and state, pandas' random table ids, numbered
    in order instead, and the memory addresses in objects' reprs)."""
    meta = nb.get("metadata", {})
    meta.pop("widgets", None)
    for k in _TIMINGS:
        meta.get("papermill", {}).pop(k, None)
    tables: dict[str, str] = {}
    for cell in nb.get("cells", []):
        md = cell.get("metadata", {})
        md.pop("execution", None)
        for k in _TIMINGS:
            md.get("papermill", {}).pop(k, None)
        if "injected-parameters" in md.get("tags", []):
            cell["id"] = "injected-parameters"
        outs = [o for o in cell.get("outputs", []) if _WIDGET not in o.get("data", {})]
        for o in outs:
            data = o.get("data", {})
            if isinstance(data.get("text/html"), list):
                data["text/html"] = [_STYLER_ID.sub(lambda m: tables.setdefault(m[0], f"T_{len(tables):05d}"), line)
                                     for line in data["text/html"]]
            if isinstance(data.get("text/plain"), list):
                data["text/plain"] = [_ADDRESS.sub(" at 0x0>", line) for line in data["text/plain"]]
        if "outputs" in cell:
            cell["outputs"] = outs
    return nb


def scrub_executed(path: Path, figures_root: Path | None = None) -> None:
    """The executed notebook without machine paths (a figures root outside the repository, ``--figures``, is
    named ``figures``, as if it were the repository's) and without what changes at every execution
    (:func:`steady`)."""
    from .artefacts.provenance import scrub_paths

    if path.exists():
        text = path.read_text()
        if figures_root is not None and len(str(figures_root)) > 1:
            text = text.replace(str(Path(figures_root).resolve()), "figures")
        text = scrub_paths(text)
        try:
            body = json.loads(text)
        except json.JSONDecodeError:
            body = None
        if isinstance(body, dict) and "cells" in body:
            text = json.dumps(steady(body), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        path.write_text(text)


def _out_param(out: Path) -> str:
    """The ``out_dir`` given to a notebook: relative to the repository when inside it."""
    from .artefacts.provenance import relative_to_repo

    rel = relative_to_repo(out)
    return str(out) if rel.startswith("…") else rel


def execute(nb: Path, out: Path, prof, root: Path, timeout: int | None) -> None:
    """Run notebook ``nb`` under ``prof`` with papermill, writing into ``out``; its executed copy goes to
    ``out/executed/`` without machine paths (also when it fails: the error propagates)."""
    import papermill as pm

    try:
        pm.execute_notebook(str(nb), str(out / "executed" / nb.name),
                            parameters={"profile": prof.name, "out_dir": _out_param(out)},
                            kernel_name="python3", cwd=str(nb.parent), progress_bar=False,
                            execution_timeout=timeout, log_output=False)
    finally:
        scrub_executed(out / "executed" / nb.name, root)


def strip(paths: list[Path] | None = None) -> list[Path]:
    """Remove outputs, execution counts and execution metadata from notebooks
    (in place); returns the notebooks that changed."""
    import nbformat

    from .artefacts.provenance import repo_root

    changed = []
    for path in paths if paths is not None else sorted((repo_root() / "notebooks").rglob("*.ipynb")):
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


def executor_environment(args: argparse.Namespace) -> int:
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

