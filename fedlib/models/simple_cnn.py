"""The simple CNN of FedConcat's experiments (Diao, Li, He, AAAI 2024; NIID-Bench's LeNet-style CNN).

FedConcat splits every model into an encoder ("all layers but the last layer",
slides §Stage 3) and a linear classifier; here the encoder is ``features`` and
the classifier is ``classifier`` (fedlib's model contract).  Layout, from the
public code (``notes/fedconcat.md`` §1a, model.py:197-233 and 356-377):

    conv 5×5 [C→6] → ReLU → max-pool 2 → conv 5×5 [6→16] → ReLU → max-pool 2 →
    flatten (400 on 3×32×32, 256 on 1×28×28) → fc1 [→120] → ReLU →
    fc2 [120→84] → ReLU = ``h`` (84-d, non-negative) → classifier [84→K]

Parameters: 62,006 on 3×32×32 (encoder 61,156), 44,426 on 1×28×28 (encoder
43,576), as the notes count them.

Not part of the model: the code's encoder class also defines an ``fc3``
[84→10] that its ``forward`` never uses (it is only averaged and sent along,
notes §7.10); it changes no output and is left out here.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._common import check_positive_int, conv_relu_pool, two_conv5_pool_size
from .registry import register_model

__all__ = ["SimpleCNN"]


class SimpleCNN(nn.Module):
    """FedConcat's simple CNN for ``in_channels``×H×W inputs (1×28×28 FMNIST, 3×32×32 CIFAR-10/SVHN)."""

    def __init__(self, num_classes: int = 10, in_channels: int = 3, image_size=32):
        super().__init__()
        check_positive_int("num_classes", num_classes)
        check_positive_int("in_channels", in_channels)
        flat_h, flat_w = two_conv5_pool_size(image_size, "SimpleCNN")
        self.conv1 = nn.Conv2d(in_channels, 6, kernel_size=5)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=5)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.fc1 = nn.Linear(16 * flat_h * flat_w, 120)
        self.fc2 = nn.Linear(120, 84)
        self.classifier = nn.Linear(84, num_classes)

    def features(self, x: Tensor) -> Tensor:
        """The encoder: the 84-d ReLU feature."""
        x = conv_relu_pool(self.conv1, self.pool, x)
        x = conv_relu_pool(self.conv2, self.pool, x)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.relu(self.fc2(x))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


@register_model("simple_cnn", "FedConcat's simple CNN: 2 conv (6, 16) + fc 120 → 84 (encoder) → K; 1- or 3-channel",
                memory_format="channels_last")
def _simple_cnn(num_classes: int, input_shape) -> SimpleCNN:
    channels, height, width = input_shape
    return SimpleCNN(num_classes, in_channels=channels, image_size=(height, width))
