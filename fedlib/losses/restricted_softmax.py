"""FedRS's restricted softmax (Li & Zhan, KDD 2021)."""

from __future__ import annotations

import numbers

import torch
from torch import Tensor

from ._common import REDUCTIONS, check_batch, check_choice, check_per_class, pick, reduce

__all__ = ["fedrs_loss"]


def fedrs_loss(
    logits: Tensor,
    targets: Tensor,
    class_present: Tensor,
    alpha=0.5,
    sample_weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """FedRS restricted-softmax CE (Li & Zhan, KDD 2021).

    Logits of classes absent from the client (``class_present[c]`` is
    ``False``/0) are scaled by ``α ∈ [0, 1]`` before the softmax:
    ``z̃_c = s_c·z_c`` with ``s_c = 1`` if present else ``α``, then
    ``ℓ = −z̃_y + logsumexp_c z̃_c``.  ``α = 1`` is plain cross-entropy.
    FedRS scales the classifier weights ``w_c`` (``z_c = w_c^T h``); scaling
    the logit is identical for a bias-free classifier and also scales the
    bias otherwise.

    Args:
        class_present: shape ``[K]``, bool or float (nonzero = present).
        alpha: ``α`` in ``[0, 1]`` (Python number; a tensor is unchecked).
    """
    check_choice("reduction", reduction, REDUCTIONS)
    check_batch(logits, targets, sample_weight)
    check_per_class("class_present", class_present, logits.shape[-1])
    if not isinstance(alpha, Tensor):
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 <= alpha <= 1:
            raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}")

    ones = torch.ones_like(logits[0])
    scale = torch.where(class_present.bool(), ones, alpha * ones)  # s_c
    restricted = logits * scale
    loss = restricted.logsumexp(-1) - pick(restricted, targets)
    return reduce(loss, sample_weight, reduction)
