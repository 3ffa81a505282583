"""ResNet-8 (FEDIC's CIFAR model, Shang et al., ICME 2022), with GroupNorm.

The architecture of FEDIC's released code (``Model/model_feature.py`` with
``resnet_size=8``): a 3×3 stem (3→64, stride 1, no bias), then three stages of
one basic block each at 64, 128 and 256 channels (strides 1, 2, 2); a block is
conv3×3 → norm → ReLU → conv3×3 → norm, plus the shortcut (a 1×1 conv and a norm
where stride or width changes), then ReLU; global average pooling gives the
256-d feature ``h`` and a linear ``classifier`` the logits.  Conv weights are
initialised N(0, 2/(k·k·out_channels)) as in the code, norm weights 1 and biases
0, the classifier at PyTorch's default.  About 1.23M parameters.

Deviations, both forced by fedlib's model contract (no buffers, so that the
engines can be functional and vmapped):

* **GroupNorm instead of BatchNorm.**  The original averages every state_dict
  entry, BatchNorm running statistics included, with FedAvg's weights, and
  updates the statistics on the server during distillation.  fedlib's engines
  carry parameters only, so running statistics cannot be kept; GroupNorm with
  :data:`RESNET8_GROUPS` = 2 groups, as fedlib's ResNet-18 (Hsieh et al. 2020
  found GroupNorm the usual fix for BatchNorm under non-IID data), normalises
  each sample by its own statistics, behaves the same in training and
  evaluation, and has only affine parameters, averaged like any other.
* The pooling is adaptive (global), which equals the code's ``AvgPool(8)`` on
  32×32 inputs and also serves other input sizes; the classifier has
  ``num_classes`` outputs (the code hard-codes 10).
"""

from __future__ import annotations

import math

import torch.nn.functional as F
from torch import Tensor, nn

from ._common import check_positive_int
from .registry import register_model

__all__ = ["ResNet8", "RESNET8_GROUPS", "RESNET8_WIDTHS"]

RESNET8_GROUPS = 2  # GroupNorm groups (as fedlib's ResNet-18)
RESNET8_WIDTHS = (64, 128, 256)  # channels of the three stages; the feature h is 256-d


def _norm(channels: int) -> nn.GroupNorm:
    return nn.GroupNorm(RESNET8_GROUPS, channels)


def _conv3x3(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)


class BasicBlock(nn.Module):
    """conv3×3 → norm → ReLU → conv3×3 → norm, + shortcut, → ReLU."""

    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1, self.norm1 = _conv3x3(cin, cout, stride), _norm(cout)
        self.conv2, self.norm2 = _conv3x3(cout, cout), _norm(cout)
        self.shortcut = nn.Identity()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, kernel_size=1, stride=stride, bias=False), _norm(cout))

    def forward(self, x: Tensor) -> Tensor:
        out = F.relu(self.norm1(self.conv1(x)))
        out = self.norm2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet8(nn.Module):
    """ResNet-8 of FEDIC's code with GroupNorm; ``features(x)`` is the 256-d pooled feature."""

    def __init__(self, num_classes: int = 10, in_channels: int = 3):
        super().__init__()
        check_positive_int("num_classes", num_classes)
        check_positive_int("in_channels", in_channels)
        w1, w2, w3 = RESNET8_WIDTHS
        self.stem = _conv3x3(in_channels, w1)
        self.stem_norm = _norm(w1)
        self.layer1 = BasicBlock(w1, w1, 1)
        self.layer2 = BasicBlock(w1, w2, 2)
        self.layer3 = BasicBlock(w2, w3, 2)
        self.classifier = nn.Linear(w3, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):  # N(0, 2 / (k·k·out)) as model_feature.py:18-25
                n = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, 0.0, math.sqrt(2.0 / n))
            elif isinstance(m, nn.GroupNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)

    def features(self, x: Tensor) -> Tensor:
        x = F.relu(self.stem_norm(self.stem(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        return x.mean(dim=(2, 3))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


@register_model("resnet8", "FEDIC's ResNet-8: 3 basic blocks (64/128/256), 256-d feature, GroupNorm(2)",
                memory_format="channels_last")
def _resnet8(num_classes: int, input_shape) -> ResNet8:
    return ResNet8(num_classes, in_channels=input_shape[0])
