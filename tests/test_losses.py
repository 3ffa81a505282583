"""Tests for fedlib.losses against independent float64 re-derivations."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch.func import grad, vmap

from fedlib.losses import (
    DENOMINATORS,
    MARGINS,
    MISSING,
    calibration_offsets,
    cross_entropy,
    fedlc_loss,
    fedrs_loss,
    validate_class_counts,
)

COUNTS = [0, 3, 50, 0, 7, 1]  # two missing classes, one singleton
PRESENT = [c for c, n in enumerate(COUNTS) if n > 0]


# --------------------------------------------------------------------------
# independent reference: plain Python floats, explicit loops, stable LSE
# --------------------------------------------------------------------------
def _lse(values):
    m = max(values)
    return m + math.log(sum(math.exp(v - m) for v in values))


def ref_offset(counts, c, tau, margin, min_count):
    n = max(float(counts[c]), min_count)
    if margin == "quarter_power":
        return -tau * n ** -0.25
    total = sum(max(float(k), min_count) for k in counts)
    return tau * math.log(n / total)


def ref_fedlc(logits, targets, counts, tau, denominator, margin, missing, min_count=1.0):
    logits = np.asarray(logits, dtype=np.float64)
    losses = []
    for b in range(logits.shape[0]):
        y = int(targets[b])
        true_term = logits[b, y] + ref_offset(counts, y, tau, margin, min_count)
        terms = []
        for i in range(logits.shape[1]):
            if denominator == "exclude_true" and i == y:
                continue
            if missing == "mask" and counts[i] == 0 and i != y:
                continue
            terms.append(logits[b, i] + ref_offset(counts, i, tau, margin, min_count))
        losses.append(0.0 if not terms else -true_term + _lse(terms))
    return np.array(losses)


def ref_fedrs(logits, targets, present, alpha):
    out = []
    for b in range(logits.shape[0]):
        scaled = [logits[b, c] * (1.0 if present[c] else alpha) for c in range(logits.shape[1])]
        out.append(-scaled[int(targets[b])] + _lse(scaled))
    return np.array(out)


def _batch(seed, scale=1.0, batch=9, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    logits = torch.randn(batch, len(COUNTS), generator=g, dtype=dtype) * scale
    targets = torch.tensor(PRESENT)[torch.randint(len(PRESENT), (batch,), generator=g)]
    return logits, targets


COMBOS = list(itertools.product(DENOMINATORS, MARGINS, MISSING))


# --------------------------------------------------------------------------
# offsets
# --------------------------------------------------------------------------
def test_quarter_power_offsets_and_pairwise_margin_eq6():
    counts = torch.tensor([1.0, 16.0, 0.0, 81.0])
    o = calibration_offsets(counts, 2.0)
    torch.testing.assert_close(o, torch.tensor([-2.0, -1.0, -2.0, -2.0 / 3.0]))
    # Δ_(y,i) = o_i − o_y = τ(n_y^(−1/4) − n_i^(−1/4))  (Eq. 6), y=1, i=3
    assert torch.isclose(o[3] - o[1], torch.tensor(2.0 * (16 ** -0.25 - 81 ** -0.25)))
    masked = calibration_offsets(counts, 2.0, missing="mask")
    assert torch.isneginf(masked[2]) and torch.equal(masked[[0, 1, 3]], o[[0, 1, 3]])


def test_log_prior_offsets_eq4():
    counts = torch.tensor([1, 3, 0, 4])  # integer counts accepted
    o = calibration_offsets(counts, 1.5, margin="log_prior")
    clamped = torch.tensor([1.0, 3.0, 1.0, 4.0])
    torch.testing.assert_close(o, 1.5 * torch.log(clamped / clamped.sum()))
    # at τ=1, Δ_(y,i) = log(γ_i/γ_y) (Eq. 5)
    o1 = calibration_offsets(counts, 1.0, margin="log_prior")
    assert torch.isclose(o1[3] - o1[1], torch.log(torch.tensor(4.0 / 3.0)))
    o_min = calibration_offsets(counts, 1.0, margin="log_prior", min_count=0.5)
    assert torch.isclose(o_min[2] - o_min[0], torch.log(torch.tensor(0.5)))


# --------------------------------------------------------------------------
# fedlc_loss vs reference, every denominator × margin × missing
# --------------------------------------------------------------------------
@pytest.mark.parametrize("denominator,margin,missing", COMBOS)
@pytest.mark.parametrize("tau", [0.7, 2.5])
def test_fedlc_matches_reference(denominator, margin, missing, tau):
    logits, targets = _batch(seed=1)
    counts = torch.tensor(COUNTS)
    got = fedlc_loss(logits, targets, counts, tau, denominator=denominator, margin=margin,
                     missing=missing, reduction="none")
    want = ref_fedlc(logits.numpy(), targets.numpy(), COUNTS, tau, denominator, margin, missing)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    mean = fedlc_loss(logits, targets, counts, tau, denominator=denominator, margin=margin,
                      missing=missing)
    assert math.isclose(mean.item(), want.mean(), rel_tol=1e-12)


@pytest.mark.parametrize("denominator,margin,missing", COMBOS)
def test_fedlc_large_logits_finite_and_correct(denominator, margin, missing):
    logits, targets = _batch(seed=2, scale=1e4)
    logits[0, :] = torch.tensor([1e4, -1e4, 1e4, -1e4, 1e4, -1e4], dtype=torch.float64)
    logits[1, :] = 1e4  # all equal, huge
    counts = torch.tensor(COUNTS)
    want = ref_fedlc(logits.numpy(), targets.numpy(), COUNTS, 1.0, denominator, margin, missing)
    got64 = fedlc_loss(logits, targets, counts, 1.0, denominator=denominator, margin=margin,
                       missing=missing, reduction="none")
    np.testing.assert_allclose(got64.numpy(), want, rtol=1e-12, atol=1e-9)
    got32 = fedlc_loss(logits.float(), targets, counts, 1.0, denominator=denominator,
                       margin=margin, missing=missing, reduction="none")
    assert torch.isfinite(got32).all()
    np.testing.assert_allclose(got32.double().numpy(), want, rtol=1e-5, atol=5e-3)


def test_tau_zero_equals_cross_entropy():
    logits, targets = _batch(seed=3)
    ce = F.cross_entropy(logits, targets)
    for margin in MARGINS:
        got = fedlc_loss(logits, targets, torch.tensor(COUNTS), 0.0, margin=margin)
        torch.testing.assert_close(got, ce, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(cross_entropy(logits, targets), ce, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(cross_entropy(logits, targets, reduction="none"),
                               F.cross_entropy(logits, targets, reduction="none"))


@pytest.mark.parametrize("denominator", DENOMINATORS)
@pytest.mark.parametrize("missing", MISSING)
def test_gradcheck(denominator, missing):
    logits, targets = _batch(seed=4, batch=4)
    logits.requires_grad_(True)
    counts = torch.tensor(COUNTS, dtype=torch.float64)
    fn = functools.partial(fedlc_loss, targets=targets, class_counts=counts, tau=1.3,
                           denominator=denominator, missing=missing)
    assert torch.autograd.gradcheck(fn, (logits,))


def test_exclude_true_unbounded_below_full_nonnegative():
    logits, targets = _batch(seed=5, batch=1)
    counts = torch.tensor(COUNTS)
    y = int(targets[0])
    previous = math.inf
    for z_y in [0.0, 10.0, 1e2, 1e3, 1e4]:
        z = logits.clone()
        z[0, y] = z_y
        excl = fedlc_loss(z, targets, counts, 1.0, denominator="exclude_true").item()
        full = fedlc_loss(z, targets, counts, 1.0, denominator="full").item()
        assert excl < previous and full >= 0.0
        previous = excl
    assert previous < -9_000.0  # keeps falling ~linearly in z_y: no lower bound
    big, targets = _batch(seed=6, scale=1e4, batch=64)
    assert (fedlc_loss(big, targets, counts, 3.0, reduction="none") >= 0).all()


def test_mask_exclude_true_single_present_class_is_zero_with_zero_grad():
    counts = torch.tensor([0.0, 5.0, 0.0], dtype=torch.float64)
    logits = torch.tensor([[1.0, 2.0, 3.0], [-4.0, 7.0, 0.5]], dtype=torch.float64,
                          requires_grad=True)
    targets = torch.tensor([1, 1])
    loss = fedlc_loss(logits, targets, counts, 1.0, denominator="exclude_true", missing="mask",
                      reduction="none")
    assert torch.equal(loss, torch.zeros(2, dtype=torch.float64))
    (g,) = torch.autograd.grad(loss.sum(), logits)
    assert torch.equal(g, torch.zeros_like(g))
    # full form in the same case: softmax over {y} alone → also 0
    full = fedlc_loss(logits, targets, counts, 1.0, missing="mask", reduction="none")
    torch.testing.assert_close(full, torch.zeros(2, dtype=torch.float64))


def test_sample_weight_zero_equals_subset_including_masked_padding():
    logits, targets = _batch(seed=7, batch=8)
    targets = targets.clone()
    targets[[2, 5]] = 0  # padding rows whose target is a *missing* class
    weight = torch.ones(8, dtype=torch.float64)
    weight[[2, 5]] = 0.0
    keep = weight > 0
    counts = torch.tensor(COUNTS)
    for denominator, margin, missing in COMBOS:
        kw = dict(denominator=denominator, margin=margin, missing=missing)
        z = logits.clone().requires_grad_(True)
        got = fedlc_loss(z, targets, counts, 1.0, sample_weight=weight, **kw)
        want = fedlc_loss(logits[keep], targets[keep], counts, 1.0, **kw)
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
        (g,) = torch.autograd.grad(got, z)
        assert torch.isfinite(g).all() and torch.equal(g[~keep], torch.zeros_like(g[~keep]))
        total = fedlc_loss(logits, targets, counts, 1.0, sample_weight=weight, reduction="sum",
                           **kw)
        torch.testing.assert_close(total, want * keep.sum())
    # fractional weights: Σ w ℓ / Σ w; all-zero weights give 0
    w = torch.linspace(0.1, 2.0, 8, dtype=torch.float64)
    per = cross_entropy(logits, targets, reduction="none")
    torch.testing.assert_close(cross_entropy(logits, targets, sample_weight=w),
                               (w * per).sum() / w.sum())
    torch.testing.assert_close(cross_entropy(logits, targets, sample_weight=w, reduction="none"),
                               w * per)
    zero = cross_entropy(logits, targets, sample_weight=torch.zeros(8, dtype=torch.float64))
    assert zero.item() == 0.0


# --------------------------------------------------------------------------
# FedRS
# --------------------------------------------------------------------------
def test_fedrs_alpha_one_is_ce_and_matches_reference():
    logits, targets = _batch(seed=8)
    present = torch.tensor([n > 0 for n in COUNTS])
    torch.testing.assert_close(fedrs_loss(logits, targets, present, alpha=1.0),
                               F.cross_entropy(logits, targets), rtol=1e-12, atol=1e-12)
    for alpha in (0.0, 0.3, 0.9):
        for mask in (present, present.double()):
            got = fedrs_loss(logits, targets, mask, alpha=alpha, reduction="none")
            want = ref_fedrs(logits.numpy(), targets.numpy(), present.tolist(), alpha)
            np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------
# torch.func.vmap / grad over a client dimension
# --------------------------------------------------------------------------
def test_vmap_over_clients_equals_loop():
    g = torch.Generator().manual_seed(9)
    clients, batch, k = 3, 5, 4
    logits = torch.randn(clients, batch, k, generator=g, dtype=torch.float64)
    targets = torch.randint(k, (clients, batch), generator=g)
    counts = torch.tensor([[3.0, 0.0, 9.0, 1.0], [0.0, 0.0, 4.0, 4.0], [2.0, 5.0, 0.0, 0.0]],
                          dtype=torch.float64)
    weight = (torch.rand(clients, batch, generator=g, dtype=torch.float64) > 0.3).double()
    validate_class_counts(counts, num_classes=k)
    for denominator, margin, missing in COMBOS:
        kw = dict(tau=1.7, denominator=denominator, margin=margin, missing=missing)

        def loss(z, y, n, w, kw=kw):
            return fedlc_loss(z, y, n, sample_weight=w, **kw)

        batched = vmap(loss)(logits, targets, counts, weight)
        looped = torch.stack([loss(*a) for a in zip(logits, targets, counts, weight)])
        torch.testing.assert_close(batched, looped, rtol=1e-12, atol=1e-12)
        grads = vmap(grad(loss))(logits, targets, counts, weight)
        looped_g = torch.stack([grad(loss)(*a) for a in zip(logits, targets, counts, weight)])
        torch.testing.assert_close(grads, looped_g, rtol=1e-12, atol=1e-12)
        assert torch.isfinite(grads).all()
    present = counts > 0
    for fn in (lambda z, y, p: fedrs_loss(z, y, p, alpha=0.4),
               lambda z, y, p: cross_entropy(z, y)):
        torch.testing.assert_close(vmap(grad(fn))(logits, targets, present),
                                   torch.stack([grad(fn)(*a) for a in
                                                zip(logits, targets, present)]))


def test_vmap_grad_through_linear_model_parameters():
    """The engine's pattern: grad w.r.t. per-client weights, vmapped over clients."""
    g = torch.Generator().manual_seed(10)
    weights = torch.randn(3, 4, 6, generator=g, dtype=torch.float64)  # [M, K, d]
    x = torch.randn(3, 8, 6, generator=g, dtype=torch.float64)
    y = torch.randint(4, (3, 8), generator=g)
    counts = torch.tensor([[1.0, 0.0, 5.0, 2.0]] * 3, dtype=torch.float64)

    def client_loss(w, xb, yb, n):
        return fedlc_loss(xb @ w.T, yb, n, 0.5, missing="mask")

    batched = vmap(grad(client_loss))(weights, x, y, counts)
    looped = torch.stack([grad(client_loss)(*a) for a in zip(weights, x, y, counts)])
    torch.testing.assert_close(batched, looped)


# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(tau=-0.1), "tau"),
        (dict(tau=float("nan")), "tau"),
        (dict(denominator="partial"), "denominator"),
        (dict(margin="sqrt"), "margin"),
        (dict(missing="drop"), "missing"),
        (dict(min_count=0.0), "min_count"),
        (dict(reduction="avg"), "reduction"),
        (dict(class_counts=torch.ones(5)), "class_counts"),
        (dict(targets=torch.zeros(3, dtype=torch.long)), "targets"),
        (dict(sample_weight=torch.ones(2)), "sample_weight"),
    ],
)
def test_fedlc_validation_names_parameter(kwargs, name):
    args = dict(logits=torch.zeros(4, 6), targets=torch.zeros(4, dtype=torch.long),
                class_counts=torch.ones(6))
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        fedlc_loss(**args)


def test_other_validation_errors():
    z, y = torch.zeros(2, 3), torch.zeros(2, dtype=torch.long)
    with pytest.raises(ValueError, match="alpha"):
        fedrs_loss(z, y, torch.ones(3), alpha=1.5)
    with pytest.raises(ValueError, match="class_present"):
        fedrs_loss(z, y, torch.ones(4))
    with pytest.raises(ValueError, match="logits"):
        cross_entropy(torch.zeros(3), torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="tau"):
        calibration_offsets(torch.ones(3), -1.0)
    with pytest.raises(ValueError, match=r"class_counts.*>= 0"):
        validate_class_counts(torch.tensor([1.0, -1.0, 2.0]))
    with pytest.raises(ValueError, match="class_counts.*finite"):
        validate_class_counts(torch.tensor([1.0, float("nan")]))
    with pytest.raises(ValueError, match="class_counts"):
        validate_class_counts(torch.ones(2, 4), num_classes=3)
    validate_class_counts(torch.tensor([[0, 3], [1, 0]]), num_classes=2)  # ok
