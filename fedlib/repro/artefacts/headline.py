"""One headline figure per paper: its method minus its baseline, ours against the paper's, column by column.

``figures/<paper>/headline.{png,pdf,json}``: one panel per scale that holds the headline table (quick,
paper on a CPU, the GPU runs), every column of the paper's table on the x axis, the paper's gap (grey)
beside ours (coloured; error bars, where both have ≥ 2 seeds: the std over seeds of the gap, of the per-seed
differences where both cells hold the same seeds, else √(s_method² + s_baseline²); :func:`gap_cells`).  A
column with no value of ours is labelled in place with why ("not run: needs a GPU", "not run: data absent"),
never dropped.  Saved through
:func:`fedlib.repro.artefacts.saving.save_figure`, so the figure rules apply.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .claim_evidence import table_frame
from .claims import budget_share, claims_of, gap_cells
from .not_run import short_reason

__all__ = ["headline_figure"]

_SCALES = ("quick", "paper", "GPU")
_COLOURS = {"quick": "#1f77b4", "paper": "#d62728", "GPU": "#2ca02c"}


def _paper_gap(table, q, column: str) -> float:
    a, b = table.value(q.method, column), table.value(q.baseline, column)
    return np.nan if a is None or b is None else round(a.mean - b.mean, 6)


def _distinct(panels: list, q, columns: list) -> list:
    """``panels`` (scale, frame) with each set of runs drawn once: a scale whose cells of ours are those of an
    earlier one (FedLC's paper profile reads its Table 1 from the GPU runs) joins its panel ("paper = GPU")."""
    out, seen = [], {}
    for scale, frame in panels:
        cells = gap_cells(frame, q, columns)
        key = tuple((c["column"], round(float(c.get("ours", np.nan)), 9), c.get("n")) for c in cells if c["ran"])
        if key and key in seen:
            i = seen[key]
            out[i] = (f"{out[i][0]} = {scale}", out[i][1])
            continue
        seen[key] = len(out)
        out.append((scale, frame))
    return out


def _shown(claim) -> set[str]:
    """The names of ``claim``'s parts that the figure draws: a gap of its first part's table, method and baseline
    (in any column).  Another quantity (FedLC's masked reading, FEDIC's study where FedAvg learns) is no bar here."""
    q = claim.quantity
    key = lambda p: (type(p), getattr(p, "table", None), getattr(p, "method", None), getattr(p, "baseline", None))
    return {p.name for p in claim.parts if key(p.quantity) == key(q)}


def _decided_elsewhere(frame, drawn: list[str], shown: set[str]) -> list[str]:
    """The headline's parts whose best scale (the ledger's, :func:`.claims_text.best_rows`) is not a panel of the
    figure (a budget ladder's rung, say), or whose quantity no panel draws (:func:`_shown`), each as one line:
    where the ledger decides it, ours and the verdict."""
    from .claims_text import best_rows, ours_text

    if frame is None:
        return []
    best = best_rows(frame)
    on_panel = best.scale.isin(drawn)
    if "part" in best:  # a part the panels draw: its scale must be one of them
        on_panel &= best.part.fillna("").astype(str).isin(shown)
    best = best[(best.claim == "headline") & (best.verdict != "not tested") & ~on_panel]
    return [f"{r.part or 'headline'}: the ledger decides it at {r.scale} scale ({r.dataset_used}, "
            f"{100 * r.budget_share:.3g} % of the paper's budget): {ours_text(r)}, {r.verdict}"
            for r in best.itertuples()]


def headline_figure(paper: str, figures_root: str | Path, ledger=None):
    """Draw and save ``paper``'s headline figure; returns the saved paths (None: no scale of ours holds its table).
    ``ledger``: the paper's claims ledger (:func:`.claims.evaluate`), to name under the panels a best scale that
    is none of them."""
    import matplotlib.pyplot as plt

    from ..spec.paper import get_paper
    from .figure_rules import declare
    from .saving import save_figure

    pp = get_paper(paper)
    root = Path(figures_root) / paper
    claim = next(c for c in claims_of(paper) if c.headline)
    q = claim.quantity
    table = pp.table(q.table)
    columns = [c.key for c in table.columns]
    panels = [(s, *table_frame(root, pp, s, q.table)) for s in _SCALES]
    panels = _distinct([(s, f) for s, f, _ in panels if f is not None], q, columns)
    if not panels:  # no scale of ours has the headline table (a figures root with smoke outputs only): no figure
        return None
    fig, axes = plt.subplots(len(panels), 1, figsize=(max(6.5, 0.62 * len(columns) + 2), 2.5 * len(panels) + 0.6),
                             squeeze=False, sharex=True)
    x = np.arange(len(columns))
    name = pp.gain_label(q.method, q.baseline)
    datasets, stand_in, seeds_text = set(), {}, []
    for ax, (scale, frame) in zip(axes[:, 0], panels):
        cells = gap_cells(frame, q, columns)
        paper_gap = [_paper_gap(table, q, c) for c in columns]
        ours = [c.get("ours", np.nan) if c["ran"] else np.nan for c in cells]
        ran = [c for c in cells if c["ran"]]
        # seeds per column: decide may have added seeds to some columns only; each column's error bar is its own
        lo, n = min((c["n"] for c in ran), default=1), max((c["n"] for c in ran), default=1)
        # NaN where a column has one seed: no bar drawn there, not a zero-height cap
        err = [c.get("std") if c["ran"] and c["n"] >= 2 and c.get("std") is not None else np.nan for c in cells]
        ax.bar(x - 0.2, paper_gap, 0.4, color="0.65", label="paper")
        used = sorted({f"{pp.dataset_label(c['used'])}" + (f" for {pp.dataset_label(c['dataset'])}"
                                                           if c["used"] != c["dataset"] else "") for c in ran})
        # the budget of the claim's own column where it ran (the claims ledger's), else the first column that ran
        at = next((c for c in ran if c["column"] in q.columns), ran[0]) if ran else None
        share = budget_share(pp, scale.split(" = ")[0], q.table, q.method, at["column"]) \
            if ran and "GPU" not in scale else (at.get("share") if ran else None)
        seeds = f"{n} seed{'s' if n != 1 else ''}" if lo == n else f"{lo}–{n} seeds: n under each value"
        label = f"ours, {scale} ({seeds})" if ran else "_nolegend_"  # no entry for nothing
        colour = _COLOURS[scale.split(" = ")[0]]
        ax.bar(x + 0.2, ours, 0.4, color=colour, label=label,
               yerr=err if n >= 2 and ran else None, capsize=2, error_kw={"lw": 0.8})
        if n >= 2 and ran:
            declare(ax, seeds=n)
            seeds_text.append((scale, n, all(c["paired"] for c in ran if c["n"] >= 2), lo))
        top = np.nanmax(np.abs(np.r_[paper_gap, ours, 1.0]) + np.r_[np.zeros(len(paper_gap)), np.nan_to_num(err), 0.0])
        room = 1.15 if lo == n else 1.4  # two lines of text (value and n) above a bar
        ax.set_ylim(-room * top, room * top)
        ax.set_xlim(-0.6, len(columns) - 0.4)  # every column's two slots: a bar without a value sets no limit
        # gaps under 1 pp (FedABC's) read to two decimals: +0.16 is not +0.2
        digits = 2 if np.nanmax(np.abs(np.r_[ours, 0.0])) < 1 else 1
        for i, c in enumerate(cells):
            if paper_gap[i] == 0:
                ax.text(x[i] - 0.2, 0, "0", ha="center", va="bottom", fontsize=7, color="0.25")
            if c["ran"]:  # the value, so that a gap near 0 is read, not missed
                e = 0.0 if np.isnan(err[i]) else err[i]
                y = ours[i] + (e if ours[i] >= 0 else -e)
                mark = "" if lo == n else f"\nn={c['n']}" if ours[i] >= 0 else f"n={c['n']}\n"
                value = f"{ours[i]:+.{digits}f}"
                text = f"{value}{mark}" if ours[i] >= 0 else f"{mark}{value}"
                # a little off the whisker's cap, so that the cap does not cross the text
                ax.annotate(text, (x[i] + 0.2, y), xytext=(0, 2 if ours[i] >= 0 else -2), textcoords="offset points",
                            ha="center", va="bottom" if ours[i] >= 0 else "top", fontsize=7, color=colour,
                            linespacing=0.95)
            else:
                # from the bottom of the axes upward, in our bar's slot: inside the axes whatever the paper's sign
                ax.text(x[i] + 0.2, 0.03, short_reason(c.get("note"), scale), rotation=90, ha="center",
                        va="bottom", fontsize=7, color="0.25", transform=ax.get_xaxis_transform())
        ax.axhline(0, color="0.3", lw=0.6)
        where = f"trained on {', '.join(used)}" if used else "no column ran"
        budget = f", {100 * share:.3g} % of the paper's budget" if share else ""
        # how well the baseline learns here: a large gap over a baseline that barely learns says little
        base = sorted(c["means"][1] for c in ran)
        learns = "" if not base else f"; {pp.method_label(q.baseline)} at " + (
            f"{base[0]:.1f} %" if len(base) == 1 else f"{base[0]:.1f}–{base[-1]:.1f} %")
        ax.set_title(f"{scale}: {where}{budget}{learns}", fontsize=8, loc="left")
        ax.set_ylabel(f"{name} (pp)", fontsize=8)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
        for c in ran:
            datasets.add(c["used"])
            if c["used"] != c["dataset"]:
                stand_in[c["dataset"]] = c["used"]
    axes[-1, 0].set_xticks(x)
    axes[-1, 0].set_xticklabels([table.column(c).label for c in columns], rotation=35, ha="right", fontsize=7)
    fig.suptitle(f"{pp.title}: {name}, ours against the paper's, per column of {table.id}", fontsize=9)
    fig.tight_layout()
    elsewhere = _decided_elsewhere(ledger, [x for s, _ in panels for x in s.split(" = ")],  # "paper = GPU": both
                                   _shown(claim))
    if elsewhere:  # the verdict the README gives comes from no panel here: said under them, in the figure
        fig.text(0.01, -0.06, "\n".join(elsewhere), ha="left", va="top", fontsize=8, color="firebrick",
                 transform=fig.transFigure)
    over = "; ".join(f"{scale}: std over {n} seeds" + (", of the per-seed differences" if paired else "")
                     + (" where a column has them (n under each value; none on a one-seed column)" if lo < n else "")
                     for scale, n, paired, lo in seeds_text)
    bars = (f"Error bars: the std of the difference over seeds ({over}); none where a scale has one seed. "
            if seeds_text else "No error bars: every scale that ran has one seed. ")
    caption = (f"{name} per column of {table.title} ({table.id}): the paper's gap (grey) and ours at each scale "
               f"that ran. {bars}Each panel's title gives {pp.method_label(q.baseline)}'s accuracy there (over the "
               f"columns that ran). Columns with no value of ours say why, in place.").strip()
    return save_figure(fig, "headline", root, title=f"{pp.title}: headline gap", caption=caption, close=True,
                       datasets=sorted(datasets), stand_in=stand_in, experiment=None, paper=paper,
                       claim=claim.id)
