"""The one module of :mod:`fedlib.flower` that calls fedlib's training internals.

Everything the Flower apps need from the training core goes through these few
functions: the experiment (data, partition, model, algorithm), the initial server
state, one client's local update, the server's step after the clients' replies,
the global evaluation and the final server training.  The apps themselves only
move what these return across the wire.
"""

from __future__ import annotations

import hashlib
import json
import time

import numpy as np

from .. import simulation as _sim
from ..api import Result, history_frame
from ..client import LocalTraining, client_task, client_update as _client_update, round_algorithm
from ..config import Config
from ..engine import ClientOutput, sample_clients
from ..evaluation import evaluation_row as _evaluation_row, personal_scores as _scores, pool_personal
from ..experiment import prepare
from ..state import ServerState, local_keys as _local_keys, shared

__all__ = ["single_thread", "experiment", "initial_state", "local_keys", "shared", "sampled_clients",
           "client_update", "client_state_after", "personal_scores", "pool_personal", "server_step",
           "evaluation_row", "after_training", "summary", "result", "loss_reads_server_state", "ClientOutput",
           "ServerState", "config_json", "config_from_json", "config_tag", "resolve_config", "refuse_stages",
           "set_class_counts"]

single_thread = _sim.single_thread

_EXPERIMENTS: dict[str, object] = {}


def config_json(config: Config) -> str:
    """The configuration as one JSON string (it travels in a ConfigRecord)."""
    return json.dumps(config.to_dict(), sort_keys=True)


def config_from_json(text: str) -> Config:
    return Config.from_dict(json.loads(text))


def config_tag(config: Config) -> str:
    """A short name of the configuration (per-run keys in a node's state)."""
    return hashlib.sha256(config_json(config).encode()).hexdigest()[:12]


def experiment(config: Config):
    """fedlib's :class:`~fedlib.experiment.Experiment` for ``config``, built once per process
    (a Flower node trains in many rounds; a Ray actor serves many nodes)."""
    key = config_json(config)
    if key not in _EXPERIMENTS:
        _EXPERIMENTS.clear()
        with single_thread():
            _EXPERIMENTS[key] = prepare(config)
    return _EXPERIMENTS[key]


def initial_state(exp) -> ServerState:
    """The server's state before round 1: parameters, optimizer, correction and server-training state."""
    return exp.initial_state()


def local_keys(exp) -> tuple[str, ...]:
    """The parameters that stay on the client (a personalized method's head)."""
    return _local_keys(exp.model, exp.algorithm)


def sampled_clients(exp, round_: int) -> list[int]:
    """fedlib's clients of round ``round_`` (seeded by (seed, round) only)."""
    return sample_clients(exp.num_clients, exp.config.participation, exp.config.seed, round_)


def loss_reads_server_state(exp) -> bool:
    """Whether the client loss depends on the server-training state (Ratio Loss's class weights)."""
    from ..algorithms.kinds import ClientLoss

    return getattr(type(exp.algorithm.loss), "for_round", ClientLoss.for_round) is not ClientLoss.for_round


def _global(exp, received: dict) -> dict:
    """The received shared parameters, completed with the initial values of the local ones
    (a client with no local parameters of its own yet starts from them)."""
    return {k: received.get(k, v) for k, v in exp.initial_params().items()}


def client_update(exp, client: int, round_: int, received: dict, correction_state: dict,
                  server_training_state: dict, client_state: dict, stream: int = 1) -> ClientOutput:
    """Client ``client``'s local update of round ``round_`` from the received shared parameters, the
    server's correction state and its own state (fedlib's sequential reference; ``stream`` 1 is
    training's mini-batches, 3 a personalized evaluation's)."""
    alg = round_algorithm(exp.algorithm, server_training_state)
    training = LocalTraining.of(exp.config, round_, stream, exp.max_local_steps)
    with single_thread():
        return _client_update(exp.model, alg, _global(exp, received), client_state, exp.data.train_x,
                              exp.data.train_y, exp.client_indices[client], exp.class_counts[client], training,
                              client=client, server_correction_state=correction_state)


def client_state_after(exp, out: ClientOutput) -> dict:
    """What the client keeps after its update: its parts' state and its local parameters."""
    state = dict(out.client_state)
    keys = local_keys(exp)
    if keys:
        state["local"] = {k: out.local[k] for k in keys}
    return state


def personal_scores(exp, client: int, round_: int, received: dict, correction_state: dict,
                    server_training_state: dict, client_state: dict) -> dict:
    """The client's personalized model (``personalized_model``: after a local update, nothing kept, or
    the global model with its stored local parameters) on its own test set and on its class-balanced
    local test set: ``{"personalized": (accuracy, n), "drift": (accuracy, n)}``."""
    if exp.config.personalized_model == "local_update":
        model = client_update(exp, client, round_, received, correction_state, server_training_state, client_state,
                              stream=3).local
    else:
        params = _global(exp, received)
        task = client_task(exp.model, exp.algorithm, params, client_state, exp.client_indices[client],
                           exp.class_counts[client], LocalTraining.of(exp.config, round_, 3), client=client)
        model = task.start if task.start is not None else params
    with single_thread():
        return _scores(exp, model, client)


def server_step(exp, state: ServerState, round_: int, outputs: list[ClientOutput], *, evaluating: bool,
                final: bool):
    """The server's round ``round_`` from the sampled clients' ``outputs``: fedlib's round
    (:func:`fedlib.simulation.run_round`) with the clients' updates replayed instead of trained —
    aggregation, server optimizer, correction state, server training on server-held data.  Returns
    its :class:`~fedlib.simulation.RoundReport` (the next state with no client's state in it: those
    stay on the clients)."""
    by_client = {o.client: o for o in outputs}

    def replay(model, alg, params, tasks, correction_state, x, y, opt):
        return [by_client[t.client] for t in tasks]

    with single_thread():
        report = _sim.run_round(exp, state, round_, trainer=replay, evaluating=evaluating, final=final)
    report.state = report.state.replace(client_states={})
    return report


def evaluation_row(exp, params: dict, round_: int) -> dict:
    """The global model on the global test set: ``{"round", "test_accuracy", "acc_class_<y>"…}``."""
    with single_thread():
        return _evaluation_row(exp, params, round_)


def after_training(exp, state: ServerState) -> dict:
    """The final model after the server-training part's last step (the aggregate itself for most methods)."""
    alg = exp.algorithm
    if alg.server_training.name == "none":
        return state.params
    with single_thread():
        return alg.server_training.after_training(_sim._server_round(exp, 0, [], [], []), state.params,
                                                  state.server_training_state)


def set_class_counts(exp, counts: np.ndarray) -> None:
    """The clients' class counts n_y as they reported them (the server never sees their data)."""
    if counts.shape != exp.class_counts.shape:
        raise ValueError(f"the clients reported class counts of shape {counts.shape}, expected "
                         f"{exp.class_counts.shape}")
    exp.class_counts = counts


def summary(exp, history: list[dict], started: float, diverged_round: int | None, personal: dict | None) -> dict:
    evaluated = [h for h in history if "test_accuracy" in h]
    out = {"final_accuracy": evaluated[-1]["test_accuracy"] if evaluated else None,
           "wall_time_s": time.perf_counter() - started, "rounds": exp.config.rounds, "key": None,
           "algorithm": exp.algorithm.describe(), "train_class_counts": exp.class_counts.sum(0).tolist(),
           "engine": "flower"}
    if diverged_round is not None:
        out["diverged_round"] = diverged_round
    if personal:
        out.update(personal)
    return out


def result(config: Config, history: list[dict], summary_: dict, params: dict) -> Result:
    return Result(config, history_frame(history), summary_, {k: v.detach().cpu() for k, v in params.items()})


def resolve_config(baked: dict, run_config: dict | None = None) -> Config:
    """The run's :class:`Config`: ``baked`` (what :func:`fedlib.flower.apps` was given) with the
    fedlib parameters of Flower's run config (``[tool.flwr.app.config]``, ``flwr run --run-config``)
    on top; ``-`` in a key reads as ``_``.  Validated here, before any work; a multi-stage method
    is refused.  ``engine`` is ``"sequential"``: a node trains its one client with the reference
    engine (the vectorized one equals it to float32 rounding)."""
    from dataclasses import fields

    names = {f.name for f in fields(Config)}
    values = dict(baked)
    for key, value in (run_config or {}).items():
        name = str(key).replace("-", "_")
        if name in names:
            values[name] = value
    config = Config.from_dict({**values, "engine": "sequential"})
    refuse_stages(config)
    return config


def refuse_stages(config: Config) -> None:
    """A method whose stages are not one federation of rounds cannot be a Flower app (ValueError)."""
    from ..algorithms import build_algorithm

    stages = build_algorithm(config).stages
    if stages.name != "single":
        raise ValueError(f"method {config.method!r} cannot be a Flower app: its stages ({stages.name}) cluster the "
                         "clients and train several models on different inputs one after another, while a Flower "
                         "ServerApp runs one federation of rounds on one model")
