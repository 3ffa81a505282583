"""What a GPU lease would do, found here before it: ``--check`` (every distinct queued configuration validated
as the lease trains it, then one tiny round on the CPU and one on the meta device) and ``--dry-run``'s plan (what
a lease of some minutes would train, from the cost model and what the store holds)."""

from __future__ import annotations

import json
import math
import time
import warnings

from .lease_queue import Job, as_trained, with_lease
from .run.tiny import tiny_config  # (a carry's check trains it too: fedlib.repro.carry)

__all__ = ["check", "plan"]


# ------------------------------------------------------------------------------ --check and --dry-run
def _meta_round(tiny: dict) -> str:
    """One round with the data and the parameters on PyTorch's ``meta`` device: ``"ok"``, ``"reached a host
    read"`` (a meta tensor cannot be read; every device step before it matched), or raises a device mismatch."""
    import torch

    from ..config import Config
    from ..experiment import prepare
    from ..simulation import run_round

    cfg = Config.from_dict(tiny)
    exp = prepare(cfg).data_on("meta")
    state = exp.initial_state()
    state = state.replace(params={k: v.to("meta") for k, v in state.params.items()})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_round(exp, state, 1)
    except (RuntimeError, NotImplementedError, ValueError, TypeError, IndexError) as err:
        text = str(err)
        if ("device" in text and "meta" in text and ("expected" in text.lower() or "same device" in text)) or \
                ("cpu" in text and "meta" in text):
            raise RuntimeError(f"device mismatch on the meta device: {text.splitlines()[0]}") from err
        return "reached a host read"
    del torch
    return "ok"


def check(jobs: list[Job], settings: dict, *, log=print) -> list[dict]:
    """Every distinct queued configuration: validated as the lease trains it (on its device, each allowed
    engine, precision and layout), then one round of :func:`tiny_config` on the CPU under each allowed engine in
    each allowed layout, and one on the meta device.
    Returns one row per configuration (``ok`` False with the error where something failed)."""
    from ..config import Config
    from ..simulation import simulate

    rows, seen = [], set()
    for job in jobs:
        if job.config is None:
            continue
        shape = json.dumps({k: job.config.get(k) for k in ("dataset", "model", "method", "partition")}, sort_keys=True)
        if shape in seen:
            continue
        seen.add(shape)
        row = {"run": job.name, "method": job.config.get("method"), "dataset": job.config.get("dataset"), "ok": True}
        t0 = time.perf_counter()
        try:
            formats = settings["memory_formats"]
            for engine in settings["engines"]:
                for precision in settings["precisions"]:
                    for layout in formats:
                        Config.from_dict(with_lease(job.config, engine, precision, settings["checkpoint_every"],
                                                    settings.get("memory_budget_gb"), layout))
            tiny = tiny_config(job.config)
            # every engine the lease may choose trains the tiny round here (a compiled one compiles too), in every
            # layout: the lease may pair any engine with any layout (a queue entry's own engine with the layout the
            # measuring minute chose)
            engines = list(dict.fromkeys([tiny.get("engine", "vectorized"), *settings["engines"]]))
            for engine, layout in [(e, f) for f in formats for e in engines]:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = simulate(Config.from_dict({**tiny, "engine": engine, "memory_format": layout}),
                                   store=None, progress=False)
                row.setdefault("tiny_accuracy", out["summary"]["final_accuracy"])
                row.setdefault("engines", []).append(engine if layout == "model" else f"{engine} {layout}")
            row["meta"] = _meta_round(tiny)
        except Exception as err:  # noqa: BLE001 -- reported per configuration
            row.update(ok=False, error=f"{type(err).__name__}: {err}")
        row["s"] = round(time.perf_counter() - t0, 1)
        log(f"{'ok  ' if row['ok'] else 'FAIL'} {row['run']}: {row.get('error') or row.get('meta')} ({row['s']} s)")
        rows.append(row)
    return rows


def plan(jobs: list[Job], minutes: float, *, slots: int = 1, measure_s: float = 60.0, reserve_s: float = 45.0,
         profile: str = "paper", engine: str = "vectorized", precision: str = "float32", checkpoint_every: int = 5,
         store=None, memory_budget_gb: float | None = None, memory_format: str | None = None) -> list[dict]:
    """What a lease of ``minutes`` would train: the queued runs in order on ``slots`` sharing the device, each
    taking the cost model's GPU estimate (a run alone, in ``precision``) × ``slots``: packs were measured no
    faster than one run alone (2026-11-26, ``benchmarks/results_gpu.md``), plus its engine's first-round compile
    (:data:`fedlib.repro.run.pack.FIRST_ROUND_EXTRA_S`); a run without an estimate takes the
    rest of the lease in its slot.  With ``store`` (what the lease resumes from): a run finished there is
    skipped, one with a checkpoint costs only its rounds left.  Rows: run, est. GPU-min, start and end minute,
    and ``finishes`` / ``reaches ≈ p %`` / ``not started`` / ``finished in the store``."""
    from ..config import Config
    from .run.gpu_runs import read_checkpoint
    from .run.pack import FIRST_ROUND_EXTRA_S
    from .spec.paper import get_paper

    horizon = minutes * 60 - measure_s - reserve_s
    free = [measure_s] * slots
    rows = []
    for job in jobs:
        if job.config is None:
            rows.append({"run": job.name, "est_gpu_min": None, "outcome": job.note or "not run"})
            continue
        cfg = as_trained(job, store, engine, precision, checkpoint_every, memory_budget_gb, memory_format)
        cost = get_paper(job.label["paper"]).profile(profile).cost
        est = cost.seconds(cfg, gpu=True) if cost is not None else None
        done, resumes = 0, ""
        if store is not None:
            key = store.key(Config.from_dict(cfg))
            if store.load_result(key) is not None:
                rows.append({"run": job.name, "est_gpu_min": 0.0, "outcome": "finished in the store"})
                continue
            ckpt = read_checkpoint(store.entry(key))  # read only: a GPU's checkpoint, read on a CPU
            done = int(((ckpt or {}).get("stage_state") or {}).get("round", 0))
            resumes = f"resumes at round {done}: " if done else ""
            if est is not None and done:
                est *= max(0.0, 1.0 - done / int(cfg.get("rounds", 400)))
        if est is not None:  # a compiled run's first round compiles (a resumed one too: a new process)
            est += FIRST_ROUND_EXTRA_S.get(cfg["engine"], 0.0)
        est = None if est is None else est * slots
        slot = min(range(slots), key=lambda s: free[s])
        start = free[slot]
        if start >= measure_s + horizon:
            rows.append({"run": job.name, "est_gpu_min": None if est is None else est / 60, "start_min": None,
                         "outcome": "not started"})
            continue
        end = math.inf if est is None else start + est
        free[slot] = end
        cut = measure_s + horizon
        left = 1.0 - done / int(cfg.get("rounds", 400))
        outcome = resumes + ("finishes" if end <= cut else "reaches ? % (GPU time not measured)" if est is None
                             else f"reaches ≈ {100 * (1 - left + left * (cut - start) / est):.0f} %")
        rows.append({"run": job.name, "est_gpu_min": None if est is None else est / 60, "start_min": start / 60,
                     "end_min": None if math.isinf(end) else end / 60, "outcome": outcome})
    return rows
