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
and :func:`ladder_figure` show them, and :func:`finding` answers toward / away / not at all.
"""

from __future__ import annotations

import importlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import pandas as pd

__all__ = ["LadderSpec", "spec_for", "rung_scales", "ladder_seeds", "ladder_cells", "run_ladder", "ladder_table",
           "ladder_figure", "figure_caption", "finding", "at_chance", "sidecar_meta", "plan_frame", "deviations",
           "paper_values", "EXPERIMENT"]

#: The name ladders save under (tables, figures, progress).
EXPERIMENT = "budget_ladder"
_DEFAULT_KEYS = ("rounds", "local_epochs", "max_train_samples")


def _same(cfg: dict) -> dict:
    return cfg


@dataclass(frozen=True)
class LadderSpec:
    """One paper's headline comparison and how its ladder climbs."""

    paper: str
    table: str  # the paper table holding the headline cell
    column: str  # its column key
    method: str  # row key of the paper's method
    baseline: str  # row key of the baseline
    metric: str = "accuracy"  # the run metric the table reports (FedABC: personalized_accuracy)
    scale_keys: tuple[str, ...] = _DEFAULT_KEYS
    rungs: int = 4  # budgets from quick's to the paper's, both included (when all are affordable)
    quick_budget_minutes: float = 30.0  # wall time the quick profile's ladder may take (on its workers)
    cpu_seeds: int | None = None  # the paper profile on a CPU runs the first this many of the table's seeds (None: all)
    tolerance_pp: float = 0.5  # one seed (no std): a change of the distance to the paper's gap below this: "not at all"
    # The paper profile on a CPU: the lowest rung when quick's scale on the paper's dataset does not fit a run there
    # (scale key → value, below quick's; empty: none), and the run limit of the ladder's runs (None: the cost model's)
    cpu_floor: dict = field(default_factory=dict)
    cpu_run_limit_s: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    adjust: Callable[[dict], dict] = _same  # a rescaled cell's settings that follow from its scale keys
    # A rung whose baseline scores within this of chance (100 / classes, %) measures no gap: the finding names it
    # and leaves it out of the trend (FEDIC's FedAvg at 10.00 % on CIFAR-10-LT at the CPU rungs)
    chance_margin_pp: float = 1.0

    def __post_init__(self):
        if self.rungs < 2:
            raise ValueError(f"rungs must be ≥ 2 (quick's budget and the paper's), got {self.rungs}")
        if self.cpu_seeds is not None and (isinstance(self.cpu_seeds, bool) or not isinstance(self.cpu_seeds, int)
                                           or self.cpu_seeds < 1):
            raise ValueError(f"cpu_seeds must be an integer ≥ 1, or None (all of the table's seeds), "
                             f"got {self.cpu_seeds!r}")
        bad = {k: v for k, v in self.cpu_floor.items()
               if k not in self.scale_keys or isinstance(v, bool) or not isinstance(v, int) or v < 1}
        if bad:
            raise ValueError(f"cpu_floor must map scale keys ({', '.join(self.scale_keys)}) to integers ≥ 1, "
                             f"got {bad!r}")
        if not self.chance_margin_pp >= 0:
            raise ValueError(f"chance_margin_pp must be ≥ 0 pp, got {self.chance_margin_pp!r}")
        if self.cpu_run_limit_s is not None and not self.cpu_run_limit_s > 0:
            raise ValueError(f"cpu_run_limit_s must be > 0 seconds, or None (the cost model's), "
                             f"got {self.cpu_run_limit_s!r}")


def spec_for(paper: str) -> LadderSpec:
    """The ladder a companion declares (``fedlib.papers.<paper>.budget.LADDER``)."""
    from ..spec.paper import COMPANIONS, get_paper

    name = get_paper(paper).name
    try:
        module = importlib.import_module(f"{COMPANIONS}.{name}.budget")
    except ImportError as err:
        raise KeyError(f"{name} declares no budget ladder (fedlib/papers/{name}/budget.py: LADDER)") from err
    return module.LADDER


def _cell(profile, spec: LadderSpec, row: str) -> dict:
    from .costs import ungated
    from ..run.gate import decide
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
    """The paper profile's seeds of the table (on a CPU the first ``spec.cpu_seeds`` of them, where the
    ladder declares fewer: rungs × methods × seeds multiply); every other profile one seed (the trend,
    not the spread)."""
    from .costs import resolve_device

    seeds = tuple(profile.seeds_for(spec.table))
    if profile.name != "paper":
        return seeds[:1]
    if spec.cpu_seeds is not None and resolve_device(getattr(profile, "device", None)) == "cpu":
        return seeds[:spec.cpu_seeds]
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
    same store keys: :func:`fedlib.repro.run.gate.decide` reads them so for the table): ``(True, its configs on
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


def paper_values(spec: LadderSpec) -> tuple[float | None, float | None]:
    """The paper's method and baseline values in the headline cell."""
    from ..spec.paper import get_paper

    t = get_paper(spec.paper).table(spec.table)
    m, b = t.value(spec.method, spec.column), t.value(spec.baseline, spec.column)
    return (None if m is None else m.mean), (None if b is None else b.mean)


def ladder_table(spec: LadderSpec, plan: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per rung: its scale, cost, both methods' mean (and std) over seeds, the gap
    (method − baseline) and the paper's gap."""
    pm, pb = paper_values(spec)
    paper_gap = None if pm is None or pb is None else pm - pb
    rows = []
    for r in plan.to_dict("records"):
        out = dict(r)
        per = {}
        for row in (spec.baseline, spec.method):
            sel = runs[(runs.rung == r["rung"]) & (runs.method == row) & (runs.status == "ok")] \
                if len(runs) else runs
            vals = sel[spec.metric].astype(float).dropna() if spec.metric in sel else pd.Series(dtype=float)
            # by seed: a seed that finished for one method only pairs with nothing
            per[row] = pd.Series(vals.to_numpy(), index=sel.loc[vals.index, "seed"].to_numpy()) \
                if "seed" in sel else vals.reset_index(drop=True)
            out[f"{row}_mean"] = float(vals.mean()) if len(vals) else math.nan
        paired = pd.concat([per[spec.method], per[spec.baseline]], axis=1).dropna()
        gaps = paired.iloc[:, 0] - paired.iloc[:, 1] if len(paired) else pd.Series(dtype=float)
        out["gap"] = float(gaps.mean()) if len(gaps) else math.nan
        out["gap_std"] = float(gaps.std(ddof=1)) if len(gaps) > 1 else math.nan
        out["paper_gap"] = math.nan if paper_gap is None else paper_gap
        out["n_seeds"] = int(len(gaps))
        used = runs[runs.rung == r["rung"]].dataset_used.dropna().unique() \
            if len(runs) and "dataset_used" in runs else []
        out["dataset_used"] = ", ".join(sorted(map(str, used))) if len(used) else None
        rows.append(out)
    return pd.DataFrame(rows)


def at_chance(spec: LadderSpec, table: pd.DataFrame) -> pd.Series:
    """Per rung: whether the baseline's mean is within ``spec.chance_margin_pp`` of chance, 100 / classes of
    the headline column's dataset (False where the table has no baseline mean)."""
    from ...data import DATASETS
    from ..spec.paper import get_paper

    col = f"{spec.baseline}_mean"
    if col not in table:
        return pd.Series(False, index=table.index)
    chance = 100.0 / DATASETS[get_paper(spec.paper).table(spec.table).column(spec.column).dataset].num_classes
    return table[col].astype(float) <= chance + spec.chance_margin_pp


def finding(spec: LadderSpec, table: pd.DataFrame) -> str:
    """Toward / away / not at all: the distance |gap − paper's gap| at the lowest and the highest
    rung that ran, compared with twice the larger std of the gap over seeds at those rungs where it is
    measured (≥ 2 seeds), else with ``spec.tolerance_pp`` (one seed).  A fixed floor under a measured
    std would hide a move smaller than it: FedABC's whole gap in the paper is 0.40 pp.  Rungs whose
    baseline is at chance (:func:`at_chance`) are named and left out: their gap measures nothing."""
    from ..spec.paper import get_paper

    pp = get_paper(spec.paper)
    name = pp.gain_label(spec.method, spec.baseline)
    where = f"{pp.table(spec.table).column(spec.column).label} ({spec.table})"
    measured = table[table.gap.notna()]
    chance = at_chance(spec, measured)
    ran = measured[~chance]
    skipped = ""
    if chance.any():
        rows = measured[chance]
        skipped = (f"; left out: rung{'s' if len(rows) > 1 else ''} "
                   + ", ".join(f"{int(r.rung)} ({pp.method_label(spec.baseline)} {r[f'{spec.baseline}_mean']:.2f} %)"
                               for _, r in rows.iterrows())
                   + f", the baseline at chance (within {spec.chance_margin_pp:g} pp of 100/classes): their gap "
                     "measures nothing")
    if measured.empty or table.paper_gap.isna().all():
        return f"Budget ladder, {name} at {where}: undecided (no rung ran, or the paper gives no value)"
    paper_gap = float(table.paper_gap.iloc[0])
    if ran.empty:
        return (f"Budget ladder, {name} at {where}: undecided (paper {paper_gap:+.2f}; {len(measured)} of "
                f"{len(table)} rungs ran{skipped})")
    lo, hi = ran.iloc[0], ran.iloc[-1]
    text = (f"Budget ladder, {name} at {where}: {lo.gap:+.2f} pp at rung {int(lo.rung)}"
            + (f", {hi.gap:+.2f} pp at rung {int(hi.rung)}" if len(ran) > 1 else "")
            + f" (paper {paper_gap:+.2f}; {len(measured)} of {len(table)} rungs ran{skipped})")
    if len(ran) < 2:
        return text + (": undecided (one budget ran where the baseline learns)" if skipped
                       else ": undecided (one budget ran)")
    stds = [s for s in (lo.gap_std, hi.gap_std) if isinstance(s, float) and not math.isnan(s)]
    tol = 2 * max(stds) if stds and max(stds) > 0 else spec.tolerance_pp  # a spread of 0 is never assumed
    d_lo, d_hi = abs(lo.gap - paper_gap), abs(hi.gap - paper_gap)
    if d_hi < d_lo - tol:
        verdict = "toward the paper's value"
    elif d_hi > d_lo + tol:
        verdict = "away from the paper's value"
    else:
        verdict = "not at all"
    return text + f": the gap moves {verdict} as the budget grows (distance {d_lo:.2f} → {d_hi:.2f} pp, ±{tol:.2f})"


def _seeds(table: pd.DataFrame) -> int:
    """The most seeds behind a rung that ran (0 when none ran): the seeds of the ladder's means, which a rung
    over fewer (a GPU's top rung, 2 of the CPU rungs' 3) is drawn and named apart from (:func:`_fewer`)."""
    n = table["n_seeds"].dropna() if "n_seeds" in table else pd.Series(dtype=float)
    return int(n[n > 0].max()) if (n > 0).any() else 0


def _fewer(table: pd.DataFrame) -> dict[int, pd.Series]:
    """``{seeds: the rungs that ran over that many}`` for each count below :func:`_seeds`."""
    if "n_seeds" not in table:
        return {}
    n, most = table["n_seeds"].fillna(0), _seeds(table)
    return {int(k): (n == k) for k in sorted(set(n[(n > 0) & (n < most)]))}


def figure_caption(table: pd.DataFrame) -> str:
    """The caption of :func:`ladder_figure`, with the error bars' seeds where it draws them (and those of the
    rungs over fewer seeds, drawn as open squares)."""
    from ..artefacts.figure_rules import std_caption

    text = ("The gap per rung (client sample-epochs of a run, log) against the paper's (dashed); right: both "
            "methods and the paper's values (dotted).")
    most = _seeds(table)
    fewer = [f"the rung{'s' if sel.sum() > 1 else ''} over {n} of {most} seeds (open squares): "
             + (f"std over {n} seeds" if n >= 2 else "one seed, no error bar")
             for n, sel in _fewer(table).items()] if most >= 2 else []
    std = std_caption(most)
    if fewer:
        std = std.rstrip(".") + "; " + "; ".join(fewer) + "."
    return " ".join(t for t in (text, std) if t)


def compact_count(value: float) -> str:
    """A count for a tick label: 600000 → '600k', 1020000 → '1.02M', 20000000 → '20M'."""
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.3g}{unit}"
    return f"{value:.3g}"


def _rung_ticks(ax, x, min_gap: float = 0.12) -> None:
    """One labelled tick per rung on a log axis: the default log ticks of a short range (3×10⁶ beside 4×10⁶)
    overlap.  A rung whose label would sit within ``min_gap`` of the axis's log width of the label before it
    on the first line goes on a second line (FEDIC's 4.86k and 9.72k on an axis up to 9.72M; FedConcat's
    4.27M and 9.25M): every rung's budget stays readable.  The second line is the axis's minor ticks, their
    labels padded one line further down (a label starting with a newline overlapped the first line's
    neighbour, and its number was lost in the PNG)."""
    import math

    import matplotlib as mpl
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    ticks = sorted(set(float(v) for v in x))
    lo, hi = ax.get_xlim()
    width = math.log10(hi / lo) if lo > 0 and hi > lo else 1.0
    second, last_first = set(), None
    for v in ticks:
        if last_first is not None and math.log10(v / last_first) < min_gap * width:
            second.add(v)
        else:
            last_first = v
    label = FuncFormatter(lambda v, _: compact_count(v))
    ax.xaxis.set_major_locator(FixedLocator([v for v in ticks if v not in second]))
    ax.xaxis.set_major_formatter(label)
    ax.xaxis.set_minor_locator(FixedLocator(sorted(second)) if second else NullLocator())
    ax.xaxis.set_minor_formatter(label)
    if second:  # as long as a major tick, its label a line below the first line's
        size = mpl.font_manager.FontProperties(size=mpl.rcParams["xtick.labelsize"]).get_size_in_points()
        ax.tick_params(axis="x", which="minor", length=mpl.rcParams["xtick.major.size"],
                       width=mpl.rcParams["xtick.major.width"], labelsize=mpl.rcParams["xtick.labelsize"],
                       pad=mpl.rcParams["xtick.major.pad"] + 1.25 * size)


def ladder_figure(spec: LadderSpec, table: pd.DataFrame, title: str = ""):
    """Left: the gap per rung against the client sample-epochs of a run (log), the paper's gap
    dashed, not-run rungs labelled "not run" at the bottom, rungs whose baseline is at chance (:func:`at_chance`: the
    finding leaves them out) as open markers off the line; right: both methods' accuracy per rung (a rung not run
    labelled in place) and the paper's values."""
    import matplotlib.pyplot as plt

    from ..artefacts.figure_rules import declare, label_cell, seeds_label
    from ..spec.paper import get_paper

    pp = get_paper(spec.paper)
    pm, pb = paper_values(spec)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9.5, 3.6))
    x = table.sample_epochs.astype(float).where(table.sample_epochs.notna(), table.rung + 1)
    ran = table.gap.notna()
    chance = ran & at_chance(spec, table)  # their gap measures nothing: not on the line the finding reads
    counted = ran & ~chance
    most, fewer = _seeds(table), _fewer(table)
    if most >= 2:  # error bars only over ≥ 2 seeds (fedlib.repro.artefacts.figure_rules)
        # a rung over fewer seeds than the others (a GPU's top rung) is an open square, named in the legend
        # (seeds_label) and the caption; the line joins every rung the finding reads
        ax1.plot(x[counted], table.gap[counted], color="C0", label="_")
        full = counted & (table["n_seeds"] == most)
        if full.any():  # (every rung over the most seeds may be at chance, drawn apart below)
            ax1.errorbar(x[full], table.gap[full], yerr=table.gap_std[full].fillna(0), marker="o", color="C0",
                         ls="none", capsize=3, label="ours")
        marked = {}
        for n, sel in fewer.items():
            sel = sel & counted
            if not sel.any():
                continue
            name = seeds_label("ours", n, most)
            ax1.errorbar(x[sel], table.gap[sel], yerr=table.gap_std[sel].fillna(0) if n >= 2 else None, marker="s",
                         mfc="white", color="C0", ls="none", capsize=3, label=name)
            marked[name] = n
        declare(ax1, seeds=most, series_seeds=marked or None)
    elif counted.any():  # one seed: no spread measured, said in the key beside the points
        ax1.plot(x[counted], table.gap[counted], marker="o", color="C0",
                 label="ours (1 seed per rung: no spread measured)" if most == 1 else "ours")
    if chance.any():
        ax1.plot(x[chance], table.gap[chance], "o", mfc="none", color="C0", ls="none",
                 label=f"ours, {pp.method_label(spec.baseline)} at chance (left out)")
    if table.paper_gap.notna().any():
        ax1.axhline(float(table.paper_gap.iloc[0]), color="k", ls="--", lw=1, label="paper")
    for v, rung in zip(x[~ran], table.rung[~ran]):  # a word at the bottom, not a marker on the paper's line
        label_cell(ax1, float(v), 0.03, "not run", key=f"gap, rung {int(rung)}", transform=ax1.get_xaxis_transform(),
                   va="bottom", rotation=90)
    lo, hi = float(x.min()), float(x.max())
    for ax in (ax1, ax2):
        ax.set_xlim(lo / 1.6, hi * 1.6)
    ax1.set_xscale("log")
    _rung_ticks(ax1, x)
    ax1.set_xlabel("client sample-epochs per run")
    ax1.set_ylabel(f"{pp.gain_label(spec.method, spec.baseline)} (pp)")
    # below the axes: a key inside it (its lines name the seeds and the paper's value) covers the rungs' points
    ax1.legend(frameon=False, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.36), ncol=1)
    for i, (row, ref) in enumerate(((spec.baseline, pb), (spec.method, pm))):
        label = pp.method_label(row)
        # the baseline's circles, the method's smaller diamonds: two curves at the same accuracy stay told apart
        ax2.plot(x[ran], table[f"{row}_mean"][ran], marker="oD"[i], markersize=(6, 4)[i], color=f"C{i}",
                 label=label if ran.any() else "_")
        if ref is not None:  # the paper's value, in the method's colour; named in the legend when nothing ran
            ax2.axhline(ref, color=f"C{i}", ls=":", lw=1, label="_" if ran.any() else f"{label}: paper")
    if ran.any():  # a rung of ours not run: labelled in place, as the gap panel marks it
        for v, rung in zip(x[~ran], table.rung[~ran]):
            label_cell(ax2, float(v), 0.03, "not run", key=f"rung {int(rung)}", transform=ax2.get_xaxis_transform(),
                       va="bottom", rotation=90)
    ax2.set_xscale("log")
    _rung_ticks(ax2, x)
    ax2.set_xlabel("client sample-epochs per run")
    ax2.set_ylabel(f"{spec.metric.replace('_', ' ')} (%); dotted: paper")
    for n, sel in (fewer.items() if most >= 2 else ()):  # the means over fewer seeds, named at their rung (a
        # marker of their own would hide one method's under the other's where the two are close)
        for v in x[sel & ran]:
            ax2.text(float(v), 0.03, f"{n} of {most} seeds", transform=ax2.get_xaxis_transform(), rotation=90,
                     ha="center", va="bottom", fontsize=7, color="0.35")
    ax2.legend(frameon=False, fontsize=8)
    used = sorted({d for v in table.get("dataset_used", pd.Series(dtype=object)).dropna() for d in str(v).split(", ")})
    if used:  # every axes names the dataset its runs trained on (a stand-in in reduced profiles)
        where = "run on " + ", ".join(pp.dataset_label(d) for d in used)
        ax1.set_title(f"the gap ({where})", fontsize=9)
        ax2.set_title(f"accuracy ({where})", fontsize=9)
    if not ran.any():  # nothing of ours: say so, and where the rungs can run
        for ax in (ax1, ax2):
            ax.set_title("paper only: no rung ran in this profile", fontsize=9)
        ax2.text(0.5, 0.35, "not run here (est. cost per rung in the table);\nthe paper profile runs the "
                 "rungs its device affords", transform=ax2.transAxes, ha="center", va="center", fontsize=8,
                 color="C7")
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


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
    return out
