"""Multinomial logistic regression (Synthetic(α, β) in FedLC §5.3)."""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from ._common import check_positive_int
from .registry import register_model

__all__ = ["LogisticRegression"]


class LogisticRegression(nn.Module):
    """Multinomial logistic regression for Synthetic: ``h`` = flattened ``x``."""

    def __init__(self, in_features: int = 60, num_classes: int = 10):
        super().__init__()
        check_positive_int("in_features", in_features)
        check_positive_int("num_classes", num_classes)
        self.classifier = nn.Linear(in_features, num_classes)

    def features(self, x: Tensor) -> Tensor:
        return torch.flatten(x, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


@register_model("logreg", "logistic regression on the flattened input (Synthetic)", any_shape=True)
def _logreg(num_classes: int, input_shape) -> LogisticRegression:
    return LogisticRegression(in_features=math.prod(input_shape), num_classes=num_classes)
