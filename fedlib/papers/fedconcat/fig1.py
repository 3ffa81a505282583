"""Fig. 1 measured: two clients' local models and their average under label skew.

From the shared initial model, the two clients of a Table 1 partition whose classes overlap
least each train E local epochs (the first round of FedAvg) and their n_k-weighted average is
formed; every model is tested on client A's classes, client B's classes and all classes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import reported as paper
from ...repro.budget.gate import data_view, decide
from ...repro.spec.profiles import Profile

__all__ = ["FIG1_MODELS", "FIG1_TESTS", "disjoint_pair", "fig1_two_clients"]

#: The models and test sets of Fig. 1, in plot order.
FIG1_MODELS = ("initial model", "client A's local model", "client B's local model", "average of the two (FedAvg)")
FIG1_TESTS = ("client A's classes", "client B's classes", "all classes")


def disjoint_pair(class_counts: np.ndarray) -> tuple[int, int]:
    """The two clients whose label distributions overlap least (Σ_c min(P_a(c), P_b(c)); 0 = disjoint
    classes), the lowest indices first among ties."""
    p = np.asarray(class_counts, dtype=np.float64)
    p = p / p.sum(1, keepdims=True)
    best = None
    for a in range(len(p)):
        for b in range(a + 1, len(p)):
            overlap = float(np.minimum(p[a], p[b]).sum())
            if best is None or overlap < best[0] - 1e-12:
                best = (overlap, a, b)
    if best is None:
        raise ValueError("Fig. 1 needs at least two clients")
    return best[1], best[2]


def fig1_two_clients(profile: Profile, column: str, local_epochs: int, seed: int) -> tuple[pd.DataFrame, dict]:
    """Fig. 1 measured in Table 1's ``column`` (its FedAvg cell under ``profile``): each model's test
    accuracy (%) on client A's classes, client B's classes and all classes.

    Returns ``(accuracy, info)``: accuracy (model, test set, accuracy) and info (clients, their
    classes and sample counts, the configuration)."""
    from ... import tree
    from ...config import Config
    from ...simulation import evaluate, prepare, single_thread, train_locally

    cfg, _ = decide(profile, paper.TABLE1.config("fedavg", column), "table1")
    if cfg is None and not profile.setting("fig1", "trains", True):  # the table's cell needs a GPU; two clients do not
        cfg, _ = decide(profile, paper.TABLE1.config("fedavg", column), "fig1")
    if cfg is None:
        raise LookupError("Fig. 1's dataset is not run in this profile")
    config = Config.from_dict(data_view(cfg, seed, local_epochs=int(local_epochs)))  # one round, looked inside
    with single_thread():
        exp = prepare(config)
        a, b = disjoint_pair(exp.class_counts)
        state = exp.initial_state()
        outs = train_locally(exp, state, [a, b], 1, 1)  # FedAvg's first round, its mini-batches
        n = [o.num_samples for o in outs]
        average = tree.weighted_sum([o.local for o in outs], [k / sum(n) for k in n])  # FedAvg's aggregation
        models = dict(zip(FIG1_MODELS, (state.params, outs[0].local, outs[1].local, average)))
        ty = exp.data.test_y
        classes = {k: np.flatnonzero(exp.class_counts[k]).tolist() for k in (a, b)}
        tests = dict(zip(FIG1_TESTS, (classes[a], classes[b], list(range(exp.data.num_classes)))))
        rows = []
        for name, p in models.items():
            _, per_class = evaluate(exp.model, p, exp.data.test_x, ty, exp.data.num_classes)
            counts = np.bincount(ty.numpy(), minlength=exp.data.num_classes)
            for test, cls in tests.items():
                acc = float(np.nansum(per_class[cls] * counts[cls]) / counts[cls].sum())
                rows.append({"model": name, "test set": test, "accuracy": 100.0 * acc})
    info = {"clients": [a, b], "classes": {"A": classes[a], "B": classes[b]},
            "samples": {"A": int(exp.class_counts[a].sum()), "B": int(exp.class_counts[b].sum())},
            "config": config.to_dict()}
    return pd.DataFrame(rows), info


# ------------------------------------------------------------------ the study (fedlib.papers.fedconcat.studies)
def _summary(grid, opts) -> dict:
    """``accuracy`` (long), ``table`` (model × test set), ``info`` (the clients, their classes and sizes, the
    configuration; ``reason`` instead when the dataset is absent), ``caption`` and ``seed``."""
    from ...data import DatasetNotFoundError

    seed = opts.profile.seeds[0] if opts.seed is None else opts.seed
    try:
        accuracy, info = fig1_two_clients(opts.profile, opts.column, opts.local_epochs, seed)
    except DatasetNotFoundError as err:
        return {"accuracy": None, "table": None, "info": {"reason": err.reason}, "caption": "", "seed": seed}
    table = accuracy.pivot(index="model", columns="test set", values="accuracy").loc[
        list(FIG1_MODELS), list(FIG1_TESTS)].reset_index()
    caption = f"Clients {info['clients']} with classes {info['classes']} and {info['samples']} training samples."
    return {"accuracy": accuracy, "table": table, "info": info, "caption": caption, "seed": seed}


def _findings(summary: dict, opts) -> list[str]:
    if summary["accuracy"] is None:
        return []
    A, B, ALL = FIG1_TESTS
    _, local_a, local_b, avg = FIG1_MODELS
    acc = summary["accuracy"].set_index(["model", "test set"]).accuracy
    return [f"Fig. 1 measured: client A's local model reaches {acc[(local_a, A)]:.1f}% on its own classes and client "
            f"B's {acc[(local_b, B)]:.1f}% on its own; their average reaches {acc[(avg, A)]:.1f}% and "
            f"{acc[(avg, B)]:.1f}% on them ({acc[(avg, ALL)]:.1f}% on all classes); the paper: the average is "
            "worse than each local model on that model's classes"]
