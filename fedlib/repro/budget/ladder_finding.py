"""A budget ladder's results: the table of its rungs (:func:`ladder_table`, beside the paper's values,
:func:`paper_values`) and what it finds, toward / away / not at all (:func:`finding`), leaving out the rungs
whose baseline is at chance (:func:`at_chance`)."""

from __future__ import annotations

import math

import pandas as pd

from .ladder_spec import LadderSpec

__all__ = ["paper_values", "ladder_table", "at_chance", "finding"]


def paper_values(spec: LadderSpec) -> tuple[float | None, float | None]:
    """The paper's method and baseline values in the headline cell."""
    from ..spec.paper import get_paper

    t = get_paper(spec.paper).table(spec.table)
    m, b = t.value(spec.method, spec.column), t.value(spec.baseline, spec.column)
    return (None if m is None else m.mean), (None if b is None else b.mean)


def ladder_table(spec: LadderSpec, plan: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """One row per rung: its scale, cost, both methods' mean (and std) over seeds, the gap
    (method − baseline) and the paper's gap."""
    pm, pb = paper_values(spec)
    paper_gap = None if pm is None or pb is None else pm - pb
    rows = []
    for r in plan.to_dict("records"):
        out = dict(r)
        per = {}
        for row in (spec.baseline, spec.method):
            sel = runs[(runs.rung == r["rung"]) & (runs.method == row) & (runs.status == "ok")] \
                if len(runs) else runs
            vals = sel[spec.metric].astype(float).dropna() if spec.metric in sel else pd.Series(dtype=float)
            # by seed: a seed that finished for one method only pairs with nothing
            per[row] = pd.Series(vals.to_numpy(), index=sel.loc[vals.index, "seed"].to_numpy()) \
                if "seed" in sel else vals.reset_index(drop=True)
            out[f"{row}_mean"] = float(vals.mean()) if len(vals) else math.nan
        paired = pd.concat([per[spec.method], per[spec.baseline]], axis=1).dropna()
        gaps = paired.iloc[:, 0] - paired.iloc[:, 1] if len(paired) else pd.Series(dtype=float)
        out["gap"] = float(gaps.mean()) if len(gaps) else math.nan
        out["gap_std"] = float(gaps.std(ddof=1)) if len(gaps) > 1 else math.nan
        out["paper_gap"] = math.nan if paper_gap is None else paper_gap
        out["n_seeds"] = int(len(gaps))
        used = runs[runs.rung == r["rung"]].dataset_used.dropna().unique() \
            if len(runs) and "dataset_used" in runs else []
        out["dataset_used"] = ", ".join(sorted(map(str, used))) if len(used) else None
        rows.append(out)
    return pd.DataFrame(rows)


def at_chance(spec: LadderSpec, table: pd.DataFrame) -> pd.Series:
    """Per rung: whether the baseline's mean is within ``spec.chance_margin_pp`` of chance, 100 / classes of
    the headline column's dataset (False where the table has no baseline mean)."""
    from ...data import DATASETS
    from ..spec.paper import get_paper

    col = f"{spec.baseline}_mean"
    if col not in table:
        return pd.Series(False, index=table.index)
    chance = 100.0 / DATASETS[get_paper(spec.paper).table(spec.table).column(spec.column).dataset].num_classes
    return table[col].astype(float) <= chance + spec.chance_margin_pp


def finding(spec: LadderSpec, table: pd.DataFrame) -> str:
    """Toward / away / not at all: the distance |gap − paper's gap| at the lowest and the highest
    rung that ran, compared with twice the larger std of the gap over seeds at those rungs where it is
    measured (≥ 2 seeds), else with ``spec.tolerance_pp`` (one seed).  A fixed floor under a measured
    std would hide a move smaller than it: FedABC's whole gap in the paper is 0.40 pp.  Rungs whose
    baseline is at chance (:func:`at_chance`) are named and left out: their gap measures nothing."""
    from ..spec.paper import get_paper

    pp = get_paper(spec.paper)
    name = pp.gain_label(spec.method, spec.baseline)
    where = f"{pp.table(spec.table).column(spec.column).label} ({spec.table})"
    measured = table[table.gap.notna()]
    chance = at_chance(spec, measured)
    ran = measured[~chance]
    skipped = ""
    if chance.any():
        rows = measured[chance]
        skipped = (f"; left out: rung{'s' if len(rows) > 1 else ''} "
                   + ", ".join(f"{int(r.rung)} ({pp.method_label(spec.baseline)} {r[f'{spec.baseline}_mean']:.2f} %)"
                               for _, r in rows.iterrows())
                   + f", the baseline at chance (within {spec.chance_margin_pp:g} pp of 100/classes): their gap "
                     "measures nothing")
    if measured.empty or table.paper_gap.isna().all():
        return f"Budget ladder, {name} at {where}: undecided (no rung ran, or the paper gives no value)"
    paper_gap = float(table.paper_gap.iloc[0])
    if ran.empty:
        return (f"Budget ladder, {name} at {where}: undecided (paper {paper_gap:+.2f}; {len(measured)} of "
                f"{len(table)} rungs ran{skipped})")
    lo, hi = ran.iloc[0], ran.iloc[-1]
    text = (f"Budget ladder, {name} at {where}: {lo.gap:+.2f} pp at rung {int(lo.rung)}"
            + (f", {hi.gap:+.2f} pp at rung {int(hi.rung)}" if len(ran) > 1 else "")
            + f" (paper {paper_gap:+.2f}; {len(measured)} of {len(table)} rungs ran{skipped})")
    if len(ran) < 2:
        return text + (": undecided (one budget ran where the baseline learns)" if skipped
                       else ": undecided (one budget ran)")
    stds = [s for s in (lo.gap_std, hi.gap_std) if isinstance(s, float) and not math.isnan(s)]
    tol = 2 * max(stds) if stds and max(stds) > 0 else spec.tolerance_pp  # a spread of 0 is never assumed
    d_lo, d_hi = abs(lo.gap - paper_gap), abs(hi.gap - paper_gap)
    if d_hi < d_lo - tol:
        verdict = "toward the paper's value"
    elif d_hi > d_lo + tol:
        verdict = "away from the paper's value"
    else:
        verdict = "not at all"
    return text + f": the gap moves {verdict} as the budget grows (distance {d_lo:.2f} → {d_hi:.2f} pp, ±{tol:.2f})"
