"""FedLC's calibrated cross-entropy (Zhang et al., ICML 2022, §4, Eqs. 4–7).

Notation follows FedLC: ``z = f(x)`` are the logits, ``y`` the target,
``n_y`` the number of local training samples of class ``y``, ``τ`` the
calibration strength and ``Δ_(y,i)`` the pairwise label margin.  Every margin
used here is additive per class, so calibration is written as logits ``z + o``
with a per-class offset ``o`` and ``Δ_(y,i) = o_i − o_y``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from ._common import (REDUCTIONS, check_batch, check_choice, check_min_count, check_nonneg_number, check_per_class,
                      pick, reduce, target_mask)

__all__ = ["MARGINS", "MISSING", "DENOMINATORS", "calibration_offsets", "fedlc_loss", "validate_class_counts"]

MARGINS = ("quarter_power", "log_prior")
MISSING = ("clamp", "mask")
DENOMINATORS = ("full", "exclude_true")


def validate_class_counts(class_counts: Tensor, num_classes: int | None = None) -> None:
    """Value checks on ``n_y`` (run once, eagerly, outside vmap/grad).

    ``class_counts`` has shape ``[..., K]`` (e.g. ``[K]`` or stacked
    ``[M, K]`` for M clients); every entry must be finite and ``>= 0``.
    """
    if not isinstance(class_counts, Tensor):
        raise ValueError(f"class_counts must be a torch.Tensor, got {type(class_counts).__name__}")
    if class_counts.ndim < 1:
        raise ValueError("class_counts must have shape [..., K] with K >= 1, got a scalar")
    if num_classes is not None and class_counts.shape[-1] != num_classes:
        raise ValueError(
            f"class_counts must have K = {num_classes} entries in its last dim, "
            f"got {class_counts.shape[-1]}"
        )
    counts = class_counts.double()
    if not bool(torch.isfinite(counts).all()):
        raise ValueError("class_counts must be finite (no nan/inf)")
    if bool((counts < 0).any()):
        raise ValueError("class_counts must be >= 0 (found a negative count)")


def calibration_offsets(
    class_counts: Tensor,
    tau,
    *,
    margin: str = "quarter_power",
    missing: str = "clamp",
    min_count: float = 1.0,
) -> Tensor:
    """Per-class additive offset ``o_y``; calibrated logits are ``z + o``.

    Args:
        class_counts: ``n_y``, shape ``[..., K]`` (integer or float, ``>= 0``).
        tau: ``τ >= 0`` (Python number; a tensor is accepted unchecked).
        margin:
            ``"quarter_power"`` — FedLC Eq. 6–7: ``o_y = −τ·n_y^(−1/4)``, so
            ``Δ_(y,i) = o_i − o_y = τ·(n_y^(−1/4) − n_i^(−1/4))`` (Eq. 6).
            ``"log_prior"`` — FedLC Eq. 4–5 / logit adjustment (Menon et al.,
            2021): ``o_y = τ·log γ_y`` with ``γ_y = n_y / Σ_i n_i``, so that at
            ``τ = 1`` ``Δ_(y,i) = log(γ_i / γ_y)`` (Eq. 5).
        missing: treatment of missing classes (``n_y = 0``):
            ``"clamp"`` — every ``n_y`` is replaced by ``max(n_y, min_count)``
            (also inside ``Σ n``), giving a finite, strongest-possible shift.
            ``"mask"`` — ``o_y = −inf`` for ``n_y = 0``: the class is removed
            from the softmax entirely; present classes use the ``"clamp"``
            value (the ``log_prior`` normaliser ``Σ n`` is a class-independent
            constant that cancels in the softmax).
        min_count: clamp floor for ``n_y``, ``> 0``.

    Returns:
        ``o`` with the shape of ``class_counts``; dtype is that of
        ``class_counts`` if floating, else the default float dtype.
    """
    check_nonneg_number("tau", tau)
    check_choice("margin", margin, MARGINS)
    check_choice("missing", missing, MISSING)
    check_min_count(min_count)
    if class_counts.ndim < 1:
        raise ValueError("class_counts must have shape [..., K], got a scalar")

    dtype = class_counts.dtype if class_counts.is_floating_point() else torch.get_default_dtype()
    counts = class_counts.to(dtype)
    n = counts.clamp_min(min_count)  # n_y <- max(n_y, min_count)
    if margin == "quarter_power":
        offsets = -tau * n.pow(-0.25)  # Eq. 7: f_y(x) − τ·n_y^(−1/4)
    else:
        offsets = tau * (n.log() - n.sum(-1, keepdim=True).log())  # Eq. 4: τ·log γ_y
    if missing == "mask":
        offsets = torch.where(counts <= 0, torch.full_like(offsets, -float("inf")), offsets)
    return offsets


def fedlc_loss(
    logits: Tensor,
    targets: Tensor,
    class_counts: Tensor,
    tau=1.0,
    *,
    denominator: str = "full",
    margin: str = "quarter_power",
    missing: str = "clamp",
    min_count: float = 1.0,
    sample_weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """FedLC calibrated cross-entropy ``L_Cal`` (Eq. 5 / Eq. 7), in log-space.

    With ``o = calibration_offsets(n, τ, ...)`` and ``z = logits``:

    * ``denominator="full"`` (default; the standard logit-adjusted CE used by
      public re-implementations):
      ``ℓ = −log softmax(z + o)_y = −(z_y + o_y) + logsumexp_i (z_i + o_i)``.
      Always ``ℓ >= 0``.
    * ``denominator="exclude_true"`` — Eq. 7 *exactly as printed*, whose
      denominator sums over ``i ≠ y`` only:
      ``ℓ = −(z_y + o_y) + logsumexp_{i≠y} (z_i + o_i)``.
      This is **unbounded below** (``ℓ → −∞`` as ``z_y → ∞``), so minimising it
      rewards inflating the true logit without limit; it is offered only to
      measure the paper as printed.  The true class is excluded by adding
      ``−inf`` at its position (``torch.where``), never by indexing.

    Missing classes: with ``missing="mask"`` an absent class ``i ≠ y`` gets
    ``o_i = −inf``.  A sample's own class is never masked (a client's own
    sample proves its class is present); should a target fall in an absent
    class anyway (e.g. weight-0 padding), its clamped offset is used so ``ℓ``
    stays finite.  Degenerate case: with ``"exclude_true"``, if no class
    ``i ≠ y`` remains (only ``y`` present, or ``K = 1``) the denominator is an
    empty sum; ``ℓ`` is then defined as ``0`` with zero gradient — the value
    the ``"full"`` form takes when ``y`` is alone in the softmax.

    Args:
        logits: ``z``, shape ``[B, K]``.
        targets: ``y``, integer class indices, shape ``[B]``.
        class_counts: ``n_y``, shape ``[K]`` (values are checked by
            :func:`validate_class_counts`, not here).
        tau: ``τ >= 0``; ``τ = 0`` gives plain cross-entropy for
            ``missing="clamp"``.
        denominator: ``"full"`` or ``"exclude_true"``.
        margin, missing, min_count: see :func:`calibration_offsets`.
        sample_weight: optional ``w``, shape ``[B]``; see :func:`reduce`.
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
    """
    check_nonneg_number("tau", tau)
    check_choice("denominator", denominator, DENOMINATORS)
    check_choice("margin", margin, MARGINS)
    check_choice("missing", missing, MISSING)
    check_min_count(min_count)
    check_choice("reduction", reduction, REDUCTIONS)
    check_batch(logits, targets, sample_weight)
    num_classes = logits.shape[-1]
    check_per_class("class_counts", class_counts, num_classes)

    counts = class_counts.to(logits.dtype)
    offsets = calibration_offsets(counts, tau, margin=margin, missing="clamp", min_count=min_count)
    is_target = target_mask(targets, num_classes)  # [B, K]
    neg_inf = torch.full_like(logits, -float("inf"))
    calibrated = logits + offsets  # z + o
    if missing == "mask":  # o_i = −inf for absent i ≠ y
        calibrated = torch.where((counts <= 0) & ~is_target, neg_inf, calibrated)

    true_term = pick(calibrated, targets)  # z_y + o_y
    if denominator == "full":
        loss = calibrated.logsumexp(-1) - true_term  # −log softmax(z + o)_y, i over all K
    else:
        others = torch.where(is_target, neg_inf, calibrated)  # Eq. 7: Σ_{i≠y}
        empty = torch.isneginf(others).all(-1)  # no competitor: empty sum
        safe = torch.where(empty.unsqueeze(-1), torch.zeros_like(others), others)
        loss = torch.where(empty, torch.zeros_like(true_term), safe.logsumexp(-1) - true_term)
    return reduce(loss, sample_weight, reduction)
