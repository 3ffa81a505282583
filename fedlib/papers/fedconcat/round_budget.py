"""The baselines' round budget ("same communication cost") and how Table 1 reads under other budgets.

:func:`budget_table` is the arithmetic of :mod:`.analysis` at the paper's K, T_e, T_c and at the
profile's; :func:`budget_sensitivity` reads Table 1's baseline curves at the R of each way of
counting (:data:`.profiles.BUDGET_VARIANTS`), FedConcat's final accuracy being the reference, and
:func:`ranking_summary` gives FedConcat's rank and margin per (column, way of counting).
"""

from __future__ import annotations

import math
from typing import Sequence

import pandas as pd

from . import reported as paper
from .analysis import budget_of, model_sizes
from .cells import BASELINES, FEDCONCAT
from ...repro.budget.gate import decide
from ...repro.spec.profiles import Profile

__all__ = ["budget_table", "budget_variants", "accuracy_at_rounds", "budget_sensitivity", "ranking_summary",
           "budget_configs", "budget_rounds"]


def budget_table(profile: Profile, datasets: Sequence[str] = ("fmnist", "cifar10", "svhn")) -> pd.DataFrame:
    """FedConcat's communication per client in rounds of one cluster model, by stage, at the paper's
    K, T_e, T_c and at the profile's, for each dataset's model (notes §2)."""
    from ...data import DATASETS

    scales = [("paper", {})] + ([(profile.name, profile.image)] if profile.name != "paper" else [])
    rows = []
    for scale, image in scales:
        for ds in datasets:
            cfg = {"dataset": ds, "model": paper.SETUP["model"],
                   **{k: image.get(k, paper.SETUP[k]) for k in ("num_clusters", "encoder_rounds", "classifier_rounds")}}
            spec = DATASETS[ds]
            sizes = model_sizes(cfg["model"], spec.num_classes, tuple(spec.input_shape))
            b = budget_of(cfg)
            head = cfg["num_clusters"] * sizes["feature_dim"] * spec.num_classes + spec.num_classes
            rows.append({"scale": scale, "dataset": paper.DATASET_LABELS[ds], "model": cfg["model"],
                         "M (one model)": sizes["model_params"], "|E| (encoder)": sizes["encoder_params"],
                         "|C| (classifier)": head, "K": cfg["num_clusters"], "T_e": cfg["encoder_rounds"],
                         "T_c": cfg["classifier_rounds"], "stage 2": b.encoder_rounds, "broadcast": b.broadcast,
                         "stage 3": b.classifier, "total": b.total, "R (baseline rounds)": b.rounds})
    return pd.DataFrame(rows)


def budget_variants(config: dict, variants: dict) -> pd.DataFrame:
    """The baselines' round budget of a configuration under each way of counting
    (``variants``: name -> :func:`.analysis.budget_of` keywords)."""
    rows = []
    for name, kw in variants.items():
        b = budget_of(config, **kw)
        rows.append({"variant": name, "total": b.total, "rounds": b.rounds})
    return pd.DataFrame(rows)


def accuracy_at_rounds(histories: pd.DataFrame, rounds: int, by: Sequence[str] = ("column", "method")) -> pd.DataFrame:
    """Test accuracy (%) at round ``rounds`` of every run in ``histories`` (grid histories of
    one-stage runs), averaged over seeds per ``by``; NaN where a run was not evaluated at that round
    (it stopped earlier)."""
    by = list(by)
    hit = histories[histories["round"] == rounds]
    out = hit.groupby(by, sort=False).test_accuracy.mean().rename("accuracy").reset_index()
    keys = histories[by].drop_duplicates()
    return keys.merge(out, on=by, how="left")


def budget_sensitivity(grid, variants: dict, configs: dict[str, dict]) -> pd.DataFrame:
    """How Table 1's comparison reads under other round budgets.

    ``grid``: Table 1's grid (labels row, column, method); ``configs``: column -> a configuration of
    that column (its K, T_e, T_c and model set the budget).  For each column and variant: the
    variant's R, each baseline's accuracy at round R of its run (NaN beyond the run), FedConcat's and
    FedConcat-ID's final accuracy (their communication is the reference), and each method's rank
    (1 = best) among those with a value.  One row per (column, variant, method)."""
    runs = grid.ok()
    hist = grid.histories
    if "stage" in hist:
        hist = hist[hist["stage"].isna()]
    rows = []
    for column, cfg in configs.items():
        for name, kw in variants.items():
            r = budget_of(cfg, **kw).rounds
            acc = {}
            base = hist[(hist.column == column) & hist.method.isin(BASELINES)]
            for rec in accuracy_at_rounds(base, r).itertuples(index=False):
                acc[rec.method] = rec.accuracy
            for m in FEDCONCAT:
                final = runs[(runs.column == column) & (runs.method == m)].accuracy
                if len(final):
                    acc[m] = float(final.mean())
            ranked = pd.Series(acc, dtype=float).dropna().rank(ascending=False, method="min")
            for m, a in acc.items():
                rows.append({"column": column, "variant": name, "rounds": r, "method": m, "accuracy": a,
                             "rank": float(ranked.get(m, math.nan))})
    return pd.DataFrame(rows, columns=["column", "variant", "rounds", "method", "accuracy", "rank"])


def ranking_summary(sensitivity: pd.DataFrame) -> pd.DataFrame:
    """Per column and variant: R, FedConcat's rank among the methods measured at that budget, the best
    baseline and FedConcat − best baseline (pp), and how many baselines reached round R."""
    rows = []
    for (column, variant), g in sensitivity.groupby(["column", "variant"], sort=False):
        base = g[g.method.isin(BASELINES)].dropna(subset=["accuracy"])
        fc = g[g.method == "fedconcat"]
        best = base.loc[base.accuracy.idxmax()] if len(base) else None
        fc_acc = float(fc.accuracy.iloc[0]) if len(fc) else math.nan
        rows.append({"column": column, "variant": variant, "rounds": int(g.rounds.iloc[0]),
                     "baselines measured": f"{len(base)}/{len(BASELINES)}",
                     "FedConcat rank": fc["rank"].iloc[0] if len(fc) else math.nan,
                     "best baseline": paper.METHOD_LABELS[best.method] if best is not None else "—",
                     "best baseline accuracy": float(best.accuracy) if best is not None else math.nan,
                     "FedConcat − best baseline": fc_acc - float(best.accuracy) if best is not None else math.nan})
    return pd.DataFrame(rows, columns=["column", "variant", "rounds", "baselines measured", "FedConcat rank",
                                       "best baseline", "best baseline accuracy", "FedConcat − best baseline"])


def budget_configs(profile: Profile, grid, columns: Sequence[str]) -> dict[str, dict]:
    """The ``columns`` where Table 1's ``grid`` ran whose FedAvg cell this profile configures, each with
    that configuration (its K, T_e, T_c and model set the budget).  On a CPU the paper profile's Table 1
    baselines need a GPU: then none."""
    ran = set(grid.ok().column)
    configs = {c: decide(profile, paper.TABLE1.config("fedavg", c), "table1")[0] for c in columns if c in ran}
    return {c: cfg for c, cfg in configs.items() if cfg is not None}


def budget_rounds(configs: dict[str, dict], variants: dict) -> pd.DataFrame:
    """R of every way of counting (:func:`budget_variants`) per column of ``configs``; empty without one."""
    frames = [budget_variants(cfg, variants).assign(column=c) for c, cfg in configs.items()]
    return (pd.concat(frames, ignore_index=True) if frames
            else pd.DataFrame(columns=["variant", "total", "rounds", "column"]))


# ------------------------------------------------------------------ the studies (fedlib.papers.fedconcat.studies)
def _rounds_summary(grid, opts) -> pd.DataFrame:
    return budget_table(opts.profile, opts.datasets)


def _rounds_findings(budget: pd.DataFrame, opts) -> list[str]:
    return [f"same communication cost at the paper's K, T_e, T_c: {r['R (baseline rounds)']} baseline rounds on "
            f"{r.dataset}" for _, r in budget[budget.scale == "paper"].iterrows()]


def _cells(profile, opts) -> list[dict]:
    from .cells import table1_cells

    return table1_cells(profile, opts.columns)


def _variants(opts) -> dict:
    from .profiles import BUDGET_VARIANTS

    return {v: BUDGET_VARIANTS[v] for v in opts.variants}


def _summary(grid, opts) -> dict:
    """``ranking`` (:func:`ranking_summary`), ``rounds`` (R per column and way of counting), ``variants``."""
    variants = _variants(opts)
    configs = budget_configs(opts.profile, grid, opts.columns)
    return {"ranking": ranking_summary(budget_sensitivity(grid, variants, configs)),
            "rounds": budget_rounds(configs, variants), "variants": variants}


def _findings(summary: dict, opts) -> list[str]:
    ranking, default = summary["ranking"], next(iter(summary["variants"]))
    ranks = ranking.dropna(subset=["FedConcat rank"])
    if not len(ranks):
        return []
    first = ranks[ranks["FedConcat rank"] == 1]
    changed = [c for c, g in ranks.groupby("column") if g["FedConcat rank"].nunique() > 1]
    return [f"FedConcat is the best method in {len(first)} of {len(ranks)} (column, budget) pairs measured "
            f"({int((first.variant == default).sum())} of {int((ranks.variant == default).sum())} columns at the "
            f"default budget)",
            f"FedConcat's rank changes with the way of counting in {len(changed)} of {ranks.column.nunique()} columns"
            + (f" ({', '.join(changed)})" if changed else "")]
