"""ResNet-18 for 32×32 inputs with GroupNorm (FedLC Table 3's model)."""

from __future__ import annotations

import torchvision
from torch import Tensor, nn

from ._common import check_positive_int
from .registry import register_model

__all__ = ["ResNet18Cifar", "resnet18_cifar", "RESNET_GROUPS"]

RESNET_GROUPS = 2  # GroupNorm groups in resnet18_cifar


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
        check_positive_int("num_classes", num_classes)
        check_positive_int("in_channels", in_channels)
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


@register_model("resnet18", "torchvision ResNet-18, 3×3 stem, no max-pool, GroupNorm(2)")
def _resnet18(num_classes: int, input_shape) -> ResNet18Cifar:
    return resnet18_cifar(num_classes, in_channels=input_shape[0])
