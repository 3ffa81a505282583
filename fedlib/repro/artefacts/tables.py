"""A paper table, run and saved: its cells (:func:`fedlib.repro.budget.gate.table_cells`) → the grid
(:func:`fedlib.repro.run.grid.run_grid`) → our value per cell → paper vs ours
(:func:`fedlib.repro.verdict.compare.compare`) → ``<name>.csv``/``.md``/``.json``
(:func:`fedlib.repro.artefacts.saving.save_table`).

* :func:`reproduce_table` -- all of it for one table under a profile;
* :func:`metric_of`, :func:`cell_values` -- the metric each cell reads (it may differ by column,
  row or cell: many/medium/few columns, rows that evaluate another model) and its value per run;
* :func:`last_rounds`, :func:`over_last_rounds` -- our value as the paper's "mean ± std over the
  last k rounds" where that is what it printed;
* :func:`recount` -- a saved table's summary recomputed from its CSV with the current rules (no run);
* :func:`seeds_text`, :func:`parse_seeds` -- each seed's value of a cell (the CSV's ``ours_seeds``), so that a
  gap between two rows is taken seed by seed: a seed fixes the partition, the data subsets and the model's
  initialization for every method, so two rows at one seed are a paired draw;
* :func:`decided_seeds` -- the extra seeds that ``python -m fedlib.repro.decide`` added to cells of a table
  (``<out_dir>/_decided.jsonl``, :data:`DECIDED_FILE`): :func:`reproduce_table` runs those cells at those seeds
  too, so every regeneration (from records or training) keeps them; :func:`share_decided` gives them to every
  table cell that reads the same runs.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Union

import numpy as np
import pandas as pd

from ..verdict.compare import compare, summarize
from .comparison_text import findings, mark_stand_in, render_comparison
from ..budget.gate import table_cells as gate_table_cells
from ..run.grid import GridResult, aggregate, run_grid
from ..spec.profiles import Profile
from .saving import save_table
from ..verdict.spread import spread_for, table_metric

__all__ = ["reproduce_table", "grid_cells", "metric_of", "cell_values", "last_rounds", "over_last_rounds",
           "recount", "seeds_text", "parse_seeds", "read_decided", "write_decided", "decided_seeds", "share_decided",
           "with_decided", "DECIDED_FILE", "Value"]

#: The runs ``python -m fedlib.repro.decide`` added to a profile's tables, beside their outputs
#: (``figures/<paper>/<profile>/_decided.jsonl``): one JSON line per cell, ``{"table", "row", "column", "seeds"}``,
#: sorted.  JSON lines, not ``.json``: a full regeneration's clean of a profile's folder removes its ``.json``
#: outputs (``fedlib.repro.regenerate._clean``), and this file is an input of that regeneration.
DECIDED_FILE = "_decided.jsonl"


#: What a table reports: one metric for every cell (a name such as ``"accuracy"``), a mapping
#: (keys: column keys, row keys, ``(row, column)`` pairs, ``"*"`` for the rest), or a function
#: ``(row key, column key) -> metric``.
Value = Union[str, Mapping[Any, str], Callable[[str, str], str]]


def metric_of(value: Any, table=None) -> Callable[[str, str], str]:
    """The metric each cell of ``table`` reads, as a function ``(row, column) -> metric name``.

    ``value`` is one metric name for every cell; a function of the row and column keys;
    or a mapping whose keys are column keys, row keys, ``(row, column)`` pairs or
    ``"*"`` (every other cell; default ``"accuracy"``).  A cell takes its pair's
    entry, else its column's or its row's -- naming both its column and its row is
    refused as ambiguous (give the pair, or a function).  With ``table``, every key
    must name one of its rows, columns or cells."""
    if isinstance(value, str):
        return lambda row, column: value
    if callable(value):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(f"value must be a metric name, a mapping or a function (row, column) -> metric; "
                        f"got {type(value).__name__}")
    entries = dict(value)
    if table is not None:
        rows, cols = {r.key for r in table.rows}, {c.key for c in table.columns}
        for key in entries:
            ok = key == "*" or (isinstance(key, tuple) and len(key) == 2 and key[0] in rows and key[1] in cols) \
                or (not isinstance(key, tuple) and (key in rows) != (key in cols))
            if not ok:
                raise ValueError(f"value: {key!r} is not a row key, a column key (not both), a (row, column) pair "
                                 f"or '*' of table {table.id}")
    default = entries.get("*", "accuracy")

    def pick(row: str, column: str) -> str:
        if (row, column) in entries:
            return entries[(row, column)]
        if column in entries and row in entries:
            raise ValueError(f"value names both column {column!r} and row {row!r}: ambiguous for that cell; give "
                             f"the pair ({row!r}, {column!r}) or a function (row, column) -> metric")
        return entries.get(column, entries.get(row, default))

    return pick


def seeds_text(frame: pd.DataFrame, value: str) -> dict[tuple[str, str], str]:
    """``{(row, column): '{"<seed>": value, ...}'}``: each finished seed's ``value`` of a cell, as JSON with the
    seeds in ascending order (the CSV's ``ours_seeds``); ``frame`` has ``row``, ``column``, ``seed``, ``value``
    and optionally ``status`` (only ``ok`` runs count, as in the cell's mean)."""
    if frame.empty or "seed" not in frame:
        return {}
    ok = frame if "status" not in frame else frame[frame.status == "ok"]
    ok = ok[ok[value].notna()]
    return {(r, c): json.dumps({str(int(s)): float(v) for s, v in sorted(zip(g.seed, g[value]))})
            for (r, c), g in ok.groupby(["row", "column"], sort=False)}


def parse_seeds(text: Any) -> dict[int, float]:
    """The inverse of :func:`seeds_text` for one cell: ``{seed: value}``; ``{}`` for an empty or missing cell (a
    CSV written before the column existed)."""
    if not isinstance(text, str) or not text.strip():
        return {}
    return {int(k): float(v) for k, v in json.loads(text).items()}


def cell_values(runs: pd.DataFrame, metric: Callable[[str, str], str]) -> pd.DataFrame:
    """``runs`` (one row per cell and seed, with ``row`` and ``column``) with ``value``: each
    run's value of the metric its cell reads (NaN where the run does not report it) and
    ``metric``, the metric's name."""
    out = runs.copy()
    out["metric"] = [metric(r, c) for r, c in zip(out["row"], out["column"])]
    out["value"] = [float(rec[m]) if m in rec and rec[m] is not None and not pd.isna(rec[m]) else math.nan
                    for rec, m in zip(out.to_dict("records"), out["metric"])]
    return out


def repeated_rows(values: pd.DataFrame, histories: pd.DataFrame, rows: list[str]) -> dict[tuple[str, str], str]:
    """``{(row, column): earlier row}`` for each cell whose runs repeat an earlier row's of the same column run for
    run: every seed finished in both, with the same final value and the same curve (``histories``' test
    accuracy per evaluated round).  E.g. FedNova where every client takes the same local steps is FedAvg
    exactly; the table says so instead of showing two methods.  ``values``: :func:`cell_values`' output;
    ``rows``: the table's row order."""
    def runs_of(frame):
        if (frame.status != "ok").any() or frame.value.isna().any():
            return None
        curve = histories.loc[(histories.row == frame.row.iloc[0]) & (histories.column == frame.column.iloc[0])] \
            if not histories.empty else histories
        curves = tuple(tuple(c.sort_values("round").test_accuracy) for _, c in curve.groupby("seed")) \
            if len(curve) else ()
        return tuple(sorted(zip(frame.seed, frame.value))), curves

    out = {}
    for column, grp in values.groupby("column", sort=False):
        seen: dict = {}
        for row in sorted(grp.row.unique(), key=lambda r: rows.index(r) if r in rows else len(rows)):
            sig = runs_of(grp[grp.row == row])
            if sig is None:
                continue
            if sig in seen:
                out[(row, column)] = seen[sig]
            else:
                seen[sig] = row
    return out


def last_rounds(std_over: str | None) -> int | None:
    """k when a paper's ± is over "the last k rounds" (:attr:`fedlib.repro.spec.reported.PaperTable.std_over`)."""
    m = re.search(r"last (\d+) rounds", std_over or "")
    return int(m[1]) if m else None


def over_last_rounds(histories: pd.DataFrame, k: int) -> pd.DataFrame:
    """Our value as the paper's "mean ± std over the last k rounds": per run (``row``, ``column``,
    ``seed``) the mean and sample std of ``test_accuracy`` over the evaluated rounds among its
    last ``k`` (of its last stage, for a multi-stage method); per cell the mean over seeds of
    both (``ours_mean``, ``ours_std``), with ``rounds_evaluated`` (evaluations in the window of
    each run, fewest) and each seed's window mean (``ours_seeds``, :func:`seeds_text`)."""
    recs = []
    if histories.empty:
        return pd.DataFrame(columns=["row", "column", "ours_mean", "ours_std", "rounds_evaluated", "ours_seeds"])
    for (row, column, seed), h in histories.groupby(["row", "column", "seed"], sort=False):
        if "stage" in h:
            h = h[h.stage == h.stage.iloc[-1]]
        window = h[h["round"] > h["round"].max() - k].test_accuracy.astype(float)
        recs.append({"row": row, "column": column, "seed": seed, "mean": window.mean(),
                     "std": window.std(ddof=1) if len(window) > 1 else math.nan, "n": len(window)})
    per_run = pd.DataFrame(recs)
    cell = per_run.groupby(["row", "column"], sort=False).agg(ours_mean=("mean", "mean"), ours_std=("std", "mean"),
                                                               rounds_evaluated=("n", "min")).reset_index()
    seeds = seeds_text(per_run, "mean")
    cell["ours_seeds"] = [seeds.get((r, c)) for r, c in zip(cell.row, cell.column)]
    return cell


def read_decided(out_dir: str | os.PathLike | None) -> dict[tuple[str, str, str], set[int]]:
    """``{(table, row, column): seeds}`` of ``<out_dir>/_decided.jsonl`` (:data:`DECIDED_FILE`); ``{}`` without one."""
    path = Path(out_dir) / DECIDED_FILE if out_dir is not None else None
    out: dict[tuple[str, str, str], set[int]] = {}
    for line in path.read_text().splitlines() if path is not None and path.exists() else ():
        if line.strip():
            rec = json.loads(line)
            out.setdefault((rec["table"], rec["row"], rec["column"]), set()).update(int(s) for s in rec["seeds"])
    return out


def write_decided(out_dir: str | os.PathLike, cells: Mapping[tuple[str, str, str], Any]) -> None:
    """Write ``{(table, row, column): seeds}`` as ``<out_dir>/_decided.jsonl``: one sorted JSON line per cell."""
    (Path(out_dir) / DECIDED_FILE).write_text("".join(json.dumps({"table": t, "row": r, "column": c,
                                                                  "seeds": sorted(v)}) + "\n"
                                                      for (t, r, c), v in sorted(cells.items())))


def decided_seeds(out_dir: str | os.PathLike | None, table: str) -> dict[tuple[str, str], tuple[int, ...]]:
    """``{(row, column): seeds}``: the seeds ``python -m fedlib.repro.decide`` added to cells of ``table`` (the
    CSV's name), from ``<out_dir>/_decided.jsonl`` (:data:`DECIDED_FILE`); ``{}`` without one."""
    return {(r, c): tuple(sorted(v)) for (t, r, c), v in read_decided(out_dir).items() if t == table}


def share_decided(profile: Profile, out_dir: str | os.PathLike) -> int:
    """Give each table cell of ``profile`` the decided seeds (:func:`decided_seeds`) of every other cell with the
    same configuration, in ``<out_dir>/_decided.jsonl``: cells that read the same runs (FedABC's Tables 1 and 2 at
    quick: one run, two metrics; FEDIC Table 3's all/many/medium/few columns) are one set of runs, and a seed
    decide trained for one is a seed of each.  Returns the cells that changed (0: the file is left as it was)."""
    seeds = read_decided(out_dir)
    if not seeds:
        return 0
    pp, cells = profile.companion, {}
    for t in pp.tables:  # (table, row, column) by configuration: the run a cell reads at each seed
        for c in grid_cells(profile, t):
            if c["config"] is not None:
                cells[(t, c["row"], c["column"])] = json.dumps(c["config"], sort_keys=True, default=str)
    kept = {k for k in seeds if k not in cells}  # a cell the profile no longer configures keeps its line
    by_config: dict[str, set[int]] = {}
    for key, held in seeds.items():
        if key in cells:
            by_config.setdefault(cells[key], set()).update(held)
    shared = {key: by_config[cfg] - set(profile.seeds_for(key[0])) for key, cfg in cells.items()
              if cfg in by_config}
    shared = {key: s for key, s in shared.items() if s}
    gained = sum(1 for key, s in shared.items() if s != seeds.get(key, set()))
    if gained:
        write_decided(out_dir, {**{k: seeds[k] for k in kept}, **shared})
    return gained


def with_decided(cells: list[dict], decided: dict, seeds) -> list[dict]:
    """The cells of a table (or of a study that reads a table's cells: ``row`` and ``column`` labels) that
    ``decided`` (:func:`decided_seeds`) gave seeds beyond ``seeds``, each with ``added``: the cell at each such
    seed, the seed in its configuration (the grid runs it as given), so that every output reading the cells reads
    the same seeds as the table."""
    out = []
    for cell in cells:
        added = sorted({int(s) for s in decided.get((cell.get("row"), cell.get("column")), ())} - set(seeds))
        if cell.get("config") is not None and added:
            out.append({**cell, "added": [{**cell, "config": {**cell["config"], "seed": s}} for s in added]})
    return out


def grid_cells(profile: Profile, table_id: str) -> list[dict]:
    """The grid cells of a paper table under a profile: the gate's cells
    (:func:`fedlib.repro.budget.gate.table_cells`, the one table_cells) with the labels a grid carries (method)."""
    t = profile.companion.table(table_id)
    cells = []
    for cell in gate_table_cells(profile, t.id):
        r, c = t.row(cell["row"]), t.column(cell["column"])
        cells.append({"row": r.key, "column": c.key, "method": r.params.get("method"),
                      "config": cell["config"], "note": cell["note"] if cell["config"] is None else ""})
    return cells


def reproduce_table(table_id: str, profile: Profile, *, store: Any = None, out_dir: str | os.PathLike | None = None,
                    workers: int | None = None, progress: bool = True, name: str | None = None, save: bool = True,
                    notebook: str | None = None, value: Value = "accuracy", spread: Any = None,
                    decided: Mapping[tuple[str, str], Any] | None = None) -> tuple[pd.DataFrame, GridResult]:
    """Run a paper table's grid under ``profile`` and compare with the paper.

    ``value``: which metric of the runs the table reports (``accuracy``, the
    global model's; ``personalized_accuracy``, ``drift_accuracy``,
    ``group_accuracy_few``, ``teacher_accuracy``, …): one for the whole table, or
    per column, row or cell (:func:`metric_of`).  A cell whose runs do not report
    its metric reads "not run", saying so.
    A table whose ± is over the paper's last k rounds (``std_over``) gets our value as the same
    statistic, from the runs' histories: mean ± std over our last k rounds
    (:func:`over_last_rounds`, ``ours_std_over``), accuracy cells only.
    ``spread``: the table's measured spreads (default: from ``_spread.json`` in
    ``out_dir``, :func:`fedlib.repro.verdict.spread.spread_for`; none measured: every verdict
    says "spread not measured").  Returns ``(comparison, grid)``; with ``save`` writes
    ``<name>.csv`` (the long comparison), ``<name>.md`` (the paper → ours grid) and
    ``<name>.json`` (sidecar with profile, deviations, seeds and the summary).
    ``decided``: ``{(row, column): seeds}`` run besides the profile's seeds in those cells (default: what
    ``python -m fedlib.repro.decide`` added, :func:`decided_seeds` of ``out_dir``); each cell's mean, std,
    ``n_seeds`` and ``ours_seeds`` are over all its seeds, and the sidecar's ``parameters.decided`` names them.
    In records mode their runs come from the records; else they train where the store lacks them."""
    pp = profile.companion
    t = pp.table(table_id)
    cells = grid_cells(profile, t.id)
    decided = decided_seeds(out_dir, name or t.id) if decided is None else decided
    extra = with_decided(cells, decided, profile.seeds_for(t.id))
    grid = run_grid(cells + [c for e in extra for c in e["added"]], seeds=profile.seeds_for(t.id), store=store,
                    workers=profile.workers if workers is None else workers, progress=progress,
                    cpus_per_run=profile.cpus_per_run, gpus_per_run=profile.gpus_per_run,
                    desc=f"{pp.name} Table {t.number} ({profile.name})")
    metric = metric_of(value, t)
    values = cell_values(grid.runs, metric)
    ours = aggregate(values, ["row", "column"], value="value")
    seeds = seeds_text(values, "value")
    ours["ours_seeds"] = [seeds.get((r, c)) for r, c in zip(ours.row, ours.column)]
    labels = {r.key: r.label for r in t.rows}
    for (row, column), same in repeated_rows(values, grid.histories, [r.key for r in t.rows]).items():
        at = (ours.row == row) & (ours.column == column)
        ours.loc[at, "note"] = [f"= {labels.get(same, same)}, run for run (the same final value and curve at every "
                                f"seed)" + (f"; {n}" if n else "") for n in ours.loc[at, "note"]]
    frame = t.frame()
    over = {c: last_rounds(o) for c, o in zip(frame.column, frame.std_over)}
    if any(over.values()) and not grid.histories.empty:  # the paper's "mean ± std over its last k rounds"
        for k in sorted({k for k in over.values() if k}):
            cols = [c for c, kk in over.items() if kk == k]
            ok = set(map(tuple, grid.runs.loc[grid.runs.status == "ok", ["row", "column", "seed"]].to_numpy()))
            hist = grid.histories[grid.histories.column.isin(cols)]
            hist = hist[[metric(r, c) == "accuracy" and (r, c, sd) in ok  # a diverged run's curve is no result
                         for r, c, sd in zip(hist.row, hist.column, hist.seed)]]
            last = over_last_rounds(hist, k).set_index(["row", "column"])
            idx = ours.set_index(["row", "column"]).index
            hit = idx.isin(last.index)
            for col in ("ours_mean", "ours_std", "ours_seeds"):
                ours.loc[hit, col] = last.loc[idx[hit], col].to_numpy()
            ours.loc[hit, "ours_std_over"] = f"the last {k} rounds"
    missing = ours.ours_mean.isna() & (ours.status == "ok")
    ours.loc[missing, "status"] = "not run"
    ours.loc[missing, "note"] = [f"not run: the runs do not report {metric(r, c)}"
                                 for r, c in zip(ours.row[missing], ours.column[missing])]
    if spread is None:
        spread = spread_for(out_dir, name or t.id, value if isinstance(value, str) else None)
    comp = compare(frame, ours, spread=spread)
    # the dataset each column is trained on in this profile (known even for cells that did not run)
    col_used = {c.key: (None if c.dataset in pp.unsupported else profile.dataset(c.dataset)) for c in t.columns}
    comp["dataset_used"] = comp["dataset_used"].where(comp["dataset_used"].notna(), comp.column.map(col_used))
    if save:
        summary = summarize(comp, pp.headline)
        caption = f"{pp.title} Table {t.number} ({t.section}), profile '{profile.name}'. " + " ".join(t.notes)
        cols = ["table", "row_group", "row", "row_label", "column", "column_label", "dataset", "dataset_used",
                "paper_mean", "paper_std", "std_over", "ours_mean", "ours_std", "ours_std_over", "n_seeds",
                "ours_seeds", "delta", "spread", "spread_source", "within_std", "status", "suspect", "note"]
        datasets = sorted(set(grid.runs.loc[grid.runs.status == "ok", "dataset_used"].dropna()))
        marked = mark_stand_in({"experiment": t.id, "datasets": datasets, "caption": caption,
                                "findings": findings(comp, t, pp)}, profile, pp)
        save_table(comp[[c for c in cols if c in comp]], name or t.id, out_dir,
                   title=f"Table {t.number}: {t.title}", caption=marked["caption"],
                   markdown=render_comparison(comp, pp), profile=profile, experiment=t.id,
                   deviations=profile.deviations(t.id), seeds=profile.seeds_for(t.id),
                   datasets=datasets, stand_in=marked["stand_in"],
                   parameters={"example_config": next((c["config"] for c in cells if c["config"]), None),
                               "cells_run": sum(c["config"] is not None for c in cells), "cells": len(cells),
                               "value": value if isinstance(value, str) else
                               {f"{c['row']}/{c['column']}": metric(c["row"], c["column"]) for c in cells},
                               **({"decided": {f"{e['row']}/{e['column']}": [c["config"]["seed"] for c in e["added"]]
                                               for e in extra}} if extra else {})},
                   paper=pp.name, paper_table=t.id, summary=summary, wall_time_s=grid.wall_time_s,
                   notebook=notebook, findings=marked["findings"])
    return comp, grid


def recount(csv: str | os.PathLike, table=None, paper=None, *, spread: Any = "auto",
            comparison: bool = False) -> dict | tuple[dict, pd.DataFrame]:
    """A saved paper table's summary recomputed from its CSV (``<name>.csv`` as
    :func:`reproduce_table` writes it: our mean, std and seeds per cell) with the current
    rules and, with ``table`` (its :class:`~fedlib.repro.spec.reported.PaperTable`), the current
    transcription of the paper's values; no run.  ``spread``: ``"auto"`` reads the spreads
    measured in the CSV's folder (:func:`fedlib.repro.verdict.spread.spread_for`, with the metric of
    its sidecar), else as :func:`compare`.  ``paper``: the companion (its headline).
    With ``comparison``: ``(summary, comparison)``."""
    csv = Path(csv)
    saved = pd.read_csv(csv)
    if table is not None:
        frame = table.frame()
    else:
        frame = saved[[c for c in ("table", "row", "column", "row_label", "column_label", "row_group", "dataset",
                                   "paper_mean", "paper_std", "suspect", "std_over") if c in saved]].copy()
        frame["suspect"] = frame.get("suspect", pd.Series("", index=frame.index)).fillna("")
    if "row_group" in frame:
        frame["row_group"] = frame["row_group"].fillna("")
    ours = saved[[c for c in ("row", "column", "ours_mean", "ours_std", "ours_std_over", "n_seeds", "ours_seeds",
                              "dataset_used", "note") if c in saved]].copy()
    ours["status"] = np.where(ours.ours_mean.notna(), "ok", "not run")
    if spread == "auto":
        spread = spread_for(csv.parent, csv.stem, table_metric(csv.parent, csv.stem))
    comp = compare(frame, ours, spread=spread)
    summary = summarize(comp, getattr(paper, "headline", None))
    return (summary, comp) if comparison else summary
