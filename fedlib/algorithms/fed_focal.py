"""Fed-Focal Loss (Sarkar et al. 2020, "Fed-Focal Loss for imbalanced data classification in
Federated Learning"): every client trains with the focal loss (Lin et al. 2017)
−(1 − p_y)^γ log p_y (:func:`fedlib.losses.focal_loss`).

Fed-Focal Loss also proposes a tunable client-sampling scheme on the server;
FEDIC lists the method among the imbalance-oriented *losses* and gives no
sampling setting, so only the loss is implemented and clients are sampled as
for every other method.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..losses import focal_loss
from ..params import Param
from .kinds import ClientLoss
from .registry import register_method

__all__ = ["FocalLoss"]


@dataclass(frozen=True)
class FocalLoss(ClientLoss):
    gamma: float = 2.0
    name = "focal"

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        return focal_loss(logits, targets, self.gamma, sample_weight=sample_weight)


register_method(
    "fed_focal", parts={"loss": FocalLoss},
    params=(Param("fed_focal_gamma", 2.0, float, "Fed-Focal Loss focusing parameter γ (γ = 0: cross-entropy)",
                  check=lambda v: v >= 0, allowed="≥ 0",
                  source="Lin et al. 2017's default; not in FEDIC or Fed-Focal Loss (FEDIC's code has an unused "
                  "gamma=0.1 of unknown meaning)", field="gamma"),),
    paper="Sarkar et al. 2020", doc="client loss: focal loss −(1 − p_y)^γ log p_y")
