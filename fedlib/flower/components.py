"""fedlib's method compositions as a Flower ``(ServerApp, ClientApp)`` pair (Message API).

Rounds (fedlib's round structure, :mod:`fedlib.simulation`):

0. the ServerApp asks every node (``query``) for its ``partition-id``, its number of
   samples and its class counts n_y (an ArrayRecord): the server learns which node holds
   which fedlib client and the statistics server-side parts need (FEDIC's client- and
   class-wise logit adjustment), never the data;
1. ``configure_train`` samples fedlib's clients of the round (seeded by (seed, round), as
   :func:`fedlib.run`) and sends each its message: the shared parameters (``arrays``), the
   correction's server state (``correction``: SCAFFOLD's c), the server-training state when
   the client loss reads it (Ratio Loss's class weights), the round (``config``);
2. ``@app.train()``: the node runs fedlib's local update for its client (client loss,
   representation loss, correction, phases, mini-batches seeded by (seed, round, client)),
   keeps its own state in ``Context.state`` (SCAFFOLD's c_k, MOON's previous model, a
   personalized method's local parameters) and replies with its model's shared parameters
   (``arrays``), what the correction sends the server (``message``: SCAFFOLD's Δc_k), its
   statistics (``stats``: class counts) and metrics (``num-examples``, ``num-steps``, loss);
3. ``aggregate_train`` orders the replies by partition-id and takes fedlib's server step:
   aggregator, server optimizer, correction update, server training on server-held data;
4. ``configure_evaluate`` / ``@app.evaluate()``: where the run evaluates personalized models
   (``personal_eval_every``), every node scores its personalized model on its own test sets,
   and the server pools them (FedABC Eqs. 7-8); the global model is evaluated on the server's
   test set (``evaluate_fn``), as fedlib does.
"""

from __future__ import annotations

import json
import math
import time
from logging import INFO

import numpy as np
import torch
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MessageType, MetricRecord, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import Strategy
from flwr.supercore import log

import fedlib.flower.bridge as bridge
from .records import from_record, to_record

__all__ = ["apps", "server_app", "client_app", "FedlibStrategy", "STATE_KEY"]

STATE_KEY = "fedlib-client-state"  # the node's per-client state in Context.state


# ------------------------------------------------------------------------------ what crosses the wire
def _config_record(exp, round_: int) -> ConfigRecord:
    """The round and the run's whole fedlib configuration: a node trains as the server configures it."""
    return ConfigRecord({"server-round": round_, "fedlib-config": bridge.config_json(exp.config)})


def _server_message(exp, state: "bridge.ServerState", round_: int) -> RecordDict:
    keys = bridge.local_keys(exp)
    content = RecordDict({"arrays": to_record(bridge.shared(state.params, keys)),
                          "correction": to_record(state.correction_state),
                          "config": _config_record(exp, round_)})
    if bridge.loss_reads_server_state(exp):
        content["server-training"] = to_record(state.server_training_state)
    return content


def _received(content: RecordDict) -> tuple[int, dict, dict, dict]:
    round_ = int(content["config"]["server-round"])
    sts = from_record(content["server-training"]) if "server-training" in content else {}
    return round_, from_record(content["arrays"]), from_record(content["correction"]), sts


def _partition_id(context: Context, exp) -> int:
    if "partition-id" not in context.node_config:
        raise ValueError("this node has no partition-id in its node config: start it with "
                         f"--node-config \"partition-id=<0..{exp.num_clients - 1}>\"")
    pid = int(context.node_config["partition-id"])
    if not 0 <= pid < exp.num_clients:
        raise ValueError(f"partition-id={pid} is outside fedlib's clients 0..{exp.num_clients - 1}")
    return pid


# ------------------------------------------------------------------------------ the ClientApp
def client_app() -> ClientApp:
    """The ClientApp of every fedlib method: it trains as the server's messages configure it
    (``config["fedlib-config"]``), on the client its node's ``partition-id`` names."""
    app = ClientApp()

    def setup(msg: Message, context: Context):
        exp = bridge.experiment(bridge.config_from_json(str(msg.content["config"]["fedlib-config"])))
        return exp, _partition_id(context, exp)

    def state_key(exp) -> str:  # one run's state never meets another's on the same node
        return f"{STATE_KEY}-{bridge.config_tag(exp.config)}"

    @app.query()
    def describe(msg: Message, context: Context) -> Message:
        exp, pid = setup(msg, context)
        metrics = MetricRecord({"partition-id": pid, "num-examples": int(len(exp.client_indices[pid]))})
        stats = to_record({"class-counts": torch.as_tensor(exp.class_counts[pid])})
        return Message(RecordDict({"metrics": metrics, "stats": stats}), reply_to=msg)

    def own_state(exp, context: Context) -> dict:
        key = state_key(exp)
        return from_record(context.state[key]) if key in context.state else {}

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        exp, pid = setup(msg, context)
        round_, received, correction, sts = _received(msg.content)
        out = bridge.client_update(exp, pid, round_, received, correction, sts, own_state(exp, context))
        context.state[state_key(exp)] = to_record(bridge.client_state_after(exp, out))
        metrics = MetricRecord({"partition-id": pid, "num-examples": int(out.num_samples),
                                "num-steps": int(out.num_steps), "loss-sum": float(out.loss_sum),
                                "loss-count": int(out.loss_count)})
        content = RecordDict({"arrays": to_record(bridge.shared(out.local, bridge.local_keys(exp))),
                              "message": to_record(out.message), "metrics": metrics,
                              "stats": to_record({"class-counts": torch.as_tensor(exp.class_counts[pid])})})
        return Message(content, reply_to=msg)

    @app.evaluate()
    def evaluate(msg: Message, context: Context) -> Message:
        exp, pid = setup(msg, context)
        round_, received, correction, sts = _received(msg.content)
        if exp.client_test_indices is None:
            raise ValueError("this run evaluates no personalized models (personal_eval_every = 0)")
        scores = bridge.personal_scores(exp, pid, round_, received, correction, sts, own_state(exp, context))
        metrics = {"partition-id": pid}
        for name, (acc, n) in scores.items():
            metrics[f"{name}-accuracy"], metrics[f"{name}-examples"] = float(acc), int(n)
        return Message(RecordDict({"metrics": MetricRecord(metrics)}), reply_to=msg)

    return app


# ------------------------------------------------------------------------------ the strategy
class FedlibStrategy(Strategy):
    """fedlib's server on Flower's Strategy interface.  It holds fedlib's server state (parameters,
    server optimizer, correction and server-training state); the ArrayRecord Flower passes
    between rounds is the shared part of its parameters."""

    def __init__(self, exp, node_of: dict[int, int]):
        self.exp, self.node_of = exp, node_of
        self.state = bridge.initial_state(exp)
        self.history: list[dict] = []
        self.personal_final: dict | None = None
        self.diverged_round: int | None = None
        self._row: dict = {}

    # -- helpers
    def _messages(self, clients, round_: int, kind: str, grid: Grid):
        content = _server_message(self.exp, self.state, round_)
        return [Message(content, dst_node_id=self.node_of[k], message_type=kind, group_id=str(round_))
                for k in clients]

    @staticmethod
    def _by_partition(replies) -> dict[int, Message]:
        out = {}
        for msg in replies:
            if msg.has_error():
                raise RuntimeError(f"node {msg.metadata.src_node_id} failed: {msg.error.reason}")
            out[int(msg.content["metrics"]["partition-id"])] = msg
        return out

    def _evaluating(self, round_: int) -> bool:
        c = self.exp.config
        return round_ % c.eval_every == 0 or round_ == c.rounds

    # -- training
    def configure_train(self, server_round, arrays, config, grid):
        return self._messages(bridge.sampled_clients(self.exp, server_round), server_round, MessageType.TRAIN, grid)

    def aggregate_train(self, server_round, replies):
        exp, state = self.exp, self.state
        sampled = bridge.sampled_clients(exp, server_round)
        got = self._by_partition(replies)
        missing = sorted(set(sampled) - set(got))
        if missing:
            raise RuntimeError(f"round {server_round}: no reply from clients {missing}")
        outputs = []
        for k in sampled:  # fedlib's client order, whatever order the replies came in
            content = got[k].content
            m = content["metrics"]
            w_k = from_record(content["arrays"])
            local = {name: w_k.get(name, v) for name, v in state.params.items()}
            delta = {name: w - state.params[name] for name, w in w_k.items()}
            outputs.append(bridge.ClientOutput(k, delta, int(m["num-examples"]), int(m["num-steps"]),
                                               float(m["loss-sum"]), int(m["loss-count"]), {},
                                               from_record(content["message"]), local))
        report = bridge.server_step(exp, state, server_round, outputs, evaluating=self._evaluating(server_round),
                                    final=server_round == exp.config.rounds)
        self.state = report.state
        if report.diverged and self.diverged_round is None:
            self.diverged_round = server_round
        self._row = {"round": server_round, "train_loss": report.train_loss, **report.server_report}
        keys = bridge.local_keys(exp)
        return (ArrayRecord(bridge.shared(self.state.params, keys)),
                MetricRecord({"train-loss": float(report.train_loss), "clients": len(outputs)}))

    # -- personalized evaluation on the nodes
    def _personal_round(self, round_: int) -> bool:
        c = self.exp.config
        return bool(c.personal_eval_every) and self.exp.client_test_indices is not None and (
            round_ % c.personal_eval_every == 0 or round_ == c.rounds)

    def configure_evaluate(self, server_round, arrays, config, grid):
        if not self._personal_round(server_round):
            return []
        return self._messages(range(self.exp.num_clients), server_round, MessageType.EVALUATE, grid)

    def aggregate_evaluate(self, server_round, replies):
        replies = list(replies)
        if not replies:
            return None
        got = self._by_partition(replies)
        scores = []
        for k in range(self.exp.num_clients):
            m = got[k].content["metrics"]
            scores.append({name: (float(m[f"{name}-accuracy"]), int(m[f"{name}-examples"]))
                           for name in ("personalized", "drift")})
        pm = bridge.pool_personal(scores)
        self._row.update({k: v for k, v in pm.items() if not k.endswith("per_client")})
        if server_round == self.exp.config.rounds:
            self.personal_final = pm
        return MetricRecord({"personalized-accuracy": pm["personalized_accuracy"],
                             "drift-accuracy": pm["drift_accuracy"]})

    # -- the global model on the server's test set; closes the round's history row
    def evaluate_global(self, server_round: int, arrays: ArrayRecord):
        if server_round == 0:
            return None
        row = dict(self._row)
        if self._evaluating(server_round):
            row = {**bridge.evaluation_row(self.exp, self.state.params, server_round), **row}
        if set(row) - {"round", "train_loss"}:
            self.history.append(row)
        return MetricRecord({"test-accuracy": row["test_accuracy"]}) if "test_accuracy" in row else None

    def finish(self) -> dict:
        """The final parameters (after the server-training part's last step, evaluated again if it changed them)."""
        final = bridge.after_training(self.exp, self.state)
        if any(not torch.equal(final[k], self.state.params[k]) for k in final):
            self.history.append({**bridge.evaluation_row(self.exp, final, self.exp.config.rounds),
                                 "after_training": True})
        return final

    def summary(self) -> None:
        log(INFO, "\t├──> fedlib method %r, %d clients, participation %s", self.exp.config.method,
            self.exp.num_clients, self.exp.config.participation)


# ------------------------------------------------------------------------------ the ServerApp
class _StoppableGrid:
    """The run's Grid, whose ``send_and_receive`` gives up when ``stop`` is set (the simulation
    runtime ended: no reply will ever come) instead of waiting out its timeout."""

    def __init__(self, grid: Grid, stop):
        self._grid, self._stop = grid, stop

    def __getattr__(self, name):
        return getattr(self._grid, name)

    def send_and_receive(self, messages, *, timeout: float | None = None):
        waiting = set(self._grid.push_messages(messages))
        end = time.monotonic() + (timeout if timeout is not None else math.inf)
        replies = []
        while waiting and time.monotonic() < end:
            got = list(self._grid.pull_messages(waiting))
            replies += got
            waiting -= {m.metadata.reply_to_message_id for m in got}
            if waiting:
                if self._stop is not None and self._stop.is_set():
                    raise RuntimeError("the simulation runtime stopped while the server waited for replies")
                time.sleep(0.05)
        return replies


def _discover(grid: Grid, exp, timeout: float) -> dict[int, int]:
    """Ask every node for its partition-id and statistics; returns partition-id → node id."""
    deadline = time.monotonic() + timeout
    while len(nodes := list(grid.get_node_ids())) < exp.num_clients:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{len(nodes)} nodes connected, fedlib's configuration has {exp.num_clients} clients")
        time.sleep(0.5)
    messages = [Message(RecordDict({"config": _config_record(exp, 0)}), dst_node_id=n,
                        message_type=MessageType.QUERY, group_id="0") for n in nodes]
    replies = FedlibStrategy._by_partition(grid.send_and_receive(messages, timeout=timeout))
    missing = sorted(set(range(exp.num_clients)) - set(replies))
    if missing:
        raise RuntimeError(f"no node holds fedlib's clients {missing} (each node needs a distinct partition-id)")
    counts = np.stack([from_record(replies[k].content["stats"])["class-counts"].numpy()
                       for k in range(exp.num_clients)])
    bridge.set_class_counts(exp, counts.astype(exp.class_counts.dtype))
    return {k: replies[k].metadata.src_node_id for k in range(exp.num_clients)}


def _run_one(grid, config, timeout: float) -> dict:
    started = time.perf_counter()
    exp = bridge.experiment(config)
    node_of = _discover(grid, exp, timeout)
    strategy = FedlibStrategy(exp, node_of)
    keys = bridge.local_keys(exp)
    strategy.start(grid, ArrayRecord(bridge.shared(strategy.state.params, keys)), num_rounds=config.rounds,
                   timeout=timeout, evaluate_fn=strategy.evaluate_global)
    final = strategy.finish()
    summary = bridge.summary(exp, strategy.history, started, strategy.diverged_round, strategy.personal_final)
    log(INFO, "fedlib: %s", json.dumps({"final_accuracy": summary["final_accuracy"], "method": config.method,
                                         "rounds": config.rounds}))
    return {"config": config, "history": strategy.history, "summary": summary, "params": final}


def server_app(*configs: dict, timeout: float = 3600.0, sink: list | None = None, stop=None) -> ServerApp:
    """The ServerApp running each fedlib configuration in turn over the same nodes (one, usually).
    Flower's run config (``[tool.flwr.app.config]``, ``flwr run --run-config``) overrides any
    fedlib parameter of each.  ``timeout``: seconds the server waits for a round's replies.
    ``sink``: a list that receives each run's ``{config, history, summary, params}``; ``stop``: a
    :class:`threading.Event` whose setting ends the server's waiting (its runtime has ended)."""
    for c in configs:
        bridge.resolve_config(c)  # validated now, before anything starts
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        resolved = [bridge.resolve_config(c, context.run_config) for c in configs]
        for config in resolved:
            out = _run_one(_StoppableGrid(grid, stop), config, timeout)
            if sink is not None:
                sink.append(out)

    return app


def apps(*, timeout: float = 3600.0, **config) -> tuple[ServerApp, ClientApp]:
    """``(ServerApp, ClientApp)`` for the fedlib configuration ``config`` (``method``, ``dataset``, …,
    as :func:`fedlib.run`), validated now, before anything starts.  The ClientApp is the same for
    every method: the server's messages carry the configuration."""
    return server_app(config, timeout=timeout), client_app()
