"""FedABC's binary loss and the balanced softmax, against float64 re-derivations written with
explicit loops, closed forms (one-vs-all BCE, softmax over count-weighted exponentials) and
torch.func transforms."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from torch.func import grad, vmap

from fedlib.losses import balanced_softmax_loss, fedabc_loss

WI = dict(tau_pos=1.0, tau_neg_present=0.0, tau_neg_absent=0.0, gamma=0.0)  # FedABC_wi


def _reference(z, y, counts, tau_pos, tau_neg_p, tau_neg_n, gamma, w=None, normalization="batch"):
    """The reconstructed Eqs. 3–6 term by term, in Python floats (float64)."""
    total = kept = weight_sum = 0.0
    for i in range(len(y)):
        wi = 1.0 if w is None else float(w[i])
        weight_sum += wi
        for c in range(len(counts)):
            p = 1.0 / (1.0 + math.exp(-float(z[i][c])))
            in_p = counts[c] > 0
            if int(y[i]) == c:
                if in_p and p < tau_pos:  # Eq. 3: N classes have no positive term; Eq. 4: keep while p < τ_pos
                    total += wi * (1 - p) ** gamma * -math.log(p)  # Eq. 5
                    kept += wi
            else:
                if p > (tau_neg_p if in_p else tau_neg_n):  # Eq. 4: keep while p > τ_neg
                    total += wi * p ** gamma * -math.log(1 - p)  # Eq. 5
                    kept += wi
    return total / (weight_sum if normalization == "batch" else kept)


def _batch(seed=0, b=12, k=6, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(b, k, generator=g) * scale
    y = torch.randint(0, 4, (b,), generator=g)  # classes 4, 5 never positive
    counts = torch.tensor([5.0, 3.0, 1.0, 7.0, 0.0, 0.0])  # P = {0..3}, N = {4, 5}
    return z, y, counts


@pytest.mark.parametrize("taus,gamma", [((0.9, 0.1, 0.1), 2.0), ((0.8, 0.05, 0.3), 0.5), ((0.95, 0.2, 0.05), 1.0),
                                        ((1.0, 0.0, 0.0), 0.0)])
@pytest.mark.parametrize("normalization", ["batch", "kept"])
def test_equals_the_float64_term_by_term_derivation(taus, gamma, normalization):
    z, y, counts = _batch()
    w = torch.rand(len(y), generator=torch.Generator().manual_seed(1))
    got = fedabc_loss(z, y, counts, *taus, gamma, sample_weight=w, normalization=normalization)
    want = _reference(z.tolist(), y.tolist(), counts.tolist(), *taus, gamma, w.tolist(), normalization)
    assert got.dtype == torch.float32
    assert float(got) == pytest.approx(want, rel=1e-5)


def test_gradient_matches_finite_differences_in_float64():
    z, y, counts = _batch(seed=3, b=5, scale=1.0)
    z = z.double().requires_grad_(True)
    # thresholds away from every p of this batch, so the masks are locally constant
    assert torch.autograd.gradcheck(lambda t: fedabc_loss(t, y, counts.double(), 0.9, 0.1, 0.2, 2.0), (z,))


def test_fedabc_wi_is_one_vs_all_binary_cross_entropy():
    z, y, counts = _batch(scale=20.0)  # saturated sigmoids: float32 p is exactly 0 or 1 for many entries
    counts = torch.bincount(y, minlength=6).float()  # every target class is in P, as on a real client
    bce = F.binary_cross_entropy_with_logits(z, F.one_hot(y, 6).float(), reduction="none").sum(1).mean()
    torch.testing.assert_close(fedabc_loss(z, y, counts, **WI), bce)
    g1 = torch.autograd.grad(fedabc_loss(z.requires_grad_(True), y, counts, **WI), z)[0]
    g2 = torch.autograd.grad(F.binary_cross_entropy_with_logits(z, F.one_hot(y, 6).float(), reduction="none")
                             .sum(1).mean(), z)[0]
    torch.testing.assert_close(g1, g2)


def test_classes_without_positives_train_on_negatives_only():
    z = torch.tensor([[0.3, -0.2, 1.5]])
    y = torch.tensor([2])  # a sample of class 2, which the client's counts call absent
    counts = torch.tensor([4.0, 2.0, 0.0])
    loss = fedabc_loss(z, y, counts, **WI)
    negatives = F.softplus(z[0, 0]) + F.softplus(z[0, 1])  # −log(1 − p) of classes 0 and 1
    torch.testing.assert_close(loss, negatives)


def test_under_sampling_drops_easy_samples_and_their_gradient():
    z = torch.tensor([[3.0, -3.0, 0.0], [-3.0, 0.5, -0.1]], requires_grad=True)
    y = torch.tensor([0, 1])
    counts = torch.tensor([1.0, 1.0, 0.0])
    # sample 0: positive p = 0.95 ≥ τ_pos = 0.9 dropped; negatives p(−3) = 0.047 < τ_neg^P = 0.1 dropped,
    # class 2 (N) p = 0.5 > τ_neg^N = 0.3 kept.  Sample 1: positive p = 0.62 kept; negative of class 0 dropped,
    # class 2 p = 0.475 kept.
    loss = fedabc_loss(z, y, counts, 0.9, 0.1, 0.3, 0.0)
    want = (F.softplus(torch.tensor(0.0)) + F.softplus(torch.tensor(-0.5)) + F.softplus(torch.tensor(-0.1))) / 2
    torch.testing.assert_close(loss, want)
    g = torch.autograd.grad(loss, z)[0]
    assert g[0, 0] == 0 and g[0, 1] == 0 and g[1, 0] == 0
    assert g[0, 2] != 0 and g[1, 1] != 0 and g[1, 2] != 0


def test_finite_at_huge_logits():
    z, y, counts = _batch()
    z = (torch.sign(z) * 1e4).requires_grad_(True)
    for settings in (dict(WI), dict(tau_pos=0.9, tau_neg_present=0.1, tau_neg_absent=0.1, gamma=2.0),
                     dict(tau_pos=0.9, tau_neg_present=0.1, tau_neg_absent=0.1, gamma=0.5)):
        loss = fedabc_loss(z, y, counts, **settings)
        g = torch.autograd.grad(loss, z)[0]
        assert torch.isfinite(loss) and torch.isfinite(g).all(), settings


def test_padding_weight_zero_changes_nothing():
    z, y, counts = _batch()
    padded_z = torch.cat([z, torch.randn(3, 6) * 50])
    padded_y = torch.cat([y, torch.tensor([5, 4, 0])])  # padding may even be positives of N classes
    w = torch.cat([torch.ones(len(y)), torch.zeros(3)])
    torch.testing.assert_close(fedabc_loss(padded_z, padded_y, counts, sample_weight=w), fedabc_loss(z, y, counts))


def test_runs_under_vmap_and_grad_per_client():
    z = torch.randn(3, 8, 5)
    y = torch.randint(0, 5, (3, 8))
    counts = torch.tensor([[1.0, 0, 2, 3, 0], [4.0, 4, 0, 0, 1], [1.0, 1, 1, 1, 1]])
    w = torch.ones(3, 8)
    batched = vmap(lambda a, b, c, d: fedabc_loss(a, b, c, sample_weight=d))(z, y, counts, w)
    looped = torch.stack([fedabc_loss(z[k], y[k], counts[k]) for k in range(3)])
    torch.testing.assert_close(batched, looped)
    grads = vmap(grad(lambda a, b, c: fedabc_loss(a, b, c)))(z, y, counts)
    leaves = [z[k].clone().requires_grad_(True) for k in range(3)]
    looped_g = torch.stack([torch.autograd.grad(fedabc_loss(leaves[k], y[k], counts[k]), leaves[k])[0]
                            for k in range(3)])
    torch.testing.assert_close(grads, looped_g)


@pytest.mark.parametrize("bad", [dict(tau_pos=1.5), dict(tau_neg_present=-0.1), dict(gamma=-1.0),
                                 dict(normalization="per_class"), dict(normalization="kept", reduction="sum")])
def test_bad_arguments_are_refused(bad):
    z, y, counts = _batch()
    with pytest.raises(ValueError):
        fedabc_loss(z, y, counts, **bad)


# ------------------------------------------------------------------------------ balanced softmax
def test_balanced_softmax_is_the_count_weighted_softmax():
    z, y, counts = _batch(seed=5)
    counts = torch.tensor([5.0, 3.0, 1.0, 7.0, 0.0, 2.0])
    want = 0.0
    for i in range(len(y)):  # −log [n_y e^{z_y} / Σ_c n_c e^{z_c}]
        num = counts[y[i]].double() * z[i, y[i]].double().exp()
        den = (counts.double() * z[i].double().exp()).sum()
        want += float(-(num / den).log()) / len(y)
    assert float(balanced_softmax_loss(z, y, counts)) == pytest.approx(want, rel=1e-5)


def test_balanced_softmax_with_equal_counts_is_cross_entropy_and_stays_finite_on_padding():
    z, y, _ = _batch(seed=6)
    torch.testing.assert_close(balanced_softmax_loss(z, y, torch.full((6,), 4.0)), F.cross_entropy(z, y))
    counts = torch.tensor([5.0, 3.0, 1.0, 7.0, 0.0, 0.0])
    w = torch.cat([torch.ones(len(y) - 1), torch.zeros(1)])
    y_pad = y.clone()
    y_pad[-1] = 5  # a padding row in an absent class
    loss = balanced_softmax_loss(z.requires_grad_(True), y_pad, counts, sample_weight=w)
    assert torch.isfinite(loss) and torch.isfinite(torch.autograd.grad(loss, z)[0]).all()
    torch.testing.assert_close(loss, balanced_softmax_loss(z[:-1], y[:-1], counts))
