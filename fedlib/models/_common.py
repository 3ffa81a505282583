"""Argument checks and building blocks shared by the model modules."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .pooling import relu_max_pool


def check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def hw(image_size) -> tuple[int, int]:
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    h, w = (int(v) for v in image_size)
    return h, w


def two_conv5_pool_size(image_size, model: str) -> tuple[int, int]:
    """Spatial size after two (5×5 conv, no padding → 2×2 max-pool) blocks: ((h − 4)/2 − 4)/2."""
    h, w = hw(image_size)
    flat_h, flat_w = ((h - 4) // 2 - 4) // 2, ((w - 4) // 2 - 4) // 2
    if flat_h < 1 or flat_w < 1:
        raise ValueError(f"image_size must be >= 16 for {model}, got {(h, w)}")
    return flat_h, flat_w


def conv_relu_pool(conv, pool, x):
    """``pool(relu(conv(x)))``, the papers' conv → ReLU → max-pool block.  Without autograd (evaluation) it is
    computed as ``relu(pool(conv(x)))``, which touches a quarter of the elements, the pool on a CPU by strided
    views (:func:`fedlib.models.pooling.relu_max_pool`).

    The two are equal bit for bit: ReLU is monotone, so it commutes with a max over a window.  Training keeps
    the papers' order and torch's ops: their gradients are equal in value, but under vmap the gradient that
    reaches the convolution would come in another memory layout, and its bias gradient (a sum) would round
    differently (tests/test_models.py, tests/test_pooling.py)."""
    return relu_max_pool(pool, conv(x))
