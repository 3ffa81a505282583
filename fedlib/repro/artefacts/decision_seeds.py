"""Where a plan's cells are, and the seeds each holds (:mod:`fedlib.repro.artefacts.decision` plans on them).

* :func:`cell_seeds` -- each cell's seeds (and values) at a scale: the table CSV's ``ours_seeds``, the GPU's runs;
* :func:`recorded_seeds` and :func:`held_seeds` -- for a table whose CSV predates per-seed values, the seeds the
  committed run records hold under the current code, and how far the table's regeneration got.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from .claim_evidence import diverged_seeds, num

__all__ = ["profile_of", "cell_seeds", "recorded_seeds", "predates_seeds", "held_seeds", "held_in_records",
           "recorded_run"]


def profile_of(pp, scale: str) -> str | None:
    """The profile a scale's cells are configured by: "GPU" is the paper profile's; "ladder …" has none here."""
    if scale == "GPU":
        return "paper"
    return scale if scale in pp.profiles else None


def cell_seeds(root: Path, pp, scale: str, table: str) -> dict[tuple[str, str], dict[int, float]]:
    """Each cell's seeds (and values) at ``scale``: the table CSV's ``ours_seeds``; the GPU's runs CSV."""
    from .tables import parse_seeds
    from ..run.gpu_runs import gpu_folder

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
        n = int(num(r.n_seeds) or 0)
        if not seeds and num(r.ours_mean) is not None and n:
            # written before ours_seeds: its n seeds are the profile's first n (their values are not kept)
            seeds = {int(s): math.nan for s in declared[:n]}
        # a seed that diverged ran: the cell holds it (NaN), so no plan trains it again to diverge again
        seeds.update({s: math.nan for s in diverged_seeds(getattr(r, "note", "")) if s not in seeds})
        out[(r.row, r.column)] = seeds
    return out


def recorded_seeds(pp, profile: str, table: str, cells, records: dict) -> dict[tuple[str, str], dict[int, float]]:
    """Of the profile's seeds of ``table``, those at which each of ``cells`` finished (ok or diverged) under the code
    that runs now, in the profile's committed run records (``records``: :func:`fedlib.repro.run.records.read`), by
    the store's own key rule (:func:`fedlib.repro.run.records.resumable`).  What a table whose CSV predates per-seed
    values holds once its regeneration renders it; the values are NaN (the table's notebook reads its metric)."""
    from ...config import Config
    from ...store import code_version
    from ..run.grid import identity
    from ..run.records import FINISHED, record_id

    t, prof = pp.table(table), pp.profile(profile)
    out = {}
    for r, c in cells:
        cfg, _ = prof.resolve(t.config(r, c), t.id)
        held = {}
        for s in (prof.seeds_for(table) if cfg is not None else ()):
            run = {**cfg, "seed": int(s)}
            rec = records.get(record_id(identity(run)))
            if rec and rec["result"].get("status") in FINISHED and \
                    rec.get("code_version") == code_version(Config.from_dict(run)):
                held[int(s)] = math.nan
        out[(r, c)] = held
    return out


def predates_seeds(seeds_of, cells) -> bool:
    """The table CSV of ``cells`` predates per-seed values (:func:`cell_seeds` gives all of a cell's seeds NaN values;
    a cell some of whose seeds diverged has NaN beside the values of the others)."""
    return any(seeds_of[cell] and all(math.isnan(v) for v in seeds_of[cell].values()) for cell in cells)


def held_seeds(root: Path, pp, scale: str, table: str, cells, cache: dict | None = None, seeds_of: dict | None = None):
    """``(seeds_of, progress)``: each cell's seeds as a plan counts them (:func:`cell_seeds`, unless the caller read
    them already: ``seeds_of``), and ``progress`` None;
    where the table CSV predates per-seed values and the profile's committed run records hold runs of the cells,
    the seeds those records hold (:func:`recorded_seeds`), and ``progress`` = (runs recorded, runs of the cells at
    the profile's seeds): the table's regeneration with records is what decides it, and this is how far it got."""
    seeds_of = cell_seeds(root, pp, scale, table) if seeds_of is None else seeds_of
    profile = profile_of(pp, scale)
    if scale == "GPU" or profile is None or not predates_seeds(seeds_of, [c for c in cells if c in seeds_of]):
        return seeds_of, None
    recorded = records_of(root, profile, {} if cache is None else cache)
    if not recorded:
        return seeds_of, None
    rec = recorded_seeds(pp, profile, table, cells, recorded)
    planned = len(cells) * len(pp.profile(profile).seeds_for(table))
    return {**seeds_of, **rec}, (sum(len(v) for v in rec.values()), planned)


def held_in_records(cfg: dict, seeds, recorded: dict) -> list:
    """Of ``seeds``, those whose run of ``cfg`` the committed records hold finished under the code that runs now
    (a decide that stopped): decide takes them from the records in seconds (``records.resumable``)."""
    from ..run.grid import identity
    from ..run.records import record_id, stands_for

    return [s for s in seeds if stands_for(recorded.get(record_id(identity({**cfg, "seed": int(s)}))),
                                           {**cfg, "seed": int(s)})]


def recorded_run(folder: Path, cfg: dict, cache: dict) -> bool:
    """Whether the committed records of ``folder`` (``figures/<paper>/<profile>``, read once into ``cache``) hold
    the run ``cfg`` (its seed in it) finished under the code that runs now (:func:`held_in_records`)."""
    from ..run.records import RECORDS_FILE, read

    if folder not in cache:
        cache[folder] = read(folder / RECORDS_FILE)
    return bool(held_in_records(cfg, [cfg["seed"]], cache[folder]))


def records_of(root: Path, profile: str, cache: dict) -> dict:
    """The committed records of ``root/<profile>`` (``_records.jsonl.gz``), read once into ``cache``."""
    from ..run.records import RECORDS_FILE, read

    if profile not in cache:
        cache[profile] = read(Path(root) / profile / RECORDS_FILE)
    return cache[profile]


def resumed_seeds(pp, profile: str, table: str, cells, seeds_of: dict, recorded: dict) -> list[int]:
    """The seeds that ``cells`` lack in the table but whose runs the committed records hold for one of them,
    finished under the code that runs now: a decide that stopped trained them.  The plan takes them first, so
    that it goes on from them even where another decision of the table has since claimed the seeds it would
    otherwise pick (FedLC Table 5's E = 20, stopped at seeds 28-41 while E = 10 took 28-39)."""
    t, prof, found = pp.table(table), pp.profile(profile), set()
    by_method: dict = {}  # the seeds recorded for each method: the candidates, checked run by run below
    for rec in recorded.values():
        by_method.setdefault(rec["config"].get("method"), set()).add(rec["config"].get("seed"))
    for r, c in cells:
        cfg, _ = prof.resolve(t.config(r, c), t.id)
        if cfg is None:
            continue
        there = sorted(s for s in by_method.get(cfg.get("method"), ())
                       if isinstance(s, int) and s not in seeds_of[(r, c)])
        found.update(held_in_records(cfg, there, recorded))
    return sorted(found)
