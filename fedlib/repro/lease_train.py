"""A GPU lease on the device: the measuring minute (the per-round time of each engine, precision and layout, then
how many runs share the device best) and the queue trained packed until the minutes run out."""

from __future__ import annotations

import math
import os
import platform
import time
import warnings

from .lease_queue import ENGINES, Job, as_trained

__all__ = ["measure", "best_share", "train", "device_name", "SHARE_ROUNDS"]

#: Rounds each run of a measured pack trains: enough for the k runs to overlap after their serialised
#: setups (the 2026-11-26 lease measured 3-round packs that never overlapped: 2.26 rounds/s for 2 runs
#: that then trained at 1.1 together).
SHARE_ROUNDS = 6


# ------------------------------------------------------------------------------- measure and train
def device_name(device: str) -> str:
    import torch

    if device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(torch.device(device))} (torch {torch.__version__}, CUDA {torch.version.cuda})"
    return f"CPU {platform.processor() or platform.machine()}, {os.cpu_count()} cores (torch {torch.__version__})"


def _round_seconds(cfg: dict, rounds: int = 2) -> float:
    """Seconds of one round of ``cfg`` on its device (the best of ``rounds`` after one warm-up round)."""
    import torch

    from ..config import Config
    from ..experiment import prepare
    from ..precision import precision_scope
    from ..simulation import run_round, single_thread

    config = Config.from_dict(cfg)
    exp = prepare(config).data_on()
    state, best = exp.initial_state(), math.inf
    sync = torch.cuda.synchronize if config.device.startswith("cuda") else (lambda: None)
    with single_thread(), precision_scope(config.precision, config.device), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(1, rounds + 2):
            sync()
            t0 = time.perf_counter()
            state = run_round(exp, state, r).state
            sync()
            if r > 1:
                best = min(best, time.perf_counter() - t0)
    return best


def measure(cfg: dict, *, precisions, shares=(1, 2, 4, 8), budget_s: float = 60.0, store_root=None,
            pack: str = "streams", log=print, engines=(), memory_formats=()) -> dict:
    """On ``cfg``'s device: seconds a round of each engine × precision × layout the lease may choose (``engines``
    × ``precisions`` the device has × ``memory_formats``), then, for the record, of the other engines and
    precisions in the first layout, then the summed rounds/s of packs of k copies (different seeds) of ``cfg``
    for k in ``shares``, until ``budget_s`` is spent.  A row whose engine compiles first
    (:data:`~fedlib.repro.run.pack.FIRST_ROUND_EXTRA_S`) starts only where its compile fits what is left.
    Returns ``{"rounds": [...], "shares": [...], "best": {...}}``: ``best`` is the fastest allowed engine,
    precision and layout (none timed: the first the device has), its ``round_s`` (None if untimed) and the
    ``slots`` to train with (:func:`best_share`)."""
    import tempfile

    from ..config import Config
    from ..precision import CUDA_ONLY, PRECISIONS
    from ..store import Store
    from .run.pack import FIRST_ROUND_EXTRA_S, pack_rate, run_pack

    t0, out = time.perf_counter(), {"rounds": [], "shares": []}
    device = cfg["device"]
    here = [p for p in PRECISIONS if device.startswith("cuda") or p not in CUDA_ONLY]
    formats = list(memory_formats) or [cfg.get("memory_format", "model")]
    # the queue's allowed engines, precisions and layouts first; the other engines and precisions on a GPU only,
    # for the record (a compile takes seconds to a minute, which a CPU's short measuring would overrun)
    others = [e for e in ENGINES if e not in engines] if device.startswith("cuda") or not engines else []
    allowed = [(e, p, f) for e in engines for p in precisions if p in here for f in formats]
    record = [(e, p, formats[0]) for e in [*engines, *others] for p in here if (e, p, formats[0]) not in allowed]
    for engine, precision, layout in [*allowed, *record]:
        row = {"engine": engine, "precision": precision, "memory_format": layout}
        spent = time.perf_counter() - t0
        if spent > budget_s:
            row["note"] = "not measured: the measuring minute was spent"
        elif spent + FIRST_ROUND_EXTRA_S.get(engine, 0.0) > budget_s:
            row["note"] = f"not measured: its compile (≈ {FIRST_ROUND_EXTRA_S[engine]:g} s) would overrun the minute"
        else:
            try:
                row["round_s"] = _round_seconds({**cfg, "engine": engine, "precision": precision,
                                                 "memory_format": layout})
            except Exception as err:  # noqa: BLE001 -- a precision a device lacks: recorded
                row["note"] = f"failed: {type(err).__name__}: {err}"
        log(f"measure: {engine} {precision} {layout}: {row.get('round_s', row.get('note'))}")
        out["rounds"].append(row)
    timed = [r for r in out["rounds"]
             if "round_s" in r and (r["engine"], r["precision"], r["memory_format"]) in allowed]
    if not timed and not engines:  # nothing allowed named: the fastest of the queue's precisions, any engine
        timed = [r for r in out["rounds"] if "round_s" in r and r["precision"] in precisions]
    chosen = [p for p in precisions if p in here]
    best = min(timed, key=lambda r: r["round_s"]) if timed else {"engine": cfg.get("engine", "vectorized"),
                                                                  "precision": chosen[0] if chosen else "float32",
                                                                  "memory_format": formats[0]}
    setting = {k: best[k] for k in ("engine", "precision", "memory_format")}
    out["best"] = {**setting, "round_s": best.get("round_s")}
    mode = pack if pack == "processes" else "streams" if device.startswith("cuda") else "turns"
    for k in shares:
        if time.perf_counter() - t0 > budget_s:
            out["shares"].append({"k": k, "note": "not measured: the measuring minute was spent"})
            continue
        configs = [Config.from_dict({**cfg, **setting, "rounds": SHARE_ROUNDS, "seed": 1000 + i,
                                     "eval_every": SHARE_ROUNDS, "checkpoint_every": SHARE_ROUNDS})
                   for i in range(k)]
        with tempfile.TemporaryDirectory(dir=store_root) as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = run_pack(configs, Store(tmp), slots=k, mode=mode)
        row, rate = {"k": k, "mode": mode}, pack_rate(runs)
        if any(r.state != "finished" for r in runs):
            row["note"] = "failed: " + "; ".join(r.error.splitlines()[0] for r in runs if r.error)
        elif rate is None:
            row["note"] = f"not measured: the {k} runs never trained at the same time in {SHARE_ROUNDS} rounds"
        else:
            row["rounds_per_s"] = rate
        log(f"measure: {k} sharing: {row.get('rounds_per_s', row.get('note'))}")
        out["shares"].append(row)
    out["best"]["slots"] = best_share(out["shares"])
    out["seconds"] = time.perf_counter() - t0
    return out


def best_share(shares: list[dict], tolerance: float = 0.1) -> int:
    """The pack size to train with: the smallest k whose summed rounds/s is within ``tolerance`` of the
    best measured (1 where none was measured).  A larger pack that is no faster only finishes its runs
    later, and a lease cut short keeps finished runs, not half-trained ones."""
    rated = [s for s in shares if s.get("rounds_per_s")]
    if not rated:
        return 1
    top = max(s["rounds_per_s"] for s in rated)
    return min(s["k"] for s in rated if s["rounds_per_s"] >= (1 - tolerance) * top)


def train(jobs: list[Job], store, *, engine: str, precision: str, checkpoint_every: int, slots: int,
          deadline: float, est_round_s: float = 0.0, pack: str = "streams", memory_budget_gb: float | None = None,
          memory_format: str | None = None, log=print) -> list[dict]:
    """Train the queued runs into ``store``, ``slots`` at a time (:func:`fedlib.repro.run.pack.run_pack`; on
    CUDA in the ``pack`` mode, ``streams`` -- one process -- or ``processes``, in turns on a CPU unless
    ``pack`` is ``processes``; methods refused by streams train in turns after the others, runs of another
    precision or engine -- a queue entry's own, or the engine an earlier lease started a run under -- in a pack
    of their own, queue order kept), each stopped at a checkpoint when the next would end after ``deadline``
    (``time.time()``).  Returns one row per job."""
    from ..config import Config
    from .run.pack import DeadlineStop, run_pack, seeds_global_rng

    configs = {i: Config.from_dict(as_trained(j, store, engine, precision, checkpoint_every, memory_budget_gb,
                                              memory_format))
               for i, j in enumerate(jobs) if j.config is not None}
    device = next(iter(configs.values())).device if configs else "cpu"
    shared = [i for i, c in configs.items() if pack == "processes" or not seeds_global_rng(c)]
    first = pack if pack == "processes" else "streams" if device.startswith("cuda") else "turns"
    groups = []  # in queue order; a pack holds one precision and engine: a change of either starts the next pack
    for mode, members in ((first, shared),
                          ("turns", [i for i in configs if i not in shared])):
        for i in members:
            last = configs[groups[-1][1][-1]] if groups else None
            if groups and groups[-1][0] == mode and (last.precision, last.engine) == (configs[i].precision,
                                                                                       configs[i].engine):
                groups[-1][1].append(i)
            else:
                groups.append((mode, [i]))
    stop = DeadlineStop(deadline, max(est_round_s, 1e-3))

    def event(kind: str, run) -> None:
        if kind != "round":
            log(f"{kind}: {jobs[order[run.index]].name} ({run.state}, round {run.round})")

    rows = {i: {**j.label, "state": "not queued", "note": j.note} for i, j in enumerate(jobs) if j.config is None}
    for mode, members in groups:
        if not members:
            continue
        order = members
        runs = run_pack([configs[i] for i in members], store, slots=slots, mode=mode, stop=stop, on_event=event)
        for run in runs:
            i = members[run.index]
            rows[i] = {**jobs[i].label, "state": run.state, "round": run.round, "rounds": run.config.rounds,
                       "wall_s": round(run.wall_s, 1), "key": store.key(run.config), "error": run.error,
                       "s_per_round": (round(sorted(run.round_times[1:])[len(run.round_times[1:]) // 2], 3)
                                       if len(run.round_times) > 1 else None)}
    return [rows[i] for i in sorted(rows)]
