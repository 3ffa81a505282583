"""FedLC Fig. 3 measured: two clients with opposite label skew in 2-D (§3).

The paper's Fig. 3 is a schematic (local optima vs the global optimum); :func:`toy_two_clients`
trains it: a linear softmax model by full-batch gradient descent, with cross-entropy and with
FedLC's calibrated loss (Eq. 7).  The study's build functions are below; :mod:`.studies`
declares it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

__all__ = ["ToyResult", "toy_two_clients", "toy_panels"]


@dataclass
class ToyResult:
    data: pd.DataFrame  # x, y, label, client (train points)
    models: dict[str, dict]  # name -> {"W": [K, 2], "b": [K]}
    accuracy: pd.DataFrame  # model, class, accuracy (balanced test set), distance to the global optimum
    class_counts: np.ndarray  # 2 × K


def _toy_points(rng, means, counts, std):
    xs, ys = [], []
    for c, n in enumerate(counts):
        xs.append(rng.normal(means[c], std, size=(int(n), 2)))
        ys.append(np.full(int(n), c))
    return np.concatenate(xs), np.concatenate(ys)


def toy_two_clients(*, points_per_class: int = 200, local_steps: int = 100, rounds: int = 50, std: float = 1.5,
                    tau: float = 3.0, lr: float = 0.5, seed: int = 0) -> ToyResult:
    """FedLC Fig. 3, measured: 4 Gaussian classes at the corners of a square, two
    clients with opposite label skew (client 1: classes 0,1 majority, 2 minority,
    3 missing; client 2: 2,3 majority, 1 minority, 0 missing), a linear softmax
    model trained with full-batch gradient descent.

    Models: the global optimum (pooled data), each client's local optimum from
    the global optimum (``local_steps`` steps), their average (one round), and
    FedAvg over ``rounds`` rounds of ``local_steps`` local steps; the same with
    FedLC's calibrated loss (τ).  Accuracy on a large balanced test set.
    ``points_per_class`` per majority class (a tenth, at least 2, per minority class)."""
    from ...losses import fedlc_loss

    std, tau = float(std), float(tau)
    n_major = int(points_per_class)
    n_minor = max(2, n_major // 10)
    steps, rounds = int(local_steps), int(rounds)
    rng = np.random.default_rng(seed)
    means = np.array([[-2.0, 2.0], [2.0, 2.0], [2.0, -2.0], [-2.0, -2.0]])
    counts = np.array([[n_major, n_major, n_minor, 0], [0, n_minor, n_major, n_major]])
    clients = [_toy_points(rng, means, c, std) for c in counts]
    test_x, test_y = _toy_points(rng, means, [2000] * 4, std)
    K = 4

    def tensors(x, y):
        return torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y, dtype=torch.long)

    def train(W, b, x, y, n_steps, cal_counts=None):
        W, b = W.clone().requires_grad_(True), b.clone().requires_grad_(True)
        for _ in range(n_steps):
            logits = x @ W.T + b
            loss = (torch.nn.functional.cross_entropy(logits, y) if cal_counts is None
                    else fedlc_loss(logits, y, cal_counts, tau))
            gW, gb = torch.autograd.grad(loss, (W, b))
            with torch.no_grad():
                W -= lr * gW
                b -= lr * gb
        return W.detach(), b.detach()

    data = [tensors(*c) for c in clients]
    pooled = tensors(np.concatenate([c[0] for c in clients]), np.concatenate([c[1] for c in clients]))
    W0, b0 = torch.zeros(K, 2, dtype=torch.float64), torch.zeros(K, dtype=torch.float64)
    models = {}
    models["global optimum"] = train(W0, b0, *pooled, steps * rounds)
    Wg, bg = models["global optimum"]
    for name, calibrated in (("CE", False), ("FedLC", True)):
        locals_ = []
        for i, (x, y) in enumerate(data):
            cc = torch.as_tensor(counts[i], dtype=torch.float64) if calibrated else None
            locals_.append(train(Wg, bg, x, y, steps, cc))
            models[f"client {i + 1} local ({name})"] = locals_[-1]
        weights = counts.sum(1) / counts.sum()
        models[f"average of local models ({name})"] = (
            sum(w * m[0] for w, m in zip(weights, locals_)), sum(w * m[1] for w, m in zip(weights, locals_)))
        W, b = W0, b0
        for _ in range(rounds):
            outs = [train(W, b, x, y, steps, torch.as_tensor(counts[i], dtype=torch.float64) if calibrated else None)
                    for i, (x, y) in enumerate(data)]
            W = sum(w * o[0] for w, o in zip(weights, outs))
            b = sum(w * o[1] for w, o in zip(weights, outs))
        models[f"FedAvg, {rounds} rounds ({name})"] = (W, b)

    tx, ty = tensors(test_x, test_y)
    acc_rows = []
    for name, (W, b) in models.items():
        pred = (tx @ W.T + b).argmax(1)
        dist = float(torch.sqrt(((W - Wg) ** 2).sum() + ((b - bg) ** 2).sum()))
        for c in range(K):
            mask = ty == c
            acc_rows.append({"model": name, "class": c, "accuracy": 100.0 * float((pred[mask] == c).double().mean()),
                             "distance_to_global_optimum": dist})
    points = pd.DataFrame([{"x": x0, "y": x1, "label": int(lab), "client": i + 1}
                           for i, (x, y) in enumerate(clients) for (x0, x1), lab in zip(x, y)])
    return ToyResult(points, {k: {"W": v[0].numpy(), "b": v[1].numpy()} for k, v in models.items()},
                     pd.DataFrame(acc_rows), counts)


def toy_panels(toy: ToyResult) -> list[list[str]]:
    """Fig. 3's panels: the two clients' local models and FedAvg, with CE (first row) and FedLC."""
    def fedavg(loss):
        return next(k for k in toy.models if k.startswith("FedAvg") and f"({loss})" in k)

    return [["client 1 local (CE)", "client 2 local (CE)", fedavg("CE")],
            ["client 1 local (FedLC)", "client 2 local (FedLC)", fedavg("FedLC")]]


def toy_summary(grid, opts) -> dict:
    """``toy``: the :class:`ToyResult`; ``accuracy``: per-class accuracy of every toy model on a
    balanced test set, its mean and its distance to the global optimum."""
    toy = toy_two_clients(points_per_class=opts.points_per_class, local_steps=opts.local_steps, rounds=opts.rounds,
                          std=opts.std, tau=opts.tau, lr=opts.lr, seed=opts.seed)
    table = toy.accuracy.pivot_table(index="model", columns="class", values="accuracy").add_prefix("class ")
    table["mean"] = table.mean(axis=1)
    table["distance to global optimum"] = toy.accuracy.groupby("model").distance_to_global_optimum.first()
    return {"toy": toy, "accuracy": table.loc[list(toy.models)].reset_index()}


def toy_findings(summary, opts) -> list[str]:
    panels = toy_panels(summary["toy"])
    mean = summary["accuracy"].set_index("model")["mean"]
    return [f"toy: FedAvg reaches {mean[panels[0][2]]:.1f}% balanced accuracy with CE and "
            f"{mean[panels[1][2]]:.1f}% with FedLC's loss (global optimum {mean['global optimum']:.1f}%)"]
