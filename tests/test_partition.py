"""Tests of fedlib.partition: invariants, determinism, skew, and parameter errors."""

import numpy as np
import pytest

from fedlib import partition as P

SEED = 3


def balanced_labels(per_class=600, K=10, seed=0):
    return np.random.default_rng(seed).permutation(np.repeat(np.arange(K), per_class))


def random_labels(n=6000, K=10, seed=0):
    return np.random.default_rng(seed).integers(0, K, n)


def assert_valid(parts, n, m):
    assert len(parts) == m
    for p in parts:
        assert p.dtype == np.int64 and p.ndim == 1
        assert np.all(np.diff(p) > 0), "each part must be sorted without repeats"
    allidx = np.concatenate(parts)
    assert len(allidx) == n and np.array_equal(np.sort(allidx), np.arange(n)), "disjoint, union = all"


def entropy_per_client(labels, parts, K):
    counts = P.count_matrix(labels, parts, K).astype(float)
    q = counts / counts.sum(1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return -np.nansum(np.where(q > 0, q * np.log(q), 0.0), axis=1)


CALLS = {
    "iid": lambda y, m, s: P.iid(y, m, s),
    "shards": lambda y, m, s: P.shards(y, m, 2, s),
    "classes_per_client": lambda y, m, s: P.classes_per_client(y, m, max(3, -(-10 // m)), s),
    "dirichlet": lambda y, m, s: P.dirichlet(y, m, 0.5, s),
}


@pytest.mark.parametrize("scheme", list(CALLS))
@pytest.mark.parametrize("m", [1, 7, 20])
def test_invariants(scheme, m):
    y = random_labels()
    assert_valid(CALLS[scheme](y, m, SEED), len(y), m)


@pytest.mark.parametrize("scheme", list(CALLS))
def test_seeded_determinism(scheme):
    y = random_labels()
    a, b, c = (CALLS[scheme](y, 10, s) for s in (SEED, SEED, SEED + 1))
    assert all(np.array_equal(x, z) for x, z in zip(a, b))
    assert not all(np.array_equal(x, z) for x, z in zip(a, c))


def test_dispatcher_matches_functions():
    y = random_labels()
    for scheme, kw in [("iid", {}), ("shards", {"alpha": 2}), ("classes_per_client", {"k": 3}),
                       ("dirichlet", {"beta": 0.5})]:
        got = P.partition(y, scheme, 10, SEED, **kw)
        want = CALLS[scheme](y, 10, SEED)
        assert all(np.array_equal(g, w) for g, w in zip(got, want)), scheme


def test_iid_sizes_and_label_mix():
    y = random_labels(n=6003)
    parts = P.iid(y, 10, SEED)
    assert {len(p) for p in parts} <= {600, 601}
    assert (P.count_matrix(y, parts, 10) > 0).all()


@pytest.mark.parametrize("alpha", [1, 2, 4])
def test_shards_q_alpha(alpha):
    # 10 classes × 600, m = 10 -> shard size 600/α divides every class: ≤ α labels each.
    y = balanced_labels()
    parts = P.shards(y, 10, alpha, SEED)
    assert_valid(parts, len(y), 10)
    assert {len(p) for p in parts} == {600}
    for p in parts:
        assert len(np.unique(y[p])) <= alpha
    # every shard is label-pure here, so each label is cut into exactly α pieces of 600/α
    counts = P.count_matrix(y, parts, 10)
    assert set(np.unique(counts)) <= {0, 600 // alpha, 2 * 600 // alpha, 600}


def test_shards_fig4_setting():
    # FedLC Fig. 4 (left): CIFAR-10-sized labels, 5 clients, α = 4 -> 20 shards of 2500.
    y = balanced_labels(per_class=5000)
    counts = P.count_matrix(y, P.shards(y, 5, 4, SEED), 10)
    assert (counts.sum(1) == 10000).all()
    assert set(np.unique(counts)) <= {0, 2500, 5000}
    assert ((counts > 0).sum(1) <= 4).all()


def test_shards_remainder_keeps_all_samples():
    y = random_labels(n=1003)
    parts = P.shards(y, 10, 3, SEED)
    assert_valid(parts, 1003, 10)
    assert max(map(len, parts)) - min(map(len, parts)) <= 3  # shard sizes differ by <= 1


@pytest.mark.parametrize("m,k", [(10, 1), (10, 3), (20, 2), (7, 10), (100, 5), (4, 3), (3, 4)])
def test_classes_per_client_exactly_k(m, k):
    y = random_labels()
    parts = P.classes_per_client(y, m, k, SEED)
    assert_valid(parts, len(y), m)
    for p in parts:
        assert len(np.unique(y[p])) == k
    counts = P.count_matrix(y, parts, 10)
    for c in range(10):  # each label split evenly among its holders
        held = counts[:, c][counts[:, c] > 0]
        assert held.max() - held.min() <= 1


def test_classes_per_client_first_label_is_i_mod_K():
    y = random_labels()
    counts = P.classes_per_client(y, 25, 2, SEED)
    held = P.count_matrix(y, counts, 10) > 0
    assert all(held[i, i % 10] for i in range(25))


@pytest.mark.parametrize("beta", [0.1, 0.5, 5.0])
def test_dirichlet_min_size(beta):
    y = random_labels()
    parts = P.dirichlet(y, 20, beta, SEED, min_size=50)
    assert_valid(parts, len(y), 20)
    assert min(map(len, parts)) >= 50


def test_dirichlet_without_balance_is_valid_and_different():
    y = random_labels()
    a = P.dirichlet(y, 10, 0.3, SEED, balance=False)
    b = P.dirichlet(y, 10, 0.3, SEED, balance=True)
    assert_valid(a, len(y), 10)
    assert not all(np.array_equal(x, z) for x, z in zip(a, b))


def test_dirichlet_skew_grows_as_beta_falls():
    y = random_labels(n=20000)
    H = {b: np.mean([entropy_per_client(y, P.dirichlet(y, 20, b, s), 10).mean() for s in range(3)])
         for b in (0.1, 1.0, 100.0)}
    assert H[0.1] < H[1.0] < H[100.0]
    assert H[100.0] > 0.97 * np.log(10)  # near-uniform label distribution per client


def test_dirichlet_gives_up_with_clear_error():
    y = random_labels(n=2000)
    with pytest.raises(P.PartitionError, match="min_size"):
        P.dirichlet(y, 100, 0.01, SEED, min_size=20)


def test_long_tail_profile():
    y = balanced_labels(per_class=1000)
    kept = P.long_tail(y, 100, SEED)
    assert np.all(np.diff(kept) > 0)
    counts = np.bincount(y[kept], minlength=10)
    want = [int(1000 * 100 ** (-c / 9)) for c in range(10)]
    assert counts.tolist() == want
    assert counts[0] == 1000 and counts[-1] == 10


def test_long_tail_if_one_keeps_all_and_is_seeded():
    y = random_labels()
    assert np.array_equal(P.long_tail(y, 1, SEED), np.arange(len(y)))
    assert np.array_equal(P.long_tail(y, 10, SEED), P.long_tail(y, 10, SEED))
    assert not np.array_equal(P.long_tail(y, 10, SEED), P.long_tail(y, 10, SEED + 1))


def test_long_tail_then_partition_maps_back():
    y = balanced_labels(per_class=500)
    kept = P.long_tail(y, 10, SEED)
    parts = [kept[p] for p in P.dirichlet(y[kept], 5, 0.5, SEED)]
    assert np.array_equal(np.sort(np.concatenate(parts)), kept)


def test_count_matrix_against_loop():
    y = random_labels(n=3000, K=7)
    parts = P.dirichlet(y, 6, 0.3, SEED)
    want = np.zeros((6, 7), dtype=np.int64)
    for j, p in enumerate(parts):
        for i in p:
            want[j, y[i]] += 1
    got = P.count_matrix(y, parts, 7)
    assert got.dtype == np.int64 and np.array_equal(got, want)
    assert got.sum() == len(y)


@pytest.mark.parametrize("call,param", [
    (lambda y: P.iid(y, 0, 0), "num_clients"),
    (lambda y: P.iid(y, 101, 0), "num_clients"),  # more clients than samples
    (lambda y: P.iid(y, 2.0, 0), "num_clients"),
    (lambda y: P.iid(y, 2, -1), "seed"),
    (lambda y: P.shards(y, 10, 0, 0), "alpha"),
    (lambda y: P.shards(y, 10, 1.5, 0), "alpha"),
    (lambda y: P.shards(y, 10, 11, 0), "alpha"),  # m·α > n
    (lambda y: P.classes_per_client(y, 10, 0, 0), "k"),
    (lambda y: P.classes_per_client(y, 10, 11, 0), "k"),  # k > number of classes
    (lambda y: P.classes_per_client(y, 2, 4, 0), "k"),  # k·m < K: a label unheld
    (lambda y: P.dirichlet(y, 10, 0, 0), "beta"),
    (lambda y: P.dirichlet(y, 10, -1.0, 0), "beta"),
    (lambda y: P.dirichlet(y, 10, float("nan"), 0), "beta"),
    (lambda y: P.dirichlet(y, 10, 0.5, 0, min_size=11), "min_size"),  # > n/m
    (lambda y: P.long_tail(y, 0.5, 0), "imbalance_factor"),
    (lambda y: P.count_matrix(y, [np.arange(5)], 5), "num_classes"),
    (lambda y: P.partition(y, "labeldir", 10, 0), "scheme"),
    (lambda y: P.partition(y, "shards", 10, 0), "alpha"),
    (lambda y: P.partition(y, "classes_per_client", 10, 0), "k"),
    (lambda y: P.partition(y, "dirichlet", 10, 0, alpha=2), "beta"),
    (lambda y: P.iid(y.astype(float), 2, 0), "labels"),
    (lambda y: P.iid(y - 20, 2, 0), "labels"),
])
def test_validation_errors_name_the_parameter(call, param):
    y = np.arange(100) % 10
    with pytest.raises(ValueError, match=param):
        call(y)
    with pytest.raises(P.PartitionError):
        call(y)
