"""What every loss shares: static argument checks, the one-hot mask, ``gather``
of the target entry and the weighted reduction (padding samples have weight 0).

Everything here is vmap-safe: checks look only at static things (option
strings, Python numbers, shapes), never at tensor values.
"""

from __future__ import annotations

import numbers

import torch
from torch import Tensor

REDUCTIONS = ("mean", "sum", "none")


def check_choice(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def check_nonneg_number(name: str, value) -> None:
    """Check a Python number ``value >= 0``; tensors are accepted unchecked."""
    if isinstance(value, Tensor):
        return  # value may be vmapped/traced: cannot be inspected here
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number >= 0, got {value!r}")
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")


def check_min_count(min_count) -> None:
    if isinstance(min_count, bool) or not isinstance(min_count, numbers.Real):
        raise ValueError(f"min_count must be a real number > 0, got {min_count!r}")
    if not (0 < min_count < float("inf")):
        raise ValueError(f"min_count must be a finite number > 0, got {min_count!r}")


def check_batch(logits: Tensor, targets: Tensor, sample_weight: Tensor | None) -> None:
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


def check_per_class(name: str, value: Tensor, num_classes: int) -> None:
    if value.ndim != 1 or value.shape[0] != num_classes:
        raise ValueError(
            f"{name} must have shape [K] = [{num_classes}] (K = logits.shape[-1]), "
            f"got {tuple(value.shape)}"
        )


def target_mask(targets: Tensor, num_classes: int) -> Tensor:
    """Boolean one-hot ``[B, K]`` built by comparison (``F.one_hot`` reads values)."""
    classes = torch.arange(num_classes, device=targets.device)
    return targets.unsqueeze(-1) == classes


def pick(values: Tensor, targets: Tensor) -> Tensor:
    """``values[b, targets[b]]`` via gather (vmap-safe)."""
    return values.gather(-1, targets.unsqueeze(-1).long()).squeeze(-1)


def reduce(loss: Tensor, sample_weight: Tensor | None, reduction: str) -> Tensor:
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
