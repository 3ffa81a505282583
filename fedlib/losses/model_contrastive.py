"""MOON's model-contrastive loss (Li, He, Song, CVPR 2021, Eq. 3)."""

from __future__ import annotations

import numbers

import torch
from torch import Tensor

from ._common import REDUCTIONS, check_choice, reduce

__all__ = ["model_contrastive_loss", "cosine_similarity"]

_EPS = 1e-8


def cosine_similarity(a: Tensor, b: Tensor) -> Tensor:
    """sim(a, b) = a·b / (max(‖a‖, ε)·max(‖b‖, ε)) along the last dim (ε = 1e-8, vmap-safe)."""
    na = a.norm(dim=-1).clamp_min(_EPS)
    nb = b.norm(dim=-1).clamp_min(_EPS)
    return (a * b).sum(-1) / (na * nb)


def model_contrastive_loss(z: Tensor, z_glob: Tensor, z_prev: Tensor, temperature=0.5,
                           sample_weight: Tensor | None = None, reduction: str = "mean") -> Tensor:
    """ℓ_con of MOON Eq. 3 for a batch of representations:

        ℓ_con = −log [ exp(sim(z, z_glob)/τ) / (exp(sim(z, z_glob)/τ) + exp(sim(z, z_prev)/τ)) ]
              = logsumexp(sim(z, z_glob)/τ, sim(z, z_prev)/τ) − sim(z, z_glob)/τ

    ``z`` [B, d]: the local model's representations (the projection head's output);
    ``z_glob``, ``z_prev`` [B, d]: the global model's and the client's previous local
    model's representations of the same inputs (the caller detaches them); τ > 0 the
    temperature.  MOON's client loss is ℓ_sup + μ·ℓ_con (Eq. 4); μ is applied by the caller.
    When z_prev = z_glob the loss is log 2 whatever z, and its gradient is zero.
    """
    check_choice("reduction", reduction, REDUCTIONS)
    if z.ndim != 2 or z.shape != z_glob.shape or z.shape != z_prev.shape:
        raise ValueError(f"z, z_glob and z_prev must have the same shape [B, d], got {tuple(z.shape)}, "
                         f"{tuple(z_glob.shape)}, {tuple(z_prev.shape)}")
    if sample_weight is not None and tuple(sample_weight.shape) != tuple(z.shape[:1]):
        raise ValueError(f"sample_weight must have shape [B] = {tuple(z.shape[:1])}, got {tuple(sample_weight.shape)}")
    if not isinstance(temperature, Tensor):
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or not temperature > 0:
            raise ValueError(f"temperature must be a number > 0, got {temperature!r}")
    positive = cosine_similarity(z, z_glob) / temperature
    negative = cosine_similarity(z, z_prev) / temperature
    loss = torch.logaddexp(positive, negative) - positive  # Eq. 3
    return reduce(loss, sample_weight, reduction)
