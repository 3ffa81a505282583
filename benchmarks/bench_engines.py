"""Vectorized vs. sequential engine, measured side by side in one run on this machine.

    python benchmarks/bench_engines.py           # full (a few minutes); writes benchmarks/results.md
    python benchmarks/bench_engines.py --quick   # seconds: proves the script runs (CI); writes nothing
    python benchmarks/bench_engines.py --end-to-end  # case (a*) alone: Synthetic round + evaluation vs a peer loop

A "round" is :func:`fedlib.simulation.run_round` (sample clients, build their
batches, train them, aggregate, server step); test-set evaluation is left out,
it is the same code for both engines.  Every case prepares the experiment once,
runs one warm-up round per engine, then times the next rounds with the engines
interleaved round by round (the machine may be shared: interleaving exposes
both engines to the same interference) and reports the best round of each.
See README.md for the targets and how to read the table.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch
from torch.func import functional_call
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("FEDLIB_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))

from fedlib.algorithms import build_algorithm  # noqa: E402
from fedlib.config import Config  # noqa: E402
from fedlib.data import FederatedData  # noqa: E402
from fedlib.engine import sample_clients  # noqa: E402
from fedlib.evaluation import evaluation_row  # noqa: E402
from fedlib.losses import cross_entropy  # noqa: E402
from fedlib.models import build_model  # noqa: E402
from fedlib.partition import count_matrix, iid  # noqa: E402
from fedlib import simulation  # noqa: E402
from fedlib.simulation import Experiment, prepare, run_round  # noqa: E402

ENGINES = ("sequential", "vectorized")


class _EngineClock:
    """Wraps :func:`fedlib.simulation.client_trainer` to add up the time spent inside
    the engine (train_clients) apart from the rest of the round."""

    def __init__(self):
        self.seconds = 0.0
        self._original = simulation.client_trainer

    def __call__(self, config, algorithm=None):
        train = self._original(config, algorithm)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return train(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


def time_rounds(exp: Experiment, timed: int) -> dict[str, tuple[float, float]]:
    """Per engine: (best seconds per round, engine seconds in that round).  One warm-up
    round each, then ``timed`` rounds with the engines interleaved round by round."""
    runs = {e: (dataclasses.replace(exp, config=exp.config.replace(engine=e)), exp.initial_state()) for e in ENGINES}
    best = {e: (float("inf"), float("inf")) for e in ENGINES}
    clock = _EngineClock()
    simulation.client_trainer = clock
    try:
        for round_ in range(1, timed + 2):
            for engine, (run_exp, state) in runs.items():
                clock.seconds = 0.0
                start = time.perf_counter()
                runs[engine] = (run_exp, run_round(run_exp, state, round_).state)
                took = time.perf_counter() - start
                if round_ > 1 and took < best[engine][0]:
                    best[engine] = (took, clock.seconds)
    finally:
        simulation.client_trainer = clock._original
    return best


def peer_round(exp: Experiment, model: torch.nn.Module, round_: int) -> None:
    """One round as a peer library's per-client simulation loop runs it (FedAvg): for each
    sampled client a fresh copy of the global ``nn.Module``, ``torch.optim.SGD``, a shuffling
    ``DataLoader`` over its samples, E epochs of forward/backward/step; then the
    sample-weighted average of the clients' ``state_dict``s becomes the global model
    (``model``, updated in place).  Not fedlib's numbers (another batch order): its cost."""
    c, x, y = exp.config, exp.data.train_x, exp.data.train_y
    states, weights = [], []
    for k in sample_clients(exp.num_clients, c.participation, c.seed, round_):
        rows = torch.as_tensor(exp.client_indices[k])
        local = copy.deepcopy(model)
        opt = torch.optim.SGD(local.parameters(), lr=c.lr)
        loader = DataLoader(TensorDataset(x[rows], y[rows]), batch_size=c.batch_size, shuffle=True,
                            generator=torch.Generator().manual_seed(c.seed * 100_003 + round_ * 1_009 + k))
        for _ in range(c.local_epochs):
            for xb, yb in loader:
                opt.zero_grad()
                torch.nn.functional.cross_entropy(local(xb), yb).backward()
                opt.step()
        states.append(local.state_dict())
        weights.append(len(rows))
    total = float(sum(weights))
    model.load_state_dict({name: sum(w / total * s[name] for w, s in zip(weights, states)) for name in states[0]})


@torch.no_grad()
def peer_evaluate(model: torch.nn.Module, x: torch.Tensor, y: torch.Tensor, batch: int = 2048) -> float:
    """The global model's test accuracy, as a peer loop measures it."""
    correct = sum(int((model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum()) for i in range(0, len(y), batch))
    return correct / len(y)


def time_end_to_end(exp: Experiment, timed: int) -> dict[str, float]:
    """Best process-time seconds per round (one thread: the CPU work of the round, which machine
    sharing does not inflate as it does wall time), evaluation on the test set included (every
    round, as eval_every = 1): fedlib's engines through :func:`run_round` + the evaluation row,
    and :func:`peer_round` + :func:`peer_evaluate`; one warm-up round each, then in turns."""
    runs = {e: (dataclasses.replace(exp, config=exp.config.replace(engine=e)), exp.initial_state()) for e in ENGINES}
    torch.manual_seed(exp.config.seed)
    peer_model = copy.deepcopy(exp.model)
    best = {name: float("inf") for name in (*ENGINES, "peer")}
    with simulation.single_thread():
        for round_ in range(1, timed + 2):
            for name in best:
                start = time.process_time()
                if name == "peer":
                    peer_round(exp, peer_model, round_)
                    peer_evaluate(peer_model, exp.data.test_x, exp.data.test_y)
                else:
                    run_exp, state = runs[name]
                    state = run_round(run_exp, state, round_, evaluating=True).state
                    evaluation_row(run_exp, state.params, round_)
                    runs[name] = (run_exp, state)
                took = time.process_time() - start
                if round_ > 1:
                    best[name] = min(best[name], took)
    return best


def single_model_throughput(exp: Experiment, batch: int, repeats: int) -> float:
    """Samples/s of ONE model's forward + backward + SGD step on one batch of ``batch`` rows."""
    model, x, y = exp.model, exp.data.train_x, exp.data.train_y
    rows = torch.as_tensor(np.random.default_rng(0).choice(len(y), size=batch, replace=batch > len(y)))
    params = exp.initial_params()

    def step():
        p = {k: v.detach().requires_grad_(True) for k, v in params.items()}
        loss = cross_entropy(functional_call(model, p, (x[rows],)), y[rows])
        grads = torch.autograd.grad(loss, list(p.values()))
        with torch.no_grad():
            return {k: w - exp.config.lr * g for (k, w), g in zip(p.items(), grads)}

    step()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        best = min(best, time.perf_counter() - start)
    return batch / best


def random_experiment(model: str, clients: int, total: int, batch_size: int) -> Experiment:
    """A random-tensor dataset of ``total`` samples split evenly (iid) over ``clients``."""
    shape = {"logreg": (60,), "cnn_mnist": (1, 28, 28)}[model]
    gen = torch.Generator().manual_seed(0)
    x, y = torch.randn(total, *shape, generator=gen), torch.randint(0, 10, (total,), generator=gen)
    parts = iid(y.numpy(), clients, seed=0)
    config = Config(dataset="synthetic", num_clients=clients, model=model, batch_size=batch_size)
    data = FederatedData("random", x, y, x[:10], y[:10], 10, parts)
    torch.manual_seed(0)
    return Experiment(config, data, parts, count_matrix(y.numpy(), parts, 10), build_model(model, 10, shape),
                      build_algorithm(config))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 1 timed round; writes no results.md")
    parser.add_argument("--end-to-end", action="store_true",
                        help="only cases (a) and (a*) (Synthetic, 100 clients, against the peer loop); writes nothing")
    args = parser.parse_args(argv)
    quick, end_to_end_only = args.quick, args.end_to_end
    rows: list[tuple[str, ...]] = []
    t0 = time.perf_counter()

    def report(case, metric, seq, vec, ratio, target="", ok=None):
        verdict = "" if ok is None else (" met" if ok else " MISSED")
        rows.append((case, metric, seq, vec, f"{ratio:.2f}", f"{target}{verdict}"))
        print(" | ".join(rows[-1]), flush=True)

    def speed(case, exp, timed, target=None, digits=2):
        """Rounds/s of both engines and the speed-up, for the whole round and for the engine alone."""
        t = time_rounds(exp, timed)
        (s_round, s_engine), (v_round, v_engine) = t["sequential"], t["vectorized"]
        ok = None if target is None else s_round / v_round >= target
        report(case, "rounds/s", f"{1 / s_round:.{digits}f}", f"{1 / v_round:.{digits}f}", s_round / v_round,
               f"≥ {target}×" if target else "", ok)
        report("    engine alone (train_clients)", "s/round", f"{s_engine:.3f}", f"{v_engine:.3f}",
               s_engine / v_engine)
        return t

    def versus_single_model(case, exp, t, repeats, target=None):
        n = exp.data.train_y.numel()  # participation 1, E = 1: a round trains every sample once
        limit = single_model_throughput(exp, n, repeats)
        seq, vec = n / t["sequential"][0] / limit, n / t["vectorized"][0] / limit
        report(case, f"samples/s (limit {limit:.0f})", f"{n / t['sequential'][0]:.0f} ({seq:.2f})",
               f"{n / t['vectorized'][0]:.0f} ({vec:.2f})", vec, f"≥ {target} of limit" if target else "",
               None if target is None else vec >= target)

    # (a) Synthetic(1,1), 100 clients, logistic regression
    clients = 20 if quick else 100
    if not end_to_end_only:
            speed(f"(a) Synthetic(1,1), {clients} clients, logreg", prepare(Config(
            dataset="synthetic", synthetic_alpha=1.0, synthetic_beta=1.0, num_clients=clients)), 1 if quick else 7, 10)

    # (a*) the same, end to end (round + test-set evaluation), one thread, against a peer per-client loop
    exp = prepare(Config(dataset="synthetic", synthetic_alpha=1.0, synthetic_beta=1.0, num_clients=clients))
    e2e = time_end_to_end(exp, 1 if quick else 15)
    report(f"(a*) Synthetic(1,1), {clients} clients, end to end (round + evaluation), 1 thread, process time",
           "s/round: sequential | vectorized",
           f"{e2e['sequential']:.4f}", f"{e2e['vectorized']:.4f}", e2e["sequential"] / e2e["vectorized"])
    ratio = e2e["peer"] / e2e["vectorized"]
    report("    peer per-client DataLoader loop ÷ vectorized", "s/round: peer | vectorized", f"{e2e['peer']:.4f}",
           f"{e2e['vectorized']:.4f}", ratio, "" if quick else "≥ 10×", None if quick else ratio >= 10)
    if end_to_end_only:
        return 0

    # (b) MNIST, Table-8 CNN, 20 clients under D(0.5)
    exp = prepare(Config(dataset="mnist", num_clients=20, partition="dirichlet", partition_beta=0.5,
                         max_train_samples=400 if quick else 6000, max_test_samples=100))
    t = speed(f"(b) MNIST ({exp.data.train_y.numel()} samples), cnn_mnist, 20 clients D(0.5)", exp,
              1 if quick else 4, 3)
    versus_single_model("(b') same: samples/s, (÷ one model, one batch of all samples)", exp, t, 1 if quick else 3)

    # (c) CIFAR-10, Table-9 CNN, 20 clients under D(0.5); and the single-model arithmetic limit
    exp = prepare(Config(dataset="cifar10", num_clients=20, partition="dirichlet", partition_beta=0.5,
                         max_train_samples=400 if quick else 2560, max_test_samples=100))
    t = speed(f"(c) CIFAR-10 ({exp.data.train_y.numel()} samples), cnn_cifar, 20 clients D(0.5)", exp,
              1 if quick else 2, digits=3)
    versus_single_model("(c') same: samples/s, (÷ one model, one batch of all samples)", exp, t,
                        1 if quick else 2, 0.7)

    # (d) a fixed total number of samples over 10 -> 100 -> 1000 clients (random tensors, iid split)
    sizes = (10, 100) if quick else (10, 100, 1000)
    for model, total in (("logreg", 2000 if quick else 20000), ("cnn_mnist", 400 if quick else 4000)):
        timed = 1 if quick else (7 if model == "logreg" else 3)
        per = {m: time_rounds(random_experiment(model, m, total, 128), timed) for m in sizes}
        for m in sizes:
            (s_round, s_engine), (v_round, v_engine) = per[m]["sequential"], per[m]["vectorized"]
            report(f"(d) {model}, {total} samples, {m} clients", "s/round (engine alone)",
                   f"{s_round:.3f} ({s_engine:.3f})", f"{v_round:.3f} ({v_engine:.3f})", s_round / v_round)
        first, last = per[sizes[0]], per[sizes[-1]]
        growth = {e: (last[e][0] / first[e][0], last[e][1] / first[e][1]) for e in ENGINES}
        report(f"(d) {model}: growth {sizes[0]} -> {sizes[-1]} clients", "t(last)/t(first) (engine alone)",
               "{:.2f} ({:.2f})".format(*growth["sequential"]), "{:.2f} ({:.2f})".format(*growth["vectorized"]),
               growth["vectorized"][0], "vectorized < 2×", growth["vectorized"][0] < 2)

    header = ("case", "metric", "sequential", "vectorized", "ratio", "target")
    machine = (f"{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, "
               f"{torch.get_num_threads()} threads; load average at the end {os.getloadavg()[0]:.1f}; "
               f"benchmark took {time.perf_counter() - t0:.0f} s")
    table = "\n".join("| " + " | ".join(r) + " |" for r in [header, tuple("---" for _ in header), *rows])
    print(f"\n{machine}\n\n{table}")
    if not quick:
        Path(__file__).with_name("results.md").write_text(
            "# bench_engines.py results\n\n"
            "Written by `python benchmarks/bench_engines.py` (overwritten by every full run; see README.md).\n"
            "ratio = sequential time / vectorized time (speed-up); for (b')/(c') it is the vectorized\n"
            "engine's samples/s ÷ the single-model limit (in brackets: each engine's fraction of it).\n\n"
            f"Machine: {machine}.\n\n{table}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
