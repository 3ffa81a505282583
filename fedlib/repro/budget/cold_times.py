"""What a regeneration costs, told before it starts.

For each paper and profile the estimate is, in order of preference:

1. **measured**: the wall time of the last regeneration that trained its runs from an
   empty store, per notebook, read from ``figures/<paper>/<profile>/_run.json`` (its
   ``cold`` record when the outputs were rendered again from a filled store), summed over
   the notebooks about to run;
2. **last measured**: where no cold record holds every notebook, the wall time of each notebook's
   last regeneration in the same record (its ``previous`` and ``notebooks`` entries), saying how many
   of its runs it trained and how many it read from the store (a cold one takes longer);
3. **budget**: the profile's ``budget_minutes`` (the wall-time target its unit costs were
   chosen for, e.g. ``QUICK_ESTIMATE`` in ``fedlib/papers/fedic/profiles.py``);
4. unknown.

Runs already in the results store take seconds, so a warm regeneration is far cheaper.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

__all__ = ["cold_record", "estimate", "estimate_minutes", "estimate_text", "read_record"]


def cold_record(run: dict) -> dict | None:
    """The part of a ``_run.json`` record that measured training from an empty store, or None."""
    if isinstance(run.get("cold"), dict):
        return run["cold"]
    if any(n.get("trained", 0) for n in run.get("notebooks", [])):
        return run
    return None


def read_record(path: Path) -> dict | None:
    """A ``_run.json`` record, or None when it is absent or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def estimate_minutes(paper: str, profile, notebooks: Iterable[str], roots: Iterable[Path]) -> tuple[float | None, str]:
    """``(minutes, how)`` for regenerating ``notebooks`` (stems) of ``paper`` under ``profile``
    (a :class:`~fedlib.repro.spec.profiles.Profile`) from an empty store; the first of ``roots``
    (figures folders) with a measured cold regeneration of every one of them wins."""
    names = list(notebooks)
    for root in roots:
        run = read_record(Path(root) / paper / profile.name / "_run.json")
        cold = cold_record(run) if run else None
        if cold is None:
            continue
        timed = {n["name"]: n for n in cold.get("previous", []) + cold.get("notebooks", []) if "wall_time_s" in n}
        if all(n in timed for n in names):
            return sum(float(timed[n]["wall_time_s"]) for n in names) / 60, _measured_at(timed, names, run, cold)
    for root in roots:  # no cold record of them: the last time each ran, with how much it trained
        run = read_record(Path(root) / paper / profile.name / "_run.json")
        if not run:
            continue
        last = {n["name"]: n for n in run.get("previous", []) + run.get("notebooks", []) if "wall_time_s" in n}
        if names and all(n in last for n in names):
            trained = sum(int(last[n].get("trained", 0)) for n in names)
            reused = sum(int(last[n].get("reused", 0)) for n in names)
            return (sum(float(last[n]["wall_time_s"]) for n in names) / 60,
                    f"measured: its last regeneration ({trained} runs trained, {reused} read from the store; "
                    "from an empty store it takes longer)")
    if profile.budget_minutes is not None:
        return float(profile.budget_minutes), "the profile's budget for a full regeneration; not measured"
    return None, "no measurement, no budget"


def _measured_at(timed: dict, names: list, run: dict, cold: dict) -> str:
    """Where the timings summed were measured: each notebook's own commit (a timing carried from an earlier
    regeneration, ``previous``, keeps its commit), counted per commit; the date of the newest."""
    newest = str(run.get("git_commit", ""))[:7] or "?"
    commits = [str(timed[n].get("git_commit") or "")[:7] or newest for n in names]
    when = str(cold.get("started", ""))[:10]
    dated = {newest: f" {when}" if when else ""}  # the record's date is its own commit's, not an earlier timing's
    if len(set(commits)) <= 1:
        only = commits[0] if commits else newest
        return f"measured: cold regeneration at {only}{dated.get(only, '')}"
    counts = {c: commits.count(c) for c in dict.fromkeys(commits)}
    said = [f"{c}{dated.get(c, '')} ({k} notebook{'s' if k != 1 else ''})" for c, k in counts.items()]
    return "measured: cold regenerations at " + ", ".join(said)


def estimate(plan: list[tuple[str, object, list[Path]]], roots: Iterable[Path]) -> tuple[str, float | None]:
    """``(text, minutes)``: the lines printed before a regeneration (one per paper and the total; "" when
    every profile has a cost model: :mod:`fedlib.repro.budget.plan` estimated those) and the total in minutes
    (None when some paper's is unknown, or nothing is estimated here).  ``plan`` is ``[(paper, profile,
    notebook paths)]``."""
    roots = list(dict.fromkeys(Path(r) for r in roots))
    # a profile with a cost model (the paper profiles) is estimated run by run by fedlib.repro.budget.plan,
    # printed before this; the measured cold times here are for the others
    plan = [(paper, prof, paths) for paper, prof, paths in plan if getattr(prof, "cost", None) is None]
    if not plan:
        return "", None
    lines, total, unknown = [], 0.0, False
    for paper, prof, paths in plan:
        minutes, how = estimate_minutes(paper, prof, [p.stem for p in paths], roots)
        if minutes is None:
            unknown = True
            lines.append(f"  {paper} ({prof.name}, {len(paths)} notebook(s)): unknown ({how})")
        else:
            total += minutes
            lines.append(f"  {paper} ({prof.name}, {len(paths)} notebook(s)): ≈ {minutes:.0f} min ({how})")
    head = f"estimated time from an empty results store: ≈ {total:.0f} min" + \
        (f" ({total / 60:.1f} h)" if total >= 90 else "") + (" + the unknown ones" if unknown else "") + \
        "; runs already in the store take seconds"
    return "\n".join([head] + lines), (None if unknown else total)


def estimate_text(plan: list[tuple[str, object, list[Path]]], roots: Iterable[Path]) -> str:
    """The text of :func:`estimate`."""
    return estimate(plan, roots)[0]
