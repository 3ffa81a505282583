"""What would decide the inconclusive rows whose seeds are declared, not planned: :func:`unplanned` lists them with
why (a ladder's seeds are its ``cpu_seeds``, :func:`fedlib.repro.artefacts.decision.ladder_need`; an order over
≥ 2 seeds has no closed form), and :func:`study_need` says it for a figure's finding: a
:class:`~fedlib.repro.spec.claims.Contrast` over a study's summary (FedABC's Fig. 5 ablation, FEDIC's Figs. 3-5,
FedConcat's Figs. 3-4).

A study is not one of the paper's tables, so :func:`fedlib.repro.artefacts.decision.plan` has no cells of a table
to add seeds to.  Its seeds are the profile's for its experiment (``experiments[<id>]["seeds"]`` in
``fedlib/papers/<paper>/profiles.py``), and every cell of the study trains at each of them.  :func:`study_need`
says, in words, what the ledger's row needs:

* **how many seeds**: :func:`fedlib.repro.artefacts.decision.seeds_wanted` (the closed form at the row's mean and
  paired std, as the ledger's ``decide`` column says; with one seed, or unpaired seeds, at least
  :data:`~fedlib.repro.artefacts.decision.MIN_SEEDS`), as for a ladder's row; a seed at which a cell's run failed
  (no partition draw at that seed) counts as tried, not held, so another seed replaces it;
* **which runs**: every configured cell of the studies of that experiment in the notebook that saved the output
  (its sidecar's ``experiment`` and ``notebook``) × the seeds added;
* **what it costs**: each cell's recorded wall time at the seeds it holds (``_records.jsonl.gz``: ``wall_time_s``,
  one core), else the paper profile's cost model;
* **how**: the profile's seeds of the experiment, then its notebook again with ``--resume``, which trains only the
  runs the records lack.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .claim_evidence import num

__all__ = ["study_need", "unplanned"]


def study_need(pp, part, row: dict, root: str | Path) -> str | None:
    """In words, the runs that would decide ``row`` (a ledger row of ``part``, whose quantity is a ``Contrast``),
    their cost and the commands; None where ``part`` is not a study's contrast or its scale is not a profile's.
    ``root``: the figures folder."""
    from ..run.grid import identity
    from ..run.records import RECORDS_FILE, read, record_id
    from .decision import new_seeds, run_seconds, seeds_wanted
    from .decision_seeds import profile_of

    q, scale = part.quantity, str(row.get("scale"))
    profile = profile_of(pp, scale)
    if not hasattr(q, "output") or profile is None or scale == "GPU":
        return None
    out = Path(root) / pp.name / scale
    try:
        meta = json.loads((out / f"{q.output}.json").read_text())
    except (OSError, json.JSONDecodeError):
        return f"a study row: {scale}/{q.output}.json is absent, so its study's seeds and notebook are unknown"
    experiment, notebook = meta.get("experiment"), str(meta.get("notebook", "")).rpartition("/")[2]
    value = part.paper_value if part.paper_value is not None else 0.0
    want, why = seeds_wanted(row, value)
    have = int(num(row.get("n_seeds")) or 0)
    if want is None:
        return f"a study row: more than 50 seeds at the measured paired std ({why})" if num(row.get("ours")) \
            is not None else f"a study row: {why}"
    prof = pp.profile(profile)
    names = {n for v in pp.views_of(notebook) for n in v.studies}
    studies = [s for s in pp.studies.values() if s.id == experiment and (not names or s.name in names)]
    cells = [c["config"] for s in studies for c in s.cells(prof) if c.get("config") is not None]
    held = tuple(prof.seeds_for(experiment))
    recorded = read(out / RECORDS_FILE)
    # a seed at which a cell's run failed (a partition with no draw at that seed) fails again: it counts as tried,
    # not as a seed with a value (FEDIC's Fig. 5 at α = 0.01, seed 2)
    failed = {s for s in held for cfg in cells
              if (recorded.get(record_id(identity({**cfg, "seed": s}))) or {}).get("result", {}).get("status")
              == "failed"}
    seeds = tuple(sorted(held)) + new_seeds(set(held) - failed, set(held), want)  # the smallest seeds not run
    added = len(seeds) - len(held)
    command = f"`python -m fedlib.repro.regenerate --profile {profile} --paper {pp.name} --only {notebook} --resume`"
    if not added:  # the profile gives the study these seeds already: its outputs predate them
        return (f"a study row: {want} seeds ({have} now; {why}); the {profile!r} profile gives study "
                f"{experiment!r} {len(held)} seeds already: {command} trains what the records lack")
    said = f"; seeds {sorted(failed)} failed" if failed else ""
    total, sources = 0.0, set()
    for cfg in cells:
        sec, src = run_seconds(pp, profile, cfg, recorded, held, gpu=False)
        sources.add(src)
        total = None if sec is None or total is None else total + sec * added
    cost = "cost unknown" if total is None else f"≈ {total / 60:.0f} CPU-min ({', '.join(sorted(sources))})"
    return (f"a study row: {want} seeds ({have} now{said}; {why}) of every cell of study "
            f"{', '.join(repr(s.name) for s in studies) or repr(experiment)} ({len(cells)} cells): "
            f"experiments[{experiment!r}]['seeds'] = {seeds} in the {profile!r} profile of "
            f"fedlib/papers/{pp.name}/profiles.py, then {command}: {len(cells) * added} runs, {cost}")


def unplanned(paper: str, frame: pd.DataFrame, planned: list, root: Path) -> list[dict]:
    """The inconclusive rows of ``frame`` without a decision in ``planned``, each with why."""
    from ..spec.paper import get_paper
    from .claims import claims_of
    from .decision import PLANNED_RULES, part_of, is_inconclusive, ladder_need

    pp = get_paper(paper)
    done = {(d.claim, d.part, d.scale) for d in planned}
    claims = {c.id: c for c in claims_of(paper)}
    out = []
    for row in frame.to_dict("records"):
        part = row.get("part")
        part = "" if not isinstance(part, str) else part
        if not is_inconclusive(row) or (row["claim"], part, row["scale"]) in done:
            continue
        kind = "ladder" if str(row["scale"]).startswith("ladder") else row.get("rule")
        why = (ladder_need(paper, row, root) if kind == "ladder" else
               "a ranking row over ≥ 2 seeds: τ's p-value has no closed form in the seeds; more seeds of every row"
               if kind == "ranking" else f"a {kind} row: no rule of the plan" if kind not in PLANNED_RULES else
               None)
        if why is None and row["claim"] in claims:  # a figure's study: its seeds are the profile's for it
            why = study_need(pp, part_of(claims[row["claim"]], part), row, root)
        why = why or "its cells are not in a paper table at this scale, nor a study's summary (not configured there)"
        out.append({"paper": paper, "claim": row["claim"], "part": part, "scale": row["scale"], "why": why})
    return out
