"""FedLC (Zhang et al., ICML 2022, "Federated Learning with Label Distribution
Skew via Logits Calibration"): the client loss is the calibrated cross-entropy
L_Cal of Eq. 7, with the pairwise label margin Δ_(y,i) = τ (n_y^(−1/4) − n_i^(−1/4))
of Eq. 6 computed from the client's own class counts n_y (Algorithm 1).

Everything else is FedAvg; ``fedlc+fedprox`` and ``fedlc+scaffold`` (Table 7)
combine this loss with another method's correction.  The variants (denominator
as printed vs. the standard form, Eq. 5's log-prior margin, the treatment of
classes with n_y = 0) are explicit parameters; see :func:`fedlib.losses.fedlc_loss`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..losses import fedlc_loss
from ..losses import DENOMINATORS, MARGINS, MISSING
from ..params import Param
from .kinds import ClientLoss
from .registry import register_method


@dataclass(frozen=True)
class CalibratedLoss(ClientLoss):
    tau: float = 1.0
    denominator: str = "full"
    margin: str = "quarter_power"
    missing: str = "clamp"
    min_count: float = 1.0
    name = "fedlc"

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        return fedlc_loss(logits, targets, class_counts, self.tau, denominator=self.denominator,
                          margin=self.margin, missing=self.missing, min_count=self.min_count,
                          sample_weight=sample_weight)


register_method(
    "fedlc",
    parts={"loss": CalibratedLoss},
    params=(Param("tau", 1.0, float, "FedLC calibration strength τ (Eqs. 6–7)", check=lambda v: v >= 0,
                  allowed="≥ 0", source="not given in FedLC"),
            Param("fedlc_denominator", "full", str, "'full': standard logit-adjusted CE; 'exclude_true': Eq. 7 as "
                  "printed (unbounded below)", choices=DENOMINATORS, field="denominator"),
            Param("fedlc_margin", "quarter_power", str, "Eq. 6: τ·n_y^(−1/4); 'log_prior': Eq. 5, τ·log γ_y",
                  choices=MARGINS, field="margin"),
            Param("fedlc_missing", "clamp", str, "classes with n_y = 0: 'clamp' (n_y := fedlc_min_count) or 'mask' "
                  "(left out of the softmax)", choices=MISSING, field="missing"),
            Param("fedlc_min_count", 1.0, float, "clamp floor for n_y", check=lambda v: v > 0, allowed="> 0",
            field="min_count")),
    paper="Zhang et al., ICML 2022", doc="client loss: calibrated cross-entropy (τ)")
