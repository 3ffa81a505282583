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
store and writes each table's GPU runs as :func:`fedlib.repro.run.cells.record` does.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import json
import math
import os
import platform
import subprocess
import sys
import tarfile
import time
import tomllib
import warnings
from dataclasses import dataclass
from pathlib import Path

from .artefacts.provenance import code_fingerprint, commit_of_code, git_commit, repo_root
from .run.tiny import tiny_config  # (a carry's check trains it too: fedlib.repro.carry)

__all__ = ["Job", "load_queue", "queue_jobs", "check", "plan", "measure", "best_share", "train", "write_outputs",
           "import_lease", "lease_commit", "prune_superseded", "pack_data", "unpack_data", "DEFAULT_QUEUE", "main"]

#: The queue a lease trains unless ``--queue`` names another.
DEFAULT_QUEUE = Path(__file__).resolve().parents[1] / "papers" / "lease_queue.toml"
MIB = 2 ** 20
FILE_LIMIT = 16 * MIB  # one file brought back from the device
#: Folders (under the data root) a dataset's loader reads, the first one present is packed.
DATA_FOLDERS = {"cifar10": ("cifar10", "cifar-10-batches-py"), "cifar100": ("cifar-100-python",),
                "mnist": ("MNIST/raw",), "fmnist": ("FashionMNIST/raw",), "svhn": ("train_32x32.mat",)}
_ENGINES = ("vectorized", "compiled", "sequential")
#: Rounds each run of a measured pack trains: enough for the k runs to overlap after their serialised
#: setups (the 2026-11-26 lease measured 3-round packs that never overlapped: 2.26 rounds/s for 2 runs
#: that then trained at 1.1 together).
SHARE_ROUNDS = 6


# ----------------------------------------------------------------------------------------- the queue
@dataclass
class Job:
    """One queued run: where it comes from (``label``: paper, table or ladder, row, column, seed) and its
    configuration (a dict, on the lease's device; None: the profile does not run it, ``note`` says why)."""

    label: dict
    config: dict | None
    note: str = ""

    @property
    def name(self) -> str:
        lab = self.label
        return (f"{lab['paper']} {lab['source']} {lab['row']}/{lab['column']} seed {lab['seed']}"
                + (f" in {lab['precision']}" if lab.get("precision") else "")
                + (f" ({lab['engine']} engine)" if lab.get("engine") else ""))


def load_queue(path=None) -> tuple[dict, list[dict]]:
    """``([lease] settings, [[run]] entries)`` of a queue file; an unknown kind or key is an error naming it."""
    path = Path(path or DEFAULT_QUEUE)
    data = tomllib.loads(path.read_text())
    from .budget.costs import GPU_MEMORY_BUDGETS, GPU_MEMORY_FORMATS

    settings = {"profile": "paper", "engines": ["vectorized"], "precisions": ["float32"], "checkpoint_every": 5,
                "pack": "streams", "memory_budget_gb": GPU_MEMORY_BUDGETS[0],
                "memory_formats": [GPU_MEMORY_FORMATS[0]], "order": "file", **data.get("lease", {})}
    from ..precision import PRECISIONS

    bad = [e for e in settings["engines"] if e not in _ENGINES] + \
          [p for p in settings["precisions"] if p not in PRECISIONS]
    if bad or not settings["engines"] or not settings["precisions"]:
        raise ValueError(f"{path}: [lease] engines must be among {_ENGINES} and precisions among {PRECISIONS}, "
                         f"each non-empty, got {settings['engines']} / {settings['precisions']}")
    if settings["memory_budget_gb"] not in GPU_MEMORY_BUDGETS:
        raise ValueError(f"{path}: [lease] memory_budget_gb must be one of {GPU_MEMORY_BUDGETS} (the budgets whose GPU "
                         f"runs the tables read: fedlib.repro.budget.costs.GPU_MEMORY_BUDGETS), got "
                         f"{settings['memory_budget_gb']!r}")
    settings["memory_budget_gb"] = float(settings["memory_budget_gb"])
    formats = settings["memory_formats"]
    if not isinstance(formats, list) or not formats or any(f not in GPU_MEMORY_FORMATS for f in formats):
        raise ValueError(f"{path}: [lease] memory_formats must be a non-empty list among {GPU_MEMORY_FORMATS} (the "
                         f"layouts whose GPU runs the tables read: fedlib.repro.budget.costs.GPU_MEMORY_FORMATS), got "
                         f"{formats!r}")
    if settings["order"] not in ("file", "plan"):
        raise ValueError(f"{path}: [lease] order must be 'file' or 'plan' (the GPU decisions of "
                         f"fedlib.repro.budget.decision first, cheapest first), got {settings['order']!r}")
    if settings["pack"] not in ("streams", "processes"):
        raise ValueError(f"{path}: [lease] pack must be 'streams' or 'processes', got {settings['pack']!r}")
    entries = data.get("run", [])
    known = {"cell": {"kind", "paper", "table", "rows", "columns", "seeds", "precision", "engine"},
             "ladder": {"kind", "paper", "seeds"}}
    for i, e in enumerate(entries):
        kind = e.get("kind")
        if kind not in known:
            raise ValueError(f"{path}: run {i}: kind must be 'cell' or 'ladder', got {kind!r}")
        extra = set(e) - known[kind]
        if extra or "paper" not in e or (kind == "cell" and "table" not in e):
            raise ValueError(f"{path}: run {i} ({kind}) takes {sorted(known[kind])} (paper required"
                             f"{', table too' if kind == 'cell' else ''}), got {sorted(e)}")
        if e.get("precision", "float32") not in PRECISIONS:
            raise ValueError(f"{path}: run {i}: precision must be one of {', '.join(PRECISIONS)}, "
                             f"got {e['precision']!r}")
        if e.get("engine", "vectorized") not in _ENGINES:
            raise ValueError(f"{path}: run {i}: engine must be one of {', '.join(_ENGINES)}, got {e['engine']!r}")
    return settings, entries


def _profile(paper: str, name: str, device: str):
    from .spec.paper import get_paper

    return dataclasses.replace(get_paper(paper).profile(name), device=device)


def _entry_jobs(entry: dict, profile: str, device: str) -> list[Job]:
    from .run.cells import cell_jobs

    paper = entry["paper"]
    prof = _profile(paper, profile, device)
    if entry["kind"] == "cell":
        cells = cell_jobs(paper, entry["table"], profile=profile, rows=entry.get("rows"),
                          columns=entry.get("columns"), device=device, precision=entry.get("precision"))
        source = entry["table"]
        seeds = entry.get("seeds") or prof.seeds_for(entry["table"])
        cells = [{"row": c["row"], "column": c["column"], "config": c["config"], "note": c["note"]} for c in cells]
    else:
        from .budget.ladder import ladder_cells, ladder_seeds, spec_for

        spec = spec_for(paper)
        all_cells, _ = ladder_cells(spec, prof)
        top = max(c["rung"] for c in all_cells)
        cells = [{"row": c["method"], "column": f"{spec.column} rung {top}", "config": c["config"], "note": c["note"]}
                 for c in all_cells if c["rung"] == top]
        source, seeds = "budget_ladder", entry.get("seeds") or ladder_seeds(spec, prof)
    jobs = []
    # an entry's own precision and engine hold whatever the lease trains the others in (the lease's: the run's
    # "precision" and "engine" absent, as the tables configure a cell)
    own = {k: entry[k] for k in ("precision", "engine") if k in entry}
    for seed in seeds:  # seed by seed, the rows of each seed together: a cut-short lease leaves pairs
        for c in cells:
            cfg = None if c["config"] is None else {**c["config"], "device": device, "seed": int(seed), **own}
            jobs.append(Job({"paper": paper, "source": source, "kind": entry["kind"], "row": c["row"],
                             "column": c["column"], "seed": int(seed), **own}, cfg, c["note"]))
    return jobs


def queue_jobs(entries: list[dict], *, profile: str = "paper", device: str = "cuda") -> list[Job]:
    """The queue's runs in priority order, on ``device``; a run an earlier entry queues already (equal store
    key content) keeps its first place (its later duplicates get a note and no config)."""
    from .run.grid import _identity

    seen: dict[str, str] = {}
    out = []
    for entry in entries:
        for job in _entry_jobs(entry, profile, device):
            if job.config is not None:
                ident = _identity(job.config)
                if ident in seen:
                    job = dataclasses.replace(job, config=None, note=f"the same run as {seen[ident]}")
                else:
                    seen[ident] = job.name
            out.append(job)
    return out


def _with_lease(cfg: dict, engine: str, precision: str, checkpoint_every: int,
                memory_budget_gb: float | None = None, memory_format: str | None = None) -> dict:
    """A queued run as the lease trains it: its checkpoints, ``engine`` and ``precision`` unless its queue
    entry names its own, and the lease's ``memory_budget_gb`` and ``memory_format`` (None: the configuration's)."""
    budget = {} if memory_budget_gb is None or "memory_budget_gb" in cfg else {"memory_budget_gb": memory_budget_gb}
    layout = {} if memory_format is None or "memory_format" in cfg else {"memory_format": memory_format}
    return {**cfg, "engine": cfg.get("engine") or engine, "precision": cfg.get("precision") or precision,
            "checkpoint_every": int(checkpoint_every), **budget, **layout}


# ------------------------------------------------------------------------------ --check and --dry-run
def _meta_round(tiny: dict) -> str:
    """One round with the data and the parameters on PyTorch's ``meta`` device: ``"ok"``, ``"reached a host
    read"`` (a meta tensor cannot be read; every device step before it matched), or raises a device mismatch."""
    import torch

    from ..config import Config
    from ..experiment import prepare
    from ..simulation import run_round

    cfg = Config.from_dict(tiny)
    exp = prepare(cfg).data_on("meta")
    state = exp.initial_state()
    state = state.replace(params={k: v.to("meta") for k, v in state.params.items()})
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run_round(exp, state, 1)
    except (RuntimeError, NotImplementedError, ValueError, TypeError, IndexError) as err:
        text = str(err)
        if ("device" in text and "meta" in text and ("expected" in text.lower() or "same device" in text)) or \
                ("cpu" in text and "meta" in text):
            raise RuntimeError(f"device mismatch on the meta device: {text.splitlines()[0]}") from err
        return "reached a host read"
    del torch
    return "ok"


def check(jobs: list[Job], settings: dict, *, log=print) -> list[dict]:
    """Every distinct queued configuration: validated as the lease trains it (on its device, each allowed
    engine, precision and layout), then one round of :func:`tiny_config` on the CPU under each allowed engine in
    each allowed layout, and one on the meta device.
    Returns one row per configuration (``ok`` False with the error where something failed)."""
    from ..config import Config
    from ..simulation import simulate

    rows, seen = [], set()
    for job in jobs:
        if job.config is None:
            continue
        shape = json.dumps({k: job.config.get(k) for k in ("dataset", "model", "method", "partition")}, sort_keys=True)
        if shape in seen:
            continue
        seen.add(shape)
        row = {"run": job.name, "method": job.config.get("method"), "dataset": job.config.get("dataset"), "ok": True}
        t0 = time.perf_counter()
        try:
            formats = settings["memory_formats"]
            for engine in settings["engines"]:
                for precision in settings["precisions"]:
                    for layout in formats:
                        Config.from_dict(_with_lease(job.config, engine, precision, settings["checkpoint_every"],
                                                     settings.get("memory_budget_gb"), layout))
            tiny = tiny_config(job.config)
            # every engine the lease may choose trains the tiny round here (a compiled one compiles too), in every
            # layout: the lease may pair any engine with any layout (a queue entry's own engine with the layout the
            # measuring minute chose)
            engines = list(dict.fromkeys([tiny.get("engine", "vectorized"), *settings["engines"]]))
            for engine, layout in [(e, f) for f in formats for e in engines]:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = simulate(Config.from_dict({**tiny, "engine": engine, "memory_format": layout}),
                                   store=None, progress=False)
                row.setdefault("tiny_accuracy", out["summary"]["final_accuracy"])
                row.setdefault("engines", []).append(engine if layout == "model" else f"{engine} {layout}")
            row["meta"] = _meta_round(tiny)
        except Exception as err:  # noqa: BLE001 -- reported per configuration
            row.update(ok=False, error=f"{type(err).__name__}: {err}")
        row["s"] = round(time.perf_counter() - t0, 1)
        log(f"{'ok  ' if row['ok'] else 'FAIL'} {row['run']}: {row.get('error') or row.get('meta')} ({row['s']} s)")
        rows.append(row)
    return rows


def plan(jobs: list[Job], minutes: float, *, slots: int = 1, measure_s: float = 60.0, reserve_s: float = 45.0,
         profile: str = "paper", engine: str = "vectorized", precision: str = "float32", checkpoint_every: int = 5,
         store=None, memory_budget_gb: float | None = None, memory_format: str | None = None) -> list[dict]:
    """What a lease of ``minutes`` would train: the queued runs in order on ``slots`` sharing the device, each
    taking the cost model's GPU estimate (a run alone, in ``precision``) × ``slots``: packs were measured no
    faster than one run alone (2026-11-26, ``benchmarks/results_gpu.md``), plus its engine's first-round compile
    (:data:`fedlib.repro.run.pack.FIRST_ROUND_EXTRA_S`); a run without an estimate takes the
    rest of the lease in its slot.  With ``store`` (what the lease resumes from): a run finished there is
    skipped, one with a checkpoint costs only its rounds left.  Rows: run, est. GPU-min, start and end minute,
    and ``finishes`` / ``reaches ≈ p %`` / ``not started`` / ``finished in the store``."""
    from ..config import Config
    from .run.cells import _read_checkpoint
    from .run.pack import FIRST_ROUND_EXTRA_S
    from .spec.paper import get_paper

    horizon = minutes * 60 - measure_s - reserve_s
    free = [measure_s] * slots
    rows = []
    for job in jobs:
        if job.config is None:
            rows.append({"run": job.name, "est_gpu_min": None, "outcome": job.note or "not run"})
            continue
        cfg = _as_trained(job, store, engine, precision, checkpoint_every, memory_budget_gb, memory_format)
        cost = get_paper(job.label["paper"]).profile(profile).cost
        est = cost.seconds(cfg, gpu=True) if cost is not None else None
        done, resumes = 0, ""
        if store is not None:
            key = store.key(Config.from_dict(cfg))
            if store.load_result(key) is not None:
                rows.append({"run": job.name, "est_gpu_min": 0.0, "outcome": "finished in the store"})
                continue
            ckpt = _read_checkpoint(store.entry(key))  # read only: a GPU's checkpoint, read on a CPU
            done = int(((ckpt or {}).get("stage_state") or {}).get("round", 0))
            resumes = f"resumes at round {done}: " if done else ""
            if est is not None and done:
                est *= max(0.0, 1.0 - done / int(cfg.get("rounds", 400)))
        if est is not None:  # a compiled run's first round compiles (a resumed one too: a new process)
            est += FIRST_ROUND_EXTRA_S.get(cfg["engine"], 0.0)
        est = None if est is None else est * slots
        slot = min(range(slots), key=lambda s: free[s])
        start = free[slot]
        if start >= measure_s + horizon:
            rows.append({"run": job.name, "est_gpu_min": None if est is None else est / 60, "start_min": None,
                         "outcome": "not started"})
            continue
        end = math.inf if est is None else start + est
        free[slot] = end
        cut = measure_s + horizon
        left = 1.0 - done / int(cfg.get("rounds", 400))
        outcome = resumes + ("finishes" if end <= cut else "reaches ? % (GPU time not measured)" if est is None
                             else f"reaches ≈ {100 * (1 - left + left * (cut - start) / est):.0f} %")
        rows.append({"run": job.name, "est_gpu_min": None if est is None else est / 60, "start_min": start / 60,
                     "end_min": None if math.isinf(end) else end / 60, "outcome": outcome})
    return rows


# ------------------------------------------------------------------------------------------ data parts
def queue_datasets(jobs: list[Job]) -> list[str]:
    """The datasets the queued runs read (their own and a named D_ulb), in queue order."""
    out = []
    for job in jobs:
        if job.config is None:
            continue
        for name in (job.config.get("dataset"), job.config.get("server_unlabeled")):
            if name in DATA_FOLDERS and name not in out:
                out.append(name)
    return out


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()


#: MiB a data part where the working tree's size is unknown: a call carries at most 64 MiB with the working tree
#: (≈ 31 MB on 2026-11-26, 39 MB with that day's second bring-back); 44 MiB parts were refused beside a 22 MB tree,
#: 33 MiB parts (CIFAR-10 in four) travelled.
PART_MIB = 33.0
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


def pack_data(datasets: list[str], dest, *, part_mib: float = PART_MIB, root=None) -> dict:
    """The files of ``datasets`` (under the data root) as one gzipped tar, cut into parts of ≤ ``part_mib`` MiB
    (``dest/parts/data-NN``) with ``dest/manifest.json`` (each part's and the whole's sha256, the commit).
    A dataset absent here is an error naming it.  Returns the manifest."""
    from ..data import data_root

    base, dest = data_root(root), Path(dest)
    if not part_mib > 0:
        raise ValueError(f"part_mib must be > 0, got {part_mib!r}")
    folders, missing = [], []
    for name in datasets:
        found = next((f for f in DATA_FOLDERS.get(name, ()) if (base / f).exists()), None)
        (folders.append(found) if found else missing.append(name))
    if missing:
        raise FileNotFoundError(f"datasets {', '.join(missing)} are absent under the data root {base}")
    (dest / "parts").mkdir(parents=True, exist_ok=True)
    for old in (dest / "parts").glob("data-*"):
        old.unlink()
    whole = dest / "data.tar.gz"
    with tarfile.open(whole, "w:gz", compresslevel=1) as tar:  # idx files shrink 4-5×, PNGs hardly
        for f in folders:
            tar.add(base / f, arcname=f)
    size, limit = whole.stat().st_size, int(part_mib * MIB)
    parts = []
    with open(whole, "rb") as fh:
        for i in range(math.ceil(size / limit)):
            part = dest / "parts" / f"data-{i:02d}"
            part.write_bytes(fh.read(limit))
            parts.append({"name": part.name, "bytes": part.stat().st_size, "sha256": _sha256_file(part)})
    manifest = {"datasets": datasets, "folders": folders, "bytes": size, "sha256": _sha256_file(whole),
                "parts": parts, "commit": git_commit(), "part_mib": part_mib}
    whole.unlink()
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def unpack_data(parts_dir, dest, manifest=None) -> dict:
    """Check every part of ``manifest`` (default ``parts_dir/manifest.json``) against its sha256, join them,
    check the whole, and unpack it into ``dest`` (a data root).  A part missing or wrong is an error
    naming it, before anything is unpacked.  Returns the manifest."""
    parts_dir, dest = Path(parts_dir), Path(dest)
    manifest = json.loads(Path(manifest or parts_dir / "manifest.json").read_text())
    bad = [p["name"] for p in manifest["parts"]
           if not (parts_dir / p["name"]).exists() or _sha256_file(parts_dir / p["name"]) != p["sha256"]]
    if bad:
        raise ValueError(f"data parts missing or corrupt in {parts_dir}: {', '.join(bad)} (of "
                         f"{len(manifest['parts'])}; carry each with its own call: scripts/lease.sh stash)")
    digest, buffer = hashlib.sha256(), io.BytesIO()
    for p in manifest["parts"]:
        blob = (parts_dir / p["name"]).read_bytes()
        digest.update(blob)
        buffer.write(blob)
    if digest.hexdigest() != manifest["sha256"]:
        raise ValueError("the joined data parts fail their checksum")
    dest.mkdir(parents=True, exist_ok=True)
    buffer.seek(0)
    with tarfile.open(fileobj=buffer, mode="r") as tar:
        tar.extractall(dest, filter="data")
    return manifest


# ------------------------------------------------------------------------------- measure and train
def _device_name(device: str) -> str:
    import torch

    if device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(torch.device(device))} (torch {torch.__version__}, CUDA {torch.version.cuda})"
    return f"CPU {platform.processor() or platform.machine()}, {os.cpu_count()} cores (torch {torch.__version__})"


def _round_seconds(cfg: dict, rounds: int = 2) -> float:
    """Seconds of one round of ``cfg`` on its device (the best of ``rounds`` after one warm-up round)."""
    import torch

    from ..config import Config
    from ..experiment import prepare
    from ..precision import precision_scope
    from ..simulation import run_round, single_thread

    config = Config.from_dict(cfg)
    exp = prepare(config).data_on()
    state, best = exp.initial_state(), math.inf
    sync = torch.cuda.synchronize if config.device.startswith("cuda") else (lambda: None)
    with single_thread(), precision_scope(config.precision, config.device), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(1, rounds + 2):
            sync()
            t0 = time.perf_counter()
            state = run_round(exp, state, r).state
            sync()
            if r > 1:
                best = min(best, time.perf_counter() - t0)
    return best


def measure(cfg: dict, *, precisions, shares=(1, 2, 4, 8), budget_s: float = 60.0, store_root=None,
            pack: str = "streams", log=print, engines=(), memory_formats=()) -> dict:
    """On ``cfg``'s device: seconds a round of each engine × precision × layout the lease may choose (``engines``
    × ``precisions`` the device has × ``memory_formats``), then, for the record, of the other engines and
    precisions in the first layout, then the summed rounds/s of packs of k copies (different seeds) of ``cfg``
    for k in ``shares``, until ``budget_s`` is spent.  A row whose engine compiles first
    (:data:`~fedlib.repro.run.pack.FIRST_ROUND_EXTRA_S`) starts only where its compile fits what is left.
    Returns ``{"rounds": [...], "shares": [...], "best": {...}}``: ``best`` is the fastest allowed engine,
    precision and layout (none timed: the first the device has), its ``round_s`` (None if untimed) and the
    ``slots`` to train with (:func:`best_share`)."""
    import tempfile

    from ..config import Config
    from ..precision import CUDA_ONLY, PRECISIONS
    from ..store import Store
    from .run.pack import FIRST_ROUND_EXTRA_S, pack_rate, run_pack

    t0, out = time.perf_counter(), {"rounds": [], "shares": []}
    device = cfg["device"]
    here = [p for p in PRECISIONS if device.startswith("cuda") or p not in CUDA_ONLY]
    formats = list(memory_formats) or [cfg.get("memory_format", "model")]
    # the queue's allowed engines, precisions and layouts first; the other engines and precisions on a GPU only,
    # for the record (a compile takes seconds to a minute, which a CPU's short measuring would overrun)
    others = [e for e in _ENGINES if e not in engines] if device.startswith("cuda") or not engines else []
    allowed = [(e, p, f) for e in engines for p in precisions if p in here for f in formats]
    record = [(e, p, formats[0]) for e in [*engines, *others] for p in here if (e, p, formats[0]) not in allowed]
    for engine, precision, layout in [*allowed, *record]:
        row = {"engine": engine, "precision": precision, "memory_format": layout}
        spent = time.perf_counter() - t0
        if spent > budget_s:
            row["note"] = "not measured: the measuring minute was spent"
        elif spent + FIRST_ROUND_EXTRA_S.get(engine, 0.0) > budget_s:
            row["note"] = f"not measured: its compile (≈ {FIRST_ROUND_EXTRA_S[engine]:g} s) would overrun the minute"
        else:
            try:
                row["round_s"] = _round_seconds({**cfg, "engine": engine, "precision": precision,
                                                 "memory_format": layout})
            except Exception as err:  # noqa: BLE001 -- a precision a device lacks: recorded
                row["note"] = f"failed: {type(err).__name__}: {err}"
        log(f"measure: {engine} {precision} {layout}: {row.get('round_s', row.get('note'))}")
        out["rounds"].append(row)
    timed = [r for r in out["rounds"]
             if "round_s" in r and (r["engine"], r["precision"], r["memory_format"]) in allowed]
    if not timed and not engines:  # nothing allowed named: the fastest of the queue's precisions, any engine
        timed = [r for r in out["rounds"] if "round_s" in r and r["precision"] in precisions]
    chosen = [p for p in precisions if p in here]
    best = min(timed, key=lambda r: r["round_s"]) if timed else {"engine": cfg.get("engine", "vectorized"),
                                                                  "precision": chosen[0] if chosen else "float32",
                                                                  "memory_format": formats[0]}
    setting = {k: best[k] for k in ("engine", "precision", "memory_format")}
    out["best"] = {**setting, "round_s": best.get("round_s")}
    mode = pack if pack == "processes" else "streams" if device.startswith("cuda") else "turns"
    for k in shares:
        if time.perf_counter() - t0 > budget_s:
            out["shares"].append({"k": k, "note": "not measured: the measuring minute was spent"})
            continue
        configs = [Config.from_dict({**cfg, **setting, "rounds": SHARE_ROUNDS, "seed": 1000 + i,
                                     "eval_every": SHARE_ROUNDS, "checkpoint_every": SHARE_ROUNDS})
                   for i in range(k)]
        with tempfile.TemporaryDirectory(dir=store_root) as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            runs = run_pack(configs, Store(tmp), slots=k, mode=mode)
        row, rate = {"k": k, "mode": mode}, pack_rate(runs)
        if any(r.state != "finished" for r in runs):
            row["note"] = "failed: " + "; ".join(r.error.splitlines()[0] for r in runs if r.error)
        elif rate is None:
            row["note"] = f"not measured: the {k} runs never trained at the same time in {SHARE_ROUNDS} rounds"
        else:
            row["rounds_per_s"] = rate
        log(f"measure: {k} sharing: {row.get('rounds_per_s', row.get('note'))}")
        out["shares"].append(row)
    out["best"]["slots"] = best_share(out["shares"])
    out["seconds"] = time.perf_counter() - t0
    return out


def best_share(shares: list[dict], tolerance: float = 0.1) -> int:
    """The pack size to train with: the smallest k whose summed rounds/s is within ``tolerance`` of the
    best measured (1 where none was measured).  A larger pack that is no faster only finishes its runs
    later, and a lease cut short keeps finished runs, not half-trained ones."""
    rated = [s for s in shares if s.get("rounds_per_s")]
    if not rated:
        return 1
    top = max(s["rounds_per_s"] for s in rated)
    return min(s["k"] for s in rated if s["rounds_per_s"] >= (1 - tolerance) * top)


def _held_variant(store, cfg: dict) -> dict:
    """The engine, memory budget and layout a queued run (``cfg``: as the lease trains it) trains under: those an
    earlier lease finished (else checkpointed) it under (:func:`fedlib.repro.budget.costs.gpu_variant`), so that
    it is skipped or resumed, not started again under another key; else ``cfg``'s."""
    from .budget.costs import GPU_ENGINES, gpu_variant

    return gpu_variant(store, cfg)[0] if cfg["engine"] in GPU_ENGINES else {}


def _as_trained(job: Job, store, engine: str, precision: str, checkpoint_every: int,
                memory_budget_gb: float | None = None, memory_format: str | None = None) -> dict:
    """``job``'s configuration as the lease trains it: :func:`_with_lease`, under the engine, memory budget and
    layout that hold it in ``store`` (:func:`_held_variant`) where ``store`` is given."""
    cfg = _with_lease(job.config, engine, precision, checkpoint_every, memory_budget_gb, memory_format)
    return cfg if store is None else {**cfg, **_held_variant(store, cfg)}


def train(jobs: list[Job], store, *, engine: str, precision: str, checkpoint_every: int, slots: int,
          deadline: float, est_round_s: float = 0.0, pack: str = "streams", memory_budget_gb: float | None = None,
          memory_format: str | None = None, log=print) -> list[dict]:
    """Train the queued runs into ``store``, ``slots`` at a time (:func:`fedlib.repro.run.pack.run_pack`; on
    CUDA in the ``pack`` mode, ``streams`` -- one process -- or ``processes``, in turns on a CPU unless
    ``pack`` is ``processes``; methods refused by streams train in turns after the others, runs of another
    precision or engine -- a queue entry's own, or the engine an earlier lease started a run under -- in a pack
    of their own, queue order kept), each stopped at a checkpoint when the next would end after ``deadline``
    (``time.time()``).  Returns one row per job."""
    from ..config import Config
    from .run.pack import DeadlineStop, run_pack, seeds_global_rng

    configs = {i: Config.from_dict(_as_trained(j, store, engine, precision, checkpoint_every, memory_budget_gb,
                                               memory_format))
               for i, j in enumerate(jobs) if j.config is not None}
    device = next(iter(configs.values())).device if configs else "cpu"
    shared = [i for i, c in configs.items() if pack == "processes" or not seeds_global_rng(c)]
    first = pack if pack == "processes" else "streams" if device.startswith("cuda") else "turns"
    groups = []  # in queue order; a pack holds one precision and engine: a change of either starts the next pack
    for mode, members in ((first, shared),
                          ("turns", [i for i in configs if i not in shared])):
        for i in members:
            last = configs[groups[-1][1][-1]] if groups else None
            if groups and groups[-1][0] == mode and (last.precision, last.engine) == (configs[i].precision,
                                                                                       configs[i].engine):
                groups[-1][1].append(i)
            else:
                groups.append((mode, [i]))
    stop = DeadlineStop(deadline, max(est_round_s, 1e-3))

    def event(kind: str, run) -> None:
        if kind != "round":
            log(f"{kind}: {jobs[order[run.index]].name} ({run.state}, round {run.round})")

    rows = {i: {**j.label, "state": "not queued", "note": j.note} for i, j in enumerate(jobs) if j.config is None}
    for mode, members in groups:
        if not members:
            continue
        order = members
        runs = run_pack([configs[i] for i in members], store, slots=slots, mode=mode, stop=stop, on_event=event)
        for run in runs:
            i = members[run.index]
            rows[i] = {**jobs[i].label, "state": run.state, "round": run.round, "rounds": run.config.rounds,
                       "wall_s": round(run.wall_s, 1), "key": store.key(run.config), "error": run.error,
                       "s_per_round": (round(sorted(run.round_times[1:])[len(run.round_times[1:]) // 2], 3)
                                       if len(run.round_times) > 1 else None)}
    return [rows[i] for i in sorted(rows)]


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
        record["parts"].append({"name": path.name, "sha256": _sha256_file(path), "keys": [k for k, _ in part]})
    record["left_out"] = left
    for row in record["runs"]:  # the learning curve of every run, from its result or checkpoint
        if row.get("key"):
            row["curve"] = _curve(store, row["key"])
    (out_dir / "lease.json").write_text(json.dumps(record, indent=1, default=str))
    return record


def _curve(store, key: str) -> list[list]:
    from .run.cells import _read_checkpoint

    result = store.load_result(key)
    if result is not None:
        history = result["history"]
    else:
        ckpt = _read_checkpoint(store.entry(key)) or {}
        history = list(ckpt.get("history") or []) + list((ckpt.get("stage_state") or {}).get("history") or [])
    return [[h["round"], h["test_accuracy"]] for h in history if h.get("test_accuracy") is not None]


def unpack_store_parts(lease_dir, store) -> list[str]:
    """The store entries of a lease's tar parts (checked against ``lease.json``'s sha256) into ``store``;
    returns their keys.  Entries are written whole or not at all (a key already finished here is kept)."""
    lease_dir = Path(lease_dir)
    record = json.loads((lease_dir / "lease.json").read_text())
    keys = []
    for part in record.get("parts", []):
        path = lease_dir / part["name"]
        if part.get("pruned") and not path.exists():  # a later lease holds every entry (prune_superseded)
            continue
        if not path.exists() or _sha256_file(path) != part["sha256"]:
            raise ValueError(f"{path} is missing or fails its sha256 (lease.json)")
        with tarfile.open(path) as tar:
            for key in part["keys"]:
                if (store.entry(key) / "result.json").exists():
                    continue
                members = [m for m in tar.getmembers() if m.name.startswith(f"{key}/")]
                tar.extractall(store.root, members=members, filter="data")
                keys.append(key)
    return keys


def _reached(record: dict) -> dict[str, int]:
    """Each store key of a lease's record: how far its run got (a finished run counts as past any round)."""
    return {r["key"]: (10**9 if r.get("state") == "finished" else int(r.get("round") or 0))
            for r in record.get("runs", []) if r.get("key")}


def prune_superseded(leases_dir) -> list[str]:
    """Delete the store parts of earlier leases (folders of ``leases_dir``, oldest first by name) whose every
    entry a later lease's parts hold at least as far on; the part stays listed in the earlier ``lease.json``,
    marked ``"pruned": <the later folder>``, and resuming skips it.  The committed bring-backs then stay
    small enough to travel beside a data part.  Returns the deleted parts' paths."""
    folders = sorted(p for p in Path(leases_dir).iterdir() if (p / "lease.json").is_file())
    records = {f: json.loads((f / "lease.json").read_text()) for f in folders}
    removed = []
    for i, folder in enumerate(folders):
        rec, changed = records[folder], False
        reached = _reached(rec)
        for part in rec.get("parts", []):
            if part.get("pruned"):
                continue
            for later in reversed(folders[i + 1:]):
                held = {k for p in records[later].get("parts", []) if not p.get("pruned") for k in p["keys"]}
                got = _reached(records[later])
                if all(k in held and got.get(k, -1) >= reached.get(k, 0) for k in part["keys"]):
                    (folder / part["name"]).unlink(missing_ok=True)
                    part["pruned"] = later.name
                    removed.append(str(folder / part["name"]))
                    changed = True
                    break
        if changed:
            (folder / "lease.json").write_text(json.dumps(rec, indent=1, default=str))
    return removed


def lease_commit(rec: dict, root=None) -> str:
    """The commit a lease ran at: the record's, where git knew it on the device; else the commit whose
    ``fedlib`` files match the record's code fingerprint (the device's copy of the tree has no ``.git``);
    else ``"unknown"``."""
    commit = rec.get("commit") or "unknown"
    if commit == "unknown" and rec.get("code"):
        return commit_of_code(rec["code"], root) or "unknown"
    return commit


def import_lease(lease_dir, *, store=None, figures=None, log=print) -> dict:
    """On a developer machine: a lease's runs into ``store`` (None: the regeneration store), then, per
    paper table of the queue with runs in it, the table and curves of :func:`fedlib.repro.run.cells.record`
    into ``figures/<paper>/<profile>/gpu`` (``figures``: the repository's figures folder); ``lease.json``
    beside them.  Runs in another precision than float32 are recorded apart, into ``gpu-<precision>``
    (:func:`fedlib.repro.run.cells.gpu_folder`), with :func:`fedlib.repro.run.cells.precision_check` against
    the same runs in float32 where the store holds them; runs trained at another engine than the vectorized
    one are stored and listed in lease.json, not recorded (the profile's tables do not read them)."""
    from .run.cells import gpu_folder, precision_check
    from .run.cells import record as record_cells
    from .run.grid import as_store

    lease_dir, store = Path(lease_dir), as_store(store)
    rec = json.loads((lease_dir / "lease.json").read_text())
    rec["commit"] = lease_commit(rec)
    keys = unpack_store_parts(lease_dir, store)
    log(f"{len(keys)} store entries unpacked into {store.root}")
    from .carry import carry_store

    carry_store(store, log=log)  # a lease of an earlier code version: its runs under this code's keys, if carried
    figures = Path(figures) if figures is not None else repo_root() / "figures"
    chosen = rec.get("training", {})
    written = {}
    from .budget.costs import GPU_ENGINES

    if chosen.get("engine", "vectorized") not in GPU_ENGINES:
        log(f"trained at {chosen}: stored, not recorded into the profile's figures")
        return {"keys": keys, "written": written}
    trained_in = chosen.get("precision", "float32")  # a run whose queue entry named its own: that one
    tables: dict[tuple, dict] = {}
    for row in rec["runs"]:  # a run this lease trained, or one an earlier lease left in the store
        held = row.get("key") and store.entry(row["key"]).exists()
        if row.get("kind") != "cell" or not (row["state"] in ("finished", "stopped") or held):
            continue
        t = tables.setdefault((row["paper"], row["source"], row.get("precision") or trained_in),
                              {"rows": [], "columns": [], "seeds": []})
        for k, v in (("rows", row["row"]), ("columns", row["column"]), ("seeds", row["seed"])):
            if v not in t[k]:
                t[k].append(v)
    profile = rec.get("profile", "paper")
    for (paper, table, precision), sel in tables.items():
        out = figures / paper / profile / gpu_folder(precision)
        record_cells(paper, table, out, seeds=sel["seeds"], profile=profile, rows=sel["rows"], columns=sel["columns"],
                     device=rec.get("device", "cuda"), store=store,
                     device_name=(rec.get("device_name") or "").split(" (torch")[0] or None,  # as a result's summary
                     trained_at=rec.get("commit"), precision=precision)
        if precision != "float32":
            check = precision_check(paper, table, out, seeds=sel["seeds"], precision=precision, profile=profile,
                                    rows=sel["rows"], columns=sel["columns"], device=rec.get("device", "cuda"),
                                    store=store, trained_at=rec.get("commit"))
            log(f"{paper} {table}: {precision} against float32: {check['verdict']}")
        (out / "lease.json").write_text(json.dumps({k: v for k, v in rec.items() if k != "runs"} |
                                                   {"runs": [r for r in rec["runs"] if r["paper"] == paper]},
                                                   indent=1, default=str))
        written[f"{paper} {table}" + ("" if precision == "float32" else f" {precision}")] = str(out)
        log(f"{paper} {table}: {out}")
    return {"keys": keys, "written": written}


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
    record = {"device": device, "device_name": _device_name(device), "commit": commit or git_commit(),
              "code": code_fingerprint(),
              "profile": settings["profile"], "minutes": minutes, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "first_setting": first.name}
    formats = settings["memory_formats"]
    base = _with_lease(first.config, settings["engines"][0], "float32", settings["checkpoint_every"],
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
        from .budget.decision import gpu_entries

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
