"""Ratio Loss (Wang et al., AAAI 2021, "Addressing Class Imbalance in Federated Learning").

The client loss is the cross-entropy with a per-class weight that the server
estimates each round from the global model's response to its auxiliary data
(:mod:`fedlib.algorithms.ratio_loss` computes the weights):

ℓ_i = −(α + β·Ra_{y_i}) · log p_{i,y_i}

The batch loss (``reduction="mean"``) is normalised one of two ways, ``normalization``:

* ``"class_weights"`` (the default): Σ_i w_{y_i} ℓ_i / Σ_i w_{y_i}, the class-weighted
  mean that ``torch.nn.CrossEntropyLoss(weight=w)`` computes.  Scaling every weight
  by c changes nothing, so the step size stays the optimiser's and only the balance
  between classes moves;
* ``"samples"``: Σ_i w_{y_i} ℓ_i / B, the plain mean of the authors'
  ``Ratio_Cross_Entropy`` (``size_average=True``): the weights also scale the step,
  by up to α + β·max Ra, and Ra is unbounded (a ratio of two update sums).

Padding samples (``sample_weight`` 0) count in neither sum.  With every weight 1
both are the cross-entropy.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._common import REDUCTIONS, check_batch, check_choice, check_per_class, pick, reduce

__all__ = ["RATIO_NORMALIZATIONS", "ratio_loss"]

#: How the batch mean is normalised (module docstring).
RATIO_NORMALIZATIONS = ("class_weights", "samples")


def ratio_loss(logits: Tensor, targets: Tensor, class_weights: Tensor, sample_weight: Tensor | None = None,
               reduction: str = "mean", normalization: str = "class_weights") -> Tensor:
    """Class-weighted cross-entropy ``−w_{y} log p_y`` with ``class_weights`` = w [K]; ``normalization``
    (``"class_weights"`` or ``"samples"``) is the denominator of the ``"mean"`` (module docstring)."""
    check_choice("reduction", reduction, REDUCTIONS)
    check_choice("normalization", normalization, RATIO_NORMALIZATIONS)
    check_batch(logits, targets, sample_weight)
    check_per_class("class_weights", class_weights, logits.shape[-1])
    ce = logits.logsumexp(-1) - pick(logits, targets)
    w = pick(class_weights.to(logits.dtype).expand_as(logits), targets)  # w_{y_i}
    if reduction == "mean" and normalization == "class_weights":
        total = reduce(w, sample_weight, "sum").clamp_min(torch.finfo(ce.dtype).tiny)  # Σ_i w_{y_i}
        return reduce(w * ce, sample_weight, "sum") / total
    return reduce(w * ce, sample_weight, reduction)
