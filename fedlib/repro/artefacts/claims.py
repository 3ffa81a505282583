"""Every claim of every paper at every scale that ran, from the committed outputs alone (no training).

:func:`evaluate` gives one row per claim × scale; ``python -m fedlib.repro.claims`` writes them, per paper,
to ``figures/<paper>/claims.csv`` and ``claims.md`` with the headline figure
(:mod:`fedlib.repro.artefacts.headline`), then the "What reproduces" block of ``README.md``.

The scales (:data:`SCALES`): ``quick`` and ``paper`` read ``figures/<paper>/<profile>/<table>.csv``;
``GPU`` reads ``figures/<paper>/paper/gpu/<table>_gpu_runs.csv`` (only the cells it holds);
``ladder quick`` / ``ladder paper`` read the profile's ``budget_ladder.csv``, for the claim whose
:class:`~fedlib.repro.spec.claims.Gap` is the ladder's cell, and judge its trend.  A scale that holds
none of a claim's cells is left out, except ``quick`` and ``paper``, which say why they did not test it.

Beside each verdict (:mod:`fedlib.repro.verdict.claims`): the dataset trained on (stand-ins named),
ours as mean ± std over n seeds, and the **share of the paper's training budget**: client sample-epochs
(participation × training samples × local epochs, times the rounds of every stage) of our cell over
the paper's cell, both from the profile declarations (:func:`budget_share`); where the training set's
size is not known before the data are made (Synthetic), rounds × local epochs.  The GPU runs: the
round they reached over the paper's rounds.  A ladder: its top rung's sample-epochs over the paper's rung.
A claim about one dataset is not reproduced on another: on a stand-in, "reproduced" is lowered to "partly".
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import pandas as pd

from ..spec.claims import Best, Claim, Gap, Ranking
from ..verdict import claims as rules
from .tables import parse_seeds, seeds_text

__all__ = ["SCALES", "claims_of", "evaluate", "budget_share", "gap_cells", "paper_value"]

SCALES = ("quick", "paper", "GPU", "ladder quick", "ladder paper")
_TABLE_PNG = ("_curve", "_curves", "_bars", "_groups")


def claims_of(paper: str) -> tuple[Claim, ...]:
    """``CLAIMS`` of ``fedlib/papers/<paper>/claims.py``."""
    return tuple(importlib.import_module(f"fedlib.papers.{paper}.claims").CLAIMS)


def _num(x) -> float | None:
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
    (:func:`fedlib.repro.run.cells.compared`).  With one seed the cell's ``spread``
    (its std, :func:`_std`) is the paper's reported std of that cell: no spread of ours is measured there."""
    from ..run.cells import compared

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
                    # one seed: no spread of ours at this scale; the paper's std over its seeds stands for it
                    "spread": float("nan") if cell is None or cell.std is None else cell.std,
                    "paper_mean": None if cell is None else cell.mean,
                    "dataset": t.column(col).dataset, "dataset_used": t.column(col).dataset,
                    "note": (f"compared at round {', '.join(map(str, at))} of {g.rounds.max()}" if at
                             else "no GPU run of this cell has reached an evaluation"),
                    "share": (min(at) / g.rounds.max()) if at else float("nan")})
    return pd.DataFrame(out)


def _frame(root: Path, pp, scale: str, table: str) -> tuple[pd.DataFrame | None, list[str]]:
    """The cells of ``table`` at ``scale`` and the evidence files (relative to ``figures/<paper>/``)."""
    if scale == "GPU":  # the runs in the paper profile's gpu_precision (one precision a cell)
        from ..run.cells import gpu_folder

        folder = f"paper/{gpu_folder(pp.profile('paper').gpu_precision)}"
        path = root / folder / f"{table}_gpu_runs.csv"
        if not path.exists():
            return None, []
        return _gpu_frame(path, pp, table), [f"{folder}/{table}_gpu_runs.csv", f"{folder}/{table}_gpu_curves.png"]
    path = root / scale / f"{table}.csv"
    if not path.exists():
        return None, []
    pngs = [f"{scale}/{table}{s}.png" for s in _TABLE_PNG if (root / scale / f"{table}{s}.png").exists()]
    return pd.read_csv(path), [f"{scale}/{table}.csv", *pngs[:1]]


def _cell(frame: pd.DataFrame, row: str, col: str):
    hit = frame[(frame.row == row) & (frame.column == col)]
    return None if hit.empty else hit.iloc[0]


def _ran(cell) -> bool:
    return cell is not None and _num(cell.ours_mean) is not None


def _std(cell) -> float | None:
    """A cell's std over seeds; one seed: the table's measured seed-to-seed spread (GPU runs: the paper's std)."""
    return _num(cell.ours_std) if int(cell.n_seeds) >= 2 else _num(cell.get("spread"))


def _paired(a, b) -> tuple[float, float, int] | None:
    """``(s_d, se, df)`` of the gap ``a − b`` seed by seed (:func:`fedlib.repro.verdict.claims.paired_se`) where
    both cells hold each seed's value (``ours_seeds``) over the same ≥ 2 seeds their means are over; else None."""
    va, vb = parse_seeds(a.get("ours_seeds")), parse_seeds(b.get("ours_seeds"))
    seeds = sorted(va)
    if len(seeds) < 2 or set(vb) != set(seeds) or not len(seeds) == int(a.n_seeds) == int(b.n_seeds):
        return None
    sd, se = rules.paired_se([va[k] for k in seeds], [vb[k] for k in seeds])
    return sd, se, len(seeds) - 1


def gap_cells(frame: pd.DataFrame, q: Gap | Best, columns=None, method=None, baseline=None) -> list[dict]:
    """Per column: ours (method − baseline), its std over seeds (paired: of the per-seed differences; else of
    a difference of one draw each), se and its degrees of freedom (``df``; None: the spread's are unknown),
    ``paired``, seeds, the paper's, the dataset used, or the note why it did not run (module
    :mod:`fedlib.repro.verdict.claims`, "Noise")."""
    out = []
    for col in columns or q.columns:
        a, b = _cell(frame, method or q.method, col), _cell(frame, baseline or q.baseline, col)
        rec = {"column": col, "ran": _ran(a) and _ran(b)}
        if a is not None and b is not None and _num(a.paper_mean) is not None and _num(b.paper_mean) is not None:
            rec["paper"] = float(a.paper_mean) - float(b.paper_mean)
        if not rec["ran"]:
            rec["note"] = next((str(c.note) for c in (a, b) if c is not None and not _ran(c) and isinstance(c.note, str)),
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
        if paired is not None:
            std, se, df = paired
        else:
            se, std = rules.difference_se(sa, na, sb, nb), rules.difference_se(sa, 1, sb, 1)
            df = rules.welch_df(sa, na, sb, nb)
        rec.update(ours=float(a.ours_mean) - float(b.ours_mean), se=se, std=std, df=df, paired=paired is not None,
                   n=min(na, nb), dataset=str(a.dataset), used=str(a.dataset_used), share=_num(a.get("share")))
        out.append(rec)
    return out


def _datasets(pp, cells: list[dict]) -> str:
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


def _not_run_note(pp, scale: str, table: str, row: str, column: str) -> str:
    """Why a profile produced no CSV for the table: its declarations (dataset, cost gate)."""
    t = pp.table(table)
    cfg, note = pp.profile(scale).resolve(t.config(row, column), t.id)
    cost = pp.profile(scale).cost
    if cfg is not None and cost is not None and not cost.fits_cpu(cfg):
        note = cost.not_run_note(cfg)
    return note or f"{table} was not run under the {scale!r} profile"


# ----------------------------------------------------------------------------- one claim at one scale
def paper_value(pp, claim: Claim, columns=None):
    """The paper's value of ``claim`` over ``columns`` (default all of the quantity's), from its reported
    table: a gap (or the claim's given value), "w of n" columns best, or τ = 1 (its own order)."""
    q, t = claim.quantity, pp.table(claim.quantity.table)
    cols = [c for c in (columns or q.columns)]

    def val(row, col):
        cell = t.value(row, col)
        return None if cell is None else cell.mean

    if isinstance(q, Ranking):
        return "τ = 1 (its own order)"
    if isinstance(q, Best):
        rivals = q.rivals or tuple(r.key for r in t.rows if r.key != q.method)
        seen = [c for c in cols if val(q.method, c) is not None]
        wins = sum(all(val(r, c) is None or val(q.method, c) >= val(r, c) for r in rivals) for c in seen)
        return f"{wins} of {len(seen)}"
    if claim.paper_value is not None:
        return claim.paper_value
    diffs = [val(q.method, c) - val(q.baseline, c) for c in cols
             if val(q.method, c) is not None and val(q.baseline, c) is not None]
    return sum(diffs) / len(diffs) if diffs else None


def _row(claim: Claim, scale: str, verdict, evidence, **found) -> dict:
    if verdict.word == "reproduced" and "stand-in for" in str(found.get("dataset_used") or ""):
        # a claim about one dataset is not reproduced on another: on a stand-in it holds at most in part
        verdict = rules.Verdict("partly", verdict.why + "; on a stand-in dataset, so at most partly")
    return {"claim": claim.id, "scale": scale, "where": claim.where, "rule": claim.rule,
            "verdict": verdict.word, "why": verdict.why, "evidence": ";".join(evidence),
            **{k: found.get(k) for k in ("paper", "ours", "ours_std", "n_seeds", "paired", "dataset_used",
                                         "budget_share")}}


def _gap_row(pp, claim, scale, cells, evidence, share=None) -> dict:
    ran = [c for c in cells if c["ran"]]
    if not ran:
        why = cells[0].get("note", "not run") if cells else "not run"
        return _row(claim, scale, rules.not_tested(why), evidence, paper=paper_value(pp, claim))
    ours = sum(c["ours"] for c in ran) / len(ran)
    se = rules.mean_se([c["se"] for c in ran])
    std = rules.mean_se([c["std"] for c in ran])
    dfs = [c["df"] for c in ran]
    paper = paper_value(pp, claim, [c["column"] for c in ran])
    noise = rules.noise(se, None if None in dfs else min(dfs))
    verdict = (rules.size_rule(ours, noise, paper, claim.tolerance) if claim.rule == "size"
               else rules.sign_rule(ours, noise, paper))
    if len(ran) < len(cells):
        verdict = rules.Verdict(verdict.word, verdict.why + f"; {len(ran)} of {len(cells)} columns ran")
    if share is None:
        share = ran[0].get("share") or budget_share(pp, scale, claim.quantity.table, claim.quantity.method,
                                                    ran[0]["column"])
    return _row(claim, scale, verdict, evidence, paper=paper, ours=ours, ours_std=std,
                n_seeds=min(c["n"] for c in ran), paired=all(c["paired"] for c in ran), dataset_used=_datasets(pp, ran),
                budget_share=share)


def _best_row(pp, claim, scale, frame, evidence) -> dict:
    q = claim.quantity
    rivals = q.rivals or tuple(r for r in frame.row.unique() if r != q.method)
    wins = beaten = paper_wins = n = 0
    used = []
    for col in q.columns:
        cells = [gap_cells(frame, q, [col], baseline=r)[0] for r in rivals]
        if not all(c["ran"] for c in cells):
            continue
        n += 1
        used += cells
        wins += all(c["ours"] >= 0 for c in cells)
        beaten += any(c["se"] is not None and -c["ours"] > rules.noise(c["se"], c["df"]) for c in cells)
        paper_wins += all(c.get("paper", -1) >= 0 for c in cells)
    if n == 0:
        note = next((c.get("note") for r in rivals for c in gap_cells(frame, q, q.columns[:1], baseline=r)
                     if not c["ran"]), "not run")
        return _row(claim, scale, rules.not_tested(note), evidence, paper=paper_value(pp, claim))
    verdict = rules.best_rule(wins, beaten, n, paper_wins)
    return _row(claim, scale, verdict, evidence, paper=f"{paper_wins} of {n}", ours=f"{wins} of {n}",
                n_seeds=min(c["n"] for c in used), dataset_used=_datasets(pp, used),
                budget_share=budget_share(pp, scale, q.table, q.method, used[0]["column"]))


def _ranking_row(pp, claim, scale, frame, evidence) -> dict:
    q = claim.quantity
    cols = [c for c in q.columns if all(_ran(_cell(frame, r, c)) for r in q.rows)]
    if not cols:
        cell = _cell(frame, q.rows[0], q.columns[0])
        return _row(claim, scale, rules.not_tested(str(getattr(cell, "note", "not run"))), evidence,
                    paper=paper_value(pp, claim))
    sub = frame[frame.row.isin(q.rows) & frame.column.isin(cols)]
    means = sub.groupby("row")[["ours_mean", "paper_mean"]].mean().loc[list(q.rows)]
    tau, verdict = rules.ranking_rule(list(means.ours_mean), list(means.paper_mean))
    used = [{"dataset": str(r.dataset), "used": str(r.dataset_used)} for _, r in sub.iterrows()]
    return _row(claim, scale, verdict, evidence, paper="τ = 1 (its own order)", ours=f"τ = {tau:+.2f}",
                n_seeds=int(sub.n_seeds.min()), dataset_used=_datasets(pp, used),
                budget_share=budget_share(pp, scale, q.table, q.rows[0], cols[0]))


def _ladder_row(pp, claim, scale, root: Path) -> dict | None:
    from ...data import DATASETS
    from ..budget.ladder import spec_for

    q, profile = claim.quantity, scale.split()[-1]
    spec = spec_for(pp.name)
    path = root / profile / "budget_ladder.csv"
    if not (isinstance(q, Gap) and spec.column in q.columns and (q.method, q.baseline) == (spec.method, spec.baseline)
            and spec.table == q.table and path.exists()):
        return None
    lad = pd.read_csv(path)
    evidence = [f"{profile}/budget_ladder.csv", f"{profile}/budget_ladder_gap.png"]
    ran = lad[lad.gap.notna()]
    paper = float(lad.paper_gap.iloc[0])
    if ran.empty:
        return _row(claim, scale, rules.not_tested(str(lad.note.iloc[0])), evidence, paper=paper)
    used = str(ran.dataset_used.iloc[0])
    chance = 100.0 / DATASETS[used].num_classes if used in DATASETS else 0.0
    learns = ran[ran[f"{spec.baseline}_mean"] > chance + spec.chance_margin_pp]
    stds = [_num(s) for s in learns.gap_std]
    verdict = rules.trend_rule(list(learns.gap), stds, paper, spec.tolerance_pp)
    if len(learns) < len(ran):
        verdict = rules.Verdict(verdict.word, verdict.why + f"; {len(ran) - len(learns)} rung(s) left out: "
                                f"{pp.method_label(spec.baseline)} at chance")
    top = (learns if not learns.empty else ran).iloc[-1]
    share = _num(top.sample_epochs) / _num(lad.sample_epochs.iloc[-1]) if _num(top.sample_epochs) else None
    dataset = pp.table(q.table).column(spec.column).dataset
    label = pp.dataset_label(used) + (f" (stand-in for {pp.dataset_label(dataset)})" if used != dataset else "")
    return _row(claim, scale, verdict, evidence, paper=paper, ours=float(top.gap), ours_std=_num(top.gap_std),
                n_seeds=int(top.n_seeds), paired=int(top.n_seeds) >= 2, dataset_used=label, budget_share=share)


def evaluate(paper: str, figures_root: str | Path | None = None) -> pd.DataFrame:
    """One row per claim × scale of ``paper``'s claims (:data:`SCALES`), from the committed outputs."""
    from ..spec.paper import get_paper
    from .provenance import repo_root

    pp = get_paper(paper)
    root = Path(figures_root) if figures_root is not None else repo_root() / "figures"
    root = root / paper
    out = []
    for claim in claims_of(paper):
        q = claim.quantity
        for scale in SCALES:
            if scale.startswith("ladder"):
                row = _ladder_row(pp, claim, scale, root)
                if row is not None:
                    out.append(row)
                continue
            frame, evidence = _frame(root, pp, scale, q.table)
            if frame is None or (scale == "GPU" and not set(q.columns) & set(frame.column)):
                if scale != "GPU":
                    first = q.method if not isinstance(q, Ranking) else q.rows[0]
                    out.append(_row(claim, scale, rules.not_tested(
                        _not_run_note(pp, scale, q.table, first, q.columns[0])), [], paper=paper_value(pp, claim)))
                continue
            if scale == "GPU":
                q_cols = [c for c in q.columns if c in set(frame.column)]
                cells = gap_cells(frame, q, q_cols) if isinstance(q, Gap) else None
                if cells is None:
                    continue
                out.append(_gap_row(pp, claim, scale, cells, evidence))
            elif isinstance(q, Gap):
                out.append(_gap_row(pp, claim, scale, gap_cells(frame, q), evidence))
            elif isinstance(q, Best):
                out.append(_best_row(pp, claim, scale, frame, evidence))
            else:
                out.append(_ranking_row(pp, claim, scale, frame, evidence))
    return pd.DataFrame(out)
