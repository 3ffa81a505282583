"""FedRS (Li & Zhan, KDD 2021, "Restricted Softmax for Label Distribution Non-IID Data").

The logits of classes a client has no sample of are scaled by α ∈ [0, 1]
before the softmax ("restricted softmax"); α = 1 is plain cross-entropy.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..losses import fedrs_loss


@dataclass(frozen=True)
class RestrictedSoftmaxLoss:
    alpha: float = 0.5
    name = "fedrs"

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        present = (class_counts > 0).to(logits.dtype)
        return fedrs_loss(logits, targets, present, alpha=self.alpha, sample_weight=sample_weight)
