"""FEDIC's ResNet-8 (GroupNorm): the architecture of the notes §2, counted by hand, and the model contract."""

import math

import pytest
import torch

from fedlib.models import build_model, head_keys
from fedlib.models.resnet8 import RESNET8_WIDTHS


def _hand_count(K: int) -> int:
    w1, w2, w3 = RESNET8_WIDTHS
    conv = 3 * w1 * 9  # stem
    conv += 2 * w1 * w1 * 9  # block 1 (no shortcut)
    conv += w1 * w2 * 9 + w2 * w2 * 9 + w1 * w2  # block 2 + 1×1 shortcut
    conv += w2 * w3 * 9 + w3 * w3 * 9 + w2 * w3  # block 3 + 1×1 shortcut
    norms = 2 * (w1 + 2 * w1 + 3 * w2 + 3 * w3)  # weight and bias of every GroupNorm
    return conv + norms + w3 * K + K


@pytest.mark.parametrize("K", [10, 100])
def test_resnet8_has_the_notes_architecture(K):
    net = build_model("resnet8", K, (3, 32, 32))
    assert sum(p.numel() for p in net.parameters()) == _hand_count(K)
    assert abs(_hand_count(10) - 1.23e6) < 0.01e6  # "about 1.23M parameters" (notes §2)
    assert list(net.buffers()) == []
    assert head_keys(net) == ("classifier.weight", "classifier.bias")
    x = torch.randn(3, 3, 32, 32)
    h = net.features(x)
    assert h.shape == (3, 256)
    assert torch.allclose(net(x), net.classifier(h))
    assert net.layer2.conv1.stride == (2, 2) and net.layer3.conv1.stride == (2, 2)
    assert isinstance(net.layer1.shortcut, torch.nn.Identity)


def test_resnet8_conv_init_is_normal_with_the_codes_variance():
    torch.manual_seed(0)
    net = build_model("resnet8", 10, (3, 32, 32))
    w = net.layer3.conv2.weight.detach()  # 256·256·9 draws
    assert float(w.mean()) == pytest.approx(0.0, abs=3e-4)
    assert float(w.std()) == pytest.approx(math.sqrt(2.0 / (9 * 256)), rel=0.01)


def test_resnet8_runs_functionally_under_vmap():
    net = build_model("resnet8", 10, (3, 16, 16))
    params = {k: v.detach() for k, v in net.named_parameters()}
    stacked = {k: torch.stack([v, v * 0.9]) for k, v in params.items()}
    x = torch.randn(2, 4, 3, 16, 16)
    out = torch.func.vmap(lambda p, xb: torch.func.functional_call(net, p, (xb,)))(stacked, x)
    for i in range(2):
        ref = torch.func.functional_call(net, {k: v[i] for k, v in stacked.items()}, (x[i],))
        assert torch.allclose(out[i], ref, atol=1e-5)
