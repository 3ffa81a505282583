"""Fig. 4: the clients' label heterogeneity, the training samples of every class on every client
per Dir(β) (§Experiments, Setup: "the visualization method in previous work (Zhu, Hong, and Zhou
2021)").  The partitions are those Table 1's runs train on under the profile; nothing trains."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .. import PAPER
from ....repro.budget.gate import data_view, decide
from ..experiments import column_key
from ..reported import TABLE1

__all__ = ["partition_counts", "heterogeneity_stats"]

_COUNTS = ["beta", "client", "class", "count"]


def partition_counts(profile, dataset: str, betas, seed: int) -> pd.DataFrame:
    """The training samples of every class on every client (columns beta, client, class, count) for
    each Dir(β) of ``betas``: the partitions of Table 1's FedAvg cells on ``dataset`` under
    ``profile`` (the ``fig4`` experiment's settings).  Empty when the dataset is not run."""
    from ....config import Config
    from ....simulation import prepare

    rows = []
    for beta in betas:
        cfg, _ = decide(profile, TABLE1.config("fedavg", column_key(dataset, beta)), "fig4")
        if cfg is None:
            return pd.DataFrame(columns=_COUNTS)
        counts = prepare(Config.from_dict(data_view(cfg, seed, personal_eval_every=0))).class_counts
        rows += [{"beta": float(beta), "client": k, "class": y, "count": int(n)}
                 for k, row in enumerate(counts) for y, n in enumerate(row)]
    return pd.DataFrame(rows)


def heterogeneity_stats(counts: pd.DataFrame) -> pd.DataFrame:
    """Per Dir(β) of :func:`partition_counts`: clients, mean classes held per client, mean share
    of a client's largest class, and the smallest / median / largest client."""
    recs = []
    for beta, grp in counts.groupby("beta", sort=False):
        m = grp.pivot_table(index="client", columns="class", values="count", aggfunc="sum").to_numpy(float)
        size = m.sum(1)
        recs.append({"beta": float(beta), "clients": len(m), "classes_per_client": float((m > 0).sum(1).mean()),
                     "largest_class_share": float((m.max(1) / np.maximum(size, 1)).mean()),
                     "min_size": int(size.min()), "median_size": float(np.median(size)), "max_size": int(size.max())})
    return pd.DataFrame(recs)


def build_summary(grid, opts) -> dict:
    """``counts`` (dataset -> :func:`partition_counts`, empty where not run), ``not_run`` (dataset ->
    why: a dataset absent on this machine) and ``stats`` (:func:`heterogeneity_stats` of every dataset
    that ran, with its label)."""
    from ....data import DatasetNotFoundError

    profile = opts.profile
    seed = int(profile.seeds_for("fig4")[0])
    counts, not_run, stats = {}, {}, []
    for dataset in opts.datasets:
        try:
            counts[dataset] = partition_counts(profile, dataset, opts.betas, seed)
        except DatasetNotFoundError as err:
            not_run[dataset] = err.reason
            counts[dataset] = pd.DataFrame(columns=_COUNTS)
        if len(counts[dataset]):
            stats.append(heterogeneity_stats(counts[dataset]).assign(dataset=PAPER.dataset_label(dataset)))
    return {"counts": counts, "not_run": not_run,
            "stats": pd.concat(stats, ignore_index=True) if stats else pd.DataFrame()}
