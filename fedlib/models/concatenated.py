"""Concatenated encoders: K encoders side by side and one linear layer on their K·d features.

This is FedConcat's final model, w = {E, C} (Diao, Li, He, AAAI 2024, Algorithm 1 line 16).
The encoders E_1 … E_K ("all layers but the last layer" of K copies of a base model) all
read the same input, their features are concatenated in order, and one Linear(K·d → classes)
classifier C reads the result:

    features(x) = [E_1(x), …, E_K(x)]   (K·d)      forward(x) = C(features(x))

Two uses:

* :class:`fedlib.algorithms.fedconcat.ConcatenatedModel` assembles FedConcat's trained
  cluster encoders with its stage-3 classifier;
* the registered models ``concat5_simple_cnn`` and ``concat5_vgg9`` are the same
  architecture with K = 5 (FedConcat's K in Tables 1-2) trained from scratch like any other
  model, so that any method can run on it: FedConcat Fig. 4 compares the baselines "on the
  final global model of FedConcat".  Each of the 5 encoders is a freshly initialised base
  model (PyTorch's default initialisation, drawn one after another from the run's seeded
  generator), so the encoders start different, as FedConcat's cluster models do
  (``fedconcat_cluster_init = "independent"``).

The models follow fedlib's contract: ``features``, a final ``nn.Linear`` named
``classifier``, no buffers.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor, nn

from ._common import check_positive_int
from .registry import build_model, register_model

__all__ = ["ConcatenatedEncoders", "encoder_of", "CONCAT_K"]

#: K of the registered ``concat5_<base>`` models (FedConcat's K in Tables 1-2).
CONCAT_K = 5


def encoder_of(model: nn.Module) -> tuple[nn.Module, int]:
    """A fedlib model without its classifier ("all layers but the last") and its feature width d.
    The model is changed in place: pass a copy to keep the original."""
    d = model.classifier.in_features
    del model.classifier
    return model, d


class ConcatenatedEncoders(nn.Module):
    """``encoders`` (fedlib models without their classifier, each with ``features``) side by side,
    then ``classifier`` = Linear(Σ d_i → num_classes)."""

    def __init__(self, encoders: Sequence[nn.Module], feature_dims: Sequence[int], num_classes: int):
        super().__init__()
        check_positive_int("num_classes", num_classes)
        if not encoders or len(encoders) != len(feature_dims):
            raise ValueError(f"encoders and feature_dims must be non-empty and of equal length, got "
                             f"{len(encoders)} and {len(feature_dims)}")
        self.encoders = nn.ModuleList(encoders)
        self.classifier = nn.Linear(int(sum(feature_dims)), num_classes)

    def features(self, x: Tensor) -> Tensor:
        return torch.cat([e.features(x) for e in self.encoders], dim=1)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


def _concatenated(base: str, k: int, num_classes: int, input_shape) -> ConcatenatedEncoders:
    parts = [encoder_of(build_model(base, num_classes, input_shape)) for _ in range(k)]
    return ConcatenatedEncoders([e for e, _ in parts], [d for _, d in parts], num_classes)


for _base in ("simple_cnn", "vgg9"):
    register_model(f"concat{CONCAT_K}_{_base}",
                   f"FedConcat's final architecture on {_base}: {CONCAT_K} freshly initialised {_base} encoders "
                   "concatenated + one linear layer (FedConcat Fig. 4)", memory_format="channels_last")(
        lambda num_classes, input_shape, _b=_base: _concatenated(_b, CONCAT_K, num_classes, input_shape))
