"""Does training in another precision (tf32, bf16) move a GPU run more than changing its seed does?
:func:`precision_check` compares the runs the store holds in both float32 and that precision."""

from __future__ import annotations

from .budget.cell_progress import progress

__all__ = ["precision_check"]


def _seed_pairs(curves, at_round: dict) -> list[float]:
    """|accuracy difference| (pp) between two seeds of one row and column, at ``at_round[(row, column)]``: every
    pair of seeds evaluated there."""
    out = []
    for (row, col), g in curves.groupby(["row", "column"]):
        at = at_round.get((row, col))
        hit = g[g["round"] == at].drop_duplicates("seed").set_index("seed").test_accuracy
        vals = list(hit.values)
        out += [abs(a - b) for i, a in enumerate(vals) for b in vals[i + 1:]]
    return out


def precision_check(paper: str, table: str, out_dir, *, seeds, precision: str, profile: str = "paper", rows=None,
                    columns=None, device: str = "cuda", store=None, trained_at: str | None = None) -> dict:
    """Does training in ``precision`` move a run more than changing its seed does?  For every run (row, column,
    seed) held in the store both in float32 and in ``precision``: the two accuracies at the furthest round both
    evaluated, and their difference; beside it, the difference between two seeds of one row and precision at
    that round (the yardstick: how far a run moves when only its seed changes).  Writes
    ``<table>_precision_check`` (a table) and ``<table>_precision_curves`` (the difference round by round,
    the seed-to-seed band behind it) into ``out_dir``; returns ``{"pairs", "seed_diffs", "verdict"}``.
    ``verdict`` is ``within`` (the mean same-seed difference is at most the mean seed-to-seed one), ``beyond``,
    or ``no pair`` / ``no yardstick`` where the store holds no run in both precisions / no two seeds."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from .artefacts.saving import save_figure, save_table
    from .spec.paper import get_paper

    if precision == "float32":
        raise ValueError("precision must be another than float32 (tf32 or bf16): it is checked against float32")
    pp = get_paper(paper)
    kw = dict(seeds=seeds, profile=profile, rows=rows, columns=columns, device=device, store=store)
    (ref_runs, ref), (new_runs, new) = (progress(paper, table, precision=p, **kw) for p in ("float32", precision))
    both = ref.merge(new, on=["row", "column", "seed", "round"], suffixes=("_float32", f"_{precision}"))
    both["diff_pp"] = both[f"test_accuracy_{precision}"] - both["test_accuracy_float32"]
    pairs = both.loc[both.groupby(["row", "column", "seed"])["round"].idxmax()] if not both.empty else both
    pairs = pairs.reset_index(drop=True)
    # as the gains (compared): only runs compared at the furthest round of their column count; a difference at
    # round 65 is no draw of one at round 400
    top = pairs.groupby("column")["round"].transform("max") if len(pairs) else pairs["round"]
    behind, pairs = pairs[pairs["round"] != top], pairs[pairs["round"] == top].reset_index(drop=True)
    at = {(row, col): int(r) for row in set(ref.row) | set(new.row)
          for col, r in pairs.groupby("column")["round"].max().items()}
    seed_diffs = _seed_pairs(ref, at) + _seed_pairs(new, at)
    mean_prec = float(pairs.diff_pp.abs().mean()) if len(pairs) else float("nan")
    mean_seed = sum(seed_diffs) / len(seed_diffs) if seed_diffs else float("nan")
    verdict = ("no pair" if pairs.empty else "no yardstick" if not seed_diffs else
               "within" if mean_prec <= mean_seed else "beyond")
    text = {"no pair": f"No run is in the store both in float32 and in {precision} yet.",
            "no yardstick": f"{precision} moves a run by {mean_prec:.2f} pp on average ({len(pairs)} runs); no two "
                            "seeds of one row reached the same round, so there is no seed-to-seed yardstick yet.",
            "within": f"{precision} moves a run by {mean_prec:.2f} pp on average ({len(pairs)} runs, largest "
                      f"{pairs.diff_pp.abs().max():.2f}): within the {mean_seed:.2f} pp that changing only the seed "
                      f"moves one ({len(seed_diffs)} seed pairs).",
            "beyond": f"{precision} moves a run by {mean_prec:.2f} pp on average ({len(pairs)} runs, largest "
                      f"{pairs.diff_pp.abs().max():.2f}): more than the {mean_seed:.2f} pp that changing only the "
                      f"seed moves one ({len(seed_diffs)} seed pairs)."}[verdict]
    if len(behind):
        text += (" Not counted yet, a run still training: " + ", ".join(
            f"{r.row} seed {r.seed} ({r.diff_pp:+.2f} at round {r['round']})" for _, r in behind.iterrows()) + ".")
    held = {(r.row, r.column, r.seed) for r in pairs.itertuples()} if len(pairs) else set()

    def engines(runs) -> str:  # engines, budgets, layouts of the runs compared (all, where none is compared yet)
        mine = runs[[(r, c, s) in held for r, c, s in zip(runs.row, runs.column, runs.seed)]] if held else runs
        layouts = mine.memory_format if "memory_format" in mine else ["model"] * len(mine)
        return " and ".join(sorted(f"{e} engine, {b:g} GB" + ("" if f == "model" else f", {f}")
                                   for e, b, f in set(zip(mine.engine, mine.memory_budget_gb, layouts))))

    caption = (f"{paper} {table}: the same runs (method, column, seed) trained on a GPU in float32 ("
               f"{engines(ref_runs)}) and in {precision} ({engines(new_runs)}), compared at the furthest round "
               f"both evaluated. {text} The yardstick: the accuracy difference between two seeds of one method and "
               f"precision at that round. The engines, memory budgets (how many clients are stacked) and layouts "
               f"compute the same mathematics and differ in rounding only (tests/test_vectorized.py, "
               f"tests/test_memory_format.py); what is compared is the whole arithmetic a run in {precision} would "
               f"train in.")
    meta = {"profile": profile, "experiment": table, "seeds": [int(s) for s in seeds], "device": device,
            "precision": f"float32, {precision}", "verdict": verdict, "trained_at": trained_at,
            "parameters": {"rows": sorted(set(ref_runs.row)), "columns": sorted(set(ref_runs.column))},
            "command": "python -m fedlib.repro.lease --import"}
    cols = ["row", "column", "seed", "round", "test_accuracy_float32", f"test_accuracy_{precision}", "diff_pp"]
    save_table(pairs[cols] if len(pairs) else pd.DataFrame(columns=cols), f"{table}_precision_check", out_dir,
               title=f"{paper} {table}: {precision} against float32, run by run", caption=caption, **meta)
    # one panel a method (and column): the methods' differences never hide under each other; in a panel the
    # seeds differ in dash and marker
    panels = sorted(set(zip(both.row, both.column)), key=lambda rc: (rc[1], rows.index(rc[0]) if rows else 0)) \
        if not both.empty else [(None, None)]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.4 * len(panels) + 1.6, 3.6), sharey=True, squeeze=False)
    for ax, (row, col) in zip(axes[0], panels):
        if seed_diffs:  # behind the curves: the band a seed change spans
            ax.axhspan(-mean_seed, mean_seed, color="0.88", zorder=0,
                       label=f"± mean difference between\ntwo seeds ({mean_seed:.2f} pp)")
        ax.axhline(0, color="0.3", lw=0.8, zorder=1)
        mine = both[(both.row == row) & (both.column == col)] if row is not None else both
        for i, (seed, g) in enumerate(mine.groupby("seed")):  # later seeds: larger hollow markers, on top, so
            # that a point another seed shares (a run with one evaluation, say) rings it instead of hiding under it
            ax.plot(g["round"], g.diff_pp, color=pp.method_colors.get(row, "0.3"), lw=1.0, ls=("-", "--", ":", "-.")[i % 4],
                    marker="osD^v"[i % 5], ms=3 + 2.5 * i, mfc="none" if i else None, mew=1.2, zorder=3 + i,
                    label=f"seed {seed}")
        ax.set_title(f"{pp.method_label(row)}" + (f", {col}" if len(set(both.column)) > 1 else "")
                     if row is not None else f"no run in both float32 and {precision} yet", fontsize=9)
        ax.set_xlabel("communication round")
    ax = axes[0][-1]  # one legend, beside the last panel (the seeds' styles are the same in every panel)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0), frameon=False)
    axes[0][0].set_ylabel(f"accuracy, {precision} − float32 (pp)")
    fig.suptitle(f"{paper} {table}: a run in {precision} against the same run in float32\n{text}", fontsize=8,
                 wrap=True)
    fig.tight_layout()
    save_figure(fig, f"{table}_precision_curves", out_dir, title=f"{paper} {table}: {precision} against float32",
                caption=caption, close=True, **meta)
    return {"pairs": pairs, "seed_diffs": seed_diffs, "verdict": verdict}
