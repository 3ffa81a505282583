"""How many operators a local step dispatches: the host work a GPU step waits on, counted on a CPU.

Every PyTorch operator a step calls costs host time before its kernel launches (dispatch), however small the
kernel.  The count does not depend on the machine: this script counts them on a CPU (a
``TorchDispatchMode`` sees every ATen operator) for FedLC Table 1's CIFAR-10 CNN, with the clients stacked as
the vectorized engine stacks them on a GPU (one pass a step).  It counts:

* ``engine``: the vectorized engine's local step (``fedlib.vectorized._train_group``: the stacked forward and
  backward under ``vmap``, the batch gathers, the active prefix, the SGD step of every parameter), as the
  difference between ``--steps`` and twice as many steps, divided by the steps added (what a round spends once,
  the group's setup and its returns, cancels);
* ``bare``: the step probe's stacked step (``probe_gpu_paths._stacked_step``: ``vmap`` forward and backward and
  one fused SGD update), the least a stacked step can dispatch eagerly.

A round on the GPU runs as many such steps one after another as its groups of clients hold (``memory_budget_gb``;
``profile_gpu_round.py`` reports them), so ``engine × steps`` is the host work of a round's training.  The
compiled engine (``engine="compiled"``) replaces the stacked forward and backward by one compiled graph.

    python benchmarks/count_step_ops.py                 # 20, 5 and 1 clients stacked (about a minute)
    python benchmarks/count_step_ops.py --clients 4 --out ops.json
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
import warnings
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


class OpCounter(TorchDispatchMode):
    """Counts every ATen operator called inside it, by name."""

    def __init__(self):
        super().__init__()
        self.ops: collections.Counter = collections.Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops[func.overloadpacket.__name__] += 1
        return func(*args, **(kwargs or {}))


def engine_ops(clients: int, steps: int, batch: int = 8, method: str = "fedavg") -> collections.Counter:
    """The operators one round's local training dispatches: ``clients`` clients of ``steps`` full batches of
    ``batch`` each (IID), FedLC Table 1's model and optimizer, stacked in one pass a step as on a GPU."""
    import fedlib.vectorized as vec
    from fedlib.config import Config
    from fedlib.experiment import prepare
    from fedlib.simulation import run_round
    from profile_gpu_round import round_config

    cfg = {**round_config("cpu", "float32"), "method": method, "num_clients": clients, "partition": "iid",
           "batch_size": batch, "max_train_samples": clients * steps * batch, "max_test_samples": 10,
           "eval_every": 10 ** 6, "memory_budget_gb": 64.0}
    exp = prepare(Config.from_dict(cfg))
    counter, inner = OpCounter(), vec._train_group

    def counted(*args, **kwargs):
        with counter:
            return inner(*args, **kwargs)

    held = vec.CPU_PASS_BYTES
    vec.CPU_PASS_BYTES, vec._train_group = 2 ** 50, counted  # one pass a step, as on a GPU
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_round(exp, exp.initial_state(), 1)
    finally:
        vec.CPU_PASS_BYTES, vec._train_group = held, inner
    return counter.ops


def per_step(clients: int, steps: int, method: str = "fedavg") -> dict:
    """Operators a step of the engine, by name, from the difference between ``steps`` and ``2 × steps``."""
    a, b = engine_ops(clients, steps, method=method), engine_ops(clients, 2 * steps, method=method)
    diff = {k: (b[k] - a.get(k, 0)) / steps for k in b if b[k] != a.get(k, 0)}
    return {"total": sum(diff.values()), "by_op": dict(sorted(diff.items(), key=lambda kv: -kv[1]))}


def bare_ops(clients: int, batch: int = 8) -> int:
    """Operators of the step probe's stacked step (one call, after a warm-up call)."""
    from probe_gpu_paths import _stacked_step

    from fedlib.models import build_model

    shape = (3, 32, 32)
    net = build_model("cnn_cifar", 10, shape)
    stacked = {k: torch.stack([v.detach()] * clients).requires_grad_(True) for k, v in net.named_parameters()}
    step = _stacked_step(net, stacked, torch.randn(clients, batch, *shape),
                         torch.randint(0, 10, (clients, batch)), "float32", "cpu")
    step()
    counter = OpCounter()
    with counter:
        step()
    return sum(counter.ops.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", default="20,5,1", help="comma-separated clients stacked (default 20,5,1)")
    ap.add_argument("--steps", type=int, default=2, help="steps of the shorter round (default 2)")
    ap.add_argument("--method", default="fedavg")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    clients = [int(c) for c in a.clients.split(",")]
    if a.steps < 1 or min(clients) < 1:
        ap.error(f"--steps and --clients must be ≥ 1, got {a.steps} and {clients}")
    rows = []
    print("| clients stacked | operators a step, engine | bare stacked step | engine / bare |")
    print("| --- | --- | --- | --- |")
    for k in clients:
        eng, bare = per_step(k, a.steps, a.method), bare_ops(k)
        rows.append({"clients": k, "engine": eng["total"], "bare": bare, "ratio": eng["total"] / bare,
                     "top": dict(list(eng["by_op"].items())[:12])})
        print(f"| {k} | {eng['total']:.0f} | {bare} | {eng['total'] / bare:.1f} |", flush=True)
    if a.out is not None:
        a.out.write_text(json.dumps({"torch": torch.__version__, "method": a.method, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
