"""What thread invariance costs, and what it buys, measured side by side in one run.

    python benchmarks/bench_threads.py           # a few minutes; writes benchmarks/results_threads.md
    python benchmarks/bench_threads.py --quick   # seconds: proves the script runs (CI); writes nothing

fedlib trains every run with one torch thread (:func:`fedlib.simulation.single_thread`), so
that its numbers do not depend on the machine's cores or the number of grid workers.  For each
case this times the same run (i) as fedlib runs it, one thread, and (ii) with the machine's
threads and no such guard (what fedlib did before), alternating the two, keeping each one's best
time; and reports the largest parameter difference between (ii) and (i) -- the difference the
guard removes -- and, for a grid, the wall time of 2 runs on 1 worker with 2 threads against 2
workers with 1 thread each (how fedlib gets its parallelism back).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("FEDLIB_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))

from fedlib.config import Config  # noqa: E402
from fedlib.repro.run.grid import run_grid  # noqa: E402
from fedlib.simulation import _simulate, prepare  # noqa: E402

CASES = {
    "synthetic(1,1), logreg, 100 clients, 10 rounds": dict(dataset="synthetic", num_clients=100, rounds=10),
    "FMNIST 6,000, Table-8 CNN, 20 clients, B=16, 5 rounds": dict(
        dataset="fmnist", num_clients=20, max_train_samples=6000, max_test_samples=1000, batch_size=16, rounds=5),
    "CIFAR-10 2,000, Table-8 CNN (3 ch.), 20 clients, B=16, 3 rounds": dict(
        dataset="cifar10", model="cnn_mnist", num_clients=20, max_train_samples=2000, max_test_samples=500,
        batch_size=16, rounds=3),
}
QUICK = {"synthetic(1,1), logreg, 10 clients, 2 rounds": dict(dataset="synthetic", num_clients=10, rounds=2)}


def _timed(cfg: Config, threads: int | None, exp):
    """One run; ``threads=None``: as fedlib runs it (single_thread); else that many threads, unguarded."""
    before = torch.get_num_threads()
    t0 = time.perf_counter()
    try:
        if threads is None:
            from fedlib.simulation import single_thread

            with single_thread():
                out = _simulate(cfg, None, None, False, None, exp)
        else:
            torch.set_num_threads(threads)
            out = _simulate(cfg, None, None, False, None, exp)
    finally:
        torch.set_num_threads(before)
    return time.perf_counter() - t0, out["params"]


def measure(name: str, kw: dict, repeats: int, threads: int) -> dict:
    cfg = Config(**kw)
    exp = prepare(cfg)
    _timed(cfg, None, exp)  # warm-up (kernels, caches)
    best = {"guarded": float("inf"), "unguarded": float("inf")}
    params = {}
    for _ in range(repeats):
        for mode, t in (("guarded", None), ("unguarded", threads)):
            dt, p = _timed(cfg, t, prepare(cfg))
            best[mode] = min(best[mode], dt)
            params[mode] = p
    diff = max(float((params["guarded"][k] - params["unguarded"][k]).abs().max()) for k in params["guarded"])
    return {"case": name, "guarded_s": best["guarded"], "unguarded_s": best["unguarded"],
            "cost": best["guarded"] / best["unguarded"], "max_param_diff": diff}


def grid_parallelism(kw: dict, threads: int) -> dict:
    """Two runs: one worker with ``threads`` threads (unguarded, sequential) vs 2 workers (1 thread each)."""
    import tempfile

    cells = [{"seed_cell": s, "config": {**kw, "seed": s}} for s in (0, 1)]
    t0 = time.perf_counter()
    for c in cells:
        _timed(Config(**c["config"]), threads, None)
    serial = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        run_grid(cells, seeds=None, store=tmp, workers=2, progress=False)
        parallel = time.perf_counter() - t0
    return {"serial_multithread_s": serial, "two_workers_s": parallel}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    threads = os.cpu_count() or 1
    cases = QUICK if args.quick else CASES
    rows = [measure(name, kw, 1 if args.quick else args.repeats, threads) for name, kw in cases.items()]
    grid = grid_parallelism(next(iter(cases.values())), threads)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"Machine: {platform.processor() or platform.machine()}, {threads} cores, torch "
             f"{torch.__version__}; load average at the end {load:.1f}.", "",
             f"| case | one thread (fedlib) s | {threads} threads, unguarded s | cost (ratio) | "
             f"max |Δparam| without the guard |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['guarded_s']:.2f} | {r['unguarded_s']:.2f} | {r['cost']:.2f}× | "
              f"{r['max_param_diff']:.2e} |" for r in rows]
    lines += ["", f"Grid of 2 runs of the first case: one after the other with {threads} threads each "
              f"{grid['serial_multithread_s']:.1f} s; 2 workers with one thread each {grid['two_workers_s']:.1f} s "
              "(including the workers' start-up)."]
    text = "\n".join(lines)
    print(text)
    if not args.quick:
        (Path(__file__).parent / "results_threads.md").write_text("# Thread invariance: cost and effect\n\n" + text
                                                                   + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
