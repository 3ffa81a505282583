"""Unit costs of the quick profiles: one round of a representative run of each paper's quick profile.

    python benchmarks/bench_quick_units.py           # ~3 minutes; prints a table (writes nothing)
    python benchmarks/bench_quick_units.py --quick   # seconds: proves the script runs

Each case is a cell of a paper's quick-profile table (its configuration as the regeneration
runs it: model, dataset stand-in, batch, engine, evaluation), run through ``fedlib.run``
without a store for 1 and for 1 + n rounds; the unit cost is the difference per round, in
process time (one thread, as every run trains: the CPU work, which sharing the machine
inflates less than wall time).  Comparing two commits' tables (same machine, same load)
gives the unit-cost ratios from which a profile's regeneration time is re-estimated
(``benchmarks/README.md``).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("FEDLIB_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))

import fedlib  # noqa: E402
from fedlib.repro.artefacts.tables import grid_cells  # noqa: E402
from fedlib.repro.spec.paper import get_paper  # noqa: E402


def _cell(paper: str, table: str, method: str, dataset: str, column: str = "") -> dict:
    for c in grid_cells(get_paper(paper).profile("quick"), table):
        cfg = c["config"]
        if cfg and c["method"] == method and cfg.get("dataset") == dataset and column in c["column"]:
            return {**cfg, "seed": 0}
    raise LookupError(f"{paper} {table}: no quick cell {method} on {dataset} {column}")


# (name, paper, table, method, dataset, column filter, overrides)
CASES = [
    ("FedLC Table 1, FMNIST (stand-in), cnn_mnist B=16", "fedlc", "table1", "fedavg", "fmnist", "beta0.5", {}),
    ("FedLC stand-in check, CIFAR-10, cnn_mnist B=16", "fedlc", "table1", "fedavg", "fmnist", "beta0.5",
     {"dataset": "cifar10", "model": "cnn_mnist"}),
    ("FedLC Table 4, Synthetic, logreg", "fedlc", "table4", "fedavg", "synthetic", "", {}),
    ("FedABC Table 1, MNIST, mlp (sequential engine)", "fedabc", "table1", "fedabc", "mnist", "", {}),
    ("FEDIC Table 1, FMNIST-LT (stand-in), cnn_mnist", "fedic", "table1", "fedavg", "fmnist", "", {}),
    ("FedConcat Table 1, FMNIST, simple_cnn B=16", "fedconcat", "table1", "fedavg", "fmnist", "", {}),
    ("FedConcat Table 1, CIFAR-10, simple_cnn B=16", "fedconcat", "table1", "fedavg", "cifar10", "", {}),
]


def unit_cost(config: dict, extra: int) -> float:
    """Process seconds per round: (run of 1 + extra rounds − run of 1 round) / extra."""
    times = []
    for rounds in (1, 1 + extra):
        cfg = {**config, "rounds": rounds, "eval_every": min(config.get("eval_every", 1), rounds)}
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fedlib.run(cfg, store=False, progress=False)
        times.append(time.process_time() - start)
    return (times[1] - times[0]) / extra


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one case, one extra round")
    quick = parser.parse_args(argv).quick
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    lines = ["| case | model | batch | engine | s/round (process time) |", "|---|---|---|---|---|"]
    for name, paper, table, method, dataset, column, overrides in (CASES[2:3] if quick else CASES):
        try:
            config = {**_cell(paper, table, method, dataset, column), **overrides}
            cost = f"{unit_cost(config, 1 if quick else 3):.3f}"
        except (LookupError, fedlib.data.DatasetNotFoundError) as err:
            config, cost = {}, f"not run: {err}"
        resolved = fedlib.Config.from_dict(config) if config else None
        lines.append(f"| {name} | {resolved.model if resolved else ''} | {resolved.batch_size if resolved else ''} | "
                     f"{resolved.engine if resolved else ''} | {cost} |")
        print(lines[-1], flush=True)
    print(f"\n{platform.machine()}, {os.cpu_count()} CPU cores, torch {torch.__version__}, 1 thread; load average "
          f"{os.getloadavg()[0]:.1f}; took {time.perf_counter() - t0:.0f} s\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
