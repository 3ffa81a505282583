"""fedlib.models.pooling: ReLU → 2×2 max-pool in evaluation by strided views, against torch's
``F.relu(F.max_pool2d(x, 2, 2))`` (the reference) bit for bit, on ties, signed zeros, NaN, odd sizes and both
memory formats, NaN; and training, which keeps torch's ops, against the papers' order in both engines."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from fedlib.models.pooling import relu_max_pool


def _bits(t):
    return t.contiguous().view(torch.int64 if t.dtype == torch.float64 else torch.int32)


def _inputs():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, 9, 10, generator=gen)  # odd height: the last row is dropped, as floor mode drops it
    x[0, 0, :4, :4] = 0.0  # ties at zero and among positives
    x[0, 1, :2, :2] = 1.5
    x[1, 0, :2, :4] = torch.tensor([[-0.0, 0.0, 0.0, -0.0], [-1.0, -1.0, -1.0, -1.0]])  # ties of signed zeros:
    x[1, 2, :2, :2] = torch.tensor([[-1.0, -0.0], [0.0, -2.0]])  # torch's pool keeps the first in its scan
    x[1, 1, 2:4, 2:4] = -3.0  # a window of negatives
    return x


@pytest.mark.parametrize("fmt", [torch.contiguous_format, torch.channels_last])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_evaluation_gives_torchs_floats_bit_for_bit_in_torchs_layout(fmt, dtype):
    x, pool = _inputs().to(dtype).contiguous(memory_format=fmt), nn.MaxPool2d(2, 2)
    with torch.no_grad():
        y, ref = relu_max_pool(pool, x), F.relu(pool(x))
    assert torch.equal(_bits(y), _bits(ref))  # every bit, the zeros' signs included
    assert y.stride() == ref.stride()  # the layout the next convolution sees
    assert torch.equal(y, F.max_pool2d(F.relu(x), 2, 2))  # the papers' order, as floats


def test_an_input_holding_a_nan_is_pooled_by_torch():
    """``torch.maximum`` gives another NaN's bits than torch's pool, which keeps the input's."""
    x = _inputs()
    x[2, 0, 0, 1], x[2, 0, 1, 1] = float("nan"), float("nan")
    with torch.no_grad():
        assert torch.equal(_bits(relu_max_pool(nn.MaxPool2d(2, 2), x)), _bits(F.relu(F.max_pool2d(x, 2, 2))))


def test_another_pooling_and_training_are_torchs_own():
    x = _inputs()
    with torch.no_grad():
        for pool in (nn.MaxPool2d(3, 2), nn.MaxPool2d(2, 1), nn.MaxPool2d(2, 2, padding=1),
                     nn.MaxPool2d(2, 2, ceil_mode=True)):
            assert torch.equal(_bits(relu_max_pool(pool, x)), _bits(F.relu(pool(x))))
    xg = x.clone().requires_grad_()
    y = relu_max_pool(nn.MaxPool2d(2, 2), xg)
    assert y.grad_fn.name() == "MaxPool2DWithIndicesBackward0"  # pool(relu(x)), autograd's own


@pytest.mark.parametrize("name,shape", [("cnn_cifar", (3, 16, 16)), ("simple_cnn", (3, 32, 32)),
                                        ("cnn_mnist", (1, 28, 28))])
def test_the_models_are_the_papers_order_bit_for_bit_in_both_engines(name, shape, monkeypatch):
    """A model's logits in evaluation and its parameter gradients in training, one client (the sequential engine)
    and two under vmap (the vectorized engine), equal those of torch's conv → ReLU → pool bit for bit.  A pool by
    views in training, tried, handed the grouped convolution its gradient in another layout under vmap, and the
    conv biases' gradients rounded otherwise."""
    import importlib

    from torch.func import functional_call, vmap

    from fedlib.models import build_model
    from fedlib.models.registry import memory_format

    torch.manual_seed(0)
    model = build_model(name, 10, shape)
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    x = torch.randn(6, *shape).contiguous(memory_format=memory_format(name, shape))

    def outputs():
        one = {k: v.clone().requires_grad_() for k, v in params.items()}
        two = {k: torch.stack([v, v * 0.5]).requires_grad_() for k, v in params.items()}
        functional_call(model, one, (x,)).square().sum().backward()
        vmap(lambda q: functional_call(model, q, (x,)))(two).square().sum().backward()
        with torch.no_grad():
            logits = [functional_call(model, params, (x,)), vmap(lambda q: functional_call(model, q, (x,)))(two)]
        return logits + [t.grad for t in (*one.values(), *two.values())]

    ours = outputs()
    for module in ("fedlc_cnn", "simple_cnn", "fedabc_nets"):
        monkeypatch.setattr(importlib.import_module(f"fedlib.models.{module}"), "conv_relu_pool",
                            lambda conv, pool, t: pool(F.relu(conv(t))))
    assert all(torch.equal(_bits(a), _bits(b)) for a, b in zip(ours, outputs()))
