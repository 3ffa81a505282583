"""FedRS (Li & Zhan, KDD 2021, "Restricted Softmax for Label Distribution Non-IID Data").

The logits of classes a client has no sample of are scaled by α ∈ [0, 1]
before the softmax ("restricted softmax"); α = 1 is plain cross-entropy.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..losses import fedrs_loss
from ..params import Param
from .kinds import ClientLoss
from .registry import register_method


@dataclass(frozen=True)
class RestrictedSoftmaxLoss(ClientLoss):
    alpha: float = 0.5
    name = "fedrs"

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        present = (class_counts > 0).to(logits.dtype)
        return fedrs_loss(logits, targets, present, alpha=self.alpha, sample_weight=sample_weight)


register_method(
    "fedrs", parts={"loss": RestrictedSoftmaxLoss},
    params=(Param("fedrs_alpha", 0.5, float, "FedRS scaling α of missing-class logits", check=lambda v: 0 <= v <= 1,
                  allowed="in [0, 1]", source="not in FedLC", field="alpha"),),
    paper="Li & Zhan, KDD 2021", doc="client loss: restricted softmax (α)")
