"""fedlib.models.pooling: ReLU → 2×2 max-pool by strided views, against torch's ``F.max_pool2d(F.relu(x), 2, 2)``
(the reference), bit for bit in the gradient and equal as floats in the output (a zero's sign aside, as the
module says), on ties, signed zeros, NaN, odd sizes, both memory formats, float64 and under ``vmap``."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fedlib.models.pooling import relu_max_pool, relu_max_pool2x2


def _reference(x):
    return F.max_pool2d(F.relu(x), 2, 2)


def _both(fn, x, g):
    x = x.detach().clone().requires_grad_()
    y = fn(x)
    (gx,) = torch.autograd.grad(y, x, g)
    return y.detach(), gx


def _bits(t):
    return t.contiguous().view(torch.int64 if t.dtype == torch.float64 else torch.int32)


def _inputs():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, 9, 10, generator=gen)  # odd height: the last row is dropped, as floor mode drops it
    x[0, 0, :4, :4] = 0.0  # ties at zero (a ReLU's zeros) and among positives
    x[0, 1, :2, :2] = 1.5
    x[1, 0, 0, 0], x[1, 0, 0, 1] = -0.0, 0.0  # signed zeros
    x[1, 1, 2:4, 2:4] = -3.0  # a window of negatives: no gradient
    x[2, 0, 0, 1], x[2, 0, 1, 1] = float("nan"), float("nan")  # NaN: torch's scan takes the last
    x[2, 1, 0, 0] = float("nan")
    return x


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_the_pool_gives_torchs_floats_and_gradient_bit_for_bit(fmt, dtype):
    x = _inputs().to(dtype).contiguous(memory_format=fmt)
    g = torch.randn(3, 4, 4, 5, generator=torch.Generator().manual_seed(1), dtype=dtype)
    g[0, 1, 0, 0] = -0.0  # at a window of 1.5s (a tie): torch passes it on as +0.0
    y, gx = _both(relu_max_pool2x2, x, g)
    y_ref, gx_ref = _both(_reference, x, g)
    assert torch.equal(y.isnan(), y_ref.isnan()) and torch.equal(y.nan_to_num(), y_ref.nan_to_num())
    assert torch.equal(_bits(gx), _bits(gx_ref))  # every bit, zeros' signs included
    assert gx.stride() == gx_ref.stride() and y.stride() == y_ref.stride()  # the layout the convolutions see


def test_the_pool_under_vmap_gives_torchs_per_sample_gradients_bit_for_bit():
    """As the vectorized engine calls a model: vmap over clients of the forward, then one backward."""
    from torch.func import vmap

    x = torch.randn(5, 6, 3, 12, 12, generator=torch.Generator().manual_seed(2))
    x[:, :, :, :2, :2] = 0.0
    g = torch.randn(5, 6, 3, 6, 6, generator=torch.Generator().manual_seed(3))
    y, gx = _both(lambda t: vmap(relu_max_pool2x2)(t), x, g)
    y_ref, gx_ref = _both(lambda t: vmap(_reference)(t), x, g)
    assert torch.equal(y, y_ref) and torch.equal(_bits(gx), _bits(gx_ref))


def test_relu_max_pool_takes_the_fast_path_only_for_a_2x2_stride_2_pool():
    x = torch.randn(2, 3, 8, 8)
    for pool in (nn.MaxPool2d(3, 2), nn.MaxPool2d(2, 1), nn.MaxPool2d(2, 2, padding=1), nn.MaxPool2d(2, 2, ceil_mode=True)):
        assert torch.equal(relu_max_pool(pool, x), pool(F.relu(x)))
    assert torch.equal(relu_max_pool(nn.MaxPool2d(2, 2), x), _reference(x))
    with pytest.raises(ValueError, match=r"\[N, C, H, W\]"):
        relu_max_pool2x2(torch.randn(3, 8, 8))



@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
def test_the_pool_without_gradient_gives_torchs_floats_in_torchs_layout(fmt):
    x, pool = _inputs().contiguous(memory_format=fmt), nn.MaxPool2d(2, 2)
    with torch.no_grad():
        y, y_ref = relu_max_pool(pool, x), _reference(x)
    assert torch.equal(y.isnan(), y_ref.isnan()) and torch.equal(y.nan_to_num(), y_ref.nan_to_num())
    assert y.stride() == y_ref.stride()
