"""Label-skew partitions of a labelled dataset over m clients.

Implements the partition schemes of FedLC (Zhang et al., ICML 2022, §5.1), which
follows NIID-Bench (Li et al. 2021, "Federated Learning on Non-IID Data Silos: An
Experimental Study"):

* ``iid``                 -- uniform random equal split.
* ``shards``   Q(α)       -- quantity-based label skew (McMahan et al. 2017).
* ``classes_per_client``  -- #C=k, each client holds exactly k labels (NIID-Bench).
* ``dirichlet`` D(β)      -- distribution-based label skew, p_k ~ Dir(β·1_m).
* ``long_tail``           -- global exponential long-tail subsample (Cao et al. 2019);
* ``equal_sizes``         -- any partition re-cut into equal contiguous chunks (FedDF's
  and FEDIC's Dirichlet partitioner).

and, for evaluation and server-held data:

* ``split_like``          -- per-client test sets with each client's training label
  distribution (FedABC §"Experiments": "a test set following the same distribution");
* ``balanced_shards``     -- disjoint class-balanced local test sets (FedABC Eq. 8);
* ``balanced_subset``     -- a class-balanced subset (FEDIC's D_aux).

Every partition function takes ``(labels, num_clients, <parameter>, seed)`` and
returns one sorted int64 index array per client; the arrays are disjoint and their
union is ``arange(len(labels))``.  All randomness comes from
``np.random.default_rng(seed)``: the same seed gives the same partition.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "PartitionError",
    "SCHEMES",
    "iid",
    "shards",
    "classes_per_client",
    "dirichlet",
    "long_tail",
    "count_matrix",
    "partition",
    "split_like",
    "balanced_shards",
    "balanced_subset",
    "holdout",
    "equal_sizes",
]

SCHEMES = ("iid", "shards", "classes_per_client", "dirichlet")

#: Redraws allowed in :func:`dirichlet` before giving up on ``min_size``.
MAX_DIRICHLET_TRIES = 1000


class PartitionError(ValueError):
    """An invalid partition parameter (the message names it and its allowed range)."""


# ----------------------------------------------------------------------------- checks
def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _check_labels(labels) -> np.ndarray:
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.size == 0:
        raise PartitionError(f"labels must be a non-empty 1-D array, got shape {labels.shape}")
    if not np.issubdtype(labels.dtype, np.integer):
        raise PartitionError(f"labels must have an integer dtype, got {labels.dtype}")
    if labels.min() < 0:
        raise PartitionError(f"labels must be >= 0, got min {labels.min()}")
    return labels


def _check_clients(labels: np.ndarray, num_clients) -> None:
    if not _is_int(num_clients) or num_clients < 1:
        raise PartitionError(f"num_clients must be an integer >= 1, got {num_clients!r}")
    if num_clients > len(labels):
        raise PartitionError(
            f"num_clients={num_clients} is more clients than samples ({len(labels)}); "
            f"num_clients must be in [1, {len(labels)}]"
        )


def _check_seed(seed) -> None:
    if not _is_int(seed) or seed < 0:
        raise PartitionError(f"seed must be an integer >= 0, got {seed!r}")


def _finish(parts) -> list[np.ndarray]:
    return [np.sort(np.asarray(p, dtype=np.int64)) for p in parts]


# ------------------------------------------------------------------------- partitions
def iid(labels, num_clients: int, seed: int) -> list[np.ndarray]:
    """Uniform random split into ``num_clients`` parts whose sizes differ by at most 1."""
    labels = _check_labels(labels)
    _check_clients(labels, num_clients)
    _check_seed(seed)
    rng = np.random.default_rng(seed)
    return _finish(np.array_split(rng.permutation(len(labels)), num_clients))


def shards(labels, num_clients: int, alpha: int, seed: int) -> list[np.ndarray]:
    """Quantity-based label skew Q(α) (FedLC §5.1; McMahan et al. 2017).

    Sort the n samples by label, cut them into m·α shards of n/(m·α) samples and give
    each of the m clients α shards at random.  Samples inside a label are shuffled
    before sorting, so the seed also decides which samples form each shard.

    When n is not a multiple of m·α the shards differ in size by at most one sample
    (``np.array_split``), so no sample is dropped.  A shard may straddle two labels
    when class counts are not multiples of n/(m·α) (as in FedAvg), in which case a
    client can hold more than α labels.

    Args:
        alpha: α, shards per client, integer >= 1 with m·α <= n.
    """
    labels = _check_labels(labels)
    _check_clients(labels, num_clients)
    if not _is_int(alpha) or alpha < 1:
        raise PartitionError(f"alpha (shards per client) must be an integer >= 1, got {alpha!r}")
    num_shards = num_clients * alpha
    if num_shards > len(labels):
        raise PartitionError(
            f"alpha={alpha} with num_clients={num_clients} needs m·α={num_shards} shards but "
            f"there are only n={len(labels)} samples; alpha must be <= n/m={len(labels) // num_clients}"
        )
    _check_seed(seed)
    rng = np.random.default_rng(seed)
    perm = rng.permutation(len(labels))
    by_label = perm[np.argsort(labels[perm], kind="stable")]  # sort by label (§5.1)
    pieces = np.array_split(by_label, num_shards)  # m·α shards of n/(m·α) samples
    owner = rng.permutation(num_shards).reshape(num_clients, alpha)  # α random shards each
    return _finish(np.concatenate([pieces[s] for s in row]) for row in owner)


def classes_per_client(labels, num_clients: int, k: int, seed: int) -> list[np.ndarray]:
    """#C=k label skew (NIID-Bench, Li et al. 2021): every client holds exactly k labels.

    Label sets follow NIID-Bench: client i first gets label i mod K (K = number of
    distinct labels), then k-1 further distinct labels uniformly at random.  When
    m < K that rule would leave labels unheld, so (a guaranteed-coverage deviation,
    identical to NIID-Bench whenever m >= K) the uncovered labels are first dealt
    round-robin into the clients' free slots before the random draws.  Each label's
    samples are then shuffled and split evenly among the clients holding it.

    Args:
        k: labels per client, 1 <= k <= K, and k·m >= K so that every label is held.
    """
    labels = _check_labels(labels)
    _check_clients(labels, num_clients)
    classes = np.unique(labels)
    K = len(classes)
    if not _is_int(k) or not 1 <= k <= K:
        raise PartitionError(f"k (labels per client) must be an integer in [1, {K}] (number of classes), got {k!r}")
    if k * num_clients < K:
        raise PartitionError(
            f"k={k} with num_clients={num_clients} covers at most k·m={k * num_clients} of the "
            f"K={K} labels; k must be >= {-(-K // num_clients)} so every label is held"
        )
    _check_seed(seed)
    rng = np.random.default_rng(seed)
    held = [[i % K] for i in range(num_clients)]  # NIID-Bench: first label i mod K
    for c in range(num_clients, K):  # only when m < K: deal the unheld labels round-robin
        held[(c - num_clients) % num_clients].append(c)
    for current in held:  # the remaining labels drawn at random (NIID-Bench)
        free = np.setdiff1d(np.arange(K), current)
        current.extend(rng.choice(free, size=k - len(current), replace=False).tolist())

    parts: list[list[np.ndarray]] = [[] for _ in range(num_clients)]
    for c in range(K):
        holders = [i for i in range(num_clients) if c in held[i]]
        idx = rng.permutation(np.flatnonzero(labels == classes[c]))
        for i, piece in zip(holders, np.array_split(idx, len(holders))):  # even split
            parts[i].append(piece)
    return _finish(np.concatenate(p) for p in parts)


def dirichlet(labels, num_clients: int, beta: float, seed: int, min_size: int = 10,
              *, balance: bool = True) -> list[np.ndarray]:
    """Distribution-based label skew D(β) (FedLC §5.1; NIID-Bench ``noniid-labeldir``).

    For each class k draw p_k ~ Dir(β·1_m) and give client j the share p_{k,j} of
    class k's (shuffled) samples.  Smaller β means more skew.  The whole draw is
    repeated until every client holds at least ``min_size`` samples; after
    ``MAX_DIRICHLET_TRIES`` draws a :class:`PartitionError` is raised.

    With ``balance=True`` (default, as in NIID-Bench's code and FedLC's experiments)
    p_{k,j} is set to 0 for clients that already hold >= n/m samples before class k
    is dealt, then p_k is renormalised (skipped in the rare case that this would zero
    every share).  ``balance=False`` is the plain D(β).

    Args:
        beta: β > 0, the Dirichlet concentration.
        min_size: minimum samples per client, integer in [0, n/m].
    """
    labels = _check_labels(labels)
    _check_clients(labels, num_clients)
    if isinstance(beta, bool) or not isinstance(beta, numbers.Real) or not (0 < beta < np.inf):
        raise PartitionError(f"beta (Dirichlet concentration) must be a finite number > 0, got {beta!r}")
    n = len(labels)
    if not _is_int(min_size) or not 0 <= min_size <= n // num_clients:
        raise PartitionError(
            f"min_size must be an integer in [0, n/m={n // num_clients}] for n={n}, "
            f"num_clients={num_clients}; got {min_size!r}"
        )
    _check_seed(seed)
    rng = np.random.default_rng(seed)
    by_class = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    for _ in range(MAX_DIRICHLET_TRIES):
        parts: list[list[np.ndarray]] = [[] for _ in range(num_clients)]
        sizes = np.zeros(num_clients, dtype=np.int64)
        for idx in by_class:
            idx = rng.permutation(idx)
            p = rng.dirichlet(np.full(num_clients, float(beta)))  # p_k ~ Dir(β·1_m) (§5.1)
            if balance and (p * (sizes < n / num_clients)).sum() > 0:
                p = p * (sizes < n / num_clients)  # NIID-Bench balancing trick
                p = p / p.sum()
            cuts = (np.cumsum(p) * len(idx)).astype(np.int64)[:-1]  # share p_{k,j} of class k
            for j, piece in enumerate(np.split(idx, cuts)):
                parts[j].append(piece)
                sizes[j] += len(piece)
        if sizes.min() >= min_size:
            return _finish(np.concatenate(p) for p in parts)
    raise PartitionError(
        f"dirichlet: no draw with every client holding >= min_size={min_size} samples after "
        f"{MAX_DIRICHLET_TRIES} tries (beta={beta}, num_clients={num_clients}, n={n}); "
        f"lower min_size or num_clients, or raise beta"
    )


def long_tail(labels, imbalance_factor: float, seed: int) -> np.ndarray:
    """Global exponential long-tail subsample (Cao et al. 2019, LDAM).

    With classes c = 0..K-1 in sorted label order, class c keeps
    n_c = int(n_max · IF^(-c/(K-1))) randomly chosen samples (capped at what the class
    has), n_max being the largest class count.  IF = 1 keeps everything; if
    IF > n_max the tail classes may keep 0 samples (as in LDAM's code).

    Returns the sorted kept indices.  Apply it *before* partitioning: partition
    ``labels[kept]`` and map each client's indices back with ``kept[part]``.

    Args:
        imbalance_factor: IF = n_max / n_min >= 1.
    """
    labels = _check_labels(labels)
    if isinstance(imbalance_factor, bool) or not isinstance(imbalance_factor, numbers.Real) \
            or not (1 <= imbalance_factor < np.inf):
        raise PartitionError(f"imbalance_factor must be a finite number >= 1, got {imbalance_factor!r}")
    _check_seed(seed)
    rng = np.random.default_rng(seed)
    classes, counts = np.unique(labels, return_counts=True)
    K, n_max = len(classes), counts.max()
    kept = []
    for c, (cls, count) in enumerate(zip(classes, counts)):
        target = n_max if K == 1 else int(n_max * imbalance_factor ** (-c / (K - 1)))  # LDAM profile
        idx = np.flatnonzero(labels == cls)
        kept.append(rng.choice(idx, size=min(target, count), replace=False))
    return np.sort(np.concatenate(kept).astype(np.int64))


def count_matrix(labels, parts, num_classes: int) -> np.ndarray:
    """Clients × classes matrix of n_{j,y}, the samples of label y on client j (FedLC Fig. 4)."""
    labels = _check_labels(labels)
    if not _is_int(num_classes) or num_classes < 1:
        raise PartitionError(f"num_classes must be an integer >= 1, got {num_classes!r}")
    if labels.max() >= num_classes:
        raise PartitionError(f"num_classes={num_classes} but labels contain {labels.max()}; "
                             f"num_classes must be > max label")
    counts = np.zeros((len(parts), num_classes), dtype=np.int64)
    for j, part in enumerate(parts):
        counts[j] = np.bincount(labels[np.asarray(part, dtype=np.int64)], minlength=num_classes)
    return counts


def partition(labels, scheme: str, num_clients: int, seed: int, *, alpha: int | None = None,
              k: int | None = None, beta: float | None = None, min_size: int = 10) -> list[np.ndarray]:
    """Dispatch to a scheme in :data:`SCHEMES` with its parameter.

    ``"shards"`` needs ``alpha`` (Q(α)), ``"classes_per_client"`` needs ``k`` (#C=k),
    ``"dirichlet"`` needs ``beta`` (D(β), plus ``min_size``).  Parameters that the
    chosen scheme does not use are ignored.
    """
    if scheme not in SCHEMES:
        raise PartitionError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    needed = {"shards": ("alpha", alpha), "classes_per_client": ("k", k), "dirichlet": ("beta", beta)}
    if scheme in needed and needed[scheme][1] is None:
        raise PartitionError(f"scheme={scheme!r} needs the parameter {needed[scheme][0]}")
    if scheme == "iid":
        return iid(labels, num_clients, seed)
    if scheme == "shards":
        return shards(labels, num_clients, alpha, seed)
    if scheme == "classes_per_client":
        return classes_per_client(labels, num_clients, k, seed)
    return dirichlet(labels, num_clients, beta, seed, min_size=min_size)


def split_like(labels, train_counts, seed: int) -> list[np.ndarray]:
    """Split a (test) set over clients with the clients' per-class training proportions.

    For each class c the samples of c are shuffled and cut among the clients in
    proportion to ``train_counts[:, c]`` (client k gets ⌊n_c·cum_k⌋ − ⌊n_c·cum_(k−1)⌋
    of them), so every client's test set has, up to rounding, its training label
    distribution, and the sets are disjoint.  A class no client trains on is not
    assigned.  ``train_counts``: clients × classes (:func:`count_matrix`).
    """
    labels = _check_labels(labels)
    counts = np.asarray(train_counts, dtype=np.float64)
    if counts.ndim != 2 or (counts < 0).any():
        raise PartitionError(f"train_counts must be a clients × classes matrix of counts ≥ 0, got shape {counts.shape}")
    _check_seed(seed)
    rng = np.random.default_rng([seed, 7])
    parts: list[list[np.ndarray]] = [[] for _ in range(counts.shape[0])]
    for c in range(counts.shape[1]):
        idx = rng.permutation(np.flatnonzero(labels == c))
        total = counts[:, c].sum()
        if total == 0 or len(idx) == 0:
            continue
        cuts = np.floor(np.cumsum(counts[:, c]) / total * len(idx) + 1e-9).astype(np.int64)[:-1]
        for k, piece in enumerate(np.split(idx, cuts)):
            parts[k].append(piece)
    return _finish(np.concatenate(p) if p else np.zeros(0, np.int64) for p in parts)


def balanced_shards(labels, num_clients: int, seed: int) -> list[np.ndarray]:
    """Disjoint class-balanced sets, one per client: every client gets the same number
    m = ⌊min_c n_c / num_clients⌋ of samples of every class (n_c: the samples of c)."""
    labels = _check_labels(labels)
    _check_seed(seed)
    classes = np.unique(labels)
    per = min(int((labels == c).sum()) for c in classes) // num_clients
    if per < 1:
        raise PartitionError(f"balanced_shards: the rarest class has fewer than num_clients={num_clients} samples")
    rng = np.random.default_rng([seed, 8])
    parts: list[list[np.ndarray]] = [[] for _ in range(num_clients)]
    for c in classes:
        idx = rng.permutation(np.flatnonzero(labels == c))[:per * num_clients]
        for k in range(num_clients):
            parts[k].append(idx[k * per:(k + 1) * per])
    return _finish(np.concatenate(p) for p in parts)


def balanced_subset(labels, per_class: int, seed: int) -> np.ndarray:
    """``per_class`` random samples of every class (sorted indices); a class with fewer
    raises :class:`PartitionError`."""
    labels = _check_labels(labels)
    _check_seed(seed)
    rng = np.random.default_rng([seed, 9])
    out = []
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        if len(idx) < per_class:
            raise PartitionError(f"balanced_subset: class {c} has {len(idx)} samples, fewer than per_class={per_class}")
        out.append(rng.choice(idx, size=per_class, replace=False))
    return np.sort(np.concatenate(out).astype(np.int64))


def holdout(labels, parts, fraction: float, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Hold out ``fraction`` of every client's samples of every class: ``(kept, held)``, one
    pair of disjoint index arrays per client (``kept ∪ held`` = the client's samples).

    For client k and each class c it holds, its n_kc samples of c are shuffled
    (``default_rng([seed, 11, k])``) and the first ⌊fraction·n_kc⌋ are held out, so the
    held-out set has the client's label distribution up to rounding and every class
    the client holds stays in its kept part (fraction < 1).  Validation data for tuning
    without the test set (the run parameter ``validation_fraction``)."""
    labels = _check_labels(labels)
    _check_seed(seed)
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 <= fraction < 1:
        raise PartitionError(f"holdout: fraction must be in [0, 1), got {fraction!r}")
    kept, held = [], []
    for k, rows in enumerate(parts):
        rows = np.asarray(rows, dtype=np.int64)
        rng = np.random.default_rng([seed, 11, k])
        out = []
        for c in np.unique(labels[rows]):
            idx = rng.permutation(rows[labels[rows] == c])
            out.append(idx[:int(np.floor(fraction * len(idx) + 1e-9))])
        h = np.sort(np.concatenate(out)) if out else np.zeros(0, np.int64)
        held.append(h)
        kept.append(rows[~np.isin(rows, h)])
    return kept, held


def equal_sizes(labels, parts) -> list[np.ndarray]:
    """The clients' samples re-cut into ``len(parts)`` equal contiguous chunks (sizes differ by at
    most one), as the Dirichlet partitioner of FedDF's code (EPFL ``DataPartitioner``) and of
    FEDIC's code (``sampling_dirichlet.py:18-38``) do: each client's samples are listed in class
    order (the order the Dirichlet draw deals them), the lists are concatenated in client order
    and cut.  A final client is therefore a run over one or two original clients' class-sorted
    samples: equal sizes, still strongly skewed."""
    labels = _check_labels(labels)
    ordered = [np.asarray(p, dtype=np.int64)[np.argsort(labels[np.asarray(p, dtype=np.int64)], kind="stable")]
               for p in parts]
    return _finish(np.array_split(np.concatenate(ordered), len(parts)))
