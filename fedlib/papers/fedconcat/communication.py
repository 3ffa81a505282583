"""The baselines' round budget of FedConcat's Table 1: "same communication cost".

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

from dataclasses import dataclass

__all__ = ["Budget", "same_communication_rounds", "model_sizes"]

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
