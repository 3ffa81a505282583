"""Paper vs ours: per cell, per column, per table, with verdicts that respect the noise.

* :func:`compare` -- paper value | ours | Δ per table cell and a status
  (:data:`STATUS`): within or outside the paper's reported std, **undecided**
  when that verdict would flip within our run-to-run spread, no std reported,
  run on a **stand-in** dataset (never judged against the paper's numbers, which
  are on another dataset), a **suspect** printed value (a probable typo), not run.
* :func:`winners` -- the best method per column, paper vs ours (agree /
  disagree / undecided);
* :func:`gains` -- the paper's headline gain (e.g. FedLC − FedAvg) per column,
  paper vs ours, with the sign verdict (agree / disagree / undecided);
* :func:`summarize`, :func:`findings`, :func:`render_comparison` -- counts,
  plain-language lines and the Markdown grid;
* :func:`reproduce_table` -- all of it for one paper table under a profile, saved;
  the metric a table reports may differ by column, row or cell (:func:`metric_of`:
  e.g. many/medium/few columns, or rows that evaluate another model).

**The spread** of a cell is our std over seeds where there are several seeds,
and otherwise the measured cross-machine spread of its table (the max |Δ|
between regenerations on two machines, recorded in
``figures/<paper>/<profile>/_spread.json``; a table without its own
measurement takes the largest one measured in the same profile); 0 when
neither is known.  A
difference of two cells has the spread √(s_a² + s_b²).  Accuracies in percent;
Δ = ours − paper.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence, Union

import numpy as np
import pandas as pd

from .figures import save_table
from .grid import GridResult, aggregate, run_grid
from .profiles import Profile

__all__ = ["STATUS", "MARK", "compare", "winners", "gains", "summarize", "findings", "render_comparison",
           "table_cells", "reproduce_table", "add_column_param", "load_spread", "method_of", "metric_of",
           "cell_values"]

#: Cell status of a paper-vs-ours comparison.
STATUS = {
    "within": "within the paper's std",
    "outside": "outside the paper's std",
    "undecided": "undecided (the verdict flips within our run-to-run spread)",
    "no_std": "paper reports no std",
    "stand_in": "run on a stand-in dataset (qualitative comparison only)",
    "suspect": "the paper's value is doubtful (probable typo)",
    "not_in_paper": "missing in the paper",
    "not_run": "not run",
}
MARK = {"within": "✓", "outside": "✗", "undecided": "?", "no_std": "~", "stand_in": "⇄", "suspect": "†",
        "not_in_paper": "", "not_run": ""}


def method_of(row: str) -> str:
    """The method of a table row key (``"E5/fedlc"`` -> ``"fedlc"``)."""
    return str(row).split("/")[-1]


def load_spread(out_dir: str | os.PathLike | None) -> dict[str, float]:
    """The cross-machine spread per table recorded next to a profile's outputs (``_spread.json``:
    ``{"tables": {table id: {"max_abs_delta": …, …}}}``), as {table id: max |Δ|}; {} if none."""
    if out_dir is None:
        return {}
    path = Path(out_dir) / "_spread.json"
    if not path.exists():
        return {}
    body = json.loads(path.read_text())
    out = {t: float(v["max_abs_delta"]) for t, v in body.get("tables", {}).items()
           if v.get("max_abs_delta") is not None}
    if out:  # a table without its own measurement: the largest spread measured in this profile
        out["*"] = max(out.values())
    return out


def _cell_spread(ours_std: float, n_seeds: float, machine: float | None) -> float:
    if n_seeds is not None and not pd.isna(n_seeds) and n_seeds >= 2 and not pd.isna(ours_std):
        return float(ours_std)
    return float(machine or 0.0)


def compare(paper_frame: pd.DataFrame, ours: pd.DataFrame, on: Sequence[str] = ("row", "column"), *,
            spread: float | None = None) -> pd.DataFrame:
    """Paper vs ours per cell.

    ``paper_frame`` has ``on`` + ``paper_mean``, ``paper_std`` (NaN: missing / not
    reported), ``dataset`` and optionally ``suspect``; ``ours`` has ``on`` +
    ``ours_mean``, ``ours_std``, ``n_seeds`` and optionally ``status``/``note``/
    ``dataset_used``.  ``spread``: the cross-machine spread of this table (see the
    module docstring).  Adds ``delta``, ``abs_delta``, ``spread`` (of the cell),
    ``within_std`` (True/False, None when not judged) and ``status``."""
    on = list(on)
    keep = [c for c in ("ours_mean", "ours_std", "n_seeds", "status", "note", "dataset_used") if c in ours]
    df = paper_frame.merge(ours[on + keep], on=on, how="left")
    if "status" not in df:
        df["status"] = np.where(df["ours_mean"].notna(), "ok", "not run")
    if "suspect" not in df:
        df["suspect"] = ""
    df["run_status"] = df.pop("status").fillna("not run")
    df["delta"] = df["ours_mean"] - df["paper_mean"]
    df["abs_delta"] = df["delta"].abs()
    df["spread"] = [_cell_spread(s, n, spread) for s, n in zip(df.get("ours_std", np.nan), df.get("n_seeds", np.nan))]
    within, status = [], []
    for row in df.itertuples(index=False):
        used = getattr(row, "dataset_used", None)
        stand_in = isinstance(used, str) and used != row.dataset
        if pd.isna(row.paper_mean):
            within.append(None), status.append("not_in_paper")
        elif pd.isna(row.ours_mean):
            within.append(None), status.append("not_run")
        elif isinstance(row.suspect, str) and row.suspect:
            within.append(None), status.append("suspect")
        elif stand_in:
            within.append(None), status.append("stand_in")
        elif pd.isna(row.paper_std):
            within.append(None), status.append("no_std")
        elif abs(abs(row.delta) - row.paper_std) <= row.spread and row.spread > 0:
            within.append(None), status.append("undecided")
        else:
            ok = bool(abs(row.delta) <= row.paper_std + 1e-9)
            within.append(ok), status.append("within" if ok else "outside")
    df["within_std"] = pd.Series(within, index=df.index, dtype=object)
    df["status"] = status
    return df


def _groups(df: pd.DataFrame) -> list[str]:
    return ["column"] + (["row_group"] if "row_group" in df else [])


def winners(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per column (and row group): the best method in the paper and in our runs, among
    the rows both have (suspect cells left out).  ``verdict``: ``agree``, ``disagree``,
    or ``undecided`` when another row is within our spread of our best and the
    paper's best is among those rows."""
    recs = []
    df = comparison[~comparison.status.isin(["suspect"])] if "status" in comparison else comparison
    for keys, grp in df.groupby(_groups(df), sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        both = grp.dropna(subset=["paper_mean", "ours_mean"])
        if len(both) < 2:
            continue
        p = both.loc[both.paper_mean.idxmax()]
        o = both.loc[both.ours_mean.idxmax()]
        spreads = both["spread"] if "spread" in both else pd.Series(0.0, index=both.index)
        tied = both[(o.ours_mean - both.ours_mean) <= np.sqrt(spreads ** 2 + spreads.loc[o.name] ** 2)]
        if p.row == o.row and len(tied) == 1:
            verdict = "agree"
        elif p.row in set(tied.row):
            verdict = "undecided"
        else:
            verdict = "disagree"
        recs.append({**dict(zip(_groups(df), keys)), "column_label": grp.column_label.iloc[0],
                     "rows_compared": len(both), "paper_best": p.row_label, "ours_best": o.row_label,
                     "agree": verdict == "agree", "verdict": verdict})
    return pd.DataFrame(recs)


def gains(comparison: pd.DataFrame, method: str, baseline: str) -> pd.DataFrame:
    """``method`` − ``baseline`` per column (and row group), paper vs ours.  ``verdict``:
    ``agree`` / ``disagree`` on the sign, or ``undecided`` when |ours| is within the
    spread of the difference."""
    recs = []
    df = comparison.copy()
    df["_method"] = df["row"].map(method_of)
    for keys, grp in df.groupby(_groups(df), sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        a, b = grp[grp._method == method], grp[grp._method == baseline]
        if a.empty or b.empty:
            continue
        pg = float(a.paper_mean.iloc[0] - b.paper_mean.iloc[0])
        og = float(a.ours_mean.iloc[0] - b.ours_mean.iloc[0])
        sa = float(a.spread.iloc[0]) if "spread" in a else 0.0
        sb = float(b.spread.iloc[0]) if "spread" in b else 0.0
        spread = math.hypot(sa, sb)
        if math.isnan(og) or math.isnan(pg):
            verdict = None
        elif abs(og) <= spread and spread > 0:
            verdict = "undecided"
        else:
            verdict = "agree" if np.sign(pg) == np.sign(og) else "disagree"
        recs.append({**dict(zip(_groups(df), keys)), "column_label": grp.column_label.iloc[0],
                     "paper_gain": pg, "ours_gain": og, "spread": spread,
                     "same_sign": None if verdict in (None, "undecided") else verdict == "agree",
                     "verdict": verdict})
    return pd.DataFrame(recs)


def summarize(comparison: pd.DataFrame, headline: tuple[str, str] | None = None) -> dict:
    """Counts per status, the cells in each verdict, and the qualitative checks
    (best method per column, sign of the headline gain), each with its undecided count."""
    counts = comparison.status.value_counts().to_dict()
    name = comparison.row_label.astype(str) + " @ " + comparison.column_label.astype(str)
    if "row_group" in comparison:
        grp = comparison.row_group.fillna("").astype(str)
        name = np.where(grp != "", grp + " " + name, name)
    name = pd.Series(name, index=comparison.index)
    w = winners(comparison)
    g = gains(comparison, *headline) if headline else pd.DataFrame()
    judged = comparison[comparison.status.isin(["within", "outside", "undecided", "no_std"])]
    decided_gain = g[g.verdict.isin(["agree", "disagree"])] if len(g) else g
    return {
        "counts": {k: int(counts.get(k, 0)) for k in STATUS},
        "run": int(comparison.ours_mean.notna().sum()),
        "within": sorted(name[comparison.status == "within"].tolist()),
        "outside": sorted(name[comparison.status == "outside"].tolist()),
        "undecided": sorted(name[comparison.status == "undecided"].tolist()),
        "median_abs_delta": None if judged.abs_delta.dropna().empty else float(judged.abs_delta.median()),
        "median_abs_delta_stand_in": None if comparison[comparison.status == "stand_in"].abs_delta.dropna().empty
        else float(comparison[comparison.status == "stand_in"].abs_delta.median()),
        "winner_agree": int((w.verdict == "agree").sum()) if len(w) else 0,
        "winner_undecided": int((w.verdict == "undecided").sum()) if len(w) else 0,
        "winner_total": int(len(w)),
        "headline": list(headline) if headline else None,
        "gain_same_sign": int((g.verdict == "agree").sum()) if len(g) else 0,
        "gain_undecided": int((g.verdict == "undecided").sum()) if len(g) else 0,
        "gain_total": int(g.verdict.notna().sum()) if len(g) else 0,
        "ours_gain_mean": None if g.empty or g.ours_gain.dropna().empty else float(g.ours_gain.mean()),
        "paper_gain_mean": None if g.empty or g.ours_gain.dropna().empty
        else float(g.dropna(subset=["ours_gain"]).paper_gain.mean()),
        "decided_gain_columns": int(len(decided_gain)),
    }


def findings(comparison: pd.DataFrame, table=None, paper=None) -> list[str]:
    """Plain-language findings of a table, computed from the comparison."""
    out = []
    label = f"Table {table.number}" if table is not None else "table"
    headline = paper.headline if paper is not None else None
    s = summarize(comparison, headline)
    if s["run"] == 0:
        return [f"{label}: no cell was run in this profile"]
    w = winners(comparison)
    if len(w) and headline:
        ours_label = paper.method_label(headline[0])
        mine = int((w.ours_best == ours_label).sum())
        theirs = int((w.paper_best == ours_label).sum())
        out.append(f"{label}: {ours_label} is our best method in {mine} of {len(w)} column groups run "
                   f"(paper: {theirs} of {len(w)}); the best method agrees with the paper in "
                   f"{s['winner_agree']} of {s['winner_total']}"
                   + (f" ({s['winner_undecided']} undecided within our spread)" if s["winner_undecided"] else ""))
    if s["gain_total"] and headline:
        a, b = (paper.method_label(m) for m in headline)
        out.append(f"{label}: {a} − {b} is {s['ours_gain_mean']:+.2f} pp on average here vs "
                   f"{s['paper_gain_mean']:+.2f} pp in the paper (same sign in {s['gain_same_sign']} of "
                   f"{s['gain_total']} columns" + (f", {s['gain_undecided']} undecided" if s["gain_undecided"] else "")
                   + ")")
    c = s["counts"]
    judged = c["within"] + c["outside"] + c["undecided"]
    if judged:
        out.append(f"{label}: {c['within']} of {judged} cells with a reported std are within it"
                   + (f", {c['undecided']} undecided" if c["undecided"] else ""))
    if c["stand_in"]:
        out.append(f"{label}: {c['stand_in']} cells ran on a stand-in dataset: compared qualitatively only")
    if c["suspect"]:
        out.append(f"{label}: {c['suspect']} printed values are flagged as probable typos and not counted")
    return out


def _fmt_cell(mean, std, digits: int = 2) -> str:
    if mean is None or pd.isna(mean):
        return "—"
    return f"{mean:.{digits}f}" + ("" if std is None or pd.isna(std) else f"±{std:.{digits}f}")


def add_column_param(comparison: pd.DataFrame, table, key: str, name: str | None = None,
                     source: str = "column") -> pd.DataFrame:
    """Add a numeric column ``name`` (default ``key``) with each cell's column (or
    row) parameter ``key`` of the paper ``table``, e.g. ``partition_beta`` for plots."""
    if source == "column":
        values = {c.key: {**c.params, "dataset": c.dataset}.get(key) for c in table.columns}
        return comparison.assign(**{name or key: comparison.column.map(values)})
    values = {r.key: r.params.get(key) for r in table.rows}
    return comparison.assign(**{name or key: comparison.row.map(values)})


def render_comparison(comparison: pd.DataFrame, paper=None) -> str:
    """A Markdown grid: rows × columns, each cell ``paper → ours (Δ) mark``."""
    cols = list(dict.fromkeys(comparison.column))
    rows = list(dict.fromkeys(comparison.row))
    col_label = dict(zip(comparison.column, comparison.column_label))
    used = {}
    if "dataset_used" in comparison:
        for c, d, ds in zip(comparison.column, comparison.dataset, comparison.dataset_used):
            if isinstance(ds, str) and ds != d:
                used[c] = ds
    row_label = {r: (f"{g} {lab}".strip() if isinstance(g, str) else lab)
                 for r, lab, g in zip(comparison.row, comparison.row_label,
                                      comparison.get("row_group", [""] * len(comparison)))}
    label = paper.dataset_label if paper is not None else (lambda d: d)
    header = ["method"] + [col_label[c] + (f" (run on {label(used[c])})" if c in used else "") for c in cols]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    index = comparison.set_index(["row", "column"])
    notes: dict[str, int] = {}
    for r in rows:
        cells = [row_label[r]]
        for c in cols:
            x = index.loc[(r, c)]
            paper_txt = _fmt_cell(x.paper_mean, x.paper_std)
            if pd.isna(x.ours_mean):
                reason = str(x.get("note") or "not run")
                n = notes.setdefault(reason, len(notes) + 1)
                word = "diverged" if x.get("run_status") == "diverged" else "not run"
                cells.append(f"{paper_txt} → {word}[^{n}]")
            else:
                ours_txt = _fmt_cell(x.ours_mean, x.ours_std)
                delta = "" if pd.isna(x.delta) else f" ({x.delta:+.2f})"
                cells.append(f"{paper_txt} → {ours_txt}{delta} {MARK[x.status]}".rstrip())
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n\n"
    text += ("Each cell: paper → ours (Δ = ours − paper), in %. ✓ |Δ| within the paper's reported std, "
             "✗ outside it, ? undecided (the verdict flips within our run-to-run spread), ~ the paper reports no "
             "std, ⇄ run on a stand-in dataset (compare qualitatively only), † the paper's value is doubtful; "
             "— missing in the paper.\n")
    suspects = comparison[comparison.get("suspect", pd.Series("", index=comparison.index)).astype(str) != ""]
    for x in suspects.itertuples(index=False):
        n = notes.setdefault(f"† {x.row_label} @ {x.column_label}: {x.suspect}", len(notes) + 1)
    for reason, n in notes.items():
        text += f"\n[^{n}]: {reason}" if not reason.startswith("†") else f"\n* {reason}"
    return text + ("\n" if notes else "")


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


def cell_values(runs: pd.DataFrame, metric: Callable[[str, str], str]) -> pd.DataFrame:
    """``runs`` (one row per cell and seed, with ``row`` and ``column``) with ``value``: each
    run's value of the metric its cell reads (NaN where the run does not report it) and
    ``metric``, the metric's name."""
    out = runs.copy()
    out["metric"] = [metric(r, c) for r, c in zip(out["row"], out["column"])]
    out["value"] = [float(rec[m]) if m in rec and rec[m] is not None and not pd.isna(rec[m]) else math.nan
                    for rec, m in zip(out.to_dict("records"), out["metric"])]
    return out


def table_cells(table_id: str, profile: Profile) -> list[dict]:
    """The grid cells (labels + config) of a paper table under a profile."""
    t = profile.companion.table(table_id)
    cells = []
    for cell in profile.table_cells(t.id):
        r, c = t.row(cell["row"]), t.column(cell["column"])
        cells.append({"row": r.key, "column": c.key, "method": r.params.get("method"),
                      "config": cell["config"], "note": cell["note"] if cell["config"] is None else ""})
    return cells


def reproduce_table(table_id: str, profile: Profile, *, store: Any = None, out_dir: str | os.PathLike | None = None,
                    workers: int | None = None, progress: bool = True, name: str | None = None, save: bool = True,
                    notebook: str | None = None, value: Value = "accuracy",
                    spread: float | None = None) -> tuple[pd.DataFrame, GridResult]:
    """Run a paper table's grid under ``profile`` and compare with the paper.

    ``value``: which metric of the runs the table reports (``accuracy``, the
    global model's; ``personalized_accuracy``, ``drift_accuracy``,
    ``group_accuracy_few``, ``teacher_accuracy``, …): one for the whole table, or
    per column, row or cell (:func:`metric_of`).  A cell whose runs do not report
    its metric reads "not run", saying so.
    ``spread``: the table's cross-machine spread (default: from ``_spread.json``
    in ``out_dir``).  Returns ``(comparison, grid)``; with ``save`` writes
    ``<name>.csv`` (the long comparison), ``<name>.md`` (the paper → ours grid) and
    ``<name>.json`` (sidecar with profile, deviations, seeds and the summary)."""
    pp = profile.companion
    t = pp.table(table_id)
    cells = table_cells(t.id, profile)
    grid = run_grid(cells, seeds=profile.seeds_for(t.id), store=store,
                    workers=profile.workers if workers is None else workers, progress=progress,
                    cpus_per_run=profile.cpus_per_run, gpus_per_run=profile.gpus_per_run,
                    desc=f"{pp.name} Table {t.number} ({profile.name})")
    metric = metric_of(value, t)
    ours = aggregate(cell_values(grid.runs, metric), ["row", "column"], value="value")
    missing = ours.ours_mean.isna() & (ours.status == "ok")
    ours.loc[missing, "status"] = "not run"
    ours.loc[missing, "note"] = [f"not run: the runs do not report {metric(r, c)}"
                                 for r, c in zip(ours.row[missing], ours.column[missing])]
    if spread is None:
        measured = load_spread(out_dir)
        spread = measured.get(name or t.id, measured.get("*"))
    comp = compare(t.frame(), ours, spread=spread)
    # the dataset each column is trained on in this profile (known even for cells that did not run)
    col_used = {c.key: (None if c.dataset in pp.unsupported else profile.dataset(c.dataset)) for c in t.columns}
    comp["dataset_used"] = comp["dataset_used"].where(comp["dataset_used"].notna(), comp.column.map(col_used))
    if save:
        summary = summarize(comp, pp.headline)
        caption = f"{pp.title} Table {t.number} ({t.section}), profile '{profile.name}'. " + " ".join(t.notes)
        cols = ["table", "row_group", "row", "row_label", "column", "column_label", "dataset", "dataset_used",
                "paper_mean", "paper_std", "ours_mean", "ours_std", "n_seeds", "delta", "spread", "within_std",
                "status", "suspect", "note"]
        save_table(comp[[c for c in cols if c in comp]], name or t.id, out_dir,
                   title=f"Table {t.number}: {t.title}", caption=caption,
                   markdown=render_comparison(comp, pp), profile=profile, experiment=t.id,
                   deviations=profile.deviations(t.id), seeds=profile.seeds_for(t.id),
                   datasets=sorted(set(grid.runs.loc[grid.runs.status == "ok", "dataset_used"].dropna())),
                   parameters={"example_config": next((c["config"] for c in cells if c["config"]), None),
                               "cells_run": sum(c["config"] is not None for c in cells), "cells": len(cells),
                               "value": value if isinstance(value, str) else
                               {f"{c['row']}/{c['column']}": metric(c["row"], c["column"]) for c in cells}},
                   paper=pp.name, paper_table=t.id, summary=summary, wall_time_s=grid.wall_time_s,
                   notebook=notebook, findings=findings(comp, t, pp))
    return comp, grid
