"""FEDIC's headline where FedAvg learns (issue 49, item 5): the ``learns`` study (notebook 07).

At quick (FashionMNIST-LT, IF = 100, quick's 8 rounds of E = 2) FedAvg scores ≈ 29 %, barely above what a
predictor of the head classes alone would score, so FEDIC − FedAvg there (≈ +49 pp) sets FEDIC against a model
that has hardly learnt.  This study measures the budget at which FedAvg has learnt, and compares there:

1. **The head classes' share.**  The head classes are the fewest of the largest classes (by training samples
   after D_aux is taken out and the long tail applied) that hold at least ``head_fraction`` (default half) of
   the training samples; their share is the test accuracy of a predictor that is right on every test image of
   a head class and wrong on every other: the percentage of the test set in the head classes
   (:func:`head_classes`, :func:`head_share`).  On FashionMNIST-LT at IF = 100 the head classes are 0 and 1
   (5,900 + 3,524 of ≈ 14,900 samples), 2 of the 10 balanced classes: ≈ 20 %.
2. **The sweep.**  FedAvg at the Table 1 cell (IF = 100, the headline column ``cifar10_if100``) with the
   profile's rounds × each of ``multiples`` (local epochs and everything else as the profile has them), one
   seed (``sweep_seed``).
3. **The choice** (:func:`choose_budget`): the smallest multiple where that FedAvg run is at least
   ``margin_pp`` above the head share.  None: FedAvg never learns within the sweep, and nothing is compared.
4. **The comparison**: FEDIC and FedAvg at the chosen budget over ``compare_seeds`` (paired by seed).

Every cell goes through the gate (:func:`fedlib.repro.budget.gate.decide`) with the rounds scaled, so the ×1 runs are
Table 1's own and the ``paper`` profile's cells are "not run: needs a GPU" on a CPU.  The sweep trains (or is
read from the store or the run records) while the cells are built, because the comparison's cells depend on it;
without a store (a plan, a test of the cells) the comparison is listed at the largest multiple, the cost's
upper bound.

**Cost** (quick; CPU seconds of one single-threaded run, from the quick profile's unit costs, QUICK_ESTIMATE in
:mod:`.profiles`: FedAvg ≈ 3 + 28·k s, FEDIC ≈ 3 + 188·k s at k × 8 rounds): the sweep at ×1, 2, 4, 8 ≈ 430 s;
the comparison at ×k adds 3 FEDIC and 2 FedAvg runs ≈ 620·k s: ≈ 28 CPU-min in all at ×2, 49 at ×4, 90 at ×8
(the rule's worst case).  Measured (2026-11-28, cold store, 2 workers on the 2 cores shared at load average
≈ 10, so wall times are 2-4× the CPU time): FedAvg 103 / 146-211 / 389 / 467 s wall at ×1 / 2 / 4 / 8, FEDIC
≈ 1,120 s wall at ×2; the regeneration of notebook 07 took 42.3 min (``_run.json``).  It chose ×2: FedAvg
(seed 0) 28.65 / 50.25 / 51.95 / 61.15 % at ×1 / 2 / 4 / 8 against a head share of 20.85 % (classes 0 and 1;
threshold 35.85 %); at 16 rounds FEDIC 79.68 ± 0.82 %, FedAvg 49.13 ± 4.33 % (seeds 0-2), FEDIC − FedAvg
+30.05 / +34.40 / +27.20 pp by seed.

The summary (``learns`` in the notebook's folder): one row per (method, budget) with ``ours_mean``, ``ours_std``,
``n_seeds``, ``ours_seeds`` (JSON {seed: value}), ``dataset_used``, the head share and threshold, and
``chosen`` (the budget compared).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math

import numpy as np
import pandas as pd

from ...repro import Option, Study
from . import reported as paper
from . import PAPER
from .experiments import CIFAR10_LT, curve
from ...repro.budget.gate import decide

__all__ = ["LEARNS", "head_classes", "head_share", "choose_budget", "learns_figure"]

_EXPERIMENT = "learns"


# ----------------------------------------------------------------------------- the rule, pure
def head_classes(counts, fraction: float = 0.5) -> list[int]:
    """The fewest of the largest classes (by ``counts``, ties by class index) holding at least ``fraction`` of
    all the samples, in class order."""
    counts = np.asarray(counts, dtype=float)
    if not 0 < fraction <= 1 or counts.sum() <= 0:
        raise ValueError(f"fraction must be in (0, 1] and counts positive, got {fraction!r}, {counts.tolist()}")
    order = np.argsort(-counts, kind="stable")
    held = np.cumsum(counts[order])
    n = int(np.searchsorted(held, fraction * counts.sum() - 1e-9 * counts.sum(), side="left")) + 1
    return sorted(int(k) for k in order[:n])


def head_share(test_labels, head) -> float:
    """The accuracy (%) on a test set with labels ``test_labels`` of a predictor that is right on every image of
    the classes ``head`` and wrong on every other."""
    labels = np.asarray(test_labels)
    return 100.0 * float(np.isin(labels, list(head)).mean())


def choose_budget(accuracy: dict, share: float, margin_pp: float):
    """The smallest budget (a key of ``accuracy``: budget → FedAvg's accuracy in %) whose accuracy is at least
    ``share + margin_pp``; None where none is (a budget that did not run, NaN, never qualifies)."""
    ok = [b for b, a in accuracy.items() if a is not None and not math.isnan(a) and a >= share + margin_pp]
    return min(ok) if ok else None


# ----------------------------------------------------------------------------- the cells
def _scaled(profile, multiple: int):
    """``profile`` with its rounds × ``multiple`` (the paper's 200 where the profile keeps them)."""
    rounds = profile.image.get("rounds", paper.SETUP["rounds"])
    return dataclasses.replace(profile, image={**profile.image, "rounds": int(rounds * multiple)})


def _cell(profile, multiple: int, method: str, seed: int, stage: str) -> dict:
    cfg, note = decide(_scaled(profile, multiple), PAPER.base("cifar10", **CIFAR10_LT, method=method), _EXPERIMENT,
                       then={"seed": int(seed)})
    rounds = _scaled(profile, multiple).image["rounds"]
    return {"method": method, "budget": int(multiple), "rounds": int(rounds), "stage": stage, "metric": "accuracy",
            "config": cfg, "note": note}


def _sweep(profile, opts) -> list[dict]:
    return [_cell(profile, k, "fedavg", opts.sweep_seed, "sweep") for k in opts.multiples]


@functools.lru_cache(maxsize=8)
def _split(config_json: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """(training samples per class, test labels) of a configuration's long-tailed split; None when its dataset
    is absent."""
    from ...config import Config
    from ...data import DatasetNotFoundError
    from ...experiment import prepare

    try:
        exp = prepare(Config.from_dict({**json.loads(config_json), "rounds": 1}))
    except DatasetNotFoundError:
        return None
    counts = np.asarray(exp.class_counts).sum(axis=0)
    return tuple(int(c) for c in counts), tuple(int(y) for y in exp.data.test_y.tolist())


def head_of(profile, opts) -> dict:
    """The head classes and their share under ``profile`` (the sweep seed's split): ``classes``, ``share`` (%),
    ``train`` (samples), ``held`` (of them in the head classes); ``share`` NaN where the split is not drawn
    here (a cell not run, its dataset absent)."""
    cfg = _sweep(profile, opts)[0]["config"]
    split = None if cfg is None else _split(json.dumps({**cfg, "method": "fedavg"}, sort_keys=True))
    if split is None:
        return {"classes": [], "share": math.nan, "train": 0, "held": 0}
    counts, labels = split
    head = head_classes(counts, opts.head_fraction)
    return {"classes": head, "share": head_share(labels, head), "train": int(sum(counts)),
            "held": int(sum(counts[k] for k in head))}


def _chosen(profile, opts):
    """The budget compared: ``opts.budget`` if given; else chosen from the sweep trained (or read) through the
    store; without a store (a plan), the largest multiple (the upper bound of the cost)."""
    if opts.budget is not None:
        return opts.budget
    if opts.store is None:
        return max(opts.multiples)
    from ...repro.run.grid import run_grid

    grid = run_grid(_sweep(profile, opts), seeds=None, store=opts.store, workers=profile.workers, progress=False,
                    desc="fedic learns (sweep)", cpus_per_run=profile.cpus_per_run, gpus_per_run=profile.gpus_per_run)
    ok = grid.runs[grid.runs.status == "ok"]
    return choose_budget(dict(zip(ok.budget, ok.accuracy.astype(float))), head_of(profile, opts)["share"],
                         opts.margin_pp)


def _learns_cells(profile, opts) -> list[dict]:
    """FedAvg at every multiple (``sweep_seed``); FEDIC and FedAvg at the chosen budget over ``compare_seeds`` (FedAvg's
    ``sweep_seed`` run is the sweep's own)."""
    cells = _sweep(profile, opts)
    chosen = _chosen(profile, opts)
    if chosen is None:
        return cells
    cells += [_cell(profile, chosen, "fedavg", s, "paired") for s in opts.compare_seeds if s != opts.sweep_seed]
    return cells + [_cell(profile, chosen, "fedic", s, "paired") for s in opts.compare_seeds]


# ----------------------------------------------------------------------------- summary and findings
def _seed_values(text) -> dict[int, float]:
    return {} if not isinstance(text, str) else {int(s): float(v) for s, v in json.loads(text).items()}


def _learns_summary(grid, opts) -> pd.DataFrame:
    """One row per (method, budget): FedAvg at every budget, FEDIC at the chosen one; each seed's value in
    ``ours_seeds``; the head share, the threshold and whether the row is at the chosen budget."""
    frame = curve(grid, ["method", "budget", "rounds"])
    head = head_of(opts.profile, opts)
    fedic = frame[(frame.method == "fedic") & (frame.n_seeds > 0)]
    chosen = int(fedic.budget.iloc[0]) if len(fedic) else None
    sweep = {int(r.budget): _seed_values(r.ours_seeds).get(opts.sweep_seed, math.nan)
             for r in frame[frame.method == "fedavg"].itertuples()}
    frame["sweep_seed_value"] = [sweep.get(int(b), math.nan) if m == "fedavg" else math.nan
                                 for m, b in zip(frame.method, frame.budget)]
    frame["head_classes"] = " ".join(map(str, head["classes"]))
    frame["head_share"] = head["share"]
    frame["margin_pp"] = float(opts.margin_pp)
    frame["threshold"] = head["share"] + float(opts.margin_pp)
    frame["chosen"] = frame.budget == chosen if chosen is not None else False
    frame["paper_dataset"] = "cifar10_lt"  # the paper's dataset of the cell (dataset_used: ours)
    order = {"fedavg": 0, "fedic": 1}
    return frame.sort_values(["method", "budget"], key=lambda s: s.map(order) if s.name == "method" else s,
                             ignore_index=True)


def paired_gaps(frame: pd.DataFrame) -> dict[int, float]:
    """FEDIC − FedAvg per seed at the chosen budget (the seeds both ran)."""
    rows = frame[frame.chosen]
    if not len(rows[rows.method == "fedic"]):
        return {}
    a = _seed_values(rows[rows.method == "fedic"].ours_seeds.iloc[0])
    b = _seed_values(rows[rows.method == "fedavg"].ours_seeds.iloc[0])
    return {s: a[s] - b[s] for s in sorted(set(a) & set(b))}


def _learns_findings(frame: pd.DataFrame, opts) -> list[str]:
    head, share = frame.head_classes.iloc[0] if len(frame) else "", frame.head_share.iloc[0] if len(frame) else math.nan
    if math.isnan(share):
        return ["not run: " + (frame.note.iloc[0] if len(frame) else "no cells")]
    avg = frame[frame.method == "fedavg"]
    lines = [f"Head classes (the largest classes holding ≥ {opts.head_fraction:.0%} of the training samples): "
             f"{head.replace(' ', ', ')}; predicting them alone scores {share:.2f} % of the test set; FedAvg must "
             f"reach {share + opts.margin_pp:.2f} % ({opts.margin_pp:+g} pp)",
             f"FedAvg (seed {opts.sweep_seed}) by budget: " + ", ".join(
                 f"×{b} ({r} rounds) {v:.2f} %" for b, r, v in zip(avg.budget, avg.rounds, avg.sweep_seed_value))]
    t1 = paper.TABLES["table1"]
    theirs = t1.value("fedic", "cifar10_if100").mean - t1.value("fedavg", "cifar10_if100").mean
    gaps = paired_gaps(frame)
    if not frame.chosen.any():
        return lines + [f"FedAvg is never {opts.margin_pp:g} pp above the head share within the sweep: no comparison"]
    row = {m: frame[frame.chosen & (frame.method == m)].iloc[0] for m in ("fedic", "fedavg")}
    g = np.array(list(gaps.values()))
    spread = f" ± {g.std(ddof=1):.2f} (std over {len(g)} seeds)" if len(g) > 1 else " (1 seed)"
    lines.append(f"At ×{int(row['fedic'].budget)} ({int(row['fedic'].rounds)} rounds): "
                 f"FEDIC {row['fedic'].ours_mean:.2f} %, "
                 f"FedAvg {row['fedavg'].ours_mean:.2f} %; FEDIC − FedAvg paired by seed: "
                 + ", ".join(f"seed {s} {v:+.2f}" for s, v in gaps.items())
                 + f"; mean {g.mean():+.2f}{spread} pp (paper, CIFAR-10-LT IF = 100: {theirs:+.2f})")
    return lines


LEARNS = Study(
    _EXPERIMENT, "FEDIC − FedAvg where FedAvg learns: FedAvg against the budget, and FEDIC beside it (IF = 100)",
    build_cells=_learns_cells, build_summary=_learns_summary, build_findings=_learns_findings,
    doc="One row per (method, budget): FedAvg at each multiple of the profile's rounds (one seed, then the "
        "compared seeds at the chosen budget), FEDIC at the chosen budget; ours_seeds holds each seed's accuracy; "
        "head_share is the accuracy of predicting the head classes alone; threshold = head_share + margin_pp.",
    options=(
        Option("multiples", (1, 2, 4), tuple, "the budgets: multiples of the profile's rounds",
               check=lambda v: len(v) > 0 and all(isinstance(k, int) and k >= 1 for k in v),
               allowed="integers ≥ 1", source="fedlib's choice (issue 49: a budget where FedAvg learns)"),
        Option("head_fraction", 0.5, float, "the head classes hold at least this fraction of the training samples",
               check=lambda v: 0 < v <= 1, allowed="a number in (0, 1]", source="fedlib's choice (issue 49)"),
        Option("margin_pp", 15.0, float, "how far (pp) above the head share FedAvg must be to count as learnt",
               check=lambda v: -100 <= v <= 100, allowed="a number in [-100, 100] (smoke: -100, any budget)",
               source="fedlib's choice (issue 49: 'well above its head classes' share')"),
        Option("sweep_seed", 0, int, "the seed of the FedAvg sweep", check=lambda v: v >= 0,
               allowed="an integer ≥ 0", source="fedlib's choice"),
        Option("compare_seeds", (0, 1, 2), tuple, "the seeds of the comparison at the chosen budget",
               check=lambda v: len(v) > 0 and all(isinstance(s, int) and s >= 0 for s in v),
               allowed="integers ≥ 0", source="issue 49 (3 seeds: a measured paired spread)"),
        Option("budget", None, int, "compare at this multiple instead of choosing it from the sweep",
               check=lambda v: v >= 1, allowed="an integer ≥ 1", optional=True, source="fedlib's choice"),
    ))


# ----------------------------------------------------------------------------- the figure
def learns_figure(ctx, study):
    """FedAvg's accuracy against the budget (rounds) with the head share and the threshold, and FEDIC and FedAvg
    (mean ± std over the compared seeds) at the chosen budget."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    from ...repro.artefacts.figure_rules import declare, label_cell, mark_empty, seeds_label, std_caption
    from .experiments import datasets_used

    frame, grid, opts = study.summary, study.grid, study.options
    avg = frame[frame.method == "fedavg"].sort_values("rounds")
    at = frame[frame.chosen]
    n = int(at.n_seeds.max()) if len(at) else 1
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    ax.set_xscale("log", base=2)
    share = float(frame.head_share.iloc[0]) if len(frame) else math.nan
    if avg.sweep_seed_value.notna().any():
        name = seeds_label(f"FedAvg, seed {opts.sweep_seed}", 1, n)
        ax.plot(avg.rounds, avg.sweep_seed_value, marker="o", color="tab:blue", label=name)
        declare(ax, series_seeds={name: 1} if n > 1 else None)
        for r in avg[avg.sweep_seed_value.isna()].itertuples():
            label_cell(ax, r.rounds, float(avg.sweep_seed_value.min()), "not run", key=f"FedAvg @ {r.rounds}",
                       va="top", rotation=90)
        ax.axhline(share, color="0.3", ls="--", lw=1.0,
                   label=f"head classes {frame.head_classes.iloc[0].replace(' ', ', ')} alone ({share:.1f} %)")
        threshold = share + float(opts.margin_pp)
        if threshold > 0:
            ax.axhline(threshold, color="0.3", ls=":", lw=1.0, label=f"head share + {opts.margin_pp:g} pp")
        for m, dx, color, marker in (("fedavg", 0.93, "tab:cyan", "s"), ("fedic", 1.07, "tab:red", "D")):
            row = at[at.method == m]
            if len(row) and row.ours_mean.notna().all():
                r = row.iloc[0]
                yerr = r.ours_std if r.n_seeds >= 2 and n >= 2 else None
                name = f"{'FEDIC' if m == 'fedic' else 'FedAvg'}, {int(r.n_seeds)} seeds at {r.rounds} rounds"
                ax.errorbar([r.rounds * dx], [r.ours_mean], yerr=None if yerr is None else [yerr], fmt=marker,
                            color=color, capsize=3, label=seeds_label(name, int(r.n_seeds), n))
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        ax.set_ylim(0, 100)
        mark_empty(ax, "FedAvg's accuracy against the budget", str(avg.note.iloc[0]) if len(avg) else "not run")
    ticks = sorted(float(v) for v in avg.rounds.unique())
    ax.update_datalim([(t, share if not math.isnan(share) else 0.0) for t in ticks])
    ax.autoscale_view()
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_locator(NullLocator())
    epochs = ctx.profile.image.get("local_epochs", paper.SETUP["local_epochs"])
    ax.set_xlabel(f"rounds (× the profile's {int(ticks[0]) if ticks else 0}; {epochs} local epochs each)")
    ax.set_ylabel("test accuracy (%)")
    used = datasets_used(grid)
    ax.set_title("FEDIC − FedAvg where FedAvg learns (IF = 100)"
                 + (f", run on {', '.join(ctx.paper.dataset_label(u) for u in used)}" if used else ""), fontsize=9)
    fig.tight_layout()
    ctx.save_figure(fig, "learns_budget", experiment="learns", title=study.study.title,
                    caption="FedAvg (one seed) at each budget; the dashed line is the accuracy of predicting the head "
                            "classes alone, the dotted one the threshold FedAvg must reach; at the chosen budget, "
                            "FEDIC and FedAvg over the compared seeds. " + std_caption(n),
                    datasets=used, seeds=tuple(opts.compare_seeds), placeholder=not used, findings=study.findings)
    return fig
