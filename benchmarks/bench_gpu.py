"""Paper-scale runs on one device: what a GPU session measures before a paper profile goes to a cluster.

    python benchmarks/bench_gpu.py                      # on cuda, FedLC's CIFAR-10 setting; writes results_bench_gpu.md
    python benchmarks/bench_gpu.py --paper-hours        # device-hours of each paper's tables; writes nothing
    python benchmarks/bench_gpu.py --device cpu --tiny  # about a minute: proves the script runs (CI); writes nothing

Measured at FedLC's CIFAR-10 setting (Table 1, D(β=0.5): the full training set, batch 128,
1 local epoch, SGD lr 0.01, the Table 9 CNN, FedLC's loss) with 20 clients and with 100:

* per-round time of each engine (vectorized and sequential), the best of ``--rounds`` timed
  rounds after one warm-up round, and one test-set evaluation;
* peak memory: on CUDA the allocator's peak (``torch.cuda.max_memory_allocated``) over those
  rounds, on the CPU the process's peak resident set (``ru_maxrss``, which includes the data);
* runs per GPU: k processes (k in ``--share``) train the 20-client setting at once on the same
  device; their summed rounds/s says how many runs should share one GPU
  (``--gpus-per-run 1/k``).

``--tiny``: a 256-sample subset, 2 and 4 clients, batch 32, k in (1, 2).  A round is
:func:`fedlib.simulation.run_round`, as in ``bench_engines.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("FEDLIB_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))

from fedlib.config import Config  # noqa: E402
from fedlib.evaluation import evaluation_row  # noqa: E402
from fedlib.simulation import prepare, run_round, single_thread  # noqa: E402

ENGINES = ("vectorized", "sequential")
#: FedLC Table 1, CIFAR-10 under D(β=0.5) (fedlib.papers.fedlc): 20 clients, batch 128, lr 0.01, no weight decay.
PAPER = {"dataset": "cifar10", "method": "fedlc", "num_clients": 20, "batch_size": 128, "lr": 0.01,
         "weight_decay": 0.0, "partition": "dirichlet", "partition_beta": 0.5, "local_epochs": 1}
TINY = {"max_train_samples": 256, "max_test_samples": 128, "batch_size": 32}
#: pfl-research's CIFAR-10 benchmark setting (1,000 clients, 50 a round); the other settings FedLC's above.
PFL = {**PAPER, "method": "fedavg", "num_clients": 1000, "participation": 0.05}
SETTINGS = {"fedlc": PAPER, "pfl": PFL}


def step_flops_per_sample(config: Config, batch: int = 32) -> float:
    """FLOPs of one training sample's forward and backward through the run's model, counted by
    ``torch.utils.flop_counter.FlopCounterMode`` on the CPU (matrix products and convolutions)."""
    from torch.utils.flop_counter import FlopCounterMode

    from fedlib.data import DATASETS
    from fedlib.models import build_model

    spec = DATASETS[config.dataset]
    net = build_model(config.model, spec.num_classes, spec.input_shape)
    x, y = torch.randn(batch, *spec.input_shape), torch.randint(0, spec.num_classes, (batch,))
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.cross_entropy(net(x), y).backward()
    return counter.get_total_flops() / batch


def peak_flops(device: str, n: int = 2048) -> float:
    """Measured float32 matrix-product rate (FLOP/s) of ``device``: the median of 5 products of random n×n
    matrices after a warm-up (one thread on the CPU, as runs train)."""
    a, b = (torch.randn(n, n, device=device) for _ in range(2))
    times = []
    with single_thread():
        for i in range(6):
            _sync(device)
            start = time.perf_counter()
            a @ b
            _sync(device)
            if i:
                times.append(time.perf_counter() - start)
    return 2 * n ** 3 / sorted(times)[len(times) // 2]


def round_floor(config: Config, peak: float) -> tuple[float, float]:
    """(FLOPs of one round's local training, seconds at ``peak``): the clients' sample-epochs of a round
    (participation · N_train · E) × the FLOPs a sample costs; evaluation left out."""
    from fedlib.repro.budget.costs import client_samples_per_round

    flops = step_flops_per_sample(config) * (client_samples_per_round(config.to_dict()) or 0.0)
    return flops, flops / peak


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _experiment(config: Config):
    return prepare(config).data_on()  # as fedlib.simulation does: the data on the device


def _peak_bytes(device: str) -> int:
    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated()
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def time_setting(config: Config, rounds: int) -> dict:
    """Best seconds per round (after one warm-up round), one evaluation's seconds, peak memory."""
    exp = _experiment(config)
    state = exp.initial_state()
    if config.device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    best = float("inf")
    with single_thread():
        for r in range(1, rounds + 2):
            _sync(config.device)
            start = time.perf_counter()
            state = run_round(exp, state, r).state
            _sync(config.device)
            if r > 1:
                best = min(best, time.perf_counter() - start)
        start = time.perf_counter()
        evaluation_row(exp, state.params, rounds + 1)
        _sync(config.device)
        evaluation = time.perf_counter() - start
    return {"round_s": best, "eval_s": evaluation, "peak_bytes": _peak_bytes(config.device)}


def _worker(args) -> int:
    """One of k runs sharing the device: prepare, warm up, wait for the others, time ``rounds`` rounds."""
    config = Config.from_dict(json.loads(args.worker))
    exp = _experiment(config)
    state = exp.initial_state()
    with single_thread():
        state = run_round(exp, state, 1).state
        _sync(config.device)
        Path(args.barrier + f".ready{os.getpid()}").touch()
        while not Path(args.barrier + ".go").exists():
            time.sleep(0.01)
        start = time.perf_counter()
        for r in range(2, args.rounds + 2):
            state = run_round(exp, state, r).state
        _sync(config.device)
    print(json.dumps({"rounds_per_s": args.rounds / (time.perf_counter() - start), "peak_bytes":
                      _peak_bytes(config.device)}))
    return 0


def share(config: Config, k: int, rounds: int) -> dict:
    """k processes train ``config`` at once on one device: summed rounds/s and the largest peak memory."""
    folder = Path(tempfile.mkdtemp(prefix="fedlib-bench-gpu-"))
    barrier = str(folder / "barrier")
    cmd = [sys.executable, __file__, "--worker", json.dumps(config.to_dict()), "--barrier", barrier,
           "--rounds", str(rounds)]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(k)]
    try:
        while sum(1 for _ in folder.glob("barrier.ready*")) < k:
            if any(p.poll() not in (None, 0) for p in procs):
                raise RuntimeError("a worker of the sharing measurement failed")
            time.sleep(0.05)
        Path(barrier + ".go").touch()
        outs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        shutil.rmtree(folder, ignore_errors=True)
    return {"rounds_per_s": sum(o["rounds_per_s"] for o in outs), "peak_bytes": max(o["peak_bytes"] for o in outs)}


def paper_workloads(profile: str = "paper") -> dict:
    """Per paper, the training its tables' runs do under ``profile``: ``{"runs", "rounds", "passes":
    {(dataset, model, batch_size): sample passes}, "skipped"}``, a sample pass being one training sample
    through one forward and backward pass (rounds × participating clients' samples × local epochs).
    Left out: evaluation, server-side steps (FEDIC's distillation), methods' extra passes (MOON's)."""
    from collections import Counter

    from fedlib.data import DATASETS, load_dataset
    from fedlib.repro.spec.paper import all_papers

    sizes: dict = {}

    def train_size(c: Config) -> int:
        spec = DATASETS[c.dataset]
        if spec.num_train is None:  # generated or natural-client data: its size depends on the config
            key = (c.dataset, c.num_clients, c.synthetic_alpha, c.synthetic_beta, c.seed)
            if key not in sizes:
                sizes[key] = len(load_dataset(c.dataset, c.data_root, synthetic_alpha=c.synthetic_alpha,
                                              synthetic_beta=c.synthetic_beta, num_clients=c.num_clients,
                                              seed=c.seed).train_y)
            return sizes[key]
        return min(spec.num_train, c.max_train_samples or spec.num_train)

    out = {}
    for name, companion in sorted(all_papers().items()):
        prof = companion.profile(profile)
        configs = {}
        for table in companion.tables:
            for cell in prof.table_cells(table):
                for seed in prof.seeds_for(table) if cell["config"] is not None else ():
                    cfg = {**cell["config"], "seed": cell["config"].get("seed", seed)}
                    configs[json.dumps(cfg, sort_keys=True, default=str)] = cfg
        passes, rounds, skipped = Counter(), 0, 0
        for cfg in configs.values():
            c = Config.from_dict(cfg)
            try:
                n = train_size(c)
            except FileNotFoundError:  # a natural-client dataset that is not here: left out, counted
                skipped += 1
                continue
            # FedConcat trains its encoders for encoder_rounds (every cluster over its members: all the
            # clients), then only a classifier on frozen features (cheap, left out)
            trained = c.encoder_rounds if c.method.startswith("fedconcat") else c.rounds
            rounds += trained
            passes[(c.dataset, c.model, c.batch_size)] += trained * n * c.participation * c.local_epochs
        out[name] = {"runs": len(configs), "rounds": rounds, "passes": passes, "skipped": skipped}
    return out


def sample_seconds(dataset: str, model: str, batch: int, device: str, repeats: int = 5) -> float:
    """Seconds per training sample of one model's forward + backward + SGD step on a batch of ``batch``
    random inputs of the dataset's shape (one thread on the CPU, as fedlib runs train)."""
    from fedlib.data import DATASETS
    from fedlib.models import build_model

    spec = DATASETS[dataset]
    net = build_model(model, spec.num_classes, spec.input_shape).to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(batch, *spec.input_shape, generator=gen).to(device)
    y = torch.randint(0, spec.num_classes, (batch,), generator=gen).to(device)
    best = float("inf")
    with single_thread():
        for i in range(repeats + 1):
            _sync(device)
            start = time.perf_counter()
            opt.zero_grad()
            torch.nn.functional.cross_entropy(net(x), y).backward()
            opt.step()
            _sync(device)
            if i:
                best = min(best, time.perf_counter() - start)
    return best / batch


def paper_hours(device: str, cpu_batch: int = 16) -> list[str]:
    """Device-hours of each paper's tables under the paper profile: sample passes × measured seconds
    per sample, per (dataset, model, batch); on the CPU a batch of at most ``cpu_batch`` is timed."""
    work = paper_workloads()
    unit: dict = {}
    lines = ["| paper | table runs | rounds | sample passes (10⁹) | device-hours |", "|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for name, w in work.items():
        hours = 0.0
        for (dataset, model, batch), passes in w["passes"].items():
            timed = batch if device.startswith("cuda") else min(batch, cpu_batch)
            if (dataset, model, timed) not in unit:
                unit[(dataset, model, timed)] = sample_seconds(dataset, model, timed, device)
            hours += passes * unit[(dataset, model, timed)] / 3600
        left = f" ({w['skipped']} runs left out: their data are absent)" if w["skipped"] else ""
        lines.append(f"| {name} | {w['runs']}{left} | {w['rounds']:,} | "
                     f"{sum(w['passes'].values()) / 1e9:.1f} | {hours:,.0f} |")
        print(lines[-1], flush=True)
    lines += ["", "seconds per training sample (forward + backward + SGD step):", "",
              "| dataset | model | batch timed | µs/sample |", "|---|---|---|---|"]
    lines += [f"| {d} | {m} | {b} | {1e6 * t:.0f} |" for (d, m, b), t in sorted(unit.items())]
    print("\n".join(lines[-len(unit) - 4:]), flush=True)
    return lines


def _device_name(device: str) -> str:
    if device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(device)} (torch {torch.__version__}, CUDA {torch.version.cuda})"
    return f"CPU {platform.processor() or platform.machine()}, {os.cpu_count()} cores (torch {torch.__version__})"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="cuda (default), cuda:N or cpu")
    parser.add_argument("--tiny", action="store_true", help="tiny sizes, 1 timed round; writes nothing")
    parser.add_argument("--rounds", type=int, default=None, help="timed rounds per case (default 3, tiny 1)")
    parser.add_argument("--clients", default=None, help="client counts, comma-separated (default 20,100; tiny 2,4)")
    parser.add_argument("--share", default=None, help="runs sharing the device, comma-separated (default 1,2,4,8; "
                                                      "tiny 1,2; 0: not measured)")
    parser.add_argument("--train-samples", type=int, default=None,
                        help="a seeded subset of this many training samples (a round's cost grows with it: for "
                             "estimating the full setting's on a slow device)")
    parser.add_argument("--setting", default="fedlc", choices=sorted(SETTINGS),
                        help="fedlc: FedLC's CIFAR-10 Table 1 setting (default); pfl: pfl-research's CIFAR-10 "
                             "benchmark (1,000 clients, 50 a round)")
    parser.add_argument("--out", default=None,
                        help="results file (default benchmarks/results_bench_gpu.md: the leases' record, "
                             "results_gpu.md, is never overwritten; not with --tiny)")
    parser.add_argument("--paper-hours", action="store_true",
                        help="only the device-hours of each paper's tables under the paper profile, from the "
                             "measured seconds per training sample of its models (writes nothing)")
    parser.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--barrier", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 1 if args.tiny else 3
    if args.rounds < 1:
        parser.error(f"--rounds must be ≥ 1, got {args.rounds}")
    if args.worker is not None:
        return _worker(args)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error(f"--device {args.device}: CUDA is not available on this machine (use --device cpu)")
    if args.paper_hours:
        print(f"device: {_device_name(args.device)}\n", flush=True)
        paper_hours(args.device)
        return 0
    default_clients = "2,4" if args.tiny else ("1000" if args.setting == "pfl" else "20,100")
    clients = [int(c) for c in (args.clients or default_clients).split(",")]
    shares = [int(k) for k in (args.share or ("1,2" if args.tiny else "1,2,4,8")).split(",") if int(k) > 0]
    base = {**SETTINGS[args.setting], **(TINY if args.tiny else {}), "device": args.device}
    if args.tiny and args.setting == "pfl":
        base["participation"] = 0.5
    if args.train_samples is not None:
        base["max_train_samples"] = args.train_samples
    t0 = time.perf_counter()
    peak = peak_flops(args.device)
    subset = f"; a training subset of {base['max_train_samples']} samples (the paper: 50,000)" \
        if base.get("max_train_samples") else ""
    lines = [f"device: {_device_name(args.device)}{subset}", "",
             f"setting: {args.setting}; floor: one round's training FLOPs (FlopCounterMode) at the measured float32 "
             f"matrix-product rate ({peak / 1e12:.2f} TFLOP/s)", "",
             "| clients | engine | s/round | rounds/s | eval s | peak memory MiB | vectorized speed-up | GFLOP/round "
             "| floor s | × floor |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    for n in clients:
        res = {e: time_setting(Config.from_dict({**base, "num_clients": n, "engine": e}), args.rounds)
               for e in ENGINES}
        flops, floor = round_floor(Config.from_dict({**base, "num_clients": n}), peak)
        for e in ENGINES:
            r = res[e]
            speedup = f"{res['sequential']['round_s'] / r['round_s']:.2f}" if e == "vectorized" else ""
            lines.append(f"| {n} | {e} | {r['round_s']:.3f} | {1 / r['round_s']:.2f} | {r['eval_s']:.3f} | "
                         f"{r['peak_bytes'] / 2**20:.0f} | {speedup} | {flops / 1e9:.1f} | {floor:.4f} | "
                         f"{r['round_s'] / floor:.1f} |")
            print(lines[-1], flush=True)
    if shares:
        lines += ["", f"runs sharing one device ({clients[0]} clients, vectorized):", "",
                  "| runs k | summed rounds/s | × one run | peak memory per run MiB |", "|---|---|---|---|"]
        print("\n".join(lines[-5:]), flush=True)
    one = None
    for k in shares:
        s = share(Config.from_dict({**base, "num_clients": clients[0], "engine": "vectorized"}), k, args.rounds)
        one = one or s["rounds_per_s"]
        lines.append(f"| {k} | {s['rounds_per_s']:.2f} | {s['rounds_per_s'] / one:.2f} | "
                     f"{s['peak_bytes'] / 2**20:.0f} |")
        print(lines[-1], flush=True)
    lines.append(f"\n{time.perf_counter() - t0:.0f} s in all; `python benchmarks/bench_gpu.py "
                 f"{' '.join(argv if argv is not None else sys.argv[1:])}`")
    if not args.tiny:
        out = Path(args.out) if args.out else Path(__file__).resolve().parent / "results_bench_gpu.md"
        out.write_text("# bench_gpu.py\n\n" + "\n".join(lines) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
