"""The federated round loop, shared by every engine.

One round t (FedAvg's structure; FedLC Algorithm 1 is the client part):

1. sample clients S_t (participation rate, seeded by (seed, t));
2. each sampled client runs its local steps from the global model w^t
   (the engine: :mod:`fedlib.engine`);
3. the aggregator combines Δ_k into Δ, the server optimizer applies −Δ, and
   the client correction updates its server state (e.g. SCAFFOLD's c);
4. every ``eval_every`` rounds (and at the last) the global model is evaluated
   on the test set: accuracy and per-class accuracy;
5. every ``checkpoint_every`` rounds the full state goes to the store, so an
   interrupted run resumes where it stopped and ends with the same model.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from tqdm.auto import tqdm

from . import tree
from .algorithms import Algorithm, build_algorithm
from .config import Config
from .data import FederatedData, load_dataset
from .engine import ClientTask, client_batches, sample_clients, train_clients_sequential
from .models import build_model
from .partition import count_matrix, long_tail, partition
from .store import Store

__all__ = ["Experiment", "prepare", "evaluate", "simulate"]


@dataclass
class Experiment:
    """Everything a run needs, built once from a :class:`Config`."""

    config: Config
    data: FederatedData
    client_indices: list[np.ndarray]  # rows of data.train_x per client
    class_counts: np.ndarray  # clients × classes, n_y per client (FedLC Fig. 4)
    model: torch.nn.Module
    algorithm: Algorithm

    def initial_params(self) -> dict[str, torch.Tensor]:
        return {k: v.detach().clone() for k, v in self.model.named_parameters()}


def _client_indices(config: Config, data: FederatedData) -> list[np.ndarray]:
    if config.partition == "natural":
        return [np.asarray(ix, dtype=np.int64) for ix in data.client_indices]
    labels = data.train_y.numpy()
    kept = np.arange(len(labels))
    if config.long_tail_if > 1:
        kept = long_tail(labels, config.long_tail_if, config.seed)
    parts = partition(labels[kept], config.partition, config.num_clients, config.seed,
                      alpha=config.partition_alpha, k=config.partition_k, beta=config.partition_beta,
                      min_size=config.min_client_size)
    return [kept[p] for p in parts]


def _subset(x: torch.Tensor, y: torch.Tensor, limit: int, seed: int, stream: int):
    """A seeded random subset of ``limit`` rows (all rows when limit is 0 or larger)."""
    if not limit or limit >= len(y):
        return x, y
    rows = np.sort(np.random.default_rng([seed, stream]).choice(len(y), size=limit, replace=False))
    return x[rows], y[rows]


def prepare(config: Config) -> Experiment:
    """Load the data, partition it, build the model (seeded) and the algorithm."""
    data = load_dataset(config.dataset, config.data_root, synthetic_alpha=config.synthetic_alpha,
                        synthetic_beta=config.synthetic_beta, num_clients=config.num_clients, seed=config.seed)
    if config.max_train_samples or config.max_test_samples:
        data = dataclasses.replace(data)
        data.train_x, data.train_y = _subset(data.train_x, data.train_y, config.max_train_samples, config.seed, 2)
        data.test_x, data.test_y = _subset(data.test_x, data.test_y, config.max_test_samples, config.seed, 3)
    indices = _client_indices(config, data)
    counts = count_matrix(data.train_y.numpy(), indices, data.num_classes)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = build_model(config.model, data.num_classes, data.input_shape)
    model = model.to(config.device)
    return Experiment(config, data, indices, counts, model, build_algorithm(config))


@torch.no_grad()
def evaluate(model: torch.nn.Module, params: dict, x: torch.Tensor, y: torch.Tensor, num_classes: int,
             batch_size: int = 2048) -> tuple[float, np.ndarray]:
    """Test accuracy and per-class accuracy (NaN for a class absent from the test set)."""
    correct = torch.zeros(num_classes, dtype=torch.float64)
    total = torch.zeros(num_classes, dtype=torch.float64)
    for i in range(0, len(y), batch_size):
        logits = torch.func.functional_call(model, params, (x[i:i + batch_size],))
        yb = y[i:i + batch_size]
        hit = (logits.argmax(1) == yb).to(torch.float64).cpu()
        correct.index_add_(0, yb.cpu(), hit)
        total.index_add_(0, yb.cpu(), torch.ones_like(hit))
    per_class = np.where(total.numpy() > 0, correct.numpy() / np.maximum(total.numpy(), 1), np.nan)
    return float(correct.sum() / total.sum()), per_class


def _initial_state(exp: Experiment) -> dict:
    params = exp.initial_params()
    return {
        "round": 0,
        "params": params,
        "optimizer_state": exp.algorithm.server_optimizer.init(params),
        "correction_state": exp.algorithm.correction.init_server_state(params),
        "client_states": {},
        "history": [],
        "elapsed_s": 0.0,
    }


def client_trainer(config: Config):
    """The engine's per-round client training function named by ``config.engine``."""
    if config.engine == "vectorized":
        from .vectorized import train_clients_vectorized

        return functools.partial(train_clients_vectorized, memory_budget_gb=config.memory_budget_gb)
    return train_clients_sequential


def run_round(exp: Experiment, state: dict, round_: int) -> float:
    """Advance ``state`` by one round in place; returns the round's mean train loss."""
    c, alg = exp.config, exp.algorithm
    train_clients = client_trainer(c)
    device = c.device
    sampled = sample_clients(c.num_clients, c.participation, c.seed, round_)
    tasks = []
    for k in sampled:
        rows = exp.client_indices[k]
        client_state = state["client_states"].get(k) or alg.correction.init_client_state(state["params"])
        batches = [torch.as_tensor(b, device=device)
                   for b in client_batches(rows, c.local_epochs, c.batch_size, c.seed, round_, k)]
        counts = torch.as_tensor(exp.class_counts[k], dtype=torch.float32, device=device)
        tasks.append(ClientTask(k, torch.as_tensor(rows), counts, batches, client_state))
    x, y = exp.data.train_x, exp.data.train_y
    outputs = train_clients(exp.model, alg, state["params"], tasks, state["correction_state"], x, y, c.lr,
                            c.weight_decay)

    steps = [alg.correction.effective_steps(o.num_steps, c.lr) for o in outputs]
    delta = alg.aggregator.combine([o.delta for o in outputs], [o.num_samples for o in outputs], steps)
    pseudo_grad = tree.scale(delta, -1.0)
    state["params"], state["optimizer_state"] = alg.server_optimizer.apply(
        state["params"], pseudo_grad, state["optimizer_state"])
    state["correction_state"] = alg.correction.server_update(
        state["correction_state"], [o.message for o in outputs], c.num_clients)
    for o in outputs:
        if o.client_state:
            state["client_states"][o.client] = o.client_state
    state["round"] = round_
    return sum(o.loss_sum for o in outputs) / max(1, sum(o.loss_count for o in outputs))


def simulate(config: Config, *, store: Store | None = None, progress: bool = True,
             on_round_end: Callable[[int, dict], None] | None = None,
             experiment: Experiment | None = None) -> dict:
    """Run (or resume) the configured simulation; returns
    ``{summary, history, params}``.  With a store, a finished run is returned
    from it and an unfinished one resumes from its last checkpoint."""
    key = store.key(config) if store is not None else None
    if store is not None:
        stored = store.load_result(key)
        if stored is not None:
            return stored
    exp = experiment or prepare(config)
    state = (store.load_checkpoint(key) if store is not None else None) or _initial_state(exp)
    if config.device != "cpu":  # a copy: the loaded data may be shared (memoized) on the CPU
        exp.data = dataclasses.replace(exp.data, **{name: getattr(exp.data, name).to(config.device)
                                                    for name in ("train_x", "train_y", "test_x", "test_y")})

    start_time = time.perf_counter() - state["elapsed_s"]
    bar = tqdm(total=config.rounds, initial=state["round"], desc=f"{config.method} on {config.dataset}",
               disable=not progress, unit="round", dynamic_ncols=True)
    try:
        for round_ in range(state["round"] + 1, config.rounds + 1):
            train_loss = run_round(exp, state, round_)
            if round_ % config.eval_every == 0 or round_ == config.rounds:
                acc, per_class = evaluate(exp.model, state["params"], exp.data.test_x, exp.data.test_y,
                                          exp.data.num_classes)
                row = {"round": round_, "test_accuracy": acc, "train_loss": train_loss}
                row.update({f"acc_class_{k}": (None if np.isnan(v) else float(v)) for k, v in enumerate(per_class)})
                state["history"].append(row)
                bar.set_postfix(acc=f"{acc:.4f}", loss=f"{train_loss:.4f}")
            state["elapsed_s"] = time.perf_counter() - start_time
            if store is not None and (round_ % config.checkpoint_every == 0) and round_ < config.rounds:
                store.save_checkpoint(key, config, state)
            bar.update(1)
            if on_round_end is not None:
                on_round_end(round_, state)
    finally:
        bar.close()

    history = state["history"]
    summary = {
        "final_accuracy": history[-1]["test_accuracy"],
        "wall_time_s": state["elapsed_s"],
        "rounds": config.rounds,
        "key": key,
        "algorithm": exp.algorithm.describe(),
    }
    params = {k: v.detach().cpu() for k, v in state["params"].items()}
    if store is not None:
        store.save_result(key, config, summary, history, params)
    return {"config": config.to_dict(), "summary": summary, "history": history, "params": params}
