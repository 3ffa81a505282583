"""What would decide an inconclusive claim: the seeds to add, on which cells, at which scale, at what cost.

A claim's quantity is decided by its 95 % interval over seeds (:mod:`fedlib.repro.verdict.claims`); it is
*inconclusive* while the interval holds both 0 and the paper's band, or where a cell has one seed (no interval).
For each such row of a paper's claims frame (:func:`fedlib.repro.artefacts.claims.evaluate`, what
``figures/<paper>/claims.csv`` holds), :func:`plan` gives a :class:`Decision`:

* **how many seeds**: :func:`fedlib.repro.verdict.claims.seeds_to_decide` at the row's mean and paired std (the
  fewest ``n`` at which the same mean and spread would exclude 0 or the paper's band).  A "best" row: in each
  undecided column, the fewest seeds at which every rival's gap ``method − rival`` (its per-seed mean and paired
  std, from the table CSV) excludes 0 (``seeds_to_decide`` with the paper's value set to the gap itself, so only
  0 can be excluded); the plan is the largest of those.  With one seed there is
  no spread of the cell itself: the plan is at least 3 seeds, sized with a *planning estimate* of the spread,
  labelled as such: the table's measured std of the headline gain over seeds
  (``figures/<paper>/<profile>/_spread.json``, ``seed_to_seed``: ``max_gain_std``), else the paper's std of the
  two cells (√(s_a² + s_b²), ``paper_std`` of the table CSV), else the row's own (borrowed) std;
* **which runs**: the part's cells (method and baseline in each column that ran at that scale; a best row's rivals
  too) × the seeds they lack: first the seeds some of them hold and others lack (another decision added them to a
  cell they share: training them pairs the cells again), unless a cell lacking one tried it (the profile's seeds,
  those decided for it, ``_decided.jsonl``); then those the records hold runs of for these cells (a decide that
  stopped, :func:`.decision_seeds.resumed_seeds`); then the smallest seeds no cell of the table tried (its CSV's
  ``ours_seeds`` and the profile's seeds; the GPU's ``paper/gpu/<table>_gpu_runs.csv``), since a seed that
  diverged diverges again;
* **what it costs**: per run, the wall time recorded for the same cell at another seed (the run records,
  ``_records.jsonl.gz``: ``wall_time_s``, one thread, so CPU time), else the paper profile's cost model
  (:mod:`fedlib.repro.budget.costs`; measured unit costs).  A run that does not fit the CPU
  (``CostModel.fits_cpu``), or a row at the GPU scale, is a GPU run priced in GPU hours.

:func:`describe` says it in one line; ``python -m fedlib.repro.decide`` trains it (:mod:`fedlib.repro.decide`).
Decisions sort cheapest first (:func:`order`): CPU before GPU, then by hours.
:class:`Decision`, :func:`describe` and :func:`order` live in :mod:`fedlib.repro.artefacts.decision_record`
(importable from here).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from ..verdict.claims import seeds_to_decide
from ..verdict.spread import SPREAD_FILE
from .decision_record import Decision, describe, order
from .claim_evidence import num
from .decision_seeds import (cell_seeds, held_in_records, held_seeds, predates_seeds, profile_of, recorded_run,
                             recorded_seeds, records_of, resumed_seeds)

__all__ = ["Decision", "plan", "describe", "order", "is_inconclusive", "gpu_entries", "ladder_need", "cell_seeds",
           "held_seeds", "recorded_seeds", "held_in_records", "recorded_run", "PLANNED_RULES", "MIN_SEEDS",
           "part_of", "run_seconds", "new_seeds", "seeds_wanted"]

#: Rules whose rows are planned by seeds of their cells: a gap, a row best against its rivals, an order on one seed.
PLANNED_RULES = ("sign", "size", "best", "ranking")
#: Where a cell has one seed: plan at least this many (the contract of issue 49: "one seed: at least 3 seeds").
MIN_SEEDS = 3


def is_inconclusive(row: dict) -> bool:
    """A row the plan is for: its verdict (:data:`fedlib.repro.verdict.claims.VERDICTS`) is "inconclusive"."""
    return row.get("verdict") == "inconclusive"


def _spread_estimate(root: Path, pp, profile: str, table: str, q, cells) -> tuple[float | None, str]:
    """A planning estimate of the paired std of one seed's gap (module docstring) and where it comes from."""
    path = root / profile / SPREAD_FILE
    try:
        s2s = json.loads(path.read_text()).get("seed_to_seed", {}).get("tables", {}).get(table, {})
    except (OSError, json.JSONDecodeError):
        s2s = {}
    if num(s2s.get("max_gain_std")) is not None:
        return float(s2s["max_gain_std"]), (f"the std of {table}'s headline gain over seeds {s2s.get('seeds')} "
                                            f"({profile}/_spread.json)")
    csv = root / profile / f"{table}.csv"
    if csv.exists():
        frame = pd.read_csv(csv)
        stds = []
        for col in cells:
            pair = frame[(frame.column == col) & frame.row.isin((q.method, q.baseline))]
            vals = [num(v) for v in pair.get("paper_std", [])]
            if len(vals) == 2 and None not in vals:
                stds.append(math.hypot(*vals))
        if stds:
            return max(stds), f"the paper's std of the two cells, √(s_a² + s_b²) ({profile}/{table}.csv: paper_std)"
    return None, "no spread measured or reported"


def run_seconds(pp, profile: str, cfg: dict, recorded: dict, seeds, gpu: bool) -> tuple[float | None, str]:
    """One run's seconds: the cell's recorded wall time at another seed (``recorded``: the profile's run
    records), else the paper profile's cost model; and the source in words."""
    from ..run.grid import identity
    from ..run.records import record_id

    if not gpu:
        times = [recorded[i]["result"].get("wall_time_s") for i in
                 (record_id(identity({**cfg, "seed": int(s)})) for s in seeds) if i in recorded]
        times = [t for t in times if num(t) is not None]
        if times:
            return sum(times) / len(times), f"{profile}/_records.jsonl.gz wall_time_s"
    cost = pp.profile("paper").cost
    if cost is None:
        return None, "no cost model"
    from ..budget.costs import gpu_config

    s = cost.seconds(gpu_config(cfg, pp.profile("paper").gpu_precision) if gpu else cfg, gpu=gpu)
    return s, "the paper profile's cost model (fedlib.repro.budget.costs, unit costs of benchmarks/unit_costs.py)"


def _parts(claim):
    return getattr(claim, "parts", None) or (claim,)


def part_of(claim, name) -> object:
    name = "" if name is None or (isinstance(name, float) and math.isnan(name)) else str(name)
    parts = _parts(claim)
    return next((p for p in parts if getattr(p, "name", "") == name), parts[0])


# ----------------------------------------------------------------------------- the plan
def new_seeds(common: set, tried: set, target: int | None, first=()) -> tuple[int, ...]:
    """``first`` (seeds some of the cells hold already: adding them to the others pairs the cells again), then the
    smallest seeds not ``tried`` already (a seed that diverged once diverges again), until ``common`` and they are
    ``target``."""
    new, s = list(first)[:max(0, (target or 0) - len(common))], 0
    while target is not None and len(common) + len(new) < target:
        if s not in tried:
            new.append(s)
        s += 1
    return tuple(new)


def _fill_seeds(cells, seeds_of, common: set, attempted) -> list[int]:
    """The seeds some of ``cells`` hold and others lack (another decision added them to a cell they share), in
    order, where no cell lacking one has tried it (``attempted(cell)``: the profile's seeds, those decided for
    it in ``_decided.jsonl`` and those it holds): training them makes every gap of the cells paired again."""
    held = set().union(*(set(seeds_of[x]) for x in cells)) - common
    return sorted(s for s in held if all(s in seeds_of[x] or s not in attempted(x) for x in cells))


def _costed(pp, profile: str, scale: str, table: str, cells, seeds_of, wanted, root: Path, cache: dict):
    """``(runs, cpu_s, gpu_s, device, sources, held)`` of training ``cells`` to the seeds ``wanted``: the runs to
    train and their cost, and ``held``, the runs the committed records hold already (None: a cell not configured
    under ``profile``)."""
    t, prof, recorded = pp.table(table), pp.profile(profile), records_of(root, profile, cache)
    runs, cpu, gpu, device, sources, held = 0, 0.0, 0.0, "cuda" if scale == "GPU" else "cpu", set(), 0
    for r, c in cells:
        lack = [s for s in wanted if s not in seeds_of[(r, c)]]
        if not lack:
            continue
        cfg, _ = prof.resolve(t.config(r, c), t.id)
        if cfg is None:
            return None
        if scale != "GPU":
            there = held_in_records(cfg, lack, recorded)
            held += len(there)
            lack = [s for s in lack if s not in there]
            if not lack:
                continue
        runs += len(lack)
        needs_gpu = scale == "GPU" or (prof.cost is not None and not prof.cost.fits_cpu(cfg))
        device = "cuda" if needs_gpu else device
        sec, src = run_seconds(pp, profile, cfg, recorded, seeds_of[(r, c)], gpu=False)
        cpu = None if sec is None or cpu is None else cpu + sec * len(lack)
        sources.add(src)
        if needs_gpu:
            gsec, gsrc = run_seconds(pp, profile, cfg, {}, (), gpu=True)
            gpu = None if gsec is None or gpu is None else gpu + gsec * len(lack)
            sources.add(f"GPU: {gsrc}")
    return runs, cpu, gpu, device, sources, held


def _gap_need(row: dict, have: int, est) -> tuple[int | None, float | None, bool, str]:
    """``(seeds, sd, estimate, source)`` for a gap row: the closed form at the row's paired std, or with fewer
    than 2 seeds at the planning estimate ``est()`` (``(sd, where)``)."""
    ours, paper, sd = num(row.get("ours")), num(row.get("paper")), num(row.get("ours_std"))
    margin = num(row.get("margin")) or 0.0
    paired = row.get("paired") in (True, "True", 1.0)
    source = f"the {'paired std of the per-seed gaps' if paired else 'std of the gap'} over {have} seeds (claims.csv)"
    estimate = have < 2 or sd is None
    if estimate:
        found_sd, found = est()
        if found_sd is None and sd is not None:
            found = "the row's std (claims.csv), a spread borrowed from its table"
        sd, source = (found_sd if found_sd is not None else sd), f"planning estimate: {found}"
    if ours is None or paper is None or sd is None:
        return (MIN_SEEDS if ours is not None else None), sd, estimate, "no spread measured or reported"
    need = seeds_to_decide(ours, sd, paper, margin)
    closed = f"seeds_to_decide({ours:+.2f}, {sd:.2f}, {paper:+.2f}, margin {margin:.2f}) = {need}"
    return need, sd, estimate, f"{source}; {closed}"


def _best_need(q, cols, rivals, seeds_of, have: int) -> tuple[int | None, tuple, float | None, str]:
    """``(seeds, columns, sd, source)`` for a best row: per column, the seeds at which every rival's paired gap
    excludes 0, for the columns where some does not yet (module docstring)."""
    from scipy.stats import t

    if have < 2:
        return MIN_SEEDS, cols, None, "one seed: no interval of any gap; plan 3 seeds of every row to measure them"
    needs, undecided, sds, diverging = [], [], [], []
    for c in cols:
        gaps = []  # (mean, its interval holds 0, seeds to exclude 0) per rival, paired by seed
        short = []  # seeds for MIN_SEEDS converged pairs, per rival with < 2 (a diverged seed is NaN): None if none
        for r in rivals:
            a, b = seeds_of[(q.method, c)], seeds_of[(r, c)]
            ran = sorted(set(a) & set(b))
            d = pd.Series([a[k] - b[k] for k in ran]).dropna()
            if len(d) < 2:  # too few converged pairs for an interval: more seeds, at the rate they converge
                short.append(math.ceil(MIN_SEEDS * len(ran) / len(d)) if len(d) else None)
                continue
            z = float(t.ppf(0.975, len(d) - 1)) * d.std() / math.sqrt(len(d))
            gaps.append((d.mean(), abs(d.mean()) <= z, seeds_to_decide(d.mean(), d.std(), d.mean())))
            sds.append(float(d.std()))
        if any(g < 0 and not holds for g, holds, _ in gaps) or not (short or any(holds for _, holds, _ in gaps)):
            continue  # beaten beyond the noise already, or every interval above 0: decided
        # beaten once one rival ahead of it leaves 0 behind; best once every rival's interval lies above 0
        beaten = [n for g, _, n in gaps if g < 0 and n is not None]
        best = [n for _, _, n in gaps] + short if all(g > 0 for g, _, _ in gaps) else [None]
        undecided.append(c)
        if short:
            diverging.append(c)
        ways = [min(beaten)] if beaten else []
        ways += [] if None in best else [max(best)]
        needs.append(min(ways) if ways else None)
    known = [n for n in needs if n is not None]
    if not undecided:
        return have, (), None, "every column decided: render the claims again"
    converge = (f"; in {', '.join(diverging)} fewer than 2 seeds of a pair converged (a diverged seed holds no "
                f"value): seeds for {MIN_SEEDS} converged pairs at the rate seen") if diverging else ""
    return (max(known) if known else None), tuple(undecided), (max(sds) if sds else None), (
        f"undecided columns {', '.join(undecided)}: the paired gaps to the rivals whose interval holds 0, over "
        f"{have} seeds (the table CSV's ours_seeds){converge}; seeds to exclude 0 per column: "
        f"{', '.join('—' if n is None else str(n) for n in needs)}")


def _decide_row(pp, claim, part, row: dict, root: Path, cache: dict) -> Decision | None:
    q, scale = part.quantity, str(row["scale"])
    profile = profile_of(pp, scale)
    rule = getattr(part, "rule", row.get("rule"))
    best = rule == "best"
    if profile is None or not (hasattr(q, "baseline") or rule in ("best", "ranking")):
        return None
    seeds_of = cell_seeds(root, pp, scale, q.table)
    if rule == "ranking":
        rows = tuple(q.rows)
    elif best:
        rows = (q.method, *(q.rivals or sorted({r for r, _ in seeds_of} - {q.method})))
    else:
        rows = (q.method, q.baseline)
    cols = tuple(c for c in q.columns if all(seeds_of.get((r, c)) for r in rows))
    if not cols:
        return None
    common = set.intersection(*(set(seeds_of[(r, c)]) for c in cols for r in rows))
    have = len(common)
    if rule == "ranking":  # τ's p-value has no closed form in the seeds: one seed gets its first spread only
        if have >= 2:
            return None
        need, sd, estimate, source = MIN_SEEDS, None, False, (
            f"an order of {len(rows)} rows, decided over ≥ 2 seeds by τ's p-value: {MIN_SEEDS} seeds of every row")
    elif best:
        need, cols, sd, source = _best_need(q, cols, rows[1:], seeds_of, have)
        estimate = False
    else:
        need, sd, estimate, source = _gap_need(row, have, lambda: _spread_estimate(root, pp, profile, q.table, q,
                                                                                     cols))
    if have < 2:  # no spread of the cells themselves: at least MIN_SEEDS, more where the estimate asks for them
        target = max(need or MIN_SEEDS, MIN_SEEDS)
    else:
        target = None if need is None else max(need, have)  # ≤ have: the ledger predates these seeds
    tried = set().union(*(seeds_of[cell] for cell in seeds_of))  # a table runs its profile's seeds in every cell
    declared = set() if scale == "GPU" else set(pp.profile(profile).seeds_for(q.table))
    tried |= declared
    cells = [(r, c) for c in cols for r in rows]
    from .tables import decided_seeds

    decided = {} if scale == "GPU" else decided_seeds(root / profile, q.table)
    fill = _fill_seeds(cells, seeds_of, common, lambda x: declared | set(decided.get(x, ())) | set(seeds_of[x]))
    if scale != "GPU":  # then the seeds a stopped decide trained for these cells: it goes on from them
        fill += [s for s in resumed_seeds(pp, profile, q.table, cells, seeds_of, records_of(root, profile, cache))
                 if s not in fill]
    new = new_seeds(common, tried | common | set(fill), target, fill)  # a seed taken first is not taken again
    wanted = sorted(common) + list(new)
    stale = predates_seeds(seeds_of, cells)
    seeds_of, progress = held_seeds(root, pp, scale, q.table, cells, cache, seeds_of)
    if progress is not None:  # first the table's regeneration at its seeds, with records: it may decide the claim
        new = wanted = tuple(pp.profile(profile).seeds_for(q.table))
        target = max(len(new), have)
    costed = _costed(pp, profile, scale, q.table, cells, seeds_of, wanted, root, cache)
    if costed is None:
        return None
    runs, cpu, gpu, device, sources, held = costed
    what = part.name + ": " if getattr(part, "name", "") else ""
    head = (f"{q.method} best against {len(rows) - 1} rivals" if best else "Kendall's τ" if rule == "ranking"
            else f"{q.method} − {q.baseline} over {len(cols)} column(s)")
    why = f"{what}{head}" + (f"; sized at sd {sd:.2f} ({source})" if sd is not None else f"; {source}")
    why += f"; cost from {', '.join(sorted(sources))}" if sources else ""
    if progress is not None:
        why += (f"; {q.table}.csv keeps no per-seed values (written before ours_seeds): the plan is its regeneration "
                f"at the profile's seeds {', '.join(map(str, new))} with run records, {progress[0]} of these "
                f"{progress[1]} runs in {profile}/_records.jsonl.gz; go on with `python -m fedlib.repro.regenerate "
                f"--profile {profile} --paper {pp.name} --resume`, then the claim is planned again from the "
                "table's per-seed values")
    elif stale:
        why += (f"; {q.table}.csv keeps no per-seed values (written before ours_seeds): once trained, the table "
                "renders again from its notebook, not from this plan")
    return Decision(paper=pp.name, claim=claim.id, part=getattr(part, "name", "") or "", scale=scale,
                    profile=profile, table=q.table, rows=rows, columns=cols, have=have, target=target,
                    seeds=new, runs=runs, cpu_hours=None if cpu is None else cpu / 3600,
                    gpu_hours=(None if gpu is None else gpu / 3600) if device == "cuda" else None,
                    device=device, sd=sd, estimate=estimate, why=why,
                    recorded=None if progress is None else progress[0],
                    planned=None if progress is None else progress[1], held=held)


def plan(paper: str, frame: pd.DataFrame | None = None, root: str | Path | None = None) -> list[Decision]:
    """A :class:`Decision` for each inconclusive gap or best row of ``paper``'s claims ``frame`` (default:
    :func:`fedlib.repro.artefacts.claims.evaluate` of the outputs under ``root``, the figures folder, default the
    repository's), cheapest first.  Ranking, ladder and figure rows, and rows whose cells are not in a table at
    that scale, get none."""
    from .claims import claims_of, evaluate
    from .provenance import repo_root
    from ..spec.paper import get_paper

    pp = get_paper(paper)
    root = Path(root) if root is not None else repo_root() / "figures"
    frame = evaluate(paper, root) if frame is None else frame
    claims = {c.id: c for c in claims_of(paper)}
    out, cache = [], {}
    for row in frame.to_dict("records"):
        if not is_inconclusive(row) or row.get("claim") not in claims:
            continue
        claim = claims[row["claim"]]
        part = part_of(claim, row.get("part"))
        if getattr(part, "rule", row.get("rule")) not in PLANNED_RULES:
            continue
        d = _decide_row(pp, claim, part, row, root / paper, cache)
        if d is not None:
            out.append(d)
    return order(out)


def gpu_entries(papers=None, root: str | Path | None = None) -> list[dict]:
    """The decisions that need a GPU, cheapest first, as ``[[run]]`` entries of the lease queue
    (:func:`fedlib.repro.lease.load_queue`: kind "cell", paper, table, rows, columns, seeds): what a queue with
    ``order = "plan"`` trains first."""
    from ..spec.paper import all_papers

    decisions = [d for p in papers or all_papers() for d in plan(p, root=root) if d.device == "cuda" and d.seeds]
    return [{"kind": "cell", "paper": d.paper, "table": d.table, "rows": list(d.rows), "columns": list(d.columns),
             "seeds": list(d.seeds)} for d in order(decisions)]


def seeds_wanted(row: dict, value: float) -> tuple[int | None, str]:
    """The seeds a ledger row's gap wants against the paper's ``value`` (0 for a direction), and why: the closed
    form at its paired std (:func:`seeds_to_decide`; None beyond 50), or at least :data:`MIN_SEEDS` while its cells
    have no spread of their own (one seed, or unpaired); None where ours has no value."""
    ours, sd, have = num(row.get("ours")), num(row.get("ours_std")), int(num(row.get("n_seeds")) or 0)
    if ours is None:
        return None, "no value of ours"
    if row.get("paired") not in (True, "True", 1.0) or have < 2 or sd is None:
        held = "1 seed" if have < 2 else f"{have} seeds, unpaired"
        return max(MIN_SEEDS, have + 1), f"no spread of the cells themselves ({held}): at least {MIN_SEEDS} seeds"
    margin = num(row.get("margin")) or 0.0
    need = seeds_to_decide(ours, sd, value, margin)
    closed = f"seeds_to_decide({ours:+.2f}, {sd:.2f}, {value:+.2f}, margin {margin:.2f}) = {need}"
    return need, f"the paired std of the per-seed gaps over {have} seeds; {closed}"


def ladder_need(paper: str, row: dict, root: str | Path) -> str:
    """What would decide an inconclusive ladder row, in words: the seeds its gap wants at the measured paired
    spread (:func:`fedlib.repro.verdict.claims.seeds_to_decide`, as the ledger's ``decide`` says), added at every
    rung that ran by raising ``cpu_seeds`` in the paper's ``budget.py``, and what they cost from the ladder's
    ``est_cpu_min`` (its seeds' runs on one core)."""
    gap, have = num(row.get("paper")), int(num(row.get("n_seeds")) or 0)
    want = None if gap is None else seeds_wanted(row, gap)[0]
    scale = str(row["scale"]).removeprefix("ladder ")
    path = Path(root) / paper / scale / "budget_ladder.csv"
    if scale != "paper":  # quick's ladder draws the trend over one seed; the paper's ladder takes the seeds
        return ("a ladder row at quick: one seed by design (fedlib.repro.budget.ladder.ladder_seeds: the trend, not "
                "the spread); the paper ladder's row is the one more seeds decide (cpu_seeds in "
                f"fedlib/papers/{paper}/budget.py)")
    if want is None or not path.exists():
        return ("a ladder row: its seeds are the ladder's (fedlib.repro.budget.ladder.ladder_seeds: "
                f"cpu_seeds of fedlib/papers/{paper}/budget.py on a CPU)"
                + ("" if path.exists() else f"; {scale}/budget_ladder.csv is absent"))
    rungs = pd.read_csv(path)
    ran = rungs[rungs.runs_here.astype(str) == "True"]
    minutes = pd.to_numeric(ran.est_cpu_min, errors="coerce").sum() / max(have, 1) * (want - have)
    return (f"a ladder row: {want} seeds ({have} now) at each of its {len(ran)} rungs that ran: cpu_seeds = {want} in "
            f"fedlib/papers/{paper}/budget.py, then its ladder again with --resume (the runs its records lack); "
            f"the {want - have} added seeds ≈ {minutes / 60:.1f} CPU-h on one core (budget_ladder.csv's est_cpu_min)")
