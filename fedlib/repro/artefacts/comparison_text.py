"""Paper vs ours in words: the verdicts of :mod:`fedlib.repro.verdict.compare` as text for pages and notebooks.

* :func:`findings`, :func:`verdict_text`, :func:`no_std_sentence` -- plain-language lines of a table's
  comparison and of its summary's counts;
* :func:`render_comparison` -- the Markdown grid, each cell ``paper → ours (Δ) mark``;
* :func:`stand_in_text`, :func:`stand_in_caption`, :func:`mark_stand_in` -- the stand-in mark on a caption
  and its findings (which datasets: :func:`fedlib.repro.verdict.compare.stand_ins`).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Mapping

import pandas as pd

from ..verdict.compare import MARK, stand_ins, summarize, winners

__all__ = ["findings", "render_comparison", "no_std_sentence", "verdict_text", "stand_in_text", "stand_in_caption",
           "mark_stand_in"]


def _parts(s: dict, prefix: str) -> str:
    """", 2 undecided, 1 zero gain in the paper, 3 spread not measured" for a summary's winners or gains."""
    bits = [(s.get(f"{prefix}_undecided", 0), "undecided within our spread"),
            (s.get(f"{prefix}_zero_in_paper", 0), "zero gain in the paper"),
            (s.get(f"{prefix}_no_spread", 0), "spread not measured")]
    return "".join(f", {n} {what}" for n, what in bits if n)


def verdict_text(s: dict, prefix: str) -> str:
    """A summary's best-method (``prefix="winner"``) or gain-sign (``"gain"``) count in words:
    "4/8 (2 spread not measured; 6/8 at face value)"."""
    key = "winner_agree" if prefix == "winner" else "gain_same_sign"
    total = s.get(f"{prefix}_total", 0)
    text = f"{s.get(key, 0)}/{total}"
    parts = _parts(s, prefix).lstrip(", ")
    face = s.get(f"{key}_face_value")
    if s.get(f"{prefix}_no_spread") and face is not None:
        signed = total - s.get(f"{prefix}_zero_in_paper", 0)
        parts += f"; {face}/{signed} at face value"
    return text + (f" ({parts})" if parts else "")


def no_std_sentence(no_std: int, near: int, far: int) -> str:
    """Where the paper prints no std (``no_std`` cells): how many of those with a measured spread of ours
    lie within it of the printed value (``near``, :func:`close_without_std`) and how many farther: a
    check at our precision, never a verdict (the findings and the index's scale section say it so)."""
    return (f"the paper reports no std for {no_std} cells; {near} of the {near + far} with a measured spread of "
            f"ours lie within it of the paper's printed value (|Δ| ≤ our spread + half its last printed digit), "
            f"{far} are farther")


def findings(comparison: pd.DataFrame, table=None, paper=None) -> list[str]:
    """Plain-language findings of a table, computed from the comparison."""
    out = []
    label = f"Table {table.number}" if table is not None else "table"
    headline = paper.headline if paper is not None else None
    s = summarize(comparison, headline)
    if s["run"] == 0:
        return [f"{label}: no cell was run in this profile"]
    w = winners(comparison)
    if len(w) and headline:
        ours_label = paper.method_label(headline[0])
        mine = int(w.ours_best.str.split(" = ").map(lambda b: ours_label in b).sum())
        theirs = int(w.paper_best.str.split(" = ").map(lambda b: ours_label in b).sum())
        out.append(f"{label}: {ours_label} is our best method in {mine} of {len(w)} column groups run "
                   f"(paper: {theirs} of {len(w)}); the best method agrees with the paper (ties in the paper "
                   f"count for each tied method) in {verdict_text(s, 'winner')}")
    if s["kendall_tau_median"] is not None:
        out.append(f"{label}: Kendall's τ-b between our and the paper's ranking of the methods, per column: "
                   f"median {s['kendall_tau_median']:+.2f} ("
                   + ", ".join(f"{k} {'—' if v is None else f'{v:+.2f}'}" for k, v in s["kendall_tau"].items()) + ")")
    if s["gain_total"] and headline:
        a, b = (paper.method_label(m) for m in headline)
        out.append(f"{label}: {a} − {b} is {s['ours_gain_mean']:+.2f} pp on average here vs "
                   f"{s['paper_gain_mean']:+.2f} pp in the paper (the sign agrees in {verdict_text(s, 'gain')} "
                   "columns)")
    c = s["counts"]
    judged = c["within"] + c["outside"] + c["undecided"]
    if judged:
        out.append(f"{label}: {c['within']} of {judged} cells with a reported std are within it"
                   + (f", {c['undecided']} undecided" if c["undecided"] else ""))
    if s["no_std_close"] or s["no_std_far"]:
        out.append(f"{label}: " + no_std_sentence(c["no_std"], len(s["no_std_close"]), len(s["no_std_far"])))
    if c["no_spread"]:
        out.append(f"{label}: {c['no_spread']} cells with a reported std are not judged: their spread was not "
                   f"measured (one seed, no seed-to-seed or cross-machine measurement)")
    if c["std_not_seeds"]:
        out.append(f"{label}: {c['std_not_seeds']} cells' ± is not over seeds in the paper: shown, not judged")
    if c["stand_in"]:
        out.append(f"{label}: {c['stand_in']} cells ran on a stand-in dataset: compared qualitatively only")
    if c["suspect"]:
        out.append(f"{label}: {c['suspect']} printed values are flagged as probable typos and not counted")
    return out


# ------------------------------------------------------------------------------ stand-ins
def stand_in_text(mapping: Mapping[str, str], label: Callable[[str], str] = str) -> str:
    """"CIFAR-10 ran on FMNIST (a stand-in)" for {paper dataset: dataset used}."""
    by_used: dict[str, list[str]] = {}
    for paper_ds, used in mapping.items():
        by_used.setdefault(used, []).append(label(paper_ds))
    return "; ".join(f"{' and '.join(p)} ran on {label(u)} (a stand-in)" for u, p in by_used.items())


def stand_in_caption(mapping: Mapping[str, str], label: Callable[[str], str] = str) -> str:
    """"CIFAR-10 ran on FMNIST (a stand-in): a paper value beside it is on CIFAR-10; compare qualitatively
    only.": what :func:`mark_stand_in` puts (after "⇄ ") at the head of a caption."""
    papers = " and ".join(label(d) for d in mapping)
    return f"{stand_in_text(mapping, label)}: a paper value beside it is on {papers}; compare qualitatively only."


def _mentions(text: str, name: str) -> bool:
    return bool(name) and re.search(re.escape(name) + r"(?!\d)", text) is not None


def mark_stand_in(meta: dict, profile: Any = None, paper=None) -> dict:
    """A sidecar's fields (``experiment``, ``datasets``, ``caption``, ``findings``) with every stand-in
    marked: ``stand_in`` {paper dataset: dataset used}; ``datasets`` filled in when empty; the caption
    starts with "⇄ CIFAR-10 ran on FMNIST (a stand-in): a paper value beside it is on CIFAR-10; compare
    qualitatively only."; every finding that sets a paper value beside ours (it mentions the paper)
    and does not already name the stand-in ends with "[⇄ CIFAR-10 ran on FMNIST (a stand-in)]" (the
    stood-in datasets it names; all of them when it names no dataset; none when it names only datasets
    that ran as in the paper).  Idempotent: a sidecar
    that has ``stand_in`` is returned as it is."""
    if "stand_in" in meta or profile is None:
        return meta
    paper = paper if paper is not None else getattr(profile, "companion", None)
    label = paper.dataset_label if paper is not None else str
    mapping = stand_ins(profile, meta.get("experiment"), meta.get("datasets"))
    out = dict(meta, stand_in=mapping)
    if not mapping:
        return out
    if not len([] if out.get("datasets") is None else list(out["datasets"])):
        out["datasets"] = sorted({profile.dataset(d) for d in profile.datasets_of(meta["experiment"])} - {None})
    out["caption"] = f"⇄ {stand_in_caption(mapping, label)} {meta.get('caption') or ''}".rstrip()
    genuine = [d for d in profile.datasets_of(meta["experiment"]) if d not in mapping]
    marked = []
    for line in meta.get("findings") or []:
        named = {d: u for d, u in mapping.items() if _mentions(line, label(d))}
        if not named and any(_mentions(line, label(d)) for d in genuine):
            named = {}  # it names only datasets that ran as in the paper
        elif not named:
            named = dict(mapping)
        if (not named or "paper" not in line.lower() or "stand-in" in line
                or all(_mentions(line, label(u)) for u in named.values())):
            marked.append(line)
        else:
            marked.append(f"{line} [⇄ {stand_in_text(named, label)}]")
    if meta.get("findings") is not None:
        out["findings"] = marked
    return out


def _fmt_cell(mean, std, digits: int = 2) -> str:
    if mean is None or pd.isna(mean):
        return "—"
    return f"{mean:.{digits}f}" + ("" if std is None or pd.isna(std) else f"±{std:.{digits}f}")


def _spread_line(comparison: pd.DataFrame) -> str:
    """"Spread used: …" for the cells that ran: each source with its number of cells."""
    if "spread_source" not in comparison:
        return ""
    ran = comparison[comparison.ours_mean.notna()]
    if ran.empty:
        return ""
    counts = ran.spread_source.value_counts()
    return "\nRun-to-run spread used by the verdicts: " + "; ".join(
        f"{src} ({n} cell{'s' if n != 1 else ''})" for src, n in counts.items()) + ".\n"


def render_comparison(comparison: pd.DataFrame, paper=None) -> str:
    """A Markdown grid: rows × columns, each cell ``paper → ours (Δ) mark``."""
    cols = list(dict.fromkeys(comparison.column))
    rows = list(dict.fromkeys(comparison.row))
    col_label = dict(zip(comparison.column, comparison.column_label))
    used = {}
    if "dataset_used" in comparison:
        for c, d, ds in zip(comparison.column, comparison.dataset, comparison.dataset_used):
            if isinstance(ds, str) and ds != d:
                used[c] = ds
    row_label = {r: (f"{g} {lab}".strip() if isinstance(g, str) else lab)
                 for r, lab, g in zip(comparison.row, comparison.row_label,
                                      comparison.get("row_group", [""] * len(comparison)))}
    label = paper.dataset_label if paper is not None else (lambda d: d)
    header = ["method"] + [col_label[c] + (f" (run on {label(used[c])})" if c in used else "") for c in cols]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    index = comparison.set_index(["row", "column"])
    notes: dict[str, int] = {}
    for r in rows:
        cells = [row_label[r]]
        for c in cols:
            x = index.loc[(r, c)]
            paper_txt = _fmt_cell(x.paper_mean, x.paper_std)
            if pd.isna(x.ours_mean):
                reason = str(x.get("note") or "not run")
                n = notes.setdefault(reason, len(notes) + 1)
                word = "diverged" if x.get("run_status") == "diverged" else "not run"
                cells.append(f"{paper_txt} → {word}[^{n}]")
            else:
                ours_txt = _fmt_cell(x.ours_mean, x.ours_std)
                delta = "" if pd.isna(x.delta) else f" ({x.delta:+.2f})"
                said = x.get("note")  # a ran cell's note: some of its seeds diverged (grid.aggregate)
                mark = f"[^{notes.setdefault(said, len(notes) + 1)}]" if isinstance(said, str) and said else ""
                cells.append(f"{paper_txt} → {ours_txt}{mark}{delta} {MARK[x.status]}".rstrip())
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n\n"
    text += ("Each cell: paper → ours (Δ = ours − paper), in %. ✓ |Δ| within the paper's reported std, "
             "✗ outside it, ? undecided (the verdict flips within our run-to-run spread), ∅ not decided: our "
             "run-to-run spread was not measured, ~ the paper reports no std, ≈ the paper's ± is not over seeds, "
             "⇄ run on a stand-in dataset (compare qualitatively only), † the paper's value is doubtful; "
             "— missing in the paper.\n")
    text += _spread_line(comparison)
    over = comparison.get("std_over", pd.Series(dtype=object)).dropna()
    for what in dict.fromkeys(o for o in over if isinstance(o, str) and o not in ("", "seeds")):
        text += f"\nThe paper's ± is over {what}, not over seeds: a Δ beyond it is not a miss (≈).\n"
    suspects = comparison[comparison.get("suspect", pd.Series("", index=comparison.index)).astype(str) != ""]
    for x in suspects.itertuples(index=False):
        n = notes.setdefault(f"† {x.row_label} @ {x.column_label}: {x.suspect}", len(notes) + 1)
    for reason, n in notes.items():
        text += f"\n[^{n}]: {reason}" if not reason.startswith("†") else f"\n* {reason}"
    return text + ("\n" if notes else "")
