"""``figures/<paper>/README.md``: one paper's tables, figures and findings at every profile that ran.

At the top: what the paper profile settled and the headline gain at both scales
(:func:`fedlib.repro.artefacts.scales.scale_section`), the measured spreads, and the deviations from
the paper, each stated once and numbered.  Then, per profile, what each table reproduces (one row per
table), the notebooks' findings, the runs a GPU trained, and every figure (embedded PNG) and table
(paper → ours) with its caption, seeds and the numbers of the deviations that apply to it.

Everything is read from the sidecars that :func:`fedlib.repro.artefacts.outputs.collect` found; links
are relative to the page, and no machine path is printed.
"""

from __future__ import annotations

from pathlib import Path

from ..verdict.compare import ONE_SEED
from .comparison_text import mark_stand_in, stand_in_caption, verdict_text
from .outputs import load, paper_tables, profile_order, wall
from .page_text import anchor, fold, narrow_tables, number_ranges
from .scales import cell_counts, scale_section

__all__ = ["write_paper_page", "gpu_lines"]


def _prepare(metas: list[dict], prof, pp) -> list[dict]:
    """Each sidecar with its stand-ins marked (:func:`fedlib.repro.artefacts.comparison_text.mark_stand_in`) and
    ``_deviations``: the stand-in statement (moved out of the caption) and the sidecar's own deviations."""
    label = pp.dataset_label if pp is not None else str
    out = []
    for m in metas:
        marked = mark_stand_in(m, prof, pp) if prof is not None else m
        caption, stand_in = marked.get("caption") or "", []
        if marked.get("stand_in"):
            statement = stand_in_caption(marked["stand_in"], label)
            if caption.startswith(f"⇄ {statement}"):
                stand_in, caption = [statement], caption[len(statement) + 2:].lstrip()
        out.append({**marked, "caption": caption, "_saved_caption": m.get("caption"), "_stand_in": stand_in,
                    "_deviations": stand_in + list(m.get("deviations") or [])})
    return out


def _deviation_list(register: dict[str, list[str]]) -> list[str]:
    lines = ['<a id="deviations"></a>', "## Deviations from the paper", "",
             "Every deviation of a table or figure on this page, stated once; each table and figure below names "
             "the numbers that apply to it.", ""]
    if not register:
        return lines + ["None recorded.", ""]
    for i, (text, profiles) in enumerate(register.items(), 1):
        lines.append(f"{i}. {text} ({', '.join(f'`{p}`' for p in profiles)})")
    return lines + [""]


def _no_std(summary: dict) -> str:
    """"36 (20 within our spread, 4 farther)": the cells without a std in the paper, and how many of those
    with a measured spread of ours lie within it of the paper's printed value."""
    n = summary.get("counts", {}).get("no_std", 0)
    near, far = len(summary.get("no_std_close", [])), len(summary.get("no_std_far", []))
    return f"{n} ({near} within our spread, {far} farther)" if near + far else str(n)


def gpu_lines(folder: Path, rel: str) -> list[str]:
    """The runs a GPU trained for this profile (``python -m fedlib.repro.gpu_cells --record``, in ``gpu/``):
    kept apart from the notebooks' outputs, which a regeneration rewrites."""
    metas = ([m for m in (load(p) for p in sorted(folder.glob("*.json"))) if m and "name" in m]  # (not lease.json)
             if folder.is_dir() else [])
    if not metas:
        return []
    precision = folder.name.removeprefix("gpu").lstrip("-") or "float32"
    lines = [f"**Runs on a GPU, in {precision}** (`python -m fedlib.repro.gpu_cells`; a CPU regeneration shows a "
             "finished one in its table from the store, in the profile's `gpu_precision`):", ""]
    for m in sorted(metas, key=lambda m: (m.get("kind") != "table", m["name"])):
        files = m.get("files", {})
        link = (f"![{m['name']}]({rel}/{files.get('png', m['name'] + '.png')})" if m.get("kind") == "figure"
                else f"[{m.get('title') or m['name']}]({rel}/{files.get('md', m['name'] + '.md')})")
        where = ", ".join(m.get("device_names") or []) or m.get("device", "a GPU")
        trained = f"trained at `{m['trained_at']}`, " if m.get("trained_at") else ""
        lines += [f"* {link}", "", f"  {m.get('caption', '')} ({where}; {trained}recorded at "
                                   f"`{m.get('git_commit', 'unknown')}`)", ""]
    return lines


def _spreads(paper: str, entries: dict[str, dict]) -> list[str]:
    """The seed-to-seed and cross-machine spreads measured for this paper's tables, per profile."""
    lines = []
    seeds = [(p, t, v) for p, e in entries.items()
             for t, v in sorted(e["spread"].get("seed_to_seed", {}).get("tables", {}).items())]
    if seeds:
        lines += ["## Reproducibility: the spread between seeds", "",
                  "The headline cells of each table (the paper's method and baseline, every column run) trained "
                  "with several seeds; per table:", "",
                  "| profile | table | seeds | cells | median std | max std | max std of the gain | command |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for profile, table, v in seeds:
            gain = v.get("max_gain_std")
            lines.append(f"| `{profile}` | {table} | {', '.join(map(str, v.get('seeds', [])))} | {v.get('cells')} | "
                         f"{v.get('median_std', 0):.2f} | {v.get('max_std', 0):.2f} | "
                         f"{'—' if gain is None else f'{gain:.2f}'} | `{v.get('command', '')}` |")
        lines.append("")
    spreads = [(p, e["spread"]) for p, e in entries.items() if e["spread"].get("tables")]
    if not spreads:
        return lines

    def num(v, fmt="{:.2f}"):
        return "—" if v is None else fmt.format(v)

    lines += ["## Reproducibility: the spread between machines", "",
              "On one machine a run's numbers depend only on its configuration, seed and code version (every run "
              "trains with one thread; `tests/test_determinism.py`).  Across machines the float results may differ "
              "(other CPU kernels round differently).  Measured by regenerating the same cells on two machines, per "
              "table (*CPUs*: the vendors and models compared, or \"not recorded\" for outputs made before sidecars "
              "named their CPU):", "",
              "| profile | table | machines compared | CPUs | cells | identical | median \\|Δ\\| | max \\|Δ\\| |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for profile, sp in spreads:
        for table, v in sorted(sp["tables"].items()):
            lines.append(f"| `{profile}` | {table} | {v.get('from', sp.get('machines', '?'))} | "
                         f"{v.get('cpus', 'not recorded')} | {num(v.get('cells'), '{}')} | "
                         f"{num(v.get('identical'), '{}')} | {num(v.get('median_abs_delta'))} | "
                         f"{num(v.get('max_abs_delta'))} |")
    notes = [sp.get("note") for _, sp in spreads if sp.get("note")]
    return lines + [""] + [f"* {n}" for n in dict.fromkeys(notes)] + [""]


def write_paper_page(paper: str, found: dict, pp, root: Path) -> Path:
    """Write ``<root>/<paper>/README.md`` from the outputs of every profile of ``paper`` in ``found``
    (recounted: :func:`fedlib.repro.artefacts.outputs.recount_all`)."""
    page = root / paper / "README.md"
    entries = {p: found[(paper, p)] for p in sorted((k[1] for k in found if k[0] == paper), key=profile_order)}
    register: dict[str, list[str]] = {}  # deviation → the profiles it applies to, in order of first mention
    prepared = {}
    for profile, entry in entries.items():
        prof = pp.profiles.get(profile.split("-")[0]) if pp is not None else None
        prepared[profile] = _prepare(entry["metas"], prof, pp)
        for m in prepared[profile]:
            for d in m["_deviations"]:
                if profile not in register.setdefault(d, []):
                    register[d].append(profile)
    numbers = {d: i for i, d in enumerate(register, 1)}
    title = pp.title if pp is not None else paper
    claims = page.parent / "claims.md"
    lines = [f"# {title}: regenerated tables and figures", "", f"*{pp.citation if pp is not None else ''}*", "",
             "[All papers](../README.md) · " + ("[the claims, one verdict each](claims.md)" if claims.exists()
                                                 else "claims: not generated yet")
             + " · profiles: " + " · ".join(f"[`{p}`](#{anchor(paper, p)})" for p in entries)
             + " · [deviations](#deviations)", ""]
    if claims.exists():  # the page opens with the claims and their verdicts (claims_text.paper_block)
        import pandas as pd

        from .claims_text import paper_block

        frame = pd.read_csv(claims.with_suffix(".csv"))
        if "on_paper_data" in frame:  # a ledger written before the decision rule has no block to open with
            lines += [paper_block(paper, frame).rstrip("\n"), ""]
    lines += scale_section(paper, found, pp)
    lines += _spreads(paper, entries)
    lines += _deviation_list(register)
    for profile, entry in entries.items():
        lines += _section(paper, profile, {**entry, "metas": prepared[profile]}, pp, numbers)
    page.write_text("\n".join(fold(lines)).rstrip() + "\n")
    return page


def _run_lines(run: dict) -> list[str]:
    """The regeneration's timings: wall time, runs trained and reused, per notebook."""
    cold = run.get("cold")
    if cold:  # the timings that matter are those of the run that filled the store
        lines = [f"* wall time: {wall(run)} ({cold.get('started', '?')} → {cold.get('finished', '?')}); "
                 f"rendered again from that store at the same commit in {run['total_wall_time_s'] / 60:.1f} min "
                 f"({run.get('started', '?')} → {run.get('finished', '?')}), training no run"]
    else:
        lines = [f"* wall time: {wall(run)} ({run.get('started', '?')} → {run.get('finished', '?')})"]
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
    return lines


def _table_rows(paper: str, profile: str, entry: dict, pp, rel: str) -> list[str]:
    """One row per paper table: what it reproduces; then what the recount changed, and the cells per verdict."""
    tables = paper_tables(entry["metas"])
    if not tables:
        return []
    headline = pp.headline if pp is not None else None
    gain = pp.gain_label(*headline, sep="−") if headline else "headline gain"
    lines = ["| table | trained on | cells run | within std | outside std | undecided | spread not measured | "
             "no std | ± not over seeds | stand-in | not run | median abs. Δ | best method agrees | "
             f"Kendall's τ (median) | {gain} sign agrees | mean {gain} (ours / paper) | spread used |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for m in tables:
        s, c = m.get("summary", {}), m.get("summary", {}).get("counts", {})
        mad, tau = s.get("median_abs_delta"), s.get("kendall_tau_median")
        og, pg = s.get("ours_gain_mean"), s.get("paper_gain_mean")
        datasets = ", ".join(pp.dataset_label(d) if pp else d for d in m.get("datasets") or []) or "—"
        # each source in its first words (the table's own page gives it whole): "seed-to-seed", "one seed", …
        sources = s.get("spread_sources", {}).items()
        used = "; ".join(f"{src.split(' (')[0].split(':')[0]} ({n})" for src, n in sources) or "—"
        lines.append(
            f"| [{m['title'].split(':')[0]}](#{anchor(paper, profile, m['name'])}) | {datasets} | "
            f"{s.get('run', 0)} | {c.get('within', 0)} | {c.get('outside', 0)} | {c.get('undecided', 0)} | "
            f"{c.get('no_spread', 0)} | {_no_std(s)} | {c.get('std_not_seeds', 0)} | {c.get('stand_in', 0)} | "
            f"{c.get('not_run', 0)} | {'—' if mad is None else f'{mad:.2f}'} | {verdict_text(s, 'winner')} | "
            f"{'—' if tau is None else f'{tau:+.2f}'} | {verdict_text(s, 'gain')} | "
            f"{'—' if og is None else f'{og:+.2f}'} / {'—' if pg is None else f'{pg:+.2f}'} | {used} |")
    lines.append("")
    changed = [(m, entry.get("changes", {}).get(m["name"])) for m in tables if entry.get("changes", {}).get(m["name"])]
    if changed:
        lines += ["Verdicts recounted from the saved tables under the current rules (tie-aware best method, "
                  "zero gains apart, a measured spread or none; no run), changed from the saved summaries:", ""]
        lines += [f"* {m['title'].split(':')[0]}: " + "; ".join(c) for m, c in changed] + [""]
    one_seed = [(m["title"].split(":")[0], m["summary"]["spread_sources"][ONE_SEED], m["summary"].get("run", 0))
                for m in tables if m.get("summary", {}).get("spread_sources", {}).get(ONE_SEED)]
    if one_seed:
        which = ", ".join(f"{t} ({n} of {r} cells run)" for t, n, r in one_seed)
        lines += [f"One seed, so no spread of the cell's own, in {which}: those verdicts say \"spread not "
                  "measured\" instead of deciding on a spread borrowed from other cells or another machine. Two or "
                  "more seeds of a cell decide it (the profile's `seeds`; `python -m fedlib.repro.decide "
                  f"{paper}` trains the seeds its claims need).", ""]
    for label, key in (("within the paper's std", "within"), ("outside the paper's std", "outside"),
                       ("undecided", "undecided")):
        counts = cell_counts(tables, key, rel)
        if counts:
            lines += [f"* Cells {label}: {counts}"]
    return lines + [""]


def _item(paper: str, profile: str, m: dict, folder: Path, rel: str, run: dict, numbers: dict) -> list[str]:
    """One figure (embedded) or table (its Markdown, narrowed to fit), its caption, seeds and deviations."""
    lines = [f'<a id="{anchor(paper, profile, m["name"])}"></a>', f"#### {m.get('title') or m['name']}", ""]
    if m.get("placeholder"):
        lines += ["*Not run here: a placeholder (its data are absent).*", ""]
    files = m.get("files", {})
    if m["kind"] == "figure" and m.get("not_rendered") and "png" not in files:  # a figure of nothing: not drawn
        lines += [f"*Not drawn: {m['not_rendered']}* ([sidecar]({rel}/{m['name']}.json))", ""]
    elif m["kind"] == "figure":
        lines += [f"![{m['name']}]({rel}/{files.get('png', m['name'] + '.png')})", "",
                  f"[PDF]({rel}/{files.get('pdf', m['name'] + '.pdf')}) · [sidecar]({rel}/{m['name']}.json)", ""]
    else:
        md_name = files.get("md", m["name"] + ".md")
        body = (folder / md_name).read_text() if (folder / md_name).exists() else ""
        if m.get("title") and body.startswith(f"**{m['title']}**"):
            body = body[len(m["title"]) + 4:].lstrip()
        saved = m.get("_saved_caption")
        if saved and body.startswith(saved):
            body = body[len(saved):].lstrip()
        lines += narrow_tables(body.rstrip().splitlines(), f"{rel}/{md_name}")
        lines += ["", f"[CSV]({rel}/{m['name']}.csv) · [sidecar]({rel}/{m['name']}.json)", ""]
    stand_in = [numbers[d] for d in m.get("_stand_in", [])]
    if m.get("caption") or stand_in:
        marker = f"⇄ on a stand-in dataset (deviation {stand_in[0]}). " if stand_in else ""
        lines += [f"*Caption.* {marker}{m.get('caption') or ''}".rstrip(), ""]
    seeds = m.get("seeds") or []
    refs = number_ranges([numbers[d] for d in m["_deviations"]])
    lines += [f"*Profile* `{m.get('profile')}`"
              + (f", seeds {number_ranges(seeds)}" if seeds else "")
              + (f", datasets {', '.join(m.get('datasets') or [])}" if m.get("datasets") else "")
              + (f", {'rendered from the store in ' if run.get('cold') else ''}{m['wall_time_s']:.0f} s"
                 if isinstance(m.get("wall_time_s"), (int, float)) else "")
              + (f". *Deviations* ([listed once](#deviations)): {refs}." if refs else ". *Deviations:* none."), ""]
    return lines


def _section(paper: str, profile: str, entry: dict, pp, numbers: dict[str, int]) -> list[str]:
    folder: Path = entry["folder"]
    rel = folder.name  # the page sits in the paper's folder, beside its profiles' folders
    metas, run = entry["metas"], entry["run"]
    lines = [f'<a id="{anchor(paper, profile)}"></a>', f"## {paper} / `{profile}`", ""]
    prof = pp.profiles.get(profile.split("-")[0]) if pp is not None else None
    if prof is not None:
        lines += [f"Profile `{profile}`: {prof.description}", ""]
    commits = sorted({m.get("git_commit", "unknown") for m in metas})
    lines.append(f"* git commit {', '.join('`' + c + '`' for c in commits)}"
                 + (" (outputs from more than one commit)" if len(commits) > 1 else ""))
    lines += (_run_lines(run) if run else []) + [""]
    lines += _table_rows(paper, profile, entry, pp, rel)
    found = sorted((m for m in metas if m.get("findings")), key=lambda m: (m.get("notebook") or "", m["name"]))
    if found:
        lines += ["**What the notebooks found:**", ""]
        lines += [f"* {f} ({m['name']})" for m in found for f in m["findings"]] + [""]
    for gpu in sorted(folder.glob("gpu*")):  # gpu/ (float32), gpu-tf32/, ... (fedlib.repro.run.gpu_runs.gpu_folder)
        lines += gpu_lines(gpu, f"{rel}/{gpu.name}")
    by_nb: dict[str, list[dict]] = {}
    for m in metas:
        by_nb.setdefault(m.get("notebook") or "other", []).append(m)
    for nb in sorted(by_nb):
        lines += [f"### {nb}", ""]
        executed = folder / "executed" / f"{nb.split('/')[-1]}.ipynb"
        if executed.exists():
            lines += [f"Executed notebook: [`{rel}/executed/{executed.name}`]({rel}/executed/{executed.name})", ""]
        for m in sorted(by_nb[nb], key=lambda m: (m["kind"] != "figure", m["name"])):
            lines += _item(paper, profile, m, folder, rel, run, numbers)
    return lines
