"""A pack: several runs trained at once, each exactly as it would train alone.

On a GPU, runs too small to fill the chip may train faster together (FedLC's CIFAR-10 runs on an H200
did not, in float32: two in one process trained at the rate of one, ``benchmarks/results_gpu.md``;
measure with :func:`pack_rate`).  A pack runs ``slots`` runs at a time, taking the next configuration of
the list as one finishes, in one of three modes:

* ``turns`` -- round-robin: the runs take turns, one round each, so only one run computes at a time.
  Nothing is shared but the loaded data, which no run writes.  Deterministic interleaving; the mode
  for a CPU and the reference for the other.
* ``streams`` -- the runs compute at once, each on its own CUDA stream (on a GPU), so one run's kernels
  fill the gaps of another's.  A run's setup (loading, splitting, seeding the model from the process's
  random generator) is serialised; methods whose training draws from the process's global generator
  (their module declares ``SEEDS_GLOBAL_RNG = True``: :func:`seeds_global_rng`) are refused.
* ``processes`` -- each slot is a process of its own (spawned), training the next configuration of the
  list as it finishes one: its own CUDA context, its own copy of the data, its own host core to dispatch
  from (one Python thread dispatches every stream of a ``streams`` pack).  ``stop`` must be picklable
  (:class:`DeadlineStop`); events arrive when a run ends.

A run's numbers never depend on the pack: every run trains single-threaded in its own scope, the runs
of one pack share one precision (the TF32 switches are process-wide), and a key appears once.
``tests/test_lease.py`` checks a packed run against the same run alone, bit for bit, in both modes.
A run can be stopped at a checkpointed round (``stop``): it resumes from there when trained again.
"""

from __future__ import annotations

import contextlib
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Callable

import torch

__all__ = ["MODES", "seeds_global_rng", "PackRun", "StopRun", "DeadlineStop", "FIRST_ROUND_EXTRA_S", "run_pack",
           "pack_rate"]

MODES = ("turns", "streams", "processes")


def seeds_global_rng(config) -> list[str]:
    """The method tokens of ``config`` whose training (not only their setup) seeds the process's global
    random generator, as their module declares (``SEEDS_GLOBAL_RNG``): never run beside another in
    ``streams`` mode."""
    import importlib

    from ...algorithms import METHODS

    return [t for t in config.method_tokens
            if getattr(importlib.import_module(METHODS[t].module), "SEEDS_GLOBAL_RNG", False)]


class StopRun(Exception):
    """Raised inside a run's round hook to stop it after a checkpoint."""


#: Seconds a run's first round takes beyond its others, by engine: the compiled engine compiles its graphs there
#: (the step probe on an H200 measured 7-18 s a graph; a FedLC CIFAR-10 group of 20 clients compiles up to 5).
FIRST_ROUND_EXTRA_S = {"compiled": 90.0}


@dataclass
class DeadlineStop:
    """``stop`` for a pack that must end by ``deadline`` (``time.time()``): a run stops at a checkpoint when
    its next checkpoint would come after it, by the median of its last five rounds (before its first round:
    the slowest round seen so far, at first ``est_round_s``, plus its engine's :data:`FIRST_ROUND_EXTRA_S`, so
    that a run whose first round compiles does not start with too little time left).  Picklable: a
    ``processes`` pack sends it to each process."""

    deadline: float
    est_round_s: float = 0.0

    def __call__(self, run) -> bool:
        times = run.round_times[1:] or run.round_times
        recent = sorted(times[-5:])
        per_round = recent[len(recent) // 2] if recent else max(self.est_round_s, 1e-3)
        self.est_round_s = max(self.est_round_s, per_round)
        first = 0.0 if run.round_times else FIRST_ROUND_EXTRA_S.get(getattr(run.config, "engine", ""), 0.0)
        return time.time() + first + per_round * run.config.checkpoint_every > self.deadline


@dataclass
class PackRun:
    """One run of a pack: ``state`` is ``finished`` (result stored), ``stopped`` (checkpointed at
    ``round``; resumes there), ``failed`` (``error``) or ``not started`` (stopped before it began)."""

    index: int
    config: object  # fedlib.Config
    state: str = "not started"
    round: int = 0
    round_times: list = field(default_factory=list)  # wall seconds between this run's successive rounds
    round_ends: list = field(default_factory=list)  # time.perf_counter() at the end of each round
    wall_s: float = 0.0
    error: str = ""
    summary: dict | None = None


class _Turns:
    """Round-robin among the pack's slots: a slot computes only while it holds the turn."""

    def __init__(self, slots: int):
        self.cond = threading.Condition()
        self.ring = list(range(slots))
        self.pos = 0

    def wait(self, slot: int) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.ring[self.pos] == slot)

    def give(self, slot: int) -> None:
        with self.cond:
            self.pos = (self.ring.index(slot) + 1) % len(self.ring)
            self.cond.notify_all()

    def leave(self, slot: int) -> None:
        with self.cond:
            i = self.ring.index(slot)
            self.ring.pop(i)
            if self.ring:
                self.pos = (self.pos - 1 if i < self.pos else self.pos) % len(self.ring)
            self.cond.notify_all()


class _Free:
    """``streams`` mode: no turns."""

    def wait(self, slot: int) -> None:
        pass

    give = leave = wait


def _check(configs, mode: str, slots: int, stop=None) -> None:
    from ...store import Store

    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    if isinstance(slots, bool) or not isinstance(slots, int) or slots < 1:
        raise ValueError(f"slots must be an integer ≥ 1, got {slots!r}")
    precisions = {c.precision for c in configs}
    if len(precisions) > 1:
        raise ValueError(f"the runs of a pack must share one precision (process-wide switches), got "
                         f"{sorted(precisions)}")
    keys = [Store("/").key(c) for c in configs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise ValueError(f"a pack trains each configuration once; store key(s) {', '.join(twice)} appear twice")
    if mode == "processes" and stop is not None:
        import pickle

        try:
            pickle.dumps(stop)
        except Exception as err:  # noqa: BLE001 -- a closure, a lambda
            raise ValueError(f"mode='processes' sends stop to each process: it must be picklable "
                             f"(fedlib.repro.run.pack.DeadlineStop), got {stop!r} ({type(err).__name__})") from None
    if mode == "streams":
        bad = sorted({t for c in configs for t in seeds_global_rng(c)})
        if bad:
            raise ValueError(f"mode='streams' cannot pack method token(s) {', '.join(bad)}: their training seeds "
                             "the process's global random generator; use mode='turns'")


def run_pack(configs, store, *, slots: int = 2, mode: str = "turns",
             stop: Callable[[PackRun], bool] | None = None,
             on_event: Callable[[str, PackRun], None] | None = None) -> list[PackRun]:
    """Train ``configs`` (:class:`fedlib.Config`, in priority order) into ``store``, ``slots`` at a time
    in one process.  ``stop(run)`` is asked at each checkpointed round (``round`` a multiple of the run's
    ``checkpoint_every``, not its last; of a method with stages, the round within the stage) and before a run starts: True stops it there (``stopped``; ``not started``).
    ``on_event(event, run)``: ``"start"``, ``"round"``, ``"end"``.  Returns one :class:`PackRun` per
    configuration, in order; a run that raises is ``failed`` and the pack goes on."""
    from ...simulation import simulate

    configs = list(configs)
    _check(configs, mode, slots, stop)
    if mode == "processes":
        return _run_processes(configs, store, slots, stop, on_event or (lambda event, run: None))
    runs = [PackRun(i, c) for i, c in enumerate(configs)]
    slots = min(slots, len(runs)) or 1
    turns = _Turns(slots) if mode == "turns" else _Free()
    setup = threading.Lock()  # streams: one run's setup at a time (it seeds the global generator)
    lock, queue = threading.Lock(), list(runs)
    emit = on_event or (lambda event, run: None)

    def next_run() -> PackRun | None:
        with lock:
            return queue.pop(0) if queue else None

    def train(run: PackRun, slot: int) -> None:
        cfg = run.config
        last = [time.perf_counter()]

        def hook(round_: int, _state) -> None:
            now = time.perf_counter()
            run.round, run.wall_s = round_, run.wall_s + now - last[0]
            run.round_times.append(now - last[0])
            run.round_ends.append(now)
            emit("round", run)
            checkpointed = round_ % cfg.checkpoint_every == 0 and round_ != cfg.rounds  # (the last: the result)
            if checkpointed and stop is not None and stop(run):
                raise StopRun
            turns.give(slot)
            turns.wait(slot)
            last[0] = time.perf_counter()

        experiment = None
        if mode == "streams" and not store.has_result(cfg):
            from ...experiment import prepare

            with setup:
                experiment = prepare(cfg)
        out = simulate(cfg, store=store, progress=False, on_round_end=hook, experiment=experiment)
        run.state, run.summary = "finished", out["summary"]
        run.round = cfg.rounds

    def slot_loop(slot: int) -> None:
        device = None
        try:
            while (run := next_run()) is not None:
                turns.wait(slot)
                if stop is not None and stop(run):
                    turns.give(slot)
                    continue
                device = run.config.device
                emit("start", run)
                t0 = time.perf_counter()
                stream = torch.cuda.Stream(torch.device(device)) if device.startswith("cuda") else None
                try:
                    with torch.cuda.stream(stream) if stream is not None else contextlib.nullcontext():
                        train(run, slot)
                    if stream is not None:
                        stream.synchronize()
                except StopRun:
                    run.state = "stopped"
                except Exception as err:  # noqa: BLE001 -- recorded, the pack goes on
                    run.state, run.error = "failed", f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=6)}"
                run.wall_s = max(run.wall_s, time.perf_counter() - t0)
                emit("end", run)
                turns.give(slot)
        finally:
            turns.leave(slot)

    threads_before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        workers = [threading.Thread(target=slot_loop, args=(s,), name=f"fedlib-pack-{s}") for s in range(slots)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        torch.set_num_threads(threads_before)
    return runs


def _train_alone(index: int, config: dict, store_root: str, stop) -> PackRun:
    """A ``processes`` pack's run, in its process: trained into the store at ``store_root`` as it would train
    alone (:func:`fedlib.simulation.simulate` runs single-threaded), stopped at a checkpoint where ``stop``
    says so."""
    from ...config import Config
    from ...simulation import simulate
    from ...store import Store

    cfg = Config.from_dict(config)
    run = PackRun(index, cfg)
    if stop is not None and stop(run):
        return run
    t0 = last = time.perf_counter()

    def hook(round_: int, _state) -> None:
        nonlocal last
        now = time.perf_counter()
        run.round, run.wall_s = round_, run.wall_s + now - last
        run.round_times.append(now - last)
        run.round_ends.append(now)  # CLOCK_MONOTONIC: the parent compares the processes' ends (pack_rate)
        if round_ % cfg.checkpoint_every == 0 and round_ != cfg.rounds and stop is not None and stop(run):
            raise StopRun
        last = time.perf_counter()

    try:
        out = simulate(cfg, store=Store(store_root), progress=False, on_round_end=hook)
        run.state, run.summary, run.round = "finished", out["summary"], cfg.rounds
    except StopRun:
        run.state = "stopped"
    except Exception as err:  # noqa: BLE001 -- recorded, the pack goes on
        run.state, run.error = "failed", f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=6)}"
    run.wall_s = max(run.wall_s, time.perf_counter() - t0)
    return run


def _run_processes(configs, store, slots: int, stop, emit) -> list[PackRun]:
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    runs = [PackRun(i, c) for i, c in enumerate(configs)]
    with ProcessPoolExecutor(max_workers=min(slots, len(configs)) or 1, mp_context=mp.get_context("spawn")) as pool:
        futures = [pool.submit(_train_alone, i, c.to_dict(), str(store.root), stop) for i, c in enumerate(configs)]
        for i, future in enumerate(futures):  # in priority order (the pool starts them in that order)
            try:
                done = future.result()
                done.config = configs[i]
            except Exception as err:  # noqa: BLE001 -- a process that died: recorded
                done = PackRun(i, configs[i], state="failed", error=f"{type(err).__name__}: {err}")
            runs[i] = done
            if done.state != "not started":
                emit("start", done)
                emit("end", done)
    return runs


def pack_rate(runs) -> float | None:
    """Rounds a second of a whole pack while all its runs trained at once: the round ends that fall in the
    window from the latest first round end to the earliest last one, over the window's length.  A run's
    own round times say nothing of this (in ``turns`` each counts only its own turn; in ``streams`` a
    run's rounds may all pass before the next run has finished its setup).  One run: its rounds after
    the first over their span.  None where the runs never trained at the same time."""
    ends = [list(r.round_ends) for r in runs]
    if not ends or any(len(e) < 2 for e in ends):
        return None
    lo, hi = max(e[0] for e in ends), min(e[-1] for e in ends)
    if hi <= lo:
        return None
    return sum(lo < t <= hi for e in ends for t in e) / (hi - lo)
