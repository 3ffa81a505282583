"""Grids of runs: many configurations (× seeds) through :func:`fedlib.run`, store-backed.

* :func:`run_grid` -- run every cell once per seed (configurations with equal
  results once), optionally in parallel worker processes or on a Ray cluster
  (:mod:`fedlib.repro.run.executors`), with progress shown as a bar
  (a widget in JupyterLab) and, during a regeneration, on the terminal that
  started it (:func:`progress_channel`);
* :class:`GridResult` -- the tidy result: one row per run, one per evaluated round;
* :func:`aggregate` -- mean ± std over seeds.

A run's numbers do not depend on the number of workers: every run trains with
one thread (:func:`fedlib.simulation.single_thread`), wherever it runs.
Accuracies are in percent.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import pandas as pd

__all__ = ["GridResult", "run_grid", "identity", "aggregate", "diverged_lines", "default_store", "as_store", "progress_channel",
           "PROGRESS_ENV", "run_metrics", "TRAINED"]

#: Environment variable naming a file to which grids append their progress (one JSON line per finished
#: run); :mod:`fedlib.repro.regenerate` sets it for each notebook and shows it on its terminal.
PROGRESS_ENV = "FEDLIB_PROGRESS"


def default_store():
    """The regeneration store: ``$FEDLIB_STORE`` if set, else ``<repo>/.fedlib-store``."""
    from ...data import repo_root, resolve_env_path
    from ...store import Store

    from .records import ReadOnlyStore, mode

    env = os.environ.get("FEDLIB_STORE")
    root = resolve_env_path(env) if env else repo_root() / ".fedlib-store"
    return ReadOnlyStore(root) if mode() == "read" else Store(root)  # rendering from run records trains nothing


def as_store(store=None):
    """``store`` as a :class:`fedlib.store.Store`: None is the regeneration store (:func:`default_store`), a
    folder a store there, a store itself."""
    from ...store import Store

    return default_store() if store is None else (store if isinstance(store, Store) else Store(store))


#: The statuses of a run that trained to its end (``diverged``: its parameters stopped being finite).
TRAINED = ("ok", "diverged")


@dataclass
class GridResult:
    """``runs``: one row per (cell, seed): the cell's labels, ``seed``, ``status``
    (``ok`` / ``diverged`` / ``not run`` / ``failed``; a diverged run's parameters stopped being finite:
    its numbers are kept but left out of every mean), ``note``, ``accuracy`` (final test accuracy of
    the global model, %), other reported metrics (``personalized_accuracy``,
    ``drift_accuracy``, ``group_accuracy_<group>``, and what a part reported, e.g.
    ``teacher_accuracy`` and ``teacher_group_accuracy_<group>``: :func:`run_metrics`;
    %) when the run has them, ``wall_time_s``, ``key``.  ``histories``: the labels,
    ``seed``, ``round``, ``test_accuracy`` (%), ``train_loss`` per evaluated round (and
    ``stage`` for multi-stage methods)."""

    runs: pd.DataFrame
    histories: pd.DataFrame
    labels: list[str] = field(default_factory=list)
    wall_time_s: float = 0.0

    def ok(self) -> pd.DataFrame:
        return self.runs[self.runs.status == "ok"]

    def aggregate(self, by: Sequence[str] | None = None, value: str = "accuracy") -> pd.DataFrame:
        return aggregate(self.runs, by or self.labels, value)


def _metrics(summary: dict) -> dict:
    """The reported metrics of a run summary (or a run's :func:`run_metrics`), in percent."""
    out = {"accuracy": None if summary.get("final_accuracy") is None else 100.0 * summary["final_accuracy"]}
    for key, value in summary.items():
        if key.endswith("_accuracy") and key != "final_accuracy" and isinstance(value, (int, float)):
            out[key] = 100.0 * value
        elif key.endswith("_accuracy") and isinstance(value, dict):
            for group, v in value.items():
                if isinstance(v, (int, float)) and not (isinstance(v, float) and math.isnan(v)):
                    out[f"{key}_{group}"] = 100.0 * v
    return out


def run_metrics(result) -> dict:
    """A run's summary plus its group accuracies (``group_accuracy``, when the run has its
    training class counts) and what its parts reported (:attr:`fedlib.Result.reported`,
    e.g. FEDIC's ``teacher_accuracy`` and ``teacher_group_accuracy``)."""
    out = dict(result.summary)
    if out.get("train_class_counts") is not None and any(c.startswith("acc_class_") for c in result.history):
        out["group_accuracy"] = result.group_accuracy
    out.update(result.reported)
    return out


def _stored_or_cuda(config: dict, store_root: str | None) -> bool:
    """A run on ``cuda`` can be had here: CUDA is available, or its result is in the store."""
    import torch

    from ...config import Config
    from ...store import Store

    if torch.cuda.is_available():
        return True
    if not store_root:
        return False
    return Store(store_root).has_result(Config.from_dict(config))


def _run_one(config: dict, store_root: str | None) -> dict:
    """Run (or load) one configuration; never raises for a missing dataset."""
    from ...api import run
    from ...data import DatasetNotFoundError

    t0 = time.perf_counter()
    if str(config.get("device", "cpu")).startswith("cuda") and not _stored_or_cuda(config, store_root):
        return {"status": "not run",
                "note": "not run: needs a GPU (no run of this seed trained on one is in the store)"}
    try:
        result = run(config, store=store_root if store_root else False, progress=False)
    except DatasetNotFoundError as err:
        return {"status": "not run", "note": f"not run: {err.reason}"}
    except Exception as err:  # noqa: BLE001 -- recorded in the table, the grid goes on
        return {"status": "failed", "note": f"failed: {type(err).__name__}: {err}"}
    cols = [c for c in ("stage", "round", "test_accuracy", "train_loss") if c in result.history]
    hist = result.history[cols].dropna(subset=["test_accuracy"]).to_dict("records") \
        if "test_accuracy" in result.history else []
    status, note = "ok", ""
    if result.diverged_round is not None:  # its accuracy is a broken model's: not a result
        status, note = "diverged", f"diverged: the parameters were not finite after round {result.diverged_round}"
    return {"status": status, "note": note, **_metrics(run_metrics(result)), "wall_time_s": result.wall_time_s,
            "key": result.summary.get("key"), "device_name": result.summary.get("device_name"), "history": hist,
            "elapsed_s": time.perf_counter() - t0,
            "from_store": result.from_store}


def identity(cfg: dict) -> str:
    """What decides a configuration's result: its resolved store-key content
    (:meth:`fedlib.Config.key_dict`: defaults filled in, parameters of methods it does not
    use and bookkeeping left out), or the dict itself when it is not a valid configuration
    (the run then fails with the reason)."""
    from ...config import Config

    try:
        cfg = Config.from_dict(cfg).key_dict()
    except Exception:  # noqa: BLE001 -- reported by the run itself
        pass
    return json.dumps(cfg, sort_keys=True, default=str)


def _tqdm():
    """tqdm.auto (widgets in JupyterLab), quietly falling back to text bars without ipywidgets."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm
    return tqdm


class _Progress:
    """A bar in the notebook (or terminal) and, when ``$FEDLIB_PROGRESS`` names a file, one JSON
    line per finished run there: what a regeneration shows on the terminal that started it."""

    def __init__(self, total: int, desc: str, show: bool):
        self.total, self.desc, self.done, self.trained, self.t0 = total, desc, 0, 0, time.perf_counter()
        self.not_run = 0  # neither trained nor from the store: not run here (absent data, a GPU's) or failed
        self.bar = _tqdm()(total=total, desc=desc, disable=not show, unit="run", dynamic_ncols=True)
        self.channel = os.environ.get(PROGRESS_ENV)
        self._write()

    def _write(self, run: dict | None = None) -> None:
        if not self.channel:
            return
        elapsed = time.perf_counter() - self.t0
        # the runs left at the pace of the runs trained here: one read from the store takes no time, and
        # a grid that found half its runs there is not half done in time
        eta = 0.0 if self.done == self.total else \
            elapsed / self.trained * (self.total - self.done) if self.trained else None
        line = {"desc": self.desc, "done": self.done, "total": self.total, "trained": self.trained,
                "not_run": self.not_run,
                "elapsed_s": round(elapsed, 1), "eta_s": None if eta is None else round(eta, 1)}
        if run is not None:  # the run just finished: its store key and whether it was trained here
            line["run"] = run
        try:
            with open(self.channel, "a") as fh:
                fh.write(json.dumps(line) + "\n")
        except OSError:
            self.channel = None

    def update(self, result: dict | None = None) -> None:
        self.done += 1
        trained = result is not None and result.get("status") in TRAINED and not result.get("from_store")
        self.trained += trained
        self.not_run += result is None or result.get("status") not in TRAINED
        self.bar.update(1)
        self._write(None if result is None or not result.get("key") else {"key": result["key"], "trained": trained})

    def close(self) -> None:
        self.bar.close()


def progress_channel(path: str | os.PathLike) -> Iterable[dict]:
    """The progress lines written so far to ``path`` (see :data:`PROGRESS_ENV`)."""
    path = Path(path)
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def run_grid(cells: Iterable[dict], *, seeds: Sequence[int] | None = (0,), store: Any = None, workers: int = 1,
             progress: bool = True, desc: str = "grid", executor: Any = None, cpus_per_run: float | None = None,
             gpus_per_run: float | None = None) -> GridResult:
    """Run every cell (× seed) through :func:`fedlib.run`, store-backed.

    ``cells``: dicts of labels (any keys, e.g. ``row``, ``column``, ``method``)
    plus ``config`` (a configuration dict without ``seed``, or None for a cell that
    is not run) and optionally ``note``.  Each cell runs once per seed (a
    ``seed`` in the config wins; ``seeds=None`` runs the config as given).
    Configurations with the same result (equal but for parameters the run ignores) run
    once.  A dataset that is absent marks its
    cells "not run" (with the reason, no machine path); any other error marks
    the cell "failed" and the grid continues.

    ``store``: a :class:`fedlib.store.Store`, a folder, None (the regeneration
    store :func:`default_store`) or False (no store).  ``workers`` > 1 runs that
    many processes in parallel; the results are the same for any ``workers``.

    ``executor``: where the runs train (:mod:`fedlib.repro.run.executors`): ``"local"``
    (``workers`` processes on this machine), ``"ray"`` (one Ray task per run with
    ``cpus_per_run`` CPUs and ``gpus_per_run`` GPUs, a fraction where runs share a
    GPU; needs a store on a filesystem every node sees) or an executor object; None:
    ``$FEDLIB_EXECUTOR``, else ``"local"``.  The results are the same for every executor.
    """
    from ...store import Store
    from .executors import make_executor

    t0 = time.perf_counter()
    runner = make_executor(executor, workers=workers, cpus_per_run=cpus_per_run, gpus_per_run=gpus_per_run)
    if store is None:
        store = default_store()
    store_root = None if store is False else str(store.root if isinstance(store, Store) else store)
    cells = list(cells)
    labels = [k for k in (cells[0] if cells else {}) if k not in ("config", "note")]
    jobs: list[tuple[dict, dict | None]] = []  # (row labels, config or None)
    for cell in cells:
        lab = {k: v for k, v in cell.items() if k not in ("config", "note")}
        cfg = cell.get("config")
        seed_list = [None] if (seeds is None or (cfg is not None and "seed" in cfg)) else list(seeds)
        for s in seed_list:
            row = dict(lab)
            row["seed"] = (cfg or {}).get("seed", s) if s is None else s
            row["note"] = cell.get("note", "")
            jobs.append((row, None if cfg is None else ({**cfg, "seed": s} if s is not None else dict(cfg))))

    unique: dict[str, dict] = {}  # one run per result: configurations equal but for ignored keys train once
    for _, cfg in jobs:
        if cfg is not None:
            unique.setdefault(identity(cfg), cfg)
    from . import records

    recording = records.mode()
    bar = _Progress(len(unique), desc, progress)
    written: set[str] = set()  # the runs whose record is in this regeneration's records file
    held: dict[str, dict] = {}  # the runs answered by a record that stands for them (records.resumable)

    def finished(ident: str, result: dict) -> None:
        bar.update(result)
        if recording == "write" and result.get("status") in records.FINISHED:  # durable as soon as it ends
            records.append(os.environ[records.RECORDS_ENV], [records.make_record(ident, unique[ident], result)])
            written.add(ident)

    try:
        if recording == "read":  # rendering from run records: every run's result from its record, none trained
            results = records.lookup(unique, desc)
            for ident in unique:
                bar.update(results[ident])
        else:
            # a regeneration goes on from the runs that finished under this code (records.resumable), then
            # trains the rest, writing each one's record as it finishes
            held = records.resumable(unique) if recording == "write" else {}
            results = {ident: records.resumed_result(rec) for ident, rec in held.items()}
            for ident in results:
                bar.update(results[ident])
            todo = {ident: cfg for ident, cfg in unique.items() if ident not in results}
            results.update(runner.run(todo, _run_one, store_root, finished))
    finally:
        bar.close()
    if recording == "write":  # a regeneration: what this grid's outputs are computed from, beside them; a run
        # resumed from its record keeps that record (the commit and machine that trained it)
        records.append(os.environ[records.RECORDS_ENV],
                       [held.get(ident) or records.make_record(ident, cfg, results[ident])
                        for ident, cfg in unique.items() if ident not in written])

    run_rows, hist_rows = [], []
    for row, cfg in jobs:
        if cfg is None:
            run_rows.append({**row, "status": "not run", "note": row["note"] or "not run"})
            continue
        res = results[identity(cfg)]
        out = {**row, "status": res["status"], "note": res["note"] if res["note"] else row["note"]}
        if res["status"] in TRAINED:  # a diverged run keeps its numbers and curve, marked, out of the means
            out.update({k: v for k, v in res.items() if k not in ("status", "note", "history", "elapsed_s")})
            out["from_store"] = bool(res.get("from_store"))
            out["dataset_used"] = cfg.get("dataset")
            for h in res["history"]:
                hist_rows.append({**{k: v for k, v in row.items() if k != "note"}, **h,
                                  "test_accuracy": 100.0 * h["test_accuracy"]})
        run_rows.append(out)
    runs = pd.DataFrame(run_rows)
    for col, dtype in (("accuracy", float), ("wall_time_s", float), ("key", object), ("dataset_used", object)):
        if col not in runs:
            runs[col] = pd.Series(dtype=dtype)
    return GridResult(runs, pd.DataFrame(hist_rows), labels, time.perf_counter() - t0)


def _seeds_json(ok: pd.DataFrame, value: str) -> str | None:
    """Each finished seed's ``value``, as JSON with the seeds in ascending order (the tables' ``ours_seeds``,
    :func:`fedlib.repro.artefacts.tables.seeds_text`); None without a ``seed`` column or a finished seed."""
    if "seed" not in ok or value not in ok:
        return None
    vals = {int(s): float(v) for s, v in zip(ok.seed, ok[value]) if not pd.isna(v)}
    return json.dumps({str(s): vals[s] for s in sorted(vals)}) if vals else None


def aggregate(runs: pd.DataFrame, by: Sequence[str], value: str = "accuracy") -> pd.DataFrame:
    """Mean and sample std (ddof=1; NaN for one seed) of ``value`` over seeds, per group
    ``by``, and each seed's value (``ours_seeds``, so that every summary can be read seed by seed);
    ``n_seeds`` counts the finished runs, ``status`` is ``ok`` if any run
    finished, else the first run's status and note.  A group where some seeds finished and others
    diverged, did not run or failed keeps the mean of the finished ones and says why in its ``note``
    ("1 of 3 seeds diverged (seed 2: …): left out of the mean", "1 of 3 seeds without a result (seed 2:
    not run: needs a GPU …)"), so a table marks the cell."""
    recs = []
    for keys, grp in runs.groupby(list(by), sort=False, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        ok = grp[grp.status == "ok"]
        vals = ok[value].astype(float).dropna() if value in ok else pd.Series(dtype=float)
        bad = grp[grp.status == "diverged"]
        short = grp[~grp.status.isin(("ok", "diverged"))]  # seeds asked for that did not run here (or failed)
        partial = "; ".join(f"{len(part)} of {len(grp)} seeds {what} ("
                            + "; ".join(f"seed {s}: {n}" for s, n in
                                        zip(part.get("seed", [None] * len(part)), part.note))
                            + f"): {then}"
                            for part, what, then in ((bad, "diverged", "left out of the mean"),
                                                     (short, "without a result", "the mean is over the others"))
                            if len(vals) and len(part))
        recs.append({**dict(zip(by, keys)),
                     "ours_mean": float(vals.mean()) if len(vals) else math.nan,
                     "ours_std": float(vals.std(ddof=1)) if len(vals) > 1 else math.nan,
                     "n_seeds": int(len(vals)),
                     "ours_seeds": _seeds_json(ok, value),
                     "status": "ok" if len(vals) else str(grp.status.iloc[0]),
                     "note": partial if len(vals) else str(grp.note.iloc[0]),
                     "dataset_used": ok["dataset_used"].iloc[0] if len(ok) and "dataset_used" in ok else None})
    return pd.DataFrame(recs)


def diverged_lines(aggregated: pd.DataFrame, by: Sequence[str]) -> list[str]:
    """One line per group of :func:`aggregate`'s output whose runs all diverged (their mean is
    empty): ``"<labels>: diverged: …"``, for a table's findings."""
    if "status" not in aggregated:
        return []
    rows = aggregated[aggregated.status == "diverged"]
    return [" / ".join(str(r[b]) for b in by) + f": {r['note']}" for r in rows.to_dict("records")]
