"""Focal loss on the client: Fed-Focal Loss (Sarkar et al. 2020, after Lin et al. 2017).

ℓ_i = −(1 − p_{i,y})^γ · log p_{i,y},  p = softmax(z)

γ ≥ 0 down-weights well-classified samples; γ = 0 is the cross-entropy.  The
α-balancing factor of Lin et al. is 1 here (Fed-Focal Loss states no class
weights, and FEDIC gives none).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._common import REDUCTIONS, check_batch, check_choice, check_nonneg_number, pick, reduce

__all__ = ["focal_loss"]


def focal_loss(logits: Tensor, targets: Tensor, gamma: float = 2.0, sample_weight: Tensor | None = None,
               reduction: str = "mean") -> Tensor:
    """Focal loss ``−(1 − p_y)^γ log p_y`` per sample, then the weighted reduction.

    ``(1 − p_y)`` is computed as ``−expm1(log p_y)`` so that it stays accurate when
    p_y is close to 1."""
    check_choice("reduction", reduction, REDUCTIONS)
    check_batch(logits, targets, sample_weight)
    check_nonneg_number("gamma", gamma)
    log_p = pick(torch.log_softmax(logits, dim=-1), targets)
    modulator = (-torch.expm1(log_p)).clamp_min(0.0) ** gamma
    return reduce(-modulator * log_p, sample_weight, reduction)
