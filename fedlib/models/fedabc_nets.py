"""The networks of FedABC's experiments (Wang et al., AAAI 2023, §Experiments, "Model").

* ``mlp`` (MNIST): "3 FC layers ... with 260, 200 hidden sizes, and 10 neurons":
  fc1 [784→260] → ReLU → fc2 [260→200] → ReLU = ``h`` (200-d) → classifier
  [200→K].  It flattens any input shape (Synthetic's 60 features too).
* ``convnet`` (CIFAR-10): "ConvNet (LeCun et al. 1998), 2 Conv layers [64, 64
  channels] and 3 FC layers [120, 64, 10]".  The layer sizes are exactly
  FedRep's ``CNNCifar`` (lgcollins/FedRep ``models/Nets.py``; notes §2):
  conv1 [3→64, 5×5] → ReLU → 2×2 max-pool → conv2 [64→64, 5×5] → ReLU →
  2×2 max-pool → flatten (1600 on 32×32) → fc1 [1600→120] → ReLU →
  fc2 [120→64] → ReLU = ``h`` (64-d) → classifier [64→K] (FedRep's fc3).
  No padding, normalisation or dropout.

The body is ``features`` (shared by FedPer/FedRep/FedRoD), the head is the
``classifier`` (fedlib's model contract, :mod:`fedlib.models.registry`).  The
layers are registered bottom-up, which is the order LG-FedAvg counts them in.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._common import check_positive_int, conv_relu_pool, two_conv5_pool_size
from .registry import register_model

__all__ = ["MLP", "ConvNet"]


class MLP(nn.Module):
    """784→260→200→K with ReLU (FedABC's MNIST model); ``in_features`` = the flattened input size."""

    def __init__(self, in_features: int = 784, num_classes: int = 10, hidden: tuple[int, int] = (260, 200)):
        super().__init__()
        check_positive_int("in_features", in_features)
        check_positive_int("num_classes", num_classes)
        self.fc1 = nn.Linear(in_features, hidden[0])
        self.fc2 = nn.Linear(hidden[0], hidden[1])
        self.classifier = nn.Linear(hidden[1], num_classes)

    def features(self, x: Tensor) -> Tensor:
        return F.relu(self.fc2(F.relu(self.fc1(torch.flatten(x, 1)))))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


class ConvNet(nn.Module):
    """FedABC's CIFAR-10 ConvNet = FedRep's CNNCifar: 2 conv (64, 64; 5×5) + FC 120, 64, K."""

    def __init__(self, num_classes: int = 10, in_channels: int = 3, image_size=32):
        super().__init__()
        check_positive_int("num_classes", num_classes)
        check_positive_int("in_channels", in_channels)
        flat_h, flat_w = two_conv5_pool_size(image_size, "ConvNet")
        self.conv1 = nn.Conv2d(in_channels, 64, kernel_size=5)
        self.conv2 = nn.Conv2d(64, 64, kernel_size=5)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.fc1 = nn.Linear(64 * flat_h * flat_w, 120)
        self.fc2 = nn.Linear(120, 64)
        self.classifier = nn.Linear(64, num_classes)

    def features(self, x: Tensor) -> Tensor:
        x = conv_relu_pool(self.conv1, self.pool, x)
        x = conv_relu_pool(self.conv2, self.pool, x)
        return F.relu(self.fc2(F.relu(self.fc1(torch.flatten(x, 1)))))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


@register_model("mlp", "FedABC's MNIST MLP: flatten → 260 → 200 → K (ReLU)", any_shape=True)
def _mlp(num_classes: int, input_shape) -> MLP:
    return MLP(in_features=math.prod(input_shape), num_classes=num_classes)


@register_model("convnet", "FedABC's CIFAR-10 ConvNet (= FedRep's CNNCifar): conv 64, 64 → FC 120 → 64 → K",
                memory_format="channels_last")
def _convnet(num_classes: int, input_shape) -> ConvNet:
    channels, height, width = input_shape
    return ConvNet(num_classes, in_channels=channels, image_size=(height, width))
