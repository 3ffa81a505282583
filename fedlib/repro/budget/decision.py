"""What would decide an inconclusive claim: the seeds to add, on which cells, at which scale, at what cost.

A claim's quantity is decided by its 95 % interval over seeds (:mod:`fedlib.repro.verdict.claims`); it is
*inconclusive* while the interval holds both 0 and the paper's band, or where a cell has one seed (no interval).
For each such row of a paper's claims frame (``figures/<paper>/claims.csv``, or
:func:`fedlib.repro.artefacts.claims.evaluate`), :func:`plan` gives a :class:`Decision`:

* **how many seeds**: :func:`fedlib.repro.verdict.claims.seeds_to_decide` at the row's mean and paired std (the
  fewest ``n`` at which the same mean and spread would exclude 0 or the paper's band).  With one seed there is
  no spread of the cell itself: the plan is at least 3 seeds, sized with a *planning estimate* of the spread,
  labelled as such: the table's measured std of the headline gain over seeds
  (``figures/<paper>/<profile>/_spread.json``, ``seed_to_seed``: ``max_gain_std``), else the paper's std of the
  two cells (√(s_a² + s_b²), ``paper_std`` of the table CSV), else the row's own (borrowed) std;
* **which runs**: the part's cells (method and baseline in each column that ran at that scale) × the seeds they
  lack, the next seeds after those every cell already holds (its CSV's ``ours_seeds``; the GPU's
  ``paper/gpu/<table>_gpu_runs.csv``);
* **what it costs**: per run, the wall time recorded for the same cell at another seed (the run records,
  ``_records.jsonl.gz``: ``wall_time_s``, one thread, so CPU time), else the paper profile's cost model
  (:mod:`fedlib.repro.budget.costs`; measured unit costs).  A run that does not fit the CPU
  (``CostModel.fits_cpu``), or a row at the GPU scale, is a GPU run priced in GPU hours.

:func:`describe` says it in one line; ``python -m fedlib.repro.decide`` trains it (:mod:`fedlib.repro.decide`).
Decisions sort cheapest first (:func:`order`): CPU before GPU, then by hours.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

__all__ = ["Decision", "plan", "unplanned", "describe", "order", "seeds_to_decide", "is_inconclusive", "five_words",
           "claims_frame", "gpu_entries", "PLANNED_RULES", "MIN_SEEDS"]

#: Rules whose quantity is a gap of two rows, and so planned by seeds of their cells.
PLANNED_RULES = ("sign", "size")
#: Where a cell has one seed: plan at least this many (the contract of issue 49: "one seed: at least 3 seeds").
MIN_SEEDS = 3


def _seeds_to_decide(ours: float, sd: float, paper: float, margin: float = 0.0, max_seeds: int = 50) -> int | None:
    """Stand-in for :func:`fedlib.repro.verdict.claims.seeds_to_decide` (same contract) while that is absent."""
    from scipy.stats import t

    for n in range(2, max_seeds + 1):
        z = float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
        if abs(ours) > z or abs(ours - paper) > z + margin:
            return n
    return None


def seeds_to_decide(ours: float, sd: float, paper: float, margin: float = 0.0, max_seeds: int = 50) -> int | None:
    """The verdict rules' own (:mod:`fedlib.repro.verdict.claims`), else the stand-in above."""
    from ..verdict import claims as rules

    return getattr(rules, "seeds_to_decide", _seeds_to_decide)(ours, sd, paper, margin, max_seeds)


@dataclass(frozen=True)
class Decision:
    """The runs that would decide one inconclusive row (claim × part × scale)."""

    paper: str
    claim: str
    part: str
    scale: str
    profile: str
    table: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    have: int  # seeds every cell holds now (paired)
    target: int | None  # seeds to reach (None: not within the cap at this spread)
    seeds: tuple[int, ...]  # the seeds to add
    runs: int  # runs to train: the cells × the seeds each lacks
    cpu_hours: float | None  # estimated, one core per run (None: a cost not known)
    gpu_hours: float | None  # estimated GPU time of the runs that need a GPU
    device: str  # "cpu" or "cuda"
    sd: float | None  # the paired std the seeds are sized at
    estimate: bool  # sd is a planning estimate (one seed: no spread of the cell itself)
    why: str  # in words: the spread used and where each number comes from

    @property
    def hours(self) -> float:
        """The hours it costs on its device (unknown: infinite, so it sorts last)."""
        h = self.gpu_hours if self.device == "cuda" else self.cpu_hours
        return math.inf if h is None else h

    @property
    def cells(self) -> list[tuple[str, str]]:
        return [(r, c) for c in self.columns for r in self.rows]


def _hours(h: float | None, unit: str) -> str:
    if h is None:
        return f"{unit} time not measured"
    return f"≈ {h * 60:.0f} {unit}-min" if h < 1 else f"≈ {h:.1f} {unit}-h"


def describe(d: Decision) -> str:
    """One line: "3 more seeds (2 → 5) of 2 cells at paper scale: 6 runs, ≈ 1.4 CPU-h"."""
    cells = len(d.rows) * len(d.columns)
    where = f"{cells} cell{'s' if cells != 1 else ''} of {d.table} at {d.scale} scale"
    if d.target is None:
        return f"not decidable within 50 seeds at this spread ({d.have} seeds of {where}): {d.why}"
    if not d.runs:
        return f"{d.have} seeds of {where} already, enough to decide it: render the claims again"
    cost = _hours(d.gpu_hours, "GPU") if d.device == "cuda" else _hours(d.cpu_hours, "CPU")
    more = d.target - d.have
    est = " (spread: a planning estimate)" if d.estimate else ""
    return (f"{more} more seed{'s' if more != 1 else ''} ({d.have} → {d.target}) of {where}: {d.runs} runs, "
            f"{cost}{est}")


def order(decisions: list[Decision]) -> list[Decision]:
    """Cheapest decision first: those that decide within the cap, CPU before GPU, then by hours, then name."""
    return sorted(decisions, key=lambda d: (d.target is None, d.device != "cpu", d.hours, d.runs, d.paper, d.claim,
                                            d.part, d.scale))


def _num(x) -> float | None:
    """A finite number, else None (a CSV's empty cell, text)."""
    v = pd.to_numeric(pd.Series([x], dtype=object), errors="coerce").iloc[0]
    return float(v) if pd.notna(v) and math.isfinite(v) else None


def five_words(frame: pd.DataFrame) -> bool:
    """The frame was written with the five-word verdicts (it has ``margin``, or says "inconclusive" somewhere)."""
    return "margin" in frame.columns or bool((frame.get("verdict") == "inconclusive").any())


def is_inconclusive(row: dict, new_vocabulary: bool) -> bool:
    """A row the plan is for.  With the five-word verdicts (``new_vocabulary``: the frame has ``margin`` or says
    "inconclusive" somewhere) its verdict says so; a frame written before them is read by the same rule from its
    numbers (one seed, or a 95 % interval that holds both 0 and the paper's value: margin 0)."""
    if new_vocabulary:
        return row.get("verdict") == "inconclusive"
    if row.get("rule") not in PLANNED_RULES or row.get("verdict") == "not tested":
        return False
    ours, sd, paper, n = (_num(row.get(k)) for k in ("ours", "ours_std", "paper", "n_seeds"))
    if ours is None or paper is None or n is None:
        return False
    if n < 2 or sd is None:
        return True
    from scipy.stats import t

    z = float(t.ppf(0.975, int(n) - 1)) * sd / math.sqrt(n)
    return abs(ours) <= z and abs(ours - paper) <= z


# ----------------------------------------------------------------------------- where the cells are
def _profile_of(pp, scale: str) -> str | None:
    """The profile a scale's cells are configured by: "GPU" is the paper profile's; "ladder …" has none here."""
    if scale == "GPU":
        return "paper"
    return scale if scale in pp.profiles else None


def _cell_seeds(root: Path, pp, scale: str, table: str) -> dict[tuple[str, str], dict[int, float]]:
    """Each cell's seeds (and values) at ``scale``: the table CSV's ``ours_seeds``; the GPU's runs CSV."""
    from ..artefacts.tables import parse_seeds
    from ..run.cells import gpu_folder

    if scale == "GPU":
        path = root / "paper" / gpu_folder(pp.profile("paper").gpu_precision) / f"{table}_gpu_runs.csv"
        if not path.exists():
            return {}
        runs = pd.read_csv(path)
        runs = runs[runs.get("state", "finished") == "finished"] if "state" in runs else runs
        return {(r, c): {int(s): float(v) for s, v in zip(g.seed, g.accuracy)}
                for (r, c), g in runs.groupby(["row", "column"])}
    path = root / scale / f"{table}.csv"
    if not path.exists():
        return {}
    frame = pd.read_csv(path)
    declared = pp.profile(scale).seeds_for(table)
    out = {}
    for r in frame.itertuples():
        seeds = parse_seeds(getattr(r, "ours_seeds", None))
        n = int(_num(r.n_seeds) or 0)
        if not seeds and _num(r.ours_mean) is not None and n:
            # written before ours_seeds: its n seeds are the profile's first n (their values are not kept)
            seeds = {int(s): math.nan for s in declared[:n]}
        out[(r.row, r.column)] = seeds
    return out


def _spread_estimate(root: Path, pp, profile: str, table: str, q, cells) -> tuple[float | None, str]:
    """A planning estimate of the paired std of one seed's gap (module docstring) and where it comes from."""
    path = root / profile / "_spread.json"
    try:
        s2s = json.loads(path.read_text()).get("seed_to_seed", {}).get("tables", {}).get(table, {})
    except (OSError, json.JSONDecodeError):
        s2s = {}
    if _num(s2s.get("max_gain_std")) is not None:
        return float(s2s["max_gain_std"]), (f"the std of {table}'s headline gain over seeds {s2s.get('seeds')} "
                                            f"({profile}/_spread.json)")
    csv = root / profile / f"{table}.csv"
    if csv.exists():
        frame = pd.read_csv(csv)
        stds = []
        for col in cells:
            pair = frame[(frame.column == col) & frame.row.isin((q.method, q.baseline))]
            vals = [_num(v) for v in pair.get("paper_std", [])]
            if len(vals) == 2 and None not in vals:
                stds.append(math.hypot(*vals))
        if stds:
            return max(stds), f"the paper's std of the two cells, √(s_a² + s_b²) ({profile}/{table}.csv: paper_std)"
    return None, "no spread measured or reported"


def _run_seconds(pp, profile: str, cfg: dict, recorded: dict, seeds, gpu: bool) -> tuple[float | None, str]:
    """One run's seconds: the cell's recorded wall time at another seed (``recorded``: the profile's run
    records), else the paper profile's cost model; and the source in words."""
    from ..run.grid import _identity
    from ..run.records import record_id

    if not gpu:
        times = [recorded[i]["result"].get("wall_time_s") for i in
                 (record_id(_identity({**cfg, "seed": int(s)})) for s in seeds) if i in recorded]
        times = [t for t in times if _num(t) is not None]
        if times:
            return sum(times) / len(times), f"{profile}/_records.jsonl.gz wall_time_s"
    cost = pp.profile("paper").cost
    if cost is None:
        return None, "no cost model"
    from .costs import gpu_config

    s = cost.seconds(gpu_config(cfg, pp.profile("paper").gpu_precision) if gpu else cfg, gpu=gpu)
    return s, "the paper profile's cost model (fedlib.repro.budget.costs, unit costs of benchmarks/unit_costs.py)"


def _parts(claim):
    return getattr(claim, "parts", None) or (claim,)


def _part_of(claim, name) -> object:
    name = "" if name is None or (isinstance(name, float) and math.isnan(name)) else str(name)
    parts = _parts(claim)
    return next((p for p in parts if getattr(p, "name", "") == name), parts[0])


# ----------------------------------------------------------------------------- the plan
def _decide_row(pp, claim, part, row: dict, root: Path, records_cache: dict) -> Decision | None:
    q = part.quantity
    scale = str(row["scale"])
    profile = _profile_of(pp, scale)
    if profile is None or not hasattr(q, "baseline"):
        return None
    seeds_of = _cell_seeds(root, pp, scale, q.table)
    cols = tuple(c for c in q.columns if seeds_of.get((q.method, c)) and seeds_of.get((q.baseline, c)))
    if not cols:
        return None
    rows = (q.method, q.baseline)
    held = [set(seeds_of[(r, c)]) for c in cols for r in rows]
    common = set.intersection(*held)
    have = len(common)
    ours, paper = _num(row.get("ours")), _num(row.get("paper"))
    margin = _num(row.get("margin")) or 0.0
    sd, estimate = _num(row.get("ours_std")), False
    source = f"the paired std of the per-seed gaps over {have} seeds (claims.csv)" if row.get("paired") in (
        True, "True", 1.0) else f"the std of the gap over {have} seeds (claims.csv)"
    if have < 2 or sd is None:
        est, found = _spread_estimate(root, pp, profile, q.table, q, cols)
        if est is None and sd is not None:
            found = "the row's std (claims.csv), a spread borrowed from its table"
        sd, estimate, source = (est if est is not None else sd), True, f"planning estimate: {found}"
    if ours is None or paper is None or sd is None:
        need = MIN_SEEDS if ours is not None else None
    else:
        need = seeds_to_decide(ours, sd, paper, margin)
    if have < 2:  # no spread of the cell itself: at least MIN_SEEDS, more where the estimate asks for them
        target = max(need or MIN_SEEDS, MIN_SEEDS)
    else:
        target = None if need is None else max(need, have)  # ≤ have: the ledger predates these seeds
    new: list[int] = []
    if target is not None:
        s = 0
        while len(common) + len(new) < target:
            if s not in common:
                new.append(s)
            s += 1
    t = pp.table(q.table)
    prof = pp.profile(profile)
    gpu_scale = scale == "GPU"
    cost = pp.profile("paper").cost
    if profile not in records_cache:
        from ..run.records import RECORDS_FILE, read

        records_cache[profile] = read(root / profile / RECORDS_FILE)
    runs, cpu, gpu, device, sources = 0, 0.0, 0.0, "cuda" if gpu_scale else "cpu", set()
    for c in cols:
        for r in rows:
            lack = [s for s in list(common) + new if s not in seeds_of[(r, c)]]
            if not lack:
                continue
            cfg, _ = prof.resolve(t.config(r, c), t.id)
            if cfg is None:
                return None
            runs += len(lack)
            needs_gpu = gpu_scale or (prof.cost is not None and not prof.cost.fits_cpu(cfg))
            device = "cuda" if needs_gpu else device
            sec, src = _run_seconds(pp, profile, cfg, records_cache[profile], seeds_of[(r, c)], gpu=False)
            cpu = None if sec is None or cpu is None else cpu + sec * len(lack)
            sources.add(src)
            if needs_gpu:
                gsec, gsrc = _run_seconds(pp, profile, cfg, {}, (), gpu=True)
                gpu = None if gsec is None or gpu is None else gpu + gsec * len(lack)
                sources.add(f"GPU: {gsrc}")
    what = part.name + ": " if getattr(part, "name", "") else ""
    why = (f"{what}{q.method} − {q.baseline} over {len(cols)} column(s); sized at sd {sd:.2f} ({source})"
           if sd is not None else f"{what}no spread measured or reported: plan {MIN_SEEDS} seeds, then measure")
    why += f"; cost from {', '.join(sorted(sources))}" if sources else ""
    if target is not None and ours is not None and paper is not None and sd is not None:
        why += f"; seeds_to_decide({ours:+.2f}, {sd:.2f}, {paper:+.2f}, margin {margin:g}) = {need}"
    return Decision(paper=pp.name, claim=claim.id, part=getattr(part, "name", "") or "", scale=scale,
                    profile=profile, table=q.table, rows=rows, columns=cols, have=have, target=target,
                    seeds=tuple(new), runs=runs, cpu_hours=None if cpu is None else cpu / 3600,
                    gpu_hours=(None if gpu is None else gpu / 3600) if device == "cuda" else None,
                    device=device, sd=sd, estimate=estimate, why=why)


def claims_frame(paper: str, root: Path) -> pd.DataFrame:
    """The committed claims rows of ``paper`` (``figures/<paper>/claims.csv``); an absent file is an error
    naming it."""
    path = root / paper / "claims.csv"
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist: run python -m fedlib.repro.claims first")
    return pd.read_csv(path)


def plan(paper: str, frame: pd.DataFrame | None = None, root: str | Path | None = None) -> list[Decision]:
    """A :class:`Decision` for each inconclusive gap row of ``paper``'s claims ``frame`` (default: the committed
    ``claims.csv`` under ``root``, the figures folder, default the repository's), cheapest first.  Rows of other
    kinds (best, ranking, ladder) and rows whose cells are not in a table at that scale get none."""
    from ..artefacts.claims import claims_of
    from ..artefacts.provenance import repo_root
    from ..spec.paper import get_paper

    pp = get_paper(paper)
    root = Path(root) if root is not None else repo_root() / "figures"
    frame = claims_frame(paper, root) if frame is None else frame
    new_vocabulary = five_words(frame)
    claims = {c.id: c for c in claims_of(paper)}
    out, cache = [], {}
    for row in frame.to_dict("records"):
        if not is_inconclusive(row, new_vocabulary) or row.get("claim") not in claims:
            continue
        claim = claims[row["claim"]]
        part = _part_of(claim, row.get("part"))
        if getattr(part, "rule", row.get("rule")) not in PLANNED_RULES:
            continue
        d = _decide_row(pp, claim, part, row, root / paper, cache)
        if d is not None:
            out.append(d)
    return order(out)


def unplanned(paper: str, frame: pd.DataFrame | None = None, root: str | Path | None = None) -> list[dict]:
    """The inconclusive rows :func:`plan` has no decision for, each with why (for the dry run to say so)."""
    from ..artefacts.provenance import repo_root

    root = Path(root) if root is not None else repo_root() / "figures"
    frame = claims_frame(paper, root) if frame is None else frame
    new_vocabulary = five_words(frame)
    planned = {(d.claim, d.part, d.scale) for d in plan(paper, frame, root)}
    out = []
    for row in frame.to_dict("records"):
        part = row.get("part")
        part = "" if part is None or (isinstance(part, float) and math.isnan(part)) else str(part)
        if is_inconclusive(row, new_vocabulary) and (row["claim"], part, row["scale"]) not in planned:
            kind = "ladder" if str(row["scale"]).startswith("ladder") else row.get("rule")
            why = ((f"a {kind} row: its seeds are the ladder's (fedlib.repro.budget.ladder.ladder_seeds: "
                    "one on quick, cpu_seeds of fedlib/papers/<paper>/budget.py on a CPU)")
                   if kind == "ladder" else
                   f"a {kind} row: decided column by column over its rivals, not by one gap's seeds"
                   if kind not in PLANNED_RULES else
                   "its cells are not in a table at this scale (or the profile does not configure them)")
            out.append({"claim": row["claim"], "part": part, "scale": row["scale"], "why": why})
    return out


def gpu_entries(papers=None, root: str | Path | None = None) -> list[dict]:
    """The decisions that need a GPU, cheapest first, as ``[[run]]`` entries of the lease queue
    (:func:`fedlib.repro.lease.load_queue`: kind "cell", paper, table, rows, columns, seeds): what a queue with
    ``order = "plan"`` trains first."""
    from ..spec.paper import all_papers

    decisions = []
    for paper in papers or all_papers():
        try:
            decisions += [d for d in plan(paper, root=root) if d.device == "cuda" and d.seeds]
        except FileNotFoundError:  # no claims ledger for this paper yet
            continue
    return [{"kind": "cell", "paper": d.paper, "table": d.table, "rows": list(d.rows), "columns": list(d.columns),
             "seeds": list(d.seeds)} for d in order(decisions)]
