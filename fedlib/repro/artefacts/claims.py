"""Every claim of every paper at every scale that ran, from the committed outputs alone (no training).

:func:`evaluate` gives one row per claim × scale; ``python -m fedlib.repro.claims`` writes them, per paper,
to ``figures/<paper>/claims.csv`` and ``claims.md`` with the headline figure
(:mod:`fedlib.repro.artefacts.headline`), then the "What reproduces" block of ``README.md``.

The scales (:data:`SCALES`): ``quick`` and ``paper`` read ``figures/<paper>/<profile>/<table>.csv``;
``GPU`` reads ``figures/<paper>/paper/gpu/<table>_gpu_runs.csv`` (only the cells it holds);
``ladder quick`` / ``ladder paper`` read the profile's ``budget_ladder.csv``, for the part whose
:class:`~fedlib.repro.spec.claims.Gap` is the ladder's cell: the gap at its top rung where the baseline learns,
with the trend along the budget said beside it.  A scale that holds none of a part's cells is left out, except
``quick`` and ``paper``, which say why they did not test it.  **A scale is one set of runs**: where two scales
read the same runs (the same means of both methods over the same seeds: a paper table's cell and its ladder's
top rung, the GPU runs and the ladder that reads them), the row with the richer evidence (paired, then more
columns) stands for both and says so.

Beside each verdict (:mod:`fedlib.repro.verdict.claims`): the dataset trained on (stand-ins named),
ours as mean ± std over n seeds, and the **share of the paper's training budget**: client sample-epochs
(participation × training samples × local epochs, times the rounds of every stage) of our cell over
the paper's cell, both from the profile declarations (:func:`budget_share`); where the training set's
size is not known before the data are made (Synthetic), rounds × local epochs.  The GPU runs: the
round they reached over the paper's rounds.  A ladder: its top rung's sample-epochs over the paper's rung.
A verdict on a stand-in dataset is reported as such (``on_paper_data`` False), never mixed with one on the
paper's data; a verdict on some of a part's columns names what it covers (``covers``).  An inconclusive row
says what would decide it (``decide``: :func:`fedlib.repro.verdict.claims.seeds_to_decide`).
"""

from __future__ import annotations

import importlib
import math
from pathlib import Path

import pandas as pd

from ..spec.claims import Best, Claim, Contrast, Gap, Part, Ranking
from ..verdict import claims as rules
from .claim_evidence import (budget_share, cell_at, cell_ran, datasets, gap_cells, not_run_note, num, scaled_share,
                             table_frame)

__all__ = ["SCALES", "claims_of", "left_out", "evaluate", "budget_share", "gap_cells", "paper_value"]

SCALES = ("quick", "paper", "GPU", "ladder quick", "ladder paper")


def claims_of(paper: str) -> tuple[Claim, ...]:
    """``CLAIMS`` of ``fedlib/papers/<paper>/claims.py``."""
    return tuple(importlib.import_module(f"fedlib.papers.{paper}.claims").CLAIMS)


def left_out(paper: str) -> tuple:
    """``LEFT_OUT`` of ``fedlib/papers/<paper>/claims.py``: the central claims not decided, with why."""
    return tuple(getattr(importlib.import_module(f"fedlib.papers.{paper}.claims"), "LEFT_OUT", ()))


# ----------------------------------------------------------------------------- one part at one scale
def _part(x) -> Part:
    return x.parts[0] if isinstance(x, Claim) else x


def _paper_cell(t, row, col):
    cell = t.value(row, col)
    return None if cell is None else cell


def paper_value(pp, part: Part | Claim, columns=None):
    """The paper's value of a part (a claim: its first part) over ``columns`` (default all of the quantity's),
    from its reported table: a gap (or the part's given value), "w of n" columns best, or τ = 1."""
    part = _part(part)
    q, t = part.quantity, pp.table(part.quantity.table)
    cols = list(columns or q.columns)

    def val(row, col):  # a printed value flagged as a probable typo (the table's ``suspect``) counts as absent
        cell = _paper_cell(t, row, col)
        return None if cell is None or (row, col) in t.suspect else cell.mean

    if isinstance(q, Ranking):
        return "τ = 1 (its own order)"
    if isinstance(q, Best):
        rivals = q.rivals or tuple(r.key for r in t.rows if r.key != q.method)
        seen = [c for c in cols if val(q.method, c) is not None]
        wins = sum(all(val(r, c) is None or val(q.method, c) >= val(r, c) for r in rivals) for c in seen)
        return f"{wins} of {len(seen)}"
    if part.paper_value is not None:
        return part.paper_value
    diffs = [val(q.method, c) - val(q.baseline, c) for c in cols
             if val(q.method, c) is not None and val(q.baseline, c) is not None]
    return sum(diffs) / len(diffs) if diffs else None


def paper_margin(pp, part: Part, columns) -> float:
    """The half-width of the paper's band: the part's declared margin, else the paper's std of the gap (√(s_a² +
    s_b²) per column, their mean's over columns) where the paper gives every std, else 0."""
    if part.margin is not None:
        return float(part.margin)
    q, t = part.quantity, pp.table(part.quantity.table)
    ses = []
    for c in columns:
        a, b = _paper_cell(t, q.method, c), _paper_cell(t, q.baseline, c)
        if a is None or b is None or a.std is None or b.std is None:
            return 0.0
        ses.append(math.hypot(a.std, b.std))
    return rules.mean_se(ses) if ses else 0.0


def _covers(pp, part: Part, ran_columns) -> str:
    """"" where every declared column ran, else which of them did ("2 of 8 columns: MNIST Dir(0.1), …")."""
    declared = part.quantity.columns
    if len(ran_columns) == len(declared):
        return ""
    t = pp.table(part.quantity.table)
    labels = ", ".join(t.column(c).label for c in ran_columns)
    return f"{len(ran_columns)} of {len(declared)} columns: {labels}"


def _row(claim: Claim, part: Part, scale: str, verdict, evidence, **found) -> dict:
    used = str(found.get("dataset_used") or "")
    return {"claim": claim.id, "part": part.name, "scale": scale, "where": claim.where, "rule": part.rule,
            "verdict": verdict.word, "why": verdict.why, "evidence": ";".join(evidence),
            "on_paper_data": (None if verdict.word == "not tested" else "stand-in for" not in used),
            **{k: found.get(k) for k in ("paper", "ours", "ours_std", "n_seeds", "paired", "dataset_used",
                                         "budget_share", "margin", "covers", "decide", "runs")}}


def _decide_text(ours, sd, n, paired, paper, margin) -> str:
    """What would decide an inconclusive gap (:func:`fedlib.repro.verdict.claims.seeds_to_decide`)."""
    if not paired or n < 2 or sd is None or not math.isfinite(sd):
        return (f"≥ 3 seeds of both cells, paired ({n} now): no spread is measured on the cell itself yet")
    need = rules.seeds_to_decide(ours, sd, paper, margin)
    if need is None:
        return f"more than 50 seeds at the measured paired std {sd:.2f}: the gap sits between 0 and the paper's value"
    return f"{need} seeds ({n} now) at the measured paired std {sd:.2f}"


def _runs_key(cells) -> str:
    """The runs a gap reads, as its two means per column and the seeds (equal floats: the same runs)."""
    return ";".join(f"{c['means'][0]:.9g}/{c['means'][1]:.9g}@{c['n']}" for c in cells)


def _gap_row(pp, claim, part, scale, cells, evidence, share=None) -> dict:
    ran = [c for c in cells if c["ran"]]
    if not ran:
        why = cells[0].get("note", "not run") if cells else "not run"
        return _row(claim, part, scale, rules.not_tested(why), evidence, paper=paper_value(pp, part))
    ours = sum(c["ours"] for c in ran) / len(ran)
    n, paired = min(c["n"] for c in ran), all(c["paired"] for c in ran)
    seeds = [set(c["diffs"]) for c in ran] if paired else []
    if paired and all(s == seeds[0] for s in seeds):  # one set of seeds: the mean over columns, seed by seed
        per_seed = [sum(c["diffs"][k] for c in ran) / len(ran) for k in sorted(seeds[0])]
        std, se = rules.paired_se(per_seed, [0.0] * len(per_seed))
        df = len(per_seed) - 1
    else:
        se, std, dfs = rules.mean_se([c["se"] for c in ran]), rules.mean_se([c["std"] for c in ran]), \
            [c["df"] for c in ran]
        df = None if None in dfs else min(dfs)
    cols = [c["column"] for c in ran]
    paper, margin = paper_value(pp, part, cols), paper_margin(pp, part, cols)
    z = rules.noise(se, df)
    verdict = rules.gap_rule(ours, z, paper, margin, quoted="size" if part.rule == "size" else "direction",
                             n_seeds=n)
    covers = _covers(pp, part, cols)
    if covers:
        verdict = rules.Verdict(verdict.word, verdict.why + f"; covers {covers}")
    if share is None:
        share = ran[0].get("share") or budget_share(pp, scale, part.quantity.table, part.quantity.method, cols[0])
    decide = _decide_text(ours, std, n, paired, paper, margin) if verdict.word == "inconclusive" else ""
    return _row(claim, part, scale, verdict, evidence, paper=paper, ours=ours, ours_std=std, n_seeds=n,
                paired=paired, dataset_used=datasets(pp, ran), budget_share=share, margin=margin, covers=covers,
                decide=decide, runs=_runs_key(ran))


def _best_row(pp, claim, part, scale, frame, evidence) -> dict:
    q = part.quantity
    rivals = q.rivals or tuple(r for r in frame.row.unique() if r != q.method)
    states, used, cols, paper_wins = [], [], [], 0
    for col in q.columns:
        cells = [gap_cells(frame, q, [col], baseline=r)[0] for r in rivals]
        if not all(c["ran"] for c in cells):
            continue
        cols.append(col)
        used += cells
        states.append(rules.best_column([(c["ours"], rules.noise(c["se"], c["df"])) for c in cells]))
        paper_wins += all(c.get("paper", -1) >= 0 for c in cells)
    if not cols:
        note = next((c.get("note") for r in rivals for c in gap_cells(frame, q, q.columns[:1], baseline=r)
                     if not c["ran"]), "not run")
        return _row(claim, part, scale, rules.not_tested(note), evidence, paper=paper_value(pp, part))
    verdict = rules.best_rule(states, paper_wins)
    # the seeds the rows ran: a cell short of seeds because some diverged holds all it will ever hold
    n = min((c["n"] for c in used if not c.get("diverged")), default=min(c["n"] for c in used))
    covers = _covers(pp, part, cols)
    if covers:
        verdict = rules.Verdict(verdict.word, verdict.why + f"; covers {covers}")
    decide = ""
    if verdict.word == "inconclusive":
        decide = (f"≥ 3 seeds of every row ({n} now): no spread is measured on the cells themselves yet" if n < 2
                  else f"more seeds ({n} now) where a column is undecided: "
                       f"{', '.join(c for c, s in zip(cols, states) if s == 'undecided')}")
    wins = sum(s == "best" for s in states)
    return _row(claim, part, scale, verdict, evidence, paper=f"{paper_wins} of {len(cols)}",
                ours=f"{wins} of {len(cols)}", n_seeds=n, dataset_used=datasets(pp, used),
                budget_share=budget_share(pp, scale, q.table, q.method, cols[0]), covers=covers, decide=decide)


def _ranking_row(pp, claim, part, scale, frame, evidence) -> dict:
    q = part.quantity
    cols = [c for c in q.columns if all(cell_ran(cell_at(frame, r, c)) for r in q.rows)]
    if not cols:
        cell = cell_at(frame, q.rows[0], q.columns[0])
        return _row(claim, part, scale, rules.not_tested(str(getattr(cell, "note", "not run"))), evidence,
                    paper=paper_value(pp, part))
    sub = frame[frame.row.isin(q.rows) & frame.column.isin(cols)]
    means = sub.groupby("row")[["ours_mean", "paper_mean"]].mean().loc[list(q.rows)]
    n = int(sub.n_seeds.min())
    tau, verdict = rules.ranking_rule(list(means.ours_mean), list(means.paper_mean), n)
    used = [{"dataset": str(r.dataset), "used": str(r.dataset_used)} for _, r in sub.iterrows()]
    decide = f"≥ 3 seeds of every row ({n} now)" if verdict.word == "inconclusive" and n < 2 else \
        ("more rows or seeds: the order of these rows is not significant" if verdict.word == "inconclusive" else "")
    return _row(claim, part, scale, verdict, evidence, paper="τ = 1 (its own order)", ours=f"τ = {tau:+.2f}",
                n_seeds=n, dataset_used=datasets(pp, used), covers=_covers(pp, part, cols), decide=decide,
                budget_share=budget_share(pp, scale, q.table, q.rows[0], cols[0]))


def _ladder_row(pp, claim, part, scale, root: Path) -> dict | None:
    """The ladder's top rung where the baseline learns, by the gap rule (paired over the rung's seeds: the CSV's
    ``gap_std`` is the std of the per-seed gaps), its trend along the budget said beside it."""
    from ...data import DATASETS
    from ..budget.ladder import spec_for

    q, profile = part.quantity, scale.split()[-1]
    try:
        spec = spec_for(pp.name)
    except KeyError:  # a companion with no budget ladder
        return None
    path = root / profile / "budget_ladder.csv"
    if not (isinstance(q, Gap) and q.columns == (spec.column,)
            and (q.method, q.baseline) == (spec.method, spec.baseline) and spec.table == q.table and path.exists()):
        return None
    lad = pd.read_csv(path)
    # the ladder's figure, where it was drawn (a ladder of no rung is not: its sidecar says why)
    drawn = (root / profile / "budget_ladder_gap.png").exists()
    evidence = [f"{profile}/budget_ladder.csv", *([f"{profile}/budget_ladder_gap.png"] if drawn else [])]
    ran = lad[lad.gap.notna()]
    paper = part.paper_value if part.paper_value is not None else float(lad.paper_gap.iloc[0])
    if ran.empty:
        return _row(claim, part, scale, rules.not_tested(str(lad.note.iloc[0])), evidence, paper=paper)
    used = str(ran.dataset_used.iloc[0])
    chance = 100.0 / DATASETS[used].num_classes if used in DATASETS else 0.0
    learns = ran[ran[f"{spec.baseline}_mean"] > chance + spec.chance_margin_pp]
    if learns.empty:
        return _row(claim, part, scale, rules.not_tested(
            f"{pp.method_label(spec.baseline)} is at chance on every rung: no gap is measured"), evidence, paper=paper)
    top = learns.iloc[-1]
    n, sd, gap = int(top.n_seeds), num(top.gap_std), float(top.gap)
    margin = paper_margin(pp, part, [spec.column])
    z = rules.noise(sd / math.sqrt(n), n - 1) if n >= 2 and sd is not None else None
    verdict = rules.gap_rule(gap, z, paper, margin, quoted="size" if part.rule == "size" else "direction",
                             n_seeds=n)
    trend = "; ".join(f"{g:+.2f}" for g in learns.gap)
    left = f"; {len(ran) - len(learns)} rung(s) left out: {pp.method_label(spec.baseline)} at chance" \
        if len(learns) < len(ran) else ""
    verdict = rules.Verdict(verdict.word, verdict.why + f" (top rung where the baseline learns; along the budget: "
                                                        f"{trend}{left})")
    share = num(top.sample_epochs) / num(lad.sample_epochs.iloc[-1]) if num(top.sample_epochs) else None
    dataset = pp.table(q.table).column(spec.column).dataset
    label = pp.dataset_label(used) + (f" (stand-in for {pp.dataset_label(dataset)})" if used != dataset else "")
    means = (float(top[f"{spec.method}_mean"]), float(top[f"{spec.baseline}_mean"]))
    decide = _decide_text(gap, sd, n, n >= 2, paper, margin) if verdict.word == "inconclusive" else ""
    return _row(claim, part, scale, verdict, evidence, paper=paper, ours=gap, ours_std=sd, n_seeds=n,
                paired=n >= 2, dataset_used=label, budget_share=share, margin=margin, decide=decide,
                runs=_runs_key([{"means": means, "n": n}]))


def _match(frame: pd.DataFrame, filters) -> pd.DataFrame:
    keep = pd.Series(True, index=frame.index)
    for col, value in filters:
        if col not in frame:
            return frame.iloc[0:0]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            keep &= pd.to_numeric(frame[col], errors="coerce").sub(float(value)).abs() < 1e-9
        else:
            keep &= frame[col].astype(str) == str(value)
    return frame[keep]


def _contrast_row(pp, claim, part, scale, root: Path) -> dict | None:
    """A figure's finding from its study's summary (:class:`~fedlib.repro.spec.claims.Contrast`), by the gap
    rule; the pairing and the interval as for a table's gap."""
    q = part.quantity
    shown = part.paper_value if part.paper_value is not None else ("> 0" if part.direction > 0 else "< 0")
    path = root / scale / f"{q.output}.csv"
    evidence = [f"{scale}/{q.output}.csv"] + [f"{scale}/{f}.png" for f in (q.figure,)
                                              if f and (root / scale / f"{f}.png").exists()]
    if not path.exists():
        return _row(claim, part, scale, rules.not_tested(f"not run: the study's summary {q.output} was not made "
                                                         f"under the {scale!r} profile"), [], paper=shown)
    frame = pd.read_csv(path)
    a, b = _match(frame, q.a), _match(frame, q.b)
    if a.empty or b.empty:  # the study ran other points at this scale (a profile's own budgets, say)
        note = next((str(n) for n in frame.get("note", pd.Series(dtype=object)).dropna() if str(n).strip()), "")
        return _row(claim, part, scale, rules.not_tested(
            f"not run: {q.output}.csv at this scale holds no point {dict(q.a) if a.empty else dict(q.b)}"
            + (f" ({note})" if note else "")), evidence, paper=shown)
    if len(a) != 1 or len(b) != 1:
        raise ValueError(f"claim {claim.id}: {q.output}.csv at {scale} holds {len(a)} rows for {dict(q.a)} and "
                         f"{len(b)} for {dict(q.b)}; each must select exactly one")
    a, b = a.iloc[0], b.iloc[0]
    cells = gap_cells(pd.DataFrame([{**a.to_dict(), "row": "a", "column": "x"}, {**b.to_dict(), "row": "b",
                                                                                 "column": "x"}]).assign(
        dataset=q.dataset, dataset_used=str(a.get("dataset_used") or q.dataset), paper_mean=float("nan"),
        note=""), Gap("study", ("x",), "a", "b"))
    cell = cells[0]
    if not cell["ran"]:
        return _row(claim, part, scale, rules.not_tested(str(a.get("note") or b.get("note") or "not run")),
                    evidence, paper=shown)
    n, paired = cell["n"], cell["paired"]
    z = rules.noise(cell["se"], cell["df"])
    margin = float(part.margin or 0.0)
    verdict = rules.gap_rule(cell["ours"], z, part.paper_value, margin,
                             quoted="size" if part.rule == "size" else "direction", n_seeds=n,
                             direction=part.direction)
    decide = ""
    if verdict.word == "inconclusive":
        decide = _decide_text(cell["ours"], cell["std"], n, paired,
                              part.paper_value if part.paper_value is not None else 0.0, margin)
    share = scaled_share(pp, scale, q.budget_of, a.get("rounds")) if q.budget_of else None
    return _row(claim, part, scale, verdict, evidence, paper=shown, ours=cell["ours"], budget_share=share,
                ours_std=cell["std"], n_seeds=n, paired=paired, dataset_used=datasets(pp, cells), margin=margin,
                decide=decide, runs=_runs_key(cells))


def _one_set_of_runs(rows: list[dict]) -> list[dict]:
    """Scales that read the same runs (the same ``runs`` key) count once: the paired row, else the first,
    stands for both and names the other."""
    out, seen = [], {}
    for r in rows:
        key = r.get("runs")
        if not key or key not in seen:
            if key:
                seen[key] = len(out)
            out.append(r)
            continue
        kept = out[seen[key]]
        if r.get("paired") and not kept.get("paired"):
            r, kept = kept, r
            out[seen[key]] = kept
        kept["why"] += f"; the same runs as the {r['scale']} scale, counted once"
        kept["evidence"] = ";".join(dict.fromkeys((kept["evidence"] + ";" + r["evidence"]).strip(";").split(";")))
    return out


def _part_rows(pp, claim, part, root: Path, scales=SCALES) -> list[dict]:
    q, out = part.quantity, []
    if isinstance(q, Contrast):  # a figure's finding: the studies run under the quick and paper profiles
        return _one_set_of_runs([_contrast_row(pp, claim, part, s, root) for s in scales
                                 if s in ("quick", "paper", "smoke")])
    for scale in scales:
        if scale.startswith("ladder"):
            row = _ladder_row(pp, claim, part, scale, root)
            if row is not None:
                out.append(row)
            continue
        frame, evidence = table_frame(root, pp, scale, q.table)
        if frame is None or (scale == "GPU" and not set(q.columns) & set(frame.column)):
            if scale != "GPU":
                first = q.method if not isinstance(q, Ranking) else q.rows[0]
                out.append(_row(claim, part, scale, rules.not_tested(
                    not_run_note(pp, scale, q.table, first, q.columns[0])), [], paper=paper_value(pp, part)))
            continue
        if scale == "GPU":
            if isinstance(q, Gap):
                out.append(_gap_row(pp, claim, part, scale,
                                    gap_cells(frame, q, [c for c in q.columns if c in set(frame.column)]), evidence))
        elif isinstance(q, Gap):
            out.append(_gap_row(pp, claim, part, scale, gap_cells(frame, q), evidence))
        elif isinstance(q, Best):
            out.append(_best_row(pp, claim, part, scale, frame, evidence))
        else:
            out.append(_ranking_row(pp, claim, part, scale, frame, evidence))
    return _one_set_of_runs(out)


def evaluate(paper: str, figures_root: str | Path | None = None, scales: tuple[str, ...] = SCALES) -> pd.DataFrame:
    """One row per claim × part × scale of ``paper``'s claims (:data:`SCALES`), from the committed outputs;
    ``scales=("smoke",)`` reads a smoke regeneration (a check that the chain runs: its numbers mean nothing)."""
    from ..spec.paper import get_paper
    from .provenance import repo_root

    pp = get_paper(paper)
    root = (Path(figures_root) if figures_root is not None else repo_root() / "figures") / paper
    return pd.DataFrame([r for claim in claims_of(paper) for part in claim.parts
                         for r in _part_rows(pp, claim, part, root, scales)])
