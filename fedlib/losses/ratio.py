"""Ratio Loss (Wang et al., AAAI 2021, "Addressing Class Imbalance in Federated Learning").

The client loss is the cross-entropy with a per-class weight that the server
estimates each round from the global model's response to its auxiliary data
(:mod:`fedlib.algorithms.ratio_loss` computes the weights):

ℓ_i = −(α + β·Ra_{y_i}) · log p_{i,y_i}

and the batch loss is the plain (weighted-by-padding) mean of ℓ_i, as in the
authors' ``Ratio_Cross_Entropy`` with ``size_average=True`` (the class weights
are not renormalised).  With every weight 1 this is the cross-entropy.
"""

from __future__ import annotations

from torch import Tensor

from ._common import REDUCTIONS, check_batch, check_choice, check_per_class, pick, reduce

__all__ = ["ratio_loss"]


def ratio_loss(logits: Tensor, targets: Tensor, class_weights: Tensor, sample_weight: Tensor | None = None,
               reduction: str = "mean") -> Tensor:
    """Class-weighted cross-entropy ``−w_{y} log p_y`` with ``class_weights`` = w [K]."""
    check_choice("reduction", reduction, REDUCTIONS)
    check_batch(logits, targets, sample_weight)
    check_per_class("class_weights", class_weights, logits.shape[-1])
    ce = logits.logsumexp(-1) - pick(logits, targets)
    w = pick(class_weights.to(logits.dtype).expand_as(logits), targets)
    return reduce(w * ce, sample_weight, reduction)
