"""FedConcat's communication analysis: the baselines' round budget of Table 1, "same communication cost".

The caption says the baselines are compared "with same communication cost" and
that their model "is the model of one cluster in FedConcat"; neither the slides
nor the code say how many rounds that is (notes/fedconcat.md §2).  This module
computes it from the model sizes, counting what one client sends and receives,
in units of one baseline round (one model of M parameters down and one up):

* stage 2: T_e rounds, each one cluster model down and up   → T_e;
* the frozen encoders, broadcast once to every client (slides: "broadcast the
  global feature extractor to all clients for one time"): K encoders of
  |E| parameters down                                        → K·|E| / (2M);
* stage 3: T_c rounds, each the classifier C (|C| = K·d·m + m for d-dimensional
  features and m classes) down and up                        → T_c·|C| / M.

So T_baseline = T_e + K·|E|/(2M) + T_c·|C|/M (notes §2: ≈ 120 rounds for the
simple CNN on CIFAR-10/SVHN, ≈ 147 on FMNIST, ≈ 60 for VGG-9).  ``count``
chooses what is counted, so that a notebook can show how the ranking changes
when the budget is taken differently: ``"both"`` (down and up, the default),
``"upload"`` (client → server only: the broadcast costs nothing) or
``"download"``; ``include`` which parts count (``("encoders",)`` alone is T_e
rounds, the code's baseline default ``comm_round = 50``).  FedConcat-ID's probe round (one model down and up) adds one
round when ``probe_round`` is True (the code reuses it as a stage-2 round, so it
then costs nothing extra).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

__all__ = ["Budget", "same_communication_rounds", "model_sizes", "budget_of", "with_budget", "rounds_for_model",
           "CENTRALIZED_EPOCHS", "COUNTS", "PARTS"]

#: Centralized (Table 1's last column): one client holding the whole training set, trained for this many
#: epochs in one round -- the code's ``alg=all_in`` trains ``epochs`` epochs, 10 in run.sh (notes §6); the
#: paper does not state it.
CENTRALIZED_EPOCHS = 10

COUNTS = ("both", "upload", "download")
PARTS = ("encoders", "broadcast", "classifier")


@dataclass(frozen=True)
class Budget:
    """FedConcat's per-client communication in baseline rounds, by stage."""

    encoder_rounds: float  # stage 2
    broadcast: float  # the one-time download of the K frozen encoders
    classifier: float  # stage 3
    probe: float  # FedConcat-ID's round 1 when it is not reused

    @property
    def total(self) -> float:
        return self.encoder_rounds + self.broadcast + self.classifier + self.probe

    @property
    def rounds(self) -> int:
        """The baselines' round budget: the total, rounded to the nearest round."""
        return int(round(self.total))


def same_communication_rounds(model_params: int, encoder_params: int, feature_dim: int, num_classes: int,
                              num_clusters: int = 5, encoder_rounds: int = 50, classifier_rounds: int = 1000,
                              count: str = "both", probe_round: bool = False,
                              include: tuple = PARTS) -> Budget:
    """FedConcat's communication per client in rounds of a baseline training one model of
    ``model_params`` parameters (M); ``encoder_params`` is |E|, ``feature_dim`` d."""
    if not set(include) <= set(PARTS):
        raise ValueError(f"include must be a subset of {PARTS}, got {include!r}")
    if count not in COUNTS:
        raise ValueError(f"count must be one of {COUNTS}, got {count!r}")
    for name, v in (("model_params", model_params), ("encoder_params", encoder_params),
                    ("feature_dim", feature_dim), ("num_classes", num_classes), ("num_clusters", num_clusters)):
        if not isinstance(v, int) or v < 1:
            raise ValueError(f"{name} must be an integer ≥ 1, got {v!r}")
    m = float(model_params)
    head = num_clusters * feature_dim * num_classes + num_classes  # |C|
    down = 0.0 if count == "upload" else 1.0  # share of a baseline round each direction carries
    up = 0.0 if count == "download" else 1.0
    per_round = down + up  # a baseline round in the chosen count
    return Budget(
        encoder_rounds=encoder_rounds * (down + up) / per_round if "encoders" in include else 0.0,
        broadcast=num_clusters * encoder_params * down / (per_round * m) if "broadcast" in include else 0.0,
        classifier=classifier_rounds * head * (down + up) / (per_round * m) if "classifier" in include else 0.0,
        probe=float(probe_round))


def model_sizes(model: str, num_classes: int, input_shape: tuple) -> dict:
    """M (all parameters), |E| (all but the classifier) and d of a registered fedlib model."""
    from ...models import body_keys, build_model

    net = build_model(model, num_classes, input_shape)
    body = set(body_keys(net))
    return {"model_params": sum(p.numel() for p in net.parameters()),
            "encoder_params": sum(p.numel() for k, p in net.named_parameters() if k in body),
            "feature_dim": net.classifier.in_features}


@functools.lru_cache(maxsize=None)
def _sizes(model: str, num_classes: int, input_shape: tuple) -> dict:
    return model_sizes(model, num_classes, input_shape)


def budget_of(config, *, count: str = "both", include: tuple = PARTS, probe_round: bool = False,
              model: str | None = None) -> Budget:
    """FedConcat's communication per client for a run configuration (a :class:`fedlib.Config` or a dict
    of its values): its dataset, its K (``num_clusters``), T_e, T_c and the one-cluster model (``model``,
    default the configuration's), in baseline rounds of that model."""
    from ...config import Config
    from ...data import DATASETS

    c = config if isinstance(config, Config) else Config.from_dict(dict(config))
    spec = DATASETS[c.dataset]
    sizes = _sizes(model or c.model, spec.num_classes, tuple(spec.input_shape))
    return same_communication_rounds(**sizes, num_classes=spec.num_classes, num_clusters=c.num_clusters,
                                     encoder_rounds=c.encoder_rounds, classifier_rounds=c.classifier_rounds,
                                     count=count, probe_round=probe_round, include=include)


def rounds_for_model(budget: Budget, model_params: int, other_params: int) -> float:
    """The same communication as ``budget`` (in rounds of a model of ``model_params`` parameters)
    in rounds of a model of ``other_params`` parameters: total parameters sent and received
    per client divided by one round of the other model (e.g. FedConcat's final architecture
    for Fig. 4)."""
    if model_params < 1 or other_params < 1:
        raise ValueError(f"model sizes must be ≥ 1, got {model_params} and {other_params}")
    return budget.total * model_params / other_params


def with_budget(cell: dict) -> dict:
    """A table cell's configuration with the rounds "same communication cost" implies, unless it
    sets ``rounds`` itself:

    * a centralized cell (one client, Table 1's last column) trains ``CENTRALIZED_EPOCHS``
      epochs on the whole training set in one round, with no partition parameters (the
      dataset's four columns then share one run);
    * every other cell gets R = :func:`budget_of` (its K, T_e, T_c and model) rounds: the
      baselines' budget; FedConcat itself does not read ``rounds``.
    """
    if "rounds" in cell:
        return cell
    out = dict(cell)
    if out.get("num_clients") == 1:
        for key in ("partition_k", "partition_beta", "partition_alpha"):
            out.pop(key, None)
        out.update(partition="iid", rounds=1, local_epochs=CENTRALIZED_EPOCHS)
        return out
    out["rounds"] = budget_of(out).rounds
    return out
