"""Paper vs ours: per cell, per column, per table, with verdicts that respect the noise.

* :func:`compare` -- paper value | ours | Δ per table cell and a status
  (:data:`STATUS`): within or outside the paper's reported std, **undecided**
  when that verdict would flip within our run-to-run spread, **spread not
  measured** when no spread was measured to decide it against, no std reported,
  a paper ± that is not over seeds (:attr:`fedlib.repro.spec.reported.PaperTable.std_over`),
  run on a **stand-in** dataset (never judged against the paper's numbers, which
  are on another dataset), a **suspect** printed value (a probable typo), not run.
* :func:`winners` -- the best method per column, paper vs ours, tie-aware (our
  best agrees when it is one of the paper's tied best), with Kendall's τ-b
  between the two rankings;
* :func:`gains` -- the paper's headline gain (e.g. FedLC − FedAvg) per column,
  paper vs ours, with the sign verdict; a zero gain in the paper has no sign and
  is counted apart;
* :func:`summarize`, :func:`findings`, :func:`render_comparison` -- counts,
  plain-language lines and the Markdown grid;
* :func:`stand_ins`, :func:`mark_stand_in` -- which paper datasets an output
  ran on a stand-in for, and the mark on its caption and findings.

It takes results (our mean, std and seeds per cell) and returns verdicts: running a
table's grid and saving it is :mod:`fedlib.repro.artefacts.tables`.

**The spread** of a cell (:mod:`fedlib.repro.verdict.spread`) is the largest of what was
measured for it: our std over seeds where it ran with several seeds, its
table's seed-to-seed spread, its table's cross-machine spread (or the largest
measured on a table of the same metric in the same profile).  Each cell records
the one it used (``spread_source``).  When none was measured the spread is NaN
and every verdict that would need it says "spread not measured" (``no_spread``)
instead of deciding: a spread of 0 is never assumed.  A difference of two cells
has the spread √(s_a² + s_b²).  Accuracies in percent; Δ = ours − paper.
"""

from __future__ import annotations

import math
import re
import warnings
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from .spread import Spread

__all__ = ["STATUS", "MARK", "VERDICT", "TIE", "compare", "winners", "gains", "summarize", "findings",
           "render_comparison", "add_column_param", "method_of", "close_without_std", "no_std_sentence",
           "half_printed_unit", "verdict_text", "stand_ins", "stand_in_text", "stand_in_caption", "mark_stand_in", "kendall_tau"]

#: Cell status of a paper-vs-ours comparison.
STATUS = {
    "within": "within the paper's std",
    "outside": "outside the paper's std",
    "undecided": "undecided (the verdict flips within our run-to-run spread)",
    "no_spread": "spread not measured (within/outside not decided)",
    "no_std": "paper reports no std",
    "std_not_seeds": "the paper's ± is not over seeds (shown, not judged)",
    "stand_in": "run on a stand-in dataset (qualitative comparison only)",
    "suspect": "the paper's value is doubtful (probable typo)",
    "not_in_paper": "missing in the paper",
    "not_run": "not run",
}
MARK = {"within": "✓", "outside": "✗", "undecided": "?", "no_spread": "∅", "no_std": "~", "std_not_seeds": "≈",
        "stand_in": "⇄", "suspect": "†", "not_in_paper": "", "not_run": ""}
#: Verdicts of the best method per column and of the headline gain's sign.
VERDICT = {
    "agree": "agrees",
    "disagree": "disagrees",
    "undecided": "undecided within our run-to-run spread",
    "no_spread": "spread not measured",
    "zero_in_paper": "zero gain in the paper (no sign to agree with)",
}
#: Two printed values closer than this are equal (a tie in the paper; a zero gain).
TIE = 1e-6
NOT_MEASURED = "not measured"


def method_of(row: str) -> str:
    """The method of a table row key (``"E5/fedlc"`` -> ``"fedlc"``)."""
    return str(row).split("/")[-1]


def _as_spreads(spread: Any) -> list[Spread]:
    """``spread`` as a list of measured spreads: None (none measured), a number (a measured cross-machine
    spread of the table), a :class:`~fedlib.repro.verdict.spread.Spread` or a list of them."""
    if spread is None:
        return []
    if isinstance(spread, Spread):
        return [spread]
    if isinstance(spread, (int, float, np.floating)):
        return [] if math.isnan(float(spread)) else [Spread(float(spread), "cross-machine (this table)")]
    return [s for s in spread if s is not None]


def _cell_spread(ours_std: float, n_seeds: float, table: list[Spread]) -> tuple[float, str]:
    """The largest spread measured for a cell and its source; (NaN, "not measured") when none was."""
    found = list(table)
    if n_seeds is not None and not pd.isna(n_seeds) and n_seeds >= 2 and not pd.isna(ours_std):
        found.append(Spread(float(ours_std), f"std over {int(n_seeds)} seeds"))
    if not found:
        return math.nan, NOT_MEASURED
    best = max(found, key=lambda s: s.value)
    return best.value, best.source


def compare(paper_frame: pd.DataFrame, ours: pd.DataFrame, on: Sequence[str] = ("row", "column"), *,
            spread: Any = None) -> pd.DataFrame:
    """Paper vs ours per cell.

    ``paper_frame`` has ``on`` + ``paper_mean``, ``paper_std`` (NaN: missing / not
    reported), ``dataset`` and optionally ``suspect`` and ``std_over`` (what the
    paper's ± is over; "seeds" when absent); ``ours`` has ``on`` + ``ours_mean``,
    ``ours_std``, ``n_seeds`` and optionally ``status``/``note``/``dataset_used``.
    ``spread``: the table's measured spreads (see the module docstring; a number is
    a measured cross-machine spread; None: none measured).  Adds ``delta``,
    ``abs_delta``, ``spread`` (of the cell; NaN: not measured), ``spread_source``,
    ``within_std`` (True/False, None when not judged) and ``status``."""
    on = list(on)
    table_spreads = _as_spreads(spread)
    keep = [c for c in ("ours_mean", "ours_std", "ours_std_over", "n_seeds", "ours_seeds", "status", "note",
                        "dataset_used") if c in ours]
    df = paper_frame.merge(ours[on + keep], on=on, how="left")
    if "status" not in df:
        df["status"] = np.where(df["ours_mean"].notna(), "ok", "not run")
    if "suspect" not in df:
        df["suspect"] = ""
    df["run_status"] = df.pop("status").fillna("not run")
    df["delta"] = df["ours_mean"] - df["paper_mean"]
    df["abs_delta"] = df["delta"].abs()
    seed_std = df.get("ours_std", pd.Series(np.nan, index=df.index))
    if "ours_std_over" in df:  # our ± over rounds (as the paper's) is no spread over seeds
        seed_std = seed_std.where(df["ours_std_over"].isna())
    n_seeds = df["n_seeds"] if "n_seeds" in df else pd.Series(np.nan, index=df.index)
    cell = [_cell_spread(s, n, table_spreads) if pd.notna(m) else (math.nan, NOT_MEASURED)  # not run: no spread
            for s, n, m in zip(seed_std, n_seeds, df["ours_mean"])]
    df["spread"] = [c[0] for c in cell]
    df["spread_source"] = [c[1] for c in cell]
    std_over = df["std_over"] if "std_over" in df else pd.Series("seeds", index=df.index)
    within, status = [], []
    for row, over in zip(df.itertuples(index=False), std_over):
        used = getattr(row, "dataset_used", None)
        stand_in = isinstance(used, str) and used != row.dataset
        if pd.isna(row.paper_mean):
            within.append(None), status.append("not_in_paper")
        elif pd.isna(row.ours_mean):
            within.append(None), status.append("not_run")
        elif isinstance(row.suspect, str) and row.suspect:
            within.append(None), status.append("suspect")
        elif stand_in:
            within.append(None), status.append("stand_in")
        elif pd.isna(row.paper_std):
            within.append(None), status.append("no_std")
        elif isinstance(over, str) and over not in ("", "seeds"):
            within.append(None), status.append("std_not_seeds")
        elif pd.isna(row.spread):
            within.append(None), status.append("no_spread")
        elif abs(abs(row.delta) - row.paper_std) <= row.spread and row.spread > 0:
            within.append(None), status.append("undecided")
        else:
            ok = bool(abs(row.delta) <= row.paper_std + 1e-9)
            within.append(ok), status.append("within" if ok else "outside")
    df["within_std"] = pd.Series(within, index=df.index, dtype=object)
    df["status"] = status
    return df


def _groups(df: pd.DataFrame) -> list[str]:
    return ["column"] + (["row_group"] if "row_group" in df else [])


def kendall_tau(paper: Sequence[float], ours: Sequence[float]) -> float:
    """Kendall's τ-b (tie-aware) between two rankings of the same rows; NaN with fewer than two rows or
    when one side is constant."""
    from scipy.stats import kendalltau

    x, y = np.asarray(paper, dtype=float), np.asarray(ours, dtype=float)
    if len(x) < 2:
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tau = kendalltau(x, y, variant="b").statistic
    return float(tau) if tau is not None else math.nan


def _sources(spreads: Iterable[str]) -> str:
    return "; ".join(dict.fromkeys(s for s in spreads if isinstance(s, str)))


def winners(comparison: pd.DataFrame) -> pd.DataFrame:
    """Per column (and row group): the best method in the paper and in our runs, among
    the rows both have (suspect cells left out), tie-aware: the paper's best is every row
    at its maximum, ours every row at ours.  ``face_value``: ``agree`` when one of our
    best rows is one of the paper's best, else ``disagree`` (no spread considered).
    ``verdict``: ``no_spread`` when a row's spread was not measured; else ``agree``
    when our best is among the paper's best and every row within our spread of it is
    too, ``undecided`` when some row within our spread of our best is among the
    paper's best, else ``disagree``.  ``kendall_tau``: τ-b between the paper's and our
    ranking of the same rows."""
    recs = []
    df = comparison[~comparison.status.isin(["suspect"])] if "status" in comparison else comparison
    for keys, grp in df.groupby(_groups(df), sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        both = grp.dropna(subset=["paper_mean", "ours_mean"])
        if len(both) < 2:
            continue
        paper_best = both[both.paper_mean >= both.paper_mean.max() - TIE]
        ours_best = both[both.ours_mean >= both.ours_mean.max() - TIE]
        p_rows, o_rows = set(paper_best.row), set(ours_best.row)
        face = "agree" if p_rows & o_rows else "disagree"
        spreads = both["spread"] if "spread" in both else pd.Series(math.nan, index=both.index)
        if spreads.isna().any():
            verdict = "no_spread"
        else:
            top = ours_best.index[0]
            reach = np.sqrt(spreads ** 2 + spreads.loc[top] ** 2)
            tied = set(both.row[(both.ours_mean.max() - both.ours_mean) <= reach + TIE])
            if face == "agree" and tied <= p_rows:
                verdict = "agree"
            elif tied & p_rows:
                verdict = "undecided"
            else:
                verdict = "disagree"
        recs.append({**dict(zip(_groups(df), keys)), "column_label": grp.column_label.iloc[0],
                     "rows_compared": len(both), "paper_best": " = ".join(paper_best.row_label),
                     "ours_best": " = ".join(ours_best.row_label), "paper_tied": len(paper_best),
                     "agree": verdict == "agree", "face_value": face, "verdict": verdict,
                     "kendall_tau": kendall_tau(both.paper_mean, both.ours_mean),
                     "spread_source": _sources(both.get("spread_source", []))})
    return pd.DataFrame(recs)


def _first(frame: pd.DataFrame, column: str) -> Any:
    return frame[column].iloc[0] if column in frame else None


def gains(comparison: pd.DataFrame, method: str, baseline: str) -> pd.DataFrame:
    """``method`` − ``baseline`` per column (and row group), paper vs ours.  ``verdict``:
    ``zero_in_paper`` when the paper's gain is zero (no sign to agree with);
    ``no_spread`` when either cell's spread was not measured; ``undecided`` when
    |ours| is within the spread of the difference; else ``agree`` / ``disagree`` on
    the sign.  ``face_value``: the sign verdict with no spread considered (None for
    a zero paper gain).  ``stand_in``: either cell ran on a stand-in dataset
    (``trained_on`` names it)."""
    recs = []
    df = comparison.copy()
    df["_method"] = df["row"].map(method_of)
    for keys, grp in df.groupby(_groups(df), sort=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        a, b = grp[grp._method == method], grp[grp._method == baseline]
        if a.empty or b.empty:
            continue
        pg = float(a.paper_mean.iloc[0] - b.paper_mean.iloc[0])
        og = float(a.ours_mean.iloc[0] - b.ours_mean.iloc[0])
        sa = float(a.spread.iloc[0]) if "spread" in a else math.nan
        sb = float(b.spread.iloc[0]) if "spread" in b else math.nan
        spread = math.hypot(sa, sb)
        face = None
        if math.isnan(og) or math.isnan(pg):
            verdict = None
        elif abs(pg) < TIE:
            verdict = "zero_in_paper"
        else:
            face = "agree" if np.sign(pg) == np.sign(og) else "disagree"
            if math.isnan(spread):
                verdict = "no_spread"
            elif (abs(og) <= spread and spread > 0) or og == 0:
                verdict = "undecided"
            else:
                verdict = face
        used = [u for u in (_first(a, "dataset_used"), _first(b, "dataset_used")) if isinstance(u, str)]
        stand_in = any(u != _first(a, "dataset") for u in used)
        recs.append({**dict(zip(_groups(df), keys)), "column_label": grp.column_label.iloc[0],
                     "paper_gain": pg, "ours_gain": og, "spread": spread,
                     "spread_source": _sources([_first(a, "spread_source"), _first(b, "spread_source")]),
                     "same_sign": None if verdict not in ("agree", "disagree") else verdict == "agree",
                     "face_value": face, "verdict": verdict, "stand_in": stand_in,
                     "trained_on": used[0] if used else None})
    return pd.DataFrame(recs)


def _count(frame: pd.DataFrame, column: str, value: str) -> int:
    return int((frame[column] == value).sum()) if len(frame) and column in frame else 0


def half_printed_unit(value: float) -> float:
    """Half a unit of the last digit a transcribed value was printed with (99.1 -> 0.05, 75.46 -> 0.005,
    98.0 -> 0.05): the paper's number is only known to that precision."""
    text = repr(float(value))
    if "e" in text or "." not in text:
        return 0.5
    return 0.5 * 10.0 ** -len(text.split(".")[1])


def close_without_std(comparison: pd.DataFrame) -> pd.Series:
    """For the cells whose paper reports no std (status ``no_std``): True when our value lies within our
    run-to-run spread of the paper's printed value, ``|Δ| ≤ spread + half its last printed digit``; False
    when farther; None when our spread was not measured (and for every other cell).  Not a verdict
    against the paper's std (there is none): a check at our own precision."""
    out = []
    for row in comparison.itertuples(index=False):
        spread = getattr(row, "spread", math.nan)
        if row.status != "no_std" or pd.isna(spread) or not spread > 0:
            out.append(None)
        else:
            out.append(bool(abs(row.delta) <= spread + half_printed_unit(row.paper_mean) + 1e-9))
    return pd.Series(out, index=comparison.index, dtype=object)


def summarize(comparison: pd.DataFrame, headline: tuple[str, str] | None = None) -> dict:
    """Counts per status, the cells in each verdict, the spreads the verdicts used, and the
    qualitative checks: best method per column (tie-aware; decided, undecided, spread not
    measured, and at face value), Kendall's τ-b per column, sign of the headline gain (the
    same, plus zero gains in the paper, counted apart)."""
    counts = comparison.status.value_counts().to_dict()
    name = comparison.row_label.astype(str) + " @ " + comparison.column_label.astype(str)
    if "row_group" in comparison:
        grp = comparison.row_group.fillna("").astype(str)
        name = np.where(grp != "", grp + " " + name, name)
    name = pd.Series(name, index=comparison.index)
    w = winners(comparison)
    g = gains(comparison, *headline) if headline else pd.DataFrame()
    judged = comparison[comparison.status.isin(["within", "outside", "undecided", "no_spread", "no_std",
                                                "std_not_seeds"])]
    decided_gain = g[g.verdict.isin(["agree", "disagree"])] if len(g) else g
    ran = comparison[comparison.ours_mean.notna()]
    close = close_without_std(comparison)  # all None without a spread column
    taus = {} if w.empty else {
        (f"{r.row_group} " if isinstance(r.get("row_group"), str) and r.get("row_group") else "") + str(r.column_label):
        (None if pd.isna(r.kendall_tau) else float(r.kendall_tau)) for _, r in w.iterrows()}
    finite = [t for t in taus.values() if t is not None]
    return {
        "counts": {k: int(counts.get(k, 0)) for k in STATUS},
        "run": int(comparison.ours_mean.notna().sum()),
        "within": sorted(name[comparison.status == "within"].tolist()),
        "outside": sorted(name[comparison.status == "outside"].tolist()),
        "undecided": sorted(name[comparison.status == "undecided"].tolist()),
        "no_std_close": sorted(name[close.eq(True)].tolist()),  # no std in the paper: within our spread
        "no_std_far": sorted(name[close.eq(False)].tolist()),
        "spread_sources": ({} if "spread_source" not in ran else
                           {str(k): int(v) for k, v in ran.spread_source.value_counts().items()}),
        "median_abs_delta": None if judged.abs_delta.dropna().empty else float(judged.abs_delta.median()),
        "median_abs_delta_stand_in": None if comparison[comparison.status == "stand_in"].abs_delta.dropna().empty
        else float(comparison[comparison.status == "stand_in"].abs_delta.median()),
        "winner_agree": _count(w, "verdict", "agree"),
        "winner_undecided": _count(w, "verdict", "undecided"),
        "winner_no_spread": _count(w, "verdict", "no_spread"),
        "winner_agree_face_value": _count(w, "face_value", "agree"),
        "winner_total": int(len(w)),
        "kendall_tau": taus,
        "kendall_tau_median": float(np.median(finite)) if finite else None,
        "headline": list(headline) if headline else None,
        "gain_same_sign": _count(g, "verdict", "agree"),
        "gain_undecided": _count(g, "verdict", "undecided"),
        "gain_no_spread": _count(g, "verdict", "no_spread"),
        "gain_zero_in_paper": _count(g, "verdict", "zero_in_paper"),
        "gain_same_sign_face_value": _count(g, "face_value", "agree"),
        "gain_total": int(g.verdict.notna().sum()) if len(g) else 0,
        "ours_gain_mean": None if g.empty or g.ours_gain.dropna().empty else float(g.ours_gain.mean()),
        "paper_gain_mean": None if g.empty or g.ours_gain.dropna().empty
        else float(g.dropna(subset=["ours_gain"]).paper_gain.mean()),
        "decided_gain_columns": int(len(decided_gain)),
    }


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
def stand_ins(profile: Any, experiment: str | None, datasets: Iterable[str] | None = None) -> dict[str, str]:
    """{paper dataset: the dataset it ran on} for each of ``experiment``'s paper datasets that ``profile`` (a
    :class:`~fedlib.repro.spec.profiles.Profile`) replaces by a stand-in (none for an experiment that does not
    substitute, or an unknown one).  With ``datasets`` (what the runs actually used, when known), only
    stand-ins among them."""
    if profile is None or experiment is None or not hasattr(profile, "datasets_of"):
        return {}
    try:
        if not profile.setting(experiment, "substitute", True):
            return {}
        paper_ds = profile.datasets_of(experiment)
    except KeyError:
        return {}
    used = set([] if datasets is None else list(datasets))
    out = {}
    for d in paper_ds:
        u = profile.dataset(d)
        if u is not None and u != d and (not used or u in used):
            out[d] = u
    return out


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


def add_column_param(comparison: pd.DataFrame, table, key: str, name: str | None = None,
                     source: str = "column") -> pd.DataFrame:
    """Add a numeric column ``name`` (default ``key``) with each cell's column (or
    row) parameter ``key`` of the paper ``table``, e.g. ``partition_beta`` for plots."""
    if source == "column":
        values = {c.key: {**c.params, "dataset": c.dataset}.get(key) for c in table.columns}
        return comparison.assign(**{name or key: comparison.column.map(values)})
    values = {r.key: r.params.get(key) for r in table.rows}
    return comparison.assign(**{name or key: comparison.row.map(values)})


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
