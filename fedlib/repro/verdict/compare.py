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
* :func:`summarize` -- the counts;
* :func:`stand_ins` -- which paper datasets an output ran on a stand-in for.

It takes results (our mean, std and seeds per cell) and returns verdicts: running a
table's grid and saving it is :mod:`fedlib.repro.artefacts.tables`; the verdicts in words
(plain-language findings, the Markdown grid, the stand-in mark on a caption and its
findings) are :mod:`fedlib.repro.artefacts.comparison_text`.

**The spread** of a cell (:mod:`fedlib.repro.verdict.spread`) is our std over its own
seeds, where it ran with two or more, widened to the largest of its table's measured
spreads (the seed-to-seed spread of its headline cells, its cross-machine spread, or
the largest measured on a table of the same metric in the same profile): those can
only make a verdict undecided, never decide one.  A cell of one seed has no spread
(NaN, ``spread_source`` "one seed: …") whatever its table measured, and every verdict
that would need one says "spread not measured" (``no_spread``) instead of deciding, as
the claims' rule does (``docs/reproducibility.md#the-decision-rule``); a spread of 0
is never assumed.  Each cell records the one it used (``spread_source``).  A difference of two cells
has the spread √(s_a² + s_b²).  Accuracies in percent; Δ = ours − paper.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .spread import Spread

__all__ = ["STATUS", "MARK", "VERDICT", "TIE", "compare", "winners", "gains", "summarize", "add_column_param",
           "method_of", "close_without_std", "half_printed_unit", "stand_ins", "kendall_tau"]

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
#: A cell of one seed has no spread of its own, so no verdict that needs one (:func:`_cell_spread`).
ONE_SEED = "one seed: no spread of the cell's own"
NO_SEED_STD = "no std over the cell's seeds"


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
    """A cell's spread and its source: its own std over seeds, widened to the largest of the table's measured
    spreads; (NaN, :data:`ONE_SEED`) for a cell of one seed, whatever the table measured: a spread borrowed from
    other cells or another machine never stands in for the cell's own (it may only make a verdict undecided)."""
    if n_seeds is None or pd.isna(n_seeds) or n_seeds < 2:
        return math.nan, ONE_SEED
    if pd.isna(ours_std):  # our ± is over rounds (ours_std_over), as the paper's: no std over seeds
        return math.nan, NO_SEED_STD
    best = max([Spread(float(ours_std), f"std over {int(n_seeds)} seeds"), *table], key=lambda s: s.value)
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


def add_column_param(comparison: pd.DataFrame, table, key: str, name: str | None = None,
                     source: str = "column") -> pd.DataFrame:
    """Add a numeric column ``name`` (default ``key``) with each cell's column (or
    row) parameter ``key`` of the paper ``table``, e.g. ``partition_beta`` for plots."""
    if source == "column":
        values = {c.key: {**c.params, "dataset": c.dataset}.get(key) for c in table.columns}
        return comparison.assign(**{name or key: comparison.column.map(values)})
    values = {r.key: r.params.get(key) for r in table.rows}
    return comparison.assign(**{name or key: comparison.row.map(values)})
