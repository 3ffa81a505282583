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


@pytest.mark.parametrize("name,shape", [("cnn_cifar", (3, 16, 16)), ("simple_cnn", (3, 32, 32)),
                                        ("concat5_simple_cnn", (3, 32, 32)), ("cnn_mnist", (1, 28, 28))])
def test_the_models_gradients_are_the_papers_order_bit_for_bit_in_both_engines(name, shape, monkeypatch):
    """A model's parameter gradients, one client (the sequential engine) and two clients under vmap (the vectorized
    engine), equal those of torch's conv → ReLU → pool bit for bit.  Under vmap the fold of the fast path handed
    the grouped convolution its gradient in another layout, and the conv biases' gradients rounded otherwise
    (FedLC's CIFAR CNN, FedConcat's SimpleCNN): vmap keeps torch's ops."""
    import importlib

    from torch.func import functional_call, vmap

    from fedlib.models import build_model
    from fedlib.models.registry import memory_format

    torch.manual_seed(0)
    model = build_model(name, 10, shape)
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    x = torch.randn(6, *shape).contiguous(memory_format=memory_format(name, shape))

    def grads():
        one = {k: v.clone().requires_grad_() for k, v in params.items()}
        two = {k: torch.stack([v, v * 0.5]).requires_grad_() for k, v in params.items()}
        functional_call(model, one, (x,)).square().sum().backward()
        vmap(lambda q: functional_call(model, q, (x,)))(two).square().sum().backward()
        return [t.grad for t in (*one.values(), *two.values())]

    ours = grads()
    for module in ("fedlc_cnn", "simple_cnn", "fedabc_nets"):
        monkeypatch.setattr(importlib.import_module(f"fedlib.models.{module}"), "conv_relu_pool",
                            lambda conv, pool, t: pool(F.relu(conv(t))))
    assert all(torch.equal(_bits(a), _bits(b)) for a, b in zip(ours, grads()))


@pytest.mark.parametrize("name,shape", [("cnn_cifar", (3, 16, 16)), ("concat5_simple_cnn", (3, 32, 32))])
def test_the_vectorized_engines_pass_estimate_is_torchs_ops(name, shape, monkeypatch):
    """The bytes a pass saves for backward set how many clients share a vmapped pass, and so how its grouped
    convolutions round.  Those passes run torch's ops, so the estimate measures torch's ops: with the pool by
    views it measured other saved tensors, and FedConcat's MOON on concat5_simple_cnn regrouped its passes."""
    import importlib

    import fedlib.vectorized as V
    from fedlib.models import build_model

    model = build_model(name, 10, shape)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = torch.randn(4, *shape)
    ours = V.activation_bytes_per_sample(model, params, x)
    V._ACTIVATIONS.clear()
    for module in ("fedlc_cnn", "simple_cnn", "fedabc_nets"):
        monkeypatch.setattr(importlib.import_module(f"fedlib.models.{module}"), "conv_relu_pool",
                            lambda conv, pool, t: pool(F.relu(conv(t))))
    assert ours == V.activation_bytes_per_sample(model, params, x) > 0
    V._ACTIVATIONS.clear()
