"""The sequential reference engine: sampled clients train one after another.

This is the plain loop every faster engine is tested against, so it is kept
obviously right: for each client, copy the global model, run its local SGD
steps (FedLC Algorithm 1) on its own mini-batches with ordinary autograd, and
report Δ_k = w_k − w together with what the aggregator and the correction need.

Which mini-batches a client sees is fixed by :func:`client_batches` from
(seed, round, client) alone, so any engine, and a run resumed from a
checkpoint, replays exactly the same batches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
from torch.func import functional_call

from . import tree
from .tree import Params

__all__ = ["ClientTask", "ClientOutput", "client_batches", "sample_clients", "train_clients_sequential"]


@dataclass
class ClientTask:
    """One sampled client's work in a round."""

    client: int
    indices: torch.Tensor  # its training samples (rows of the data tensors)
    class_counts: torch.Tensor  # n_y, float32 [K], over its whole local set
    batches: list[torch.Tensor]  # rows of the data tensors, one tensor per local step
    client_state: dict = field(default_factory=dict)


@dataclass
class ClientOutput:
    client: int
    delta: Params  # Δ_k = w_k − w
    num_samples: int  # n_k
    num_steps: int  # τ_k
    loss_sum: float  # Σ over local steps of (batch mean loss · batch size)
    loss_count: int  # Σ batch sizes
    client_state: dict
    message: dict


def sample_clients(num_clients: int, participation: float, seed: int, round_: int) -> list[int]:
    """The clients sampled in round ``round_``: ⌈participation · m⌉ without replacement
    (at least one), drawn from a stream that depends on (seed, round) only."""
    if participation >= 1.0:
        return list(range(num_clients))
    count = max(1, int(round(participation * num_clients)))
    rng = np.random.default_rng([seed, 0, round_])
    return sorted(rng.choice(num_clients, size=count, replace=False).tolist())


def client_batches(indices: np.ndarray, epochs: int, batch_size: int, seed: int, round_: int,
                   client: int) -> list[np.ndarray]:
    """A client's local mini-batches for one round: E epochs, each a fresh random
    permutation of its samples cut into batches of ``batch_size`` (the last one
    smaller).  τ_k = E · ⌈n_k / B⌉ local steps."""
    rng = np.random.default_rng([seed, 1, round_, client])
    indices = np.asarray(indices)
    out = []
    for _ in range(epochs):
        perm = indices[rng.permutation(len(indices))]
        out.extend(perm[i:i + batch_size] for i in range(0, len(perm), batch_size))
    return out


def local_sgd(model: torch.nn.Module, algorithm, anchor: Params, x: torch.Tensor, y: torch.Tensor,
              task: ClientTask, context: dict, lr: float, weight_decay: float) -> tuple[Params, float, int]:
    """Run one client's local steps w ← w − η (ĝ + λ w), ĝ the corrected gradient."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in anchor.items()}
    loss_sum, count = 0.0, 0
    for rows in task.batches:
        xb, yb = x[rows], y[rows]
        loss = algorithm.loss(functional_call(model, params, (xb,)), yb, task.class_counts)
        grads = dict(zip(params, torch.autograd.grad(loss, list(params.values()))))
        with torch.no_grad():
            current = {k: v.detach() for k, v in params.items()}
            grads = algorithm.correction.adjust(grads, current, anchor, context)
            params = {k: (w - lr * (grads[k] + weight_decay * w)).requires_grad_(True) for k, w in current.items()}
        loss_sum += float(loss.detach()) * len(rows)
        count += len(rows)
    return {k: v.detach() for k, v in params.items()}, loss_sum, count


def train_clients_sequential(model, algorithm, global_params: Params, tasks: list[ClientTask],
                             server_correction_state: dict, x: torch.Tensor, y: torch.Tensor,
                             lr: float, weight_decay: float) -> list[ClientOutput]:
    """Train each sampled client in turn from the same global model."""
    outputs = []
    for task in tasks:
        context = algorithm.correction.client_context(server_correction_state, task.client_state)
        local, loss_sum, count = local_sgd(model, algorithm, global_params, x, y, task, context, lr, weight_decay)
        steps = len(task.batches)
        client_state, message = algorithm.correction.client_final(
            global_params, local, steps, lr, server_correction_state, task.client_state)
        outputs.append(ClientOutput(task.client, tree.sub(local, global_params), len(task.indices), steps,
                                    loss_sum, count, client_state, message))
    return outputs
