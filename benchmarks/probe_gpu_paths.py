"""Where a FedLC CIFAR-10 round's GPU time goes: one local step of the Table 9 CNN timed along five paths.

Issue 37 asks for CUDA graphs or ``torch.compile`` on the GPU path "kept where the measurement shows
they help".  The lease of 2026-11-26 measured the vectorized engine at 0.95 s a round in float32 (4.3×
the float32 floor) but only 0.61 s in tf32 and 0.56 s in bf16 (20× and 30× their floors): past float32,
something other than arithmetic sets the time.  This probe separates the candidates, on the real model
(``cnn_cifar``, channels-last as registered), with random data of the real shapes:

* ``seq_eager``: one client's SGD step at batch 128, as the sequential engine runs it (launch-bound?);
* ``seq_graph``: the same step replayed from a CUDA graph (what launch overhead costs);
* ``big_eager``: one model's step at batch 20 × 128 (the arithmetic of a stacked step on one set of weights);
* ``vmap_eager``: 20 clients' step stacked as the vectorized engine does (``vmap`` over ``functional_call``:
  each conv a grouped conv), contiguous and channels-last;
* ``vmap_graph``: that stacked step replayed from a CUDA graph;
* ``vmap_compile``: the stacked loss under ``torch.compile`` (time to compile, then per step).

Each is timed in float32, tf32 and (autocast) bf16 where the device has them: warm-up, then the mean of
``--steps`` steps between CUDA events.  ``round_s`` scales a step to a round's 50,000 client samples
(padding and the shrinking prefix of active clients left out): compare it with the lease's measured
round times in ``results_gpu.md``.  Results go to ``--out`` (JSON) after every measurement, so a probe
cut short by its timeout keeps what it measured.

    python benchmarks/probe_gpu_paths.py --out probe.json              # on the GPU (about 40 s)
    python benchmarks/probe_gpu_paths.py --device cpu --steps 2 --clients 2 --batch 8   # a smoke run
    python benchmarks/probe_gpu_paths.py --device meta --no-compile    # dispatch alone: no kernel runs

On the ``meta`` device a step computes shapes only, so its time is the host's dispatch of the step (the
autograd graph, vmap's batching rules, the operator calls), what a GPU step costs at least when the GPU
waits on its host: on this shared 2-core EPYC (2026-11-26), 7-8.5 ms for 20, 5 or 1 stacked clients with one
other job running, 17-20 ms under a heavier load (``results_gpu.md``, "The time outside the step").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.func import functional_call, vmap

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.models import build_model, memory_format  # noqa: E402

ROUND_SAMPLES = 50_000  # FedLC Table 1 CIFAR-10: 20 clients, all each round, E = 1
LR = 0.01


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn, device: str, steps: int, warmup: int = 3) -> float:
    """Mean seconds of ``fn()`` over ``steps`` calls after ``warmup`` calls."""
    for _ in range(warmup):
        fn()
    _sync(device)
    if device.startswith("cuda"):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / steps
    t0 = time.perf_counter()
    for _ in range(steps):
        fn()
    return (time.perf_counter() - t0) / steps


def _graphed(step, device: str):
    """``step`` captured once in a CUDA graph (after warm-up on a side stream); returns its replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            step()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    return graph.replay


def _autocast(precision: str, device: str):
    if device == "meta":  # shapes only: no autocast (and nothing to round)
        return contextlib.nullcontext()
    if precision == "bf16":
        return torch.autocast(torch.device(device).type, dtype=torch.bfloat16, cache_enabled=False)
    return torch.autocast(torch.device(device).type, enabled=False)


def _plain_step(net, x, y, precision, device):
    params = [p for p in net.parameters()]

    def step():
        with _autocast(precision, device):
            loss = F.cross_entropy(net(x), y)
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            torch._foreach_add_(params, grads, alpha=-LR)
    return step


def _stacked_step(net, stacked, x, y, precision, device, compiled=False):
    def client_loss(p, xb, yb):
        return F.cross_entropy(functional_call(net, p, (xb,)), yb)

    batched = vmap(client_loss)
    if compiled:
        batched = torch.compile(batched)
    keys, values = list(stacked), list(stacked.values())

    def step():
        with _autocast(precision, device):
            losses = batched(dict(zip(keys, values)), x, y)
        grads = torch.autograd.grad(losses.sum(), values)
        with torch.no_grad():
            torch._foreach_add_(values, list(grads), alpha=-LR)
    return step


def probe(device: str, clients: int, batch: int, steps: int, out: Path | None, budget_s: float,
          compile_: bool = True) -> list[dict]:
    rows: list[dict] = []
    t_start = time.perf_counter()
    cuda = device.startswith("cuda")
    precisions = ["float32", "tf32", "bf16"] if cuda else ["float32"]
    shape = (3, 32, 32)
    fmt = memory_format("cnn_cifar", shape)
    torch.manual_seed(0)
    net = build_model("cnn_cifar", 10, shape).to(device).to(memory_format=fmt)
    for p in net.parameters():
        p.requires_grad_(True)

    def images(n, layout):
        return torch.randn(n, *shape, device=device).contiguous(memory_format=layout)

    def record(path, precision, layout, step_s, samples, extra=None):
        row = {"path": path, "precision": precision, "layout": layout, "step_ms": round(step_s * 1e3, 3),
               "samples_per_step": samples, "round_s": round(step_s * ROUND_SAMPLES / samples, 3), **(extra or {})}
        rows.append(row)
        print(json.dumps(row), flush=True)
        if out is not None:
            out.write_text(json.dumps({"device": torch.cuda.get_device_name() if cuda else "cpu",
                                       "torch": torch.__version__, "clients": clients, "batch": batch,
                                       "steps": steps, "rows": rows}, indent=1))

    def fail(path, precision, layout, err):
        rows.append({"path": path, "precision": precision, "layout": layout,
                     "note": f"failed: {type(err).__name__}: {str(err).splitlines()[0][:200]}"})
        print(json.dumps(rows[-1]), flush=True)

    y1 = torch.randint(0, 10, (batch,), device=device)
    yb = torch.randint(0, 10, (clients * batch,), device=device)
    ys = yb.view(clients, batch)
    layouts = {"channels_last": fmt, "contiguous": torch.contiguous_format}
    for precision in precisions:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"
        torch.backends.cudnn.benchmark = False
        x1, xb = images(batch, fmt), images(clients * batch, fmt)
        record("seq_eager", precision, "channels_last", _timed(_plain_step(net, x1, y1, precision, device),
                                                               device, steps * clients), batch)
        if cuda:
            try:
                replay = _graphed(_plain_step(net, x1, y1, precision, device), device)
                record("seq_graph", precision, "channels_last", _timed(replay, device, steps * clients), batch)
            except Exception as err:  # noqa: BLE001 -- recorded, the probe goes on
                fail("seq_graph", precision, "channels_last", err)
        record("big_eager", precision, "channels_last", _timed(_plain_step(net, xb, yb, precision, device),
                                                               device, steps), clients * batch)
        for name, layout in layouts.items():
            if name == "contiguous" and precision != "float32" and not cuda:
                continue
            stacked = {k: v.detach().unsqueeze(0).repeat(clients, *[1] * v.ndim).requires_grad_(True)
                       for k, v in net.named_parameters()}
            xs = images(clients * batch, layout).view(clients, batch, *shape)
            if name == "channels_last":
                xs = torch.stack([images(batch, layout) for _ in range(clients)])
            record("vmap_eager", precision, name, _timed(_stacked_step(net, stacked, xs, ys, precision, device),
                                                         device, steps), clients * batch)
            if cuda:
                try:
                    replay = _graphed(_stacked_step(net, stacked, xs, ys, precision, device), device)
                    record("vmap_graph", precision, name, _timed(replay, device, steps), clients * batch)
                except Exception as err:  # noqa: BLE001
                    fail("vmap_graph", precision, name, err)
        if time.perf_counter() - t_start > budget_s:
            print(f"probe: {budget_s:g} s spent, stopping after {precision}", flush=True)
            return rows
    if compile_:
        for precision in precisions[:2]:
            torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = precision == "tf32"
            stacked = {k: v.detach().unsqueeze(0).repeat(clients, *[1] * v.ndim).requires_grad_(True)
                       for k, v in net.named_parameters()}
            xs = torch.stack([images(batch, fmt) for _ in range(clients)])
            try:
                step = _stacked_step(net, stacked, xs, ys, precision, device, compiled=True)
                t0 = time.perf_counter()
                step()
                _sync(device)
                compile_s = time.perf_counter() - t0
                record("vmap_compile", precision, "channels_last", _timed(step, device, steps), clients * batch,
                       {"compile_s": round(compile_s, 1)})
            except Exception as err:  # noqa: BLE001
                fail("vmap_compile", precision, "channels_last", err)
            if time.perf_counter() - t_start > budget_s:
                break
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--budget-s", type=float, default=60.0, help="stop starting new precisions after this")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    for name in ("clients", "batch", "steps"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be >= 1, got {getattr(a, name)}")
    probe(a.device, a.clients, a.batch, a.steps, a.out, a.budget_s, compile_=not (a.no_compile or a.device == "meta"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
