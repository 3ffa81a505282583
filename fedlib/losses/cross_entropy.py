"""Softmax cross-entropy, the loss of FedAvg and of every baseline that changes nothing on the client."""

from __future__ import annotations

from torch import Tensor

from ._common import REDUCTIONS, check_batch, check_choice, pick, reduce

__all__ = ["cross_entropy"]


def cross_entropy(
    logits: Tensor,
    targets: Tensor,
    sample_weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Softmax cross-entropy ``ℓ = −z_y + logsumexp_i z_i`` with optional ``w_i``.

    Same weighting convention as :func:`fedlc_loss`.
    """
    check_choice("reduction", reduction, REDUCTIONS)
    check_batch(logits, targets, sample_weight)
    loss = logits.logsumexp(-1) - pick(logits, targets)
    return reduce(loss, sample_weight, reduction)
