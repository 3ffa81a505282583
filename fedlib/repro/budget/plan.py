"""Planning a regeneration before it starts: which runs it would train, what they cost, and
whether that fits the budget.

:func:`plan` lists a paper profile's runs (its tables and studies, and its budget ladder), less what
the store already holds, and prices each with the paper's cost model (:mod:`fedlib.repro.budget.costs`);
:func:`preflight` refuses a regeneration whose estimate exceeds the budget before any run starts
(``--over-budget`` overrides it): a paper profile never runs for days by surprise.
"""

from __future__ import annotations

import os

from .gate import table_cells as gate_table_cells
from .costs import DEFAULT_BUDGET_HOURS, DEVICE_ENV, CostModel, format_hours, resolve_device, ungated

__all__ = ["PlanError", "plan", "check_budget", "preflight", "selected_views"]


class PlanError(RuntimeError):
    """A regeneration's estimated time exceeds its budget."""


def _study_cells(paper, profile, views) -> list[dict]:
    """The cells of the paper's declared studies (:attr:`fedlib.repro.spec.paper.Paper.studies`) that
    ``views`` run (None: every study)."""
    wanted = None if views is None else {s for v in views for s in v.studies}
    out = []
    for study in paper.studies.values():
        if not study.trains or (wanted is not None and study.name not in wanted):
            continue
        try:
            out += [c for c in study.cells(profile) if isinstance(c, dict)]
        except Exception:  # noqa: BLE001 -- a study that needs more than the profile is not counted
            continue
    return out


def _ladder_cells(paper, profile) -> list[tuple[dict, tuple]]:
    """The runs of the paper's budget ladder under ``profile`` (those it affords), when it declares one."""
    from .ladder import ladder_cells, ladder_seeds, spec_for

    try:
        spec = spec_for(paper.name)
    except KeyError:
        return []
    seeds = ladder_seeds(spec, profile)
    return [(c, seeds) for c in ladder_cells(spec, profile)[0]]


def _in_store(cfg: dict, store) -> bool:
    if store is None:
        return False
    try:
        from ...config import Config
        from ...store import Store

        st = store if isinstance(store, Store) else Store(store)
        return st.has_result(Config(**{k: v for k, v in cfg.items() if k != "device"}, device="cpu"))
    except Exception:  # noqa: BLE001 -- a configuration that does not validate here trains (and fails) later
        return False


def plan(paper: str, profile: str = "paper", device: str | None = None, store=None,
         views=None) -> dict:
    """What a regeneration of ``paper`` under ``profile`` would train on ``device``: every run of
    its tables (``Profile.table_cells`` × the table's seeds), of its experiments' cell lists
    (× the profile's seeds) and of its budget ladder, identical configurations once.  Returns
    ``runs`` (to train here: not in ``store``), ``stored``, ``not_run`` (runs a CPU cannot afford,
    with their notes; ``not_run_cpu_s`` their estimated CPU seconds, ``not_run_unknown`` those
    without a measured cost), ``cpu_s`` (the runs' estimated CPU seconds; None when a cost is unknown), ``unknown`` (runs
    without a unit cost), and ``wall_s`` (``cpu_s`` over the profile's workers).  ``views``: the
    notebooks to run (``--only``; :class:`fedlib.repro.spec.paper.View`, as the companion declares
    them): only the tables, studies and ladder they read count (None: every one)."""
    import dataclasses
    import json

    from ..spec.paper import get_paper

    pp = get_paper(paper)
    prof = pp.profile(profile)
    device = resolve_device(device or getattr(prof, "device", None))
    cost: CostModel | None = getattr(prof, "cost", None)
    everything = ungated(prof)
    cells = []
    tables = set(pp.tables) if views is None else {t for v in views for t in v.tables}
    for tid in pp.tables:
        if tid in tables:
            seeds = everything.seeds_for(tid)
            cells += [(c, seeds, False) for c in gate_table_cells(everything, tid)]
    cells += [(c, everything.seeds, False) for c in _study_cells(pp, everything, views)]
    if views is None or any(v.ladder for v in views):  # the ladder has decided its runs (its own run limit on a CPU)
        cells += [(c, seeds, True) for c, seeds in
                  _ladder_cells(pp, dataclasses.replace(prof, device=device) if cost is not None else prof)]
    runs: dict[str, dict] = {}
    not_run: dict[str, str] = {}
    beyond: list[float | None] = []  # the estimated CPU seconds of the runs not run here
    stored = 0
    for cell, seeds, decided in cells:
        cfg = cell.get("config")
        if cfg is None:
            continue
        cfg = {k: v for k, v in cfg.items() if k != "device"}
        for s in ([cfg["seed"]] if "seed" in cfg else seeds):
            c = {**cfg, "seed": s}
            key = json.dumps(c, sort_keys=True, default=str)
            if key in runs or key in not_run:
                continue
            if cost is not None and device == "cpu" and not decided and not cost.fits_cpu(c):
                not_run[key] = cost.not_run_note(c)
                beyond.append(cost.seconds(c))
                continue
            if _in_store(c, store):
                stored += 1
                continue
            runs[key] = c
    secs = [cost.seconds(c) if cost is not None else None for c in runs.values()]
    unknown = sum(s is None for s in secs)
    cpu = sum(s for s in secs if s is not None)
    workers = max(1, int(getattr(prof, "workers", 1)))
    return {"paper": paper, "profile": prof.name, "device": device, "runs": len(runs), "stored": stored,
            "not_run": len(not_run), "not_run_notes": sorted(set(not_run.values())), "unknown": unknown,
            "cpu_s": cpu if cost is not None else None, "wall_s": cpu / workers if cost is not None else None,
            "workers": workers, "not_run_cpu_s": sum(b for b in beyond if b is not None),
            "not_run_unknown": sum(b is None for b in beyond)}


def check_budget(plans: list[dict], budget_hours: float, allow_over: bool = False) -> str:
    """One line per plan and a total; raises :class:`PlanError` when the estimated wall time
    (CPU time over each profile's workers) exceeds ``budget_hours`` and ``allow_over`` is False."""
    lines, wall = [], 0.0
    for p in plans:
        if p["cpu_s"] is None:
            lines.append(f"{p['paper']} ({p['profile']}): {p['runs']} runs to train, no cost model (see the profile)")
            continue
        wall += p["wall_s"]
        lines.append(f"{p['paper']} ({p['profile']}, {p['device']}): {p['runs']} runs to train "
                     f"(est. {p['cpu_s'] / 3600:.1f} CPU-h, {format_hours(p['wall_s'])} on {p['workers']} "
                     f"worker{'s' if p['workers'] != 1 else ''}), {p['stored']} in the store, "
                     f"{p['not_run']} not run (need a GPU)" + (f", {p['unknown']} without a measured cost"
                                                              if p["unknown"] else ""))
    lines.append(f"estimated total: {format_hours(wall)} of wall time; budget {budget_hours:g} h")
    text = "\n".join(lines)
    if wall > budget_hours * 3600 and not allow_over:
        raise PlanError(text + f"\nrefused: the estimate exceeds the budget of {budget_hours:g} h; pass "
                        "--over-budget to run it anyway, or --budget-hours H to state a larger budget")
    return text


def preflight(papers: list[str], profile: str, *, device: str | None = None, store=None,
              budget_hours: float | None = None, allow_over: bool = False, only: list[str] | None = None) -> str:
    """Before a regeneration starts: set ``$FEDLIB_DEVICE`` (when ``device`` is given, so the
    notebooks' kernels inherit it), plan every paper whose ``profile`` has a cost model, and
    return the plan's lines, or raise :class:`PlanError` when the estimated wall time exceeds
    ``budget_hours`` (default: the largest ``budget_minutes`` of the profiles, else
    :data:`DEFAULT_BUDGET_HOURS`) and ``allow_over`` is False.  ``""`` when no profile has a
    cost model (``quick`` and ``smoke``: their budgets are written in their docstrings).  With ``only``
    (the regeneration's notebook selection) each plan counts what those notebooks run."""
    from ..run.grid import default_store
    from ..spec.paper import get_paper

    if device is not None:
        os.environ[DEVICE_ENV] = resolve_device(device)
    profiles = [get_paper(p).profile(profile) for p in papers]
    costed = [(p, prof) for p, prof in zip(papers, profiles) if getattr(prof, "cost", None) is not None]
    if not costed:
        return ""
    if budget_hours is None:
        stated = [prof.budget_minutes for _, prof in costed if prof.budget_minutes]
        budget_hours = max(stated) / 60 if stated else DEFAULT_BUDGET_HOURS
    root = store if store is not None else default_store().root
    plans = [plan(p, profile, store=root, views=selected_views(p, only)) for p, _ in costed]
    return check_budget(plans, budget_hours, allow_over)


def selected_views(paper: str, only: list[str] | None):
    """The declared views (:attr:`fedlib.repro.spec.paper.Paper.views`) of the notebooks ``only``
    selects of ``paper`` (None: every notebook), by their file names; never their text."""
    if not only:
        return None
    from ..spec.notebooks import notebooks, select
    from ..spec.paper import get_paper

    stems = {path.stem for path in select(notebooks(paper), only)}
    return get_paper(paper).views_of(stems)
