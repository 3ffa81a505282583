"""A budget ladder: does a paper's headline gap move toward the paper's value as the budget grows?

The ``quick`` profile answers the papers at a fraction of their budget; a GPU-sized ``paper``
profile may not run here at all.  A ladder runs the paper's headline comparison (its method and
baseline in one cell of one table, e.g. FedLC − FedAvg at CIFAR-10 D(β = 0.5)) at several
budgets between the two, on the paper's own dataset and model: the *scale keys* (rounds, local
epochs and training samples; FedConcat's stage rounds) go together, geometrically, from the
quick profile's values (rung 0) to the paper's (the last rung); everything else is the paper
profile's cell.  Each rung's cost is estimated from the paper profile's measured unit costs
(:mod:`fedlib.repro.budget.costs`): under ``quick`` the rungs run from the bottom while they fit the
ladder's stated budget (one seed), under ``paper`` each rung runs where the device affords it
(the paper's seeds; where even quick's scale does not fit a CPU run, from a lower floor the
ladder declares), and the others are shown, with their estimated cost, as not run.  Under
``smoke`` the ladder runs the smoke profile's own cell at 1×, 1.4× and 2× its scale (seconds; its
numbers mean nothing).

A paper declares its ladder in ``fedlib/papers/<paper>/budget.py`` as ``LADDER``
(:class:`LadderSpec`), beside its cost model; :func:`spec_for` finds it by that convention.
:func:`ladder_cells` builds the rungs, :func:`run_ladder` trains them, :func:`ladder_table`
and :func:`fedlib.repro.artefacts.ladder_figure.ladder_figure` show them, and :func:`finding` answers toward /
away / not at all.

This module builds and trains the rungs; :class:`LadderSpec` lives in :mod:`fedlib.repro.budget.ladder_spec`,
the table and the finding in :mod:`fedlib.repro.budget.ladder_finding` (each importable from here), the
figure in :mod:`fedlib.repro.artefacts.ladder_figure`; :mod:`fedlib.repro.artefacts.ladder` is all of it, as
the notebooks read it.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .ladder_finding import at_chance, finding, ladder_table, paper_values
from .ladder_spec import LadderSpec, spec_for

__all__ = ["LadderSpec", "spec_for", "rung_scales", "ladder_seeds", "ladder_cells", "run_ladder", "ladder_table",
           "finding", "at_chance", "sidecar_meta", "plan_frame", "deviations",
           "paper_values", "EXPERIMENT"]

#: The name ladders save under (tables, figures, progress).
EXPERIMENT = "budget_ladder"


def _cell(profile, spec: LadderSpec, row: str) -> dict:
    from .costs import ungated
    from .gate import decide
    from ..spec.paper import get_paper

    t = get_paper(spec.paper).table(spec.table)
    cfg, note = decide(ungated(profile), t.config(row, spec.column), t.id)
    if cfg is None:
        raise ValueError(f"{spec.paper} {spec.table} {row}/{spec.column} is not run in profile {profile.name!r}: {note}")
    return {k: v for k, v in cfg.items() if k != "device"}


def _scale_value(cfg: dict, key: str) -> float:
    from .costs import train_size

    if key == "max_train_samples":
        return float(train_size({**cfg, "max_train_samples": 0}) if not cfg.get(key) else cfg[key])
    from ...config import all_params

    value = cfg.get(key)
    return float(all_params()[key].default if value is None else value)


def rung_scales(low: dict, high: dict, keys: tuple[str, ...], at: "int | list[float]") -> list[dict]:
    """Settings of ``keys`` between ``low`` (t = 0) and ``high`` (t = 1), each key geometric in
    between (``low^(1−t) · high^t``), rounded to integers ≥ 1; a training-set size that reaches the
    full set is 0 (all).  ``at``: the t values, or a number of rungs evenly spaced in t (≥ 2)."""
    from .costs import train_size

    if isinstance(at, int):
        if at < 2:
            raise ValueError(f"rungs must be ≥ 2 (quick's budget and the paper's), got {at}")
        at = [i / (at - 1) for i in range(at)]
    full = train_size({**high, "max_train_samples": 0})
    out = []
    for t in at:
        row = {}
        for key in keys:
            a, b = _scale_value(low, key), _scale_value(high, key)
            v = max(1, int(round(a ** (1 - t) * b ** t)))
            row[key] = 0 if key == "max_train_samples" and full is not None and v >= full else v
        out.append(row)
    return out


def _largest(fits, lo: float = 0.0, hi: float = 1.0, steps: int = 24) -> float | None:
    """The largest t in [lo, hi] with ``fits(t)`` (monotone: True below, False above); None if none."""
    if fits(hi):
        return hi
    if not fits(lo):
        return None
    for _ in range(steps):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _bases(spec: LadderSpec, profile) -> dict[str, dict]:
    """The two methods' cells every rung rescales: the smoke profile's own under ``smoke``, else the paper's."""
    from ..spec.paper import get_paper

    source = profile if profile.name == "smoke" else get_paper(spec.paper).profile("paper")
    return {row: _cell(source, spec, row) for row in (spec.baseline, spec.method)}


def _rung_configs(spec: LadderSpec, bases: dict[str, dict], scale: dict) -> dict[str, dict]:
    return {row: spec.adjust({**base, **scale}) for row, base in bases.items()}


def _fits_cpu(spec: LadderSpec, cost, cfg: dict) -> bool:
    """One ladder run fits a CPU under the paper profile: within the ladder's run limit
    (``spec.cpu_run_limit_s``, else the cost model's)."""
    return cost is not None and cost.fits_cpu(cfg, spec.cpu_run_limit_s)


def _floored(spec: LadderSpec, profile, low: dict, high: dict) -> bool:
    """Whether the ladder starts at ``spec.cpu_floor``: the paper profile on a CPU, where a run at ``low``,
    quick's scale on the paper's dataset, does not fit (:func:`_fits_cpu`)."""
    from .costs import resolve_device
    from ..spec.paper import get_paper

    if not spec.cpu_floor or profile.name != "paper" or resolve_device(getattr(profile, "device", None)) != "cpu":
        return False
    cost = get_paper(spec.paper).profile("paper").cost
    at_quick = _rung_configs(spec, _bases(spec, profile), rung_scales(low, high, spec.scale_keys, [0.0])[0])
    return not all(_fits_cpu(spec, cost, c) for c in at_quick.values())


def _quick_to_paper(spec: LadderSpec) -> tuple[dict, dict, str]:
    from ..spec.paper import get_paper

    pp = get_paper(spec.paper)
    paper_cfg = _cell(pp.profile("paper"), spec, spec.method)
    quick_cfg = _cell(pp.profile("quick"), spec, spec.method)
    low = {**paper_cfg, **{k: quick_cfg[k] for k in spec.scale_keys if quick_cfg.get(k) is not None}}
    if "max_train_samples" in spec.scale_keys and not quick_cfg.get("max_train_samples"):
        low.pop("max_train_samples", None)  # quick trains on all of its (stand-in) training set
    return low, paper_cfg, "from the quick profile's scale to the paper's, on the paper's dataset and model"


def _low_high(spec: LadderSpec, profile) -> tuple[dict, dict, str]:
    """The two ends of the ladder under ``profile`` (configs of the method's cell) and what they are:
    quick's scale to the paper's, or, on a CPU where quick's scale does not fit a run, ``spec.cpu_floor``
    to the paper's."""
    if profile.name == "smoke":
        low = _cell(profile, spec, spec.method)
        high = {k: (0 if k == "max_train_samples" and not low.get(k) else 2 * _scale_value(low, k))
                for k in spec.scale_keys}
        return low, {**low, **{k: int(v) for k, v in high.items()}}, "the smoke profile's cell at 1× to 2× its scale"
    low, high, what = _quick_to_paper(spec)
    if _floored(spec, profile, low, high):
        floor = ", ".join(f"{k} {v}" for k, v in spec.cpu_floor.items())
        return ({**low, **spec.cpu_floor}, high,
                f"from a floor below the quick profile's scale ({floor}: a run at quick's scale on the paper's "
                "dataset does not fit this CPU) to the paper's, on the paper's dataset and model")
    return low, high, what


def ladder_seeds(spec: LadderSpec, profile) -> tuple[int, ...]:
    """The paper profile's seeds of the table; on a CPU, where the ladder declares ``spec.cpu_seeds``, that many:
    the first of the table's (rungs × methods × seeds multiply), then the next integers where it declares more
    than the table has (the seeds a ladder row's decision asks for, :func:`fedlib.repro.artefacts.decision.
    ladder_need`); every other profile one seed (the trend, not the spread)."""
    from .costs import resolve_device

    seeds = tuple(profile.seeds_for(spec.table))
    if profile.name != "paper":
        return seeds[:1]
    if spec.cpu_seeds is not None and resolve_device(getattr(profile, "device", None)) == "cpu":
        more = tuple(range(max(seeds, default=-1) + 1, max(seeds, default=-1) + 1 + spec.cpu_seeds))
        return (seeds + more)[:spec.cpu_seeds]
    return seeds


def ladder_cells(spec: LadderSpec, profile) -> tuple[list[dict], pd.DataFrame]:
    """The ladder's runs under ``profile`` (cells for :func:`fedlib.repro.run.grid.run_grid`: labels
    ``rung``, ``method`` and ``config``, None with a note where not run) and its plan: one row per
    rung with the scale keys, the client sample-epochs of a run, the estimated CPU minutes of the
    rung's runs (both methods × seeds, one core) and whether it runs here.

    The rungs: ``spec.rungs`` evenly spaced (in t) from quick's budget to the paper's when every
    one of them is affordable; otherwise three from quick's up to the largest affordable budget
    and, not run, the paper's.  Affordable: under ``quick``, the rungs from the bottom fit
    ``spec.quick_budget_minutes`` of wall time on the profile's workers; under ``paper`` on a CPU,
    each run fits the ladder's run limit (``spec.cpu_run_limit_s``, else the cost model's), and where
    quick's scale does not, the ladder starts at ``spec.cpu_floor``; on ``cuda`` and under ``smoke``,
    everything."""
    from .costs import client_samples_per_round, resolve_device
    from ..spec.paper import get_paper

    pp = get_paper(spec.paper)
    low, high, _ = _low_high(spec, profile)
    cost = pp.profile("paper").cost
    device = resolve_device(getattr(profile, "device", None))
    seeds = ladder_seeds(spec, profile)
    budget_s = spec.quick_budget_minutes * 60 * max(1, int(profile.workers))
    bases = _bases(spec, profile)

    def configs(scale: dict) -> dict:
        return _rung_configs(spec, bases, scale)

    def rung_s(t: float) -> float | None:
        secs = [cost.seconds(c) if cost is not None else None
                for c in configs(rung_scales(low, high, spec.scale_keys, [t])[0]).values()]
        return None if any(x is None for x in secs) else sum(secs) * len(seeds)

    def affordable(ts: list[float]) -> list[bool]:
        if profile.name == "smoke" or device != "cpu":
            return [True] * len(ts)
        if profile.name == "paper":
            return [all(_fits_cpu(spec, cost, c) for c in
                        configs(rung_scales(low, high, spec.scale_keys, [t])[0]).values()) for t in ts]
        out, spent = [], 0.0
        for t in ts:
            s = rung_s(t)
            ok = s is not None and spent + s <= budget_s and (not out or out[-1])
            spent += s if ok else 0.0
            out.append(ok)
        return out

    if profile.name == "smoke":
        ts = [0.0, 0.5, 1.0]
    else:
        ts = [i / (spec.rungs - 1) for i in range(spec.rungs)]
        if not all(affordable(ts)):
            top = _largest(lambda t: all(affordable([0.0, t / 2, t])))
            if top is not None and top > 0.05:
                ts = [0.0, top / 2, top, 1.0]
    scales, kept = [], []
    for t, scale in zip(ts, rung_scales(low, high, spec.scale_keys, ts)):
        if scale not in scales:
            scales.append(scale)
            kept.append(t)
    runs_here = affordable(kept)
    cells, plan = [], []
    for i, (t, scale, run) in enumerate(zip(kept, scales, runs_here)):
        cfgs = configs(scale)
        known = rung_s(t)
        if run:
            why = ""
        elif profile.name == "paper":
            why = cost.not_run_note(cfgs[spec.method]) if cost is not None else "not run: no cost model"
            run, cfgs, why = _from_gpu_store(cfgs, seeds, profile, spec.method, why)
        else:
            why = (f"not run in {profile.name!r}: est. {known / 60:.0f} CPU-min on one core for its "
                   f"{2 * len(seeds)} runs, beyond the ladder's budget of {spec.quick_budget_minutes:g} min "
                   f"on {profile.workers} worker(s)" if known is not None else "not run: its cost is not measured")
        if device != "cpu" and profile.name != "smoke":
            cfgs = {r: {**c, "device": device} for r, c in cfgs.items()}
        samples = client_samples_per_round(cfgs[spec.method])
        rounds = sum(r for r, _ in cost.stages(cfgs[spec.method])) if cost is not None else scale.get("rounds")
        plan.append({"rung": i, "t": round(t, 3), **scale,
                     "sample_epochs": None if samples is None else samples * rounds,
                     "est_cpu_min": None if known is None else known / 60, "runs_here": run, "note": why})
        for row, cfg in cfgs.items():
            cells.append({"rung": i, "method": row, "config": cfg if run else None, "note": why})
    return cells, pd.DataFrame(plan)


def _from_gpu_store(cfgs: dict[str, dict], seeds, profile, method: str, why: str) -> tuple[bool, dict, str]:
    """A rung a CPU cannot afford, shown from the runs a GPU trained of it (its top rung is its table's cell, the
    same store keys: :func:`fedlib.repro.budget.gate.decide` reads them so for the table): ``(True, its configs on
    cuda, the GPU note)`` where every method has a seed there, else ``(False, cfgs, why)``.  The grid reads those
    seeds from the store and says "not run" for the others."""
    from .costs import gpu_config, gpu_note, stored_gpu_runs

    on_gpu = {r: gpu_config(c, profile.gpu_precision) for r, c in cfgs.items()}
    found = {r: stored_gpu_runs(c, seeds) for r, c in on_gpu.items()}
    if not all(found.values()):
        return False, cfgs, why
    return True, on_gpu, gpu_note(found[method], seeds, profile.gpu_precision)


def plan_frame(spec: LadderSpec, profile) -> pd.DataFrame:
    """Only the plan of :func:`ladder_cells` (what a ladder would cost, before running it)."""
    return ladder_cells(spec, profile)[1]


def run_ladder(spec: LadderSpec, ctx) -> tuple[pd.DataFrame, Any]:
    """Train the ladder under a notebook's :class:`fedlib.repro.artefacts.context.Context`; returns
    ``(table, grid)`` (:func:`ladder_table`)."""
    from ..run.grid import run_grid

    cells, plan = ladder_cells(spec, ctx.profile)
    cells = sorted(cells, key=lambda c: -c["rung"])  # the top rung first: on few workers its long runs start first
    grid = run_grid(cells, seeds=ladder_seeds(spec, ctx.profile), store=ctx.store, workers=ctx.profile.workers,
                    progress=ctx.progress, desc=f"{spec.paper} {EXPERIMENT} ({ctx.profile.name})")
    return ladder_table(spec, plan, grid.runs), grid


def sidecar_meta(spec: LadderSpec, profile, grid) -> dict:
    """What a ladder's table and figure record beside them: the seeds it trained, the datasets its runs
    used and its deviations from the paper's cell."""
    return dict(seeds=ladder_seeds(spec, profile), datasets=sorted(grid.runs.dataset_used.dropna().unique()),
                deviations=deviations(spec, profile))


def deviations(spec: LadderSpec, profile) -> list[str]:
    """What the ladder's runs change from the paper's cell, for the sidecars."""
    _, _, what = _low_high(spec, profile)
    keys = ", ".join(spec.scale_keys)
    out = [f"budget ladder, {what}: {keys} scaled together, geometrically between the two ends; every other "
           "setting is the cell's"] + (list(spec.notes) if profile.name != "smoke" else [])
    ran, table = ladder_seeds(spec, profile), tuple(profile.seeds_for(spec.table))
    if profile.name == "paper" and len(ran) < len(table):
        out.append(f"on a CPU the ladder trains {len(ran)} of the table's {len(table)} seeds "
                   f"({', '.join(map(str, ran))}; LadderSpec.cpu_seeds): rungs × methods × seeds multiply")
    elif profile.name == "paper" and len(ran) > len(table):
        out.append(f"on a CPU the ladder trains {len(ran)} seeds ({', '.join(map(str, ran))}; LadderSpec.cpu_seeds), "
                   f"more than the table's {len(table)}: the seeds its verdict needs")
    return out
