"""The index's view across scales: each paper at the quick profile's budget and at its own.

:func:`summary_rows` gives ``figures/README.md`` one row per paper and profile (``quick`` and
``paper``, whether regenerated or not: a paper profile that has not run shows what its plan would
train on this CPU and what needs a GPU, from :func:`fedlib.repro.budget.plan.plan`).
:func:`scale_section` gives each paper's section the cells its paper profile has settled (within
the paper's std, outside it, undecided), each table's headline gain at both scales where both
exist, and the budget ladders' findings; it names cells by count, with a link to the CSV that
names them.  Both read only the sidecars that :func:`fedlib.repro.artefacts.outputs.collect` found.
"""

from __future__ import annotations

from .comparison_text import no_std_sentence
from .outputs import count as _count
from .outputs import paper_tables as _tables

__all__ = ["summary_rows", "scale_section", "column_by_column", "cell_counts", "SCALES"]

#: The profiles compared, from the cheapest that means something to the paper's own.
SCALES = ("quick", "paper")


def _cells(tables: list[dict], key: str) -> list[str]:
    """"Table 1: FedAvg @ MNIST Dir(0.1)", … : the cells each table's summary lists under ``key``."""
    return [f"{m['title'].split(':')[0]}: {x}" for m in tables for x in m.get("summary", {}).get(key, [])]


def cell_counts(tables: list[dict], key: str, rel: str) -> str:
    """"Table 1 27 ([table1.csv](paper/table1.csv)); Table 2 31 (…)": per table, how many cells its summary
    lists under ``key``, with a link to its CSV (``rel``: the profile's folder from the page), which names them."""
    parts = []
    for m in tables:
        n = len(m.get("summary", {}).get(key, []))
        if n:
            csv = m.get("files", {}).get("csv", f"{m['name']}.csv")
            parts.append(f"{m['title'].split(':')[0]} {n} ([{csv}]({rel}/{csv}))")
    return "; ".join(parts)


def _ladder(metas: list[dict]) -> str:
    lines = [f for m in metas if m.get("name") == "budget_ladder" for f in m.get("findings", [])]
    return lines[0].split(": ", 1)[1] if lines else "—"


def _gain_text(tables: list[dict]) -> str:
    parts = []
    for m in tables:
        s = m.get("summary", {})
        og, pg = s.get("ours_gain_mean"), s.get("paper_gain_mean")
        if og is not None and pg is not None:
            parts.append(f"{m['title'].split(':')[0]} {og:+.2f} / {pg:+.2f}")
    return "; ".join(parts) or "—"


def _plan_text(paper: str) -> str:
    from ..budget.plan import plan

    try:
        p = plan(paper, "paper", device="cpu")
    except Exception as err:  # noqa: BLE001 -- the index is written whatever a plan does
        return f"not regenerated (no plan: {type(err).__name__})"
    if p["cpu_s"] is None:
        return "not regenerated (no cost model)"
    return (f"not regenerated: on this 2-core CPU {p['runs']} runs fit (est. {p['cpu_s'] / 3600:.1f} CPU-h), "
            f"{p['not_run']} need a GPU; `python -m fedlib.repro.regenerate --profile paper --paper {paper}`")


def _status(run: dict) -> str:
    """"regenerated"; "regenerated: notebooks 03, 04 only" (one partial regeneration); or, where
    partial regenerations at several commits left their outputs side by side, "regenerated in parts:
    notebooks 05 at f57e741, 09 at ab501f5" (``_run.json``'s notebooks and those it carried)."""
    only = run.get("only")
    if not only:
        return "regenerated"
    before = [n for n in run.get("previous", []) if n.get("name")]
    if not before:
        return f"regenerated: notebooks {', '.join(only)} only"
    by_commit: dict[str, list[str]] = {}
    for name, commit in ([(n["name"], run.get("git_commit")) for n in run.get("notebooks", [])]
                         + [(n["name"], n.get("git_commit")) for n in before]):
        by_commit.setdefault(commit[:7] if commit else "an unrecorded commit", []).append(name[:2])
    parts = sorted((sorted(nbs), commit) for commit, nbs in by_commit.items())
    return "regenerated in parts: notebooks " + ", ".join(f"{', '.join(nbs)} at {c}" for nbs, c in parts)


def summary_rows(found: dict, papers: dict, *, plans: bool = True) -> list[str]:
    """A Markdown table: one row per paper and profile of :data:`SCALES`: cells run, within / outside /
    undecided against the paper's std, the headline gain per table (ours / paper), the budget
    ladder's finding.  ``plans=False`` leaves out the plan of a paper profile not regenerated."""
    lines = ["## Each paper at two scales: quick and paper", "",
             "One row per paper and profile.  *Headline gain*: the paper's method minus its baseline, averaged "
             "over each table's columns, ours / the paper's.  *Budget ladder*: does the headline gap move toward the "
             "paper's value as rounds, local epochs and training data grow together (`NN_budget_ladder`)?", "",
             "| paper | profile | status | cells run | within std | outside std | undecided | "
             "headline gain (ours / paper) | budget ladder |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for paper in sorted(papers):
        title = papers[paper].title
        for profile in SCALES:
            entry = found.get((paper, profile))
            if entry is None:
                status = _plan_text(paper) if profile == "paper" and plans else "not regenerated"
                lines.append(f"| {title} | `{profile}` | {status} | — | — | — | — | — | — |")
                continue
            tables = _tables(entry["metas"])
            run = sum(m.get("summary", {}).get("run", 0) for m in tables)
            status = _status(entry.get("run") or {})
            lines.append(f"| {title} | `{profile}` | {status} | {run} | {_count(tables, 'within')} | "
                         f"{_count(tables, 'outside')} | {_count(tables, 'undecided')} | {_gain_text(tables)} | "
                         f"{_ladder(entry['metas'])} |")
    return lines + [""]


def _column_key(g: dict) -> tuple[str, str]:
    group = g.get("row_group")
    return ("" if not isinstance(group, str) else group, str(g.get("column_label")))


def _measured(value) -> bool:
    return value is not None and value == value  # not None, not NaN


def column_by_column(both: dict[str, dict[str, dict]], pp=None) -> list[str]:
    """The headline gain per column run at both scales, ours at each beside the paper's.

    The means above average each profile over the columns it ran, which need not be the same
    columns (quick may run a stand-in where the paper profile leaves a column to a GPU); this
    table compares like with like.  ``both``: ``{table: {profile: sidecar}}`` with each sidecar's
    ``_gains`` (per column, from :func:`fedlib.repro.artefacts.outputs.recount_tables`)."""
    rows, only = [], []
    for table, per in sorted(both.items()):
        by_scale = {p: {_column_key(g): g for g in per[p].get("_gains") or [] if _measured(g.get("ours_gain"))}
                    for p in SCALES}
        label = per[SCALES[0]]["title"].split(":")[0]
        common = [k for k in by_scale[SCALES[0]] if k in by_scale[SCALES[-1]]]
        for key in common:
            q, full = by_scale[SCALES[0]][key], by_scale[SCALES[-1]][key]
            on = f" ({q['trained_on']}, a stand-in)" if q.get("stand_in") else ""
            column = f"{key[0]} {key[1]}".strip()
            rows.append(f"| {label} | {column} | {q['ours_gain']:+.2f}{on} | {full['ours_gain']:+.2f} | "
                        f"{full['paper_gain']:+.2f} |")
        if common:
            mean = {p: sum(by_scale[p][k]["ours_gain"] for k in common) / len(common) for p in SCALES}
            paper_mean = sum(by_scale[SCALES[-1]][k]["paper_gain"] for k in common) / len(common)
            rows.append(f"| {label} | **mean of these {len(common)}** | {mean[SCALES[0]]:+.2f} | "
                        f"{mean[SCALES[-1]]:+.2f} | {paper_mean:+.2f} |")
        for p, other in zip(SCALES, reversed(SCALES)):
            alone = [f"{k[0]} {k[1]}".strip() for k in by_scale[p] if k not in by_scale[other]]
            if alone:
                only.append(f"{label}: {len(alone)} column(s) run only at `{p}` ({', '.join(alone)})")
    if not rows:
        return []
    gain = pp.gain_label(*pp.headline) if pp is not None and pp.headline else "the headline gain"
    return (["Column by column, over the columns run at both scales (" + gain + ", pp):", "",
             "| table | column | ours at quick | ours at the paper's scale | the paper's |",
             "| --- | --- | --- | --- | --- |"] + rows + [""]
            + ([f"* {o}" for o in only] + [""] if only else []))


def scale_section(paper: str, found: dict, pp=None) -> list[str]:
    """Lines for a paper's page: what the paper profile settled, the headline at both scales."""
    entries = {p: found[(paper, p)] for p in SCALES if (paper, p) in found}
    if not entries:
        return []
    lines = ["## At the paper's scale and at quick's", ""]
    paper_entry = entries.get("paper")
    tables = _tables(paper_entry["metas"]) if paper_entry is not None else []
    if paper_entry is None:
        lines += ["The `paper` profile has not been regenerated here: no cell is settled at the paper's scale.", ""]
    elif not tables:  # e.g. only its budget ladder ran
        lines += ["The `paper` profile has regenerated none of the paper's tables here: no cell is settled at the "
                  "paper's scale (its findings are below).", ""]
    else:
        lines.append(f"The `paper` profile has settled {_count(tables, 'within')} cells within the paper's std, "
                     f"{_count(tables, 'outside')} outside it and left {_count(tables, 'undecided')} undecided "
                     f"(of {sum(m.get('summary', {}).get('run', 0) for m in tables)} run; "
                     f"{_count(tables, 'not_run')} not run).")
        near, far = _cells(tables, "no_std_close"), _cells(tables, "no_std_far")
        if near or far:
            text = no_std_sentence(_count(tables, "no_std"), len(near), len(far))
            lines.append(f"{text[0].upper()}{text[1:]}.")
        for label, key in (("within std", "within"), ("outside std", "outside"), ("undecided", "undecided"),
                           ("no std in the paper, within our spread", "no_std_close"),
                           ("no std in the paper, farther than our spread", "no_std_far")):
            cells = _cells(tables, key)
            if cells:
                lines.append(f"* {label} ({len(cells)}): {cell_counts(tables, key, paper_entry['folder'].name)}")
        lines.append("")
    by_table: dict[str, dict[str, dict]] = {}
    for profile, entry in entries.items():
        for m in _tables(entry["metas"]):
            by_table.setdefault(m["paper_table"], {})[profile] = m
    both = {t: v for t, v in by_table.items() if len(v) == len(SCALES)}
    if both:
        lines += ["| table | headline gain at quick (ours / paper) | at the paper's scale (ours / paper) |",
                  "| --- | --- | --- |"]
        for table, per in sorted(both.items()):
            cells = []
            for profile in SCALES:
                s = per[profile].get("summary", {})
                og, pg = s.get("ours_gain_mean"), s.get("paper_gain_mean")
                cells.append("—" if og is None or pg is None else f"{og:+.2f} / {pg:+.2f}")
            lines.append(f"| {per[SCALES[0]]['title'].split(':')[0]} | {cells[0]} | {cells[1]} |")
        lines.append("")
        lines += column_by_column(both, pp)
    ladders = [(p, f) for p, e in entries.items() for m in e["metas"] if m.get("name") == "budget_ladder"
               for f in m.get("findings", [])]
    lines += [f"* `{p}`: {f}" for p, f in ladders]
    return lines + ([""] if ladders else [])
