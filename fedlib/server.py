"""The server's side of a round: the clients' updates become the next :class:`ServerState`.

Public, for a third party that collects the clients' updates itself (a Flower
strategy, say)::

    aggregate(algorithm, outputs, optimizer, *, keys=()) -> Params
    server_update(model, algorithm, state: ServerState, outputs, optimizer, *, num_clients,
                  round_) -> ServerState

* ``outputs``: the sampled clients' :class:`~fedlib.engine.ClientOutput` (from
  :func:`fedlib.client.client_update`), any order;
* ``optimizer``: the clients' :class:`~fedlib.engine.ClientOptimizer` (FedNova's
  effective steps a_k read its learning rate and momentum);
* ``keys``: the client-local parameter names (:func:`fedlib.state.local_keys`), left
  out of the aggregate.

:func:`aggregate` is the aggregator's Δ = combine(Δ_k, n_k, a_k) of the shared
parameters (FedAvg: Σ_k n_k/n Δ_k).  :func:`server_update` applies it: the server
optimizer steps along the pseudo-gradient −Δ (FedAvg: w + Δ), the correction
updates its server state from the clients' messages (SCAFFOLD's c), each client's
new state is kept (its local parameters with them), and ``round`` is set.  It
returns a new :class:`ServerState` and leaves ``state`` unchanged.  The
server-training part (distillation, calibration) runs after it, in
:func:`fedlib.simulation.run_round`, on the server's data.

Example, one round over clients ``ks`` (their outputs from ``client_update``)::

    state = server_update(exp.model, exp.algorithm, state, outputs, client_optimizer(config),
                          num_clients=exp.num_clients, round_=state.round + 1)
"""

from __future__ import annotations

from . import tree
from .engine import ClientOptimizer, ClientOutput
from .state import ServerState, local_keys, shared
from .tree import Params

__all__ = ["aggregate", "server_update"]


def aggregate(algorithm, outputs: list[ClientOutput], optimizer: ClientOptimizer, *, keys=()) -> Params:
    """Δ, the aggregator's combination of the clients' Δ_k over the shared parameters."""
    steps = [algorithm.correction.effective_steps(o.num_steps, optimizer.lr, optimizer.momentum) for o in outputs]
    return algorithm.aggregator.combine([shared(o.delta, keys) for o in outputs], [o.num_samples for o in outputs],
                                        steps)


def server_update(model, algorithm, state: ServerState, outputs: list[ClientOutput], optimizer: ClientOptimizer, *,
                  num_clients: int, round_: int) -> ServerState:
    """The state after round ``round_`` from the clients' ``outputs`` (module doc)."""
    keys = local_keys(model, algorithm)
    pseudo_grad = tree.scale(aggregate(algorithm, outputs, optimizer, keys=keys), -1.0)
    new_shared, optimizer_state = algorithm.server_optimizer.apply(shared(state.params, keys), pseudo_grad,
                                                                   state.optimizer_state)
    params = {k: new_shared.get(k, v) for k, v in state.params.items()}
    correction_state = algorithm.correction.server_update(state.correction_state, [o.message for o in outputs],
                                                          num_clients)
    client_states = dict(state.client_states)
    for o in outputs:
        cs = dict(o.client_state)
        if keys:
            cs["local"] = {k: o.local[k] for k in keys}
        if cs:
            client_states[o.client] = cs
    return state.replace(params=params, optimizer_state=optimizer_state, correction_state=correction_state,
                         client_states=client_states, round=round_)
