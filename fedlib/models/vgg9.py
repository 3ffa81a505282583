"""VGG-9 ("ModerateCNN") of FedConcat's public code (``run.sh``'s model for CIFAR-10/SVHN).

Layout (``notes/fedconcat.md`` §1a, model.py:460-548), every conv 3×3 with padding 1:

    conv [C→32] → ReLU → conv [32→64] → ReLU → max-pool 2 →
    conv [64→128] → ReLU → conv [128→128] → ReLU → max-pool 2 →
    conv [128→256] → ReLU → conv [256→256] → ReLU → max-pool 2 →
    flatten (4096 on 32×32) → fc1 [4096→512] → ReLU → fc2 [512→512] → ReLU = ``h`` (512-d)
    → classifier [512→K]

Encoder (``features``) 3,486,400 parameters, whole model 3,491,530 on 3×32×32
with K = 10; no BatchNorm; PyTorch's default initialisation (as the code).

Deviation: the code's three dropout layers (Dropout2d 0.05 after the second
block, Dropout 0.1 before fc1 and after fc2) are left out.  fedlib's engines
train functionally and deterministically (one seeded mini-batch stream, no
hidden random state, vmapped over clients), and a dropout mask would need a
per-client, per-step random stream the engines do not have.  Without dropout
the model is the code's model in eval mode.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ._common import check_positive_int, hw
from .registry import register_model

__all__ = ["VGG9"]


class VGG9(nn.Module):
    def __init__(self, num_classes: int = 10, in_channels: int = 3, image_size=32):
        super().__init__()
        check_positive_int("num_classes", num_classes)
        check_positive_int("in_channels", in_channels)
        h, w = hw(image_size)
        if h % 8 or w % 8:
            raise ValueError(f"image_size must be a multiple of 8 for VGG9, got {(h, w)}")
        widths = [(in_channels, 32), (32, 64), (64, 128), (128, 128), (128, 256), (256, 256)]
        self.convs = nn.ModuleList(nn.Conv2d(i, o, kernel_size=3, padding=1) for i, o in widths)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.fc1 = nn.Linear(256 * (h // 8) * (w // 8), 512)
        self.fc2 = nn.Linear(512, 512)
        self.classifier = nn.Linear(512, num_classes)

    def features(self, x: Tensor) -> Tensor:
        """The encoder: three blocks of two convs and a max-pool, then two fc layers (512-d)."""
        for i, conv in enumerate(self.convs):
            x = F.relu(conv(x))
            if i % 2 == 1:
                x = self.pool(x)
        x = F.relu(self.fc1(torch.flatten(x, 1)))
        return F.relu(self.fc2(x))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


@register_model("vgg9", "VGG-9 (ModerateCNN) of FedConcat's code: 6 conv + fc 4096→512→512 (encoder) → K; "
                        "dropout left out", memory_format="channels_last")
def _vgg9(num_classes: int, input_shape) -> VGG9:
    channels, height, width = input_shape
    return VGG9(num_classes, in_channels=channels, image_size=(height, width))
