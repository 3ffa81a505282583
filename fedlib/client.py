"""A client's side of a round: its task, its local training, and the engine that runs it.

This module sits right above the engines (:mod:`fedlib.engine`,
:mod:`fedlib.vectorized`) and below everything that runs rounds: it imports no
algorithm, configuration or experiment module (parts and experiments are read
through their attributes), so a part (FedConcat's probe round) may use it.

Public: one client's local update, for a third party that trains one client at a
time (a Flower client, say)::

    client_update(model, algorithm, global_params, client_state, x, y, indices, class_counts,
                  training: LocalTraining, *, client=0, server_correction_state=None,
                  trainer=train_clients_sequential) -> ClientOutput

* ``model``: the ``nn.Module`` whose parameters are trained (only its structure is used);
* ``algorithm``: the round's algorithm, ``round_algorithm(alg, state.server_training_state)``
  (a client loss that reads what the server learnt, e.g. Ratio Loss's class weights);
* ``global_params``: w^t, ``{name: tensor}``; ``client_state``: what this client kept from
  earlier rounds (``ClientOutput.client_state`` of its last update; ``{}`` at first);
* ``x``, ``y``: the data tensors, ``indices`` the client's rows of them, ``class_counts`` its
  n_y over its whole local set (length K);
* ``training``: :class:`LocalTraining`, the round's local-training settings (round, epochs,
  batch size, the client SGD, seed; which fix the mini-batches);
* ``client``: the client's id in the federation (with the seed and round, it fixes the
  client's mini-batches);
* ``server_correction_state``: ``ServerState.correction_state`` (SCAFFOLD's c; default: the
  correction's initial server state).

It returns the engine's :class:`~fedlib.engine.ClientOutput`: ``delta`` (Δ_k = w_k − start),
``num_samples`` (n_k), ``num_steps`` (τ_k), ``loss_sum`` / ``loss_count`` (the mean local loss
is their ratio), ``client_state`` (its new state), ``message`` (what the correction sends the
server) and ``local`` (w_k).  The server side is :func:`fedlib.server.server_update`.

Example, client 3 of a prepared experiment in round 1::

    exp = prepare(config); state = initial_state(exp.model, exp.algorithm)
    out = client_update(exp.model, round_algorithm(exp.algorithm, state.server_training_state),
                        state.params, state.client_states.get(3, {}), exp.data.train_x, exp.data.train_y,
                        exp.client_indices[3], exp.class_counts[3], LocalTraining.of(config, round_=1), client=3,
                        server_correction_state=state.correction_state)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import warnings
from dataclasses import dataclass

import numpy as np
import torch

from .engine import ClientOptimizer, ClientOutput, ClientTask, client_batches, train_clients_sequential
from .state import ServerState, local_keys
from .tree import Params

__all__ = ["LocalTraining", "EngineFallbackWarning", "client_task", "client_tasks", "client_update", "client_trainer",
           "client_optimizer", "round_algorithm", "train_locally"]


class EngineFallbackWarning(UserWarning):
    """The vectorized engine cannot run this method; the sequential reference runs it instead."""


@dataclass(frozen=True)
class LocalTraining:
    """What a round tells a client about its local training: round ``round`` (1-based),
    ``epochs`` E of mini-batches of ``batch_size`` B, the client SGD ``optimizer``, the run's
    ``seed``; ``stream`` separates uses of the same (round, client) (1: training, 3:
    personalized evaluation); ``max_steps`` caps the local steps (0: no cap); ``device``
    where the batches' row indices live."""

    round: int
    epochs: int
    batch_size: int
    optimizer: ClientOptimizer
    seed: int
    stream: int = 1
    max_steps: int = 0
    device: str = "cpu"

    @classmethod
    def of(cls, config, round_: int, stream: int = 1, max_steps: int = 0) -> "LocalTraining":
        """The local training a run's configuration sets for round ``round_``."""
        return cls(round_, config.local_epochs, config.batch_size, client_optimizer(config), config.seed, stream,
                   max_steps, config.device)


def client_optimizer(config) -> ClientOptimizer:
    return ClientOptimizer(config.lr, config.momentum, config.weight_decay)


def _phases(model, algorithm, training: LocalTraining):
    phases = algorithm.personalization.phases(model, training.epochs)
    if sum(p.epochs for p in phases) != training.epochs:
        raise ValueError(f"{algorithm.personalization.name}: phases must add up to local_epochs={training.epochs}")
    if training.max_steps and (len(phases) > 1 or phases[0].trainable is not None):
        raise ValueError(f"{algorithm.personalization.name}: local phases cannot be combined with a cap on local steps")
    return phases


def client_task(model, algorithm, global_params: Params, client_state: dict, indices, class_counts,
                training: LocalTraining, *, client: int = 0, stream_id: int | None = None,
                phases=None) -> ClientTask:
    """One client's task: its batches, its state, the model it starts from (the global
    one with its local parameters put in) and its phases.  ``stream_id`` (default
    ``client``) fixes its mini-batches; ``phases`` the personalization's phases, when
    already computed."""
    phases = _phases(model, algorithm, training) if phases is None else phases
    keys = local_keys(model, algorithm)
    start = None
    if keys:
        own = client_state.get("local") or {key: global_params[key] for key in keys}
        start = {key: own[key] if key in own else v for key, v in global_params.items()}
    rows = np.asarray(indices)
    batches = [torch.as_tensor(b, device=training.device)
               for b in client_batches(rows, training.epochs, training.batch_size, training.seed, training.round,
                                       client if stream_id is None else stream_id, training.stream)]
    if training.max_steps:
        batches = batches[:training.max_steps]
    task_phases = None
    if len(phases) > 1 or phases[0].trainable is not None:
        per_epoch = math.ceil(len(rows) / training.batch_size)
        task_phases = [(p.epochs * per_epoch, p.trainable) for p in phases]
    counts = torch.as_tensor(class_counts, dtype=torch.float32, device=training.device)
    return ClientTask(client, torch.as_tensor(indices), counts, batches, client_state, start, task_phases)


def client_tasks(exp, state: ServerState, clients: list[int], round_: int, stream: int) -> list[ClientTask]:
    """The tasks of ``clients`` of experiment ``exp`` in round ``round_`` from ``state``."""
    training = LocalTraining.of(exp.config, round_, stream, exp.max_local_steps)
    phases = _phases(exp.model, exp.algorithm, training)
    return [client_task(exp.model, exp.algorithm, state.params, state.client_states.get(k, {}),
                        exp.client_indices[k], exp.class_counts[k], training, client=k,
                        stream_id=exp.client_ids[k] if exp.client_ids is not None else k, phases=phases)
            for k in clients]


def round_algorithm(alg, server_training_state: dict):
    """The algorithm of a round: a client loss that depends on what the server has learnt
    has a ``for_round(server_training_state)`` returning the loss to use (Ratio Loss's
    class weights, :class:`fedlib.algorithms.kinds.ClientLoss`); every other part is unchanged."""
    loss = alg.loss.for_round(server_training_state)
    return alg if loss is alg.loss else dataclasses.replace(alg, loss=loss)


def client_trainer(config, algorithm=None):
    """The engine's per-round client training function named by ``config.engine``.
    ``compiled`` is the vectorized engine with its stacked loss under ``torch.compile``.
    A method the vectorized engine cannot batch runs on the sequential reference,
    with an :class:`EngineFallbackWarning` saying why."""
    if config.engine in ("vectorized", "compiled"):
        from .vectorized import train_clients_vectorized, vectorization_blocker

        reason = vectorization_blocker(algorithm) if algorithm is not None else None
        if reason is None:
            return functools.partial(train_clients_vectorized, memory_budget_gb=config.memory_budget_gb,
                                     compiled=config.engine == "compiled")
        warnings.warn(f"engine={config.engine!r} falls back to the sequential engine for {config.method!r}: {reason}",
                      EngineFallbackWarning, stacklevel=2)
    if getattr(config, "client_threads", 1) > 1:
        return functools.partial(train_clients_sequential, client_threads=config.client_threads)
    return train_clients_sequential


def train_locally(exp, state: ServerState, clients: list[int], round_: int, stream: int,
                  trainer=None) -> list[ClientOutput]:
    """The given clients' local updates from the server state ``state`` (their
    :class:`~fedlib.engine.ClientOutput`, with each client's own model in ``.local``),
    without aggregation and without changing ``state``.  ``round_`` and ``stream``
    fix the mini-batches (``stream`` 1 is training's, 3 personalized evaluation's)."""
    train_clients = trainer or client_trainer(exp.config, exp.algorithm)
    tasks = client_tasks(exp, state, clients, round_, stream)
    return train_clients(exp.model, round_algorithm(exp.algorithm, state.server_training_state), state.params, tasks,
                         state.correction_state, exp.data.train_x, exp.data.train_y, client_optimizer(exp.config))


def client_update(model, algorithm, global_params: Params, client_state: dict, x: torch.Tensor, y: torch.Tensor,
                  indices, class_counts, training: LocalTraining, *, client: int = 0,
                  server_correction_state: dict | None = None, trainer=train_clients_sequential) -> ClientOutput:
    """One client's local update (module doc): the same task and the same engine a
    simulated round gives this client."""
    if server_correction_state is None:
        server_correction_state = algorithm.correction.init_server_state(global_params)
    task = client_task(model, algorithm, global_params, client_state, indices, class_counts, training, client=client)
    return trainer(model, algorithm, global_params, [task], server_correction_state, x, y, training.optimizer)[0]
