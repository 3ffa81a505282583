"""One run's configuration: every parameter, its default, and its allowed range.

A :class:`Config` is validated completely when it is built, before any data is
loaded or any model is trained: unknown keys, wrong types and out-of-range
values raise :class:`ConfigError`, whose message names the parameter and what
is allowed.  Defaults follow FedLC §5.2 (batch 128, SGD with lr 0.01 and no
weight decay, 20 clients, 400 rounds); where the paper is silent the default is
marked "not in the paper" in the field comment and in the README.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
from dataclasses import dataclass, field, fields
from typing import Any

__all__ = ["Config", "ConfigError", "KEY_EXCLUDED", "METHOD_TOKENS", "parse_value"]

# Static facts about the datasets, needed to validate a configuration before
# any file is read (the number of training samples bounds num_clients).
DATASET_FACTS = {
    "synthetic": {"num_classes": 10, "num_train": None},
    "mnist": {"num_classes": 10, "num_train": 60_000},
    "fmnist": {"num_classes": 10, "num_train": 60_000},
    "cifar10": {"num_classes": 10, "num_train": 50_000},
    "cifar100": {"num_classes": 100, "num_train": 50_000},
    "svhn": {"num_classes": 10, "num_train": 73_257},
}
PARTITIONS = ("natural", "iid", "shards", "classes_per_client", "dirichlet")
MODELS = ("auto", "logreg", "cnn_mnist", "cnn_cifar", "resnet18")
ENGINES = ("sequential", "vectorized")
# A method is one or more tokens joined by "+", e.g. "fedlc+scaffold" (FedLC Table 7).
METHOD_TOKENS = ("fedavg", "fedprox", "scaffold", "fednova", "fedopt", "fedrs", "fedlc")
FEDLC_DENOMINATORS = ("full", "exclude_true")
FEDLC_MARGINS = ("quarter_power", "log_prior")
FEDLC_MISSING = ("clamp", "mask")

# Parameters that do not change the result and so are not part of its store key.
KEY_EXCLUDED = frozenset({"data_root", "checkpoint_every", "memory_budget_gb"})


class ConfigError(ValueError):
    """A configuration value is unknown, of the wrong type or out of range."""


@dataclass(frozen=True)
class Config:
    # --- data -----------------------------------------------------------------
    dataset: str = "synthetic"
    data_root: str | None = None  # default: $FEDLIB_DATA, else ./data
    synthetic_alpha: float = 1.0  # Synthetic(α, β), FedLC §5.3 / FedProx
    synthetic_beta: float = 1.0
    long_tail_if: float = 1.0  # global imbalance factor IF applied before partitioning; 1 = none
    max_train_samples: int = 0  # keep a seeded random subset of the training set (0 = all); reduced profiles
    max_test_samples: int = 0  # evaluate on a seeded random subset of the test set (0 = all)
    # --- label-skew partition (FedLC §5.1) ------------------------------------
    partition: str = "auto"  # auto: natural for synthetic, dirichlet otherwise
    partition_alpha: int = 2  # Q(α): shards (labels) per client
    partition_beta: float = 0.5  # D(β): Dirichlet concentration
    partition_k: int = 2  # #C=k: classes per client
    min_client_size: int = 10  # D(β): redraw until every client has this many samples
    # --- federation -----------------------------------------------------------
    num_clients: int = 20  # FedLC §5.2: "at default, there are 20 clients"
    participation: float = 1.0  # fraction of clients sampled per round (not in the paper)
    rounds: int = 400  # FedLC §5.4
    local_epochs: int = 1  # E (FedLC Table 5 varies it; default not in the paper)
    batch_size: int = 128  # FedLC §5.2
    lr: float = 0.01  # η, FedLC §5.2
    weight_decay: float = 0.0  # FedLC §5.2: no weight decay
    model: str = "auto"  # auto: logreg / cnn_mnist (Table 8) / cnn_cifar (Table 9)
    # --- algorithm ------------------------------------------------------------
    method: str = "fedavg"
    tau: float = 1.0  # FedLC τ (Eq. 6-7); not given in the paper
    fedlc_denominator: str = "full"  # "full" = standard logit-adjusted CE; "exclude_true" = Eq. 7 as printed
    fedlc_margin: str = "quarter_power"  # Eq. 6: τ n_y^(-1/4); "log_prior" = Eq. 5: log γ_y
    fedlc_missing: str = "clamp"  # classes with n_y = 0: "clamp" (n_y := min_count) or "mask"
    fedlc_min_count: float = 1.0
    mu: float = 0.01  # FedProx proximal weight μ
    fedrs_alpha: float = 0.5  # FedRS scaling α of missing-class logits
    server_lr: float | None = None  # None: 1.0 (FedAvg-style averaging), 0.01 for FedOpt (FedAdam)
    server_beta1: float = 0.9  # FedAdam (Reddi et al. 2021)
    server_beta2: float = 0.99
    server_eps: float = 1e-3
    # --- bookkeeping ----------------------------------------------------------
    eval_every: int = 1
    seed: int = 0
    device: str = "cpu"
    engine: str = "vectorized"  # all sampled clients at once; "sequential": the reference (tests/test_vectorized.py)
    memory_budget_gb: float = 4.0  # vectorized engine: clients are trained in groups that fit this budget
    checkpoint_every: int = 10

    # ------------------------------------------------------------------------
    def __post_init__(self) -> None:
        _validate(self)
        if self.partition == "auto":
            object.__setattr__(self, "partition", "natural" if self.dataset == "synthetic" else "dirichlet")
        if self.model == "auto":
            object.__setattr__(self, "model", default_model(self.dataset))
        if self.server_lr is None:
            object.__setattr__(self, "server_lr", 0.01 if "fedopt" in self.method_tokens else 1.0)

    @property
    def method_tokens(self) -> tuple[str, ...]:
        return tuple(self.method.split("+"))

    @property
    def num_classes(self) -> int:
        return DATASET_FACTS[self.dataset]["num_classes"]

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "Config":
        """Build from a mapping, rejecting unknown keys with a suggestion."""
        known = {f.name for f in fields(cls)}
        for key in values:
            if key not in known:
                close = difflib.get_close_matches(key, sorted(known), n=3)
                hint = f" Did you mean {', '.join(close)}?" if close else ""
                raise ConfigError(f"unknown parameter {key!r}.{hint} Known parameters: {', '.join(sorted(known))}.")
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> "Config":
        return Config.from_dict({**self.to_dict(), **changes})

    def key_dict(self) -> dict[str, Any]:
        """The parameters that determine the result (the store key's content)."""
        return {k: v for k, v in self.to_dict().items() if k not in KEY_EXCLUDED}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


def default_model(dataset: str) -> str:
    """The paper's model for a dataset: logistic regression for Synthetic,
    the Table 8 CNN for MNIST/FMNIST, the Table 9 CNN for the colour sets."""
    return {"synthetic": "logreg", "mnist": "cnn_mnist", "fmnist": "cnn_mnist"}.get(dataset, "cnn_cifar")


# --------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------
def _type_name(tp: Any) -> str:
    return {int: "an integer", float: "a number", str: "a string"}.get(tp, str(tp))


def _field_types() -> dict[str, tuple[type, bool]]:
    """name -> (base type, optional?) parsed from the dataclass annotations."""
    out = {}
    for f in fields(Config):
        ann = str(f.type)
        optional = "None" in ann
        base = int if ann.startswith("int") else float if ann.startswith("float") else str
        out[f.name] = (base, optional)
    return out


FIELD_TYPES: dict[str, tuple[type, bool]] = {}


def _check_type(name: str, value: Any) -> None:
    base, optional = FIELD_TYPES[name]
    if value is None:
        if optional:
            return
        raise ConfigError(f"{name} must be {_type_name(base)}, got None")
    ok = (
        isinstance(value, str)
        if base is str
        else (isinstance(value, int) and not isinstance(value, bool))
        if base is int
        else (isinstance(value, (int, float)) and not isinstance(value, bool))
    )
    if not ok:
        raise ConfigError(f"{name} must be {_type_name(base)}, got {value!r} ({type(value).__name__})")
    if base is float and not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")


def _require(cond: bool, name: str, allowed: str, value: Any) -> None:
    if not cond:
        raise ConfigError(f"{name} must be {allowed}, got {value!r}")


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    _require(value in allowed, name, "one of " + ", ".join(repr(a) for a in allowed), value)


def _validate(c: Config) -> None:
    for f in fields(c):
        _check_type(f.name, getattr(c, f.name))

    _one_of("dataset", c.dataset, tuple(DATASET_FACTS))
    facts = DATASET_FACTS[c.dataset]
    _require(c.synthetic_alpha >= 0, "synthetic_alpha", "≥ 0 (Synthetic(α, β))", c.synthetic_alpha)
    _require(c.synthetic_beta >= 0, "synthetic_beta", "≥ 0 (Synthetic(α, β))", c.synthetic_beta)
    _require(c.long_tail_if >= 1, "long_tail_if", "≥ 1 (1 means no long tail)", c.long_tail_if)
    _require(c.max_train_samples >= 0, "max_train_samples", "an integer ≥ 0 (0 keeps all)", c.max_train_samples)
    _require(c.max_test_samples >= 0, "max_test_samples", "an integer ≥ 0 (0 keeps all)", c.max_test_samples)

    _one_of("partition", c.partition, ("auto",) + PARTITIONS)
    if c.dataset == "synthetic":
        _require(c.partition in ("auto", "natural"), "partition",
                 "'natural' or 'auto' for dataset='synthetic' (its clients are generated)", c.partition)
        _require(c.long_tail_if == 1, "long_tail_if", "1 for dataset='synthetic'", c.long_tail_if)
        _require(c.max_train_samples == 0, "max_train_samples",
                 "0 for dataset='synthetic' (set num_clients instead)", c.max_train_samples)
    else:
        _require(c.partition != "natural", "partition",
                 f"one of iid, shards, classes_per_client, dirichlet for dataset={c.dataset!r}", c.partition)
    _require(c.partition_alpha >= 1, "partition_alpha", "an integer ≥ 1 (Q(α): shards per client)", c.partition_alpha)
    _require(c.partition_beta > 0, "partition_beta", "> 0 (D(β): Dirichlet concentration)", c.partition_beta)
    _require(1 <= c.partition_k <= facts["num_classes"], "partition_k",
             f"in [1, {facts['num_classes']}] (classes per client ≤ number of classes of {c.dataset})", c.partition_k)
    _require(c.min_client_size >= 1, "min_client_size", "an integer ≥ 1", c.min_client_size)

    _require(c.num_clients >= 1, "num_clients", "an integer ≥ 1", c.num_clients)
    n_train = facts["num_train"]
    if n_train is not None and c.max_train_samples:
        n_train = min(n_train, c.max_train_samples)
    if n_train is not None:
        _require(c.num_clients <= n_train, "num_clients",
                 f"≤ {n_train} (the number of training samples of {c.dataset})", c.num_clients)
        if c.partition == "shards":
            _require(c.num_clients * c.partition_alpha <= n_train, "partition_alpha",
                     f"≤ {n_train // c.num_clients} so that num_clients·α shards fit {n_train} samples", c.partition_alpha)
        if c.partition == "dirichlet":
            _require(c.num_clients * c.min_client_size <= n_train, "min_client_size",
                     f"≤ {n_train // c.num_clients} so that every client can hold it", c.min_client_size)
    _require(0 < c.participation <= 1, "participation", "in (0, 1]", c.participation)
    _require(c.rounds >= 1, "rounds", "an integer ≥ 1", c.rounds)
    _require(c.local_epochs >= 1, "local_epochs", "an integer ≥ 1", c.local_epochs)
    _require(c.batch_size >= 1, "batch_size", "an integer ≥ 1", c.batch_size)
    _require(c.lr > 0, "lr", "> 0", c.lr)
    _require(c.weight_decay >= 0, "weight_decay", "≥ 0", c.weight_decay)
    _one_of("model", c.model, MODELS)

    tokens = c.method.split("+")
    for t in tokens:
        _require(t in METHOD_TOKENS, "method",
                 "one or more of " + ", ".join(METHOD_TOKENS) + " joined by '+' (e.g. 'fedlc+scaffold')", c.method)
    _require(len(set(tokens)) == len(tokens), "method", "made of distinct tokens", c.method)
    losses = [t for t in tokens if t in ("fedlc", "fedrs")]
    _require(len(losses) <= 1, "method", "at most one client loss (fedlc or fedrs)", c.method)
    corrections = [t for t in tokens if t in ("fedprox", "scaffold")]
    _require(len(corrections) <= 1, "method", "at most one client correction (fedprox or scaffold)", c.method)
    _require(not ("fedavg" in tokens and len(tokens) > 1), "method",
             "'fedavg' alone (it is the empty composition)", c.method)

    _require(c.tau >= 0, "tau", "≥ 0 (FedLC τ)", c.tau)
    _one_of("fedlc_denominator", c.fedlc_denominator, FEDLC_DENOMINATORS)
    _one_of("fedlc_margin", c.fedlc_margin, FEDLC_MARGINS)
    _one_of("fedlc_missing", c.fedlc_missing, FEDLC_MISSING)
    _require(c.fedlc_min_count > 0, "fedlc_min_count", "> 0", c.fedlc_min_count)
    _require(c.mu >= 0, "mu", "≥ 0 (FedProx μ)", c.mu)
    _require(0 <= c.fedrs_alpha <= 1, "fedrs_alpha", "in [0, 1] (FedRS α)", c.fedrs_alpha)
    if c.server_lr is not None:
        _require(c.server_lr > 0, "server_lr", "> 0", c.server_lr)
    _require(0 <= c.server_beta1 < 1, "server_beta1", "in [0, 1)", c.server_beta1)
    _require(0 <= c.server_beta2 < 1, "server_beta2", "in [0, 1)", c.server_beta2)
    _require(c.server_eps > 0, "server_eps", "> 0", c.server_eps)

    _require(c.eval_every >= 1, "eval_every", "an integer ≥ 1", c.eval_every)
    _require(c.seed >= 0, "seed", "an integer ≥ 0", c.seed)
    _require(c.device == "cpu" or c.device.startswith("cuda"), "device", "'cpu' or 'cuda[:N]'", c.device)
    if c.device.startswith("cuda"):
        import torch

        _require(torch.cuda.is_available(), "device", "'cpu' on this machine (CUDA is not available)", c.device)
    _one_of("engine", c.engine, ENGINES)
    _require(c.memory_budget_gb > 0, "memory_budget_gb", "> 0", c.memory_budget_gb)
    _require(c.checkpoint_every >= 1, "checkpoint_every", "an integer ≥ 1", c.checkpoint_every)


FIELD_TYPES.update(_field_types())


def parse_value(name: str, text: str) -> Any:
    """Convert a command-line string to the parameter's type (``key=value`` form)."""
    if name not in FIELD_TYPES:
        Config.from_dict({name: text})  # raises the unknown-parameter error
    base, optional = FIELD_TYPES[name]
    if optional and text.lower() in ("none", "null", ""):
        return None
    try:
        if base is int:
            return int(text)
        if base is float:
            return float(text)
    except ValueError:
        raise ConfigError(f"{name} must be {_type_name(base)}, got {text!r}") from None
    return text
