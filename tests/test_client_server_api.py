"""The public one-client / one-server-step functions (:func:`fedlib.client.client_update`,
:func:`fedlib.server.server_update`), called client by client as a third party (a Flower
adapter) would, give exactly the round the simulation runs with the sequential engine."""

from __future__ import annotations

import pytest
import torch

from fedlib.client import LocalTraining, client_optimizer, client_update, round_algorithm
from fedlib.config import Config
from fedlib.engine import sample_clients
from fedlib.experiment import prepare
from fedlib.server import aggregate, server_update
from fedlib.simulation import run_round, single_thread
from fedlib.state import initial_state

SYNTH = dict(dataset="synthetic", num_clients=6, batch_size=16, seed=1, rounds=3, participation=0.5,
             engine="sequential", personal_eval_every=0)


def _by_hand(exp, state, round_):
    c = exp.config
    alg = round_algorithm(exp.algorithm, state.server_training_state)
    outputs = [client_update(exp.model, alg, state.params, state.client_states.get(k, {}), exp.data.train_x,
                             exp.data.train_y, exp.client_indices[k], exp.class_counts[k], LocalTraining.of(c, round_),
                             client=k, server_correction_state=state.correction_state)
               for k in sample_clients(exp.num_clients, c.participation, c.seed, round_)]
    return server_update(exp.model, alg, state, outputs, client_optimizer(c), num_clients=exp.num_clients,
                         round_=round_)


@pytest.mark.parametrize("method", ["fedavg", "scaffold", "fedper+fedprox", "fedavgm+fednova"])
def test_client_by_client_rounds_equal_the_simulated_rounds(method):
    exp = prepare(Config(**SYNTH, method=method, momentum=0.5))
    with single_thread():
        ref = mine = initial_state(exp.model, exp.algorithm)
        for r in (1, 2, 3):
            before = mine
            ref = run_round(exp, ref, r).state
            mine = _by_hand(exp, mine, r)
            assert before.round == r - 1  # the state a round starts from is left as it was
    assert mine.round == ref.round == 3
    for k in ref.params:
        assert torch.equal(mine.params[k], ref.params[k]), k
    assert mine.client_states.keys() == ref.client_states.keys()
    assert initial_state(exp.model, exp.algorithm).params.keys() == ref.params.keys()


def test_aggregate_is_the_sample_weighted_mean_of_the_updates():
    """FedAvg's Δ = Σ n_k Δ_k / Σ n_k, against a float64 re-derivation."""
    exp = prepare(Config(**SYNTH))
    state = initial_state(exp.model, exp.algorithm)
    c = exp.config
    outs = [client_update(exp.model, exp.algorithm, state.params, {}, exp.data.train_x, exp.data.train_y,
                          exp.client_indices[k], exp.class_counts[k], LocalTraining.of(c, 1), client=k)
            for k in (0, 3, 4)]
    delta = aggregate(exp.algorithm, outs, client_optimizer(c))
    n = [o.num_samples for o in outs]
    for key, v in delta.items():
        ref = sum(float(nk) * o.delta[key].double() for nk, o in zip(n, outs)) / sum(n)
        torch.testing.assert_close(v.double(), ref, rtol=1e-6, atol=1e-7)
