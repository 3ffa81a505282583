"""FedAvg (McMahan et al., AISTATS 2017) — and the default of every algorithm part.

An algorithm in fedlib is a few small parts (see :mod:`fedlib.algorithms`):

* a **client loss** ``loss(logits, targets, class_counts, sample_weight)``;
* a **representation loss**, a term on the features that may need reference
  models' features (MOON); FedAvg has none;
* a **client correction** of the local gradient, with optional client and
  server state (FedProx, SCAFFOLD);
* a **personalization**: which parameters stay on the client, how local
  training is phased, how a client's personalized model is obtained; FedAvg
  shares everything;
* an **aggregator** turning the sampled clients' updates Δ_k = w_k − w into one
  server update (FedAvg's weighted mean, FedNova's normalized average);
* a **server optimizer** applying the pseudo-gradient −Δ (SGD with lr 1 is
  plain averaging; FedOpt uses Adam);
* a **server training** step on server-held data after aggregation
  (distillation, calibration); FedAvg has none;
* the **stages** of a multi-stage method; FedAvg is one stage of rounds.

This module holds FedAvg's choice for each part; the other methods replace some.
The kinds themselves, every hook with its default, are declared in
:mod:`fedlib.algorithms.kinds`; FedAvg's parts are ordinary parts of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import tree
from ..losses import cross_entropy
from ..tree import Params
from .kinds import Aggregator, ClientLoss, Correction, ServerOptimizer
from .registry import register_method


@dataclass(frozen=True)
class CrossEntropyLoss(ClientLoss):
    """Plain softmax cross-entropy (the loss FedLC §3 analyses)."""

    name = "cross_entropy"

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        return cross_entropy(logits, targets, sample_weight=sample_weight)


@dataclass(frozen=True)
class NoCorrection(Correction):
    """Local SGD on the client loss alone: every hook at its :class:`~fedlib.algorithms.kinds.Correction` default."""

    name = "none"


@dataclass(frozen=True)
class WeightedMean(Aggregator):
    """FedAvg's aggregation: Δ = Σ_k p_k Δ_k with p_k = n_k / Σ_{k∈S} n_k."""

    name = "weighted_mean"

    def combine(self, deltas: list[Params], num_samples: list[int], steps: list[float]) -> Params:
        total = float(sum(num_samples))
        return tree.weighted_sum(deltas, [n / total for n in num_samples])


@dataclass(frozen=True)
class ServerSGD(ServerOptimizer):
    """w ← w − η_g · (−Δ).  With η_g = 1 this is FedAvg's model averaging."""

    lr: float = 1.0
    name = "sgd"

    def apply(self, params: Params, pseudo_grad: Params, state: dict) -> tuple[Params, dict]:
        return tree.tree_map(lambda w, g: w - self.lr * g, params, pseudo_grad), state


register_method("fedavg", parts={}, paper="McMahan et al., AISTATS 2017", alone=True,
                doc="every part at its default (this module)")


def default_parts(server_lr: float = 1.0) -> dict:
    """FedAvg's part of every kind: what a method has unless one of its tokens sets another."""
    from .personalization import SharedModel
    from .representation import NoRepresentationLoss
    from .server_training import NoServerTraining
    from .stages import SingleStage

    return {
        "loss": CrossEntropyLoss(),
        "representation": NoRepresentationLoss(),
        "correction": NoCorrection(),
        "personalization": SharedModel(),
        "aggregator": WeightedMean(),
        "server_optimizer": ServerSGD(lr=server_lr),
        "server_training": NoServerTraining(),
        "stages": SingleStage(),
    }
