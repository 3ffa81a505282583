"""The clients' models after one local update from a well-trained global model (§3, §5.5).

* Fig. 2 -- per-class accuracy before and after the local update, by class role (Definition 2);
* Fig. 6 -- the same after aggregation, FedAvg's loss against FedLC's;
* Fig. 7 -- t-SNE of the features of a missing, a minority and a majority class of one client.

The global model is a FedAvg run (:func:`.experiments.trained_cell`); the local updates and the
aggregate are the core's (:func:`.local_update.per_class_accuracy_before_after`).  A client's
classes are majority / minority / missing by :mod:`fedlib.repro.spec.class_roles`' ``"max_fraction"``
rule (fraction ½, fedlib's reading of Definition 2; the role that module calls "absent", FedLC's
outputs call "missing").  The studies' build functions; :mod:`.studies` declares them.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pandas as pd
import torch

from ...repro.spec import class_roles
from ...simulation import prepare
from .experiments import not_run_frame, trained_cell, trained_model
from .local_update import per_class_accuracy_before_after
from .statistics import extract_features

__all__ = ["ROLES", "client_roles", "before_after", "pick_tsne_client", "tsne_embedding"]

#: A client's class roles as FedLC's figures and tables name them.
ROLES = ("majority", "minority", "missing")


def client_roles(counts, majority_fraction: float = 0.5) -> list[str]:
    """'majority' / 'minority' / 'missing' per class of one client (Definition 2)."""
    named = dict(zip(class_roles.ROLES, ROLES))
    return [named[r] for r in class_roles.roles(counts, rule="max_fraction", fraction=majority_fraction)]


def before_after(result, methods: Sequence[str] = ("fedavg",), *, clients: Sequence[int] | None = None,
                 epochs: int = 1, aggregate: bool = True, return_params: bool = False):
    """Per-class test accuracy (%) of the global model, each client's locally
    updated model and their aggregate, for each local-update ``method``, all
    from the same trained model ``result`` (:func:`.local_update.per_class_accuracy_before_after`).

    Returns a DataFrame (method, client, class, n_train, role, acc_before,
    acc_after, acc_aggregated); with ``return_params`` also
    ``{method: {client: params}}``."""
    exp = prepare(result.config)
    frames, params = [], {}
    for m in methods:
        out = per_class_accuracy_before_after(result.params, exp, clients, method=m, epochs=epochs,
                                              aggregate=aggregate, return_params=return_params)
        frame, local = out if return_params else (out, None)
        frame = frame.copy()
        frame.insert(0, "method", m)
        frames.append(frame)
        if return_params:
            params[m] = local
    df = pd.concat(frames, ignore_index=True)
    roles = {k: client_roles(exp.class_counts[k]) for k in df.client.unique()}
    df["role"] = [roles[k][c] for k, c in zip(df.client, df["class"])]
    for col in ("acc_before", "acc_after", "acc_aggregated"):
        if col in df:
            df[col] = 100.0 * df[col]
    return (df, params, exp) if return_params else df


def pick_tsne_client(class_counts: np.ndarray, min_ratio: float = 3.0) -> tuple[int, dict[str, int]]:
    """A client with a missing, a minority and a majority class, like the paper's
    example (0, 448 and 2608 samples): among clients whose largest class has at
    least ``min_ratio`` times the samples of their largest minority class (any
    client if none does), the one with the largest minority class.  Returns
    (client, {role: class})."""
    candidates = []
    for k, counts in enumerate(np.asarray(class_counts)):
        roles = client_roles(counts)
        if not {"majority", "minority", "missing"} <= set(roles):
            continue
        maj = max((c for c, r in enumerate(roles) if r == "majority"), key=lambda c: counts[c])
        mino = max((c for c, r in enumerate(roles) if r == "minority"), key=lambda c: counts[c])
        miss = next(c for c, r in enumerate(roles) if r == "missing")
        candidates.append((counts[maj] >= min_ratio * counts[mino], counts[mino], -k,
                           (k, {"missing": miss, "minority": mino, "majority": maj})))
    if not candidates:
        raise ValueError("no client has a missing, a minority and a majority class")
    return max(candidates, key=lambda c: c[:3])[3]


def tsne_embedding(result, methods: Sequence[str] = ("fedavg", "fedlc"), *, samples_per_class: int = 200,
                   seed: int = 0, client: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 7: after one local epoch from the trained model ``result`` with each
    method, the features h(x) of test samples of one client's missing, minority
    and majority class, embedded in 2-D by t-SNE (sklearn).

    Returns ``(points, scores)``: points (method, role, class, n_train, x, y) and
    per method the silhouette score of the three classes in feature space and
    the 5-NN accuracy in the embedding (higher = better separated)."""
    from sklearn.manifold import TSNE
    from sklearn.metrics import silhouette_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.model_selection import cross_val_score

    exp = prepare(result.config)
    if client is None:
        client, chosen = pick_tsne_client(exp.class_counts)
    else:
        roles = client_roles(exp.class_counts[client])
        chosen = {r: max((c for c, rr in enumerate(roles) if rr == r), key=lambda c: exp.class_counts[client][c])
                  for r in ("missing", "minority", "majority") if r in roles}
    _, params, _ = before_after(result, methods, clients=[client], aggregate=False, return_params=True)
    rng = np.random.default_rng(seed)
    ty = exp.data.test_y.numpy()
    rows = np.concatenate([rng.permutation(np.flatnonzero(ty == c))[:samples_per_class] for c in chosen.values()])
    x = exp.data.test_x[torch.as_tensor(rows)]
    labels = ty[rows]
    role_of = {c: r for r, c in chosen.items()}
    points, scores = [], []
    for m in methods:
        feats = extract_features(exp.model, params[m][client], x).double().numpy()
        emb = TSNE(n_components=2, init="pca", random_state=seed,
                   perplexity=min(30.0, max(2.0, (len(rows) - 1) / 3))).fit_transform(feats)
        knn = cross_val_score(KNeighborsClassifier(5), emb, labels, cv=3).mean() if len(rows) >= 9 else math.nan
        scores.append({"method": m, "client": client,
                       "silhouette_features": float(silhouette_score(feats, labels)),
                       "knn5_accuracy_tsne": float(knn)})
        for (px, py), c in zip(emb, labels):
            points.append({"method": m, "role": role_of[int(c)], "class": int(c),
                           "n_train": int(exp.class_counts[client][int(c)]), "x": float(px), "y": float(py)})
    return pd.DataFrame(points), pd.DataFrame(scores)


# ----------------------------------------------------------------------------- the studies
def global_model_cells(experiment: str):
    """``build_cells`` of an analysis study: the one run of its global model."""
    return lambda profile, opts: [trained_cell(profile, experiment, opts)]


def fig2_summary(grid, opts) -> dict:
    """Fig. 2: ``per_class`` (client, class, n_train, role, accuracy before / after one local epoch
    of plain CE) and ``by_role`` (their means over the (client, class) pairs of each role);
    ``not_run`` (why) where the global model is not run here."""
    result = trained_model(grid, opts.store)
    if result is None:
        return {"not_run": not_run_frame("fig2", grid)}
    ba = before_after(result, ["fedavg"], aggregate=False)
    by_role = (ba.groupby("role")[["acc_before", "acc_after"]].mean().reindex(list(ROLES))
               .assign(change=lambda d: d.acc_after - d.acc_before).reset_index())
    by_role["classes"] = ba.groupby("role").size().reindex(by_role.role).values
    return {"result": result, "per_class": ba, "by_role": by_role}


def fig2_findings(summary, opts) -> list[str]:
    if "not_run" in summary:
        return []
    return [f"after one local epoch, {r.role} classes go from {r.acc_before:.1f}% to {r.acc_after:.1f}% "
            "(paper: majority up, minority near zero, missing zero)"
            for r in summary["by_role"].itertuples() if pd.notna(r.acc_after)]


def fig6_summary(grid, opts) -> dict:
    """Fig. 6: ``per_class`` (method, class: accuracy before, after the local update -- mean over
    the clients -- and after aggregation), ``table`` (their means over the classes, and the
    local-update accuracy by class role) and ``before_after`` (every client and class)."""
    result = trained_model(grid, opts.store)
    if result is None:
        return {"not_run": not_run_frame("fig6", grid)}
    ba = before_after(result, ["fedavg", "fedlc"], aggregate=True)
    per_class = (ba.groupby(["method", "class"])
                 .agg(before=("acc_before", "first"), after_local_update=("acc_after", "mean"),
                      after_aggregation=("acc_aggregated", "first"))
                 .reset_index())
    table = per_class.groupby("method")[["before", "after_local_update", "after_aggregation"]].mean().reset_index()
    role = ba.groupby(["method", "role"]).acc_after.mean().unstack().add_prefix("after local update, ").reset_index()
    return {"result": result, "before_after": ba, "per_class": per_class, "table": table.merge(role, on="method")}


def fig6_findings(summary, opts) -> list[str]:
    if "not_run" in summary:
        return []
    f = summary["table"].set_index("method")
    return [f"Fig. 6: after one local epoch the clients' models average {f.after_local_update['fedavg']:.1f}% "
            f"(FedAvg) vs {f.after_local_update['fedlc']:.1f}% (FedLC); after aggregation "
            f"{f.after_aggregation['fedavg']:.1f}% vs {f.after_aggregation['fedlc']:.1f}% (global model before: "
            f"{f.before['fedavg']:.1f}%)"]


def fig7_summary(grid, opts) -> dict:
    """Fig. 7: ``points`` (the t-SNE embedding of ``tsne_samples`` test samples per class) and
    ``scores`` (silhouette in feature space, 5-NN accuracy in the embedding), per loss."""
    result = trained_model(grid, opts.store)
    if result is None:
        return {"not_run": not_run_frame("fig7", grid)}
    points, scores = tsne_embedding(result, ["fedavg", "fedlc"], samples_per_class=opts.tsne_samples,
                                    seed=result.config.seed)
    return {"result": result, "points": points, "scores": scores}


def fig7_findings(summary, opts) -> list[str]:
    from ...repro.artefacts.figures import _label
    from . import PAPER

    if "not_run" in summary:
        return []
    return [f"Fig. 7: silhouette of the three classes' features {r.silhouette_features:.3f} with "
            f"{_label(r.method, PAPER)}" for r in summary["scores"].itertuples()]
