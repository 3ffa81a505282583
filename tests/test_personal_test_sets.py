"""The test sets of personalized evaluation (FedABC §Experiments, Eqs. 7–8): per-client test sets
with the client's training label distribution (``split_like``) and class-balanced local test
sets (``balanced_shards``), checked for their distributions, disjointness and seeding, on
label arrays and on the sets a real run uses."""

from __future__ import annotations

import numpy as np
import pytest

from fedlib import partition as P
from fedlib.config import Config
from fedlib.simulation import prepare

from conftest import have_dataset


def _labels(per_class=(980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009), seed=0):  # MNIST's test set
    return np.random.default_rng(seed).permutation(np.repeat(np.arange(len(per_class)), per_class))


def _check_split_like(test_labels, train_counts, parts):
    """Disjoint, and client k holds ⌊·⌋-rounded n_c^test · n_kc / Σ_j n_jc samples of class c (within one)."""
    everything = np.concatenate(parts)
    assert len(everything) == len(np.unique(everything))
    got = P.count_matrix(test_labels, parts, train_counts.shape[1])
    n_test = np.bincount(test_labels, minlength=train_counts.shape[1])
    share = train_counts / np.maximum(train_counts.sum(0, keepdims=True), 1)
    assert np.all(np.abs(got - share * n_test) < 1 + 1e-9)
    assert np.all(got[train_counts == 0] == 0)  # a class the client does not train on is not in its test set
    held = train_counts.sum(0) > 0
    assert np.array_equal(got.sum(0)[held], n_test[held])  # every test sample of a trained class is used


def test_split_like_follows_each_clients_training_distribution():
    labels = _labels()
    train = P.count_matrix(labels, P.dirichlet(labels, 20, 0.3, seed=1), 10)
    parts = P.split_like(labels, train, seed=0)
    _check_split_like(labels, train, parts)
    assert parts[3].tolist() == P.split_like(labels, train, seed=0)[3].tolist()  # seeded
    assert any(a.tolist() != b.tolist() for a, b in zip(parts, P.split_like(labels, train, seed=1)))


def test_balanced_shards_are_balanced_disjoint_and_seeded():
    labels = _labels()
    shards = P.balanced_shards(labels, 20, seed=0)
    per = 892 // 20  # the rarest class (5) has 892 samples
    counts = P.count_matrix(labels, shards, 10)
    assert np.all(counts == per)
    everything = np.concatenate(shards)
    assert len(everything) == len(np.unique(everything)) == 20 * 10 * per
    assert [s.tolist() for s in shards] == [s.tolist() for s in P.balanced_shards(labels, 20, seed=0)]
    assert shards[0].tolist() != P.balanced_shards(labels, 20, seed=1)[0].tolist()
    with pytest.raises(P.PartitionError, match="num_clients"):
        P.balanced_shards(labels, 900, seed=0)


@pytest.mark.skipif(not have_dataset("mnist"), reason="MNIST not found under FEDLIB_DATA")
@pytest.mark.parametrize("beta", [0.1, 1.0])
def test_a_runs_personal_test_sets_on_mnist(beta):
    config = Config(dataset="mnist", partition="dirichlet", partition_beta=beta, num_clients=100, method="fedabc",
                    model="mlp", seed=0)
    exp = prepare(config)
    test_labels = exp.data.test_y.numpy()
    _check_split_like(test_labels, exp.class_counts, exp.client_test_indices)
    counts = P.count_matrix(test_labels, exp.balanced_test_indices, 10)
    assert np.all(counts == counts[0, 0]) and counts[0, 0] == 892 // 100
    # the same per-class proportions: a client's test distribution is its training distribution up to rounding
    big = [k for k, rows in enumerate(exp.client_test_indices) if len(rows) >= 100]
    for k in big:
        train_q = exp.class_counts[k] / exp.class_counts[k].sum()
        test_q = np.bincount(test_labels[exp.client_test_indices[k]], minlength=10) / len(exp.client_test_indices[k])
        assert np.abs(train_q - test_q).max() < 0.1
    fedavg = Config(dataset="mnist", partition="dirichlet", partition_beta=beta, num_clients=100, model="mlp")
    assert prepare(fedavg).client_test_indices is None  # FedAvg evaluates no personalized model by default
