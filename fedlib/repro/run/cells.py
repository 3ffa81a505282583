"""Train chosen cells of a paper's table into the store: the GPU cells of a paper profile, a few at a time.

A paper-profile regeneration on a CPU marks the cells it cannot afford "not run: needs a GPU".  On a
machine with a GPU, this command trains a chosen few of them (rows × columns × seeds of one table) on
that device, into the results store, exactly as the regeneration would configure them::

    python -m fedlib.repro.run.cells --paper fedlc --table table1 --columns cifar10_beta0.5 \\
        --rows fedavg,fedlc --seeds 0,1 --device cuda --store results/ --workers 4

A later regeneration that reads the same store, on any machine, shows those cells with the trained
numbers and the device they ran on (:meth:`fedlib.repro.spec.profiles.Profile.config` looks up a cell the CPU
cannot afford with :func:`fedlib.repro.budget.costs.stored_gpu_runs` before marking it "not run").  Each run's
time and device are printed, and written into the store folder as ``cells-<paper>-<table>.json``.
``--status`` says how far each run has got, ``--record DIR`` writes its table and learning curves.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from .gate import decide

__all__ = ["cell_jobs", "train_cells", "progress", "record", "precision_check", "gpu_folder", "main"]


def gpu_folder(precision: str = "float32") -> str:
    """The folder, under ``figures/<paper>/<profile>/``, of the records of GPU runs in ``precision``: ``gpu``
    for float32, ``gpu-<precision>`` for another (a record never mixes precisions)."""
    return "gpu" if precision == "float32" else f"gpu-{precision}"


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [t for t in text.split(",") if t]


def cell_jobs(paper: str, table: str, *, profile: str = "paper", rows=None, columns=None, device: str = "cuda",
              precision: str | None = None) -> list[dict]:
    """The table's cells (``rows`` × ``columns``; None: all) as the ``profile`` configures them on
    ``device`` (on a GPU in ``precision``; None: the profile's ``gpu_precision``): dicts of row, column,
    config.  An unknown row or column is an error naming the known ones."""
    from ..spec.paper import get_paper

    pp = get_paper(paper)
    if table not in pp.tables:
        raise ValueError(f"table must be one of {', '.join(pp.tables)} for {paper}, got {table!r}")
    t = pp.table(table)
    known_rows, known_cols = [r.key for r in t.rows], [c.key for c in t.columns]
    for name, asked, known in (("rows", rows, known_rows), ("columns", columns, known_cols)):
        bad = [a for a in asked or () if a not in known]
        if bad:
            raise ValueError(f"{name} must be among {', '.join(known)} ({paper} {table}), got {', '.join(bad)}")
    prof = dataclasses.replace(pp.profile(profile), device=device)
    if precision is not None:
        prof = dataclasses.replace(prof, gpu_precision=precision)
    out = []
    for r in rows or known_rows:
        for c in columns or known_cols:
            cfg, note = decide(prof, t.config(r, c), table)  # on a GPU, in the profile's gpu_precision
            out.append({"row": r, "column": c, "config": cfg, "note": note})
    return out


def train_cells(paper: str, table: str, *, seeds, profile: str = "paper", rows=None, columns=None,
                device: str = "cuda", store=None, workers: int = 1, progress: bool = True):
    """Train the chosen cells (each seed in ``seeds``) into ``store``; returns the grid's runs
    (:class:`fedlib.repro.run.grid.GridResult`)."""
    from .grid import run_grid

    seeds = [int(s) for s in seeds]
    if not seeds or any(s < 0 for s in seeds):
        raise ValueError(f"seeds must be one or more integers ≥ 0, got {seeds!r}")
    jobs = cell_jobs(paper, table, profile=profile, rows=rows, columns=columns, device=device)
    return run_grid(jobs, seeds=seeds, store=store, workers=workers, progress=progress,
                    desc=f"{paper} {table} on {device}")


def _read_checkpoint(entry: Path) -> dict | None:
    """A run's checkpoint, read on this machine's CPU (a GPU's tensors mapped to it), or None where there
    is none or its checksum fails.  Read only: unlike the store's own reader, which a run resumes from,
    it never removes an entry (a GPU checkpoint is not corrupted because this machine has no GPU)."""
    import hashlib
    import io

    import torch

    path, sums = entry / "checkpoint.pt", entry / "checkpoint.sha256"
    if not (path.exists() and sums.exists()):
        return None
    blob = path.read_bytes()
    if hashlib.sha256(blob).hexdigest() != sums.read_text().strip():
        return None
    return torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)


def progress(paper: str, table: str, *, seeds, profile: str = "paper", rows=None, columns=None,
             device: str = "cuda", store=None, device_name: str | None = None, precision: str | None = None):
    """How far each chosen run has got in ``store``: ``(runs, curves)``.

    ``runs``: one row per cell and seed with ``state`` (``finished``, ``interrupted`` -- a checkpoint,
    no result -- or ``not started``), the ``round`` reached of ``rounds`` (of a method with several
    stages: the round within ``stage``, the index of the stage it stopped in), the last evaluated test
    ``accuracy`` (%), the training seconds so far (``elapsed_s``), the ``device_name`` (from the result's
    summary; ``device_name`` for runs whose summary is not written yet), the ``precision``, the ``engine``,
    ``memory_budget_gb`` and ``memory_format`` (:func:`~fedlib.repro.budget.costs.gpu_variant`: those whose entry
    the store holds) and the training code version of the store key; ``paired_round`` and ``paired_accuracy``,
    where the runs of a seed are compared (:func:`_paired`).  ``curves``: every evaluated round of every run (row,
    column, seed, round, test_accuracy %).
    An interrupted run resumes from its checkpoint when the same command trains it again with this store."""
    import pandas as pd

    from ...config import Config
    from ...store import code_version
    from ..budget.costs import gpu_variant
    from .grid import as_store

    store = as_store(store)
    runs, curves = [], []
    for job in cell_jobs(paper, table, profile=profile, rows=rows, columns=columns, device=device,
                         precision=precision):
        if job["config"] is None:
            continue
        for seed in seeds:
            cfg = Config.from_dict({**job["config"], "seed": int(seed)})
            variant, key = gpu_variant(store, cfg.to_dict())  # the engine and memory budget it trained under
            result = store.load_result(key)
            row = {"row": job["row"], "column": job["column"], "seed": int(seed), "rounds": cfg.rounds,
                   "device_name": device_name, "precision": cfg.precision, **variant,
                   "code_version": code_version(cfg), "key": key}
            if result is not None:
                history, summary = result["history"], result["summary"]
                row.update(state="finished", round=cfg.rounds, elapsed_s=summary.get("wall_time_s"),
                           device_name=summary.get("device_name") or device_name)
            else:
                ckpt = _read_checkpoint(store.entry(key))
                stage = (ckpt or {}).get("stage_state") or {}
                history = list((ckpt or {}).get("history") or []) + list(stage.get("history") or [])
                row.update(state="interrupted" if ckpt else "not started", round=stage.get("round", 0),
                           elapsed_s=(ckpt or {}).get("elapsed_s"), stage=(ckpt or {}).get("stage", 0),
                           device_name=device_name if ckpt else None)  # not started: on no device yet
            evaluated = [h for h in history if h.get("test_accuracy") is not None]
            row["accuracy"] = 100.0 * evaluated[-1]["test_accuracy"] if evaluated else None
            runs.append(row)
            curves += [{"row": job["row"], "column": job["column"], "seed": int(seed), "round": h["round"],
                        "test_accuracy": 100.0 * h["test_accuracy"]} for h in evaluated]
    runs = pd.DataFrame(runs)
    curves = pd.DataFrame(curves, columns=["row", "column", "seed", "round", "test_accuracy"])
    return _paired(runs, curves), curves


def _paired(runs, curves):
    """``runs`` with ``paired_round`` and ``paired_accuracy``: per column and seed, the last evaluated round
    that every row's run of that seed reached, and each run's accuracy there.  Runs stopped at different
    rounds (one finished, one interrupted) are compared there, never at their different last rounds;
    NaN where a run of the seed has no evaluation yet."""
    runs = runs.assign(paired_round=float("nan"), paired_accuracy=float("nan"))
    if runs.empty:
        return runs.astype({"paired_round": "Int64"})
    for (col, seed), group in runs.groupby(["column", "seed"]):
        mine = curves[(curves.column == col) & (curves.seed == seed)]
        reached = [set(mine[mine.row == r]["round"]) for r in group.row]
        common = set.intersection(*reached) if reached else set()
        if not common:
            continue
        at = max(common)
        for i, r in zip(group.index, group.row):
            hit = mine[(mine.row == r) & (mine["round"] == at)]
            runs.loc[i, ["paired_round", "paired_accuracy"]] = [at, float(hit.test_accuracy.iloc[-1])]
    return runs.astype({"paired_round": "Int64"})


def compared(runs):
    """The rows of ``runs`` that a comparison counts: per column, the seeds whose runs were paired at the
    furthest round any seed's were (``paired_round``).  A seed paired earlier (one of its runs still
    training) is left out, not averaged with seeds compared at the end: accuracy at round 60 and at round
    400 are not draws of one quantity."""
    runs = runs[runs.paired_accuracy.notna()]
    if runs.empty:
        return runs
    top = runs.groupby("column").paired_round.transform("max")
    return runs[runs.paired_round == top]


def _gain_text(pp, runs) -> str:
    """With two rows in one column: the second's gain over the first, seed by seed, at the last round both
    runs of the seed reached (``paired_round``), beside the paper's gain ("" where no seed has one)."""
    import pandas as pd

    rows, cols = list(dict.fromkeys(runs.row)), set(runs.column)
    if len(rows) != 2 or len(cols) != 1:
        return ""
    def gains(frame):
        a, b = (frame[frame.row == r].set_index("seed") for r in rows)
        seeds = [s for s in a.index if s in b.index and pd.notna(a.loc[s, "paired_accuracy"])
                 and pd.notna(b.loc[s, "paired_accuracy"])]
        return {s: (int(a.loc[s, "paired_round"]), float(b.loc[s, "paired_accuracy"] - a.loc[s, "paired_accuracy"]))
                for s in seeds}

    counted, every = gains(compared(runs)), gains(runs)
    if not counted:
        return ""
    at = next(iter(counted.values()))[0]
    mean = sum(g for _, g in counted.values()) / len(counted)
    paper = (runs[runs.row == rows[1]].paper.iloc[0] - runs[runs.row == rows[0]].paper.iloc[0]
             if runs.paper.notna().all() else None)
    text = (f"{pp.gain_label(rows[1], rows[0])} at round {at} (the furthest round both runs of a seed reached): "
            f"{mean:+.2f} pp over {len(counted)} seed{'s' if len(counted) > 1 else ''} "
            f"({', '.join(f'seed {s}: {g:+.2f}' for s, (_, g) in counted.items())})")
    text += (f"; the paper: {paper:+.2f} pp at round {int(runs.rounds.max())}. " if paper is not None else ". ")
    behind = {s: v for s, v in every.items() if s not in counted}
    if behind:
        text += ("Not counted yet, a run still training: " + ", ".join(f"seed {s} ({g:+.2f} at round {r})"
                                                                        for s, (r, g) in behind.items()) + ". ")
    return text


SEED_DASHES = ("", (5, 2), (9, 2, 2, 2), (2.5, 1.5, 2.5, 4), (12, 3))
"""Each seed's line in the GPU learning curves: solid, then dash patterns that no dotted line (the paper's final
value, ``:``) shares."""


def record(paper: str, table: str, out_dir, *, seeds, profile: str = "paper", rows=None, columns=None,
           device: str = "cuda", store=None, device_name: str | None = None, trained_at: str | None = None,
           precision: str | None = None) -> dict:
    """Write what the chosen GPU runs (in ``precision``; None: the profile's ``gpu_precision``) have reached
    (:func:`progress`) into ``out_dir``:
    ``<table>_gpu_runs`` (a table: state, round, accuracy, device; beside the paper's value) and
    ``<table>_gpu_curves`` (test accuracy against rounds, the paper's final value dashed), each with
    its sidecar (``trained_at``: the commit the runs trained at, where it is not this one).  Returns the
    two tables."""
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..artefacts.saving import save_figure, save_table
    from ..spec.paper import get_paper

    pp = get_paper(paper)
    t = pp.table(table)
    runs, curves = progress(paper, table, seeds=seeds, profile=profile, rows=rows, columns=columns, device=device,
                            store=store, device_name=device_name, precision=precision)
    if runs.empty:
        raise ValueError(f"no run of {paper} {table} is configured for the chosen rows and columns")
    reported = {(r, c): t.value(r, c) for r, c in set(zip(runs.row, runs.column))}
    runs["paper"] = [getattr(reported[(r, c)], "mean", None) for r, c in zip(runs.row, runs.column)]
    runs["gap_pp"] = runs.accuracy - runs.paper
    devices = sorted({d for d in runs.device_name if isinstance(d, str) and d})  # (an unwritten one: NaN)
    precisions = sorted(set(runs.precision))
    states = ", ".join(f"{n} {s}" for s, n in runs.state.value_counts().items())
    meta = {"profile": profile, "experiment": table, "seeds": [int(s) for s in seeds], "datasets": sorted(
        {job["config"]["dataset"] for job in cell_jobs(paper, table, profile=profile, rows=rows, columns=columns,
                                                       device=device) if job["config"]}),
            "device": device, "device_names": devices, "precision": ", ".join(precisions),
            "engines": sorted(set(runs.engine)), "memory_budgets_gb": sorted(set(runs.memory_budget_gb)),
            "memory_formats": sorted(set(runs.memory_format)), "code_versions": sorted(set(runs.code_version)),
            "parameters": {"rows": sorted(set(runs.row)), "columns": sorted(set(runs.column))},
            "trained_at": trained_at, "command": "python -m fedlib.repro.run.cells"}
    on = ", ".join(devices) or device
    on += "" if precisions == ["float32"] else f", in {', '.join(precisions)}"
    caption = (f"{paper} {table} on {on}, {profile} profile: {states}. "
               + _gain_text(pp, runs)
               + 
               "An interrupted run's accuracy is its last evaluation before the interruption, not the cell's "
               "result; the same command resumes it from its checkpoint.")
    cols = ["row", "column", "seed", "state", "round", "rounds", "accuracy", "paired_round", "paired_accuracy", "paper",
            "gap_pp", "elapsed_s", "device_name", "precision", "engine", "memory_budget_gb", "memory_format"]
    save_table(runs[cols], f"{table}_gpu_runs", out_dir, title=f"{paper} {table}: the runs trained on a GPU",
               caption=caption, **meta)
    pair = list(dict.fromkeys(runs.row))  # with two rows in one column: a panel of the second's gain, per seed
    gain_panel = len(pair) == 2 and runs.column.nunique() == 1 and not curves.empty
    fig, axes = plt.subplots(2 if gain_panel else 1, 1, figsize=(6.4, 5.8 if gain_panel else 3.8), sharex=True,
                             squeeze=False, gridspec_kw={"height_ratios": [2, 1]} if gain_panel else None)
    ax = axes[0, 0]
    dashes = True
    if not curves.empty:
        curves = curves.assign(method=[pp.method_label(r) for r in curves.row])
        palette = {pp.method_label(r): pp.method_colors.get(r, "0.4") for r in set(curves.row)}
        seeds_drawn = sorted(set(curves.seed))
        if len(seeds_drawn) <= len(SEED_DASHES):  # dashed, never dotted: a dotted line is the paper's value
            dashes = {s: SEED_DASHES[i] for i, s in enumerate(seeds_drawn)}
        sns.lineplot(data=curves, x="round", y="test_accuracy", hue="method", style="seed", units="seed",
                     estimator=None, ax=ax, lw=1.0, palette=palette, dashes=dashes)
        stopped_at = sorted({int(r) for r in runs[runs.state == "interrupted"]["round"] if r})
        if stopped_at:  # on the axis, under the curves: a marker on a curve would hide a run with one point
            ax.plot(stopped_at, [0.02] * len(stopped_at), transform=ax.get_xaxis_transform(), marker="^", ms=7,
                    ls="none", color="0.25", clip_on=False, label="a run stopped here (resumes)")
        for (r, c), cell in reported.items():
            if cell is not None:
                ax.axhline(cell.mean, ls=":", lw=1.2, color=pp.method_colors.get(r, "0.4"),
                           label=f"{pp.method_label(r)}: paper (round {int(runs.rounds.max())})")
        ax.set_xlim(0, int(runs.rounds.max()))
    ax.set_ylabel("test accuracy (%)")
    where = ", ".join(pp.dataset_label(d) for d in meta["datasets"])
    columns = [pp.table(table).column(c).label for c in dict.fromkeys(runs.column)]  # the setting: β = 0.5 …
    where = ", ".join(columns) + (f" (on {where})" if where and not all(where in c for c in columns) else "") \
        if columns else where
    left = [f"{n} {'stopped at round ' + str(int(runs[runs.state == s]['round'].max())) if s == 'interrupted' else s}"
            for s, n in runs.state.value_counts().items() if s != "finished"]
    ax.set_title(f"{paper} {table} on {where}, on a GPU ({on})"
                 + (f"\n{', '.join(left)} (of {len(runs)} runs, {int(runs.rounds.max())} rounds each): not the "
                    f"cells' results" if left else ""), fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if gain_panel:
        _gain_panel(axes[1, 0], pp, runs, curves, pair, dashes)
    axes[-1, 0].set_xlabel("communication round")
    save_figure(fig, f"{table}_gpu_curves", out_dir, title=f"{paper} {table}: GPU learning curves",
                caption=caption, close=True, **meta)
    return {"runs": runs, "curves": curves}


def _gain_panel(ax, pp, runs, curves, pair, dashes) -> None:
    """The second row's accuracy minus the first's, per seed, at every round both runs of the seed evaluated,
    beside the paper's gain (dotted): two curves a few tenths apart are one line in the accuracy panel."""
    import seaborn as sns

    base, method = pair
    wide = curves.pivot_table(index=["seed", "round"], columns="row", values="test_accuracy", aggfunc="last")
    wide = wide.dropna(subset=[base, method]) if {base, method} <= set(wide.columns) else wide.iloc[:0]
    color = pp.method_colors.get(method, "0.3")
    if len(wide):
        gains = (wide[method] - wide[base]).rename("gain").reset_index()
        sns.lineplot(data=gains, x="round", y="gain", style="seed", units="seed", estimator=None, color=color,
                     lw=1.0, dashes=dashes, legend=False, ax=ax)
    paper = runs.groupby("row").paper.first()
    if paper.notna().all():
        ax.axhline(paper[method] - paper[base], ls=":", lw=1.2, color=color,
                   label=f"the paper: {paper[method] - paper[base]:+.2f} pp (round {int(runs.rounds.max())})")
    ax.axhline(0.0, lw=0.8, color="0.55", label="no gain")
    ax.set_ylabel(f"{pp.gain_label(method, base)} (pp)", fontsize=8)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def _seed_pairs(curves, at_round: dict) -> list[float]:
    """|accuracy difference| (pp) between two seeds of one row and column, at ``at_round[(row, column)]``: every
    pair of seeds evaluated there."""
    out = []
    for (row, col), g in curves.groupby(["row", "column"]):
        at = at_round.get((row, col))
        hit = g[g["round"] == at].drop_duplicates("seed").set_index("seed").test_accuracy
        vals = list(hit.values)
        out += [abs(a - b) for i, a in enumerate(vals) for b in vals[i + 1:]]
    return out


def precision_check(paper: str, table: str, out_dir, *, seeds, precision: str, profile: str = "paper", rows=None,
                    columns=None, device: str = "cuda", store=None, trained_at: str | None = None) -> dict:
    """Does training in ``precision`` move a run more than changing its seed does?  For every run (row, column,
    seed) held in the store both in float32 and in ``precision``: the two accuracies at the furthest round both
    evaluated, and their difference; beside it, the difference between two seeds of one row and precision at
    that round (the yardstick: how far a run moves when only its seed changes).  Writes
    ``<table>_precision_check`` (a table) and ``<table>_precision_curves`` (the difference round by round,
    the seed-to-seed band behind it) into ``out_dir``; returns ``{"pairs", "seed_diffs", "verdict"}``.
    ``verdict`` is ``within`` (the mean same-seed difference is at most the mean seed-to-seed one), ``beyond``,
    or ``no pair`` / ``no yardstick`` where the store holds no run in both precisions / no two seeds."""
    import matplotlib.pyplot as plt
    import pandas as pd
    import seaborn as sns

    from ..artefacts.saving import save_figure, save_table
    from ..spec.paper import get_paper

    if precision == "float32":
        raise ValueError("precision must be another than float32 (tf32 or bf16): it is checked against float32")
    pp = get_paper(paper)
    kw = dict(seeds=seeds, profile=profile, rows=rows, columns=columns, device=device, store=store)
    (ref_runs, ref), (new_runs, new) = (progress(paper, table, precision=p, **kw) for p in ("float32", precision))
    both = ref.merge(new, on=["row", "column", "seed", "round"], suffixes=("_float32", f"_{precision}"))
    both["diff_pp"] = both[f"test_accuracy_{precision}"] - both["test_accuracy_float32"]
    pairs = both.loc[both.groupby(["row", "column", "seed"])["round"].idxmax()] if not both.empty else both
    pairs = pairs.reset_index(drop=True)
    # as the gains (compared): only runs compared at the furthest round of their column count; a difference at
    # round 65 is no draw of one at round 400
    top = pairs.groupby("column")["round"].transform("max") if len(pairs) else pairs["round"]
    behind, pairs = pairs[pairs["round"] != top], pairs[pairs["round"] == top].reset_index(drop=True)
    at = {(row, col): int(r) for row in set(ref.row) | set(new.row)
          for col, r in pairs.groupby("column")["round"].max().items()}
    seed_diffs = _seed_pairs(ref, at) + _seed_pairs(new, at)
    mean_prec = float(pairs.diff_pp.abs().mean()) if len(pairs) else float("nan")
    mean_seed = sum(seed_diffs) / len(seed_diffs) if seed_diffs else float("nan")
    verdict = ("no pair" if pairs.empty else "no yardstick" if not seed_diffs else
               "within" if mean_prec <= mean_seed else "beyond")
    text = {"no pair": f"No run is in the store both in float32 and in {precision} yet.",
            "no yardstick": f"{precision} moves a run by {mean_prec:.2f} pp on average ({len(pairs)} runs); no two "
                            "seeds of one row reached the same round, so there is no seed-to-seed yardstick yet.",
            "within": f"{precision} moves a run by {mean_prec:.2f} pp on average ({len(pairs)} runs, largest "
                      f"{pairs.diff_pp.abs().max():.2f}): within the {mean_seed:.2f} pp that changing only the seed "
                      f"moves one ({len(seed_diffs)} seed pairs).",
            "beyond": f"{precision} moves a run by {mean_prec:.2f} pp on average ({len(pairs)} runs, largest "
                      f"{pairs.diff_pp.abs().max():.2f}): more than the {mean_seed:.2f} pp that changing only the "
                      f"seed moves one ({len(seed_diffs)} seed pairs)."}[verdict]
    if len(behind):
        text += (" Not counted yet, a run still training: " + ", ".join(
            f"{r.row} seed {r.seed} ({r.diff_pp:+.2f} at round {r['round']})" for _, r in behind.iterrows()) + ".")
    held = {(r.row, r.column, r.seed) for r in pairs.itertuples()} if len(pairs) else set()

    def engines(runs) -> str:  # engines, budgets, layouts of the runs compared (all, where none is compared yet)
        mine = runs[[(r, c, s) in held for r, c, s in zip(runs.row, runs.column, runs.seed)]] if held else runs
        layouts = mine.memory_format if "memory_format" in mine else ["model"] * len(mine)
        return " and ".join(sorted(f"{e} engine, {b:g} GB" + ("" if f == "model" else f", {f}")
                                   for e, b, f in set(zip(mine.engine, mine.memory_budget_gb, layouts))))

    caption = (f"{paper} {table}: the same runs (method, column, seed) trained on a GPU in float32 ("
               f"{engines(ref_runs)}) and in {precision} ({engines(new_runs)}), compared at the furthest round "
               f"both evaluated. {text} The yardstick: the accuracy difference between two seeds of one method and "
               f"precision at that round. The engines, memory budgets (how many clients are stacked) and layouts "
               f"compute the same mathematics and differ in rounding only (tests/test_vectorized.py, "
               f"tests/test_memory_format.py); what is compared is the whole arithmetic a run in {precision} would "
               f"train in.")
    meta = {"profile": profile, "experiment": table, "seeds": [int(s) for s in seeds], "device": device,
            "precision": f"float32, {precision}", "verdict": verdict, "trained_at": trained_at,
            "parameters": {"rows": sorted(set(ref_runs.row)), "columns": sorted(set(ref_runs.column))},
            "command": "python -m fedlib.repro.lease --import"}
    cols = ["row", "column", "seed", "round", "test_accuracy_float32", f"test_accuracy_{precision}", "diff_pp"]
    save_table(pairs[cols] if len(pairs) else pd.DataFrame(columns=cols), f"{table}_precision_check", out_dir,
               title=f"{paper} {table}: {precision} against float32, run by run", caption=caption, **meta)
    # one panel a method (and column): the methods' differences never hide under each other; in a panel the
    # seeds differ in dash and marker
    panels = sorted(set(zip(both.row, both.column)), key=lambda rc: (rc[1], rows.index(rc[0]) if rows else 0)) \
        if not both.empty else [(None, None)]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels) + 1.6, 3.6), sharey=True, squeeze=False)
    for ax, (row, col) in zip(axes[0], panels):
        if seed_diffs:  # behind the curves: the band a seed change spans
            ax.axhspan(-mean_seed, mean_seed, color="0.88", zorder=0,
                       label=f"± mean difference between\ntwo seeds ({mean_seed:.2f} pp)")
        ax.axhline(0, color="0.3", lw=0.8, zorder=1)
        mine = both[(both.row == row) & (both.column == col)] if row is not None else both
        for i, (seed, g) in enumerate(mine.groupby("seed")):  # later seeds: larger hollow markers, on top, so
            # that a point another seed shares (a run with one evaluation, say) rings it instead of hiding under it
            ax.plot(g["round"], g.diff_pp, color=pp.method_colors.get(row, "0.3"), lw=1.0, ls=("-", "--", ":", "-.")[i % 4],
                    marker="osD^v"[i % 5], ms=3 + 2.5 * i, mfc="none" if i else None, mew=1.2, zorder=3 + i,
                    label=f"seed {seed}")
        ax.set_title(f"{pp.method_label(row)}" + (f", {col}" if len(set(both.column)) > 1 else "")
                     if row is not None else f"no run in both float32 and {precision} yet", fontsize=9)
        ax.set_xlabel("communication round")
    ax = axes[0][-1]  # one legend, beside the last panel (the seeds' styles are the same in every panel)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    axes[0][0].set_ylabel(f"accuracy, {precision} − float32 (pp)")
    fig.suptitle(f"{paper} {table}: a run in {precision} against the same run in float32\n{text}", fontsize=8,
                 wrap=True)
    fig.tight_layout()
    save_figure(fig, f"{table}_precision_curves", out_dir, title=f"{paper} {table}: {precision} against float32",
                caption=caption, close=True, **meta)
    return {"pairs": pairs, "seed_diffs": seed_diffs, "verdict": verdict}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedlib.repro.run.cells", description=__doc__.split("\n\n")[0])
    ap.add_argument("--paper", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--rows", help="comma-separated row keys (default: all)")
    ap.add_argument("--columns", help="comma-separated column keys (default: all)")
    ap.add_argument("--seeds", default="0", help="comma-separated seeds (default: 0)")
    ap.add_argument("--profile", default="paper")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--store", help="results store folder (default: $FEDLIB_STORE or the regeneration store)")
    ap.add_argument("--workers", type=int, default=1, help="runs trained at once (on one GPU they share it)")
    ap.add_argument("--status", action="store_true", help="train nothing: print how far each run has got")
    ap.add_argument("--record", metavar="DIR", help="train nothing: write the runs' table and curves into DIR")
    ap.add_argument("--device-name", help="with --status/--record: the device of runs whose summary is unwritten")
    ap.add_argument("--trained-at", help="with --record: the git commit the runs trained at")
    a = ap.parse_args(argv)
    if a.status or a.record:
        kw = dict(seeds=_split(a.seeds), profile=a.profile, rows=_split(a.rows), columns=_split(a.columns),
                  device=a.device, store=a.store, device_name=a.device_name)
        if a.record:
            runs = record(a.paper, a.table, a.record, trained_at=a.trained_at, **kw)["runs"]
        else:
            runs = progress(a.paper, a.table, **kw)[0]
        print(runs.drop(columns=["code_version", "key"], errors="ignore").to_string(index=False))
        return 0
    t0 = time.time()
    grid = train_cells(a.paper, a.table, seeds=_split(a.seeds), profile=a.profile, rows=_split(a.rows),
                       columns=_split(a.columns), device=a.device, store=a.store, workers=a.workers)
    cols = [c for c in ("row", "column", "seed", "status", "accuracy", "wall_time_s", "device_name", "note")
            if c in grid.runs]
    print(grid.runs[cols].to_string(index=False))
    print(f"{len(grid.runs)} runs in {time.time() - t0:.0f} s")
    if a.store:
        trained = {"paper": a.paper, "table": a.table, "profile": a.profile, "device": a.device,
                  "wall_s": time.time() - t0, "runs": json.loads(grid.runs[cols].to_json(orient="records"))}
        Path(a.store).mkdir(parents=True, exist_ok=True)
        (Path(a.store) / f"cells-{a.paper}-{a.table}.json").write_text(json.dumps(trained, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
