"""A short GPU lease that finishes paper runs: measure, train a declared queue packed, stop in time, bring back.

A lent GPU comes for minutes, on a fresh machine, with at most 64 MiB carried in per call and 8 files of
16 MiB brought back.  This command spends such a lease on a declared queue of cells (data:
``fedlib/papers/lease_queue.toml``, in priority order)::

    python -m fedlib.repro.lease --minutes 12 --out DIR          # on the device: the whole lease
    python -m fedlib.repro.lease --check                         # here: every queued run builds, trains 1 tiny round
    python -m fedlib.repro.lease --dry-run --minutes 12          # here: the plan and its estimate
    python -m fedlib.repro.lease --pack-data .lease              # here: the queue's datasets in parts that travel
    python -m fedlib.repro.lease --import DIR                    # here: the lease's runs into the store and figures

On the device (``scripts/lease.sh`` runs it): the data parts are checked and joined (``--data-parts``);
the first minute measures the per-round time of every engine and precision on the queue's first
setting, then how many runs share the device best (a :mod:`fedlib.repro.run.pack` of k runs); the queue then
trains packed as measured, every run checkpointing (``checkpoint_every``), each stopped at a checkpoint
before the minutes run out.  ``DIR`` gets ``lease.json`` (device, commit, measurements, how far each run
got, its learning curve) and the runs' store entries in tar parts (``store-NN.tar``), at most
``--max-files`` files of 16 MiB.  ``--import DIR`` on a developer machine unpacks them into the results
store and writes each table's GPU runs as :func:`fedlib.repro.gpu_cells.record` does.

The lease's parts live beside this module: its queue (:mod:`fedlib.repro.lease_queue`), ``--check`` and
``--dry-run`` (:mod:`fedlib.repro.lease_plan`), the data parts (:mod:`fedlib.repro.lease_data`), measuring and
training on the device (:mod:`fedlib.repro.lease_train`) and bringing a lease back (:mod:`fedlib.repro.lease_import`).
This module holds a call's limits, the outputs written into them, the device side and the command line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from .artefacts.provenance import code_fingerprint, git_commit, repo_root
from .lease_data import MIB, PART_MIB, pack_data, queue_datasets, sha256_file, unpack_data
from .lease_import import import_lease, lease_commit, prune_superseded, unpack_store_parts
from .lease_plan import check, plan
from .lease_queue import DEFAULT_QUEUE, Job, load_queue, queue_jobs, with_lease
from .lease_train import best_share, device_name, measure, train

__all__ = ["Job", "load_queue", "queue_jobs", "check", "plan", "measure", "best_share", "train", "write_outputs",
           "import_lease", "lease_commit", "prune_superseded", "pack_data", "unpack_data", "DEFAULT_QUEUE", "main"]

FILE_LIMIT = 16 * MIB  # one file brought back from the device
#: MiB a call carries (the working tree and the carried paths together), and the room left unused for safety
CARRY_MIB, CARRY_SLACK_MIB = 64.0, 2.0


def part_mib_beside_tree(root=None) -> float:
    """The largest data part (MiB, whole) that travels beside this working tree in one call: 64 MiB less the
    tracked files' bytes (``git ls-files``; what the device copy holds, less untracked files) and a 2 MiB slack;
    :data:`PART_MIB` where git cannot list the tree.  Each committed bring-back shrinks it."""
    root = Path(root) if root is not None else repo_root()
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return PART_MIB
    tree = sum((root / f).stat().st_size for f in listed.decode().split("\0") if f and (root / f).is_file())
    room = math.floor(CARRY_MIB - CARRY_SLACK_MIB - tree / MIB)
    if room < 4:
        raise ValueError(f"the working tree holds {tree / MIB:.1f} MiB: no data part fits beside it in a call of "
                         f"{CARRY_MIB:g} MiB (prune benchmarks/leases: python -m fedlib.repro.lease --prune)")
    return float(room)


# ---------------------------------------------------------------------------------- bring back
def _entry_files(store, key: str) -> list[Path]:
    entry = store.entry(key)
    return sorted(p for p in entry.iterdir() if p.is_file() and not p.name.startswith(".")) if entry.exists() else []


def write_outputs(out_dir, record: dict, store, *, max_files: int = 7) -> dict:
    """``out_dir/lease.json`` (``record`` with the run rows' histories) and the runs' store entries in tar
    parts of ≤ 16 MiB (``store-NN.tar``, at most ``max_files − 1``): finished runs first, then the
    checkpoints of the furthest-got.  An entry that does not fit is listed in ``record["left_out"]``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ranked = sorted((r for r in record["runs"] if r.get("key") and r["state"] in ("finished", "stopped")),
                    key=lambda r: (r["state"] != "finished", -(r.get("round") or 0) / max(1, r.get("rounds") or 1)))
    parts, current, size, left = [], [], 0, []
    for row in ranked:
        files = _entry_files(store, row["key"])
        entry_size = sum(f.stat().st_size for f in files) + 2048 * (len(files) + 1)
        if entry_size > FILE_LIMIT - 10240:
            left.append({"key": row["key"], "why": f"{entry_size / MIB:.1f} MiB, over one file's 16 MiB"})
            continue
        if size + entry_size > FILE_LIMIT - 10240:
            parts.append(current)
            current, size = [], 0
        if len(parts) >= max_files - 1:
            left.append({"key": row["key"], "why": f"over {max_files - 1} parts"})
            continue
        current.append((row["key"], files))
        size += entry_size
    if current and len(parts) < max_files - 1:
        parts.append(current)
    record["parts"] = []
    for n, part in enumerate(parts):
        path = out_dir / f"store-{n:02d}.tar"
        with tarfile.open(path, "w") as tar:
            for key, files in part:
                for f in files:
                    tar.add(f, arcname=f"{key}/{f.name}")
        record["parts"].append({"name": path.name, "sha256": sha256_file(path), "keys": [k for k, _ in part]})
    record["left_out"] = left
    for row in record["runs"]:  # the learning curve of every run, from its result or checkpoint
        if row.get("key"):
            row["curve"] = _curve(store, row["key"])
    (out_dir / "lease.json").write_text(json.dumps(record, indent=1, default=str))
    return record


def _curve(store, key: str) -> list[list]:
    from .run.gpu_runs import read_checkpoint

    result = store.load_result(key)
    if result is not None:
        history = result["history"]
    else:
        ckpt = read_checkpoint(store.entry(key)) or {}
        history = list(ckpt.get("history") or []) + list((ckpt.get("stage_state") or {}).get("history") or [])
    return [[h["round"], h["test_accuracy"]] for h in history if h.get("test_accuracy") is not None]


# ------------------------------------------------------------------------------------------ the lease
def lease(jobs: list[Job], settings: dict, out_dir, *, minutes: float, device: str, store, measure_s: float = 60.0,
          reserve_s: float = 45.0, shares=(1, 2, 4, 8), max_files: int = 7, commit: str | None = None,
          log=print) -> dict:
    """The device side: measure on the first queued setting, train the queue packed until the minutes (from
    now) less ``reserve_s`` run out, write the outputs.  Returns the record."""
    start = time.time()
    deadline = start + minutes * 60 - reserve_s
    first = next((j for j in jobs if j.config is not None), None)
    if first is None:
        raise ValueError("the queue has no run to train")
    record = {"device": device, "device_name": device_name(device), "commit": commit or git_commit(),
              "code": code_fingerprint(),
              "profile": settings["profile"], "minutes": minutes, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "first_setting": first.name}
    formats = settings["memory_formats"]
    base = with_lease(first.config, settings["engines"][0], "float32", settings["checkpoint_every"],
                      settings["memory_budget_gb"], formats[0])
    m = measure(base, precisions=settings["precisions"], shares=shares, pack=settings.get("pack", "streams"),
                engines=settings["engines"], memory_formats=formats,
                budget_s=min(measure_s, max(0.0, deadline - time.time())), store_root=None, log=log)
    chosen = m["best"]  # the fastest allowed engine × precision × layout (none timed: the first the device has)
    training = {"engine": chosen["engine"], "precision": chosen["precision"], "slots": chosen["slots"],
                "checkpoint_every": settings["checkpoint_every"], "pack": settings.get("pack", "streams"),
                "memory_budget_gb": settings["memory_budget_gb"], "memory_format": chosen["memory_format"]}
    record.update(measurements=m, training=training)
    log(f"training: {training}")
    share = next((s for s in m["shares"] if s.get("k") == training["slots"] and "rounds_per_s" in s), None)
    est = training["slots"] / share["rounds_per_s"] if share else chosen["round_s"] or 0.0
    record["runs"] = train(jobs, store, engine=training["engine"], precision=training["precision"],
                           checkpoint_every=training["checkpoint_every"], slots=training["slots"], deadline=deadline,
                           est_round_s=est, pack=training["pack"], memory_budget_gb=training["memory_budget_gb"],
                           memory_format=training["memory_format"], log=log)
    if device.startswith("cuda"):  # what the runs trained in this process held at most (not a pack of processes)
        import torch

        record["peak_gib"] = round(torch.cuda.max_memory_allocated() / 2 ** 30, 2)
    record["wall_s"] = round(time.time() - start, 1)
    return write_outputs(out_dir, record, store, max_files=max_files)


def _print_rows(rows: list[dict], cols: list[str]) -> None:
    import pandas as pd

    frame = pd.DataFrame(rows)
    print(frame[[c for c in cols if c in frame]].to_string(index=False, float_format=lambda v: f"{v:.1f}"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedlib.repro.lease", description=__doc__.split("\n\n")[0])
    ap.add_argument("--queue", help=f"queue file (default {DEFAULT_QUEUE.relative_to(DEFAULT_QUEUE.parents[2])})")
    ap.add_argument("--minutes", type=float, help="wall minutes of the lease from the command's start")
    ap.add_argument("--out", help="folder for lease.json and the store parts (on the device: $OUT)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--store", help="results store the lease trains into (default: $FEDLIB_STORE or the regeneration "
                                    "store; with --import, the store the runs go into)")
    ap.add_argument("--data-parts", help="folder of the data parts and manifest.json: checked, joined and "
                                         "unpacked into --data-root before anything trains")
    ap.add_argument("--data-root", default="/tmp/fedlib-lease/data")
    ap.add_argument("--resume", action="append", default=[],
                    help="a folder of an earlier lease (lease.json, store parts): its entries into the store first, "
                         "so its runs resume from their checkpoints; repeat it for several leases, oldest first")
    ap.add_argument("--measure-s", type=float, default=60.0, help="seconds for measuring (default 60)")
    ap.add_argument("--reserve-s", type=float, default=45.0, help="seconds kept for writing the outputs (default 45)")
    ap.add_argument("--shares", default="1,2,4,8", help="pack sizes measured (default 1,2,4,8)")
    ap.add_argument("--slots", type=int, default=1, help="with --dry-run: runs sharing the device (default 1)")
    ap.add_argument("--pack", choices=("streams", "processes"),
                    help="how runs share the device: one process, a CUDA stream each, or a process each "
                         "(default: the queue's [lease] pack)")
    ap.add_argument("--max-files", type=int, default=7, help="files written into --out (default 7; 8 come back)")
    ap.add_argument("--commit", help="the commit the lease runs at (default: git; on the device, which has no git, "
                    "--import finds it from the record's code fingerprint)")
    ap.add_argument("--check", action="store_true", help="every queued configuration builds and trains one tiny "
                                                         "round on the CPU and on the meta device")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and its estimate; train nothing")
    ap.add_argument("--pack-data", metavar="DEST", help="pack the queue's datasets into parts under DEST")
    ap.add_argument("--part-mib", type=float, default=None,
                    help="with --pack-data: MiB a part (default: the most that fits a call beside the working tree)")
    ap.add_argument("--datasets", help="with --pack-data: comma-separated datasets (default: all the queue reads; "
                                       "a short lease reaches only the first entries)")
    ap.add_argument("--import", dest="import_dir", metavar="DIR", help="a lease's outputs into the store and figures")
    ap.add_argument("--prune", metavar="LEASES",
                    help="delete the store parts of earlier leases under LEASES that a later lease holds")
    ap.add_argument("--figures", help="with --import: the figures folder (default: the repository's)")
    a = ap.parse_args(argv)

    if a.import_dir:
        import_lease(a.import_dir, store=a.store, figures=a.figures)
        return 0
    if a.minutes is not None and not a.minutes > 0:
        ap.error(f"--minutes must be > 0, got {a.minutes}")
    settings, entries = load_queue(a.queue)
    if settings["order"] == "plan":  # what would decide an inconclusive claim on a GPU first, cheapest first
        from .artefacts.decision import gpu_entries

        entries = gpu_entries() + entries
    if a.pack:
        settings["pack"] = a.pack
    device = a.device  # --check too: the lease's configurations, made tiny on the CPU (tiny_config)
    jobs = queue_jobs(entries, profile=settings["profile"], device=device)
    if a.check:
        rows = check(jobs, settings)
        failed = [r for r in rows if not r["ok"]]
        print(f"{len(rows) - len(failed)} of {len(rows)} queued configurations build and train a tiny round")
        return 1 if failed else 0
    if a.dry_run:
        if a.minutes is None:
            ap.error("--dry-run needs --minutes")
        from .run.grid import as_store

        store = as_store(a.store) if a.store or a.resume else None
        for folder in a.resume if store is not None else ():
            unpack_store_parts(folder, store)
        if store is not None:
            from .carry import carry_store

            carry_store(store, log=lambda *_: None)
        engine, precision = settings["engines"][0], settings["precisions"][0]  # the lease's choice unmeasured
        rows = plan(jobs, a.minutes, slots=a.slots, measure_s=a.measure_s, reserve_s=a.reserve_s,
                    profile=settings["profile"], engine=engine, precision=precision,
                    checkpoint_every=settings["checkpoint_every"], store=store,
                    memory_budget_gb=settings["memory_budget_gb"], memory_format=settings["memory_formats"][0])
        _print_rows(rows, ["run", "est_gpu_min", "start_min", "end_min", "outcome"])
        fin = sum(r["outcome"].endswith("finishes") for r in rows)
        budget, layout = settings["memory_budget_gb"], settings["memory_formats"][0]
        print(f"\n{len(jobs)} queued runs, {engine} engine in {precision} ({budget:g} GB, layout {layout!r} for the "
              f"runs it starts; measured, the fastest of {settings['memory_formats']}); in "
              f"{a.minutes:g} min ({a.measure_s:g} s measuring, {a.reserve_s:g} s writing) with {a.slots} sharing the "
              f"device: {fin} finish (estimate: the cost model's GPU unit, a run alone on an H200, × the runs sharing"
              + (", less what the store holds" if store is not None else "; --store or --resume: less what an "
                 "earlier lease trained") + f"). Datasets: {', '.join(queue_datasets(jobs))}")
        return 0
    if a.pack_data:
        datasets = a.datasets.split(",") if a.datasets else queue_datasets(jobs)
        part_mib = a.part_mib if a.part_mib is not None else part_mib_beside_tree()
        manifest = pack_data(datasets, a.pack_data, part_mib=part_mib)
        print(json.dumps({k: v for k, v in manifest.items() if k != "parts"}, indent=1))
        for p in manifest["parts"]:
            print(f"{a.pack_data}/parts/{p['name']}: {p['bytes'] / MIB:.1f} MiB")
        return 0
    if a.prune:
        for path in prune_superseded(a.prune):
            print(f"pruned {path}")
        return 0
    if a.minutes is None or not a.out:
        ap.error("a lease needs --minutes and --out (or --check, --dry-run, --pack-data, --import)")
    t0 = time.time()
    commit = a.commit
    if a.data_parts:
        manifest = unpack_data(a.data_parts, a.data_root)
        os.environ["FEDLIB_DATA"] = str(a.data_root)
        print(f"data: {', '.join(manifest['datasets'])} checked and unpacked in {time.time() - t0:.0f} s")
    from .run.grid import as_store

    store = as_store(a.store)
    for folder in a.resume:  # oldest first: a later lease's checkpoint of a run replaces an earlier one's
        print(f"resumed {len(unpack_store_parts(folder, store))} entries from {folder}")
    if a.resume:  # runs of an earlier code version, under the keys this code gives them where a carry allows
        from .carry import carry_store

        print(f"{len(carry_store(store))} runs carried to this code version (benchmarks/carries/)")
    minutes = a.minutes - (time.time() - t0) / 60
    rec = lease(jobs, settings, a.out, minutes=minutes, device=device, store=store, measure_s=a.measure_s,
                reserve_s=a.reserve_s, shares=[int(k) for k in a.shares.split(",") if k], max_files=a.max_files,
                commit=commit)
    _print_rows(rec["runs"], ["paper", "source", "row", "column", "seed", "state", "round", "rounds", "s_per_round"])
    print(f"\nlease: {rec['wall_s']:.0f} s; {len(rec['parts'])} store parts, {len(rec['left_out'])} entries left out; "
          f"training {rec['training']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
