"""``figures/README.md``: one index across papers and profiles.

At the top, one row per paper and profile: the wall time of its regeneration,
the cells run, the verdicts against the paper's reported std, and a link to
the paper's section.  Then the measured cross-machine spread.  Then, per paper
and profile, what each table reproduces (a summary row per table), the
notebooks' findings, and every figure (embedded PNG) and table (paper → ours)
with caption, profile, seeds and deviations.

Everything is read from the sidecars in ``figures/<paper>/<profile>/`` and the
regeneration record ``_run.json`` there, so partial regenerations keep the
rest of the index, and the index names no machine paths.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..verdict.compare import findings, gains, mark_stand_in, verdict_text
from .provenance import repo_root
from ..spec.paper import all_papers
from ..spec.profiles import PROFILE_NAMES
from .scales import scale_section, summary_rows
from .tables import recount

__all__ = ["build_index", "collect"]


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def collect(figures_root: Path) -> dict[tuple[str, str], dict]:
    """{(paper, profile): {"metas": [sidecars], "run": _run.json or {}, "spread": _spread.json or {},
    "folder": Path}} for every profile folder that holds outputs (smoke and -seed folders excluded unless
    they are the only ones)."""
    found: dict[tuple[str, str], dict] = {}
    papers = all_papers()
    for paper in papers:
        base = figures_root / paper
        if not base.is_dir():
            continue
        for folder in sorted(p for p in base.iterdir() if p.is_dir()):
            metas = [m for m in (_load(p) for p in sorted(folder.glob("*.json")) if not p.name.startswith("_"))
                     if m and m.get("kind") in ("figure", "table")]
            if not metas:
                continue
            found[(paper, folder.name)] = {"metas": metas, "run": _load(folder / "_run.json") or {},
                                           "spread": _load(folder / "_spread.json") or {}, "folder": folder}
    return found


def _profile_order(name: str) -> tuple:
    base = name.split("-")[0]
    return (PROFILE_NAMES.index(base) if base in PROFILE_NAMES else len(PROFILE_NAMES), name)


def _anchor(*parts: str) -> str:
    return "-".join(p.lower().replace(" ", "-").replace("/", "-") for p in parts)


def _tables(metas: list[dict]) -> list[dict]:
    return sorted((m for m in metas if m["kind"] == "table" and m.get("paper_table")), key=lambda m: m["paper_table"])


def _count(tables: list[dict], key: str) -> int:
    return sum(m.get("summary", {}).get("counts", {}).get(key, 0) for m in tables)


_STATUS_SHORT = {"within": "within std", "outside": "outside std", "undecided": "undecided",
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
            out.append(f"{_STATUS_SHORT.get(key, key)} {oc.get(key, 0)} → {nc.get(key, 0)}")
    return out


def recount_tables(folder: Path, metas: list[dict], pp) -> list[tuple[dict, list[str]]]:
    """Each paper table's sidecar with its summary recomputed from its CSV under the current verdict rules
    (:func:`fedlib.repro.artefacts.tables.recount`: no run), and what changed from the summary it was saved with.
    The sidecar also carries ``_gains``: the headline gain per column (:func:`fedlib.repro.verdict.compare.gains`),
    which the index compares across scales column by column."""
    out = []
    for m in _tables(metas):
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


def joint_regenerations(found: dict) -> list[str]:
    """One line per regeneration that trained several papers of a profile at one commit on one store
    (``make figures`` for all of them): its papers, commit, store and total time from an empty store."""
    groups: dict[tuple, list] = {}
    for (paper, profile), entry in found.items():
        run = entry["run"]
        cold = run.get("cold", run)
        if run.get("git_commit") and cold.get("store") and not run.get("only") and "total_wall_time_s" in cold:
            groups.setdefault((profile, run["git_commit"], cold["store"]), []).append((paper, cold))
    out = []
    for (profile, commit, store), members in sorted(groups.items()):
        if len(members) < 2:
            continue
        members.sort(key=lambda m: m[1].get("started", ""))
        total = sum(c["total_wall_time_s"] for _, c in members) / 60
        parts = " + ".join(f"{p} {c['total_wall_time_s'] / 60:.1f}" for p, c in members)
        out.append(f"\n**One regeneration, `{profile}`, {len(members)} papers** at {commit[:7]} on one empty store "
                   f"(`{store}`): **{total:.1f} min** of notebook time from an empty store ({parts}), "
                   f"{members[0][1].get('started', '?')} → {members[-1][1].get('finished', '?')}.")
    return out


def _wall(run: dict) -> str:
    """The regeneration's wall time; from an empty store when it was rendered again from a filled one."""
    total = run.get("total_wall_time_s")
    if total is None:
        return "—"
    if "cold" in run:
        return f"{run['cold']['total_wall_time_s'] / 60:.1f} min from an empty store"
    extra = sum(n.get("wall_time_s", 0) for n in run.get("previous", []))
    note = " (partial)" if run.get("only") else ""
    return f"{(total + extra) / 60:.1f} min{note}"


def build_index(figures_root: str | os.PathLike | None = None, *, index_path: str | os.PathLike | None = None) -> Path:
    """Write the index (default ``<repo>/figures/README.md``) from every paper's outputs."""
    root = Path(figures_root) if figures_root is not None else repo_root() / "figures"
    index = Path(index_path) if index_path is not None else root / "README.md"
    papers = all_papers()
    found = collect(root)
    keys = sorted(found, key=lambda k: (k[0], _profile_order(k[1])))
    lines = ["# Regenerated tables and figures", "",
             "Generated by `make figures` (`python -m fedlib.repro.regenerate`), which executes every paper's notebooks "
             "in `notebooks/<paper>/` with papermill under a profile and writes their tables and figures into "
             "`figures/<paper>/<profile>/`, each beside the paper's reported value with the gap.  Each profile has "
             "its own folder; a run of one profile never overwrites another's outputs.", "",
             "## Summary by paper", "",
             "| paper | profile | wall time | cells run | within std | outside std | undecided | spread not measured | "
             "no std reported | ± not over seeds | on a stand-in dataset | section |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for key in keys:  # every table's verdicts (and findings) under the current rules, from its CSV
        recounted = recount_tables(found[key]["folder"], found[key]["metas"], papers.get(key[0]))
        found[key]["changes"] = {m["name"]: c for m, c in recounted}
        by_name = {m["name"]: m for m, _ in recounted}
        found[key]["metas"] = [by_name.get(m["name"], m) if m["kind"] == "table" else m
                               for m in found[key]["metas"]]
    for paper, profile in keys:
        entry = found[(paper, profile)]
        tables = _tables(entry["metas"])
        run = sum(m.get("summary", {}).get("run", 0) for m in tables)
        title = papers[paper].title if paper in papers else paper
        lines.append(f"| {title} | `{profile}` | {_wall(entry['run'])} | {run} | {_count(tables, 'within')} | "
                     f"{_count(tables, 'outside')} | {_count(tables, 'undecided')} | {_count(tables, 'no_spread')} | "
                     f"{_count(tables, 'no_std')} | {_count(tables, 'std_not_seeds')} | "
                     f"{_count(tables, 'stand_in')} | [{paper} / {profile}](#{_anchor(paper, profile)}) |")
    for paper in sorted(set(papers) - {k[0] for k in keys}):
        lines.append(f"| {papers[paper].title} | — | not regenerated here yet: `make figures PAPER={paper}` | "
                     "— | — | — | — | — | — | — | — | — |")
    lines += joint_regenerations(found)
    lines += ["", "*Within std*: |ours − paper| ≤ the paper's reported std.  *Undecided*: that verdict would flip "
              "within our run-to-run spread (the largest measured of: std over seeds, the table's seed-to-seed "
              "spread, its cross-machine spread below).  *Spread not measured*: no run-to-run spread was measured "
              "for the cell, so the verdict is not decided (a spread of 0 is never assumed; measure one with "
              "`python -m fedlib.repro.verdict.seeds <paper> --write`).  *No std*: the paper prints none for the cell, so it is "
              "never within or outside; beside the count, how many of those with a measured spread of ours lie "
              "within that spread of the paper's printed value (|Δ| ≤ our spread + half its last printed digit), "
              "and how many farther: a check at our precision, not a verdict.  *± not over seeds*: the paper's ± is "
              "another spread (e.g. over its last rounds), shown but not judged.  Cells run on a stand-in dataset "
              "are never counted as within or outside: the paper's numbers are on another dataset; only the "
              "qualitative comparisons (best method, sign of the gain, Kendall's τ) apply to them.  *Best method "
              "agrees*: tie-aware (our best agrees when it is one of the paper's tied best); decided only against a "
              "measured spread, with the count at face value beside it.  *Sign agrees*: a zero gain in the paper "
              "has no sign and is counted apart.  *Kendall's τ*: τ-b between our and the paper's ranking of the "
              "methods, per column (median over the columns; each column in the table's findings).", ""]
    seeds = [(k, t, v) for k in keys for t, v in sorted(found[k]["spread"].get("seed_to_seed", {})
                                                         .get("tables", {}).items())]
    if seeds:
        lines += ["## Reproducibility: the spread between seeds", "",
                  "The headline cells of each table (the paper's method and baseline, every column run) trained "
                  "with several seeds; per table:", "",
                  "| paper | profile | table | seeds | cells | median std | max std | max std of the gain | command |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for (paper, profile), table, v in seeds:
            gain = v.get("max_gain_std")
            lines.append(f"| {paper} | `{profile}` | {table} | {', '.join(map(str, v.get('seeds', [])))} | "
                         f"{v.get('cells')} | {v.get('median_std', 0):.2f} | {v.get('max_std', 0):.2f} | "
                         f"{'—' if gain is None else f'{gain:.2f}'} | `{v.get('command', '')}` |")
        lines.append("")
    lines += summary_rows(found, papers)  # quick and paper side by side (fedlib.repro.artefacts.scales)
    spreads = [(k, found[k]["spread"]) for k in keys if found[k]["spread"].get("tables")]
    if spreads:
        lines += ["## Reproducibility: the spread between machines", "",
                  "On one machine a run's numbers depend only on its configuration, seed and code version (every "
                  "run trains with one thread; `tests/test_determinism.py`).  Across machines the float results "
                  "may differ (other CPU kernels round differently).  Measured by regenerating the same cells on two "
                  "machines, per table (*CPUs*: the vendors and models compared; outputs made before sidecars named "
                  "their CPU say \"not recorded\"):", "",
                  "| paper | profile | table | machines compared | CPUs | cells | identical | median \\|Δ\\| | max \\|Δ\\| |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        def num(v, fmt="{:.2f}"):
            return "—" if v is None else fmt.format(v)

        for (paper, profile), sp in spreads:
            for table, v in sorted(sp["tables"].items()):
                lines.append(f"| {paper} | `{profile}` | {table} | {v.get('from', sp.get('machines', '?'))} | "
                             f"{v.get('cpus', 'not recorded')} | {num(v.get('cells'), '{}')} | {num(v.get('identical'), '{}')} | "
                             f"{num(v.get('median_abs_delta'))} | {num(v.get('max_abs_delta'))} |")
        notes = [sp.get("note") for _, sp in spreads if sp.get("note")]
        lines += [""] + [f"* {n}" for n in dict.fromkeys(notes)] + [""]
    for paper in sorted({k[0] for k in keys}):
        title = papers[paper].title if paper in papers else paper
        citation = papers[paper].citation if paper in papers else ""
        lines += [f"## {title}", "", f"*{citation}*", ""]
        lines += scale_section(paper, found, papers.get(paper))
        for profile in sorted((k[1] for k in keys if k[0] == paper), key=_profile_order):
            lines += _section(paper, profile, found[(paper, profile)], papers.get(paper), root, index)
    index.write_text("\n".join(lines).rstrip() + "\n")
    return index


def _no_std(summary: dict) -> str:
    """"36 (20 within our spread, 4 farther)": the cells without a std in the paper, and how many of those
    with a measured spread of ours lie within it of the paper's printed value."""
    n = summary.get("counts", {}).get("no_std", 0)
    near, far = len(summary.get("no_std_close", [])), len(summary.get("no_std_far", []))
    return f"{n} ({near} within our spread, {far} farther)" if near + far else str(n)


def _gpu_lines(folder: Path, rel: str) -> list[str]:
    """The runs a GPU trained for this profile (``python -m fedlib.repro.run.cells --record``, in ``gpu/``):
    kept apart from the notebooks' outputs, which a regeneration rewrites."""
    metas = [m for m in (_load(p) for p in sorted(folder.glob("*.json"))) if m] if folder.is_dir() else []
    if not metas:
        return []
    lines = ["**Runs on a GPU** (`python -m fedlib.repro.run.cells`; a CPU regeneration shows a finished one in its "
             "table from the store):", ""]
    for m in sorted(metas, key=lambda m: (m.get("kind") != "table", m["name"])):
        files = m.get("files", {})
        link = (f"![{m['name']}]({rel}/{files.get('png', m['name'] + '.png')})" if m.get("kind") == "figure"
                else f"[{m.get('title') or m['name']}]({rel}/{files.get('md', m['name'] + '.md')})")
        where = ", ".join(m.get("device_names") or []) or m.get("device", "a GPU")
        trained = f"trained at `{m['trained_at']}`, " if m.get("trained_at") else ""
        lines += [f"* {link}", "", f"  {m.get('caption', '')} ({where}; {trained}recorded at "
                                   f"`{m.get('git_commit', 'unknown')}`)", ""]
    return lines


def _section(paper: str, profile: str, entry: dict, pp, root: Path, index: Path) -> list[str]:
    folder: Path = entry["folder"]
    rel = os.path.relpath(folder, index.parent)
    metas, run = entry["metas"], entry["run"]
    lines = [f'<a id="{_anchor(paper, profile)}"></a>', f"### {paper} / `{profile}`", ""]
    prof = pp.profiles.get(profile.split("-")[0]) if pp is not None else None
    if prof is not None:
        lines += [f"Profile `{profile}`: {prof.description}", ""]
        # every output set beside a paper value on a stand-in dataset says so (caption, findings)
        metas = [{**mark_stand_in(m, prof, pp), "_saved_caption": m.get("caption")} for m in metas]
    commits = sorted({m.get("git_commit", "unknown") for m in metas})
    lines.append(f"* git commit {', '.join('`' + c + '`' for c in commits)}"
                 + (" (outputs from more than one commit)" if len(commits) > 1 else ""))
    if run:
        cold = run.get("cold")
        if cold:  # the timings that matter are those of the run that filled the store
            lines.append(f"* wall time: {_wall(run)} ({cold.get('started', '?')} → {cold.get('finished', '?')}); "
                         f"rendered again from that store at the same commit in "
                         f"{run['total_wall_time_s'] / 60:.1f} min ({run.get('started', '?')} → "
                         f"{run.get('finished', '?')}), training no run")
        else:
            lines.append(f"* wall time: {_wall(run)} ({run.get('started', '?')} → {run.get('finished', '?')})")
        totals = (cold or run).get("runs")
        if totals:  # no configuration trained twice: what was trained, what came from the store
            lines.append(f"* runs: {totals['trained']} trained, {totals['reused']} from the store, "
                         + (f"{totals['not_run']} not run, " if totals.get("not_run") else "")
                         + f"{totals['trained_again']} trained a second time")
        timed = [(nb, "") for nb in (cold or run).get("notebooks", [])] + [
            (nb, " (earlier regeneration" + (f" at {nb['git_commit'][:7]})" if nb.get("git_commit") else ")"))
            for nb in run.get("previous", [])]
        for nb, when in sorted(timed, key=lambda t: t[0]["name"]):
            again = f"; {nb['trained_again']} trained a second time" if nb.get("trained_again") else ""
            reused = nb.get("reused", nb.get("runs", 0) - nb.get("trained", 0))
            runs = (f", {nb['trained']} of {nb['runs']} runs trained, {reused} from the store"
                    + (f", {nb['not_run']} not run" if nb.get("not_run") else "") + again if nb.get("runs") else "")
            lines.append(f"  * `{nb['name']}`: {nb['status']}, {nb['wall_time_s']:.0f} s{runs}{when}")
    lines.append("")
    tables = _tables(metas)
    if tables:
        headline = pp.headline if pp is not None else None
        gain = pp.gain_label(*headline, sep="−") if headline else "headline gain"
        lines += ["| table | trained on | cells run | within std | outside std | undecided | spread not measured | "
                  "no std | ± not over seeds | stand-in | not run | median abs. Δ | best method agrees | "
                  f"Kendall's τ (median) | {gain} sign agrees | mean {gain} (ours / paper) | spread used |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
                  "--- |"]
        for m in tables:
            s = m.get("summary", {})
            c = s.get("counts", {})
            mad = s.get("median_abs_delta")
            og, pg = s.get("ours_gain_mean"), s.get("paper_gain_mean")
            tau = s.get("kendall_tau_median")
            datasets = ", ".join(pp.dataset_label(d) if pp else d for d in m.get("datasets") or []) or "—"
            used = "; ".join(f"{src} ({n})" for src, n in s.get("spread_sources", {}).items()) or "—"
            lines.append(
                f"| [{m['title'].split(':')[0]}](#{_anchor(paper, profile, m['name'])}) | {datasets} | "
                f"{s.get('run', 0)} | {c.get('within', 0)} | {c.get('outside', 0)} | {c.get('undecided', 0)} | "
                f"{c.get('no_spread', 0)} | {_no_std(s)} | {c.get('std_not_seeds', 0)} | "
                f"{c.get('stand_in', 0)} | {c.get('not_run', 0)} | "
                f"{'—' if mad is None else f'{mad:.2f}'} | {verdict_text(s, 'winner')} | "
                f"{'—' if tau is None else f'{tau:+.2f}'} | {verdict_text(s, 'gain')} | "
                f"{'—' if og is None else f'{og:+.2f}'} / {'—' if pg is None else f'{pg:+.2f}'} | {used} |")
        lines.append("")
        changed = [(m, entry.get("changes", {}).get(m["name"])) for m in tables
                   if entry.get("changes", {}).get(m["name"])]
        if changed:
            lines += ["Verdicts recounted from the saved tables under the current rules (tie-aware best method, "
                      "zero gains apart, a measured spread or none; no run), changed from the saved summaries:", ""]
            lines += [f"* {m['title'].split(':')[0]}: " + "; ".join(c) for m, c in changed] + [""]
        unmeasured = [(m["title"].split(":")[0], m["summary"]["spread_sources"]["not measured"],
                       m["summary"].get("run", 0)) for m in tables
                      if m.get("summary", {}).get("spread_sources", {}).get("not measured")]
        if unmeasured:
            which = ", ".join(f"{t} ({n} of {r} cells run)" for t, n, r in unmeasured)
            lines += [f"No run-to-run spread is measured for {which} in this profile: those verdicts "
                      f"say \"spread not measured\" instead of deciding.  To measure the seed-to-seed spread of the "
                      f"headline cells: `python -m fedlib.repro.verdict.seeds {paper} --profile "
                      f"{profile.split('-')[0]} --seeds 0,1,2 --write`.", ""]
        for label, key in (("within the paper's std", "within"), ("outside the paper's std", "outside"),
                           ("undecided", "undecided")):
            cells = [f"{m['title'].split(':')[0]}: {x}" for m in tables for x in m.get("summary", {}).get(key, [])]
            if cells:
                lines += [f"<details><summary><b>Cells {label} ({len(cells)})</b></summary>", "",
                          "; ".join(cells) + ".", "", "</details>", ""]
    found = sorted((m for m in metas if m.get("findings")), key=lambda m: (m.get("notebook") or "", m["name"]))
    if found:
        lines += ["**What the notebooks found:**", ""]
        for m in found:
            lines += [f"* {f} ({m['name']})" for f in m["findings"]]
        lines.append("")
    lines += _gpu_lines(folder / "gpu", f"{rel}/gpu")
    by_nb: dict[str, list[dict]] = {}
    for m in metas:
        by_nb.setdefault(m.get("notebook") or "other", []).append(m)
    for nb in sorted(by_nb):
        lines += [f"#### {nb}", ""]
        executed = folder / "executed" / f"{nb.split('/')[-1]}.ipynb"
        if executed.exists():
            lines += [f"Executed notebook: [`{rel}/executed/{executed.name}`]({rel}/executed/{executed.name})", ""]
        for m in sorted(by_nb[nb], key=lambda m: (m["kind"] != "figure", m["name"])):
            lines += [f'<a id="{_anchor(paper, profile, m["name"])}"></a>',
                      f"##### {m.get('title') or m['name']}", ""]
            if m.get("placeholder"):
                lines += ["*Not run here: a placeholder (its data are absent).*", ""]
            if m["kind"] == "figure":
                files = m.get("files", {})
                lines += [f"![{m['name']}]({rel}/{files.get('png', m['name'] + '.png')})", "",
                          f"[PDF]({rel}/{files.get('pdf', m['name'] + '.pdf')}) · [sidecar]({rel}/{m['name']}.json)", ""]
            else:
                md = folder / m.get("files", {}).get("md", m["name"] + ".md")
                body = md.read_text() if md.exists() else ""
                if m.get("title") and body.startswith(f"**{m['title']}**"):
                    body = body[len(m["title"]) + 4:].lstrip()
                saved = m.get("_saved_caption", m.get("caption"))
                if saved and body.startswith(saved):
                    body = body[len(saved):].lstrip()
                lines += [body.rstrip(), "", f"[CSV]({rel}/{m['name']}.csv) · [sidecar]({rel}/{m['name']}.json)", ""]
            if m.get("caption"):
                lines += [f"*Caption.* {m['caption']}", ""]
            seeds = m.get("seeds") or []
            lines += [f"*Profile* `{m.get('profile')}`"
                      + (f", seeds {', '.join(map(str, seeds))}" if seeds else "")
                      + (f", datasets {', '.join(m.get('datasets') or [])}" if m.get("datasets") else "")
                      + (f", {'rendered from the store in ' if run.get('cold') else ''}{m['wall_time_s']:.0f} s"
                         if isinstance(m.get("wall_time_s"), (int, float)) else "")
                      + ". *Deviations from the paper:*" + ("" if m.get("deviations") else " none.")]
            lines += [f"  * {d}" for d in m.get("deviations", [])]
            lines.append("")
    return lines
