"""The clusters of FedConcat's stage 1, and Fig. 3: with vs without clustering.

:func:`cluster_view` orders a run's clients by cluster beside their true label distributions;
:func:`cluster_agreement` summarises it (cluster sizes, within-cluster spread, correlation with
the true distributions, agreement with K-means on Eq. 2).  Fig. 3 runs FedConcat with random
groups of clients (``fedconcat_clustering="random"``) beside Table 1's K-means run.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd

from . import reported as paper
from .cells import load_runs, partition_label
from ...repro.budget.gate import decide

__all__ = ["cluster_view", "cluster_agreement"]

_ARI = "ARI vs K-means on Eq. 2"


def cluster_view(result, class_counts: np.ndarray | None = None) -> pd.DataFrame:
    """A FedConcat(-ID) run's clustered label distributions (``result.label_distributions``: Eq. 2, or
    Eq. 3 for FedConcat-ID) and, given the clients' ``class_counts``, the true ones (Eq. 2), one row per
    client ordered by (cluster, client): columns client, cluster, ``p_<c>`` (clustered) and
    ``true_<c>``."""
    points = np.asarray(result.label_distributions, dtype=np.float64)
    clusters = np.asarray(result.clusters)
    frame = pd.DataFrame(points, columns=[f"p_{c}" for c in range(points.shape[1])])
    if class_counts is not None:
        from ...algorithms.fedconcat import label_distributions

        true = label_distributions(class_counts)
        frame = pd.concat([frame, pd.DataFrame(true, columns=[f"true_{c}" for c in range(true.shape[1])])], axis=1)
    frame.insert(0, "cluster", clusters)
    frame.insert(0, "client", np.arange(len(clusters)))
    return frame.sort_values(["cluster", "client"], kind="stable").reset_index(drop=True)


def cluster_agreement(view: pd.DataFrame, reference_clusters: Sequence[int] | None = None) -> dict:
    """Summary numbers of a :func:`cluster_view`: cluster sizes; with true distributions, the mean
    per-client Pearson correlation between the clustered and the true distribution (1 for Eq. 2) and the
    mean within-cluster spread of the true distributions (mean L1 distance to the cluster's mean); with
    ``reference_clusters`` (per client id), the adjusted Rand index against them."""
    from sklearn.metrics import adjusted_rand_score

    p = view[[c for c in view.columns if c.startswith("p_")]].to_numpy()
    out = {"sizes": view.cluster.value_counts().sort_index().tolist()}
    true_cols = [c for c in view.columns if c.startswith("true_")]
    if true_cols:
        t = view[true_cols].to_numpy()
        r = [np.corrcoef(a, b)[0, 1] if a.std() > 0 and b.std() > 0 else math.nan for a, b in zip(p, t)]
        out["mean_correlation"] = float(np.nanmean(r))
        spread = [np.abs(t[view.cluster.to_numpy() == k] - t[view.cluster.to_numpy() == k].mean(0)).sum(1).mean()
                  for k in sorted(view.cluster.unique())]
        out["within_cluster_l1"] = float(np.mean(spread))
    if reference_clusters is not None:
        ordered = view.sort_values("client")
        out["ari_vs_reference"] = float(adjusted_rand_score(np.asarray(reference_clusters), ordered.cluster))
    return out


# ------------------------------------------------------------------ the clusters study (.studies)
def _cluster_cells(profile, opts) -> list[dict]:
    """Table 1's FedConcat(-ID) runs in the study's columns."""
    return [{"column": c, "method": m, "config": decide(profile, paper.TABLE1.config(m, c), "table1")[0]}
            for c in opts.columns for m in opts.methods]


def _cluster_summary(grid, opts) -> dict:
    """``stats`` (one row per run: cluster sizes, spread, correlation, ARI against FedConcat's K-means)
    and ``views`` (:func:`cluster_view` per (column, method))."""
    from ...simulation import prepare

    ok = set(zip(grid.ok().column, grid.ok().method))
    runs = load_runs([c for c in _cluster_cells(opts.profile, opts) if (c["column"], c["method"]) in ok], opts.store)
    views, rows = {}, []
    for (column, method), result in runs.items():
        views[(column, method)] = cluster_view(result, prepare(result.config).class_counts)
        ref = runs.get((column, "fedconcat"))
        stats = cluster_agreement(views[(column, method)], None if ref is None else ref.clusters)
        rows.append({"column": column, "method": paper.METHOD_LABELS[method], "cluster sizes": stats["sizes"],
                     "within-cluster L1 of the true distributions": stats.get("within_cluster_l1"),
                     "correlation with the true distributions": stats.get("mean_correlation"),
                     _ARI: stats.get("ari_vs_reference")})
    return {"stats": pd.DataFrame(rows), "views": views}


def _cluster_findings(summary: dict, opts) -> list[str]:
    stats = summary["stats"]  # no ARI column when no FedConcat run was trained (the paper profile on a CPU)
    ari = stats.dropna(subset=[_ARI]) if _ARI in stats else pd.DataFrame(columns=[_ARI, "method"])
    ari = ari[ari.method == "FedConcat-ID"]
    return [f"FedConcat-ID's clusters agree with K-means on the true distributions with ARI {r[_ARI]:.2f} at "
            f"{r.column} (its inferred rows correlate {r['correlation with the true distributions']:.2f} with the "
            "true ones)" for _, r in ari.iterrows()]


# ------------------------------------------------------------------ Fig. 3 (.studies)
_GROUPINGS = (("kmeans", "with clustering (K-means)"), ("random", "without (random groups)"))


def _fig3_cells(profile, opts) -> list[dict]:
    """FedConcat with K-means (Table 1's run) and with random groups in each of the study's columns."""
    cells = []
    for column in opts.columns:
        for clustering, label in _GROUPINGS:
            cfg, _ = decide(profile, paper.TABLE1.config("fedconcat", column), "table1",
                            then={} if clustering == "kmeans" else {"fedconcat_clustering": "random"})
            cells.append({"column": column, "partition": partition_label(column), "clustering": label,
                          "method": "fedconcat", "config": cfg, "note": "" if cfg else "not run in this profile"})
    return cells


def _fig3_summary(grid, opts) -> pd.DataFrame:
    """Final accuracy per (partition, grouping), and the random groups' within-cluster L1 spread."""
    from ...simulation import prepare

    final = grid.aggregate(["partition", "clustering"])
    spread = []
    for c in _fig3_cells(opts.profile, opts):
        if c["config"] and c["clustering"] == _GROUPINGS[1][1]:
            res = load_runs([{**c, "method": "random"}], opts.store).get((c["column"], "random"))
            if res is not None:
                spread.append({"partition": c["partition"], "within-cluster L1, random groups": cluster_agreement(
                    cluster_view(res, prepare(res.config).class_counts))["within_cluster_l1"]})
    table = final[["partition", "clustering", "ours_mean", "ours_std", "n_seeds", "ours_seeds", "dataset_used"]]
    return table.merge(pd.DataFrame(spread), on="partition", how="left") if spread else table


def _fig3_findings(table: pd.DataFrame, opts) -> list[str]:
    pivot = table.pivot(index="partition", columns="clustering", values="ours_mean")
    return [f"Fig. 3 at {p}: FedConcat ends at {r.iloc[0]:.2f}% with K-means and {r.iloc[1]:.2f}% with random "
            f"groups ({r.iloc[0] - r.iloc[1]:+.2f} pp for clustering; the paper shows clustering ahead)"
            for p, r in pivot.iterrows() if r.notna().all()]
