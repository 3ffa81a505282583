"""Balanced softmax (Ren et al., NeurIPS 2020), the loss of FedRoD's generic head (Chen & Chao, ICLR 2022).

With the client's class counts ``n_c``, the balanced softmax is

    ℓ = −log [ n_y·e^{z_y} / Σ_c n_c·e^{z_c} ] = −log softmax(z + log n)_y,

i.e. cross-entropy on the logits shifted by the log class counts.  A class the
client does not hold (n_c = 0) has weight 0: it leaves the softmax (its shifted
logit is −inf).  This is logit adjustment with τ = 1 (FedLC's Eq. 4–5 form), so
it is computed by :func:`fedlib.losses.fedlc_loss` with ``margin="log_prior"``
and ``missing="mask"`` (the normaliser Σ n cancels in the softmax); a target in
an absent class (only weight-0 padding rows can have one) keeps a finite loss.
"""

from __future__ import annotations

from torch import Tensor

from .logit_calibration import fedlc_loss

__all__ = ["balanced_softmax_loss"]


def balanced_softmax_loss(
    logits: Tensor,
    targets: Tensor,
    class_counts: Tensor,
    *,
    sample_weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """``−log softmax(z + log n)_y`` with absent classes (n_c = 0) out of the softmax.

    Args:
        logits: ``z``, shape ``[B, K]``.
        targets: labels, shape ``[B]``.
        class_counts: ``n``, the client's training samples per class, shape ``[K]``.
        sample_weight, reduction: as :func:`fedlib.losses.cross_entropy`.
    """
    return fedlc_loss(logits, targets, class_counts, 1.0, margin="log_prior", missing="mask",
                      sample_weight=sample_weight, reduction=reduction)
