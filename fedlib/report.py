"""Grids of runs, the paper-vs-reproduced comparison, and the figures index.

* :func:`run_grid` -- run many configurations (× seeds) through
  :func:`fedlib.run` with the results store, optionally in parallel worker
  processes, with a tqdm bar; returns a tidy :class:`GridResult`.
* :func:`aggregate` -- mean ± std over seeds.
* :func:`compare` -- paper value | ours | Δ per table cell and whether ours
  lies within the paper's reported standard deviation.
* :func:`reproduce_table` -- all of the above for one table of the paper
  (:mod:`fedlib.papers.fedlc.reported`) under a profile (:mod:`fedlib.profiles`), saved
  as CSV + Markdown + JSON sidecar.
* :func:`build_index` -- ``figures/README.md``: every figure and table with its
  caption, profile and deviations, every table cell paper-vs-ours, and a
  summary of what reproduces.

Accuracies are in percent, as in the paper.  Δ = ours − paper.  A cell is
"within" when |Δ| ≤ the paper's reported std (only Tables 1, 2, 4 report one).
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .figures import default_output_dir, frame_to_markdown, repo_root, save_table
from .papers.fedlc import reported as paper
from .profiles import Profile, get_profile

__all__ = [
    "Context", "GridResult", "default_store", "run_grid", "aggregate", "compare", "winners", "gains", "render_comparison",
    "findings", "add_column_param", "table_cells",
    "reproduce_table", "build_index", "summarize", "STATUS",
]

#: Cell status of a paper-vs-ours comparison.
STATUS = {
    "within": "within the paper's std",
    "outside": "outside the paper's std",
    "no_std": "paper reports no std",
    "not_in_paper": "missing in the paper",
    "not_run": "not run",
}
_MARK = {"within": "✓", "outside": "✗", "no_std": "~", "not_in_paper": "", "not_run": ""}


def default_store():
    """The regeneration store: ``$FEDLIB_STORE`` if set, else ``<repo>/.fedlib-store``."""
    from .store import Store

    return Store(os.environ.get("FEDLIB_STORE") or (repo_root() / ".fedlib-store"))


# ============================================================================ grids
@dataclass
class GridResult:
    """``runs``: one row per (cell, seed): the cell's labels, ``seed``, ``status``
    (``ok`` / ``not run`` / ``failed``), ``note``, ``accuracy`` (final test accuracy,
    %), ``wall_time_s``, ``key``, ``cached``.  ``histories``: the labels, ``seed``,
    ``round``, ``test_accuracy`` (%), ``train_loss`` per evaluated round."""

    runs: pd.DataFrame
    histories: pd.DataFrame
    labels: list[str] = field(default_factory=list)
    wall_time_s: float = 0.0

    def ok(self) -> pd.DataFrame:
        return self.runs[self.runs.status == "ok"]

    def aggregate(self, by: Sequence[str] | None = None) -> pd.DataFrame:
        return aggregate(self.runs, by or self.labels)


def _run_one(config: dict, store_root: str | None, threads: int | None) -> dict:
    """Run (or load) one configuration; never raises for a missing dataset."""
    import torch

    from .api import run
    from .data import DatasetNotFoundError

    if threads:
        torch.set_num_threads(threads)
    t0 = time.perf_counter()
    try:
        result = run(config, store=store_root if store_root else False, progress=False)
    except DatasetNotFoundError as err:
        return {"status": "not run", "note": f"not run: dataset {err.name!r} is absent ({err.expected})"}
    except Exception as err:  # noqa: BLE001 -- recorded in the table, the grid goes on
        return {"status": "failed", "note": f"failed: {type(err).__name__}: {err}"}
    hist = result.history[["round", "test_accuracy", "train_loss"]].to_dict("records")
    return {"status": "ok", "note": "", "accuracy": 100.0 * result.final_accuracy,
            "wall_time_s": result.wall_time_s, "key": result.summary.get("key"), "history": hist,
            "elapsed_s": time.perf_counter() - t0}


def _tqdm():
    """tqdm.auto (widgets in JupyterLab), quietly falling back to text bars without ipywidgets."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm
    return tqdm


def _worker_init(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def run_grid(cells: Iterable[dict], *, seeds: Sequence[int] | None = (0,), store: Any = None, workers: int = 1,
             threads: int | None = None, progress: bool = True, desc: str = "grid") -> GridResult:
    """Run every cell (× seed) through :func:`fedlib.run`, store-backed.

    ``cells``: dicts of labels (any keys, e.g. ``row``, ``column``, ``method``)
    plus ``config`` (a configuration dict without ``seed``, or None for a cell that
    is not run) and optionally ``note``.  Each cell runs once per seed (a
    ``seed`` in the config wins; ``seeds=None`` runs the config as given).
    Identical configurations run once.  A dataset that is absent marks its
    cells "not run"; any other error marks the cell "failed" and the grid
    continues.

    ``store``: a :class:`fedlib.store.Store`, a folder, None (the regeneration
    store :func:`default_store`) or False (no store).  ``workers`` > 1 runs
    that many processes in parallel, each with ``threads`` torch threads
    (default: the cores divided among the workers, at least 1).
    """
    from .store import Store

    t0 = time.perf_counter()
    if store is None:
        store = default_store()
    store_root = None if store is False else str(store.root if isinstance(store, Store) else store)
    cells = list(cells)
    labels = [k for k in (cells[0] if cells else {}) if k not in ("config", "note")]
    jobs: list[tuple[dict, dict]] = []  # (row labels, config or None)
    for cell in cells:
        lab = {k: v for k, v in cell.items() if k not in ("config", "note")}
        cfg = cell.get("config")
        seed_list = [None] if (seeds is None or (cfg is not None and "seed" in cfg)) else list(seeds)
        for s in seed_list:
            row = dict(lab)
            row["seed"] = (cfg or {}).get("seed", s) if s is None else s
            row["note"] = cell.get("note", "")
            jobs.append((row, None if cfg is None else ({**cfg, "seed": s} if s is not None else dict(cfg))))

    unique: dict[str, dict] = {}
    for _, cfg in jobs:
        if cfg is not None:
            unique.setdefault(json.dumps(cfg, sort_keys=True, default=str), cfg)
    results: dict[str, dict] = {}
    absent: dict[str, str] = {}
    cores = os.cpu_count() or 1
    workers = max(1, min(int(workers), len(unique) or 1))
    thr = threads or max(1, cores // workers)
    tqdm = _tqdm()

    bar = tqdm(total=len(unique), desc=desc, disable=not progress, unit="run", dynamic_ncols=True)
    try:
        if workers == 1:
            for key, cfg in unique.items():
                ds = cfg.get("dataset")
                if ds in absent:
                    results[key] = {"status": "not run", "note": absent[ds]}
                else:
                    results[key] = _run_one(cfg, store_root, threads)
                    if results[key]["note"].startswith("not run: dataset"):
                        absent[ds] = results[key]["note"]
                bar.update(1)
        else:
            import concurrent.futures as cf
            import multiprocessing as mp

            with cf.ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn"), initializer=_worker_init,
                                        initargs=(thr,)) as pool:
                futures = {pool.submit(_run_one, cfg, store_root, thr): key for key, cfg in unique.items()}
                for fut in cf.as_completed(futures):
                    results[futures[fut]] = fut.result()
                    bar.update(1)
    finally:
        bar.close()

    run_rows, hist_rows = [], []
    for row, cfg in jobs:
        if cfg is None:
            run_rows.append({**row, "status": "not run", "note": row["note"] or "not run"})
            continue
        res = results[json.dumps(cfg, sort_keys=True, default=str)]
        out = {**row, "status": res["status"], "note": res["note"] if res["note"] else row["note"]}
        if res["status"] == "ok":
            out.update(accuracy=res["accuracy"], wall_time_s=res["wall_time_s"], key=res["key"],
                       dataset_used=cfg.get("dataset"))
            for h in res["history"]:
                hist_rows.append({**{k: v for k, v in row.items() if k != "note"}, "round": h["round"],
                                  "test_accuracy": 100.0 * h["test_accuracy"], "train_loss": h["train_loss"]})
        run_rows.append(out)
    runs = pd.DataFrame(run_rows)
    for col, dtype in (("accuracy", float), ("wall_time_s", float), ("key", object), ("dataset_used", object)):
        if col not in runs:
            runs[col] = pd.Series(dtype=dtype)
    return GridResult(runs, pd.DataFrame(hist_rows), labels, time.perf_counter() - t0)


def aggregate(runs: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """Mean and sample std (ddof=1; NaN for one seed) of ``accuracy`` over seeds,
    per group ``by``; ``n`` counts the finished runs, ``status`` is ``ok`` if any
    run finished, else the first run's status and note."""
    recs = []
    for keys, grp in runs.groupby(list(by), sort=False, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        ok = grp[grp.status == "ok"]
        acc = ok["accuracy"].astype(float)
        recs.append({**dict(zip(by, keys)),
                     "ours_mean": float(acc.mean()) if len(acc) else math.nan,
                     "ours_std": float(acc.std(ddof=1)) if len(acc) > 1 else math.nan,
                     "n_seeds": int(len(acc)),
                     "status": "ok" if len(acc) else str(grp.status.iloc[0]),
                     "note": "" if len(acc) else str(grp.note.iloc[0]),
                     "dataset_used": ok["dataset_used"].iloc[0] if len(ok) and "dataset_used" in ok else None})
    return pd.DataFrame(recs)


# ============================================================================ comparison
def compare(paper_frame: pd.DataFrame, ours: pd.DataFrame, on: Sequence[str] = ("row", "column")) -> pd.DataFrame:
    """Paper vs ours per cell.

    ``paper_frame`` has ``on`` + ``paper_mean``, ``paper_std`` (NaN: missing / not
    reported); ``ours`` has ``on`` + ``ours_mean``, ``ours_std``, ``n_seeds`` and
    optionally ``status``/``note``.  Adds ``delta`` = ours − paper,
    ``abs_delta``, ``within_std`` (|Δ| ≤ paper std; None when it cannot be
    judged) and ``status`` (a key of :data:`STATUS`)."""
    on = list(on)
    keep = [c for c in ("ours_mean", "ours_std", "n_seeds", "status", "note", "dataset_used") if c in ours]
    df = paper_frame.merge(ours[on + keep], on=on, how="left")
    if "status" not in df:
        df["status"] = np.where(df["ours_mean"].notna(), "ok", "not run")
    df["run_status"] = df.pop("status").fillna("not run")
    df["delta"] = df["ours_mean"] - df["paper_mean"]
    df["abs_delta"] = df["delta"].abs()
    within, status = [], []
    for pm, ps, om in zip(df["paper_mean"], df["paper_std"], df["ours_mean"]):
        if pd.isna(pm):
            within.append(None), status.append("not_in_paper" if not pd.isna(om) else "not_in_paper")
        elif pd.isna(om):
            within.append(None), status.append("not_run")
        elif pd.isna(ps):
            within.append(None), status.append("no_std")
        else:
            ok = bool(abs(om - pm) <= ps + 1e-9)
            within.append(ok), status.append("within" if ok else "outside")
    df["within_std"] = pd.Series(within, index=df.index, dtype=object)
    df["status"] = status
    return df


def winners(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per column (and row group): the best method in the paper and in our runs,
    among the rows both have, and whether they agree."""
    recs = []
    group_cols = ["column"] + (["row_group"] if "row_group" in comparison else [])
    for keys, grp in comparison.groupby(group_cols, sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        both = grp.dropna(subset=["paper_mean", "ours_mean"])
        if len(both) < 2:
            continue
        p = both.loc[both.paper_mean.idxmax()]
        o = both.loc[both.ours_mean.idxmax()]
        recs.append({**dict(zip(group_cols, keys)), "column_label": grp.column_label.iloc[0],
                     "rows_compared": len(both), "paper_best": p.row_label, "ours_best": o.row_label,
                     "agree": bool(p.row == o.row)})
    return pd.DataFrame(recs)


def gains(comparison: pd.DataFrame, method: str = "fedlc", baseline: str = "fedavg") -> pd.DataFrame:
    """FedLC's gain over FedAvg per column (and row group), paper vs ours."""
    recs = []
    df = comparison.copy()
    df["_method"] = df["row"].astype(str).str.split("/").str[-1]
    group_cols = ["column"] + (["row_group"] if "row_group" in df else [])
    for keys, grp in df.groupby(group_cols, sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        a, b = grp[grp._method == method], grp[grp._method == baseline]
        if a.empty or b.empty:
            continue
        pg = float(a.paper_mean.iloc[0] - b.paper_mean.iloc[0])
        og = float(a.ours_mean.iloc[0] - b.ours_mean.iloc[0])
        recs.append({**dict(zip(group_cols, keys)), "column_label": grp.column_label.iloc[0],
                     "paper_gain": pg, "ours_gain": og,
                     "same_sign": None if math.isnan(og) or math.isnan(pg) else bool(np.sign(pg) == np.sign(og))})
    return pd.DataFrame(recs)


def findings(comparison: pd.DataFrame, table: paper.PaperTable | None = None) -> list[str]:
    """Plain-language findings of a table, computed from the comparison."""
    out = []
    label = f"Table {table.number}" if table is not None else "table"
    s = summarize(comparison)
    if s["run"] == 0:
        return [f"{label}: no cell was run in this profile"]
    w = winners(comparison)
    if len(w):
        fedlc_best = int((w.ours_best.str.startswith("FedLC")).sum())
        paper_best = int((w.paper_best.str.startswith("FedLC")).sum())
        out.append(f"{label}: a FedLC row is the best method in {fedlc_best} of {len(w)} column groups run "
                   f"(paper: {paper_best} of {len(w)}); the best method agrees with the paper in "
                   f"{s['winner_agree']} of {s['winner_total']}")
    if s["gain_total"]:
        out.append(f"{label}: FedLC − FedAvg is {s['ours_fedlc_gain_mean']:+.2f} pp on average here vs "
                   f"{s['paper_fedlc_gain_mean']:+.2f} pp in the paper (same sign in {s['gain_same_sign']} of "
                   f"{s['gain_total']} columns)")
    c = s["counts"]
    judged = c["within"] + c["outside"]
    if judged:
        out.append(f"{label}: {c['within']} of {judged} cells with a reported std are within it")
    return out


def _fmt_cell(mean, std, digits: int = 2) -> str:
    if mean is None or pd.isna(mean):
        return "—"
    return f"{mean:.{digits}f}" + ("" if std is None or pd.isna(std) else f"±{std:.{digits}f}")


def add_column_param(comparison: pd.DataFrame, table_id: str, key: str, name: str | None = None,
                     source: str = "column") -> pd.DataFrame:
    """Add a numeric column ``name`` (default ``key``) with each cell's column (or
    row) parameter ``key`` of the paper table, e.g. ``partition_beta`` for plots."""
    t = paper.table(table_id)
    if source == "column":
        values = {c.key: {**c.params, "dataset": c.dataset}.get(key) for c in t.columns}
        return comparison.assign(**{name or key: comparison.column.map(values)})
    values = {r.key: r.params.get(key) for r in t.rows}
    return comparison.assign(**{name or key: comparison.row.map(values)})


def render_comparison(comparison: pd.DataFrame, table: paper.PaperTable | None = None) -> str:
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
    header = ["method"] + [col_label[c] + (f" (run on {paper.DATASET_LABELS.get(used[c], used[c])})"
                                           if c in used else "") for c in cols]
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
                cells.append(f"{paper_txt} → not run[^{n}]")
            else:
                ours_txt = _fmt_cell(x.ours_mean, x.ours_std)
                delta = "" if pd.isna(x.delta) else f" ({x.delta:+.2f})"
                cells.append(f"{paper_txt} → {ours_txt}{delta} {_MARK[x.status]}".rstrip())
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n\n"
    text += ("Each cell: paper → ours (Δ = ours − paper), accuracy in %. ✓ |Δ| within the paper's reported std, "
             "✗ outside it, ~ the paper reports no std; — missing in the paper.\n")
    for reason, n in notes.items():
        text += f"\n[^{n}]: {reason}"
    return text + ("\n" if notes else "")


def summarize(comparison: pd.DataFrame) -> dict:
    """Counts per status, the cells within / outside the paper's std, and the
    qualitative checks (winner per column, sign of FedLC's gain over FedAvg)."""
    counts = comparison.status.value_counts().to_dict()
    name = comparison.row_label.astype(str) + " @ " + comparison.column_label.astype(str)
    if "row_group" in comparison:
        grp = comparison.row_group.fillna("").astype(str)
        name = np.where(grp != "", grp + " " + name, name)
    name = pd.Series(name, index=comparison.index)
    w, g = winners(comparison), gains(comparison)
    return {
        "counts": {k: int(counts.get(k, 0)) for k in STATUS},
        "run": int(comparison.ours_mean.notna().sum()),
        "within": sorted(name[comparison.status == "within"].tolist()),
        "outside": sorted(name[comparison.status == "outside"].tolist()),
        "median_abs_delta": None if comparison.abs_delta.dropna().empty else float(comparison.abs_delta.median()),
        "winner_agree": int(w.agree.sum()) if len(w) else 0,
        "winner_total": int(len(w)),
        "gain_same_sign": int(g.same_sign.fillna(False).astype(bool).sum()) if len(g) else 0,
        "gain_total": int(g.same_sign.notna().sum()) if len(g) else 0,
        "ours_fedlc_gain_mean": None if g.empty or g.ours_gain.dropna().empty else float(g.ours_gain.mean()),
        "paper_fedlc_gain_mean": None if g.empty or g.ours_gain.dropna().empty
        else float(g.dropna(subset=["ours_gain"]).paper_gain.mean()),
    }


# ============================================================================ tables of the paper
def table_cells(table_id: str, profile: Profile | str | None = None) -> list[dict]:
    """The grid cells (labels + config) of a paper table under a profile."""
    prof = get_profile(profile)
    t = paper.table(table_id)
    cells = []
    for cell in prof.table_cells(t.id):
        r, c = t.row(cell["row"]), t.column(cell["column"])
        cells.append({"row": r.key, "column": c.key, "method": r.params.get("method"),
                      "config": cell["config"], "note": cell["note"] if cell["config"] is None else ""})
    return cells


def reproduce_table(table_id: str, profile: Profile | str | None = None, *, store: Any = None,
                    out_dir: str | os.PathLike | None = None, workers: int | None = None, progress: bool = True,
                    name: str | None = None, save: bool = True,
                    notebook: str | None = None) -> tuple[pd.DataFrame, GridResult]:
    """Run a paper table's grid under ``profile`` and compare with the paper.

    Returns ``(comparison, grid)``; with ``save`` writes ``<name>.csv`` (the long
    comparison), ``<name>.md`` (the paper → ours grid) and ``<name>.json``
    (sidecar with profile, deviations, seeds and the summary)."""
    prof = get_profile(profile)
    t = paper.table(table_id)
    cells = table_cells(t.id, prof)
    grid = run_grid(cells, seeds=prof.seeds_for(t.id), store=store,
                    workers=prof.workers if workers is None else workers, progress=progress,
                    desc=f"Table {t.number} ({prof.name})")
    ours = grid.aggregate(["row", "column"])
    comp = compare(t.frame(), ours)
    # the dataset each column is trained on in this profile (known even for cells that did not run)
    col_used = {c.key: (None if c.dataset in paper.UNSUPPORTED_DATASETS else prof.dataset(c.dataset))
                for c in t.columns}
    comp["dataset_used"] = comp["dataset_used"].where(comp["dataset_used"].notna(), comp.column.map(col_used))
    if save:
        summary = summarize(comp)
        deviations = prof.deviations(t.id)
        caption = (f"FedLC Table {t.number} ({t.section}), profile '{prof.name}'. "
                   + " ".join(t.notes))
        cols = ["table", "row_group", "row", "row_label", "column", "column_label", "dataset", "dataset_used",
                "paper_mean", "paper_std", "ours_mean", "ours_std", "n_seeds", "delta", "within_std", "status",
                "note"]
        save_table(comp[[c for c in cols if c in comp]], name or t.id, out_dir,
                   title=f"Table {t.number}: {t.title}", caption=caption,
                   markdown=render_comparison(comp, t), profile=prof, experiment=t.id, deviations=deviations,
                   seeds=prof.seeds_for(t.id),
                   datasets=sorted(set(grid.runs.loc[grid.runs.status == "ok", "dataset_used"].dropna())),
                   parameters={"example_config": next((c["config"] for c in cells if c["config"]), None),
                               "cells_run": sum(c["config"] is not None for c in cells), "cells": len(cells)},
                   paper_table=t.id, summary=summary, wall_time_s=grid.wall_time_s, notebook=notebook,
                   findings=findings(comp, t))
    return comp, grid


# ============================================================================ notebooks
class Context:
    """What a notebook needs, from its parameters cell: the profile (with an
    optional ``seed`` overriding its seeds), the output folder, the store, and
    ``save_figure`` / ``save_table`` / ``table`` that record the notebook, the
    profile and its deviations in every sidecar.

    >>> ctx = Context(profile="quick", notebook="fedlc_01_motivation")  # doctest: +SKIP
    >>> ctx.save_figure(fig, "fig1_fedavg_skew", experiment="fig1", title="...")  # doctest: +SKIP
    """

    def __init__(self, profile: str | Profile | None = None, *, notebook: str, seed: int | None = None,
                 out_dir: str | os.PathLike | None = None, store: Any = None, workers: int | None = None,
                 progress: bool = True):
        import dataclasses

        from .figures import use_style

        prof = get_profile(profile)
        changes = {}
        if seed is not None:
            changes["seeds"] = (int(seed),)
            changes["experiments"] = {k: {kk: vv for kk, vv in v.items() if kk != "seeds"}
                                      for k, v in prof.experiments.items()}
        if workers is not None:
            changes["workers"] = int(workers)
        self.profile = dataclasses.replace(prof, **changes) if changes else prof
        self.notebook = notebook
        self.out_dir = Path(out_dir) if out_dir else default_output_dir()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.store = default_store() if store is None else store
        self.progress = progress
        os.environ.setdefault("FEDLIB_NOTEBOOK", notebook)
        if os.environ.get("FEDLIB_THREADS"):  # torch threads for in-notebook work (grids set their own)
            import torch

            torch.set_num_threads(int(os.environ["FEDLIB_THREADS"]))
        use_style()

    def __repr__(self) -> str:
        return (f"Context(profile={self.profile.name!r}, seeds={self.profile.seeds}, notebook={self.notebook!r}, "
                f"out_dir='{self.out_dir}', store='{getattr(self.store, 'root', self.store)}')")

    def deviations(self, experiment: str) -> list[str]:
        return self.profile.deviations(experiment)

    def _meta(self, experiment: str | None, meta: dict) -> dict:
        meta.setdefault("profile", self.profile)
        meta.setdefault("notebook", self.notebook)
        if experiment is not None:
            meta.setdefault("experiment", experiment)
            meta.setdefault("deviations", self.profile.deviations(experiment))
            if self.profile.setting(experiment, "uses_seeds", True):
                meta.setdefault("seeds", self.profile.seeds_for(experiment))
        meta.setdefault("deviations", [])
        return meta

    def save_figure(self, fig, name: str, *, experiment: str | None = None, **meta: Any):
        from .figures import save_figure

        return save_figure(fig, name, self.out_dir, **self._meta(experiment, meta))

    def save_table(self, frame, name: str, *, experiment: str | None = None, **meta: Any):
        return save_table(frame, name, self.out_dir, **self._meta(experiment, meta))

    def table(self, table_id: str, **kwargs: Any) -> tuple[pd.DataFrame, GridResult]:
        """:func:`reproduce_table` under this context (saved as ``table<N>``)."""
        kwargs.setdefault("progress", self.progress)
        return reproduce_table(table_id, self.profile, store=self.store, out_dir=self.out_dir, notebook=self.notebook,
                               **kwargs)

    def grid(self, cells: Iterable[dict], experiment: str, **kwargs: Any) -> GridResult:
        """:func:`run_grid` with this profile's seeds (for ``experiment``) and workers."""
        kwargs.setdefault("seeds", self.profile.seeds_for(experiment))
        kwargs.setdefault("workers", self.profile.workers)
        kwargs.setdefault("progress", self.progress)
        kwargs.setdefault("desc", experiment)
        return run_grid(cells, store=self.store, **kwargs)


# ============================================================================ index
def _section_of(meta: dict) -> str:
    return meta.get("notebook") or "other"


def build_index(out_dir: str | os.PathLike | None = None, *, index_path: str | os.PathLike | None = None,
                run_info: dict | None = None) -> Path:
    """Write ``figures/README.md`` from the sidecars in ``out_dir`` (default
    ``figures/fedlc``): a summary of what reproduces, then per notebook every
    figure (embedded PNG) and table (paper → ours) with caption, profile and
    deviations."""
    out = Path(out_dir) if out_dir is not None else default_output_dir()
    index = Path(index_path) if index_path is not None else out.parent / "README.md"
    run_info = run_info or {}
    if not run_info and (out / "_run.json").exists():
        run_info = json.loads((out / "_run.json").read_text())
    metas = []
    for path in sorted(out.glob("*.json")):
        if path.name.startswith("_"):
            continue
        try:
            meta = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        if meta.get("kind") in ("figure", "table"):
            metas.append(meta)
    rel = os.path.relpath(out, index.parent)
    lines = ["# FedLC (ICML 2022): regenerated tables and figures", ""]
    profiles = sorted({m.get("profile") or "?" for m in metas})
    lines += [
        "Generated by `make figures` (`python -m fedlib.regenerate`), which executes the notebooks in "
        "`notebooks/` with papermill; executed copies are in "
        f"[`{rel}/executed/`]({rel}/executed/).  Paper: {paper.PAPER}.",
        "",
        f"* profile(s): {', '.join('`' + p + '`' for p in profiles)}"
        + (f" — {get_profile(profiles[0]).description}" if len(profiles) == 1 and profiles[0] in
           ("smoke", "quick", "paper") else ""),
    ]
    if run_info:
        only = run_info.get("only") or []
        lines.append(f"* {'wall time of this partial regeneration' if only else 'total wall time'}: "
                     f"{run_info.get('total_wall_time_s', float('nan')) / 60:.1f} min "
                     f"({run_info.get('started', '?')} → {run_info.get('finished', '?')}), "
                     f"store `{run_info.get('store', '?')}`"
                     + (f"; only {', '.join(only)} {'was' if len(only) == 1 else 'were'} rerun, the other notebooks' times are from an earlier "
                        "regeneration" if only else ""))
        timed = [(nb, "") for nb in run_info.get("notebooks", [])]
        timed += [(nb, " (earlier regeneration)") for nb in run_info.get("previous", [])]
        for nb, when in sorted(timed, key=lambda t: t[0]["name"]):
            lines.append(f"  * `{nb['name']}`: {nb['status']}, {nb['wall_time_s']:.0f} s{when}")
    commits = sorted({m.get("git_commit", "unknown") for m in metas})
    versions = sorted({m.get("fedlib_version", "?") for m in metas})
    lines += [f"* fedlib {', '.join(versions)}, git commit {', '.join('`' + c + '`' for c in commits)}", ""]

    tables = [m for m in metas if m["kind"] == "table" and m.get("paper_table")]
    if tables:
        lines += ["## Summary: does it reproduce?", "",
                  "Per paper table: cells within the paper's reported std (|ours − paper| ≤ std; only Tables 1, 2 "
                  "and 4 report one), outside it, without a reported std, not run; whether the best method of each "
                  "column agrees; whether FedLC's gain over FedAvg has the paper's sign.", "",
                  "| table | profile | trained on | cells run | within std | outside std | no std | not run | "
                  "median abs. Δ | best method agrees | FedLC−FedAvg sign agrees | "
                  "mean FedLC−FedAvg gain (ours / paper) |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for m in sorted(tables, key=lambda m: m["paper_table"]):
            s = m.get("summary", {})
            c = s.get("counts", {})
            mad = s.get("median_abs_delta")
            og, pg = s.get("ours_fedlc_gain_mean"), s.get("paper_fedlc_gain_mean")
            lines.append(
                f"| [{m['title'].split(':')[0]}](#{m['name']}) | {m.get('profile')} | "
                f"{', '.join(paper.DATASET_LABELS.get(d, d) for d in m.get('datasets') or []) or '—'} | {s.get('run', 0)} | "
                f"{c.get('within', 0)} | {c.get('outside', 0)} | {c.get('no_std', 0)} | {c.get('not_run', 0)} | "
                f"{'—' if mad is None else f'{mad:.2f}'} | {s.get('winner_agree', 0)}/{s.get('winner_total', 0)} | "
                f"{s.get('gain_same_sign', 0)}/{s.get('gain_total', 0)} | "
                f"{'—' if og is None else f'{og:+.2f}'} / {'—' if pg is None else f'{pg:+.2f}'} |")
        within = [f"{m['title'].split(':')[0]}: {x}" for m in tables for x in m.get("summary", {}).get("within", [])]
        outside = [f"{m['title'].split(':')[0]}: {x}" for m in tables
                   for x in m.get("summary", {}).get("outside", [])]
        lines += ["", "Datasets marked in a table's header as *run on* another dataset are stand-ins chosen by "
                  "the profile, so their Δ compares different datasets; the qualitative columns (best method, sign "
                  "of FedLC's gain) are the meaningful comparison there.", ""]
        for label, cells in ((f"Cells within the paper's std ({len(within)})", within),
                             (f"Cells outside the paper's std ({len(outside)})", outside)):
            lines += [f"<details><summary><b>{label}</b></summary>", "",
                      ("; ".join(cells) if cells else "none") + ".", "", "</details>", ""]
        findings = sorted((m for m in metas if m.get("findings")), key=lambda m: (_section_of(m), m["name"]))
        if findings:
            lines += ["**What the notebooks found:**", ""]
            for m in findings:
                for f in m["findings"]:
                    lines.append(f"* {f} ({m['name']})")
            lines.append("")

    by_nb: dict[str, list[dict]] = {}
    for m in metas:
        by_nb.setdefault(_section_of(m), []).append(m)
    for nb in sorted(by_nb):
        lines += [f"## {nb}", ""]
        executed = out / "executed" / f"{nb}.ipynb"
        if executed.exists():
            lines += [f"Executed notebook: [`{rel}/executed/{nb}.ipynb`]({rel}/executed/{nb}.ipynb)", ""]
        for m in sorted(by_nb[nb], key=lambda m: (m["kind"] != "figure", m["name"])):
            lines += [f'<a id="{m["name"]}"></a>', f"### {m.get('title') or m['name']}", ""]
            if m["kind"] == "figure":
                files = m.get("files", {})
                lines += [f"![{m['name']}]({rel}/{files.get('png', m['name'] + '.png')})", "",
                          f"[PDF]({rel}/{files.get('pdf', m['name'] + '.pdf')}) · "
                          f"[sidecar]({rel}/{m['name']}.json)", ""]
            else:
                md = out / m.get("files", {}).get("md", m["name"] + ".md")
                body = md.read_text() if md.exists() else ""
                if m.get("title") and body.startswith(f"**{m['title']}**"):
                    body = body[len(m["title"]) + 4:].lstrip()
                if m.get("caption") and body.startswith(m["caption"]):
                    body = body[len(m["caption"]):].lstrip()
                lines += [body.rstrip(), "", f"[CSV]({rel}/{m['name']}.csv) · [sidecar]({rel}/{m['name']}.json)", ""]
            if m.get("caption"):
                lines += [f"*Caption.* {m['caption']}", ""]
            seeds = m.get("seeds") or []
            lines += [f"*Profile* `{m.get('profile')}`"
                      + (f", seeds {', '.join(map(str, seeds))}" if seeds else "")
                      + (f", datasets {', '.join(m.get('datasets') or [])}" if m.get("datasets") else "")
                      + (f", {m['wall_time_s']:.0f} s" if isinstance(m.get("wall_time_s"), (int, float)) else "")
                      + ". *Deviations from the paper:*"
                      + ("" if m.get("deviations") else " none.")]
            lines += [f"  * {d}" for d in m.get("deviations", [])]
            lines.append("")
    index.write_text("\n".join(lines).rstrip() + "\n")
    return index
