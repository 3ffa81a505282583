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
import os
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["UnitCost", "CostModel", "DEVICE_ENV", "resolve_device", "train_size", "client_samples_per_round",
           "plan", "check_budget", "ungated", "preflight", "PlanError", "format_hours", "DEFAULT_BUDGET_HOURS"]

#: Environment variable naming the device of paper-profile runs (``cpu`` or ``cuda``).
DEVICE_ENV = "FEDLIB_DEVICE"
#: The wall-time budget of a regeneration whose profile states none (``Profile.budget_minutes``).
DEFAULT_BUDGET_HOURS = 8.0


def resolve_device(device: str | None = None) -> str:
    """``device``, else ``$FEDLIB_DEVICE``, else ``"cpu"``; anything but ``cpu`` / ``cuda[:n]`` is an error."""
    value = device or os.environ.get(DEVICE_ENV) or "cpu"
    if value != "cpu" and not value.startswith("cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda' (or 'cuda:<n>'), got {value!r}")
    return value


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
    from ..data import DATASETS

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
        from ..config import default_model

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
        """Estimated seconds of one run (CPU on one core; ``gpu=True``: on a GPU); None where a
        unit cost is missing (or, for ``gpu``, not measured)."""
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
        return total + (fixed or 0.0)

    def fits_cpu(self, cfg: dict) -> bool:
        s = self.seconds(cfg)
        return s is not None and s <= self.cpu_run_limit_s

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


def ungated(profile):
    """``profile`` with every cell configured, on its own device (its cost model's limit lifted): what
    a plan or a ladder estimates before deciding."""
    import dataclasses

    cost = getattr(profile, "cost", None)
    if cost is None:
        return profile
    return dataclasses.replace(profile, cost=dataclasses.replace(cost, cpu_run_limit_s=math.inf))


# --------------------------------------------------------------------------- plans
class PlanError(RuntimeError):
    """A regeneration's estimated time exceeds its budget."""


def _experiment_cells(paper, profile, sources: str | None = None) -> list[dict]:
    """The cells of the paper's experiments module functions named ``<name>_cells`` whose first
    parameter is ``profile`` and whose others have defaults (the notebooks' grids); others are not counted."""
    import importlib
    import inspect

    try:
        module = importlib.import_module(f"fedlib.papers.{paper.name}.experiments")
    except ImportError:
        return []
    out = []
    for name, fn in vars(module).items():
        if not (name.endswith("_cells") and callable(fn)) or name == "table_cells" or \
                (sources is not None and name not in sources):
            continue
        try:
            params = list(inspect.signature(fn).parameters.values())
        except (TypeError, ValueError):
            continue
        if not params or params[0].name != "profile" or any(p.default is inspect.Parameter.empty
                                                            for p in params[1:]):
            continue
        try:
            cells = list(fn(profile))
        except Exception:  # noqa: BLE001 -- an experiment that needs more than the profile is not counted
            continue
        out += [c for c in cells if isinstance(c, dict)]
    return out


def _ladder_cells(paper, profile) -> list[tuple[dict, tuple]]:
    """The runs of the paper's budget ladder under ``profile`` (those it affords), when it declares one."""
    from .ladder import ladder_cells, ladder_seeds, spec_for

    try:
        spec = spec_for(paper.name)
    except KeyError:
        return []
    seeds = ladder_seeds(spec, profile)
    return [(c, seeds) for c in ladder_cells(spec, profile)[0]]


def _in_store(cfg: dict, store) -> bool:
    if store is None:
        return False
    try:
        from ..config import Config
        from ..store import Store

        st = store if isinstance(store, Store) else Store(store)
        c = Config(**{k: v for k, v in cfg.items() if k != "device"}, device="cpu")
        return (st.entry(st.key(c)) / "result.json").exists()
    except Exception:  # noqa: BLE001 -- a configuration that does not validate here trains (and fails) later
        return False


def plan(paper: str, profile: str = "paper", device: str | None = None, store=None,
         sources: str | None = None) -> dict:
    """What a regeneration of ``paper`` under ``profile`` would train on ``device``: every run of
    its tables (``Profile.table_cells`` × the table's seeds), of its experiments' cell lists
    (× the profile's seeds) and of its budget ladder, identical configurations once.  Returns
    ``runs`` (to train here: not in ``store``), ``stored``, ``not_run`` (runs a CPU cannot afford,
    with their notes; ``not_run_cpu_s`` their estimated CPU seconds, ``not_run_unknown`` those
    without a measured cost), ``cpu_s`` (the runs' estimated CPU seconds; None when a cost is unknown), ``unknown`` (runs
    without a unit cost), and ``wall_s`` (``cpu_s`` over the profile's workers).  ``sources``: the
    text of the notebooks to run (``--only``): a table counts only when its id is quoted there, an
    experiment's cell list when its function is named there, the ladder when ``spec_for`` is."""
    import dataclasses
    import json

    from .paper import get_paper

    pp = get_paper(paper)
    prof = pp.profile(profile)
    device = resolve_device(device or getattr(prof, "device", None))
    cost: CostModel | None = getattr(prof, "cost", None)
    everything = ungated(prof)
    cells = []
    for tid in pp.tables:
        if sources is None or f'"{tid}"' in sources:
            seeds = everything.seeds_for(tid)
            cells += [(c, seeds) for c in everything.table_cells(tid)]
    cells += [(c, everything.seeds) for c in _experiment_cells(pp, everything, sources)]
    if sources is None or "spec_for" in sources:
        cells += _ladder_cells(pp, dataclasses.replace(prof, device=device) if cost is not None else prof)
    runs: dict[str, dict] = {}
    not_run: dict[str, str] = {}
    beyond: list[float | None] = []  # the estimated CPU seconds of the runs not run here
    stored = 0
    for cell, seeds in cells:
        cfg = cell.get("config")
        if cfg is None:
            continue
        cfg = {k: v for k, v in cfg.items() if k != "device"}
        for s in ([cfg["seed"]] if "seed" in cfg else seeds):
            c = {**cfg, "seed": s}
            key = json.dumps(c, sort_keys=True, default=str)
            if key in runs or key in not_run:
                continue
            if cost is not None and device == "cpu" and not cost.fits_cpu(c):
                not_run[key] = cost.not_run_note(c)
                beyond.append(cost.seconds(c))
                continue
            if _in_store(c, store):
                stored += 1
                continue
            runs[key] = c
    secs = [cost.seconds(c) if cost is not None else None for c in runs.values()]
    unknown = sum(s is None for s in secs)
    cpu = sum(s for s in secs if s is not None)
    workers = max(1, int(getattr(prof, "workers", 1)))
    return {"paper": paper, "profile": prof.name, "device": device, "runs": len(runs), "stored": stored,
            "not_run": len(not_run), "not_run_notes": sorted(set(not_run.values())), "unknown": unknown,
            "cpu_s": cpu if cost is not None else None, "wall_s": cpu / workers if cost is not None else None,
            "workers": workers, "not_run_cpu_s": sum(b for b in beyond if b is not None),
            "not_run_unknown": sum(b is None for b in beyond)}


def check_budget(plans: list[dict], budget_hours: float, allow_over: bool = False) -> str:
    """One line per plan and a total; raises :class:`PlanError` when the estimated wall time
    (CPU time over each profile's workers) exceeds ``budget_hours`` and ``allow_over`` is False."""
    lines, wall = [], 0.0
    for p in plans:
        if p["cpu_s"] is None:
            lines.append(f"{p['paper']} ({p['profile']}): {p['runs']} runs to train, no cost model (see the profile)")
            continue
        wall += p["wall_s"]
        lines.append(f"{p['paper']} ({p['profile']}, {p['device']}): {p['runs']} runs to train "
                     f"(est. {p['cpu_s'] / 3600:.1f} CPU-h, {format_hours(p['wall_s'])} on {p['workers']} "
                     f"worker{'s' if p['workers'] != 1 else ''}), {p['stored']} in the store, "
                     f"{p['not_run']} not run (need a GPU)" + (f", {p['unknown']} without a measured cost"
                                                              if p["unknown"] else ""))
    lines.append(f"estimated total: {format_hours(wall)} of wall time; budget {budget_hours:g} h")
    text = "\n".join(lines)
    if wall > budget_hours * 3600 and not allow_over:
        raise PlanError(text + f"\nrefused: the estimate exceeds the budget of {budget_hours:g} h; pass "
                        "--over-budget to run it anyway, or --budget-hours H to state a larger budget")
    return text


def preflight(papers: list[str], profile: str, *, device: str | None = None, store=None,
              budget_hours: float | None = None, allow_over: bool = False, only: list[str] | None = None) -> str:
    """Before a regeneration starts: set ``$FEDLIB_DEVICE`` (when ``device`` is given, so the
    notebooks' kernels inherit it), plan every paper whose ``profile`` has a cost model, and
    return the plan's lines, or raise :class:`PlanError` when the estimated wall time exceeds
    ``budget_hours`` (default: the largest ``budget_minutes`` of the profiles, else
    :data:`DEFAULT_BUDGET_HOURS`) and ``allow_over`` is False.  ``""`` when no profile has a
    cost model (``quick`` and ``smoke``: their budgets are written in their docstrings).  With ``only``
    (the regeneration's notebook selection) each plan counts what those notebooks run."""
    from .grid import default_store
    from .paper import get_paper

    if device is not None:
        os.environ[DEVICE_ENV] = resolve_device(device)
    profiles = [get_paper(p).profile(profile) for p in papers]
    costed = [(p, prof) for p, prof in zip(papers, profiles) if getattr(prof, "cost", None) is not None]
    if not costed:
        return ""
    if budget_hours is None:
        stated = [prof.budget_minutes for _, prof in costed if prof.budget_minutes]
        budget_hours = max(stated) / 60 if stated else DEFAULT_BUDGET_HOURS
    root = store if store is not None else default_store().root
    plans = [plan(p, profile, store=root, sources=_sources(p, only)) for p, _ in costed]
    return check_budget(plans, budget_hours, allow_over)


def _sources(paper: str, only: list[str] | None) -> str | None:
    """The code of the notebooks ``only`` selects of ``paper`` (None: every notebook)."""
    if not only:
        return None
    import json

    from .regenerate import notebooks, select

    text = []
    for path in select(notebooks(paper), only):
        cells = json.loads(path.read_text()).get("cells", [])
        text += ["".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code"]
    return "\n".join(text)
