"""FedABC's personalized binary ("one-vs-all") loss (Wang et al., AAAI 2023, Eqs. 2–6).

FedABC trains one binary classifier per class on a shared body: the model's C
logits ``z`` each pass through a sigmoid, ``p_c = σ(z_c)``, and class c is a
binary problem "c vs. the rest".  The printed equations were lost in
extraction; this is their reconstruction from the prose
(``shared/papers/notes/fedabc.md`` §1), with every gap an explicit argument:

* **P and N** — for client i, ``P_i`` holds the classes with at least one
  local training sample (``class_counts > 0``, counted over the client's whole
  local set, not the mini-batch) and ``N_i`` the others.
* **Eq. 2 / 3** — plain binary cross-entropy per class, split by class type:
  for c ∈ P both the positive term ``−log p_c`` (samples of class c) and the
  negative term ``−log(1 − p_c)`` (the other samples); for c ∈ N the negative
  term only ("we neglect the positive part loss item ... due to the lack of
  positive samples").  Classes in N are still trained, as negatives.
* **Eq. 4, under-sampling** — a positive is kept while ``p_c < τ_pos`` (easy
  positives, p near 1, are dropped); a negative is kept while ``p_c > τ_neg``
  (easy negatives, p near 0, are dropped), with ``τ_neg = τ_neg^P`` for
  c ∈ P and ``τ_neg^N`` for c ∈ N.  The selection is a mask recomputed at
  every forward pass ("dynamic"); being boolean it carries no gradient.
* **Eq. 5, hard-sample mining** — focal weights (Lin et al. 2017) without α:
  a kept positive costs ``(1 − p)^γ·(−log p)``, a kept negative
  ``p^γ·(−log(1 − p))``.
* **Eq. 6** — the client's loss sums the two class groups separately (they
  are not merged); per sample ``ℓ_i = Σ_{c∈P} ℓ^P_ic + Σ_{c∈N} ℓ^N_ic``.
  **Normalisation** (unrecoverable; a documented choice): ``"batch"`` divides
  Σ_i w_i ℓ_i by the batch's weight sum Σ_i w_i, so discarding samples lowers
  the loss instead of re-inflating it; ``"kept"`` divides by the weighted
  number of kept (sample, class) terms instead.

Everything is computed in log-space (``logsigmoid``, ``softplus``) and the
thresholds are compared in logit space (``p < τ ⇔ z < log(τ/(1−τ))``), so
the loss and its gradient stay finite for logits of ±1e4, and the settings
``τ_pos = 1, τ_neg^P = τ_neg^N = 0, γ = 0`` keep every term even where a
float32 sigmoid saturates to exactly 0 or 1: the loss is then plain
one-vs-all BCE summed over classes (the paper's ablation FedABC_wi).
Prediction is ``argmax_c p_c = argmax_c z_c``.
"""

from __future__ import annotations

import math
import numbers

import torch
import torch.nn.functional as F
from torch import Tensor

from ._common import REDUCTIONS, check_batch, check_choice, check_per_class, reduce, target_mask

__all__ = ["NORMALIZATIONS", "fedabc_loss"]

NORMALIZATIONS = ("batch", "kept")


def _check_probability(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")


def _logit(tau: float) -> float:
    """log(τ / (1 − τ)), with logit(0) = −inf and logit(1) = +inf."""
    if tau <= 0:
        return -math.inf
    if tau >= 1:
        return math.inf
    return math.log(tau) - math.log1p(-tau)


def fedabc_loss(
    logits: Tensor,
    targets: Tensor,
    class_counts: Tensor,
    tau_pos: float = 0.9,
    tau_neg_present: float = 0.1,
    tau_neg_absent: float = 0.1,
    gamma: float = 2.0,
    *,
    normalization: str = "batch",
    sample_weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """FedABC's binary loss (Eqs. 3–6 as reconstructed in this module's docstring).

    Args:
        logits: ``z``, shape ``[B, C]``; ``p = σ(z)``.
        targets: integer labels, shape ``[B]``.
        class_counts: the client's training samples per class, shape ``[C]``;
            ``> 0`` puts a class in P, ``0`` in N.
        tau_pos: τ_pos ∈ [0, 1]; positives are kept while ``p < τ_pos``
            (1 keeps all).
        tau_neg_present: τ_neg^P ∈ [0, 1]; negatives of P classes are kept while
            ``p > τ_neg^P`` (0 keeps all).
        tau_neg_absent: τ_neg^N ∈ [0, 1], the same for N classes.
        gamma: γ ≥ 0, the focal exponent of hard-sample mining (0: none).
        normalization: ``"batch"`` (Σ w ℓ / Σ w) or ``"kept"`` (Σ w ℓ / Σ w·#kept
            terms; only with ``reduction="mean"``).
        sample_weight: optional ``w``, shape ``[B]`` (0 for padding).
        reduction: ``"mean"``, ``"sum"`` or ``"none"`` (per-sample ``w_i ℓ_i``).
    """
    for name, value in (("tau_pos", tau_pos), ("tau_neg_present", tau_neg_present),
                        ("tau_neg_absent", tau_neg_absent)):
        _check_probability(name, value)
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not 0 <= gamma < math.inf:
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma!r}")
    check_choice("normalization", normalization, NORMALIZATIONS)
    check_choice("reduction", reduction, REDUCTIONS)
    if normalization == "kept" and reduction != "mean":
        raise ValueError(f"normalization='kept' needs reduction='mean', got reduction={reduction!r}")
    check_batch(logits, targets, sample_weight)
    num_classes = logits.shape[-1]
    check_per_class("class_counts", class_counts, num_classes)

    z = logits
    positive = target_mask(targets, num_classes)  # y_ic = 1 [B, C]
    present = class_counts > 0  # c ∈ P_i [C]
    # Eq. 4: under-sampling, compared in logit space (p < τ ⇔ z < logit τ)
    keep_pos = positive & present & (z < _logit(tau_pos))  # Eq. 3: no positive term for c ∈ N
    neg_threshold = torch.where(present, torch.full_like(class_counts, _logit(tau_neg_present), dtype=z.dtype),
                                torch.full_like(class_counts, _logit(tau_neg_absent), dtype=z.dtype))
    keep_neg = ~positive & (z > neg_threshold)
    # Eq. 5: (1 − p)^γ·(−log p) for positives, p^γ·(−log(1 − p)) for negatives
    log_p, log_not_p = F.logsigmoid(z), F.logsigmoid(-z)
    pos_term = torch.exp(gamma * log_not_p) * -log_p
    neg_term = torch.exp(gamma * log_p) * -log_not_p
    zero = torch.zeros_like(z)
    terms = torch.where(keep_pos, pos_term, zero) + torch.where(keep_neg, neg_term, zero)
    per_sample = terms.sum(-1)  # Eq. 6: Σ_{c∈P} ℓ^P + Σ_{c∈N} ℓ^N
    if normalization == "batch":
        return reduce(per_sample, sample_weight, reduction)
    kept = (keep_pos | keep_neg).to(z.dtype).sum(-1)
    w = torch.ones_like(per_sample) if sample_weight is None else sample_weight.to(z.dtype)
    return (w * per_sample).sum() / (w * kept).sum().clamp_min(torch.finfo(z.dtype).tiny)
