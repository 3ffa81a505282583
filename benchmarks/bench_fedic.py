"""The cost of FEDIC's setting on this machine: one client round and the server steps alone.

CIFAR-10-LT (IF = 100, D_aux 100 per class out first), 20 clients under D(0.1) with equal sizes,
8 per round, batch 128, single-threaded as runs are.  For each model it times

* one FedAvg round (client training + aggregation) at each local-epoch count E;
* the server step of ``fedic`` at two step counts (I = J = FT steps), from which the fixed cost
  (client outputs on D_aux) and the cost per step are read and the cost at 100 steps is extrapolated;
* the server steps of ``feddf`` and ``fedbe`` at ``--steps``.

The server steps get 8 perturbed copies of the initial model as the clients' models (their cost
does not depend on what the clients learnt).  A script, not a timed test::

    python benchmarks/bench_fedic.py --models cnn_mnist resnet8 --epochs 1 10
    python benchmarks/bench_fedic.py --quick      # seconds: tiny sizes, proves the script runs
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import torch

from fedlib.config import Config
from fedlib.simulation import _server_round, prepare, run_round, single_thread


def _config(model: str, method: str, epochs: int, steps: int, quick: bool) -> Config:
    small = dict(max_train_samples=3000, max_test_samples=200) if quick else {}
    return Config(dataset="cifar10", long_tail_if=100, server_aux_per_class=10 if quick else 100,
                  server_unlabeled="long_tail_dropped", partition="dirichlet", partition_beta=0.1,
                  partition_equal_sizes=True, num_clients=20, participation=0.4, batch_size=128, lr=0.1,
                  local_epochs=epochs, model=model, method=method, seed=0, fedic_finetune_steps=steps,
                  fedic_calibration_steps=steps, fedic_distill_steps=steps, distill_steps=steps,
                  fedic_teacher_eval="never", **small)


def client_round(model: str, epochs: int, quick: bool) -> float:
    exp = prepare(_config(model, "fedavg", epochs, 1, quick))
    state = exp.initial_state()
    start = time.perf_counter()
    run_round(exp, state, 1)
    return time.perf_counter() - start


def server_step(model: str, method: str, steps: int, quick: bool) -> float:
    exp = prepare(_config(model, method, 1, steps, quick))
    w = exp.initial_params()
    g = torch.Generator().manual_seed(0)
    clients = [{k: v + 0.01 * torch.randn(v.shape, generator=g) for k, v in w.items()} for _ in range(8)]
    part = exp.algorithm.server_training
    state = part.init_state(w)
    ctx = _server_round(exp, 1, clients, [len(ix) for ix in exp.client_indices[:8]], list(range(8)))
    start = time.perf_counter()
    part.after_round(ctx, w, state)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["cnn_mnist", "resnet8"])
    parser.add_argument("--epochs", nargs="+", type=int, default=[1, 10])
    parser.add_argument("--fedic-steps", nargs=2, type=int, default=[10, 50])
    parser.add_argument("--steps", type=int, default=100, help="FedDF/FedBE distillation steps")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.models, args.epochs, args.fedic_steps, args.steps = ["cnn_mnist"], [1], [2, 4], 2
    warnings.simplefilter("ignore")
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with single_thread():
        for model in args.models:
            for e in args.epochs:
                print(f"{model}: FedAvg round, E={e}: {client_round(model, e, args.quick):.1f} s", flush=True)
            (s1, s2), (t1, t2) = args.fedic_steps, [server_step(model, "fedic", s, args.quick)
                                                   for s in args.fedic_steps]
            per_step = (t2 - t1) / (s2 - s1)
            print(f"{model}: FEDIC server step: {t1:.1f} s at {s1} steps, {t2:.1f} s at {s2}; fixed "
                  f"{t1 - s1 * per_step:.1f} s + {per_step:.2f} s/step -> {t1 + (100 - s1) * per_step:.0f} s at "
                  f"I = J = 100", flush=True)
            for method in ("feddf", "fedbe"):
                print(f"{model}: {method} server step, {args.steps} steps: "
                      f"{server_step(model, method, args.steps, args.quick):.1f} s", flush=True)


if __name__ == "__main__":
    main()
