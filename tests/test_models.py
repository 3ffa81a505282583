"""Tests for fedlib.models: shapes vs FedLC Tables 8–9, functional use, vmap."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from fedlib.models import (
    CNNCifar,
    CNNMnist,
    LogisticRegression,
    ResNet18Cifar,
    build_model,
)
from fedlib.config import default_model

# name, input_shape, feature dim of h
CASES = [
    ("cnn_mnist", (1, 28, 28), 50),
    ("cnn_cifar", (3, 32, 32), 2048),
    ("logreg", (60,), 60),
    ("resnet18", (3, 32, 32), 512),
]


@pytest.mark.parametrize("name,shape,h_dim", CASES)
def test_forward_and_features_shapes(name, shape, h_dim):
    torch.manual_seed(0)
    model = build_model(name, num_classes=10, input_shape=shape)
    x = torch.randn(2, *shape)
    h = model.features(x)
    assert h.shape == (2, h_dim)
    assert isinstance(model.classifier, nn.Linear)
    assert model.classifier.in_features == h_dim
    out = model(x)
    assert out.shape == (2, 10)
    torch.testing.assert_close(out, model.classifier(h))


@pytest.mark.parametrize("name,shape,h_dim", CASES)
def test_no_buffers_and_deterministic_init(name, shape, h_dim):
    torch.manual_seed(123)
    a = build_model(name, 10, shape)
    torch.manual_seed(123)
    b = build_model(name, 10, shape)
    torch.manual_seed(124)
    c = build_model(name, 10, shape)
    assert list(a.buffers()) == []
    pa, pb, pc = dict(a.named_parameters()), dict(b.named_parameters()), dict(c.named_parameters())
    assert all(torch.equal(pa[k], pb[k]) for k in pa)
    assert not all(torch.equal(pa[k], pc[k]) for k in pa)


def test_cnn_mnist_matches_table8():
    model = CNNMnist()
    # Table 8 writes (c_in, c_out, k, k) / (in, out); PyTorch stores (out, in, ...)
    expected = {
        "conv1.weight": (10, 1, 5, 5), "conv1.bias": (10,),
        "conv2.weight": (20, 10, 5, 5), "conv2.bias": (20,),
        "fc1.weight": (50, 320), "fc1.bias": (50,),
        "classifier.weight": (10, 50), "classifier.bias": (10,),
    }
    assert {k: tuple(v.shape) for k, v in model.named_parameters()} == expected
    x = torch.randn(2, 1, 28, 28)
    pooled = model.pool(torch.relu(model.conv2(model.pool(torch.relu(model.conv1(x))))))
    assert pooled.shape == (2, 20, 4, 4)  # 20·4·4 = 320 inputs of fc1


def test_cnn_cifar_matches_table9():
    model = CNNCifar()
    expected = {
        "conv1.weight": (128, 3, 3, 3), "conv1.bias": (128,),
        "conv2.weight": (128, 128, 3, 3), "conv2.bias": (128,),
        "conv3.weight": (128, 128, 3, 3), "conv3.bias": (128,),
        "classifier.weight": (10, 2048), "classifier.bias": (10,),
    }
    assert {k: tuple(v.shape) for k, v in model.named_parameters()} == expected
    assert all(c.padding == (1, 1) for c in (model.conv1, model.conv2, model.conv3))
    assert model.features(torch.randn(2, 3, 32, 32)).shape == (2, 128 * 4 * 4)


def test_other_constructors():
    assert LogisticRegression().classifier.weight.shape == (10, 60)
    res = ResNet18Cifar(num_classes=7, in_channels=1)
    assert res(torch.randn(2, 1, 32, 32)).shape == (2, 7)
    assert res.body.conv1.stride == (1, 1) and isinstance(res.body.maxpool, nn.Identity)
    assert not any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in res.modules())
    assert any(isinstance(m, nn.GroupNorm) for m in res.modules())
    # cnn_cifar on 1-channel 28×28 (e.g. MNIST through the CIFAR CNN): 128·3·3
    assert build_model("cnn_cifar", 10, (1, 28, 28)).classifier.in_features == 1152
    assert build_model("logreg", 3, (2, 5)).classifier.in_features == 10


def test_default_model_and_errors():
    assert default_model("synthetic") == "logreg"
    assert default_model("mnist") == default_model("fmnist") == "cnn_mnist"
    for name in ("cifar10", "cifar100", "svhn"):
        assert default_model(name) == "cnn_cifar"
    with pytest.raises(ValueError, match="dataset must be one of.*cifar10"):
        default_model("imagenet")
    with pytest.raises(ValueError, match="name.*cnn_mnist.*resnet18"):
        build_model("vgg", 10, (3, 32, 32))
    with pytest.raises(ValueError, match="num_classes"):
        build_model("logreg", 0, (60,))
    with pytest.raises(ValueError, match="input_shape"):
        build_model("cnn_cifar", 10, (32, 32))
    with pytest.raises(ValueError, match="image_size"):
        CNNMnist(image_size=12)


@pytest.mark.parametrize("name,shape,h_dim", CASES)
def test_functional_call_and_vmap_over_two_clients(name, shape, h_dim):
    torch.manual_seed(0)
    clients = [build_model(name, 10, shape) for _ in range(2)]
    base = build_model(name, 10, shape).to("meta")
    params, buffers = stack_module_state(clients)
    assert buffers == {}
    x = torch.randn(2, 3, *shape)  # [client, batch, ...]

    def run(p, xb):
        return functional_call(base, p, (xb,))

    batched = vmap(run)(params, x)
    looped = torch.stack([m(xb) for m, xb in zip(clients, x)])
    torch.testing.assert_close(batched, looped, rtol=1e-4, atol=1e-5)
    single = functional_call(clients[0], dict(clients[0].named_parameters()), (x[0],))
    torch.testing.assert_close(single, clients[0](x[0]))


def _papers_order(conv, pool, x):
    """The block as the papers write it: conv → ReLU → max-pool."""
    return pool(torch.relu(conv(x)))


def test_conv_relu_pool_evaluates_as_the_papers_order_bit_for_bit():
    """Without autograd the block pools before its ReLU: ReLU is monotone, so it commutes with a window max and
    the outputs are equal bit for bit, ties and all-negative windows included (whole-number inputs make both
    frequent).  With autograd it is the papers' order, gradients included."""
    from fedlib.models._common import conv_relu_pool

    torch.manual_seed(0)
    conv, pool = nn.Conv2d(2, 3, 3), nn.MaxPool2d(2, 2)
    with torch.no_grad():
        conv.weight.copy_(torch.randint(-2, 3, conv.weight.shape).float())
        conv.bias.copy_(torch.tensor([-1.0, 0.0, 1.0]))
    x = torch.randint(-2, 3, (4, 2, 10, 10)).float()
    with torch.no_grad():
        ours, theirs = conv_relu_pool(conv, pool, x), _papers_order(conv, pool, x)
    assert (theirs == 0).any() and (theirs > 0).any()  # windows ≤ 0 and > 0 both occur
    assert torch.equal(ours, theirs)
    trained = []
    for block in (conv_relu_pool, _papers_order):
        out = block(conv, pool, x)
        trained.append([out.detach(), *torch.autograd.grad(out.square().sum(), [conv.weight, conv.bias])])
    assert all(torch.equal(a, b) for a, b in zip(*trained))


@pytest.mark.parametrize("name,module,shape", [("cnn_mnist", "fedlc_cnn", (1, 28, 28)),
                                                ("cnn_cifar", "fedlc_cnn", (3, 32, 32)),
                                                ("simple_cnn", "simple_cnn", (1, 28, 28)),
                                                ("convnet", "fedabc_nets", (3, 32, 32))])
def test_models_evaluate_as_their_papers_order(name, module, shape, monkeypatch):
    """Each model that uses the block gives the same logits, bit for bit, as with the papers' conv → ReLU →
    pool when it evaluates: one client (the sequential engine) and two under vmap (the vectorized engine), in
    the model's registered memory layout."""
    import importlib

    from fedlib.models.registry import memory_format

    torch.manual_seed(0)
    fmt = memory_format(name, shape)
    model = build_model(name, 10, shape)  # in its registered layout
    params = {k: v.detach().clone() for k, v in model.named_parameters()}
    x = torch.randn(6, *shape).contiguous(memory_format=fmt)

    @torch.no_grad()
    def logits():
        stacked = {k: torch.stack([v, v * 0.5]) for k, v in params.items()}
        return [functional_call(model, params, (x,)),
                vmap(lambda q: functional_call(model, q, (x,)))(stacked)]

    ours = logits()
    monkeypatch.setattr(importlib.import_module(f"fedlib.models.{module}"), "conv_relu_pool", _papers_order)
    assert all(torch.equal(a, b) for a, b in zip(ours, logits()))
