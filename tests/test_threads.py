"""A run's intra-op threads are a setting (``threads``, issue 52).

``threads=1`` (the default) is what every run did before the setting existed: same store key, same
numbers.  ``threads=N`` trains and evaluates on N torch threads.  CPU kernels then split their
reductions differently, so the numbers may move by float rounding: the thread count enters the store key
(and the stored configuration, the run's provenance), and the 2-thread run equals the 1-thread run to the
tolerance this machine measures the way ``test_refactor_identity.py`` measures its own: 16 × the largest
change one-ulp nudges of the initial parameters cause (:func:`conftest.nudged`), plus 4 ulp.
"""

import json

import numpy as np
import pytest
import torch

from fedlib import run
from fedlib.config import Config, ConfigError
from fedlib.simulation import simulate
from fedlib.store import Store

from conftest import NUDGE_FACTOR, NUDGE_SEEDS, have_dataset, nudged

# FMNIST with the MLP (784→260→200→10): its matrix products are the kernels a thread count splits
TINY = dict(dataset="fmnist", model="mlp", num_clients=4, partition="dirichlet", partition_beta=0.5,
            max_train_samples=640, max_test_samples=200, rounds=2, batch_size=32, lr=0.05, seed=1)
needs_fmnist = pytest.mark.skipif(not have_dataset("fmnist"), reason="FashionMNIST not found under FEDLIB_DATA")


@pytest.mark.parametrize("bad", [0, -2])
def test_a_thread_count_below_one_is_refused_by_name(bad):
    with pytest.raises(ConfigError, match=r"threads must be an integer ≥ 1"):
        Config(threads=bad)


def test_one_thread_is_the_default_and_keeps_every_stored_key(tmp_path):
    store = Store(tmp_path)
    one, two = Config(**TINY), Config(**TINY, threads=2)
    assert one.threads == 1 and "threads" not in one.key_dict()  # the key every earlier run has
    assert two.key_dict()["threads"] == 2
    assert store.key(Config(**TINY, threads=1)) == store.key(one) != store.key(two)


def _threads_seen(config: Config) -> set[int]:
    seen = set()
    simulate(config, progress=False, on_round_end=lambda r, s: seen.add(torch.get_num_threads()))
    return seen


def test_the_run_trains_on_its_thread_count_and_restores_the_callers():
    before = torch.get_num_threads()
    kw = dict(dataset="synthetic", num_clients=4, rounds=2)
    assert _threads_seen(Config(**kw)) == {1}
    assert _threads_seen(Config(**kw, threads=2)) == {2}
    assert torch.get_num_threads() == before


def _flat(params: dict) -> np.ndarray:
    return np.concatenate([params[k].detach().double().flatten().numpy() for k in sorted(params)])


@pytest.mark.slow
@needs_fmnist
@pytest.mark.parametrize("engine", ["sequential", "vectorized"])
def test_two_threads_equal_one_thread_to_float_rounding(tmp_path, engine):
    """Measured on a 2-core Intel Xeon: the sequential engine's 2-thread run is 1.5e-8 from its 1-thread run,
    the vectorized engine's 0 (its stacked products split the same); the nudges move the run by 1.5-2.2e-8,
    so the tolerance is 3.9e-7."""
    kw = dict(**TINY, engine=engine, store=False, progress=False)
    one = _flat(run(**kw).params)
    two_result = run(**{**kw, "store": str(tmp_path)}, threads=2)
    two = _flat(two_result.params)
    spread = 0.0
    for seed in NUDGE_SEEDS:
        with nudged(seed):
            spread = max(spread, float(np.max(np.abs(_flat(run(**kw).params) - one))))
    tol = NUDGE_FACTOR * spread + 4 * float(np.spacing(np.float32(np.max(np.abs(one)))))
    assert 0 < spread < 1e-3  # the nudges move the run, by rounding only
    assert float(np.max(np.abs(two - one))) <= tol
    # the provenance: the stored configuration says how many threads gave these numbers
    (entry,) = [p for p in tmp_path.iterdir() if (p / "result.json").exists()]
    assert json.loads((entry / "result.json").read_text())["config"]["threads"] == 2
    assert two_result.config.threads == 2
