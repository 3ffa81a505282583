"""What a regeneration's run record (``figures/<paper>/<profile>/_run.json``) keeps of the earlier record it
replaces: the timings of the notebooks it did not run again (:func:`earlier_timings`), which of them were
rendered from the run records (:func:`still_rendered`), and what filling the store cost (:func:`cold_timing`)."""

from __future__ import annotations

__all__ = ["earlier_timings", "still_rendered", "cold_timing"]


def earlier_timings(record: dict, old: dict) -> list[dict]:
    """The notebooks of an earlier run record ``old`` (its own and those it carried
    over, newest first) that ``record`` did not rerun, so that any chain of partial
    regenerations keeps one timing per notebook, each with the commit it ran at."""
    rerun = {n["name"] for n in record["notebooks"]}
    kept: dict[str, dict] = {}
    for n in old.get("notebooks", []):
        if n["name"] not in rerun:
            kept.setdefault(n["name"], {**n, **({"git_commit": old["git_commit"]} if old.get("git_commit") else {})})
    for n in old.get("previous", []):
        if n["name"] not in rerun:
            kept.setdefault(n["name"], n)
    return sorted(kept.values(), key=lambda n: n["name"])


def still_rendered(record: dict, old: dict) -> dict | None:
    """``old``'s ``rendered`` block (the notebooks last rendered from the run records, at its commit) less the
    notebooks ``record`` ran again, or None where none is left: a partial regeneration of one notebook leaves
    the others' outputs as they were rendered, and the record still says so."""
    rendered = old.get("rendered")
    if not isinstance(rendered, dict):
        return None
    rerun = {n["name"] for n in record["notebooks"]}
    left = [n for n in rendered.get("notebooks", []) if n.get("name") not in rerun]
    return {**rendered, "notebooks": left} if left else None


def cold_timing(record: dict, old: dict) -> dict | None:
    """When ``record`` trained no run (every result came from the store) and the earlier
    record ``old`` is of the same commit and notebooks, the timing of the regeneration that
    trained them (``old``'s, or the one ``old`` carried): what regenerating costs from an
    empty store.  Otherwise None."""
    if record.get("only") or any(n.get("trained", 0) for n in record["notebooks"]):
        return None
    if old.get("git_commit") != record.get("git_commit") or old.get("only"):
        return None
    if "cold" in old:
        return old["cold"]
    if not any(n.get("trained", 0) for n in old.get("notebooks", [])):
        return None
    return {k: old[k] for k in ("started", "finished", "total_wall_time_s", "store", "notebooks", "runs") if k in old}

