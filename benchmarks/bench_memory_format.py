"""Channels-last against contiguous (NCHW) memory format, for every CNN of fedlib.models.

    python benchmarks/bench_memory_format.py           # a few minutes; writes benchmarks/results_memory_format.md
    python benchmarks/bench_memory_format.py --quick   # seconds: proves the script runs; writes nothing

One SGD step (forward, cross-entropy, backward, w <- w - lr*g) on one thread
(``torch.set_num_threads(1)``, as every fedlib run trains), in the two ways the
engines compute it:

* **sequential** -- one client: ``functional_call`` of the ``nn.Module`` with its
  parameter dict, ``autograd.grad``, the update (``fedlib.engine.local_update``'s step);
* **vectorized** -- ``vmap`` of the same over the parameters stacked along a client
  dimension, one backward of the summed losses, the update on the stacked tensors
  (``fedlib.vectorized._train_group``'s step), with as many clients as the engine
  puts in one pass on a CPU (:func:`fedlib.vectorized.group_size`); "1 client/pass"
  means the engine runs that model with the sequential kernels (no vmap).

Channels-last means the 4-D parameters and the input batch in ``torch.channels_last``
(the stacked parameters keep each client's channels-last strides, the stacked inputs
each sample's).  Each variant is timed in turns with the other (process time, the best
of several repetitions), so both see the same interference; the reported figure is
the ratio contiguous time / channels-last time (> 1: channels-last is faster).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch
from torch.func import functional_call, vmap

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.losses import cross_entropy  # noqa: E402
from fedlib.models import MODELS, build_model  # noqa: E402
from fedlib.vectorized import group_size  # noqa: E402

CL = torch.channels_last
# (model, input shape, batch sizes): the quick profiles' batch (16) and the papers' batch
CASES = [
    ("cnn_mnist", (1, 28, 28), (16, 128)),   # FedLC Table 8 (quick: B = 16)
    ("cnn_mnist", (3, 32, 32), (16, 128)),   # FedLC quick and FEDIC quick on CIFAR-10
    ("simple_cnn", (1, 28, 28), (16, 64)),   # FedConcat FMNIST (quick: B = 16)
    ("simple_cnn", (3, 32, 32), (16, 64)),   # FedConcat CIFAR-10
    ("cnn_cifar", (3, 32, 32), (16, 128)),   # FedLC Table 9
    ("convnet", (3, 32, 32), (16, 64)),      # FedABC CIFAR-10
    ("vgg9", (3, 32, 32), (16, 64)),         # FedConcat code's VGG-9
    ("resnet8", (3, 32, 32), (16, 128)),     # FEDIC
    ("resnet18", (3, 32, 32), (16,)),        # FedLC Table 3
    ("concat5_simple_cnn", (3, 32, 32), (16,)),  # FedConcat's final model
]
QUICK_CASES = [("cnn_mnist", (1, 28, 28), (8,)), ("simple_cnn", (3, 32, 32), (8,))]


def to_format(t: torch.Tensor, channels_last: bool) -> torch.Tensor:
    if not channels_last:
        return t.contiguous()
    if t.ndim == 4:
        return t.contiguous(memory_format=CL)
    if t.ndim == 5:  # stacked: each client's / sample's 4-D tensor channels-last
        return torch.stack([v.contiguous(memory_format=CL) for v in t.unbind(0)])
    return t


def sequential_step(model, params, x, y, lr=0.01):
    p = {k: v.detach().requires_grad_(True) for k, v in params.items()}
    loss = cross_entropy(functional_call(model, p, (x,)), y)
    grads = torch.autograd.grad(loss, list(p.values()))
    with torch.no_grad():
        return {k: w - lr * g for (k, w), g in zip(p.items(), grads)}


def vectorized_step(model, stacked, xs, ys, lr=0.01):
    p = {k: v.detach().requires_grad_(True) for k, v in stacked.items()}
    losses = vmap(lambda q, xb, yb: cross_entropy(functional_call(model, q, (xb,)), yb))(p, xs, ys)
    grads = torch.autograd.grad(losses.sum(), list(p.values()))
    with torch.no_grad():
        return {k: w - lr * g for (k, w), g in zip(p.items(), grads)}


def best_pair(step_a, step_b, budget_s: float, min_reps: int = 3, max_reps: int = 25) -> tuple[float, float]:
    """Best process time of each of two steps, run in turns after one warm-up each."""
    step_a(), step_b()
    best_a = best_b = float("inf")
    spent, reps = 0.0, 0
    while reps < min_reps or (spent < budget_s and reps < max_reps):
        for which in (0, 1):
            start = time.process_time()
            (step_a if which == 0 else step_b)()
            took = time.process_time() - start
            spent += took
            if which == 0:
                best_a = min(best_a, took)
            else:
                best_b = min(best_b, took)
        reps += 1
    return best_a, best_b


def measure(name: str, shape: tuple, batch: int, budget_s: float, max_clients: int) -> list[tuple]:
    torch.manual_seed(0)
    model = build_model(name, 10, shape)
    params = {k: v.detach().contiguous() for k, v in model.named_parameters()}
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(batch, *shape, generator=gen)
    y = torch.randint(0, 10, (batch,), generator=gen)
    rows = []
    fmt = {f: ({k: to_format(v, f) for k, v in params.items()}, to_format(x, f)) for f in (False, True)}
    t_c, t_l = best_pair(lambda: sequential_step(model, *fmt[False], y), lambda: sequential_step(model, *fmt[True], y),
                         budget_s)
    rows.append((name, "×".join(map(str, shape)), batch, "sequential", 1, t_c, t_l))
    _, per_pass = group_size(model, params, x, batch, 1, 4.0)
    clients = min(per_pass, max_clients)
    if clients < 2:
        rows.append((name, "×".join(map(str, shape)), batch, "vectorized", 1, None, None))
        return rows
    stacked = {k: v.unsqueeze(0).repeat(clients, *([1] * v.ndim)) for k, v in params.items()}
    xs = torch.randn(clients, batch, *shape, generator=gen)
    ys = torch.randint(0, 10, (clients, batch), generator=gen)
    vfmt = {f: ({k: to_format(v, f) for k, v in stacked.items()}, to_format(xs, f)) for f in (False, True)}
    t_c, t_l = best_pair(lambda: vectorized_step(model, *vfmt[False], ys),
                         lambda: vectorized_step(model, *vfmt[True], ys), budget_s)
    rows.append((name, "×".join(map(str, shape)), batch, "vectorized", clients, t_c, t_l))
    return rows


def _row(r) -> str:
    """One measured case as a row of the results table."""
    model, inp, b, path, clients, t_c, t_l = r
    return (f"| {model} | {inp} | {b} | {path} | {clients} | "
            + ("— | — | engine runs this with the sequential kernels |" if t_c is None else
               f"{t_c * 1e3:.2f} | {t_l * 1e3:.2f} | {t_c / t_l:.2f} |"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="two tiny cases; writes nothing")
    quick = parser.parse_args(argv).quick
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    cnns = [n for n in MODELS if n not in ("logreg", "mlp")]
    covered = {c[0] for c in CASES}
    missing = sorted(set(cnns) - covered)
    rows = []
    for name, shape, batches in (QUICK_CASES if quick else CASES):
        for batch in batches:
            for r in measure(name, shape, batch, 0.05 if quick else 1.5, 4 if quick else 32):
                rows.append(r)
                print(_row(r), flush=True)
    header = ("| model | input | batch | path | clients/pass | contiguous ms | channels-last ms | "
              "ratio (contiguous / channels-last) |\n|---|---|---|---|---|---|---|---|")
    lines = [_row(r) for r in rows]
    machine = (f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, 1 thread; "
               f"load average at the end {os.getloadavg()[0]:.1f}; benchmark took {time.perf_counter() - t0:.0f} s")
    table = header + "\n" + "\n".join(lines)
    print(f"\n{machine}\n\n{table}")
    if missing:
        print(f"not measured: {missing}")
    if not quick:
        Path(__file__).with_name("results_memory_format.md").write_text(
            "# bench_memory_format.py results\n\n"
            "Written by `python benchmarks/bench_memory_format.py` (overwritten by every full run; see README.md).\n"
            "One SGD step, 1 thread, process time, best of several repetitions taken in turns; ratio > 1: "
            "channels-last is faster.\n\n"
            f"Machine: {machine}.\n"
            + (f"Not measured: {', '.join(missing)} (a composition of measured models).\n" if missing else "")
            + f"\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
