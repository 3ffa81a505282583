"""Preparing an experiment: a :class:`Config` becomes the data, the clients' shares, the
model and the algorithm a run trains (:func:`prepare`).

The order of the data split is fixed (FEDIC §3): a seeded subset when
``max_train_samples`` / ``max_test_samples`` ask for one, the server's labelled
set D_aux out of the training set, the long tail on the rest, the label-skew
partition, then (``validation_fraction``) each client's held-out slice, which
replaces the test set.  Every client's own and class-balanced test sets are
built when personalized models are evaluated.  The model is initialised from
the run's seed; its parameters and the image tensors take the model's memory
format (channels-last for the CNNs on multi-channel inputs, converted once).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import torch

from . import tree
from .algorithms import Algorithm, build_algorithm
from .algorithms.server_training import ServerData
from .config import Config
from .data import DATASETS, FederatedData, load_dataset
from .models import build_model, memory_format, to_memory_format
from .partition import (balanced_shards, balanced_subset, count_matrix, equal_sizes, holdout, long_tail,
                        partition, split_like)
from .state import ServerState, initial_state

__all__ = ["Experiment", "prepare"]


@dataclass
class Experiment:
    """Everything a run (or one stage of it) needs, built once from a :class:`Config`."""

    config: Config
    data: FederatedData
    client_indices: list[np.ndarray]  # rows of data.train_x per client
    class_counts: np.ndarray  # clients × classes, n_y per client (FedLC Fig. 4)
    model: torch.nn.Module
    algorithm: Algorithm
    client_test_indices: list[np.ndarray] | None = None  # rows of data.test_x: each client's own test set
    balanced_test_indices: list[np.ndarray] | None = None  # rows of data.test_x: class-balanced local test sets
    server_data: ServerData | None = None
    init_params: dict | None = field(default=None, repr=False)
    # A stage's sub-experiment (see fedlib.algorithms.stages) may hold a subset of the clients: their ids
    # in the whole federation, which fix their mini-batch streams (None: 0 … num_clients − 1).
    client_ids: list[int] | None = None
    # At most this many local steps per client and round: the first ones of its batches (0: no cap).
    max_local_steps: int = 0

    def initial_params(self) -> dict[str, torch.Tensor]:
        if self.init_params is not None:
            return tree.clone(self.init_params)
        return {k: v.detach().clone() for k, v in self.model.named_parameters()}

    def initial_state(self, params: dict | None = None) -> ServerState:
        """The server state before round 1 (:func:`fedlib.state.initial_state`) from ``params``
        (default: :meth:`initial_params`)."""
        return initial_state(self.model, self.algorithm, self.initial_params() if params is None else params)

    @property
    def num_clients(self) -> int:
        return len(self.client_indices)

    def data_on(self, device: str | None = None) -> "Experiment":
        """Put the training and test data on ``device`` (default: the run's), where the run trains on them;
        :func:`prepare` leaves them on the CPU.  The tensors are copies: the loaded data may be shared (memoized)
        on the CPU.  Returns ``self``."""
        device = device or self.config.device
        if device != "cpu":
            self.data = dataclasses.replace(self.data, **{n: getattr(self.data, n).to(device)
                                                          for n in ("train_x", "train_y", "test_x", "test_y")})
        return self


def _subset(x: torch.Tensor, y: torch.Tensor, limit: int, seed: int, stream: int):
    """A seeded random subset of ``limit`` rows (all rows when limit is 0 or larger)."""
    if not limit or limit >= len(y):
        return x, y
    rows = np.sort(np.random.default_rng([seed, stream]).choice(len(y), size=limit, replace=False))
    return x[rows], y[rows]


def _split_training_set(config: Config, data: FederatedData) -> tuple[list[np.ndarray], ServerData | None]:
    """Client indices and server-held data.  Order (FEDIC §3): D_aux out of the
    training set first, then the long tail on the rest, then the partition."""
    if config.partition == "natural":
        return [np.asarray(ix, dtype=np.int64) for ix in data.client_indices], None
    labels = data.train_y.numpy()
    pool = np.arange(len(labels))
    aux = None
    own_aux = data.aux_y is not None  # the dataset's own balanced labelled set (ImageNet-LT's val split)
    if config.server_aux_per_class:
        aux = balanced_subset(data.aux_y.numpy() if own_aux else labels, config.server_aux_per_class, config.seed)
        if not own_aux:
            pool = np.setdiff1d(pool, aux)
    kept = pool
    if config.long_tail_if > 1:
        kept = pool[long_tail(labels[pool], config.long_tail_if, config.seed)]
    parts = partition(labels[kept], config.partition, config.num_clients, config.seed,
                      alpha=config.partition_alpha, k=config.partition_k, beta=config.partition_beta,
                      min_size=config.min_client_size)
    if config.partition_equal_sizes:
        parts = equal_sizes(labels[kept], parts)
    indices = [kept[p] for p in parts]
    server = None
    if aux is not None or config.server_unlabeled != "none":
        server = ServerData(description={})
        if aux is not None:
            source_x, source_y = (data.aux_x, data.aux_y) if own_aux else (data.train_x, data.train_y)
            server.aux_x, server.aux_y = source_x[torch.as_tensor(aux)], source_y[torch.as_tensor(aux)]
            where = "held-out balanced set" if own_aux else "training set"
            server.description["aux"] = f"{config.server_aux_per_class} per class from the {data.name} {where}"
        if config.server_unlabeled == "long_tail_dropped":
            dropped = np.setdiff1d(pool, kept)
            server.unlabeled_x = data.train_x[torch.as_tensor(dropped)]
            server.description["unlabeled"] = f"the {data.name} training samples the long tail drops"
        elif config.server_unlabeled != "none":
            other = load_dataset(config.server_unlabeled, config.data_root, normalization=(
                config.input_normalization if DATASETS[config.server_unlabeled].norm is not None else "per_channel"))
            server.unlabeled_x = other.train_x
            server.description["unlabeled"] = f"the {other.name} training images (labels unused)"
        if server.unlabeled_x is not None and config.server_unlabeled_size:
            n = len(server.unlabeled_x)
            if config.server_unlabeled_size < n:
                rows = np.sort(np.random.default_rng([config.seed, 10]).choice(n, config.server_unlabeled_size,
                                                                               replace=False))
                server.unlabeled_x = server.unlabeled_x[torch.as_tensor(rows)]
        if server.unlabeled_x is not None:
            server.unlabeled_x = _as_inputs_of(server.unlabeled_x, data.train_x, config.server_unlabeled)
    return indices, server


def _hold_out(config: Config, data: FederatedData, indices: list[np.ndarray]):
    """``validation_fraction``: every client's held-out training samples become the test set
    (their union, client by client); returns the data, the clients' kept training indices and
    each client's rows of the new test set."""
    kept, held = holdout(data.train_y.numpy(), indices, config.validation_fraction, config.seed)
    pool = torch.as_tensor(np.concatenate(held))
    data = dataclasses.replace(data, test_x=data.train_x[pool], test_y=data.train_y[pool], client_test_indices=None)
    ends = np.cumsum([len(h) for h in held])
    return data, kept, [np.arange(e - len(h), e) for e, h in zip(ends, held)]


def _as_inputs_of(x: torch.Tensor, like: torch.Tensor, name: str) -> torch.Tensor:
    """Images ``x`` resized (bilinear) to the spatial size of ``like`` (e.g. CIFAR-100 as D_ulb
    for 64×64 ImageNet-LT); the channel counts must agree."""
    if x.shape[1:] == like.shape[1:]:
        return x
    if x.ndim != 4 or like.ndim != 4 or x.shape[1] != like.shape[1]:
        raise ValueError(f"server_unlabeled={name!r} has inputs of shape {tuple(x.shape[1:])}, which cannot serve "
                         f"a dataset of inputs {tuple(like.shape[1:])}")
    out = [torch.nn.functional.interpolate(x[i:i + 1024], size=tuple(like.shape[2:]), mode="bilinear",
                                           align_corners=False) for i in range(0, len(x), 1024)]
    return torch.cat(out)


def _in_memory_format(data: FederatedData, server: ServerData | None, fmt) -> tuple:
    """The image tensors in the run's memory format (:func:`fedlib.models.memory_format`),
    converted once for the run (copies: the loaded data may be shared); every batch cut from
    them keeps it."""
    if fmt == torch.contiguous_format:
        return data, server
    data = dataclasses.replace(data, train_x=to_memory_format(data.train_x, fmt),
                               test_x=to_memory_format(data.test_x, fmt))
    if server is not None:
        server = dataclasses.replace(server, aux_x=to_memory_format(server.aux_x, fmt),
                                     unlabeled_x=to_memory_format(server.unlabeled_x, fmt))
    return data, server


def prepare(config: Config) -> Experiment:
    """Load the data, split it (server data, long tail, partition, per-client test
    sets), build the model (seeded) and the algorithm."""
    data = load_dataset(config.dataset, config.data_root, synthetic_alpha=config.synthetic_alpha,
                        synthetic_beta=config.synthetic_beta, num_clients=config.num_clients, seed=config.seed,
                        normalization=config.input_normalization)
    if config.max_train_samples or config.max_test_samples:
        data = dataclasses.replace(data)
        data.train_x, data.train_y = _subset(data.train_x, data.train_y, config.max_train_samples, config.seed, 2)
        data.test_x, data.test_y = _subset(data.test_x, data.test_y, config.max_test_samples, config.seed, 3)
    indices, server = _split_training_set(config, data)
    held = None
    if config.validation_fraction:
        data, indices, held = _hold_out(config, data, indices)
    counts = count_matrix(data.train_y.numpy(), indices, data.num_classes)
    algorithm = build_algorithm(config)
    needs = set(algorithm.server_training.needs)
    if "aux" in needs and (server is None or server.aux_x is None):
        raise ValueError(f"method {config.method!r} trains on the server's labelled set D_aux: set "
                         "server_aux_per_class ≥ 1")
    if "unlabeled" in needs and (server is None or server.unlabeled_x is None):
        raise ValueError(f"method {config.method!r} distils on unlabelled server data D_ulb: set server_unlabeled")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(config.seed)
        model = algorithm.extend_model(build_model(config.model, data.num_classes, data.input_shape,
                                                   layout=config.memory_format))
    model = model.to(config.device)
    data, server = _in_memory_format(data, server, memory_format(config.model, data.input_shape,
                                                                  config.memory_format))
    client_test = balanced = None
    if config.personal_eval_every:
        test_y = data.test_y.numpy()
        if held is not None:
            client_test = held
        elif config.partition == "natural" and data.client_test_indices is not None:
            client_test = [np.asarray(ix, dtype=np.int64) for ix in data.client_test_indices]
        else:
            client_test = split_like(test_y, counts, config.seed)
        if config.balanced_test == "full":
            balanced = [np.arange(len(test_y))] * len(indices)
        else:
            try:
                balanced = balanced_shards(test_y, len(indices), config.seed)
            except ValueError as err:
                raise ValueError(f"{err}: the test set cannot give every client a class-balanced shard; "
                                 "use balanced_test='full'") from None
    return Experiment(config, data, indices, counts, model, algorithm, client_test, balanced, server)
