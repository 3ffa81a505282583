"""Where a whole engine round's time goes on a GPU: the round the lease trains, under ``torch.profiler``.

The step probe (``probe_gpu_paths.py``) timed the bare stacked step: 20.0 ms in TF32 against 59.1 in float32,
a ratio of 0.34.  The lease timed the vectorized engine's whole FedLC CIFAR-10 round: 0.612 s in TF32 against
0.952 in float32, a ratio of 0.64.  Something in the round does not speed up with the arithmetic.  What the
CPU can say (``results_gpu.md``, "The time outside the step"):

* a round has as many local steps as its largest client has batches: 32 for seed 0 (37 for seed 1), where
  19.5 steps of all 20 clients would hold its 50,000 samples; in 11 of the 32 at most 5 clients are active;
* one stacked step's dispatch, with no arithmetic at all (the meta device), takes 7-8.5 ms on this 2-core CPU.

If every step pays its dispatch, 32 steps × ~10 ms is ~0.3-0.45 s a round whatever the precision.  This
script measures it on the device.  It times rounds of the queue's first setting (FedLC Table 1, CIFAR-10
D(0.5), FedAvg, seed 0) in each precision, then profiles ``--profiled`` rounds.  It reports, per round:

* ``round_s``: wall time, the mean of the timed rounds after ``--warmup``;
* ``kernel_s``: the GPU's busy time (the sum of the device's own events: kernels, copies, memsets);
* ``busy``: ``kernel_s / round_s``, where 1 means the GPU never waits on the host;
* ``steps``, ``client_steps``: the local steps and the clients active over them (from the partition);
* ``host_ms_per_step``: ``(round_s − kernel_s) / steps``, the time a step the GPU waits;
* ``syncs``: the host synchronisations (device-to-host copies and stream or device synchronisations);
* ``peak_gib``: the GPU memory the rounds held at most, against the run's memory budget;
* ``top_device`` and ``top_host``: the operators with the most own device and host time.

Each variant (``--variants`` ENGINE@GB[:LAYOUT]: an engine, a memory budget and, optionally, the layout
``contiguous`` instead of the model's channels-last) gets these rows in each precision, with ``groups``: the
local steps of each group of clients trained one after another.  The default memory budget
(4 GB) stacks this setting's 20 clients in groups of 5 on a GPU, 89 steps a round (32 + 22 + 20 + 15 for seed 0);
24 GB stacks all 20, 32 steps.  The compiled engine runs the stacked loss as one compiled graph: if the host
time a step is dispatch, it shrinks there.  ``:contiguous`` trains the CNN in NCHW: under ``vmap`` its
convolutions are grouped ones, which cuDNN ran with layout conversions (5,104 a round in channels-last on the
third lease).

With ``--processes K`` it then trains K copies of the setting in K processes at once (each its own CUDA
context, the GPU time-sliced between them) and reports their rounds a second together against one alone
(``shared``).  Where a round mostly waits on its host, K processes dispatch on K host cores and the GPU
fills: that is how runs would share a GPU, where the lease's one-process packs (CUDA streams, one Python
thread dispatching) measured no gain.

Results go to ``--out`` (JSON) after each precision, so a run cut short keeps what it measured.

    python benchmarks/profile_gpu_round.py --out round_profile.json --processes 2   # on the GPU (about 2 min)
    python benchmarks/profile_gpu_round.py --smoke --out /tmp/p.json        # a CPU smoke run (tiny data)
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SMOKE = {"max_train_samples": 640, "max_test_samples": 64, "num_clients": 4, "batch_size": 32}


def round_config(device: str, precision: str, smoke: bool = False, engine: str = "vectorized",
                 memory_budget_gb: float = 4.0, memory_format: str = "model") -> dict:
    """The lease queue's first setting (FedLC Table 1, CIFAR-10 D(0.5), FedAvg, seed 0) in ``precision`` on
    ``engine`` under ``memory_budget_gb`` in layout ``memory_format``; with ``smoke``, on tiny data (the model
    and method unchanged)."""
    from fedlib.repro.budget.cell_jobs import cell_jobs

    job, = cell_jobs("fedlc", "table1", rows=["fedavg"], columns=["cifar10_beta0.5"], device="cuda")
    cfg = {**job["config"], "device": device, "precision": precision, "seed": 0, "engine": engine,
           "memory_budget_gb": float(memory_budget_gb), "memory_format": memory_format}
    return {**cfg, **SMOKE} if smoke else cfg


def _taus(exp) -> list[int]:
    """Each client's local steps τ_k in a round of ``exp`` (its batches × E), largest first."""
    c = exp.config
    epochs = int(c.local_epochs or 1)
    return sorted((epochs * math.ceil(len(ix) / c.batch_size) for ix in exp.client_indices), reverse=True)


def steps_of(exp) -> tuple[int, int]:
    """``(steps, client_steps)`` of one round of ``exp``: the local steps (its largest client's batches × E)
    and the sum over them of the clients active (every client samples; FedLC's Table 1 takes them all)."""
    taus = _taus(exp)
    return taus[0], sum(taus)


def groups_of(exp) -> list[int]:
    """The local steps of each group of clients the vectorized engines train one after another in a round of
    ``exp`` on its device (:func:`fedlib.vectorized.group_size` under its memory budget; clients by τ_k
    descending): their sum is the round's steps one after another."""
    from fedlib.vectorized import group_size

    c, taus = exp.config, _taus(exp)
    params = exp.initial_state().params
    x = exp.data.train_x[:1].to(c.device)
    size, _ = group_size(exp.model, {k: v.to(c.device) for k, v in params.items()}, x, c.batch_size, taus[0],
                         c.memory_budget_gb)
    return [taus[i] for i in range(0, len(taus), size)]


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _is_sync(name: str) -> bool:
    return any(s in name for s in ("Synchronize", "DtoH", "item", "_local_scalar_dense"))


def profile_round(cfg: dict, *, warmup: int = 1, timed: int = 2, profiled: int = 1) -> dict:
    """Time ``timed`` rounds of ``cfg`` after ``warmup`` rounds, then profile ``profiled`` more."""
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    from fedlib.client import client_trainer
    from fedlib.config import Config
    from fedlib.experiment import prepare
    from fedlib.precision import precision_scope
    from fedlib.simulation import run_round

    config = Config.from_dict(cfg)
    device = config.device
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    with precision_scope(config.precision, device):
        exp = prepare(config).data_on()  # where simulate trains: on the device
        state = exp.initial_state()
        trainer = client_trainer(config, exp.algorithm)
        r = 0
        for _ in range(warmup):
            state = run_round(exp, state, r, trainer).state
            r += 1
        _sync(device)
        times = []
        for _ in range(timed):
            t0 = time.perf_counter()
            state = run_round(exp, state, r, trainer).state
            _sync(device)
            times.append(time.perf_counter() - t0)
            r += 1
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
        with profile(activities=activities) as prof:
            for _ in range(profiled):
                state = run_round(exp, state, r, trainer).state
                r += 1
            _sync(device)
    events = prof.key_averages()

    def own_device(e) -> float:  # µs
        return float(getattr(e, "self_device_time_total", getattr(e, "self_cuda_time_total", 0.0)) or 0.0)

    # the device's own events (kernels, copies, memsets) only: an operator's self device time is its kernels'
    # again, and summing both counted each kernel twice (the 2026-11-26 H100 profile's kernel_s and busy)
    kernels = [e for e in events if getattr(e, "device_type", None) == DeviceType.CUDA]
    kernel_s = sum(own_device(e) for e in kernels) / 1e6 / profiled if cuda else None
    steps, client_steps = steps_of(exp)
    round_s = sum(times) / len(times)
    top = sorted(events, key=own_device, reverse=True)[:12] if cuda else []
    host = sorted(events, key=lambda e: e.self_cpu_time_total, reverse=True)[:12]
    return {"engine": config.engine, "memory_budget_gb": config.memory_budget_gb, "precision": config.precision,
            "memory_format": config.memory_format, "round_s": round(round_s, 4), "groups": groups_of(exp),
            "rounds_timed": [round(t, 4) for t in times],
            "kernel_s": None if kernel_s is None else round(kernel_s, 4),
            "busy": None if kernel_s is None else round(kernel_s / round_s, 3),
            "steps": steps, "client_steps": client_steps, "clients": len(exp.client_indices),
            "host_ms_per_step": None if kernel_s is None else round(1e3 * (round_s - kernel_s) / steps, 2),
            "syncs": sum(e.count for e in events if _is_sync(e.key)) // profiled,
            "peak_gib": round(torch.cuda.max_memory_allocated() / 2 ** 30, 2) if cuda else None,
            "top_device": [{"op": e.key, "ms": round(own_device(e) / 1e3 / profiled, 2), "calls": e.count // profiled}
                           for e in top],
            "top_host": [{"op": e.key, "ms": round(e.self_cpu_time_total / 1e3 / profiled, 2),
                          "calls": e.count // profiled} for e in host]}


def _timed_rounds(cfg: dict, timed: int, start, out) -> None:
    """A child of :func:`shared_rounds`: one warm-up round, then (after ``start``, a barrier every child
    reaches) ``timed`` rounds; puts ``(perf_counter at the start, [round end times])`` on ``out``."""
    from fedlib.client import client_trainer
    from fedlib.config import Config
    from fedlib.experiment import prepare
    from fedlib.precision import precision_scope
    from fedlib.simulation import run_round, single_thread

    config = Config.from_dict(cfg)
    with single_thread(), precision_scope(config.precision, config.device):
        exp = prepare(config).data_on()  # where simulate trains: on the device
        trainer = client_trainer(config, exp.algorithm)
        state = run_round(exp, exp.initial_state(), 0, trainer).state
        _sync(config.device)
        start.wait()
        t0, ends = time.perf_counter(), []
        for r in range(1, timed + 1):
            state = run_round(exp, state, r, trainer).state
            _sync(config.device)
            ends.append(time.perf_counter())
    out.put((t0, ends))


def shared_rounds(cfg: dict, processes: int, timed: int = 3) -> dict:
    """``processes`` copies of ``cfg`` trained at once, one a process: their rounds a second together, from the
    common start to the last round's end (``rounds_per_s``), and each process's mean round."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    start, out = ctx.Barrier(processes), ctx.Queue()
    children = [ctx.Process(target=_timed_rounds, args=(cfg, timed, start, out)) for _ in range(processes)]
    for c in children:
        c.start()
    got = [out.get(timeout=900) for _ in children]
    for c in children:
        c.join()
    t0, t1 = min(g[0] for g in got), max(g[1][-1] for g in got)
    return {"processes": processes, "rounds_per_s": round(processes * timed / (t1 - t0), 3),
            "round_s_each": [round((g[1][-1] - g[0]) / timed, 4) for g in got]}


def parse_variant(text: str) -> tuple[str, float, str]:
    """``ENGINE@GB[:LAYOUT]`` as ``(engine, memory budget, layout)``; the layout defaults to the model's."""
    from fedlib.config import ENGINES
    from fedlib.models import LAYOUTS

    head, _, layout = text.partition(":")
    engine, at, budget = head.partition("@")
    layout = layout or "model"
    if not at or engine not in ENGINES or layout not in LAYOUTS:
        raise ValueError(f"{text!r}: the engine must be one of {ENGINES}, the layout one of {LAYOUTS}")
    return engine, float(budget), layout


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--precisions", default=None, help="comma-separated (default: float32,tf32 on CUDA, float32 on a CPU)")
    ap.add_argument("--variants", default=None,
                    help="comma-separated ENGINE@GB[:LAYOUT] (engine, memory budget, optionally the layout "
                         "'contiguous') profiled in each precision (default: vectorized@4,vectorized@4:contiguous,"
                         "compiled@4:contiguous on CUDA, where the compiled engine's warm-up round compiles, seconds "
                         "to a minute; vectorized@4 on a CPU); --processes shares the last")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--timed", type=int, default=2)
    ap.add_argument("--profiled", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="tiny data: a check that it runs (a CPU, CI)")
    ap.add_argument("--processes", type=int, default=0, help="then K copies at once in K processes (0: not)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    if min(a.warmup, a.timed - 1, a.profiled - 1, a.processes) < 0 or a.processes == 1:
        ap.error(f"--warmup and --processes must be ≥ 0 (--processes not 1) and --timed, --profiled ≥ 1, got "
                 f"{a.warmup}, {a.processes}, {a.timed}, {a.profiled}")
    cuda = a.device.startswith("cuda")
    precisions = a.precisions.split(",") if a.precisions else (["float32", "tf32"] if cuda else ["float32"])
    rows = []
    record = {"device": torch.cuda.get_device_name() if cuda else "cpu", "torch": torch.__version__,
              "setting": "fedlc table1 fedavg/cifar10_beta0.5 seed 0" + (" (smoke: tiny data)" if a.smoke else ""),
              "rows": rows}
    text = a.variants or ("vectorized@4,vectorized@4:contiguous,compiled@4:contiguous" if cuda else "vectorized@4")
    try:
        variants = [parse_variant(v) for v in text.split(",")]
    except ValueError as err:
        ap.error(f"--variants takes ENGINE@GB[:LAYOUT],... (e.g. vectorized@24:contiguous), got {text!r}: {err}")
    for engine, budget, layout in variants:
        for precision in precisions:
            try:
                rows.append(profile_round(round_config(a.device, precision, a.smoke, engine, budget, layout),
                                          warmup=a.warmup, timed=a.timed, profiled=a.profiled))
            except Exception as err:  # noqa: BLE001 -- a precision the device lacks: recorded, the others go on
                rows.append({"engine": engine, "memory_budget_gb": budget, "precision": precision,
                             "memory_format": layout, "note": f"failed: {type(err).__name__}: {str(err)[:200]}"})
            print(json.dumps({k: v for k, v in rows[-1].items() if not k.startswith("top")}), flush=True)
            if a.out is not None:
                a.out.write_text(json.dumps(record, indent=1))
    for precision in precisions if a.processes else ():
        engine, budget, layout = variants[-1]
        row = next((r for r in rows if "round_s" in r and (r["precision"], r["engine"], r["memory_budget_gb"],
                                                           r["memory_format"]) == (precision, engine, budget, layout)),
                   None)
        if row is None:
            continue
        try:
            shared = shared_rounds(round_config(a.device, precision, a.smoke, engine, budget, layout), a.processes,
                                   timed=a.timed + 1)
            shared["alone_rounds_per_s"] = round(1 / row["round_s"], 3)
        except Exception as err:  # noqa: BLE001 -- recorded
            shared = {"processes": a.processes, "note": f"failed: {type(err).__name__}: {str(err)[:200]}"}
        row["shared"] = shared
        print(json.dumps({"engine": engine, "memory_budget_gb": budget, "precision": precision, **shared}), flush=True)
        if a.out is not None:
            a.out.write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
