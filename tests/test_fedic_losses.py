"""The losses of the FEDIC companion against float64 re-derivations written sample by sample:
focal loss (Fed-Focal Loss), class-weighted CE (Ratio Loss), the distillation KL and FEDIC's Eq. 9."""

import math

import pytest
import torch
import torch.nn.functional as F

from fedlib.losses import calibrated_distillation_loss, cross_entropy, distillation_kl, focal_loss, ratio_loss


def _batch(seed=0, B=7, K=5, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(B, K, generator=g) * scale, torch.randint(0, K, (B,), generator=g)


def _softmax_row(z):
    m = max(z)
    e = [math.exp(v - m) for v in z]
    return [v / sum(e) for v in e]


@pytest.mark.parametrize("gamma", [0.0, 0.5, 2.0, 5.0])
def test_focal_loss_matches_a_per_sample_float64_derivation(gamma):
    z, y = _batch()
    w = torch.tensor([1.0, 0.0, 2.0, 1.0, 0.5, 1.0, 3.0])
    ref = []
    for row, t in zip(z.double().tolist(), y.tolist()):
        p = _softmax_row(row)[t]
        ref.append(-((1 - p) ** gamma) * math.log(p))
    ref_mean = sum(ref) / len(ref)
    ref_weighted = sum(a * b for a, b in zip(w.tolist(), ref)) / float(w.sum())
    assert float(focal_loss(z.double(), y, gamma)) == pytest.approx(ref_mean, rel=1e-12)
    assert float(focal_loss(z.double(), y, gamma, sample_weight=w.double())) == pytest.approx(ref_weighted, rel=1e-12)
    assert float(focal_loss(z, y, gamma)) == pytest.approx(ref_mean, rel=1e-5)


def test_focal_loss_with_gamma_zero_is_the_cross_entropy_and_is_vmap_safe():
    z, y = _batch(1)
    assert torch.allclose(focal_loss(z, y, 0.0), cross_entropy(z, y), atol=1e-6)
    zs = torch.stack([z, 2 * z, -z])
    batched = torch.func.vmap(lambda a: focal_loss(a, y, 2.0))(zs)
    assert torch.allclose(batched, torch.stack([focal_loss(a, y, 2.0) for a in zs]))


def _weighted_ces(z, y, cw):
    return [(cw[t].item(), -math.log(_softmax_row(row)[t])) for row, t in zip(z.double().tolist(), y.tolist())]


def test_ratio_loss_is_the_class_weighted_mean_of_cross_entropies_as_torch_computes_it():
    z, y = _batch(2)
    cw = torch.tensor([1.0, 1.5, 0.2, 3.0, 1.1])
    terms = _weighted_ces(z, y, cw)
    ref = sum(w * ce for w, ce in terms) / sum(w for w, _ in terms)  # Σ w_y ℓ / Σ w_y
    assert float(ratio_loss(z.double(), y, cw.double())) == pytest.approx(ref, rel=1e-12)
    assert float(ratio_loss(z, y, cw)) == pytest.approx(float(F.cross_entropy(z, y, weight=cw)), rel=1e-6)
    assert torch.allclose(ratio_loss(z, y, torch.ones(5)), cross_entropy(z, y), atol=1e-6)
    pad = torch.tensor([1.0, 1, 1, 1, 1, 1, 0])  # a padding sample changes nothing
    assert float(ratio_loss(z, y, cw, sample_weight=pad)) == pytest.approx(float(ratio_loss(z[:6], y[:6], cw)),
                                                                           rel=1e-6)


def test_ratio_loss_with_samples_normalization_is_the_authors_plain_mean():
    z, y = _batch(2)
    cw = torch.tensor([1.0, 1.5, 0.2, 3.0, 1.1])
    ref = sum(w * ce for w, ce in _weighted_ces(z, y, cw)) / len(y)  # Σ w_y ℓ / B
    assert float(ratio_loss(z.double(), y, cw.double(), normalization="samples")) == pytest.approx(ref, rel=1e-12)
    pad = torch.tensor([1.0, 1, 1, 1, 1, 1, 0])
    assert float(ratio_loss(z, y, cw, sample_weight=pad, normalization="samples")) == pytest.approx(
        float(ratio_loss(z[:6], y[:6], cw, normalization="samples")), rel=1e-6)
    with pytest.raises(ValueError, match="normalization"):
        ratio_loss(z, y, cw, normalization="batch")


def test_scaling_every_class_weight_keeps_the_step_only_with_the_class_weighted_mean():
    """The property that keeps Ratio Loss from diverging when Ra is large: with the class-weighted
    mean the gradient ignores a common factor c of the weights; with the plain mean it is c times larger."""
    z, y = _batch(4)
    cw = torch.tensor([1.0, 1.5, 0.2, 3.0, 1.1], dtype=torch.float64)

    def grad(weights, normalization):
        x = z.double().clone().requires_grad_(True)
        ratio_loss(x, y, weights, normalization=normalization).backward()
        return x.grad

    assert torch.allclose(grad(8.0 * cw, "class_weights"), grad(cw, "class_weights"), rtol=1e-12, atol=1e-15)
    assert torch.allclose(grad(8.0 * cw, "samples"), 8.0 * grad(cw, "samples"), rtol=1e-12, atol=1e-15)
    zs = torch.stack([z, 2 * z, -z])  # vmap-safe, as the vectorized engine needs
    batched = torch.func.vmap(lambda a: ratio_loss(a, y, cw.float()))(zs)
    assert torch.allclose(batched, torch.stack([ratio_loss(a, y, cw.float()) for a in zs]))


@pytest.mark.parametrize("T, t2", [(1.0, False), (2.0, False), (2.0, True), (0.5, True)])
def test_distillation_kl_matches_a_float64_derivation_and_torch_kl_div(T, t2):
    s, _ = _batch(3)
    t, _ = _batch(4)
    ref = 0.0
    for sr, tr in zip(s.double().tolist(), t.double().tolist()):
        p = _softmax_row([v / T for v in sr])
        q = _softmax_row([v / T for v in tr])
        ref += sum(qj * (math.log(qj) - math.log(pj)) for pj, qj in zip(p, q))
    ref = ref / len(s) * (T * T if t2 else 1.0)
    assert float(distillation_kl(s.double(), t.double(), T, t2)) == pytest.approx(ref, rel=1e-12)
    torch_ref = F.kl_div(F.log_softmax(s / T, -1), F.softmax(t / T, -1), reduction="batchmean") * (T * T if t2 else 1)
    assert float(distillation_kl(s, t, T, t2)) == pytest.approx(float(torch_ref), rel=1e-5)


def test_distillation_kl_is_zero_for_identical_logits_and_gives_the_teacher_no_gradient():
    s, _ = _batch(5)
    t = s.clone().requires_grad_(True)
    student = s.clone().requires_grad_(True)
    loss = distillation_kl(student, t, 2.0)
    assert float(loss.detach()) == pytest.approx(0.0, abs=1e-7)
    loss.backward()
    assert t.grad is None and float(student.grad.abs().max()) < 1e-7


@pytest.mark.parametrize("lam", [0.0, 0.3, 1.0])
def test_calibrated_distillation_loss_is_eq9(lam):
    sa, ya = _batch(6)
    su, _ = _batch(7, B=9)
    tu, _ = _batch(8, B=9)
    ce = sum(-math.log(_softmax_row(r)[t]) for r, t in zip(sa.double().tolist(), ya.tolist())) / len(ya)
    kl = float(distillation_kl(su.double(), tu.double(), 2.0))
    got = calibrated_distillation_loss(sa.double(), ya, su.double(), tu.double(), lam, 2.0)
    assert float(got) == pytest.approx((1 - lam) * ce + lam * kl, rel=1e-12)
    with pytest.raises(ValueError, match="lam"):
        calibrated_distillation_loss(sa, ya, su, tu, 1.5)
