"""The committed outputs the generated pages read: every profile folder's sidecars and run records.

:func:`collect` finds them in ``figures/<paper>/<profile>/``; :func:`recount_tables` recomputes each
paper table's verdicts from its CSV under the current rules (no run).  Both the index
(:mod:`fedlib.repro.artefacts.index`) and each paper's page (:mod:`fedlib.repro.artefacts.paper_page`)
read only what these return.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..spec.paper import all_papers
from ..spec.profiles import PROFILE_NAMES
from ..verdict.compare import gains
from ..verdict.spread import SPREAD_FILE
from .comparison_text import findings, verdict_text
from .tables import recount

__all__ = ["collect", "recount_tables", "recount_all", "paper_tables", "count", "profile_order", "wall", "load"]


def load(path: Path) -> dict | None:
    """A JSON file's content, or None where it is absent or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def collect(figures_root: Path) -> dict[tuple[str, str], dict]:
    """{(paper, profile): {"metas": [sidecars], "run": _run.json or {}, "spread": _spread.json or {},
    "folder": Path}} for every profile folder that holds outputs."""
    found: dict[tuple[str, str], dict] = {}
    for paper in all_papers():
        base = figures_root / paper
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            metas = [m for m in (load(p) for p in sorted(folder.glob("*.json")) if not p.name.startswith("_"))
                     if m and m.get("kind") in ("figure", "table")]
            if not metas:
                continue
            found[(paper, folder.name)] = {"metas": metas, "run": load(folder / "_run.json") or {},
                                           "spread": load(folder / SPREAD_FILE) or {}, "folder": folder}
    return found


def profile_order(name: str) -> tuple:
    """Sort key: the profiles in :data:`PROFILE_NAMES` order, others (``quick-seed1``) after their base."""
    base = name.split("-")[0]
    return (PROFILE_NAMES.index(base) if base in PROFILE_NAMES else len(PROFILE_NAMES), name)


def paper_tables(metas: list[dict]) -> list[dict]:
    """The sidecars of the paper's own tables, by table."""
    return sorted((m for m in metas if m.get("kind") == "table" and m.get("paper_table")),
                  key=lambda m: m["paper_table"])


def count(tables: list[dict], key: str) -> int:
    """How many cells the tables' summaries count under ``key`` ("within", "outside", …)."""
    return sum(m.get("summary", {}).get("counts", {}).get(key, 0) for m in tables)


def wall(run: dict) -> str:
    """The regeneration's wall time; from an empty store when it was rendered again from a filled one."""
    total = run.get("total_wall_time_s")
    if total is None:
        return "—"
    if "cold" in run:
        return f"{run['cold']['total_wall_time_s'] / 60:.1f} min from an empty store"
    extra = sum(n.get("wall_time_s", 0) for n in run.get("previous", []))
    note = " (partial)" if run.get("only") else ""
    return f"{(total + extra) / 60:.1f} min{note}"


STATUS_SHORT = {"within": "within std", "outside": "outside std", "undecided": "undecided",
                "no_spread": "spread not measured", "no_std": "no std", "std_not_seeds": "± not over seeds",
                "stand_in": "stand-in", "suspect": "suspect", "not_in_paper": "missing in the paper",
                "not_run": "not run"}


def _changes(old: dict, new: dict) -> list[str]:
    """What changed between a saved table summary and the same table recounted: "best method agrees 4/8 →
    0/8 (…)", "outside std 37 → 0", …"""
    out = []
    for label, prefix in (("best method agrees", "winner"), ("headline gain sign agrees", "gain")):
        a, b = verdict_text(old, prefix), verdict_text(new, prefix)
        if a != b:
            out.append(f"{label} {a} → {b}")
    oc, nc = old.get("counts", {}), new.get("counts", {})
    for key in dict.fromkeys([*oc, *nc]):
        if oc.get(key, 0) != nc.get(key, 0):
            out.append(f"{STATUS_SHORT.get(key, key)} {oc.get(key, 0)} → {nc.get(key, 0)}")
    return out


def recount_tables(folder: Path, metas: list[dict], pp) -> list[tuple[dict, list[str]]]:
    """Each paper table's sidecar with its summary recomputed from its CSV under the current verdict rules
    (:func:`fedlib.repro.artefacts.tables.recount`: no run), and what changed from the summary it was saved with.
    The sidecar also carries ``_gains``: the headline gain per column (:func:`fedlib.repro.verdict.compare.gains`),
    which the pages compare across scales column by column."""
    out = []
    for m in paper_tables(metas):
        csv = folder / m.get("files", {}).get("csv", f"{m['name']}.csv")
        if pp is None or m["paper_table"] not in pp.tables or not csv.exists():
            out.append((m, []))
            continue
        table = pp.tables[m["paper_table"]]
        try:
            new, comp = recount(csv, table, pp, comparison=True)
        except (KeyError, ValueError) as err:  # a table saved in another shape: keep its saved summary
            out.append(({**m, "recount_error": f"{type(err).__name__}: {err}"}, []))
            continue
        lines = findings(comp, table, pp)
        if m.get("paper_table") == m["name"]:  # the table's own findings, from the same rules
            lines += [f for f in m.get("findings") or [] if not f.startswith(f"Table {table.number}: ")]
        else:
            lines = m.get("findings") or []
        per_column = (gains(comp, *pp.headline).to_dict("records") if pp.headline else [])
        out.append(({**m, "summary": new, "findings": lines, "_gains": per_column},
                    _changes(m.get("summary", {}), new)))
    return out


def recount_all(found: dict, papers: dict) -> None:
    """Every table of every profile in ``found`` recounted in place (:func:`recount_tables`); each entry gains
    ``changes``: {table name: what changed}."""
    for key, entry in found.items():
        recounted = recount_tables(entry["folder"], entry["metas"], papers.get(key[0]))
        entry["changes"] = {m["name"]: c for m, c in recounted}
        by_name = {m["name"]: m for m, _ in recounted}
        entry["metas"] = [by_name.get(m["name"], m) if m["kind"] == "table" else m for m in entry["metas"]]
