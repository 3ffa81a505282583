"""Federated algorithms as compositions of four parts.

``method`` is one or more tokens joined by ``+``; each token sets one part and
the rest stay FedAvg's (:mod:`fedlib.algorithms.fedavg`):

=========  ==================  =========================================
token      part it sets        paper
=========  ==================  =========================================
fedavg     (nothing)           McMahan et al. 2017
fedprox    client correction   Li et al. 2020 (μ)
scaffold   client correction   Karimireddy et al. 2020
fednova    aggregator          Wang et al. 2020
fedopt     server optimizer    Reddi et al. 2021 (FedAdam)
fedrs      client loss         Li & Zhan 2021 (α)
fedlc      client loss         Zhang et al. 2022 (τ)
=========  ==================  =========================================

So "FedLC + SCAFFOLD" of FedLC Table 7 is ``method="fedlc+scaffold"``: the
calibrated loss with SCAFFOLD's control variates, and nothing new.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..config import Config
from .fedavg import CrossEntropyLoss, NoCorrection, ServerSGD, WeightedMean
from .fedlc import CalibratedLoss
from .fednova import NormalizedAveraging
from .fedopt import ServerAdam
from .fedprox import Proximal
from .fedrs import RestrictedSoftmaxLoss
from .scaffold import Scaffold

__all__ = ["Algorithm", "build_algorithm"]


@dataclass(frozen=True)
class Algorithm:
    loss: Any
    correction: Any
    aggregator: Any
    server_optimizer: Any

    def describe(self) -> dict[str, str]:
        return {part: getattr(self, part).name for part in ("loss", "correction", "aggregator", "server_optimizer")}


def build_algorithm(config: Config) -> Algorithm:
    """The algorithm named by ``config.method`` with the config's hyperparameters."""
    parts: dict[str, Any] = {
        "loss": CrossEntropyLoss(),
        "correction": NoCorrection(),
        "aggregator": WeightedMean(),
        "server_optimizer": ServerSGD(lr=config.server_lr),
    }
    for token in config.method_tokens:
        if token == "fedprox":
            parts["correction"] = Proximal(mu=config.mu)
        elif token == "scaffold":
            parts["correction"] = Scaffold()
        elif token == "fednova":
            parts["aggregator"] = NormalizedAveraging()
        elif token == "fedopt":
            parts["server_optimizer"] = ServerAdam(lr=config.server_lr, beta1=config.server_beta1,
                                                   beta2=config.server_beta2, eps=config.server_eps)
        elif token == "fedrs":
            parts["loss"] = RestrictedSoftmaxLoss(alpha=config.fedrs_alpha)
        elif token == "fedlc":
            parts["loss"] = CalibratedLoss(tau=config.tau, denominator=config.fedlc_denominator,
                                           margin=config.fedlc_margin, missing=config.fedlc_missing,
                                           min_count=config.fedlc_min_count)
    return Algorithm(**parts)
