"""The CNNs of FedLC's Appendix A.1: Table 8 (MNIST/FMNIST) and Table 9 (CIFAR-10/100, SVHN)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._common import check_positive_int, conv_relu_pool, hw, two_conv5_pool_size
from .registry import register_model

__all__ = ["CNNMnist", "CNNCifar"]


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
        check_positive_int("num_classes", num_classes)
        check_positive_int("in_channels", in_channels)
        flat_h, flat_w = two_conv5_pool_size(image_size, "CNNMnist")
        self.conv1 = nn.Conv2d(in_channels, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.fc1 = nn.Linear(20 * flat_h * flat_w, 50)
        self.classifier = nn.Linear(50, num_classes)

    def features(self, x: Tensor) -> Tensor:
        x = conv_relu_pool(self.conv1, self.pool, x)
        x = conv_relu_pool(self.conv2, self.pool, x)
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
        check_positive_int("num_classes", num_classes)
        check_positive_int("in_channels", in_channels)
        h, w = hw(image_size)
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
            x = conv_relu_pool(conv, self.pool, x)
        return torch.flatten(x, 1)

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


@register_model("cnn_mnist", "FedLC Table 8 CNN (MNIST/FMNIST): 2 conv + fc 320→50 → K",
                memory_format="channels_last")
def _cnn_mnist(num_classes: int, input_shape) -> CNNMnist:
    channels, height, width = input_shape
    return CNNMnist(num_classes, in_channels=channels, image_size=(height, width))


@register_model("cnn_cifar", "FedLC Table 9 CNN (CIFAR-10/100, SVHN): 3 conv 128 → flatten 2048 → K",
                memory_format="channels_last")
def _cnn_cifar(num_classes: int, input_shape) -> CNNCifar:
    channels, height, width = input_shape
    return CNNCifar(num_classes, in_channels=channels, image_size=(height, width))
