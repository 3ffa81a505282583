"""The server's state between rounds: :class:`ServerState`, built by :func:`initial_state`.

A round (:func:`fedlib.simulation.run_round`) reads a :class:`ServerState` and
gives the next one; the staged driver checkpoints it (:meth:`ServerState.to_dict`,
plain tensors, numbers and dicts, as the results store loads them with
``weights_only``) so an interrupted run resumes where it stopped.

Fields (FedJAX's ``ServerState`` and Flower's strategy state play the same role):

* ``params``: the global model w^t, every parameter (a personalized method's
  local parameters keep their initial value here; each client's own copy is in
  ``client_states[k]["local"]``);
* ``optimizer_state``: the server optimizer's state over the shared parameters
  (FedAvgM's momentum, FedAdam's moments);
* ``correction_state``: the client correction's server state (SCAFFOLD's c);
* ``server_training_state``: the server-training part's state (FEDIC's
  calibration and optimizers, Ratio Loss's class weights);
* ``client_states``: client id → that client's state (``"correction"``,
  ``"local"``, ``"representation"``), for the clients that have any;
* ``round``: the last round done (0: none);
* ``history``: the evaluated rounds' rows so far (the stage's history).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from . import tree
from .tree import Params

__all__ = ["ServerState", "initial_state", "local_keys", "shared"]


@dataclass
class ServerState:
    """The state a round starts from (module doc)."""

    params: Params
    optimizer_state: dict
    correction_state: dict
    server_training_state: dict
    client_states: dict[int, dict] = field(default_factory=dict)
    round: int = 0
    history: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        """The checkpoint form: a dict of the fields (tensors stay tensors)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_dict(cls, values: dict) -> "ServerState":
        return cls(**{f.name: values[f.name] for f in fields(cls)})

    def replace(self, **changes) -> "ServerState":
        """A new state with ``changes``; the other fields are shared, not copied."""
        return ServerState(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **changes})


def local_keys(model, algorithm) -> tuple[str, ...]:
    """The parameters of ``model`` that stay on the clients (the personalization part's)."""
    return tuple(algorithm.personalization.local_keys(model))


def shared(params: Params, keys) -> Params:
    """``params`` without the client-local ``keys``."""
    return {k: v for k, v in params.items() if k not in keys}


def initial_state(model, algorithm, params: Params | None = None) -> ServerState:
    """The state before round 1: the global model ``params`` (default: ``model``'s own
    parameters, cloned) and every part's initial server state."""
    if params is None:
        params = tree.clone(dict(model.named_parameters()))
    return ServerState(
        params=params,
        optimizer_state=algorithm.server_optimizer.init(shared(params, local_keys(model, algorithm))),
        correction_state=algorithm.correction.init_server_state(params),
        server_training_state=algorithm.server_training.init_state(params),
    )

