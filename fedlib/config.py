"""One run's configuration: every parameter, its default, and its allowed range.

A :class:`Config` is validated completely when it is built, before any data is
loaded or any model is trained: unknown keys, wrong types and out-of-range
values raise :class:`ConfigError`, whose message names the parameter and what
is allowed.  Building one validates and resolves its ``auto``/``None`` values
and does nothing else: it reads what it needs from declarations (a token's
``defaults``, the ``personalized`` of the method's personalization part and the
``needs`` of its server-training part, each built alone from the parameters,
:func:`fedlib.algorithms.method_part`; whether a dataset's files are present,
:func:`fedlib.data.dataset_present`), never building the algorithm, a model or
loading data.

Two kinds of parameters make a configuration:

* the **core** parameters below (:data:`CORE_PARAMS`): data, partition,
  federation, the client optimizer, bookkeeping.  Defaults follow FedLC §5.2
  (batch 128, SGD with lr 0.01 and no weight decay, 20 clients, 400 rounds);
  where the paper is silent the ``source`` says "not in paper".
* the **method** parameters, declared by the algorithm part that reads them
  (:func:`fedlib.algorithms.register_method`), e.g. FedProx's ``mu`` or FedLC's
  ``tau``.  They are collected here, so adding a method adds no line to this
  module.

A run's store key holds the core parameters and the parameters of the tokens
its method is made of (:meth:`Config.key_dict`): parameters of methods it does
not use do not change its result and are not part of the key.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import field, fields, make_dataclass
from typing import Any

from .algorithms.registry import all_method_params, method_params, parse_method, token_default
from .data import DATASETS, INPUT_NORMALIZATIONS
from .models import LAYOUTS, model_names
from .metrics import GROUP_PARAMS
from .params import ConfigError, Param
from .precision import CUDA_ONLY, PRECISIONS

__all__ = ["Config", "ConfigError", "CORE_PARAMS", "KEY_EXCLUDED", "all_params", "parse_value", "default_model",
           "PARTITIONS", "ENGINES"]

PARTITIONS = ("natural", "iid", "shards", "classes_per_client", "dirichlet")
ENGINES = ("sequential", "vectorized", "compiled")

# Parameters that do not change the result and so are not part of its store key (client_threads: the same floats
# as one thread, tests/test_client_threads.py).  (memory_budget_gb
# is: it decides how the vectorized engine groups clients, which changes float rounding.)  The group
# parameters only summarise a finished run (Result.group_accuracy).
KEY_EXCLUDED = frozenset({"data_root", "checkpoint_every", "client_threads", "group_rule", "group_rank_fraction",
                          "group_many_above", "group_few_below"})
# Parameters added after runs were stored: at these values they stay out of the key's content, so a
# configuration at the value every earlier run had keeps the same content (the code version still moves).
KEY_OMITTED_AT = {"precision": "float32", "input_normalization": "per_channel", "personalized_classes": "all",
                  "memory_format": "model", "threads": 1}


def _ge(low):
    return lambda v: v >= low


def _gt(low):
    return lambda v: v > low


#: The source of a default that no paper fixes: fedlib chose it.
_FEDLIB_CHOICE = "fedlib's choice"
AUTO_AUX_PER_CLASS = 100  # D_aux per class when a method needs one and none is given (FEDIC's code)

#: The core parameters, in the order the README lists them: (section, parameters).
CORE_SECTIONS: tuple[tuple[str, tuple[Param, ...]], ...] = (
    ("data", (
        Param("dataset", "synthetic", str, "dataset name (fedlib.data.DATASETS)",
              check=lambda v: v in DATASETS, allowed="one of the registered datasets (`fedlib params`)"),
        Param("data_root", None, str, "dataset folder; not part of the store key", optional=True,
              allowed="a path (default: $FEDLIB_DATA, else ./data)"),
        Param("synthetic_alpha", 1.0, float, "Synthetic(α, β): model skew α", check=_ge(0), allowed="≥ 0",
              source="FedLC §5.3 / FedProx"),
        Param("synthetic_beta", 1.0, float, "Synthetic(α, β): data skew β", check=_ge(0), allowed="≥ 0",
              source="FedLC §5.3 / FedProx"),
        Param("long_tail_if", 1.0, float, "global long-tail imbalance factor IF applied before partitioning "
              "(1 = none)", check=_ge(1), allowed="≥ 1"),
        Param("max_train_samples", 0, int, "seeded random subset of the training set (0 = all); reduced profiles",
              check=_ge(0), allowed="an integer ≥ 0", source=_FEDLIB_CHOICE),
        Param("max_test_samples", 0, int, "seeded random subset of the test set (0 = all)", check=_ge(0),
              allowed="an integer ≥ 0", source=_FEDLIB_CHOICE),
        Param("input_normalization", "per_channel", str, "image inputs: 'per_channel' standardises each channel "
              "with the training images' mean and std, (x/255 − μ)/σ; 'unit_interval' only scales pixels to [0, 1], "
              "x/255 (torchvision's ToTensor alone). Sets that are not images (Synthetic, FEMNIST) are used as "
              "stored: 'per_channel' only", choices=INPUT_NORMALIZATIONS,
              source=_FEDLIB_CHOICE + " ('unit_interval' = FedConcat's code for FMNIST, SVHN and CIFAR-10, "
              "utils.py:832-868)"),
    )),
    ("partition", (
        Param("partition", "auto", str, "label-skew partition; auto: natural for datasets with clients, dirichlet "
              "otherwise", choices=("auto",) + PARTITIONS),
        Param("partition_alpha", 2, int, "Q(α): shards (labels) per client", check=_ge(1),
              allowed="an integer ≥ 1, num_clients·α ≤ n", source="FedLC §5.1"),
        Param("partition_beta", 0.5, float, "D(β): Dirichlet concentration", check=_gt(0), allowed="> 0",
              source="FedLC §5.1"),
        Param("partition_k", 2, int, "#C=k: classes per client", check=_ge(1), allowed="an integer in [1, classes]",
              source="NIID-Bench"),
        Param("min_client_size", 10, int, "D(β): redraw until every client holds this many samples", check=_ge(1),
              allowed="an integer ≥ 1", source="NIID-Bench"),
        Param("partition_equal_sizes", False, bool, "re-cut the partition into equal contiguous chunks of the "
              "clients' class-sorted samples (FedDF's and FEDIC's Dirichlet partitioner)",
              source="FEDIC code sampling_dirichlet.py:18-38"),
    )),
    ("federation", (
        Param("num_clients", 20, int, "m, the number of clients", check=_ge(1), allowed="an integer in [1, n]",
              source="FedLC §5.2"),
        Param("participation", 1.0, float, "fraction of clients sampled per round", check=lambda v: 0 < v <= 1,
              allowed="in (0, 1]", source=_FEDLIB_CHOICE),
        Param("rounds", 400, int, "communication rounds", check=_ge(1), allowed="an integer ≥ 1",
              source="FedLC §5.4 (§5.3 uses 300)"),
        Param("local_epochs", 1, int, "E, local epochs per round", check=_ge(1), allowed="an integer ≥ 1",
              source=_FEDLIB_CHOICE + " (FedLC Table 5 varies E)"),
        Param("batch_size", 128, int, "B, local mini-batch size", check=_ge(1), allowed="an integer ≥ 1",
              source="FedLC §5.2"),
        Param("lr", 0.01, float, "client SGD learning rate η", check=_gt(0), allowed="> 0", source="FedLC §5.2"),
        Param("momentum", 0.0, float, "client SGD momentum; the buffer starts at zero every round",
              check=lambda v: 0 <= v < 1, allowed="in [0, 1)", source="FedLC: plain SGD (0)"),
        Param("weight_decay", 0.0, float, "client SGD weight decay λ (on every parameter)", check=_ge(0),
              allowed="≥ 0", source="FedLC §5.2: none"),
        Param("model", "auto", str, "model name (fedlib.models); auto: the dataset's default model",
              check=lambda v: v == "auto" or v in model_names(), allowed="auto or a registered model"),
    )),
    ("algorithm", (
        Param("method", "fedavg", str, "method tokens joined by '+' (fedlib.algorithms)",
              allowed="registered tokens joined by '+'"),
        Param("server_lr", None, float, "server learning rate η_g; None: the server optimizer's default "
              "(1.0 for averaging, 0.01 for FedAdam)", check=_gt(0), allowed="> 0 or None", optional=True),
    )),
    ("server data", (
        Param("server_aux_per_class", None, int, "D_aux: this many labelled training samples per class held by the "
              "server, taken out of the training set before the long tail and the partition (0 = none; a dataset "
              "with its own balanced held-out set, ImageNet-LT's val split, gives them from there); None: "
              f"{AUTO_AUX_PER_CLASS} when the method trains on D_aux, else 0",
              check=_ge(0), allowed="an integer ≥ 0 or None", optional=True,
              source="FEDIC §3 (100 per class in its code, dataset.py:23-32)"),
        Param("server_unlabeled", "auto", str, "D_ulb, unlabelled data held by the server: 'none', "
              "'long_tail_dropped' (the training samples the long tail removes) or a dataset name (its training "
              "images, labels unused, resized to the inputs' size); 'auto': 'none' unless the method distils on "
              "D_ulb, then the paper's D_ulb for the dataset when its files are there (CIFAR-100 for CIFAR-10 and "
              "ImageNet-LT), else 'long_tail_dropped' with a warning (a stand-in: in-distribution, so easier)",
              check=lambda v: v in ("auto", "none", "long_tail_dropped") or v in DATASETS,
              allowed="'auto', 'none', 'long_tail_dropped' or a registered dataset", source="FEDIC §3.1"),
        Param("server_unlabeled_size", 0, int, "keep a seeded random subset of this many D_ulb samples (0 = all)",
              check=_ge(0), allowed="an integer ≥ 0"),
    )),
    ("evaluation", (
        Param("personal_eval_every", None, int, "evaluate every client's personalized model every this many rounds "
              "and at the last (0 = never; None: at the last round for personalized methods, never otherwise)",
              check=_ge(0), allowed="an integer ≥ 0 or None", optional=True),
        Param("personalized_model", "local_update", str, "a client's personalized model: after a local update "
              "from the current server state ('local_update', FedRoD's and FedABC's protocol) or the global model "
              "with the client's stored local parameters ('stored')", choices=("local_update", "stored")),
        Param("personalized_classes", "all", str, "the classes a personalized model predicts among: every class "
              "('all') or only those its client holds training samples of ('held': the other classes' logits are "
              "masked, so it can never predict a class it has no data of)", choices=("all", "held"),
              source="fedlib: FedABC Table 2's FedAvg, FedProx, LG-FedAvg and FedPer values sit at the 'held' "
                     "ceiling (README, reproduction notes, FedABC)"),
        Param("balanced_test", "shards", str, "class-balanced local test sets (FedABC Eq. 8): disjoint equal "
              "per-class shards of the test set ('shards') or the whole test set for every client ('full')",
              choices=("shards", "full")),
        Param("validation_fraction", 0.0, float, "hold out this fraction of every client's training samples of "
              "each class (seeded): the run trains on the rest and measures every accuracy (global and "
              "personalized) on the held-out samples instead of the test set, for tuning without the test set "
              "(0 = off)", check=lambda v: 0 <= v < 1, allowed="in [0, 1)",
              source="fedlib (FedABC notes §4: tune on a held-out slice of the local training data)"),
        *GROUP_PARAMS,
    )),
    ("bookkeeping", (
        Param("eval_every", 1, int, "evaluate the global model every this many rounds (and at the last)",
              check=_ge(1), allowed="an integer ≥ 1"),
        Param("seed", 0, int, "seeds data generation, partition, model init, sampling and batch order",
              check=_ge(0), allowed="an integer ≥ 0"),
        Param("device", "cpu", str, "torch device", check=lambda v: v == "cpu" or v.startswith("cuda"),
              allowed="'cpu' or 'cuda[:N]'"),
        Param("precision", "float32", str, "arithmetic of training and evaluation: float32 (on CUDA with TF32 "
              "off), tf32 (matrix products and convolutions in TF32) or bf16 (autocast to bfloat16); tf32 and bf16 "
              "on CUDA only (fedlib.precision)", choices=PRECISIONS),
        Param("engine", "vectorized", str, "how the clients of a round are trained: all at once (vectorized), "
              "all at once with the stacked loss under torch.compile (compiled), or the plain reference loop "
              "(sequential); the same mathematics, equal to float32 rounding", choices=ENGINES),
        Param("memory_budget_gb", 4.0, float, "vectorized engine: clients train in groups fitting this budget "
              "(the grouping changes float rounding, so it is part of the store key)", check=_gt(0), allowed="> 0"),
        Param("memory_format", "model", str, "layout of the images and the 4-D weights: the model's registered one "
              "(model: channels-last for the CIFAR-10 CNNs, where one CPU step measured faster) or contiguous (NCHW, "
              "whatever the model registered); the layout changes float rounding only, so it is part of the store "
              "key (fedlib.models.LAYOUTS)", choices=LAYOUTS),
        Param("threads", 1, int, "torch intra-op threads the run trains and evaluates on: 1 gives the same numbers on "
              "any machine and worker count; more split reductions differently (float rounding only), so a count "
              "other than 1 is part of the store key (fedlib.simulation.intra_op_threads)", check=_ge(1),
              allowed="an integer ≥ 1"),
        Param("client_threads", 1, int, "sequential engine: the clients of a round train on this many threads at "
              "once, and the test set is scored on them, each with one intra-op thread: the numbers of 1 bit for bit, "
              "so not part of the store key (fedlib.threads); needs threads=1", check=_ge(1),
              allowed="an integer ≥ 1"),
        Param("checkpoint_every", 10, int, "rounds between checkpoints in the store", check=_ge(1),
              allowed="an integer ≥ 1"),
    )),
)
CORE_PARAMS: dict[str, Param] = {p.name: p for _, ps in CORE_SECTIONS for p in ps}


def all_params() -> dict[str, Param]:
    """Every parameter a configuration accepts: core first, then each method's."""
    method = all_method_params()
    clash = set(method) & set(CORE_PARAMS)
    if clash:
        raise ValueError(f"method parameter(s) {sorted(clash)} clash with core parameters")
    return {**CORE_PARAMS, **method}


class _ConfigBase:
    """Methods of :class:`Config` (a frozen dataclass whose fields are :func:`all_params`)."""

    def __post_init__(self) -> None:
        _validate(self)
        if self.partition == "auto":
            object.__setattr__(self, "partition", "natural" if DATASETS[self.dataset].natural_clients
                               else "dirichlet")
        if self.model == "auto":
            object.__setattr__(self, "model", default_model(self.dataset))
        if self.server_lr is None:  # a token may declare another default (FedAdam's 0.01)
            object.__setattr__(self, "server_lr", token_default(self.method, "server_lr", 1.0))
        if self.personal_eval_every is None:
            from .algorithms import method_part

            personalized = method_part(self, "personalization").personalized
            object.__setattr__(self, "personal_eval_every", self.rounds if personalized else 0)
        if self.server_aux_per_class is None or self.server_unlabeled == "auto":
            _resolve_server_data(self)
        _validate_server_data(self)

    @property
    def method_tokens(self) -> tuple[str, ...]:
        return tuple(self.method.split("+"))

    @property
    def num_classes(self) -> int:
        return DATASETS[self.dataset].num_classes

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
        """The core parameters and those of this method's tokens (what the run reads)."""
        names = list(CORE_PARAMS) + [p.name for p in method_params(self.method)]
        return {k: getattr(self, k) for k in names}

    def all_values(self) -> dict[str, Any]:
        """Every field, including the parameters of methods this run does not use."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> "Config":
        return type(self).from_dict({**self.all_values(), **changes})

    def key_dict(self) -> dict[str, Any]:
        """The parameters that determine the result (the store key's content)."""
        return {k: v for k, v in self.to_dict().items()
                if k not in KEY_EXCLUDED and not (k in KEY_OMITTED_AT and v == KEY_OMITTED_AT[k])}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


def _build_config_class():
    specs = [(p.name, Any, field(default=p.default)) for p in all_params().values()]
    cls = make_dataclass("Config", specs, bases=(_ConfigBase,), frozen=True, namespace={
        "__doc__": "A validated run configuration: the core parameters (:data:`CORE_PARAMS`) and every "
                   "registered method's parameters, as attributes.  Build it with keywords or "
                   ":meth:`from_dict`; see ``python -m fedlib params``.",
        "__module__": __name__})
    return cls


def default_model(dataset: str) -> str:
    """The model a dataset uses unless ``model`` says otherwise (e.g. FedLC's: logistic
    regression for Synthetic, the Table 8 CNN for (F)MNIST, the Table 9 CNN for the colour sets)."""
    if dataset not in DATASETS:
        raise ValueError(f"dataset must be one of {sorted(DATASETS)}, got {dataset!r}")
    return DATASETS[dataset].default_model


# --------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------
def _require(cond: bool, name: str, allowed: str, value: Any) -> None:
    if not cond:
        raise ConfigError(f"{name} must be {allowed}, got {value!r}")


def _validate(c) -> None:
    for p in all_params().values():
        p.validate(getattr(c, p.name))
    tokens = parse_method(c.method)  # known tokens, at most one per part kind

    spec = DATASETS[c.dataset]
    natural = spec.natural_clients
    if natural:
        _require(c.partition in ("auto", "natural"), "partition",
                 f"'natural' or 'auto' for dataset={c.dataset!r} (its clients come with the data)", c.partition)
        _require(c.long_tail_if == 1, "long_tail_if", f"1 for dataset={c.dataset!r}", c.long_tail_if)
        _require(c.max_train_samples == 0, "max_train_samples",
                 f"0 for dataset={c.dataset!r} (set num_clients instead)", c.max_train_samples)
    else:
        _require(c.partition != "natural", "partition",
                 f"one of iid, shards, classes_per_client, dirichlet for dataset={c.dataset!r}", c.partition)
    _require(c.input_normalization == "per_channel" or spec.norm is not None, "input_normalization",
             f"'per_channel' for dataset={c.dataset!r} (not images: its inputs are used as stored)",
             c.input_normalization)
    _require(c.partition_k <= spec.num_classes, "partition_k",
             f"in [1, {spec.num_classes}] (classes per client ≤ number of classes of {c.dataset})", c.partition_k)
    n_train = spec.num_train
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
    _require(c.precision not in CUDA_ONLY or c.device.startswith("cuda"), "precision",
             f"'float32' on device={c.device!r} ({' and '.join(CUDA_ONLY)} need device='cuda')", c.precision)
    if c.client_threads > 1:
        _require(c.engine == "sequential", "engine", f"'sequential' for client_threads={c.client_threads} (the "
                 "clients that train one by one are the ones threads can share out)", c.engine)
        _require(c.threads == 1, "threads", f"1 for client_threads={c.client_threads} (each client thread keeps "
                 "one intra-op thread)", c.threads)
    for token in tokens:  # the method's own joint checks (e.g. FedConcat: num_clusters ≤ num_clients)
        if token.check is not None:
            token.check(c)
    # Whether the device exists here is checked when a run trains (fedlib.simulation.require_device), not
    # here: a result trained on a GPU stays readable from the store on a machine without one.


def _resolve_server_data(c) -> None:
    """``server_aux_per_class=None`` and ``server_unlabeled='auto'``: what the method needs
    (its server-training part's ``needs``), see the parameters' docs."""
    import warnings

    from .algorithms import method_part

    needs = set(method_part(c, "server_training").needs)
    if c.server_aux_per_class is None:
        object.__setattr__(c, "server_aux_per_class", AUTO_AUX_PER_CLASS if "aux" in needs else 0)
    if c.server_unlabeled != "auto":
        return
    choice = "none"
    if "unlabeled" in needs:
        preferred = DATASETS[c.dataset].unlabeled
        if preferred is not None and _available(preferred, c.data_root):
            choice = preferred
        else:
            absent = repr(preferred) if preferred else f"the paper's D_ulb for {c.dataset} (no fedlib loader)"
            _require(c.long_tail_if > 1, "server_unlabeled", f"set for method={c.method!r}: it distils on "
                     f"unlabelled server data and {absent} is absent (use a registered dataset, or "
                     "'long_tail_dropped' with long_tail_if > 1)", c.server_unlabeled)
            warnings.warn(f"server_unlabeled='auto': {absent} is absent, so D_ulb is the {c.dataset} training "
                          "samples the long tail drops (a stand-in: in-distribution, which makes distillation "
                          "easier than on another dataset)", stacklevel=4)
            choice = "long_tail_dropped"
    object.__setattr__(c, "server_unlabeled", choice)


def _available(dataset: str, root) -> bool:
    """Whether ``dataset``'s files are under the data root (their presence; nothing is read)."""
    from .data import dataset_present

    return dataset_present(dataset, root)


def _validate_server_data(c) -> None:
    spec = DATASETS[c.dataset]
    if c.server_unlabeled == "long_tail_dropped":
        _require(c.long_tail_if > 1, "server_unlabeled", "not 'long_tail_dropped' when long_tail_if = 1 "
                 "(no sample is dropped)", c.server_unlabeled)
    if c.server_aux_per_class and spec.num_train is not None:
        _require(c.server_aux_per_class * spec.num_classes < (c.max_train_samples or spec.num_train),
                 "server_aux_per_class", f"< {(c.max_train_samples or spec.num_train) // spec.num_classes} so that "
                 "training data remain", c.server_aux_per_class)


Config = _build_config_class()


def parse_value(name: str, text: str) -> Any:
    """Convert a command-line string to the parameter's type (``key=value`` form)."""
    params = all_params()
    if name not in params:
        Config.from_dict({name: text})  # raises the unknown-parameter error
    return params[name].parse(text)
