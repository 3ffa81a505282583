"""``figures/README.md``: one index across papers and profiles, read in a few minutes.

One row per paper and profile (the wall time of its regeneration, the cells run, the verdicts
against the paper's reported std, a link to the paper's page), each paper at the quick scale and at
its own, each paper's claims (``figures/<paper>/claims.md``, where they have been generated) and a
link to each paper's page, ``figures/<paper>/README.md``
(:func:`fedlib.repro.artefacts.paper_page.write_paper_page`), which holds the per-table detail.

Everything is read from the sidecars in ``figures/<paper>/<profile>/`` and the regeneration
records ``_run.json`` there (:mod:`fedlib.repro.artefacts.outputs`), so partial regenerations keep the
rest of the index; no page names a machine path (not the store a regeneration used).
"""

from __future__ import annotations

import csv
import os
from collections import Counter
from pathlib import Path

from ..spec.paper import all_papers
from .outputs import collect, count, paper_tables, profile_order, recount_all, wall
from .page_text import anchor, fold
from .paper_page import write_paper_page
from .provenance import repo_root
from .scales import summary_rows

__all__ = ["build_index", "collect", "joint_regenerations"]

_LEGEND = [
    "*Within std*: |ours − paper| ≤ the paper's reported std.",
    "*Undecided*: that verdict would flip within our run-to-run spread (the largest measured of: std over seeds, "
    "the table's seed-to-seed spread, its cross-machine spread).",
    "*Spread not measured*: no run-to-run spread was measured for the cell, so the verdict is not decided (a spread "
    "of 0 is never assumed; measure one with `python -m fedlib.repro.measure_spread <paper> --write`).",
    "*No std*: the paper prints none for the cell, so it is never within or outside; a paper's page says how many "
    "of those lie within our measured spread of the paper's printed value: a check at our precision, not a verdict.",
    "*± not over seeds*: the paper's ± is another spread (e.g. over its last rounds), shown but not judged.",
    "*On a stand-in dataset*: never counted as within or outside, since the paper's numbers are on another "
    "dataset; only the qualitative comparisons (best method, sign of the gain, Kendall's τ) apply to them.",
    "*Best method agrees* (on a paper's page): tie-aware (our best agrees when it is one of the paper's tied best); "
    "decided only against a measured spread, with the count at face value beside it.",
    "*Sign agrees*: a zero gain in the paper has no sign and is counted apart.  *Kendall's τ*: τ-b between our and "
    "the paper's ranking of the methods, per column (median over the columns).",
]


def joint_regenerations(found: dict) -> list[str]:
    """One line per regeneration that trained several papers of a profile at one commit on one store
    (``make figures`` for all of them): its papers, commit and total time from an empty store.  The store
    is a path on the machine that ran it: it groups the papers but is not printed."""
    groups: dict[tuple, list] = {}
    for (paper, profile), entry in found.items():
        run = entry["run"]
        cold = run.get("cold", run)
        if run.get("git_commit") and cold.get("store") and not run.get("only") and "total_wall_time_s" in cold:
            groups.setdefault((profile, run["git_commit"], cold["store"]), []).append((paper, cold))
    out = []
    for (profile, commit, _store), members in sorted(groups.items()):
        if len(members) < 2:
            continue
        members.sort(key=lambda m: m[1].get("started", ""))
        total = sum(c["total_wall_time_s"] for _, c in members) / 60
        parts = " + ".join(f"{p} {c['total_wall_time_s'] / 60:.1f}" for p, c in members)
        out.append(f"\n**One regeneration, `{profile}`, {len(members)} papers** at {commit[:7]} on one fresh store: "
                   f"**{total:.1f} min** of notebook time from an empty store ({parts}), "
                   f"{members[0][1].get('started', '?')} → {members[-1][1].get('finished', '?')}.")
    return out


def _claims(paper: str, title: str, root: Path, rel) -> str:
    """"* FedLC: [claims](fedlc/claims.md) ([CSV](fedlc/claims.csv)): 6 rows, 2 reproduced, …", or "claims: not
    generated yet" (``rel``: a path as a link from the index)."""
    md, table = root / paper / "claims.md", root / paper / "claims.csv"
    page = f"[{title}]({rel(root / paper / 'README.md')})" if (root / paper / "README.md").exists() else title
    if not md.exists():
        return f"* {page}: claims: not generated yet"
    line = f"* {page}: [claims]({rel(md)})"
    if table.exists():
        with table.open(newline="") as f:
            rows = list(csv.DictReader(f))
        verdicts = Counter(r.get("verdict") for r in rows if r.get("verdict"))
        line += f" ([CSV]({rel(table)})): {len(rows)} rows" + "".join(
            f", {n} {v}" for v, n in sorted(verdicts.items(), key=lambda kv: -kv[1]))
    return line


def build_index(figures_root: str | os.PathLike | None = None, *, index_path: str | os.PathLike | None = None,
                only: list[str] | None = None) -> Path:
    """Write the index (default ``<repo>/figures/README.md``) and every paper's page
    (``figures/<paper>/README.md``; with ``only``, those papers' pages alone: a regeneration of some papers never
    rewrites another's) from every paper's outputs; returns the index's path."""
    root = Path(figures_root) if figures_root is not None else repo_root() / "figures"
    index = Path(index_path) if index_path is not None else root / "README.md"
    papers = all_papers()
    found = collect(root)
    recount_all(found, papers)  # every table's verdicts (and findings) under the current rules, from its CSV
    keys = sorted(found, key=lambda k: (k[0], profile_order(k[1])))
    regenerated = sorted({k[0] for k in keys})
    pages = {paper: write_paper_page(paper, found, papers.get(paper), root) if only is None or paper in only
             else root / paper / "README.md" for paper in regenerated}

    def rel(path: Path) -> str:
        return os.path.relpath(path, index.parent).replace(os.sep, "/")

    link = {p: rel(page) for p, page in pages.items()}
    lines = ["# Regenerated tables and figures", "",
             "Generated by `make figures` (`python -m fedlib.repro.regenerate`), which executes every paper's notebooks "
             "in `notebooks/<paper>/` with papermill under a profile and writes their tables and figures into "
             "`figures/<paper>/<profile>/`, each beside the paper's reported value with the gap.  Each profile has "
             "its own folder; a run of one profile never overwrites another's outputs.  This page summarises; each "
             "paper's page holds its tables, figures, findings and deviations.", "",
             "## Each paper's page", ""]
    title = {p: papers[p].title if p in papers else p for p in {*papers, *regenerated}}
    for paper in regenerated:
        profiles = [k[1] for k in keys if k[0] == paper]
        tables = sum(len(paper_tables(found[(paper, p)]["metas"])) for p in profiles)
        items = sum(len(found[(paper, p)]["metas"]) for p in profiles)
        gpu = [f"[{p}/{f.parent.name}/{f.name}]({rel(f)})" for p in profiles
               for f in sorted((root / paper / p).glob("gpu*/*.md"))]
        lines.append(f"* [{title[paper]}]({link[paper]}): profiles {', '.join(f'`{p}`' for p in profiles)}; "
                     f"{items} tables and figures, {tables} of them the paper's own tables"
                     + (f"; runs on a GPU: {', '.join(gpu)}" if gpu else ""))
    lines += [f"* {title[p]}: not regenerated here yet: `make figures PAPER={p}`"
              for p in sorted(set(papers) - set(regenerated))]
    lines += ["", "## Claims", "",
              "Each paper's claims, one verdict each at every scale that ran (`figures/<paper>/claims.md`):", ""]
    lines += [_claims(p, title[p], root, rel) for p in sorted({*papers, *regenerated})]
    lines += ["", "## Summary by paper", "",
              "| paper | profile | wall time | cells run | within std | outside std | undecided | spread not measured | "
              "no std reported | ± not over seeds | on a stand-in dataset | section |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for paper, profile in keys:
        entry = found[(paper, profile)]
        tables = paper_tables(entry["metas"])
        run = sum(m.get("summary", {}).get("run", 0) for m in tables)
        lines.append(f"| {title[paper]} | `{profile}` | {wall(entry['run'])} | {run} | {count(tables, 'within')} | "
                     f"{count(tables, 'outside')} | {count(tables, 'undecided')} | {count(tables, 'no_spread')} | "
                     f"{count(tables, 'no_std')} | {count(tables, 'std_not_seeds')} | {count(tables, 'stand_in')} | "
                     f"[{paper} / {profile}]({link[paper]}#{anchor(paper, profile)}) |")
    for paper in sorted(set(papers) - set(regenerated)):
        lines.append(f"| {title[paper]} | — | not regenerated here yet: `make figures PAPER={paper}` | "
                     "— | — | — | — | — | — | — | — | — |")
    lines += joint_regenerations(found)
    lines += [""] + [f"* {text}" for text in _LEGEND] + [""]
    lines += summary_rows(found, papers)  # quick and paper side by side (fedlib.repro.artefacts.scales)
    index.write_text("\n".join(fold(lines)).rstrip() + "\n")
    return index
