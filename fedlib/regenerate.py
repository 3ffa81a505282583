"""Regenerate every table and figure of the FedLC paper by executing the notebooks.

    python -m fedlib.regenerate --profile quick            # all notebooks
    python -m fedlib.regenerate --profile smoke --only 04  # one notebook (name, number or substring)
    make figures PROFILE=paper                             # the same through make

Each notebook in ``notebooks/`` (``fedlc_*.ipynb``, in name order) runs with
papermill (kernel ``python3``) with the parameters ``profile`` and ``out_dir``;
the executed copy goes to ``<out>/executed/`` (the sources are never
overwritten).  The notebooks write their tables and figures into ``<out>``
(default ``figures/fedlc``); afterwards the index ``figures/README.md`` is
rebuilt (:func:`fedlib.report.build_index`) with the total wall time.

Runs are cached in the results store: ``$FEDLIB_STORE`` if set, else
``<repo>/.fedlib-store``; a second regeneration with the same code takes
seconds.  A full run (no ``--only``) first removes the previous artefacts of
``<out>``.  The exit status is 1 if any notebook failed.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import sys
import time
from pathlib import Path

__all__ = ["main", "notebooks", "select", "regenerate", "strip", "earlier_timings"]

_ARTEFACT_SUFFIXES = {".pdf", ".png", ".json", ".csv", ".md"}


def _repo() -> Path:
    from .figures import repo_root

    return repo_root()


def notebooks(folder: str | os.PathLike | None = None) -> list[Path]:
    """The regeneration notebooks, in order: ``notebooks/fedlc_*.ipynb``."""
    folder = Path(folder) if folder is not None else _repo() / "notebooks"
    return sorted(p for p in folder.glob("fedlc_*.ipynb") if not p.name.startswith("."))


def select(paths: list[Path], only: list[str] | None) -> list[Path]:
    """Notebooks whose stem equals, ends with, or contains one of ``only``
    (e.g. ``fedlc_04_label_skew``, ``04_label_skew``, ``04``)."""
    if not only:
        return list(paths)
    chosen = []
    for name in only:
        name = Path(name).stem
        hits = [p for p in paths if p.stem == name] or [p for p in paths if p.stem.endswith(name)] \
            or [p for p in paths if name in p.stem]
        if not hits:
            raise SystemExit(f"no notebook matches {name!r}; notebooks: {', '.join(p.stem for p in paths)}")
        chosen += [p for p in hits if p not in chosen]
    return [p for p in paths if p in chosen]


def _clean(out: Path) -> None:
    for path in out.glob("*"):
        if path.is_file() and path.suffix in _ARTEFACT_SUFFIXES:
            path.unlink()
    executed = out / "executed"
    if executed.is_dir():
        for path in executed.glob("*.ipynb"):
            path.unlink()


def _environment(store: str | None) -> dict:
    """Environment for the kernels: the store, the data root, this fedlib on the path."""
    repo = _repo()
    os.environ["FEDLIB_STORE"] = store or os.environ.get("FEDLIB_STORE") or str(repo / ".fedlib-store")
    if not os.environ.get("FEDLIB_DATA"):
        shared = repo.parent / "shared" / "data"
        if shared.is_dir():
            os.environ["FEDLIB_DATA"] = str(shared)
    # the kernels run in notebooks/: paths given relative to the caller's folder
    # (e.g. FEDLIB_DATA=../shared/data) must not be re-read from there
    for var in ("FEDLIB_STORE", "FEDLIB_DATA", "FEDLIB_CACHE"):
        if os.environ.get(var):
            os.environ[var] = str(Path(os.environ[var]).expanduser().resolve())
    path = os.environ.get("PYTHONPATH", "")
    if str(repo) not in path.split(os.pathsep):
        os.environ["PYTHONPATH"] = str(repo) + (os.pathsep + path if path else "")
    os.environ.setdefault("MPLBACKEND", "Agg")
    # one torch thread per process: on a small CPU shared with the grid's worker processes,
    # OpenMP threads waiting on each other cost far more than they gain
    os.environ.setdefault("FEDLIB_THREADS", "1")
    os.environ.setdefault("TQDM_MININTERVAL", "5")
    return {"store": os.environ["FEDLIB_STORE"], "data": os.environ.get("FEDLIB_DATA", "./data")}


def regenerate(profile: str = "quick", only: list[str] | None = None, out_dir: str | os.PathLike | None = None,
               store: str | None = None, timeout: int | None = None, index: bool = True,
               notebooks_dir: str | os.PathLike | None = None, progress: bool = True) -> dict:
    """Execute the (selected) notebooks under ``profile``; returns the run record."""
    import papermill as pm
    from tqdm import tqdm

    from .figures import default_output_dir
    from .profiles import get_profile
    from .report import build_index

    prof = get_profile(profile)
    out = Path(out_dir) if out_dir is not None else default_output_dir()
    out = out.resolve()
    env = _environment(store)
    paths = select(notebooks(notebooks_dir), only)
    if not paths:
        raise SystemExit("no notebooks found in notebooks/ (fedlc_*.ipynb)")
    out.mkdir(parents=True, exist_ok=True)
    (out / "executed").mkdir(exist_ok=True)
    if not only:
        _clean(out)
    started = _dt.datetime.now().astimezone()
    t0 = time.perf_counter()
    record = {"profile": prof.name, "store": env["store"], "data": env["data"],
              "started": started.isoformat(timespec="seconds"), "notebooks": [], "only": only or []}
    bar = tqdm(paths, desc=f"notebooks ({prof.name})", unit="nb", disable=not progress, dynamic_ncols=True)
    failed = []
    for nb in bar:
        bar.set_postfix_str(nb.stem)
        os.environ["FEDLIB_NOTEBOOK"] = nb.stem
        t = time.perf_counter()
        status, error = "ok", ""
        try:
            pm.execute_notebook(str(nb), str(out / "executed" / nb.name),
                                parameters={"profile": prof.name, "out_dir": str(out)},
                                kernel_name="python3", cwd=str(nb.parent), progress_bar=False,
                                execution_timeout=timeout, log_output=False)
        except Exception as err:  # noqa: BLE001 -- report and go on with the other notebooks
            status, error = "failed", f"{type(err).__name__}: {str(err).strip()[-2000:]}"
            failed.append(nb.stem)
        dt = time.perf_counter() - t
        record["notebooks"].append({"name": nb.stem, "status": status, "wall_time_s": round(dt, 1),
                                    **({"error": error} if error else {})})
        tqdm.write(f"{nb.stem}: {status} in {dt:.1f} s" + (f"\n{error}" if error else ""))
    bar.close()
    record["total_wall_time_s"] = round(time.perf_counter() - t0, 1)
    record["finished"] = _dt.datetime.now().astimezone().isoformat(timespec="seconds")
    if only and (out / "_run.json").exists():  # keep the timings of the notebooks not rerun
        try:
            record["previous"] = earlier_timings(record, json.loads((out / "_run.json").read_text()))
        except (json.JSONDecodeError, KeyError, TypeError):
            pass
    (out / "_run.json").write_text(json.dumps(record, indent=1) + "\n")
    if index:
        path = build_index(out, run_info=record)
        print(f"index: {path}")
    print(f"total wall time: {record['total_wall_time_s']:.1f} s ({record['total_wall_time_s'] / 60:.1f} min) "
          f"for {len(paths)} notebook(s), profile {prof.name!r}" + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    record["failed"] = failed
    return record


def earlier_timings(record: dict, old: dict) -> list[dict]:
    """The notebooks of an earlier run record ``old`` (its own and those it carried
    over, newest first) that ``record`` did not rerun, so that any chain of partial
    regenerations keeps one timing per notebook."""
    rerun = {n["name"] for n in record["notebooks"]}
    kept: dict[str, dict] = {}
    for n in list(old.get("notebooks", [])) + list(old.get("previous", [])):
        if n["name"] not in rerun:
            kept.setdefault(n["name"], n)
    return sorted(kept.values(), key=lambda n: n["name"])


def strip(paths: list[Path] | None = None) -> list[Path]:
    """Remove outputs, execution counts and execution metadata from notebooks
    (in place); returns the notebooks that changed."""
    import nbformat

    changed = []
    for path in paths if paths is not None else sorted((_repo() / "notebooks").glob("*.ipynb")):
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedlib.regenerate", description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default=os.environ.get("FEDLIB_PROFILE", "quick"),
                        help="smoke, quick (default) or paper")
    parser.add_argument("--only", action="append", default=[],
                        help="run only this notebook (name, number or substring); repeatable")
    parser.add_argument("--out", default=None, help="output folder (default figures/fedlc)")
    parser.add_argument("--store", default=None, help="results store (default $FEDLIB_STORE or <repo>/.fedlib-store)")
    parser.add_argument("--timeout", type=int, default=None, help="per-cell timeout in seconds")
    parser.add_argument("--no-index", action="store_true", help="do not rebuild figures/README.md")
    parser.add_argument("--list", action="store_true", help="list the notebooks and exit")
    parser.add_argument("--strip", action="store_true", help="strip outputs from notebooks/*.ipynb and exit")
    args = parser.parse_args(argv)
    if args.strip:
        for p in strip():
            print(f"stripped {p}")
        return 0
    if args.list:
        for p in notebooks():
            print(p.stem)
        return 0
    only = [o for item in args.only for o in item.split(",") if o]
    record = regenerate(args.profile, only or None, args.out, args.store, args.timeout, not args.no_index)
    return 1 if record["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
