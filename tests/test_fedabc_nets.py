"""FedABC's networks: the layer shapes the paper gives (and FedRep's CNNCifar for the ConvNet),
the body/head split, the layer grouping LG-FedAvg counts in, and vmap over stacked clients."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from fedlib.models import ConvNet, MLP, body_keys, build_model, head_keys, layer_keys

SHAPES = {
    "mlp": {"fc1.weight": (260, 784), "fc1.bias": (260,), "fc2.weight": (200, 260), "fc2.bias": (200,),
            "classifier.weight": (10, 200), "classifier.bias": (10,)},
    "convnet": {"conv1.weight": (64, 3, 5, 5), "conv1.bias": (64,), "conv2.weight": (64, 64, 5, 5),
                "conv2.bias": (64,), "fc1.weight": (120, 1600), "fc1.bias": (120,), "fc2.weight": (64, 120),
                "fc2.bias": (64,), "classifier.weight": (10, 64), "classifier.bias": (10,)},
}
INPUTS = {"mlp": (1, 28, 28), "convnet": (3, 32, 32)}
H_DIM = {"mlp": 200, "convnet": 64}


@pytest.mark.parametrize("name", ["mlp", "convnet"])
def test_parameter_shapes_match_the_paper(name):
    model = build_model(name, 10, INPUTS[name])
    assert {k: tuple(v.shape) for k, v in model.named_parameters()} == SHAPES[name]
    assert list(model.buffers()) == []
    # MLP: 784·260+260 + 260·200+200 + 200·10+10; ConvNet: FedRep's CNNCifar, 307 842 parameters
    expected = {"mlp": 784 * 260 + 260 + 260 * 200 + 200 + 200 * 10 + 10,
                "convnet": 3 * 64 * 25 + 64 + 64 * 64 * 25 + 64 + 1600 * 120 + 120 + 120 * 64 + 64 + 64 * 10 + 10}
    assert sum(p.numel() for p in model.parameters()) == expected[name]


@pytest.mark.parametrize("name", ["mlp", "convnet"])
def test_body_and_head(name):
    torch.manual_seed(0)
    model = build_model(name, 10, INPUTS[name])
    x = torch.randn(4, *INPUTS[name])
    h = model.features(x)
    assert h.shape == (4, H_DIM[name]) and (h >= 0).all()  # ReLU output
    torch.testing.assert_close(model(x), model.classifier(h))
    assert head_keys(model) == ("classifier.weight", "classifier.bias")
    assert set(body_keys(model)) == set(SHAPES[name]) - set(head_keys(model))


def test_layers_are_grouped_bottom_up():
    assert layer_keys(build_model("convnet", 10, (3, 32, 32))) == tuple(
        (f"{m}.weight", f"{m}.bias") for m in ("conv1", "conv2", "fc1", "fc2", "classifier"))
    assert [layer[0] for layer in layer_keys(build_model("mlp", 10, (60,)))] == [
        "fc1.weight", "fc2.weight", "classifier.weight"]


def test_other_input_shapes_and_class_counts():
    assert build_model("mlp", 7, (60,))(torch.randn(2, 60)).shape == (2, 7)  # Synthetic's 60 features
    grey = build_model("convnet", 10, (1, 28, 28))  # 28 → 24 → 12 → 8 → 4: 64·4·4 = 1024
    assert grey.fc1.in_features == 1024 and grey(torch.randn(2, 1, 28, 28)).shape == (2, 10)
    with pytest.raises(ValueError, match="image_size"):
        ConvNet(image_size=12)
    with pytest.raises(ValueError, match="num_classes"):
        MLP(num_classes=0)


@pytest.mark.parametrize("name", ["mlp", "convnet"])
def test_vmap_over_stacked_clients_equals_a_loop(name):
    torch.manual_seed(1)
    models = [build_model(name, 10, INPUTS[name]) for _ in range(3)]
    params, _ = stack_module_state(models)
    x = torch.randn(3, 2, *INPUTS[name])
    base = models[0]
    out = vmap(lambda p, xb: functional_call(base, p, (xb,)))(params, x)
    for k, m in enumerate(models):
        torch.testing.assert_close(out[k], m(x[k]), rtol=1e-5, atol=1e-6)
    assert isinstance(base.classifier, nn.Linear)
