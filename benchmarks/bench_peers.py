"""fedlib beside fluke and pfl-research: seconds a round for the same FedAvg work (issue 52).

Every library trains fedlib's partition from fedlib's initial weights (``benchmarks/peers.py``), with the
same local SGD (E, B, lr), every sampled client each round and a test-set evaluation every round.  Runs
alternate library by library, repetition by repetition, so that a load that comes and goes falls on all of
them; each run's first round (warm-up) is dropped and the median is taken over the other rounds of all its
repetitions.  The same at 1 torch thread and at every core (``os.cpu_count()``: fedlib's ``threads=N`` for its
vectorized engine, ``client_threads=N`` for its sequential one, ``torch.set_num_threads(N)`` for the peers).
Writes ``benchmarks/results_peers.md``.

    python benchmarks/bench_peers.py            # the three settings, 3 repetitions (~15-30 min on 2 shared cores)
    python benchmarks/bench_peers.py --quick    # tiny sizes: proves the script runs; writes nothing
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from peers import export, federation, peers_installed  # noqa: E402

from fedlib.config import Config  # noqa: E402

OUT = Path(__file__).resolve().parent / "results_peers.md"
TARGET = 0.8  # fedlib's median round at most this × the faster peer's
#: fedlib under an engine other than its default (``fedlib``: the vectorized engine), timed as a library of its own:
#: on a CPU a conv net's clients train faster one after another (a grouped convolution is slower per sample)
ENGINES = {"fedlib-sequential": "sequential"}

# name -> (what it is, fedlib configuration, rounds a run): 8, the protocol (rounds 2-8 timed); 3 rounds gave
# the same ratios within 0.02 (benchmarks/README.md)
SETTINGS = {
    "mlp": ("FMNIST (15,000-sample subset), fedlib's `mlp` (784→260→200→10), 30 clients Dir(0.1), all each "
            "round, E = 1, B = 64, lr 0.01; test set 2,000",
            dict(dataset="fmnist", model="mlp", num_clients=30, partition="dirichlet", partition_beta=0.1,
                 max_train_samples=15000, max_test_samples=2000, batch_size=64, lr=0.01), 8),
    "cnn": ("FMNIST (6,000-sample subset), FedLC's Table 8 CNN (`cnn_mnist`), 20 clients Dir(0.5), all each "
            "round, E = 1, B = 64, lr 0.01; test set 2,000",
            dict(dataset="fmnist", model="cnn_mnist", num_clients=20, partition="dirichlet", partition_beta=0.5,
                 max_train_samples=6000, max_test_samples=2000, batch_size=64, lr=0.01), 8),
    "many": ("CIFAR-10 (10,000-image subset), FedLC's Table 9 CNN (`cnn_cifar`), 1,000 clients of 10 (iid; "
             "pfl-research's CIFAR-10 benchmark has 1,000 of 50), 50 a round, E = 1, B = 10, lr 0.01; test set 1,000",
             dict(dataset="cifar10", model="cnn_cifar", num_clients=1000, partition="iid", participation=0.05,
                  max_train_samples=10000, max_test_samples=1000, batch_size=10, lr=0.01), 8),
}
QUICK = {"mlp": dict(max_train_samples=1200, max_test_samples=300, num_clients=6),
         "cnn": dict(max_train_samples=600, max_test_samples=200, num_clients=4),
         "many": dict(max_train_samples=400, max_test_samples=200, num_clients=40)}


def time_run(library: str, config: Config, ex, rounds: int, threads: int) -> tuple[list[float], float]:
    """One run of ``rounds`` rounds: the seconds of each round after the first, and the final accuracy."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    config = config.replace(threads=threads)
    if library in ENGINES:  # fedlib under another of its engines; at N cores the clients train on N threads, each
        # on one intra-op thread (client_threads: the numbers of one thread, where threads=N rounds otherwise)
        library, config = "fedlib", config.replace(engine=ENGINES[library], threads=1, client_threads=threads)
    try:
        fed = federation(library, config, ex)
        stamps = [time.perf_counter()]
        acc = fed.train(rounds, lambda: stamps.append(time.perf_counter()))
    finally:
        torch.set_num_threads(before)
    return [b - a for a, b in zip(stamps[1:], stamps[2:])], acc


def measure(name: str, reps: int, quick: bool, libraries: list[str]) -> list[dict]:
    what, kw, rounds = SETTINGS[name]
    config = Config(**{**kw, **(QUICK[name] if quick else {}), "seed": 0})
    rounds = 2 if quick else rounds
    ex = export(config)
    rows = []
    for threads in sorted({1, os.cpu_count() or 1}):
        times = {lib: [] for lib in libraries}
        accs = {lib: [] for lib in libraries}
        for rep in range(reps):
            order = libraries[rep % len(libraries):] + libraries[:rep % len(libraries)]
            for lib in order:
                t, acc = time_run(lib, config, ex, rounds, threads)
                times[lib] += t
                accs[lib].append(acc)
                print(f"  {name} threads={threads} rep {rep} {lib}: {statistics.median(t):.3f} s/round, "
                      f"accuracy {acc:.4f}", file=sys.stderr, flush=True)
        med = {lib: statistics.median(times[lib]) for lib in libraries}
        peers = [lib for lib in libraries if not lib.startswith("fedlib")]
        ours = min((lib for lib in libraries if lib.startswith("fedlib")), key=med.get)
        faster = min(peers, key=med.get) if peers else None
        rows.append({"setting": name, "threads": threads, "median": med, "acc": accs, "faster": faster,
                     "ours": ours, "ratio": med[ours] / med[faster] if faster else float("nan"),
                     "rounds": len(times["fedlib"])})
    return rows


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    libs = ", ".join(f"{p} {version(p)}" for p in ("torch", "fluke-fl", "pfl") if _has(p))
    return f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}; {libs}"


def _has(dist: str) -> bool:
    try:
        version(dist)
        return True
    except Exception:  # noqa: BLE001
        return False


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip().split("load average:")[-1]


def table(rows: list[dict], libraries: list[str]) -> str:
    head = ["setting", "threads", *[f"{lib} s/round" for lib in libraries], "faster fedlib ÷ faster peer",
            f"≤ {TARGET}", "final accuracy (" + " / ".join(libraries) + ", per repetition)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        accs = " / ".join(",".join(f"{a:.3f}" for a in r["acc"][lib]) for lib in libraries)
        lines.append("| " + " | ".join([r["setting"], str(r["threads"]),
                                        *[f"{r['median'][lib]:.3f}" for lib in libraries],
                                        f"{r['ratio']:.2f} ({r['ours']} ÷ {r['faster']})",
                                        "met" if r["ratio"] <= TARGET
                                        else "**missed**", accs]) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, 1 repetition; writes nothing")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per library (≥ 3 for the results file)")
    ap.add_argument("--settings", default=",".join(SETTINGS), help=f"comma-separated, of {', '.join(SETTINGS)}")
    a = ap.parse_args(argv)
    names = a.settings.split(",")
    bad = [n for n in names if n not in SETTINGS]
    if bad:
        ap.error(f"--settings: unknown {bad}; choose from {list(SETTINGS)}")
    if a.reps < 1:
        ap.error(f"--reps must be ≥ 1, got {a.reps}")
    libraries = ["fedlib", *ENGINES, *peers_installed()]
    if len(libraries) == 1:
        print("neither fluke nor pfl is installed (pip install -e \".[peers]\"): timing fedlib alone",
              file=sys.stderr)
    load_before, started = load(), time.time()
    rows, done = [], []
    for n in names:  # the file is rewritten after each setting, so that a long run leaves what it measured
        rows += measure(n, 1 if a.quick else a.reps, a.quick, libraries)
        done.append(n)
        if not a.quick:
            write(rows, done, libraries, a.reps, load_before, started)
    print(table(rows, libraries))
    return 0


def write(rows: list[dict], names: list[str], libraries: list[str], reps: int, load_before: str,
          started: float) -> None:
    text = ["# fedlib beside fluke and pfl-research (`python benchmarks/bench_peers.py`)", "",
            f"Machine: {machine()}.", "",
            f"Load average (1, 5, 15 min): {load_before} before, {load()} after; "
            f"{(time.time() - started) / 60:.1f} min in all; {reps} repetitions per library, alternating.", "",
            "Seconds a round (median over every round after each run's first, all repetitions): local training "
            "of the sampled clients, aggregation and a test-set evaluation.  `fedlib` is its default engine "
            "(vectorized), `fedlib-sequential` its sequential one (`engine=\"sequential\"`).  Ratio: the faster "
            f"fedlib engine ÷ the faster peer (target ≤ {TARGET}).", "", table(rows, libraries), "", "Settings:", ""]
    text += [f"- **{n}**: {SETTINGS[n][0]}; {SETTINGS[n][2]} rounds a run." for n in names]
    OUT.write_text("\n".join(text) + "\n")
    print(f"wrote {OUT.name}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
