"""The federated round loop, shared by every engine and every method.

One round t (FedAvg's structure; FedLC Algorithm 1 is the client part):

1. sample clients S_t (participation rate, seeded by (seed, t));
2. each sampled client runs its local update from the global model w^t, with
   its own local parameters put in when the method keeps some on the client
   (the engine: :mod:`fedlib.engine`, :mod:`fedlib.vectorized`);
3. the aggregator combines the Δ_k of the shared parameters into Δ, the server
   optimizer applies −Δ, the client correction updates its server state
   (e.g. SCAFFOLD's c), and the server-training part, if any, trains on the
   server-held data;
4. every ``eval_every`` rounds (and at the last) the global model is evaluated
   on the test set (accuracy, per-class accuracy); every
   ``personal_eval_every`` rounds every client's personalized model is
   evaluated on its own test sets.  With ``validation_fraction`` > 0 a held-out
   slice of every client's training data replaces the test set in both
   (validation runs, for tuning without the test set);
5. every ``checkpoint_every`` rounds the full state goes to the store, so an
   interrupted run resumes where it stopped and ends with the same model.

A method is a list of stages (:mod:`fedlib.algorithms.stages`); most have one.
:func:`simulate` runs the stages in turn, checkpointing each.

Training runs with one intra-op thread (:func:`single_thread`), so a run's
numbers depend only on its configuration, seed and code version -- not on the
machine's core count, the number of parallel workers, or how it was launched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from tqdm.auto import tqdm

from . import tree
from .algorithms import Algorithm, build_algorithm
from .algorithms.server_training import ServerData, ServerRound
from .config import Config
from .data import FederatedData, load_dataset
from .engine import ClientOptimizer, ClientTask, client_batches, sample_clients, train_clients_sequential
from .models import build_model, memory_format, to_memory_format
from .partition import (balanced_shards, balanced_subset, count_matrix, equal_sizes, holdout, long_tail,
                        partition, split_like)
from .store import Store

__all__ = ["Experiment", "prepare", "evaluate", "evaluate_predictor", "round_algorithm", "simulate", "run_round",
           "train_locally", "personalized_evaluation", "single_thread", "client_trainer", "EngineFallbackWarning"]


class EngineFallbackWarning(UserWarning):
    """The vectorized engine cannot run this method; the sequential reference runs it instead."""


@contextlib.contextmanager
def single_thread():
    """Run the block with one torch intra-op thread (restored afterwards).

    CPU kernels split reductions (matrix products, convolutions, sums) by
    thread, so their float results depend on the thread count; with one thread
    a run gives the same numbers whatever the machine's cores, the number of
    grid workers, or the caller's thread setting.  Parallelism comes from
    running several runs at once (:func:`fedlib.repro.report.run_grid`'s workers).
    The cost in speed is measured in ``benchmarks/``."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class Experiment:
    """Everything a run (or one stage of it) needs, built once from a :class:`Config`."""

    config: Config
    data: FederatedData
    client_indices: list[np.ndarray]  # rows of data.train_x per client
    class_counts: np.ndarray  # clients × classes, n_y per client (FedLC Fig. 4)
    model: torch.nn.Module
    algorithm: Algorithm
    client_test_indices: list[np.ndarray] | None = None  # rows of data.test_x: each client's own test set
    balanced_test_indices: list[np.ndarray] | None = None  # rows of data.test_x: class-balanced local test sets
    server_data: ServerData | None = None
    init_params: dict | None = field(default=None, repr=False)
    # A stage's sub-experiment (see fedlib.algorithms.stages) may hold a subset of the clients: their ids
    # in the whole federation, which fix their mini-batch streams (None: 0 … num_clients − 1).
    client_ids: list[int] | None = None
    # At most this many local steps per client and round: the first ones of its batches (0: no cap).
    max_local_steps: int = 0

    def initial_params(self) -> dict[str, torch.Tensor]:
        if self.init_params is not None:
            return tree.clone(self.init_params)
        return {k: v.detach().clone() for k, v in self.model.named_parameters()}

    @property
    def num_clients(self) -> int:
        return len(self.client_indices)


def _subset(x: torch.Tensor, y: torch.Tensor, limit: int, seed: int, stream: int):
    """A seeded random subset of ``limit`` rows (all rows when limit is 0 or larger)."""
    if not limit or limit >= len(y):
        return x, y
    rows = np.sort(np.random.default_rng([seed, stream]).choice(len(y), size=limit, replace=False))
    return x[rows], y[rows]


def _split_training_set(config: Config, data: FederatedData) -> tuple[list[np.ndarray], ServerData | None]:
    """Client indices and server-held data.  Order (FEDIC §3): D_aux out of the
    training set first, then the long tail on the rest, then the partition."""
    if config.partition == "natural":
        return [np.asarray(ix, dtype=np.int64) for ix in data.client_indices], None
    labels = data.train_y.numpy()
    pool = np.arange(len(labels))
    aux = None
    own_aux = data.aux_y is not None  # the dataset's own balanced labelled set (ImageNet-LT's val split)
    if config.server_aux_per_class:
        aux = balanced_subset(data.aux_y.numpy() if own_aux else labels, config.server_aux_per_class, config.seed)
        if not own_aux:
            pool = np.setdiff1d(pool, aux)
    kept = pool
    if config.long_tail_if > 1:
        kept = pool[long_tail(labels[pool], config.long_tail_if, config.seed)]
    parts = partition(labels[kept], config.partition, config.num_clients, config.seed,
                      alpha=config.partition_alpha, k=config.partition_k, beta=config.partition_beta,
                      min_size=config.min_client_size)
    if config.partition_equal_sizes:
        parts = equal_sizes(labels[kept], parts)
    indices = [kept[p] for p in parts]
    server = None
    if aux is not None or config.server_unlabeled != "none":
        server = ServerData(description={})
        if aux is not None:
            source_x, source_y = (data.aux_x, data.aux_y) if own_aux else (data.train_x, data.train_y)
            server.aux_x, server.aux_y = source_x[torch.as_tensor(aux)], source_y[torch.as_tensor(aux)]
            where = "held-out balanced set" if own_aux else "training set"
            server.description["aux"] = f"{config.server_aux_per_class} per class from the {data.name} {where}"
        if config.server_unlabeled == "long_tail_dropped":
            dropped = np.setdiff1d(pool, kept)
            server.unlabeled_x = data.train_x[torch.as_tensor(dropped)]
            server.description["unlabeled"] = f"the {data.name} training samples the long tail drops"
        elif config.server_unlabeled != "none":
            other = load_dataset(config.server_unlabeled, config.data_root)
            server.unlabeled_x = other.train_x
            server.description["unlabeled"] = f"the {other.name} training images (labels unused)"
        if server.unlabeled_x is not None and config.server_unlabeled_size:
            n = len(server.unlabeled_x)
            if config.server_unlabeled_size < n:
                rows = np.sort(np.random.default_rng([config.seed, 10]).choice(n, config.server_unlabeled_size,
                                                                               replace=False))
                server.unlabeled_x = server.unlabeled_x[torch.as_tensor(rows)]
        if server.unlabeled_x is not None:
            server.unlabeled_x = _as_inputs_of(server.unlabeled_x, data.train_x, config.server_unlabeled)
    return indices, server


def _hold_out(config: Config, data: FederatedData, indices: list[np.ndarray]):
    """``validation_fraction``: every client's held-out training samples become the test set
    (their union, client by client); returns the data, the clients' kept training indices and
    each client's rows of the new test set."""
    kept, held = holdout(data.train_y.numpy(), indices, config.validation_fraction, config.seed)
    pool = torch.as_tensor(np.concatenate(held))
    data = dataclasses.replace(data, test_x=data.train_x[pool], test_y=data.train_y[pool], client_test_indices=None)
    ends = np.cumsum([len(h) for h in held])
    return data, kept, [np.arange(e - len(h), e) for e, h in zip(ends, held)]


def _as_inputs_of(x: torch.Tensor, like: torch.Tensor, name: str) -> torch.Tensor:
    """Images ``x`` resized (bilinear) to the spatial size of ``like`` (e.g. CIFAR-100 as D_ulb
    for 64×64 ImageNet-LT); the channel counts must agree."""
    if x.shape[1:] == like.shape[1:]:
        return x
    if x.ndim != 4 or like.ndim != 4 or x.shape[1] != like.shape[1]:
        raise ValueError(f"server_unlabeled={name!r} has inputs of shape {tuple(x.shape[1:])}, which cannot serve "
                         f"a dataset of inputs {tuple(like.shape[1:])}")
    out = [torch.nn.functional.interpolate(x[i:i + 1024], size=tuple(like.shape[2:]), mode="bilinear",
                                           align_corners=False) for i in range(0, len(x), 1024)]
    return torch.cat(out)


def _in_memory_format(data: FederatedData, server: ServerData | None, fmt) -> tuple:
    """The image tensors in the model's memory format, converted once for the run (copies:
    the loaded data may be shared); every batch cut from them keeps it."""
    if fmt == torch.contiguous_format:
        return data, server
    data = dataclasses.replace(data, train_x=to_memory_format(data.train_x, fmt),
                               test_x=to_memory_format(data.test_x, fmt))
    if server is not None:
        server = dataclasses.replace(server, aux_x=to_memory_format(server.aux_x, fmt),
                                     unlabeled_x=to_memory_format(server.unlabeled_x, fmt))
    return data, server


def prepare(config: Config) -> Experiment:
    """Load the data, split it (server data, long tail, partition, per-client test
    sets), build the model (seeded) and the algorithm."""
    data = load_dataset(config.dataset, config.data_root, synthetic_alpha=config.synthetic_alpha,
                        synthetic_beta=config.synthetic_beta, num_clients=config.num_clients, seed=config.seed)
    if config.max_train_samples or config.max_test_samples:
        data = dataclasses.replace(data)
        data.train_x, data.train_y = _subset(data.train_x, data.train_y, config.max_train_samples, config.seed, 2)
        data.test_x, data.test_y = _subset(data.test_x, data.test_y, config.max_test_samples, config.seed, 3)
    indices, server = _split_training_set(config, data)
    held = None
    if config.validation_fraction:
        data, indices, held = _hold_out(config, data, indices)
    counts = count_matrix(data.train_y.numpy(), indices, data.num_classes)
    algorithm = build_algorithm(config)
    needs = set(getattr(algorithm.server_training, "needs", ()))
    if "aux" in needs and (server is None or server.aux_x is None):
        raise ValueError(f"method {config.method!r} trains on the server's labelled set D_aux: set "
                         "server_aux_per_class ≥ 1")
    if "unlabeled" in needs and (server is None or server.unlabeled_x is None):
        raise ValueError(f"method {config.method!r} distils on unlabelled server data D_ulb: set server_unlabeled")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = algorithm.extend_model(build_model(config.model, data.num_classes, data.input_shape))
    model = model.to(config.device)
    data, server = _in_memory_format(data, server, memory_format(config.model, data.input_shape))
    client_test = balanced = None
    if config.personal_eval_every:
        test_y = data.test_y.numpy()
        if held is not None:
            client_test = held
        elif config.partition == "natural" and data.client_test_indices is not None:
            client_test = [np.asarray(ix, dtype=np.int64) for ix in data.client_test_indices]
        else:
            client_test = split_like(test_y, counts, config.seed)
        if config.balanced_test == "full":
            balanced = [np.arange(len(test_y))] * len(indices)
        else:
            try:
                balanced = balanced_shards(test_y, len(indices), config.seed)
            except ValueError as err:
                raise ValueError(f"{err}: the test set cannot give every client a class-balanced shard; "
                                 "use balanced_test='full'") from None
    return Experiment(config, data, indices, counts, model, algorithm, client_test, balanced, server)


def evaluate(model: torch.nn.Module, params: dict, x: torch.Tensor, y: torch.Tensor, num_classes: int,
             batch_size: int = 2048, logits: Callable | None = None) -> tuple[float, np.ndarray]:
    """Test accuracy and per-class accuracy (NaN for a class absent from the test set).
    ``logits`` reads the model's output (default: the output itself)."""
    def predict(xb):
        out = torch.func.functional_call(model, params, (xb,))
        return logits(out) if logits is not None else out

    return evaluate_predictor(predict, x, y, num_classes, batch_size)


@torch.no_grad()
def evaluate_predictor(predict: Callable, x: torch.Tensor, y: torch.Tensor, num_classes: int,
                       batch_size: int = 2048) -> tuple[float, np.ndarray]:
    """:func:`evaluate` for any ``predict(x) -> logits`` (e.g. an ensemble)."""
    correct = torch.zeros(num_classes, dtype=torch.float64)
    total = torch.zeros(num_classes, dtype=torch.float64)
    for i in range(0, len(y), batch_size):
        out = predict(x[i:i + batch_size])
        yb = y[i:i + batch_size]
        hit = (out.argmax(1) == yb).to(torch.float64).cpu()
        correct.index_add_(0, yb.cpu(), hit)
        total.index_add_(0, yb.cpu(), torch.ones_like(hit))
    per_class = np.where(total.numpy() > 0, correct.numpy() / np.maximum(total.numpy(), 1), np.nan)
    return float(correct.sum() / max(float(total.sum()), 1.0)), per_class


def _initial_state(exp: Experiment, params: dict | None = None) -> dict:
    params = exp.initial_params() if params is None else params
    shared = _shared(params, _local_keys(exp))
    return {
        "round": 0,
        "params": params,
        "optimizer_state": exp.algorithm.server_optimizer.init(shared),
        "correction_state": exp.algorithm.correction.init_server_state(params),
        "server_training_state": exp.algorithm.server_training.init_state(params),
        "client_states": {},
        "history": [],
    }


def _local_keys(exp: Experiment) -> tuple[str, ...]:
    return tuple(exp.algorithm.personalization.local_keys(exp.model))


def _shared(params: dict, local_keys) -> dict:
    return {k: v for k, v in params.items() if k not in local_keys}


def client_trainer(config: Config, algorithm: Algorithm | None = None):
    """The engine's per-round client training function named by ``config.engine``.
    A method the vectorized engine cannot batch runs on the sequential reference,
    with an :class:`EngineFallbackWarning` saying why."""
    if config.engine == "vectorized":
        from .vectorized import train_clients_vectorized, vectorization_blocker

        reason = vectorization_blocker(algorithm) if algorithm is not None else None
        if reason is None:
            return functools.partial(train_clients_vectorized, memory_budget_gb=config.memory_budget_gb)
        warnings.warn(f"engine='vectorized' falls back to the sequential engine for {config.method!r}: {reason}",
                      EngineFallbackWarning, stacklevel=2)
    return train_clients_sequential


def client_optimizer(config: Config) -> ClientOptimizer:
    return ClientOptimizer(config.lr, config.momentum, config.weight_decay)


def _tasks(exp: Experiment, state: dict, clients: list[int], round_: int, stream: int) -> list[ClientTask]:
    """Each client's task: its batches, its per-client state, the model it starts
    from (the global one with its local parameters put in) and its phases."""
    c, alg = exp.config, exp.algorithm
    device = c.device
    local_keys = _local_keys(exp)
    phases = alg.personalization.phases(exp.model, c.local_epochs)
    if sum(p.epochs for p in phases) != c.local_epochs:
        raise ValueError(f"{alg.personalization.name}: phases must add up to local_epochs={c.local_epochs}")
    if exp.max_local_steps and (len(phases) > 1 or phases[0].trainable is not None):
        raise ValueError(f"{alg.personalization.name}: local phases cannot be combined with a cap on local steps")
    tasks = []
    for k in clients:
        rows = exp.client_indices[k]
        cs = state["client_states"].get(k, {})
        start = None
        if local_keys:
            own = cs.get("local") or {key: state["params"][key] for key in local_keys}
            start = {key: own[key] if key in own else v for key, v in state["params"].items()}
        stream_id = exp.client_ids[k] if exp.client_ids is not None else k
        batches = [torch.as_tensor(b, device=device)
                   for b in client_batches(rows, c.local_epochs, c.batch_size, c.seed, round_, stream_id, stream)]
        if exp.max_local_steps:
            batches = batches[:exp.max_local_steps]
        task_phases = None
        if len(phases) > 1 or phases[0].trainable is not None:
            per_epoch = math.ceil(len(rows) / c.batch_size)
            task_phases = [(p.epochs * per_epoch, p.trainable) for p in phases]
        counts = torch.as_tensor(exp.class_counts[k], dtype=torch.float32, device=device)
        tasks.append(ClientTask(k, torch.as_tensor(rows), counts, batches, cs, start, task_phases))
    return tasks


def round_algorithm(alg: Algorithm, state: dict) -> Algorithm:
    """The algorithm of a round: a client loss that depends on what the server has learnt
    has a ``for_round(server_training_state)`` returning the loss to use (Ratio Loss's
    class weights); every other part is unchanged."""
    for_round = getattr(alg.loss, "for_round", None)
    return alg if for_round is None else dataclasses.replace(alg, loss=for_round(state["server_training_state"]))


def train_locally(exp: Experiment, state: dict, clients: list[int], round_: int, stream: int,
                  trainer=None) -> list:
    """The given clients' local updates from the server state ``state`` (their
    :class:`~fedlib.engine.ClientOutput`, with each client's own model in ``.local``),
    without aggregation and without changing ``state``.  ``round_`` and ``stream``
    fix the mini-batches (``stream`` 1 is training's, 3 personalized evaluation's)."""
    train_clients = trainer or client_trainer(exp.config, exp.algorithm)
    tasks = _tasks(exp, state, clients, round_, stream)
    return train_clients(exp.model, round_algorithm(exp.algorithm, state), state["params"], tasks,
                         state["correction_state"], exp.data.train_x, exp.data.train_y, client_optimizer(exp.config))


def run_round(exp: Experiment, state: dict, round_: int, trainer=None, *, evaluating: bool = False,
              final: bool = False) -> float:
    """Advance ``state`` by one round in place; returns the round's mean train loss.
    ``evaluating``/``final`` (this round is evaluated / is the stage's last) are passed to
    the server-training part, whose report goes to ``state["server_report"]``."""
    c, alg = exp.config, round_algorithm(exp.algorithm, state)
    train_clients = trainer or client_trainer(c, alg)
    sampled = sample_clients(exp.num_clients, c.participation, c.seed, round_)
    tasks = _tasks(exp, state, sampled, round_, stream=1)
    x, y = exp.data.train_x, exp.data.train_y
    outputs = train_clients(exp.model, alg, state["params"], tasks, state["correction_state"], x, y,
                            client_optimizer(c))

    local_keys = _local_keys(exp)
    steps = [alg.correction.effective_steps(o.num_steps, c.lr, c.momentum) for o in outputs]
    delta = alg.aggregator.combine([_shared(o.delta, local_keys) for o in outputs],
                                   [o.num_samples for o in outputs], steps)
    pseudo_grad = tree.scale(delta, -1.0)
    shared, state["optimizer_state"] = alg.server_optimizer.apply(
        _shared(state["params"], local_keys), pseudo_grad, state["optimizer_state"])
    params = {k: shared.get(k, v) for k, v in state["params"].items()}
    state["correction_state"] = alg.correction.server_update(
        state["correction_state"], [o.message for o in outputs], exp.num_clients)
    if alg.server_training.name != "none":
        ctx = _server_round(exp, round_, [o.local for o in outputs], [o.num_samples for o in outputs], sampled,
                            evaluating=evaluating, final=final)
        params, state["server_training_state"] = alg.server_training.after_round(
            ctx, params, state["server_training_state"])
        if ctx.report:
            state["server_report"] = dict(ctx.report)
    state["params"] = params
    for o in outputs:
        cs = dict(o.client_state)
        if local_keys:
            cs["local"] = {k: o.local[k] for k in local_keys}
        if cs:
            state["client_states"][o.client] = cs
    state["round"] = round_
    return sum(o.loss_sum for o in outputs) / max(1, sum(o.loss_count for o in outputs))


def _server_round(exp: Experiment, round_: int, client_params: list, weights: list, clients: list,
                  evaluating: bool = False, final: bool = False) -> ServerRound:
    counts = torch.as_tensor(exp.class_counts[clients] if len(clients) else exp.class_counts[:0], dtype=torch.float32)
    data = exp.data

    def on_test_set(predict):
        return evaluate_predictor(predict, data.test_x, data.test_y, data.num_classes)

    return ServerRound(round_, exp.model, client_params, weights, counts, exp.server_data, exp.config.seed,
                       exp.config.device, torch.as_tensor(exp.class_counts.sum(0), dtype=torch.float32),
                       evaluate=on_test_set, evaluating=evaluating, final=final)


def _evaluation_row(exp: Experiment, params: dict, round_: int) -> dict:
    """The global model's test accuracy and per-class accuracy as a history row."""
    acc, per_class = evaluate(exp.model, params, exp.data.test_x, exp.data.test_y, exp.data.num_classes,
                              logits=exp.algorithm.personalization.global_logits)
    row = {"round": round_, "test_accuracy": acc}
    row.update({f"acc_class_{k}": (None if np.isnan(v) else float(v)) for k, v in enumerate(per_class)})
    return row


def personalized_evaluation(exp: Experiment, state: dict, round_: int, trainer=None) -> dict:
    """FedABC Eq. 7 and Eq. 8: every client's personalized model (PM) on its own
    test set (pooled accuracy Σ correct / Σ samples) and on its class-balanced
    local test set.  The PM is the client's model after a local update from the
    current server state (``personalized_model="local_update"``, stream 3 batches,
    nothing kept) or the global model with its stored local parameters
    (``"stored"``).  Returns ``{"personalized_accuracy", "drift_accuracy",
    "personalized_per_client", "drift_per_client"}``."""
    if exp.client_test_indices is None:
        raise ValueError("this experiment has no per-client test sets (personal_eval_every = 0)")
    c, alg = exp.config, exp.algorithm
    clients = list(range(exp.num_clients))
    if c.personalized_model == "local_update":
        models = [o.local for o in train_locally(exp, state, clients, round_, 3, trainer)]
    else:
        models = [t.start if t.start is not None else state["params"] for t in _tasks(exp, state, clients, round_, 3)]
    read = alg.personalization.personal_logits
    out = {}
    for name, sets in (("personalized", exp.client_test_indices), ("drift", exp.balanced_test_indices)):
        correct = total = 0
        per_client = []
        for k, rows in enumerate(sets):
            if len(rows) == 0:
                per_client.append(None)
                continue
            r = torch.as_tensor(rows)
            acc, _ = evaluate(exp.model, models[k], exp.data.test_x[r], exp.data.test_y[r], exp.data.num_classes,
                              logits=read)
            correct += acc * len(rows)
            total += len(rows)
            per_client.append(acc)
        out[f"{name}_accuracy"] = correct / max(total, 1)
        out[f"{name}_per_client"] = per_client
    return out


def _progress_total(plan) -> int:
    return sum(s.rounds for s in plan) or 1


def _run_rounds(exp: Experiment, state: dict, rounds: int, stage, *, on_round: Callable, trainer, bar,
                label: str | None) -> None:
    """The rounds of one federated stage, resuming at ``state["round"]``."""
    c = exp.config
    for round_ in range(state["round"] + 1, rounds + 1):
        last = round_ == rounds
        evaluating = stage.evaluate and (round_ % c.eval_every == 0 or last)
        train_loss = run_round(exp, state, round_, trainer, evaluating=evaluating, final=last)
        if "diverged_round" not in state and not all(bool(v.isfinite().all()) for v in state["params"].values()):
            state["diverged_round"] = round_
            warnings.warn(f"{c.method} diverged: the global model's parameters are not finite after round {round_}"
                          f"{'' if label is None else f' of stage {label!r}'} (mean local loss {train_loss}); "
                          "its accuracies from here on are those of a broken model, and grids report the run as "
                          "'diverged'", RuntimeWarning, stacklevel=2)
        report = state.pop("server_report", {})
        row = {}
        if evaluating:
            row = _evaluation_row(exp, state["params"], round_)
            row["train_loss"] = train_loss
            bar.set_postfix(acc=f"{row['test_accuracy']:.4f}", loss=f"{train_loss:.4f}")
        if report:
            row = row or {"round": round_, "train_loss": train_loss}
            row.update(report)
        if c.personal_eval_every and exp.client_test_indices is not None and (
                round_ % c.personal_eval_every == 0 or last):
            pm = personalized_evaluation(exp, state, round_, trainer)
            row = row or {"round": round_, "train_loss": train_loss}
            row.update({k: v for k, v in pm.items() if not k.endswith("per_client")})
            if last:
                state["personal_final"] = pm
        if row:
            if label is not None:
                row["stage"] = label
            state["history"].append(row)
        bar.update(1)
        on_round(round_, state)


def simulate(config: Config, *, store: Store | None = None, progress: bool = True,
             on_round_end: Callable[[int, dict], None] | None = None,
             experiment: Experiment | None = None) -> dict:
    """Run (or resume) the configured simulation; returns
    ``{config, summary, history, params}``.  With a store, a finished run is
    returned from it and an unfinished one resumes from its last checkpoint; while another
    process trains the same key (:meth:`~fedlib.store.Store.claim`) this one waits and
    returns its result, so a configuration is never trained twice at once."""
    if store is None:
        with single_thread():
            return _simulate(config, store, None, progress, on_round_end, experiment)
    key = store.key(config)
    stored = store.load_result(key)
    if stored is None:
        with store.claim(key):  # one trainer per key: a process training it now finishes first
            stored = store.load_result(key)
            if stored is None:
                with single_thread():
                    return _simulate(config, store, key, progress, on_round_end, experiment)
    stored["from_store"] = True
    return stored


def _simulate(config, store, key, progress, on_round_end, experiment) -> dict:
    exp = experiment or prepare(config)
    if config.device != "cpu":  # a copy: the loaded data may be shared (memoized) on the CPU
        exp.data = dataclasses.replace(exp.data, **{name: getattr(exp.data, name).to(config.device)
                                                    for name in ("train_x", "train_y", "test_x", "test_y")})
    plan = exp.algorithm.stages.plan(exp)
    multi = len(plan) > 1
    saved = store.load_checkpoint(key) if store is not None else None
    run = saved or {"stage": 0, "outputs": {}, "stage_state": None, "history": [], "elapsed_s": 0.0}
    trainer = client_trainer(config, exp.algorithm)
    start_time = time.perf_counter() - run["elapsed_s"]
    done_before = sum(s.rounds for s in plan[:run["stage"]]) + (run["stage_state"] or {}).get("round", 0)
    bar = tqdm(total=_progress_total(plan), initial=done_before, desc=f"{config.method} on {config.dataset}",
               disable=not progress, unit="round", dynamic_ncols=True)

    def checkpoint() -> None:
        run["elapsed_s"] = time.perf_counter() - start_time
        if store is not None:
            store.save_checkpoint(key, config, run)

    try:
        for index in range(run["stage"], len(plan)):
            stage = plan[index]
            if stage.rounds == 0:
                run["outputs"][stage.name] = stage.compute(exp, run["outputs"])
            else:
                sub = stage.build(exp, run["outputs"]) if stage.build is not None else exp
                if run["stage_state"] is None:
                    init = stage.initial(sub, run["outputs"]) if stage.initial is not None else None
                    run["stage_state"] = _initial_state(sub, init)
                state = run["stage_state"]
                label = stage.name if multi else None

                def on_round(round_: int, st: dict) -> None:
                    if round_ % config.checkpoint_every == 0 and round_ < stage.rounds:
                        checkpoint()
                    if on_round_end is not None:
                        on_round_end(round_, st)

                _run_rounds(sub, state, stage.rounds, stage, on_round=on_round, trainer=trainer, bar=bar,
                            label=label)
                final = state["params"]
                if sub.algorithm.server_training.name != "none":
                    final = sub.algorithm.server_training.after_training(
                        _server_round(sub, 0, [], [], []), final, state["server_training_state"])
                    if stage.evaluate and any(not torch.equal(final[k], state["params"][k]) for k in final):
                        row = {**_evaluation_row(sub, final, stage.rounds), "after_training": True}
                        state["history"].append({**row, "stage": label} if label is not None else row)
                output = stage.finish(sub, run["outputs"], final) if stage.finish is not None else {"params": final}
                run["outputs"][stage.name] = output
                run["history"] += state["history"]
                if "diverged_round" in state and "diverged" not in run:
                    run["diverged"] = {"round": state["diverged_round"], "stage": label}
                if "personal_final" in state:
                    run["outputs"]["personal_final"] = state["personal_final"]
                run["stage_state"] = None
            run["stage"] = index + 1
            if index + 1 < len(plan):
                checkpoint()
    finally:
        bar.close()

    history = run["history"]
    final = run["outputs"][plan[-1].name]
    evaluated = [h for h in history if "test_accuracy" in h]
    summary = {
        "final_accuracy": evaluated[-1]["test_accuracy"] if evaluated else None,
        "wall_time_s": time.perf_counter() - start_time,
        "rounds": config.rounds,
        "key": key,
        "algorithm": exp.algorithm.describe(),
        "train_class_counts": exp.class_counts.sum(0).tolist(),  # n_y over all clients (many/medium/few)
    }
    if multi:
        summary["stage_rounds"] = {s.name: s.rounds for s in plan}
    if "diverged" in run:  # the first round after which the parameters were not finite
        summary["diverged_round"] = run["diverged"]["round"]
        if multi:
            summary["diverged_stage"] = run["diverged"]["stage"]
    pm = run["outputs"].get("personal_final")
    if pm is not None:
        summary.update(pm)
    extra = {k: v for k, v in final.items() if k != "params"}
    if extra:
        summary["stage_outputs"] = _jsonable(extra)
    params = {k: v.detach().cpu() for k, v in final["params"].items()}
    if store is not None:
        store.save_result(key, config, summary, history, params)
    return {"config": config.to_dict(), "summary": summary, "history": history, "params": params}


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    return value
