"""Knowledge distillation losses on the server (FedDF, FedBE, FEDIC).

* :func:`distillation_kl` -- KL(teacher ‖ student) of the temperature-softened
  distributions, ``Σ_j q_j (log q_j − log p_j)`` with q = softmax(t/T), p = softmax(s/T),
  averaged over samples (PyTorch's ``kl_div(..., reduction="batchmean")``);
  optionally times T² (Hinton et al. 2015).  A teacher given as probabilities
  (FedBE's averaged predictive distribution) enters as ``log q``: at T = 1,
  softmax(log q) = q.
* :func:`calibrated_distillation_loss` -- FEDIC's Eq. 9,
  L = (1 − λ)·L_CE(student on D_aux, labels) + λ·L_KL(teacher ‖ student on D_ulb).
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._common import REDUCTIONS, check_choice, reduce
from .cross_entropy import cross_entropy

__all__ = ["distillation_kl", "calibrated_distillation_loss"]


def distillation_kl(student_logits: Tensor, teacher_logits: Tensor, temperature: float = 1.0,
                    t_squared: bool = False, sample_weight: Tensor | None = None,
                    reduction: str = "mean") -> Tensor:
    """KL(softmax(t/T) ‖ softmax(s/T)) per sample, reduced; the teacher gets no gradient."""
    check_choice("reduction", reduction, REDUCTIONS)
    if student_logits.shape != teacher_logits.shape or student_logits.ndim != 2:
        raise ValueError(f"student and teacher logits must both be [B, K], got {tuple(student_logits.shape)} "
                         f"and {tuple(teacher_logits.shape)}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature!r}")
    log_p = torch.log_softmax(student_logits / temperature, dim=-1)
    log_q = torch.log_softmax(teacher_logits.detach() / temperature, dim=-1)
    per_sample = (log_q.exp() * (log_q - log_p)).sum(-1)
    if t_squared:
        per_sample = per_sample * temperature**2
    return reduce(per_sample, sample_weight, reduction)


def calibrated_distillation_loss(student_aux_logits: Tensor, aux_targets: Tensor, student_ulb_logits: Tensor,
                                 teacher_ulb_logits: Tensor, lam: float, temperature: float = 1.0,
                                 t_squared: bool = False) -> Tensor:
    """FEDIC Eq. 9: (1 − λ)·CE(student(x_aux), y_aux) + λ·KL(teacher(x_ulb) ‖ student(x_ulb))."""
    if not 0.0 <= lam <= 1.0:
        raise ValueError(f"lam (λ) must be in [0, 1], got {lam!r}")
    ce = cross_entropy(student_aux_logits, aux_targets)
    kl = distillation_kl(student_ulb_logits, teacher_ulb_logits, temperature, t_squared)
    return (1.0 - lam) * ce + lam * kl  # Eq. 9
