"""Executors: where a grid's runs train.

* ``"local"`` (:class:`LocalExecutor`) -- in this process, or in ``workers``
  local worker processes;
* ``"ray"`` (:class:`RayExecutor`) -- one Ray task per run (configuration ×
  seed) on a Ray cluster, or on a Ray instance started on this machine.

:func:`fedlib.repro.run.grid.run_grid` hands an executor the grid's distinct
configurations and a task (``task(config, store_root) -> result dict``); the
executor returns one result per configuration and reports each finished run to
the grid's progress bar.  Every run trains with one thread wherever it runs, so
its numbers do not depend on the executor.

**Ray.**  Ray is an optional extra (``pip install "fedlib[ray]"``), imported
only when the Ray executor is used.  Each run is one task with ``num_cpus`` =
``cpus_per_run`` and ``num_gpus`` = ``gpus_per_run`` (a fraction: that many runs
share one GPU); with GPUs, a run whose configuration names no ``device`` runs
on ``"cuda"``.  A run whose result is already in the store is read here and
never submitted.  A task writes its result to the store itself (the store must
be on a filesystem every node sees, ``$FEDLIB_STORE``) and sends back only the
run's key and metrics.  A task whose worker dies (killed, out of memory, a lost
node) is retried up to ``max_retries`` times; the retry resumes from the run's
last checkpoint in the store (every ``checkpoint_every`` rounds), so the grid
ends with the numbers of an uninterrupted one.  A run that fails for a reason in
its configuration (:class:`fedlib.ConfigError`, an absent dataset) returns its
failure as a result and is never retried.  A task that uses a GPU runs in a
fresh worker process (``max_calls=1``): a reused worker would keep the CUDA
memory of the runs before it.

The workers import the fedlib of this checkout: every task carries
``PYTHONPATH=<this checkout>`` (and ``$FEDLIB_DATA``) in its ``runtime_env``; on
a cluster, the checkout (same commit) and the data must be at the same path on
every node, e.g. on the shared filesystem that holds the store.

The command line (:mod:`fedlib.repro.regenerate`) passes its choices to the
notebooks' grids through the environment: :data:`EXECUTOR_ENV`,
:data:`GPUS_ENV`, :data:`CPUS_ENV`, and Ray's own ``RAY_ADDRESS``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

__all__ = ["EXECUTORS", "EXECUTOR_ENV", "GPUS_ENV", "CPUS_ENV", "RAY_EXTRA", "MissingExtraError", "LocalExecutor",
           "RayExecutor", "KillOnce", "make_executor", "require_ray", "check_resources"]

#: The executors :func:`fedlib.repro.run.grid.run_grid` knows.
EXECUTORS = ("local", "ray")
#: Environment variable naming the executor of every grid that does not name one (set by ``--executor``).
EXECUTOR_ENV = "FEDLIB_EXECUTOR"
#: Environment variable with the GPUs per run (a fraction), overriding the profile's (set by ``--gpus-per-run``).
GPUS_ENV = "FEDLIB_GPUS_PER_RUN"
#: Environment variable with the CPUs per run, overriding the profile's.
CPUS_ENV = "FEDLIB_CPUS_PER_RUN"
#: How to install the Ray extra (the one line a missing Ray ends with).
RAY_EXTRA = 'pip install "fedlib[ray]"'

Task = Callable[[dict, "str | None"], dict]
OnResult = Callable[[str, dict], None]  # (the job's key, its result), as each run finishes


class MissingExtraError(ImportError):
    """An optional extra that the chosen executor needs is not installed."""


def require_ray():
    """The ``ray`` module, imported now; :class:`MissingExtraError` (one line naming the extra) without it."""
    try:
        import ray
    except ImportError as err:
        raise MissingExtraError(f"executor 'ray' needs Ray, which is not installed: {RAY_EXTRA}") from err
    return ray


def check_resources(cpus_per_run: float, gpus_per_run: float) -> None:
    """Refuse resources Ray cannot schedule, naming the parameter and the allowed range."""
    if not (isinstance(cpus_per_run, (int, float)) and math.isfinite(cpus_per_run) and cpus_per_run > 0):
        raise ValueError(f"cpus_per_run must be a number > 0, got {cpus_per_run!r}")
    if not (isinstance(gpus_per_run, (int, float)) and math.isfinite(gpus_per_run) and gpus_per_run >= 0
            and (gpus_per_run <= 1 or float(gpus_per_run).is_integer())):
        raise ValueError("gpus_per_run must be 0, a fraction in (0, 1] (that many runs share one GPU) or a whole "
                         f"number of GPUs, got {gpus_per_run!r}")


def _env_number(name: str) -> float | None:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return None
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"${name} must be a number, got {raw!r}") from None


def make_executor(executor: Any = None, *, workers: int = 1, cpus_per_run: float | None = None,
                  gpus_per_run: float | None = None):
    """The executor for a grid: an executor object passes through; a name (``"local"`` or ``"ray"``;
    None: ``$FEDLIB_EXECUTOR``, else ``"local"``) builds one.  For Ray, ``$FEDLIB_CPUS_PER_RUN`` and
    ``$FEDLIB_GPUS_PER_RUN`` (the command line's choice) win over ``cpus_per_run`` and ``gpus_per_run``
    (the profile's); the defaults are 1 CPU and no GPU."""
    if executor is not None and not isinstance(executor, str):
        return executor
    name = executor if executor is not None else (os.environ.get(EXECUTOR_ENV) or "local")
    if name not in EXECUTORS:
        raise ValueError(f"executor must be one of {', '.join(map(repr, EXECUTORS))}, got {name!r}")
    if name == "local":
        return LocalExecutor(workers)
    cpus = _env_number(CPUS_ENV)
    gpus = _env_number(GPUS_ENV)
    return RayExecutor(cpus_per_run=cpus if cpus is not None else (1 if cpus_per_run is None else cpus_per_run),
                       gpus_per_run=gpus if gpus is not None else (0 if gpus_per_run is None else gpus_per_run))


class LocalExecutor:
    """Runs in this process (``workers`` = 1, datasets found absent once are not tried again) or in
    ``workers`` spawned processes."""

    name = "local"

    def __init__(self, workers: int = 1):
        self.workers = max(1, int(workers))

    def run(self, jobs: dict[str, dict], task: Task, store_root: str | None, on_result: OnResult) -> dict[str, dict]:
        results: dict[str, dict] = {}
        workers = min(self.workers, len(jobs) or 1)
        if workers == 1:
            absent: dict[str, str] = {}
            for key, cfg in jobs.items():
                ds = cfg.get("dataset")
                if ds in absent:
                    results[key] = {"status": "not run", "note": absent[ds]}
                else:
                    results[key] = task(cfg, store_root)
                    if results[key]["note"].startswith("not run: dataset"):
                        absent[ds] = results[key]["note"]
                on_result(key, results[key])
            return results
        import concurrent.futures as cf
        import multiprocessing as mp

        with cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_worker_init) as pool:
            futures = {pool.submit(task, cfg, store_root): key for key, cfg in jobs.items()}
            for fut in cf.as_completed(futures):
                results[futures[fut]] = fut.result()
                on_result(futures[fut], results[futures[fut]])
        return results


def _worker_init() -> None:
    import torch

    torch.set_num_threads(1)  # runs train single-threaded anyway; this keeps worker start-up lean
    die_with_parent()


def die_with_parent() -> bool:
    """On Linux, ask the kernel to end this process when its parent dies (``PR_SET_PDEATHSIG``): a grid's
    worker whose notebook kernel was killed would otherwise go on training, orphaned, for hours (its result
    lands in the store, but nothing records it).  Returns whether it was set (elsewhere: False, as before)."""
    import ctypes
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        return libc.prctl(1, int(signal.SIGTERM), 0, 0, 0) == 0  # 1 = PR_SET_PDEATHSIG
    except OSError:
        return False


@dataclass(frozen=True)
class KillOnce:
    """Test fault injection, never set by fedlib itself: the worker of a run kills its own process
    (SIGKILL, as a crash or an out-of-memory kill would) just before the run writes its
    ``at``-th checkpoint, once per ``marker`` file (created then, so the retry runs through).
    Every checkpoint loaded afterwards is appended to ``marker`` as ``resumed <round>``."""

    marker: str
    at: int = 2


def _install_fault(fault: KillOnce) -> Callable[[], None]:
    """Patch the store's checkpoint methods in this worker for one task; returns the undo."""
    import signal

    from ...store import Store

    marker = Path(fault.marker)
    save, load, calls = Store.save_checkpoint, Store.load_checkpoint, [0]

    def save_checkpoint(self, key, config, state):
        calls[0] += 1
        if calls[0] == fault.at and not marker.exists():
            marker.write_text(f"killed before checkpoint {fault.at}\n")
            os.kill(os.getpid(), signal.SIGKILL)
        return save(self, key, config, state)

    def load_checkpoint(self, key):
        state = load(self, key)
        if state is not None:
            with open(marker, "a") as fh:
                fh.write(f"resumed {(state.get('stage_state') or {}).get('round')}\n")
        return state

    Store.save_checkpoint, Store.load_checkpoint = save_checkpoint, load_checkpoint

    def undo() -> None:
        Store.save_checkpoint, Store.load_checkpoint = save, load

    return undo


def _ray_task(task: Task, config: dict, store_root: str | None, fault: KillOnce | None) -> dict:
    """One run on a Ray worker: the result dict of ``task`` (its key and metrics; the model stays in the store)."""
    undo = _install_fault(fault) if fault is not None else None
    try:
        return task(config, store_root)
    finally:
        if undo is not None:
            undo()
        if str(config.get("device", "cpu")).startswith("cuda"):
            import torch

            torch.cuda.empty_cache()


def _ray_task_fresh_worker(task: Task, config: dict, store_root: str | None, fault: KillOnce | None) -> dict:
    """:func:`_ray_task` in a worker process that ends after it (for GPU runs: their CUDA memory goes with it)."""
    return _ray_task(task, config, store_root, fault)


def _cuda_here() -> bool:
    import torch

    return torch.cuda.is_available()


def _checkout() -> str:
    """The folder holding the ``fedlib`` package this process imported."""
    import fedlib

    return str(Path(fedlib.__file__).resolve().parents[1])


class RayExecutor:
    """One Ray task per run; see the module docstring.  ``address``: the cluster (None: Ray's
    ``RAY_ADDRESS``, else a running local instance, else a new one on this machine); used only
    when Ray is not initialized yet.  ``fault``: test fault injection (:class:`KillOnce`).
    After :meth:`run`, ``submitted`` holds the store keys of the runs sent to Ray (None for a CUDA run
    whose key this machine, without a GPU, cannot compute)."""

    name = "ray"

    def __init__(self, *, cpus_per_run: float = 1, gpus_per_run: float = 0, max_retries: int = 3,
                 address: str | None = None, fault: KillOnce | None = None):
        require_ray()
        check_resources(cpus_per_run, gpus_per_run)
        if not (isinstance(max_retries, int) and max_retries >= 0):
            raise ValueError(f"max_retries must be an integer ≥ 0, got {max_retries!r}")
        self.cpus_per_run, self.gpus_per_run, self.max_retries = cpus_per_run, gpus_per_run, max_retries
        self.address, self.fault = address, fault
        self.submitted: list[str | None] = []

    def runtime_env(self) -> dict:
        """The tasks' environment: this checkout first on the path, the same data root, one thread."""
        path = os.pathsep.join(p for p in (_checkout(), os.environ.get("PYTHONPATH", "")) if p)
        env = {"PYTHONPATH": path, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        for var in ("FEDLIB_DATA", "FEDLIB_CACHE"):
            if os.environ.get(var):
                env[var] = str(Path(os.environ[var]).resolve())
        return {"env_vars": env}

    def run(self, jobs: dict[str, dict], task: Task, store_root: str | None, on_result: OnResult) -> dict[str, dict]:
        if store_root is None:
            raise ValueError("executor 'ray' needs a store (store=False was given): its tasks write their results "
                             "there and resume from its checkpoints")
        ray = require_ray()
        from ...config import Config, ConfigError
        from ...store import Store

        if self.gpus_per_run > 0:  # a run given a GPU trains on it, unless its configuration names a device
            jobs = {job: {"device": "cuda", **cfg} for job, cfg in jobs.items()}
        on_gpu = [cfg for cfg in jobs.values() if str(cfg.get("device", "cpu")).startswith("cuda")]
        if on_gpu and not self.gpus_per_run:
            raise ValueError("gpus_per_run must be > 0 (e.g. 0.25: four runs share a GPU) for runs with "
                             f"device={on_gpu[0]['device']!r}; it is 0")
        store_root = str(Path(store_root).resolve())
        store = Store(store_root)
        results: dict[str, dict] = {}
        pending: dict[str, tuple[dict, str | None]] = {}
        for job, cfg in jobs.items():  # read from the store, or refused for its configuration, here
            try:
                key = store.key(Config.from_dict(cfg))
            except ConfigError as err:
                if cfg in on_gpu and not _cuda_here():  # a head node without a GPU: the worker checks it
                    pending[job] = (cfg, None)
                    continue
                results[job] = {"status": "failed", "note": f"failed: ConfigError: {err}"}
                on_result(job, results[job])
                continue
            if store.load_result(key) is not None:
                results[job] = task(cfg, store_root)
                on_result(job, results[job])
            else:
                pending[job] = (cfg, key)
        if not pending:
            return results
        started = not ray.is_initialized()
        if started:  # connected (or started) for this grid, and let go after it: a process killed while
            # connected (a notebook kernel at the end of a regeneration) would print Ray's crash report
            ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
        fresh = self.gpus_per_run > 0
        remote = ray.remote(max_calls=1)(_ray_task_fresh_worker) if fresh else ray.remote(_ray_task)
        options = {"num_cpus": self.cpus_per_run, "num_gpus": self.gpus_per_run, "max_retries": self.max_retries,
                   "retry_exceptions": False, "runtime_env": self.runtime_env()}
        refs = {}
        for job, (cfg, key) in pending.items():
            refs[remote.options(**options).remote(task, cfg, store_root, self.fault)] = job
            self.submitted.append(key)
        try:
            waiting = list(refs)
            while waiting:
                done, waiting = ray.wait(waiting, num_returns=1)
                for ref in done:
                    try:
                        results[refs[ref]] = ray.get(ref)
                    except Exception as err:  # noqa: BLE001 -- retries exhausted: recorded, the grid goes on
                        results[refs[ref]] = {"status": "failed", "note": f"failed: {type(err).__name__}: "
                                                                          f"{str(err).strip().splitlines()[0]}"}
                    on_result(refs[ref], results[refs[ref]])
        except BaseException:
            for ref in waiting:
                ray.cancel(ref, force=True)
            raise
        finally:
            if started:
                ray.shutdown()
        return results

