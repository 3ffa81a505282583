"""FedLC's analysis (fedlib.papers.fedlc.analysis): class statistics, the deviation bound of
Definition 3 / Theorem 3, Eq. 9 / Eq. 17 against real SGD updates, and the
§5.5 helpers.  Reference values are re-derived here with plain per-sample
float64 loops, independently of the vectorised implementation."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from fedlib.papers.fedlc import analysis as A
from fedlib.algorithms import Algorithm, build_algorithm
from fedlib.algorithms.fedavg import CrossEntropyLoss
from fedlib.algorithms.fedlc import CalibratedLoss
from fedlib.config import Config
from fedlib.data import FederatedData
from fedlib.engine import ClientOptimizer, ClientTask, client_batches, local_update
from fedlib.models import CNNCifar, CNNMnist, LogisticRegression
from fedlib.simulation import Experiment, evaluate, prepare


# ----------------------------------------------------------------------------- helpers
def loop_statistics(h, y, W, b, counts, tau):
    """Per-sample float64 loops: h̄^(y), p̄^(y) (plain, calibrated, p̃)."""
    h, W, b = h.double().tolist(), W.double().tolist(), b.double().tolist()
    y = [int(v) for v in y]
    K, d = len(W), len(h[0])
    o = [-tau * max(float(c), 1.0) ** -0.25 for c in counts]  # Eq. 7 offsets, missing classes clamped to 1
    sums = {key: [[0.0] * K for _ in range(K)] for key in ("p", "plain", "tilde")}
    sum_h = [[0.0] * d for _ in range(K)]
    n = [0] * K
    for hi, yi in zip(h, y):
        f = [sum(W[k][m] * hi[m] for m in range(d)) + b[k] for k in range(K)]
        z_plain = sum(math.exp(fk) for fk in f)
        z_cal = sum(math.exp(fk + ok) for fk, ok in zip(f, o))
        for k in range(K):
            sums["plain"][yi][k] += math.exp(f[k]) / z_plain
            sums["p"][yi][k] += math.exp(f[k] + o[k]) / z_cal
            sums["tilde"][yi][k] += math.exp(f[k]) / z_cal
        for m in range(d):
            sum_h[yi][m] += hi[m]
        n[yi] += 1

    def mean(rows):
        return torch.tensor([[v / n[c] if n[c] else math.nan for v in row] for c, row in enumerate(rows)],
                            dtype=torch.float64)
    return {"n": n, "h_bar": mean(sum_h), "p_bar": mean(sums["p"]), "p_plain_bar": mean(sums["plain"]),
            "p_tilde_bar": mean(sums["tilde"]), "offsets": o}


def clustered_client(counts, d=12, seed=0, shared=2.0, sep=1.0, noise=0.5, identical=False, dtype=torch.float32):
    """Class clusters x ~ μ_y + noise with a shared positive component (h̄^(r)·h̄^(j) > 0)."""
    g = torch.Generator().manual_seed(seed)
    K = len(counts)
    mu = shared * torch.ones(K, d, dtype=torch.float64) + sep * torch.randn(K, d, generator=g, dtype=torch.float64)
    y = torch.cat([torch.full((n,), k) for k, n in enumerate(counts)]).long()
    x = mu[y] if identical else mu[y] + noise * torch.randn(len(y), d, generator=g, dtype=torch.float64)
    return x.to(dtype), y


def toy_experiment(counts, *, missing="clamp", tau=1.0, zero_init=True, seed=0, lr=0.05):
    """An Experiment with one client holding ``counts`` samples of clustered features."""
    x, y = clustered_client(counts, seed=seed)
    K = len(counts)
    cfg = Config(dataset="synthetic", num_clients=1, batch_size=32, lr=lr, tau=tau, fedlc_missing=missing,
                 seed=seed)
    rows = np.arange(len(y))
    data = FederatedData("toy", x, y, x, y, K, [rows])
    torch.manual_seed(seed)
    model = LogisticRegression(x.shape[1], K)
    if zero_init:
        torch.nn.init.zeros_(model.classifier.weight)
        torch.nn.init.zeros_(model.classifier.bias)
    return Experiment(cfg, data, [rows], np.asarray([counts]), model, build_algorithm(cfg))


def one_full_batch_step(model, params, x, y, lr, loss=None, counts=None):
    """One step of fedlib's engine (local_update) on the whole (x, y)."""
    alg = Algorithm.compose(loss=loss or CrossEntropyLoss())
    counts = counts if counts is not None else torch.bincount(y, minlength=params["classifier.weight"].shape[0])
    task = ClientTask(0, torch.arange(len(y)), counts.to(x.dtype), [torch.arange(len(y))])
    after = local_update(model, alg, params, task, {}, x, y, ClientOptimizer(lr)).local
    return after


# ----------------------------------------------------------------------------- class statistics
@pytest.mark.parametrize("tau", [0.0, 1.5])
def test_class_statistics_match_per_sample_loop(tau):
    g = torch.Generator().manual_seed(1)
    K, d, N = 5, 7, 60
    h = torch.randn(N, d, generator=g, dtype=torch.float64)
    y = torch.randint(0, K - 1, (N,), generator=g)  # class K-1 absent: a missing class
    W = torch.randn(K, d, generator=g, dtype=torch.float64)
    b = torch.randn(K, generator=g, dtype=torch.float64)
    counts = torch.bincount(y, minlength=K).double()
    stats = A.class_statistics_from_features(h, y, W, b, tau=tau)
    ref = loop_statistics(h, y, W, b, counts.tolist(), tau)
    present = counts > 0
    assert stats.counts.tolist() == [float(v) for v in ref["n"]]
    for key in ("h_bar", "p_bar", "p_plain_bar", "p_tilde_bar"):
        got = getattr(stats, key)
        torch.testing.assert_close(got[present], ref[key][present], rtol=1e-12, atol=1e-12, msg=key)
        assert torch.isnan(got[~present]).all(), f"{key}: a class without samples must be NaN"
    torch.testing.assert_close(stats.offsets, torch.tensor(ref["offsets"], dtype=torch.float64))
    torch.testing.assert_close(stats.p_bar[present].sum(1), torch.ones(int(present.sum()), dtype=torch.float64))
    if tau == 0:
        torch.testing.assert_close(stats.p_bar, stats.p_plain_bar, equal_nan=True)
    else:
        assert not torch.allclose(stats.p_bar[present], stats.p_plain_bar[present])


def test_class_statistics_through_a_model_equals_from_features():
    torch.manual_seed(0)
    model = CNNMnist()
    x = torch.randn(37, 1, 28, 28)
    y = torch.arange(37) % 4
    params = {k: v.detach() for k, v in model.named_parameters()}
    counts = np.array([20, 9, 5, 3, 0, 0, 0, 0, 0, 0])  # the client's counts (x is a subset)
    s_model = A.class_statistics(model, params, x, y, num_classes=10, class_counts=counts, tau=1.0, batch_size=8)
    h = A.extract_features(model, params, x)
    s_feat = A.class_statistics_from_features(h, y, params["classifier.weight"], params["classifier.bias"],
                                              class_counts=counts, tau=1.0)
    for key in ("counts", "h_bar", "p_bar", "p_plain_bar", "p_tilde_bar", "neg_grad_w"):
        torch.testing.assert_close(getattr(s_model, key), getattr(s_feat, key), equal_nan=True, msg=key)
    assert s_model.class_counts.tolist() == counts.tolist()
    assert s_model.counts.tolist()[:4] == [10, 9, 9, 9]
    with pytest.raises(ValueError):
        A.class_statistics(model, params, x, y, num_classes=7)
    with pytest.raises(ValueError):
        A.class_statistics(model, params, x, y, tau=-1.0)


def test_mask_statistics_follow_fedlc_loss_gradient():
    """With missing='mask' the calibrated p must be the softmax fedlc_loss differentiates."""
    from fedlib.losses import fedlc_loss

    g = torch.Generator().manual_seed(3)
    K, d, N = 6, 5, 40
    h = torch.randn(N, d, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (N,), generator=g)
    W = torch.randn(K, d, generator=g, dtype=torch.float64, requires_grad=True)
    counts = torch.bincount(y, minlength=K).double()
    loss = fedlc_loss(h @ W.T, y, counts, 0.7, missing="mask")
    (grad,) = torch.autograd.grad(loss, W)
    stats = A.class_statistics_from_features(h, y, W.detach(), None, tau=0.7, missing="mask")
    torch.testing.assert_close(stats.neg_grad_w, -grad)
    assert (stats.p_bar[:3, 3:] == 0).all()  # absent classes leave the softmax
    assert stats.loss == pytest.approx(float(loss.detach()), rel=1e-12)
    assert stats.loss_plain == pytest.approx(float(torch.nn.functional.cross_entropy(h @ W.detach().T, y)), rel=1e-12)
    assert stats.plain().loss == stats.loss_plain


# ----------------------------------------------------------------------------- deviation bound
def random_stats(tau, seed=0, counts=(300, 80, 12, 5), missing="clamp"):
    g = torch.Generator().manual_seed(seed)
    K, d = len(counts), 9
    y = torch.cat([torch.full((n,), k) for k, n in enumerate(counts)]).long()
    h = (torch.rand(len(y), d, generator=g, dtype=torch.float64) + 0.3 * torch.rand(K, d, generator=g,
                                                                                    dtype=torch.float64)[y])
    W = torch.randn(K, d, generator=g, dtype=torch.float64)
    b = torch.randn(K, generator=g, dtype=torch.float64)
    return A.class_statistics_from_features(h, y, W, b, tau=tau, missing=missing)


def test_two_forms_of_the_deviation_bound_agree_eq18():
    for seed in range(3):
        stats = random_stats(0.0, seed)
        for j, r in [(0, 1), (0, 2), (0, 3), (1, 3), (2, 1)]:
            bound = A.deviation_bound(stats, j, r)
            assert bound.valid
            assert bound.d_jr == pytest.approx(bound.d_jr_sum, rel=1e-12)
            # independent re-derivation of Definition 3 from the raw means
            p, hb = stats.p_bar, stats.h_bar
            expected = (1 - p[r, r]) * (hb[r] @ hb[r]) / (p[j, r] * (hb[r] @ hb[j]))
            assert bound.d_jr == pytest.approx(float(expected), rel=1e-12)


def test_theorem3_form_equals_definition3_with_calibrated_probabilities():
    g = torch.Generator().manual_seed(5)
    counts = [300, 80, 12, 5]
    y = torch.cat([torch.full((n,), k) for k, n in enumerate(counts)]).long()
    h = torch.rand(len(y), 6, generator=g, dtype=torch.float64)
    W = torch.randn(4, 6, generator=g, dtype=torch.float64)
    tau = 1.3
    stats = A.class_statistics_from_features(h, y, W, None, tau=tau)
    stats0 = A.class_statistics_from_features(h, y, W, None, tau=0.0)
    # Def. 3 computed by hand from the calibrated softmax σ(f − τ n^(−1/4)) (Eq. 7, Eq. 19–20)
    f = h @ W.T - tau * torch.tensor(counts, dtype=torch.float64) ** -0.25
    p_cal = torch.stack([f[y == k].softmax(1).mean(0) for k in range(4)])
    h_bar = torch.stack([h[y == k].mean(0) for k in range(4)])
    for j, r in [(0, 3), (0, 2), (1, 3), (0, 1)]:
        bound = A.deviation_bound(stats, j, r)
        by_hand = (1 - p_cal[r, r]) * (h_bar[r] @ h_bar[r]) / (p_cal[j, r] * (h_bar[r] @ h_bar[j]))
        assert bound.d_jr == pytest.approx(float(by_hand), rel=1e-10)
        assert bound.d_jr_theorem3 == pytest.approx(bound.d_jr, rel=1e-10)  # Eq. 21 = Def. 3 calibrated
        assert bound.d_jr_sum == pytest.approx(bound.d_jr, rel=1e-10)
        assert bound.d_jr_plain == pytest.approx(A.deviation_bound(stats0, j, r).d_jr, rel=1e-12)
        assert bound.d_jr != pytest.approx(bound.d_jr_plain, rel=1e-3)  # calibration does change it
        # the paper's last expression of Eq. 21 with Δ_(r,y) as a plain factor (not e^Δ) is not equal
        margins = stats.margins()[r]
        literal = sum(float(margins[k] * stats.p_tilde_bar[r, k]) for k in range(4) if k != r) * \
            float(h_bar[r] @ h_bar[r]) / (float(stats.p_tilde_bar[j, r]) * float(h_bar[r] @ h_bar[j]))
        assert literal != pytest.approx(bound.d_jr, rel=1e-3)
    for j, r in [(0, 3), (1, 2)]:  # τ = 0: all forms coincide
        b0 = A.deviation_bound(stats0, j, r)
        assert b0.d_jr_theorem3 == pytest.approx(b0.d_jr, rel=1e-12) == b0.d_jr_plain


def test_calibration_raises_the_bound_of_the_rarest_class():
    """Provable at a fixed model: if o_r = min_k o_k (r has the fewest samples and no
    class is rarer, missing='clamp'), then p_r^cal(x) ≤ p_r(x) for every x, so the
    numerator of D_jr grows and its denominator shrinks: D_cal ≥ D_plain."""
    for seed in range(5):
        stats = random_stats(1.0, seed, counts=(300, 80, 12, 5))
        for j in (0, 1, 2):
            b = A.deviation_bound(stats, j, 3)
            assert b.valid and b.d_jr > b.d_jr_plain


def test_calibration_can_lower_the_bound_when_rarer_classes_exist():
    """The paper's 'calibration enlarges D_jr' is not universal: with missing classes
    (clamped to n = 1, so they get the strongest shift) a minority class that is not
    the rarest gains calibrated probability and its D_jr falls."""
    raised_rarest = []
    for seed in range(5):
        stats = random_stats(1.0, seed, counts=(300, 80, 12, 0, 0))
        b1, b2 = A.deviation_bound(stats, 0, 1), A.deviation_bound(stats, 0, 2)
        assert b1.valid and b1.d_jr < b1.d_jr_plain  # r = 1 (n_r = 80): lowered for every model tried
        raised_rarest.append(b2.d_jr > b2.d_jr_plain)
    assert any(raised_rarest) and not all(raised_rarest)  # r = 2 (n_r = 12): depends on the model


def test_non_positive_denominator_is_flagged():
    K, d = 3, 2
    h = torch.tensor([[1.0, 0.1], [1.0, -0.1], [-1.0, 0.2], [-1.0, -0.2], [0.0, 1.0]], dtype=torch.float64)
    y = torch.tensor([0, 0, 1, 1, 2])
    W = torch.zeros(K, d, dtype=torch.float64)
    stats = A.class_statistics_from_features(h, y, W)
    neg = A.deviation_bound(stats, 0, 1)  # h̄^(1)·h̄^(0) = −1 < 0
    assert neg.h_dot < 0 and neg.d_jr < 0 and not neg.valid
    assert neg.d_jr == pytest.approx(neg.d_jr_sum)
    zero = A.deviation_bound(stats, 0, 2)  # h̄^(2) ⟂ h̄^(0)
    assert zero.h_dot == pytest.approx(0.0, abs=1e-15) and math.isnan(zero.d_jr) and not zero.valid
    with pytest.raises(ValueError):
        A.deviation_bound(stats, 1, 1)
    with pytest.raises(ValueError):
        A.deviation_bound(stats, 0, 3)


# ----------------------------------------------------------------------------- Eq. 9 / Eq. 17 vs SGD
def test_prediction_equals_measured_update_when_property1_is_exact():
    """Linear model, h = x, every sample of a class shares the same x: p is constant
    within a class, so mean(p_k h) = p̄_k h̄ and Eq. 9 is exact for one full-batch step."""
    counts = [40, 15, 4, 1]
    x, y = clustered_client(counts, identical=True, dtype=torch.float64)
    torch.manual_seed(0)
    model = LogisticRegression(x.shape[1], 4).double()
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    lr = 0.3
    after = one_full_batch_step(model, before, x, y, lr)
    stats = A.class_statistics(model, before, x, y)
    for j, r in [(0, 2), (0, 3), (1, 3), (2, 1)]:
        pred = A.predicted_update_signs(stats, None, lr, j, r)
        meas = A.measured_update(before, after, stats, j, r)
        assert meas.wr_hr == pytest.approx(pred.wr_hr, rel=1e-6, abs=1e-9)
        assert meas.wj_hr == pytest.approx(pred.wj_hr, rel=1e-6, abs=1e-9)
        assert pred.wr_hr == pytest.approx(pred.wr_hr_exact, rel=1e-9)
        assert sum(pred.terms_r) == pytest.approx(pred.wr_hr) and sum(pred.terms_j) == pytest.approx(pred.wj_hr)
        assert pred.deviation_r == meas.deviation_r and pred.deviation_j == meas.deviation_j
        summed = A.predicted_update_signs(stats, None, lr, j, r, reduction="sum")  # Eq. 9 literally
        assert summed.wr_hr == pytest.approx(pred.wr_hr * len(y), rel=1e-9)


def test_exact_prediction_matches_any_one_step_and_approximation_is_only_approximate():
    counts = [50, 20, 6]
    x, y = clustered_client(counts, noise=1.0, dtype=torch.float64)
    torch.manual_seed(1)
    model = LogisticRegression(x.shape[1], 3).double()
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    after = one_full_batch_step(model, before, x, y, 0.1)
    stats = A.class_statistics(model, before, x, y)
    pred = A.predicted_update_signs(stats, None, 0.1, 0, 2)
    meas = A.measured_update(before, after, stats, 0, 2)
    assert meas.wr_hr == pytest.approx(pred.wr_hr_exact, rel=1e-9)
    assert meas.wj_hr == pytest.approx(pred.wj_hr_exact, rel=1e-9)
    assert abs(pred.wr_hr - pred.wr_hr_exact) > 1e-9  # Property 1 is an approximation here
    assert pred.wr_hr == pytest.approx(pred.wr_hr_exact, rel=0.2)


def test_exact_prediction_matches_a_cnn_step_and_the_calibrated_loss():
    """For any model, one full-batch step moves the last layer by exactly −η∇_W L; with
    statistics at τ > 0 this is FedLC's calibrated loss (Eq. 7) — and not plain CE."""
    torch.manual_seed(2)
    model = CNNMnist()
    x = torch.randn(30, 1, 28, 28)
    y = torch.tensor([0] * 18 + [1] * 8 + [2] * 4)
    counts = torch.bincount(y, minlength=10).float()
    before = {k: v.detach().clone() for k, v in model.named_parameters()}
    stats = A.class_statistics(model, before, x, y, tau=1.0)
    for loss, s in ((CrossEntropyLoss(), stats.plain()), (CalibratedLoss(tau=1.0), stats)):
        after = one_full_batch_step(model, before, x, y, 0.5, loss=loss, counts=counts)
        meas = A.measured_update(before, after, stats, 0, 2)
        pred = A.predicted_update_signs(s, None, 0.5, 0, 2)
        assert meas.wr_hr == pytest.approx(pred.wr_hr_exact, rel=1e-3, abs=1e-6)
        assert meas.wj_hr == pytest.approx(pred.wj_hr_exact, rel=1e-3, abs=1e-6)
        other = A.predicted_update_signs(stats if s is not stats else stats.plain(), None, 0.5, 0, 2)
        assert meas.wr_hr != pytest.approx(other.wr_hr_exact, rel=1e-2)


# ----------------------------------------------------------------------------- client_classes
def test_client_classes_rule():
    J, R, S = A.client_classes([0, 100, 40, 60, 5], majority_fraction=0.5)
    assert (J, R, S) == ([1, 3], [2, 4], [0])
    assert A.client_classes(np.array([0, 100, 40, 60, 5]), majority_fraction=1.0) == ([1], [2, 3, 4], [0])
    assert A.client_classes(torch.tensor([7, 7]), 0.5) == ([0, 1], [], [])
    assert A.client_classes([0, 0], 0.5) == ([], [], [0, 1])
    J, R, S = A.client_classes([0, 100, 50, 49])  # threshold 50 is inclusive
    assert J == [1, 2] and R == [3]
    for bad in (0.0, 1.5, True):
        with pytest.raises(ValueError):
            A.client_classes([1, 2], bad)
    with pytest.raises(ValueError):
        A.client_classes([1, -2])
    assert A.most_skewed_client(np.array([[10, 5, 0], [100, 1, 0], [5, 5, 5]])) == 1


# ----------------------------------------------------------------------------- Theorem 1 / Theorem 3 measured
def test_theorem1_deviation_and_theorem3_where_the_claim_holds():
    """Client n = (500, 60, 10), no missing class, r = 2 the rarest.  Plain CE: the
    first full-batch step deviates exactly as Theorem 1 predicts (n_j/n_r = 50 ≫ D_jr ≈ 2.7);
    FedLC raises D_jr (Theorem 3) and makes Δw_r·h̄^(r) less negative, but does not
    remove the deviation at τ = 1."""
    exp = toy_experiment([500, 60, 10])
    df = A.deviation_experiment(exp, client=0, epochs=6, batch_size="full", tau=1.0)
    assert len(df) == 2 * 6 * 2  # losses × steps × pairs (0,1), (0,2)
    assert set(zip(df.j, df.r)) == {(0, 1), (0, 2)}
    ce = df[(df.loss == "ce") & (df.r == 2)].set_index("step")
    lc = df[(df.loss == "fedlc") & (df.r == 2)].set_index("step")
    first = ce.loc[1]
    assert first.ratio == 50 and first.condition and first.D_valid
    assert first.meas_wr_hr < 0 and first.meas_wj_hr > 0 and first.deviated and first.predicted_deviation
    # zero init: p is uniform, Eq. 9 exact for the first full-batch step
    assert first.meas_wr_hr == pytest.approx(first.pred_wr_hr, rel=1e-5)
    assert first.pair_r < 0 and first.pair_j > 0
    # later full-batch steps: Eq. 17 stays close to the measurement
    np.testing.assert_allclose(ce.meas_wr_hr, ce.pred_exact_wr_hr, rtol=1e-4, atol=1e-6)
    # Theorem 3 at the same model: D_cal > D_plain for the rarest class
    assert (ce.D_cal > ce.D_plain).all()
    assert lc.loc[1].D == lc.loc[1].D_cal > lc.loc[1].D_plain
    assert lc.loc[1].meas_wr_hr > first.meas_wr_hr  # less deviation with FedLC
    assert lc.loc[1].deviated  # ... but still a deviation at τ = 1
    # Training raises D_jr.  The sign of Δw_r·h̄^(r) follows the condition n_j/n_r > D_jr
    # at every step (r = 2: always met, always negative; r = 1: met only at step 1),
    # while Δw_j·h̄^(r) > 0 needs n_j/n_r ≫ D_jr: it stops once the ratio is below ~2·D_jr.
    for r in (1, 2):
        for loss in ("ce", "fedlc"):
            run = df[(df.loss == loss) & (df.r == r)]
            assert (run.condition == run.deviation_r).all()
            assert run.D.is_monotonic_increasing
    r1 = df[(df.loss == "ce") & (df.r == 1)].set_index("step")
    assert r1.loc[1].deviation_r and not r1.loc[2:].deviation_r.any()
    assert ce.condition.all() and ce.deviation_r.all()
    assert not ce.loc[ce.ratio_over_D < 1.8].deviation_j.any() and ce.loc[ce.ratio_over_D > 3].deviation_j.all()


def test_theorem3_claim_fails_for_a_minority_class_when_missing_classes_exist():
    """Same client plus two missing classes (clamp: n_s := 1).  For r = 1 (n_r = 60),
    calibration lowers D_jr, and the FedLC step deviates more than plain CE —
    the opposite of the Theorem 3 argument; this is what is measured."""
    exp = toy_experiment([500, 60, 10, 0, 0])
    df = A.deviation_experiment(exp, client=0, epochs=1, batch_size="full", tau=1.0)
    assert set(zip(df.j, df.r)) == {(0, 1), (0, 2)}  # missing classes never enter a pair
    ce = df[(df.loss == "ce") & (df.r == 1)].iloc[0]
    lc = df[(df.loss == "fedlc") & (df.r == 1)].iloc[0]
    assert lc.D_cal < lc.D_plain
    assert lc.meas_wr_hr < ce.meas_wr_hr < 0


def test_deviation_experiment_on_synthetic_is_deterministic_and_well_formed():
    cfg = Config(dataset="synthetic", num_clients=10, seed=0, batch_size=64)
    a = A.deviation_experiment(cfg, epochs=1, tau=1.0)
    b = A.deviation_experiment(cfg.to_dict(), epochs=1, tau=1.0)
    pd.testing.assert_frame_equal(a, b)
    exp = prepare(cfg)
    client = A.most_skewed_client(exp.class_counts)
    assert (a.client == client).all()
    J, R, _ = A.client_classes(exp.class_counts[client])
    assert set(zip(a.j, a.r)) == {(j, r) for j in J for r in R}
    steps = -(-len(exp.client_indices[client]) // 64)
    assert len(a) == 2 * steps * len(J) * len(R)
    assert set(a.loss) == {"ce", "fedlc"} and set(a.tau) == {0.0, 1.0}
    np.testing.assert_allclose(a.ratio, a.n_j / a.n_r)
    ce = a[a.loss == "ce"]
    np.testing.assert_allclose(ce.D, ce.D_plain)
    assert ce.deviated.any()  # this very skewed client deviates
    by_epoch = A.deviation_experiment(exp, client=client, epochs=2, tau=1.0, record="epoch", losses=("ce",))
    assert sorted(by_epoch.step.unique()) == [steps, 2 * steps] and list(by_epoch.epoch.unique()) == [1, 2]
    with pytest.raises(ValueError):
        A.deviation_experiment(exp, client=client, losses=("mse",))
    with pytest.raises(ValueError):
        A.deviation_experiment(exp, client=client, pairs=[(0, 0)])


# ----------------------------------------------------------------------------- §5.5 helpers
def test_extract_features_shapes():
    torch.manual_seed(0)
    assert A.extract_features(CNNMnist(), None, torch.randn(5, 1, 28, 28), batch_size=2).shape == (5, 50)
    assert A.extract_features(CNNCifar(), None, torch.randn(3, 3, 32, 32)).shape == (3, 2048)
    lr = LogisticRegression(60, 10)
    x = torch.randn(7, 60)
    torch.testing.assert_close(A.extract_features(lr, None, x), x)
    # params replace the model's own
    m = CNNMnist()
    other = {k: torch.zeros_like(v) for k, v in m.named_parameters()}
    assert (A.extract_features(m, other, torch.randn(4, 1, 28, 28)) == 0).all()


def test_per_class_accuracy_before_after():
    cfg = Config(dataset="synthetic", num_clients=6, seed=1, batch_size=32, lr=0.1)
    exp = prepare(cfg)
    torch.manual_seed(0)
    glob = {k: v + 0.1 * torch.randn_like(v) for k, v in exp.initial_params().items()}
    clients = [0, 2, 5]
    frame, local = A.per_class_accuracy_before_after(glob, exp, clients, method="fedlc", tau=1.0, epochs=2,
                                                     return_params=True)
    K = exp.data.num_classes
    assert len(frame) == len(clients) * K
    assert list(frame.columns) == ["client", "class", "n_train", "acc_before", "acc_after", "acc_aggregated"]
    assert sorted(frame.client.unique()) == clients
    _, per_class = evaluate(exp.model, glob, exp.data.test_x, exp.data.test_y, K)
    for k in clients:
        rows = frame[frame.client == k].sort_values("class")
        np.testing.assert_array_equal(rows.acc_before.to_numpy(), per_class)
        assert rows.n_train.tolist() == exp.class_counts[k].tolist()
        # the local model is fedlib's local SGD with FedLC's loss on the same batches
        alg = build_algorithm(cfg.replace(method="fedlc", tau=1.0))
        idx = exp.client_indices[k]
        task = ClientTask(k, torch.as_tensor(idx), torch.as_tensor(exp.class_counts[k], dtype=torch.float32),
                          [torch.as_tensor(b) for b in client_batches(idx, 2, 32, cfg.seed, 0, k)])
        ref = local_update(exp.model, alg, glob, task, {}, exp.data.train_x, exp.data.train_y, ClientOptimizer(0.1)).local
        for name in ref:
            torch.testing.assert_close(local[k][name], ref[name])
        np.testing.assert_array_equal(rows.acc_after.to_numpy(),
                                      evaluate(exp.model, ref, exp.data.test_x, exp.data.test_y, K)[1])
    assert not np.allclose(frame.acc_after.fillna(-1), frame.acc_before.fillna(-1))
    plain = A.per_class_accuracy_before_after(glob, exp, clients, aggregate=False)
    assert "acc_aggregated" not in plain.columns and len(plain) == len(clients) * K
    # the aggregate is FedAvg's (Σ_k n_k/n Δ_k, server step 1), computed here by hand from the local models
    fedavg, local = A.per_class_accuracy_before_after(glob, exp, clients, method="fedavg", return_params=True)
    n = np.array([len(exp.client_indices[k]) for k in clients], dtype=np.float64)
    mean = {name: glob[name] + sum(w * (local[k][name] - glob[name]) for w, k in zip(n / n.sum(), clients))
            for name in glob}
    expected = evaluate(exp.model, mean, exp.data.test_x, exp.data.test_y, K)[1]
    np.testing.assert_allclose(fedavg[fedavg.client == clients[0]].sort_values("class").acc_aggregated, expected)
