"""Where a claim's numbers are: a table's cells at one scale, from the committed outputs (the profiles' CSVs,
the GPU runs), each gap cell with its spread measured on the cells themselves, and the share of the paper's
training budget a cell spent.  Read by :mod:`fedlib.repro.artefacts.claims` (the verdicts) and
:mod:`fedlib.repro.artefacts.headline` (the headline figure)."""

from __future__ import annotations

import functools
import json
import math
import re
from pathlib import Path

import pandas as pd

from ..spec.claims import Best, Gap
from ..verdict import claims as rules
from .tables import parse_seeds, seeds_text

__all__ = ["figures_of", "gap_cells", "budget_share"]


@functools.lru_cache(maxsize=64)
def _figure_sidecars(folder: Path, stamp: tuple) -> tuple[tuple[str, str], ...]:
    """``(experiment, png)`` of every figure saved in ``folder``, from the sidecars the notebooks wrote."""
    out = []
    for path in sorted(folder.glob("*.json")):
        try:
            meta = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        png = meta.get("files", {}).get("png") if isinstance(meta, dict) and meta.get("kind") == "figure" else None
        if png and (folder / png).exists():
            out.append((str(meta.get("experiment")), png))
    return tuple(out)


def figures_of(folder: Path, experiment: str) -> list[str]:
    """The figures a notebook saved for ``experiment`` in ``folder`` (``ctx.save_figure(…, experiment=…)``, as
    their sidecars declare it), by name: a table's evidence beside its CSV.  Nothing is guessed from a file
    name."""
    if not folder.is_dir():
        return []
    stamp = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.json")))
    return [png for exp, png in _figure_sidecars(folder, stamp) if exp == experiment]


def num(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None


# ----------------------------------------------------------------------------- where the numbers are
def _gpu_frame(path: Path, pp, table: str) -> pd.DataFrame:
    """The GPU runs (one row per seed) as a table CSV's cells: mean, std (ddof 1), seeds per cell.  Each seed
    counts at its ``paired_round`` (the last round every run of the seed reached, so a finished run is never
    set against an interrupted one); only the seeds paired at the furthest such round count
    (:func:`fedlib.repro.run.gpu_runs.compared`).  A cell of one seed has no std: nothing stands in for it."""
    from ..run.gpu_runs import compared

    runs = pd.read_csv(path)
    if "paired_accuracy" not in runs:  # a record written before the pairing: each run's last evaluation
        runs = runs.assign(paired_accuracy=runs.accuracy, paired_round=runs["round"])
    t = pp.table(table)
    out, counted = [], compared(runs)
    for (row, col), g in runs.groupby(["row", "column"]):
        cell = t.value(row, col)
        g = counted[(counted.row == row) & (counted.column == col)]
        at = sorted({int(r) for r in g.paired_round})
        out.append({"row": row, "column": col, "ours_mean": g.paired_accuracy.mean() if len(g) else float("nan"),
                    "ours_std": g.paired_accuracy.std(ddof=1) if len(g) > 1 else float("nan"), "n_seeds": len(g),
                    "ours_seeds": seeds_text(g, "paired_accuracy").get((row, col)),
                    "paper_mean": None if cell is None else cell.mean,
                    "dataset": t.column(col).dataset, "dataset_used": t.column(col).dataset,
                    "note": (f"compared at round {', '.join(map(str, at))} of {g.rounds.max()}" if at
                             else "no GPU run of this cell has reached an evaluation"),
                    "share": (min(at) / g.rounds.max()) if at else float("nan")})
    return pd.DataFrame(out)


def table_frame(root: Path, pp, scale: str, table: str) -> tuple[pd.DataFrame | None, list[str]]:
    """The cells of ``table`` at ``scale`` and the evidence files (relative to ``figures/<paper>/``)."""
    if scale == "GPU":  # the runs in the paper profile's gpu_precision (one precision a cell)
        from ..run.gpu_runs import gpu_folder

        folder = f"paper/{gpu_folder(pp.profile('paper').gpu_precision)}"
        path = root / folder / f"{table}_gpu_runs.csv"
        if not path.exists():
            return None, []
        return _gpu_frame(path, pp, table), [f"{folder}/{table}_gpu_runs.csv", f"{folder}/{table}_gpu_curves.png"]
    path = root / scale / f"{table}.csv"
    if not path.exists():
        return None, []
    return pd.read_csv(path), [f"{scale}/{table}.csv", *(f"{scale}/{png}" for png in figures_of(root / scale, table))]


def cell_at(frame: pd.DataFrame, row: str, col: str):
    hit = frame[(frame.row == row) & (frame.column == col)]
    return None if hit.empty else hit.iloc[0]


def diverged_seeds(note) -> set[int]:
    """The seeds a table cell's note says diverged ("seed 1: diverged: the parameters were not finite …"): runs
    that finished and are left out of the cell's mean."""
    return {int(s) for s in re.findall(r"seed (\d+): diverged", str(note or ""))}


def cell_ran(cell) -> bool:
    return cell is not None and num(cell.ours_mean) is not None


def _std(cell) -> float | None:
    """A cell's std over its own seeds; None for one seed (no spread of another cell or machine stands in)."""
    return num(cell.ours_std) if int(cell.n_seeds) >= 2 else None


def _paired(a, b) -> tuple[float, float, int, dict[int, float]] | None:
    """``(s_d, se, df, diffs)`` of the gap ``a − b`` seed by seed (:func:`fedlib.repro.verdict.claims.paired_se`)
    over the seeds both cells hold a value of (``ours_seeds``), where they share ≥ 2; else None.  ``diffs``: each
    shared seed's ``a − b``; the gap is their mean (a seed one cell holds alone is no draw of the pair)."""
    va, vb = parse_seeds(a.get("ours_seeds")), parse_seeds(b.get("ours_seeds"))
    seeds = sorted(set(va) & set(vb))
    if len(seeds) < 2:
        return None
    sd, se = rules.paired_se([va[k] for k in seeds], [vb[k] for k in seeds])
    return sd, se, len(seeds) - 1, {k: va[k] - vb[k] for k in seeds}


def gap_cells(frame: pd.DataFrame, q: Gap | Best, columns=None, method=None, baseline=None) -> list[dict]:
    """Per column: ours (method − baseline), its std over seeds (paired: of the per-seed differences; else of
    a difference of one draw each), se and its degrees of freedom (``df``; None: the spread's are unknown),
    ``paired``, seeds, the paper's, the dataset used, or the note why it did not run (module
    :mod:`fedlib.repro.verdict.claims`, "Noise")."""
    out = []
    for col in columns or q.columns:
        a, b = cell_at(frame, method or q.method, col), cell_at(frame, baseline or q.baseline, col)
        rec = {"column": col, "ran": cell_ran(a) and cell_ran(b)}
        if a is not None and b is not None and num(a.paper_mean) is not None and num(b.paper_mean) is not None:
            rec["paper"] = float(a.paper_mean) - float(b.paper_mean)
        if not rec["ran"]:
            rec["note"] = next((str(c.note) for c in (a, b)
                                if c is not None and not cell_ran(c) and isinstance(c.note, str)),
                               "not run at this scale: the row is not in its table (rendered before the row "
                               "was declared)")
            out.append(rec)
            continue
        sa, sb, na, nb = _std(a), _std(b), int(a.n_seeds), int(b.n_seeds)
        gpu = any("GPU" in str(c.get("note") or "") for c in (a, b))
        if na != nb and gpu:  # a GPU trained 2 seeds of one row, 1 of the other: the means are no paired gap
            rec.update(ran=False, note=f"not compared at this scale: the two cells' means are over different seeds "
                                       f"({na} and {nb}); the GPU records compare them seed by seed")
            out.append(rec)
            continue
        paired = _paired(a, b)
        ours, n = float(a.ours_mean) - float(b.ours_mean), min(na, nb)
        if paired is not None:
            std, se, df, diffs = paired
            ours, n = sum(diffs.values()) / len(diffs), len(diffs)
        else:
            se, std = rules.difference_se(sa, na, sb, nb), rules.difference_se(sa, 1, sb, 1)
            df, diffs = rules.welch_df(sa, na, sb, nb), None
        rec.update(ours=ours, se=se, std=std, df=df, paired=paired is not None, n=n,
                   diverged=any(diverged_seeds(c.get("note")) for c in (a, b)), dataset=str(a.dataset),
                   used=str(a.dataset_used), share=num(a.get("share")),
                   means=(float(a.ours_mean), float(b.ours_mean)), diffs=diffs)
        out.append(rec)
    return out


def datasets(pp, cells: list[dict]) -> str:
    pairs = dict.fromkeys((c["dataset"], c["used"]) for c in cells)
    return "; ".join(pp.dataset_label(u) + (f" (stand-in for {pp.dataset_label(d)})" if u != d else "")
                     for d, u in pairs)


# ----------------------------------------------------------------------------- budget
def _sample_epochs(pp, cfg: dict) -> tuple[float | None, float]:
    from ..budget.costs import client_samples_per_round

    cost = pp.profile("paper").cost
    rounds = sum(r for r, _ in cost.stages(cfg)) if cost is not None else float(cfg.get("rounds") or 0)
    samples = client_samples_per_round(cfg)
    return (None if samples is None else samples * rounds), rounds * int(cfg.get("local_epochs") or 1)


def budget_share(pp, profile: str, table: str, row: str, column: str) -> float | None:
    """Our cell's client sample-epochs over the paper's (module docstring); None if not configured."""
    t = pp.table(table)
    base = t.config(row, column)
    ours, _ = pp.profile(profile).resolve(base, t.id)
    paper, _ = pp.profile("paper").resolve(base, t.id, substitute=False)
    if ours is None or paper is None:
        return None
    (so, eo), (sp, ep) = _sample_epochs(pp, ours), _sample_epochs(pp, paper)
    return so / sp if so is not None and sp else eo / ep if ep else None


def scaled_share(pp, profile: str, cell: tuple, rounds) -> float | None:
    """The budget share of a study's row that trains table cell ``cell`` = (table, row, column) as the profile
    has it, for ``rounds`` rounds: the cell's share × ``rounds`` over the cell's own; None where unknown."""
    table, row, column = cell
    t = pp.table(table)
    cfg, _ = pp.profile(profile).resolve(t.config(row, column), t.id)
    share, rounds = budget_share(pp, profile, table, row, column), num(rounds)
    if cfg is None or share is None or not cfg.get("rounds") or rounds is None:
        return None
    return share * rounds / float(cfg["rounds"])


def not_run_note(pp, scale: str, table: str, row: str, column: str) -> str:
    """Why a profile produced no CSV for the table: its declarations (dataset, cost gate)."""
    t = pp.table(table)
    cfg, note = pp.profile(scale).resolve(t.config(row, column), t.id)
    cost = pp.profile(scale).cost
    if cfg is not None and cost is not None and not cost.fits_cpu(cfg):
        note = cost.not_run_note(cfg)
    return note or f"{table} was not run under the {scale!r} profile"
