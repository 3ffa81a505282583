"""Models used in the FedLC experiments (FedLC Appendix A.1, Tables 8–9).

Every model exposes ``features(x) -> h`` — the input of the last layer, the
paper's ``h`` in ``f(x) = {w_y^T h}_{y∈K}`` (§3) — and a final ``nn.Linear``
named ``classifier`` (the ``w_y``), with ``forward(x) = classifier(features(x))``.

No model has buffers (no BatchNorm running statistics), so
``torch.func.functional_call(model, params, x)`` over the parameters alone is
complete and the models can be vmapped over a client dimension.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
import torch.nn.functional as F
import torchvision
from torch import Tensor, nn

__all__ = [
    "CNNMnist",
    "CNNCifar",
    "LogisticRegression",
    "ResNet18Cifar",
    "resnet18_cifar",
    "MODEL_NAMES",
    "build_model",
    "default_model",
]

MODEL_NAMES = ("cnn_mnist", "cnn_cifar", "logreg", "resnet18")
_DEFAULT_MODELS = {
    "synthetic": "logreg",
    "mnist": "cnn_mnist",
    "fmnist": "cnn_mnist",
    "cifar10": "cnn_cifar",
    "cifar100": "cnn_cifar",
    "svhn": "cnn_cifar",
}
RESNET_GROUPS = 2  # GroupNorm groups in resnet18_cifar


def _check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def _hw(image_size) -> tuple[int, int]:
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    h, w = (int(v) for v in image_size)
    return h, w


class CNNMnist(nn.Module):
    """CNN for MNIST/FMNIST, FedLC Table 8.

    conv1 [1→10, 5×5, stride 1, pad 0] → ReLU → max-pool →
    conv2 [10→20, 5×5, stride 1, pad 0] → ReLU → max-pool → flatten →
    fc1 [320→50] → ReLU = ``h`` (50-d) → classifier [50→K] (Table 8's fc2).

    Deviation: Table 8 lists the pooling as "stride=2, padding=2".  A 2×2
    max-pool cannot take padding 2 (PyTorch requires padding ≤ kernel/2), and
    only kernel 2 / stride 2 / padding 0 yields fc1's 320 inputs on 28×28
    (28→24→12→8→4; 20·4·4 = 320), so that pooling is used.
    ``image_size`` (default 28) only sets fc1's input width for other sizes.
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 1, image_size=28):
        super().__init__()
        _check_positive_int("num_classes", num_classes)
        _check_positive_int("in_channels", in_channels)
        h, w = _hw(image_size)
        flat_h, flat_w = ((h - 4) // 2 - 4) // 2, ((w - 4) // 2 - 4) // 2
        if flat_h < 1 or flat_w < 1:
            raise ValueError(f"image_size must be >= 16 for CNNMnist, got {(h, w)}")
        self.conv1 = nn.Conv2d(in_channels, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.fc1 = nn.Linear(20 * flat_h * flat_w, 50)
        self.classifier = nn.Linear(50, num_classes)

    def features(self, x: Tensor) -> Tensor:
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return F.relu(self.fc1(torch.flatten(x, 1)))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


class CNNCifar(nn.Module):
    """CNN for CIFAR-10/100 and SVHN, FedLC Table 9.

    3 × (conv 3×3 [3→128, 128→128, 128→128], stride 1 → ReLU → 2×2 max-pool)
    → flatten = ``h`` (2048-d on 32×32) → classifier [2048→K] (Table 9's fc1).

    Deviation: Table 9 says conv padding=0, which flattens to 128·2·2 = 512 on
    32×32, contradicting its own fc1 shape [2048, 10].  With conv padding=1
    the flatten is 128·4·4 = 2048, matching the listed parameter shapes, so
    padding=1 is used.  Pooling is kernel 2 / stride 2 / padding 0 (see
    :class:`CNNMnist` for why the listed padding=2 is not usable).
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 3, image_size=32):
        super().__init__()
        _check_positive_int("num_classes", num_classes)
        _check_positive_int("in_channels", in_channels)
        h, w = _hw(image_size)
        flat_h, flat_w = h // 8, w // 8
        if flat_h < 1 or flat_w < 1:
            raise ValueError(f"image_size must be >= 8 for CNNCifar, got {(h, w)}")
        self.conv1 = nn.Conv2d(in_channels, 128, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(128, 128, kernel_size=3, padding=1)
        self.conv3 = nn.Conv2d(128, 128, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.classifier = nn.Linear(128 * flat_h * flat_w, num_classes)

    def features(self, x: Tensor) -> Tensor:
        for conv in (self.conv1, self.conv2, self.conv3):
            x = self.pool(F.relu(conv(x)))
        return torch.flatten(x, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


class LogisticRegression(nn.Module):
    """Multinomial logistic regression for Synthetic: ``h`` = flattened ``x``."""

    def __init__(self, in_features: int = 60, num_classes: int = 10):
        super().__init__()
        _check_positive_int("in_features", in_features)
        _check_positive_int("num_classes", num_classes)
        self.classifier = nn.Linear(in_features, num_classes)

    def features(self, x: Tensor) -> Tensor:
        return torch.flatten(x, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


class ResNet18Cifar(nn.Module):
    """torchvision ResNet-18 adapted to 32×32 inputs, GroupNorm instead of BN.

    Changes to ``torchvision.models.resnet18(weights=None)``: conv1 is 3×3,
    stride 1, padding 1 (no bias); the stem max-pool is ``nn.Identity``; every
    BatchNorm is ``nn.GroupNorm(RESNET_GROUPS=2, C)`` (as in Hsieh et al.,
    2020 and Reddi et al., 2021), because running BN statistics are ill-defined
    across federated clients and are buffers that break a functional/vmapped
    engine.  torchvision's ``fc`` becomes ``classifier``; ``h`` is the 512-d
    globally pooled feature.
    """

    def __init__(self, num_classes: int = 10, in_channels: int = 3):
        super().__init__()
        _check_positive_int("num_classes", num_classes)
        _check_positive_int("in_channels", in_channels)
        body = torchvision.models.resnet18(
            weights=None,
            num_classes=num_classes,
            norm_layer=lambda channels: nn.GroupNorm(RESNET_GROUPS, channels),
        )
        body.conv1 = nn.Conv2d(in_channels, 64, kernel_size=3, stride=1, padding=1, bias=False)
        nn.init.kaiming_normal_(body.conv1.weight, mode="fan_out", nonlinearity="relu")
        body.maxpool = nn.Identity()
        self.classifier = body.fc
        body.fc = nn.Identity()
        self.body = body

    def features(self, x: Tensor) -> Tensor:
        return self.body(x)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


def resnet18_cifar(num_classes: int = 10, in_channels: int = 3) -> ResNet18Cifar:
    """ResNet-18 for 32×32 inputs with GroupNorm; see :class:`ResNet18Cifar`."""
    return ResNet18Cifar(num_classes=num_classes, in_channels=in_channels)


def build_model(name: str, num_classes: int, input_shape: Sequence[int]) -> nn.Module:
    """Build a model by name.

    Args:
        name: one of ``MODEL_NAMES`` = cnn_mnist, cnn_cifar, logreg, resnet18.
        num_classes: ``K >= 1``.
        input_shape: shape of one example without batch dim: ``(C, H, W)``
            for the image models, any shape for ``logreg`` (flattened).
    """
    if name not in MODEL_NAMES:
        raise ValueError(f"name must be one of {MODEL_NAMES}, got {name!r}")
    _check_positive_int("num_classes", num_classes)
    shape = tuple(int(d) for d in input_shape)
    if not shape or any(d < 1 for d in shape):
        raise ValueError(f"input_shape must be non-empty with positive dims, got {tuple(input_shape)}")
    if name == "logreg":
        return LogisticRegression(in_features=math.prod(shape), num_classes=num_classes)
    if len(shape) != 3:
        raise ValueError(f"input_shape must be (C, H, W) for {name!r}, got {shape}")
    channels, height, width = shape
    if name == "cnn_mnist":
        return CNNMnist(num_classes, in_channels=channels, image_size=(height, width))
    if name == "cnn_cifar":
        return CNNCifar(num_classes, in_channels=channels, image_size=(height, width))
    return resnet18_cifar(num_classes, in_channels=channels)


def default_model(dataset_name: str) -> str:
    """Model used by FedLC for a dataset (synthetic→logreg, (f)mnist→cnn_mnist,
    cifar10/cifar100/svhn→cnn_cifar)."""
    if dataset_name not in _DEFAULT_MODELS:
        raise ValueError(
            f"dataset_name must be one of {tuple(_DEFAULT_MODELS)}, got {dataset_name!r}"
        )
    return _DEFAULT_MODELS[dataset_name]
