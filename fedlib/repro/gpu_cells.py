"""Train chosen cells of a paper's table into the store: the GPU cells of a paper profile, a few at a time.

A paper-profile regeneration on a CPU marks the cells it cannot afford "not run: needs a GPU".  On a
machine with a GPU, this command trains a chosen few of them (rows × columns × seeds of one table) on
that device, into the results store, exactly as the regeneration would configure them::

    python -m fedlib.repro.gpu_cells --paper fedlc --table table1 --columns cifar10_beta0.5 \\
        --rows fedavg,fedlc --seeds 0,1 --device cuda --store results/ --workers 4

A later regeneration that reads the same store, on any machine, shows those cells with the trained
numbers and the device they ran on (:meth:`fedlib.repro.spec.profiles.Profile.config` looks up a cell the CPU
cannot afford with :func:`fedlib.repro.budget.costs.stored_gpu_runs` before marking it "not run").  Each run's
time and device are printed, and written into the store folder as ``cells-<paper>-<table>.json``.
``--status`` says how far each run has got, ``--record DIR`` writes its table and learning curves.

Here: the command and what it trains and records; the cells as the profile configures them are
:mod:`fedlib.repro.budget.cell_jobs`, how far each run has got :mod:`fedlib.repro.budget.cell_progress`, what a
run left in the store :mod:`fedlib.repro.run.gpu_runs`, the float32-against-another-precision check
:mod:`fedlib.repro.gpu_precision` (each importable from here).  It was ``fedlib.repro.gpu_cells`` until the
layers of issue 50: the outputs it made before name that command.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from .budget.cell_jobs import cell_jobs
from .budget.cell_progress import progress
from .gpu_precision import precision_check
from .run.gpu_runs import compared, gpu_folder

__all__ = ["cell_jobs", "train_cells", "progress", "record", "precision_check", "gpu_folder", "main"]


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [t for t in text.split(",") if t]


def train_cells(paper: str, table: str, *, seeds, profile: str = "paper", rows=None, columns=None,
                device: str = "cuda", store=None, workers: int = 1, progress: bool = True):
    """Train the chosen cells (each seed in ``seeds``) into ``store``; returns the grid's runs
    (:class:`fedlib.repro.run.grid.GridResult`)."""
    from .run.grid import run_grid

    seeds = [int(s) for s in seeds]
    if not seeds or any(s < 0 for s in seeds):
        raise ValueError(f"seeds must be one or more integers ≥ 0, got {seeds!r}")
    jobs = cell_jobs(paper, table, profile=profile, rows=rows, columns=columns, device=device)
    return run_grid(jobs, seeds=seeds, store=store, workers=workers, progress=progress,
                    desc=f"{paper} {table} on {device}")


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

    from .artefacts.saving import save_figure, save_table
    from .spec.paper import get_paper

    pp = get_paper(paper)
    t = pp.table(table)
    named = f"{pp.title.split(' (')[0]} Table {t.number}"  # "FedLC Table 1": the reader's words, not the ids
    runs, curves = progress(paper, table, seeds=seeds, profile=profile, rows=rows, columns=columns, device=device,
                            store=store, device_name=device_name, precision=precision)
    if runs.empty:
        raise ValueError(f"no run of {paper} {table} is configured for the chosen rows and columns")
    reported = {(r, c): t.value(r, c) for r, c in dict.fromkeys(zip(runs.row, runs.column))}  # in the runs' order
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
            "trained_at": trained_at, "command": "python -m fedlib.repro.gpu_cells"}
    on = ", ".join(devices) or device
    on += "" if precisions == ["float32"] else f", in {', '.join(precisions)}"
    caption = (f"{named} on {on}, {profile} profile: {states}. "
               + _gain_text(pp, runs)
               + 
               "An interrupted run's accuracy is its last evaluation before the interruption, not the cell's "
               "result; the same command resumes it from its checkpoint.")
    cols = ["row", "column", "seed", "state", "round", "rounds", "accuracy", "paired_round", "paired_accuracy", "paper",
            "gap_pp", "elapsed_s", "device_name", "precision", "engine", "memory_budget_gb", "memory_format"]
    save_table(runs[cols], f"{table}_gpu_runs", out_dir, title=f"{named}: the runs trained on a GPU",
               caption=caption, **meta)
    pair = list(dict.fromkeys(runs.row))  # with two rows in one column: a panel of the second's gain, per seed
    gain_panel = len(pair) == 2 and runs.column.nunique() == 1 and not curves.empty
    fig, axes = plt.subplots(2 if gain_panel else 1, 1, figsize=(6.4, 5.8 if gain_panel else 3.8), sharex=True,
                             squeeze=False, gridspec_kw={"height_ratios": [2, 1]} if gain_panel else None)
    ax = axes[0, 0]
    dashes = True
    if not curves.empty:
        label = {r: pp.plain_label(r) for r in runs.row}  # every curve here is ours
        curves = curves.assign(method=[label[r] for r in curves.row])
        palette = {label[r]: pp.method_colors.get(r, "0.4") for r in set(curves.row)}
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
                           label=f"{label[r]}: paper (round {int(runs.rounds.max())})")
        ax.set_xlim(0, int(runs.rounds.max()))
    ax.set_ylabel("test accuracy (%)")
    where = ", ".join(pp.dataset_label(d) for d in meta["datasets"])
    columns = [pp.table(table).column(c).label for c in dict.fromkeys(runs.column)]  # the setting: β = 0.5 …
    where = ", ".join(columns) + (f" (on {where})" if where and not all(where in c for c in columns) else "") \
        if columns else where
    left = [f"{n} {'stopped at round ' + str(int(runs[runs.state == s]['round'].max())) if s == 'interrupted' else s}"
            for s, n in runs.state.value_counts().items() if s != "finished"]
    ax.set_title(f"{named} on {where}, on a GPU ({on})"
                 + (f"\n{', '.join(left)} (of {len(runs)} runs, {int(runs.rounds.max())} rounds each): not the "
                    f"cells' results" if left else ""), fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if gain_panel:
        _gain_panel(axes[1, 0], pp, runs, curves, pair, dashes)
    axes[-1, 0].set_xlabel("communication round")
    save_figure(fig, f"{table}_gpu_curves", out_dir, title=f"{named}: GPU learning curves",
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedlib.repro.gpu_cells", description=__doc__.split("\n\n")[0])
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
