"""What a run costs, from measured unit costs, and which runs a CPU can afford.

A paper's ``paper`` profile can be GPU-days; on a machine without a GPU it should still run the
cells a CPU affords, say what every other cell would cost, and never start a regeneration that
runs for days by surprise.  This module holds the pieces:

* :class:`UnitCost` -- measured costs of one model (optionally one method on it): CPU seconds per
  client *sample-epoch* (one training sample seen once by a client), a fixed cost per run and a
  cost per round that does not scale with the clients' data (server steps; or, for a dataset
  whose clients come with it, the whole round).  Measured by ``benchmarks/unit_costs.py``;
* :class:`CostModel` -- a profile's unit costs and its CPU limit per run;
  :meth:`CostModel.seconds` estimates one run, :meth:`CostModel.gate` decides it: run it (on
  the device), or "not run: needs a GPU (est. …)";
* :func:`plan` / :func:`check_budget` -- every run a regeneration of a paper would train (its
  tables' cells and its experiments' cell lists, less what the store already holds), their
  estimated CPU time, and a refusal when that exceeds the stated budget.

The device is the profile's (``Profile.device``), else ``$FEDLIB_DEVICE`` (what
``python -m fedlib.repro.regenerate --device cuda`` sets), else ``cpu``.  On ``cuda`` every cell
runs (``device="cuda"`` in each configuration).  Times are CPU seconds of one core
(``time.process_time``): one run trains single-threaded, a grid runs ``workers`` at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from ..spec.profiles import DEVICE_ENV, resolve_device  # where a profile trains (DEVICE_ENV: $FEDLIB_DEVICE)

__all__ = ["UnitCost", "CostModel", "DEVICE_ENV", "GPU_PRECISION_FACTOR", "resolve_device", "stored_gpu_runs",
           "gpu_note", "gpu_config", "train_size", "GPU_ENGINES", "GPU_MEMORY_BUDGETS", "GPU_MEMORY_FORMATS",
           "gpu_variant", "gpu_key", "client_samples_per_round",
           "ungated", "format_hours", "DEFAULT_BUDGET_HOURS"]

#: The wall-time budget of a regeneration whose profile states none (``Profile.budget_minutes``).
DEFAULT_BUDGET_HOURS = 8.0
#: A GPU estimate's factor by the run's precision (a :class:`UnitCost`'s GPU cost is float32's): the vectorized
#: engine's FedLC CIFAR-10 round in that precision against float32, as the 2026-11-26 lease measured them on an
#: NVIDIA H200 (0.612, 0.563 and 0.952 s; ``benchmarks/results_gpu.md``).  The bare step is faster still in
#: TF32 (0.34 of float32's, the step probe); the engine's round is not, so the round is what a plan prices.
GPU_PRECISION_FACTOR = {"float32": 1.0, "tf32": 0.612 / 0.952, "bf16": 0.563 / 0.952}


@dataclass(frozen=True)
class UnitCost:
    """Measured costs of one model's runs (CPU seconds on one core)."""

    s_per_sample_epoch: float = 0.0  # a client trains one sample once
    fixed_s: float = 0.0  # per run: loading, evaluation, the personalized evaluation
    s_per_round: float = 0.0  # per round, not proportional to the clients' data (server steps, or a whole round)
    gpu_s_per_sample_epoch: float | None = None  # measured on a GPU (None: not measured)
    measured: str = ""  # how: the case of benchmarks/unit_costs.py, when, the load


def format_hours(seconds: float) -> str:
    """``"3.2 CPU-h"``-style amounts: minutes below an hour."""
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def train_size(cfg: dict) -> int | None:
    """The training samples a configuration's clients hold together (None: not known before the
    data are made, e.g. Synthetic): the dataset's size, less a balanced D_aux
    (``server_aux_per_class``), after the long tail (``long_tail_if``: class k keeps
    n_max·IF^(−k/(K−1))), capped by ``max_train_samples``, less ``validation_fraction``."""
    from ...data import DATASETS

    spec = DATASETS.get(cfg.get("dataset", "synthetic"))
    if spec is None or spec.num_train is None:
        return None
    k = spec.num_classes
    per_class = spec.num_train / k - int(cfg.get("server_aux_per_class", 0) or 0)
    factor = float(cfg.get("long_tail_if", 1.0) or 1.0)
    if factor > 1.0 and k > 1:
        n = sum(math.floor(per_class * factor ** (-i / (k - 1))) for i in range(k))
    else:
        n = per_class * k
    cap = int(cfg.get("max_train_samples", 0) or 0)
    if cap:
        n = min(n, cap)
    return int(n * (1.0 - float(cfg.get("validation_fraction", 0.0) or 0.0)))


def client_samples_per_round(cfg: dict) -> float | None:
    """Client sample-epochs of one round: ``participation · N_train · E`` (None: N_train unknown)."""
    n = train_size(cfg)
    if n is None:
        return None
    return float(cfg.get("participation", 1.0)) * n * int(cfg.get("local_epochs", 1))


def _default_stages(cfg: dict) -> list[tuple[int, str]]:
    return [(int(cfg.get("rounds", 400)), "")]


@dataclass(frozen=True)
class CostModel:
    """A profile's unit costs (by model, ``"<model>"``, or model and method, ``"<model>+<method>"``,
    either optionally on one dataset, ``"<model>@<dataset>"``, and for one stage, ``"<model>:<stage>"``;
    the most specific key wins) and the CPU time one run may take on a
    machine without a GPU (``cpu_run_limit_s``).  ``stages(cfg)`` lists a run's ``(rounds,
    stage)`` parts (default: ``cfg["rounds"]`` of one stage ``""``); a multi-stage method
    lists each stage, priced by its own unit cost where there is one."""

    units: dict[str, UnitCost]
    cpu_run_limit_s: float
    stages: Callable[[dict], list[tuple[int, str]]] = _default_stages
    notes: tuple[str, ...] = field(default_factory=tuple)

    def unit(self, cfg: dict, stage: str = "") -> UnitCost | None:
        from ...config import default_model

        dataset = cfg.get("dataset", "synthetic")
        model = cfg.get("model", "auto")
        if model in (None, "auto"):
            model = default_model(dataset)
        method = str(cfg.get("method", "fedavg"))
        suffix = f":{stage}" if stage else ""
        for head in (f"{model}+{method}", f"{model}+{method.split('+')[0]}", model):
            for key in (f"{head}@{dataset}{suffix}", f"{head}{suffix}"):
                if key in self.units:
                    return self.units[key]
        return None

    def seconds(self, cfg: dict, gpu: bool = False) -> float | None:
        """Estimated seconds of one run (CPU on one core; ``gpu=True``: on a GPU, in ``cfg``'s precision,
        :data:`GPU_PRECISION_FACTOR`); None where a unit cost is missing (or, for ``gpu``, not measured)."""
        total, fixed = 0.0, None
        samples = client_samples_per_round(cfg)
        for rounds, stage in self.stages(cfg):
            u = self.unit(cfg, stage) or (self.unit(cfg) if stage else None)
            if u is None:
                return None
            per_sample = u.gpu_s_per_sample_epoch if gpu else u.s_per_sample_epoch
            if per_sample is None or (samples is None and u.s_per_sample_epoch and not u.s_per_round):
                return None
            if gpu and u.s_per_round:  # server steps were not timed on a GPU either
                return None
            total += rounds * ((per_sample * samples if samples else 0.0) + u.s_per_round)
            fixed = u.fixed_s if fixed is None else fixed
        factor = GPU_PRECISION_FACTOR[cfg.get("precision") or "float32"] if gpu else 1.0
        return factor * (total + (fixed or 0.0))

    def fits_cpu(self, cfg: dict, limit_s: float | None = None) -> bool:
        """One run's estimate is within ``limit_s`` CPU seconds (None: ``cpu_run_limit_s``)."""
        s = self.seconds(cfg)
        return s is not None and s <= (self.cpu_run_limit_s if limit_s is None else limit_s)

    def not_run_note(self, cfg: dict) -> str:
        cpu, gpu = self.seconds(cfg), self.seconds(cfg, gpu=True)
        if cpu is None:
            return (f"not run on this CPU: its cost is not measured (no unit cost for {cfg.get('model', 'auto')} on "
                    f"{cfg.get('dataset')}); with device='cuda' it runs")
        gpu_text = f"{gpu / 60:.0f} GPU-min" if gpu is not None else "GPU time not measured"
        return f"not run: needs a GPU (est. {gpu_text} / {cpu / 3600:.1f} CPU-h on one core per run)"

    def gate(self, cfg: dict, device: str | None = None) -> tuple[dict | None, str]:
        """``(cfg, "")`` for a run to train here (on ``cuda``: with ``device`` set), else
        ``(None, "not run: needs a GPU (est. …)")``."""
        device = resolve_device(device)
        if device != "cpu":
            return {**cfg, "device": device}, ""
        if math.isinf(self.cpu_run_limit_s) or self.fits_cpu(cfg):
            return cfg, ""
        return None, self.not_run_note(cfg)


#: The engines whose GPU runs a paper table reads, in this order: the vectorized engine's, then the compiled
#: engine's (the same mathematics, equal to float rounding: tests/test_vectorized.py).  A table's GPU cell
#: never mixes in a run of another precision: ``precision`` stays what the configuration says (float32).
GPU_ENGINES = ("vectorized", "compiled")
#: The memory budgets (``memory_budget_gb``) of the GPU runs a paper table reads, in this order.  The budget
#: sets how many clients the vectorized engines stack (:func:`fedlib.vectorized.group_size`), which changes
#: float rounding only, as the engine does.  4.0 is the default, which the first leases trained under: on a GPU
#: it stacks FedLC's 20 CIFAR-10 clients in 4 groups of 5, 89 local steps a round one after another instead of
#: 32.  A lease trains its new runs under its ``[lease] memory_budget_gb`` (one of these).
GPU_MEMORY_BUDGETS = (4.0, 24.0)
#: The layouts (``memory_format``, :data:`fedlib.models.LAYOUTS`) of the GPU runs a paper table reads, in this
#: order: the model's registered one (every lease before the fourth), then contiguous, which a lease trains where
#: its measuring minute finds it faster.  The layout changes float rounding only.
GPU_MEMORY_FORMATS = ("model", "contiguous")


def gpu_variant(store, cfg: dict) -> tuple[dict, str]:
    """``({"engine", "memory_budget_gb", "memory_format"}, store key)`` of ``cfg``'s run (on its device): the
    first of :data:`GPU_ENGINES` × :data:`GPU_MEMORY_BUDGETS` × :data:`GPU_MEMORY_FORMATS` whose entry ``store``
    holds (a result, else a checkpoint), else ``cfg``'s own (where its engine is one of them; else the first).
    A run started under one resumes and is read under it."""
    from ...config import Config

    base = Config.from_dict(cfg)
    own = {"engine": base.engine, "memory_budget_gb": base.memory_budget_gb, "memory_format": base.memory_format}
    if own["engine"] not in GPU_ENGINES:
        own = {"engine": GPU_ENGINES[0], "memory_budget_gb": GPU_MEMORY_BUDGETS[0],
               "memory_format": GPU_MEMORY_FORMATS[0]}
    variants = [{"engine": e, "memory_budget_gb": b, "memory_format": f}
                for e in GPU_ENGINES for b in GPU_MEMORY_BUDGETS for f in GPU_MEMORY_FORMATS]
    keys = [store.key(Config.from_dict({**cfg, **v})) for v in variants]
    for probe in ("result.json", "checkpoint.pt"):
        for variant, key in zip(variants, keys):
            if (store.entry(key) / probe).exists():
                return variant, key
    return own, store.key(Config.from_dict({**cfg, **own}))


def gpu_key(store, cfg: dict) -> str:
    """The store key of :func:`gpu_variant`."""
    return gpu_variant(store, cfg)[1]


def gpu_config(cfg: dict, precision: str = "float32") -> dict:
    """``cfg`` as a GPU trains it for a paper table: on ``cuda``, in ``precision`` where that is not float32
    (the profile's ``gpu_precision``; a float32 configuration keeps its own)."""
    return {**cfg, "device": "cuda"} | ({} if precision == "float32" else {"precision": precision})


def stored_gpu_runs(cfg: dict, seeds, store=None) -> dict[int, str]:
    """The seeds whose run of ``cfg`` on ``cuda`` is finished in ``store`` (None: the regeneration store,
    :func:`fedlib.repro.run.grid.default_store`), each with the device it trained on: what a CPU shows of a
    cell it cannot afford, once a GPU (``python -m fedlib.repro.gpu_cells``) has trained it."""
    from ..run import records
    from ..run.grid import as_store, identity

    found = {}
    if records.mode() == "read":  # a render from run records: the GPU runs they hold (this store may lack them)
        for seed in seeds:
            result = records.find(identity({**cfg, "device": "cuda", "seed": int(seed)}))
            if result is not None and result.get("status") == "ok":
                found[int(seed)] = result.get("device_name") or "a GPU"
        return found
    store = as_store(store)
    for seed in seeds:
        result = store.load_result(gpu_key(store, {**cfg, "device": "cuda", "seed": int(seed)}))
        if result is not None:
            found[int(seed)] = result["summary"].get("device_name") or "a GPU"
    return found


def gpu_note(found: dict[int, str], seeds, precision: str = "float32") -> str:
    """The note of a cell shown from GPU runs in the store: which seeds, on which device, in which precision
    (named where it is not float32)."""
    names, total = ", ".join(sorted(set(found.values()))), len(tuple(seeds))
    names += "" if precision == "float32" else f", in {precision}"
    return (f"trained on a GPU ({names}): {len(found)} of {total} seeds, read from the store"
            + ("; the others need a GPU" if len(found) < total else ""))


def ungated(profile):
    """``profile`` with every cell configured, on its own device (its cost model's limit lifted): what
    a plan or a ladder estimates before deciding."""
    import dataclasses

    cost = getattr(profile, "cost", None)
    if cost is None:
        return profile
    return dataclasses.replace(profile, cost=dataclasses.replace(cost, cpu_run_limit_s=math.inf))


# --------------------------------------------------------------------------- plans
