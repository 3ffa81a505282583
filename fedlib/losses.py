"""Client-side losses: FedLC's calibrated cross-entropy, plain CE and FedRS.

Notation follows FedLC (Zhang et al., ICML 2022, §4): ``z = f(x)`` are the
logits, ``y`` the target, ``n_y`` the number of local training samples of
class ``y``, ``τ`` the calibration strength and ``Δ_(y,i)`` the pairwise label
margin.  Every margin used here is additive per class, so calibration is
written as logits ``z + o`` with a per-class offset ``o`` and
``Δ_(y,i) = o_i − o_y``.

All losses are pure functions of tensors: no in-place ops on inputs, no
``.item()``, no Python branching on tensor values and no shape-changing
boolean indexing, so they run unchanged under ``torch.func.vmap`` (over a
client dimension) and ``torch.func.grad``.  Argument checks look only at
static things (option strings, Python numbers, shapes).  Value checks on
``class_counts`` live in :func:`validate_class_counts`, which the caller runs
once, outside any transform.
"""

from __future__ import annotations

import numbers

import torch
from torch import Tensor

__all__ = [
    "MARGINS",
    "MISSING",
    "DENOMINATORS",
    "REDUCTIONS",
    "calibration_offsets",
    "fedlc_loss",
    "cross_entropy",
    "fedrs_loss",
    "validate_class_counts",
]

MARGINS = ("quarter_power", "log_prior")
MISSING = ("clamp", "mask")
DENOMINATORS = ("full", "exclude_true")
REDUCTIONS = ("mean", "sum", "none")


# --------------------------------------------------------------------------
# static argument checks (safe inside vmap: they never read tensor values)
# --------------------------------------------------------------------------
def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def _check_nonneg_number(name: str, value) -> None:
    """Check a Python number ``value >= 0``; tensors are accepted unchecked."""
    if isinstance(value, Tensor):
        return  # value may be vmapped/traced: cannot be inspected here
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number >= 0, got {value!r}")
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def _check_min_count(min_count) -> None:
    if isinstance(min_count, bool) or not isinstance(min_count, numbers.Real):
        raise ValueError(f"min_count must be a real number > 0, got {min_count!r}")
    if not (0 < min_count < float("inf")):
        raise ValueError(f"min_count must be a finite number > 0, got {min_count!r}")


def _check_batch(logits: Tensor, targets: Tensor, sample_weight: Tensor | None) -> None:
    if logits.ndim != 2:
        raise ValueError(f"logits must have shape [B, K], got {tuple(logits.shape)}")
    if tuple(targets.shape) != tuple(logits.shape[:1]):
        raise ValueError(
            f"targets must have shape [B] = {tuple(logits.shape[:1])}, got {tuple(targets.shape)}"
        )
    if sample_weight is not None and tuple(sample_weight.shape) != tuple(logits.shape[:1]):
        raise ValueError(
            f"sample_weight must have shape [B] = {tuple(logits.shape[:1])}, "
            f"got {tuple(sample_weight.shape)}"
        )


def _check_per_class(name: str, value: Tensor, num_classes: int) -> None:
    if value.ndim != 1 or value.shape[0] != num_classes:
        raise ValueError(
            f"{name} must have shape [K] = [{num_classes}] (K = logits.shape[-1]), "
            f"got {tuple(value.shape)}"
        )


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


# --------------------------------------------------------------------------
# calibration
# --------------------------------------------------------------------------
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
    _check_nonneg_number("tau", tau)
    _check_choice("margin", margin, MARGINS)
    _check_choice("missing", missing, MISSING)
    _check_min_count(min_count)
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


# --------------------------------------------------------------------------
# shared helpers
# --------------------------------------------------------------------------
def _target_mask(targets: Tensor, num_classes: int) -> Tensor:
    """Boolean one-hot ``[B, K]`` built by comparison (``F.one_hot`` reads values)."""
    classes = torch.arange(num_classes, device=targets.device)
    return targets.unsqueeze(-1) == classes


def _pick(values: Tensor, targets: Tensor) -> Tensor:
    """``values[b, targets[b]]`` via gather (vmap-safe)."""
    return values.gather(-1, targets.unsqueeze(-1).long()).squeeze(-1)


def _reduce(loss: Tensor, sample_weight: Tensor | None, reduction: str) -> Tensor:
    """Apply optional ``w_i`` and the reduction to per-sample ``ℓ_i``.

    ``"mean"`` = ``Σ w_i ℓ_i / max(Σ w_i, tiny)`` (weight-0 samples are
    padding and contribute nothing, an all-zero batch gives 0);
    ``"sum"`` = ``Σ w_i ℓ_i``; ``"none"`` = ``w_i ℓ_i`` per sample.
    """
    if sample_weight is None:
        if reduction == "mean":
            return loss.mean()
        return loss.sum() if reduction == "sum" else loss
    w = sample_weight.to(loss.dtype)
    weighted = w * loss
    if reduction == "mean":
        return weighted.sum() / w.sum().clamp_min(torch.finfo(loss.dtype).tiny)
    return weighted.sum() if reduction == "sum" else weighted


# --------------------------------------------------------------------------
# losses
# --------------------------------------------------------------------------
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
        sample_weight: optional ``w``, shape ``[B]``; see :func:`_reduce`.
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
    """
    _check_nonneg_number("tau", tau)
    _check_choice("denominator", denominator, DENOMINATORS)
    _check_choice("margin", margin, MARGINS)
    _check_choice("missing", missing, MISSING)
    _check_min_count(min_count)
    _check_choice("reduction", reduction, REDUCTIONS)
    _check_batch(logits, targets, sample_weight)
    num_classes = logits.shape[-1]
    _check_per_class("class_counts", class_counts, num_classes)

    counts = class_counts.to(logits.dtype)
    offsets = calibration_offsets(counts, tau, margin=margin, missing="clamp", min_count=min_count)
    is_target = _target_mask(targets, num_classes)  # [B, K]
    neg_inf = torch.full_like(logits, -float("inf"))
    calibrated = logits + offsets  # z + o
    if missing == "mask":  # o_i = −inf for absent i ≠ y
        calibrated = torch.where((counts <= 0) & ~is_target, neg_inf, calibrated)

    true_term = _pick(calibrated, targets)  # z_y + o_y
    if denominator == "full":
        loss = calibrated.logsumexp(-1) - true_term  # −log softmax(z + o)_y, i over all K
    else:
        others = torch.where(is_target, neg_inf, calibrated)  # Eq. 7: Σ_{i≠y}
        empty = torch.isneginf(others).all(-1)  # no competitor: empty sum
        safe = torch.where(empty.unsqueeze(-1), torch.zeros_like(others), others)
        loss = torch.where(empty, torch.zeros_like(true_term), safe.logsumexp(-1) - true_term)
    return _reduce(loss, sample_weight, reduction)


def cross_entropy(
    logits: Tensor,
    targets: Tensor,
    sample_weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """Softmax cross-entropy ``ℓ = −z_y + logsumexp_i z_i`` with optional ``w_i``.

    Same weighting convention as :func:`fedlc_loss`.
    """
    _check_choice("reduction", reduction, REDUCTIONS)
    _check_batch(logits, targets, sample_weight)
    loss = logits.logsumexp(-1) - _pick(logits, targets)
    return _reduce(loss, sample_weight, reduction)


def fedrs_loss(
    logits: Tensor,
    targets: Tensor,
    class_present: Tensor,
    alpha=0.5,
    sample_weight: Tensor | None = None,
    reduction: str = "mean",
) -> Tensor:
    """FedRS restricted-softmax CE (Li & Zhan, KDD 2021).

    Logits of classes absent from the client (``class_present[c]`` is
    ``False``/0) are scaled by ``α ∈ [0, 1]`` before the softmax:
    ``z̃_c = s_c·z_c`` with ``s_c = 1`` if present else ``α``, then
    ``ℓ = −z̃_y + logsumexp_c z̃_c``.  ``α = 1`` is plain cross-entropy.
    FedRS scales the classifier weights ``w_c`` (``z_c = w_c^T h``); scaling
    the logit is identical for a bias-free classifier and also scales the
    bias otherwise.

    Args:
        class_present: shape ``[K]``, bool or float (nonzero = present).
        alpha: ``α`` in ``[0, 1]`` (Python number; a tensor is unchecked).
    """
    _check_choice("reduction", reduction, REDUCTIONS)
    _check_batch(logits, targets, sample_weight)
    _check_per_class("class_present", class_present, logits.shape[-1])
    if not isinstance(alpha, Tensor):
        if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not 0 <= alpha <= 1:
            raise ValueError(f"alpha must be a number in [0, 1], got {alpha!r}")

    ones = torch.ones_like(logits[0])
    scale = torch.where(class_present.bool(), ones, alpha * ones)  # s_c
    restricted = logits * scale
    loss = restricted.logsumexp(-1) - _pick(restricted, targets)
    return _reduce(loss, sample_weight, reduction)
