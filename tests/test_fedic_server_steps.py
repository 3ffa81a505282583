"""The server steps of the FEDIC companion on small problems, each against a closed form or an
independent reference written with torch modules and torch.optim (FedDF, FedBE, FEDIC, the post-hoc
re-balancing, the Ratio Loss monitor, FedAvgM's server momentum)."""

import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fedlib.algorithms.fedavgm import ServerMomentum
from fedlib.algorithms.fedbe import BayesianEnsemble, sample_models
from fedlib.algorithms.feddf import EnsembleDistillation
from fedlib.algorithms.fedic import FedicServer, teacher_logits
from fedlib.algorithms.posthoc import ClassifierRetraining, TauNormalization, WeightScaling, tau_normalize, TAU_GRID
from fedlib.algorithms.ratio_loss import classifier_updates, ratio_estimate
from fedlib.algorithms.server_steps import adam_init, adam_step
from fedlib.algorithms.server_training import ServerData, ServerRound
from fedlib.models import build_model

K, SHAPE = 4, (1, 16, 16)


def _model(seed=0):
    torch.manual_seed(seed)
    return build_model("cnn_mnist", K, SHAPE)


def _params(net):
    return {k: v.detach().clone() for k, v in net.named_parameters()}


def _perturbed(params, seed, scale=0.05):
    g = torch.Generator().manual_seed(seed)
    return {k: v + scale * torch.randn(v.shape, generator=g) for k, v in params.items()}


def _server_data(n_aux=8, n_ulb=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    return ServerData(aux_x=torch.randn(n_aux * K, *SHAPE, generator=g), aux_y=torch.arange(K).repeat(n_aux),
                      unlabeled_x=torch.randn(n_ulb, *SHAPE, generator=g))


def _ctx(net, clients, data, round_=1, weights=None, seed=3):
    weights = weights or [10] * len(clients)
    return ServerRound(round_, net, clients, weights, torch.zeros(len(clients), K), data, seed)


def _load(net, params):
    out = copy.deepcopy(net)
    with torch.no_grad():
        for k, p in out.named_parameters():
            p.copy_(params[k])
    return out


def _close(a, b, tol=1e-5):
    for k in b:
        err = float((a[k] - b[k]).abs().max() / b[k].abs().max().clamp_min(1e-12))
        assert err < tol, (k, err)


def _rows(ctx, stream, n, batch, steps):
    g = ctx.generator(stream)
    return [torch.randperm(n, generator=g)[:batch] for _ in range(steps)]


# ------------------------------------------------------------------------------ Adam
def test_functional_adam_equals_torch_optim_adam_with_weight_decay():
    g = torch.Generator().manual_seed(0)
    w0 = {"a": torch.randn(5, 3, generator=g), "b": torch.randn(3, generator=g)}
    ref = {k: torch.nn.Parameter(v.clone()) for k, v in w0.items()}
    opt = torch.optim.Adam(ref.values(), lr=0.01, weight_decay=0.1)
    params, state = dict(w0), adam_init(w0)
    for step in range(6):
        target = torch.randn(5, 3, generator=g)
        loss = lambda p: ((p["a"] - target) ** 2).sum() + (p["b"] ** 3).sum()  # noqa: E731
        opt.zero_grad()
        loss(ref).backward()
        opt.step()
        live = {k: v.clone().requires_grad_(True) for k, v in params.items()}
        grads = dict(zip(live, torch.autograd.grad(loss(live), list(live.values()))))
        params, state = adam_step(params, grads, state, 0.01, 0.1)
    _close(params, {k: v.detach() for k, v in ref.items()}, 1e-6)
    assert int(state["step"]) == 6


# ------------------------------------------------------------------------------ FedDF
def _double(net, data):
    net = net.double()
    return net, _params(net), ServerData(unlabeled_x=data.unlabeled_x.double())


def test_feddf_with_one_client_identical_to_the_model_leaves_it_unchanged():
    """The teacher is the student: KL = 0 with zero gradient, so Adam's first step (which moves every
    parameter by ≈ lr·sign(g) for any gradient well above its ε) moves nothing.  In float64: the float32
    rounding noise of the gradient (~1e-9) is not far enough below ε, and at an optimum Adam's later steps
    amplify any rounding into steps of size ~lr."""
    net, w, data = _double(_model(), _server_data())
    part = EnsembleDistillation(steps=1, batch_size=8)
    new, _ = part.after_round(_ctx(net, [dict(w)], data), w, {})
    assert max(float((new[k] - w[k]).abs().max()) for k in w) < 1e-10
    other, _ = part.after_round(_ctx(net, [_perturbed(w, 1)], data), w, {})  # control: another teacher
    assert max(float((other[k] - w[k]).abs().max()) for k in w) > 0.5e-3


def test_feddf_equals_a_torch_distillation_loop_on_the_average_logits():
    net = _model()
    w = _params(net)
    clients = [_perturbed(w, s) for s in (1, 2, 3)]
    data = _server_data()
    ctx = _ctx(net, clients, data)
    new, _ = EnsembleDistillation(steps=4, batch_size=8, lr=1e-2, temperature=2.0).after_round(ctx, w, {})
    student = _load(net, w)
    members = [_load(net, c) for c in clients]
    opt = torch.optim.Adam(student.parameters(), lr=1e-2)
    for rows in _rows(ctx, 1, len(data.unlabeled_x), 8, 4):
        x = data.unlabeled_x[rows]
        with torch.no_grad():
            teacher = torch.stack([m(x) for m in members]).mean(0)
        loss = F.kl_div(F.log_softmax(student(x) / 2.0, -1), F.softmax(teacher / 2.0, -1), reduction="batchmean")
        opt.zero_grad()
        loss.backward()
        opt.step()
    _close(new, _params(student))


# ------------------------------------------------------------------------------ FedBE
def test_fedbe_gaussian_posterior_has_the_clients_weighted_mean_and_variance():
    g = torch.Generator().manual_seed(0)
    clients = [{"w": torch.randn(200, 50, generator=g)} for _ in range(3)]
    weights = [1, 2, 5]
    mean, draws = sample_models(clients, weights, 4, "gaussian", 1.0, torch.Generator().manual_seed(1))
    stack = np.stack([c["w"].numpy() for c in clients]).astype(np.float64)
    p = np.asarray(weights, float) / sum(weights)
    mu = np.tensordot(p, stack, 1)
    sd = np.sqrt(np.tensordot(p, (stack - mu) ** 2, 1))
    np.testing.assert_allclose(mean["w"].numpy(), mu, rtol=1e-5, atol=1e-6)
    z = np.stack([(d["w"].numpy() - mu) / sd for d in draws])  # standardised draws ~ N(0, 1)
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert abs(np.corrcoef(z[0].ravel(), z[1].ravel())[0, 1]) < 0.03  # independent draws


def test_fedbe_dirichlet_samples_are_convex_combinations_of_the_clients():
    g = torch.Generator().manual_seed(0)
    clients = [{"w": torch.randn(30, generator=g, dtype=torch.float64)} for _ in range(3)]
    _, draws = sample_models(clients, [1, 1, 1], 5, "dirichlet", 0.5, torch.Generator().manual_seed(2))
    basis = np.stack([c["w"].numpy() for c in clients], 1)
    for d in draws:
        gamma, *_ = np.linalg.lstsq(basis, d["w"].numpy(), rcond=None)
        np.testing.assert_allclose(basis @ gamma, d["w"].numpy(), atol=1e-10)
        assert (gamma > -1e-10).all() and gamma.sum() == pytest.approx(1.0, abs=1e-10)


def test_fedbe_with_identical_clients_leaves_the_model_unchanged():
    net, w, data = _double(_model(), _server_data())
    mean, draws = sample_models([dict(w), dict(w)], [1, 3], 3, "gaussian", 1.0, torch.Generator().manual_seed(0))
    for m in [mean, *draws]:  # σ = 0: every member is the mean, which is the model
        assert all(torch.equal(m[k], w[k]) for k in w)
    part = BayesianEnsemble(samples=3, steps=1, batch_size=8)
    new, _ = part.after_round(_ctx(net, [dict(w), dict(w)], data), w, {})
    # the teacher's distribution is the student's: zero gradient (float64, one step: see FedDF's test)
    assert max(float((new[k] - w[k]).abs().max()) for k in w) < 1e-10
    other, _ = part.after_round(_ctx(net, [dict(w), _perturbed(w, 1)], data), w, {})  # control
    assert max(float((other[k] - w[k]).abs().max()) for k in w) > 0.5e-3


# ------------------------------------------------------------------------------ FEDIC
def _sigmoid(v):
    return 1.0 / (1.0 + math.exp(-v))


def test_fedic_teacher_is_eqs_1_and_4_to_7_computed_sample_by_sample():
    g = torch.Generator().manual_seed(0)
    S, B, d = 3, 5, 6
    feats, logits, z_ft = (torch.randn(S, B, d, generator=g, dtype=torch.float64),
                           torch.randn(S, B, K, generator=g, dtype=torch.float64),
                           torch.randn(B, K, generator=g, dtype=torch.float64))
    cal = {n: torch.randn(shape, generator=g, dtype=torch.float64)
           for n, shape in (("a_e", (K,)), ("b_e", ()), ("a_z", (K,)), ("b_z", (K,)), ("u", (d,)))}
    c = {n: v.tolist() for n, v in cal.items()}
    for b in range(B):
        e = [_sigmoid(sum(c["a_e"][j] * float(logits[k, b, j]) for j in range(K)) + c["b_e"]) for k in range(S)]
        e = [v / sum(e) for v in e]  # Eq. 4
        phi = [sum(e[k] * float(logits[k, b, j]) for k in range(S)) for j in range(K)]  # Eq. 1
        z_cl = [c["a_z"][j] * phi[j] + c["b_z"][j] for j in range(K)]  # Eq. 5
        v = [sum(float(feats[k, b, i]) for k in range(S)) / S for i in range(d)]
        sigma = _sigmoid(sum(c["u"][i] * v[i] for i in range(d)))  # Eq. 6
        gated = [sigma * z_cl[j] + (1 - sigma) * float(z_ft[b, j]) for j in range(K)]  # Eq. 7
        plain = [sum(float(logits[k, b, j]) for k in range(S)) / S for j in range(K)]
        for (ft, la), ref in {(True, True): gated, (False, True): z_cl, (True, False): z_ft[b].tolist(),
                              (False, False): plain}.items():
            got = teacher_logits(cal, feats, logits, z_ft, ft, la)[b]
            np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12, atol=1e-12)


def _fedic(**kw):
    base = dict(finetune_steps=4, calibration_steps=5, distill_steps=4, aux_batch_size=6, ulb_batch_size=8,
                temperature=2.0, lam=0.5, seed=0)
    return FedicServer(**{**base, **kw})


def test_fedic_round_equals_an_independent_torch_implementation():
    """FT (Adam, wd) → calibration with the gate (Adam, Eq. 8) → distillation with Eq. 9 (Adam, wd),
    re-implemented with nn.Parameters, torch.optim.Adam and F.kl_div on the same server batches."""
    net = _model()
    w = _params(net)
    clients = [_perturbed(w, s) for s in (1, 2, 3)]
    data = _server_data()
    ctx = _ctx(net, clients, data)
    part = _fedic()
    state = part.init_state(w)
    init_cal = {k: v.clone() for k, v in state["calibration"].items()}
    new, state = part.after_round(ctx, w, state)
    n_aux = len(data.aux_y)
    # FT
    ft = _load(net, w)
    opt = torch.optim.Adam(ft.parameters(), lr=1e-3, weight_decay=2e-4)
    for rows in _rows(ctx, 1, n_aux, 6, 4):
        opt.zero_grad()
        F.cross_entropy(ft(data.aux_x[rows]), data.aux_y[rows]).backward()
        opt.step()
    members = [_load(net, c) for c in clients]
    # calibration
    cal = {k: torch.nn.Parameter(v.clone()) for k, v in init_cal.items()}
    copt = torch.optim.Adam(cal.values(), lr=1e-3)

    def teacher(x):
        with torch.no_grad():
            feats = torch.stack([m.features(x) for m in members])
            logits = torch.stack([m(x) for m in members])
            z_ft = ft(x)
        e = torch.sigmoid(torch.einsum("sbk,k->sb", logits, cal["a_e"]) + cal["b_e"])
        e = e / e.sum(0)
        z_cl = cal["a_z"] * torch.einsum("sb,sbk->bk", e, logits) + cal["b_z"]
        sigma = torch.sigmoid(feats.mean(0) @ cal["u"])[:, None]
        return sigma * z_cl + (1 - sigma) * z_ft

    for rows in _rows(ctx, 2, n_aux, 6, 5):
        copt.zero_grad()
        F.cross_entropy(teacher(data.aux_x[rows]), data.aux_y[rows]).backward()
        copt.step()
    _close(state["calibration"], {k: v.detach() for k, v in cal.items()})
    # distillation
    student = _load(net, w)
    sopt = torch.optim.Adam(student.parameters(), lr=1e-3, weight_decay=2e-4)
    for ra, ru in zip(_rows(ctx, 3, n_aux, 6, 4), _rows(ctx, 4, len(data.unlabeled_x), 8, 4)):
        xu = data.unlabeled_x[ru]
        with torch.no_grad():
            t = teacher(xu)
        loss = 0.5 * F.cross_entropy(student(data.aux_x[ra]), data.aux_y[ra]) + 0.5 * F.kl_div(
            F.log_softmax(student(xu) / 2.0, -1), F.softmax(t / 2.0, -1), reduction="batchmean")
        sopt.zero_grad()
        loss.backward()
        sopt.step()
    _close(new, _params(student), 1e-4)
    assert int(state["distill_adam"]["step"]) == 4 and int(state["finetune_adam"]["step"]) == 4


def test_fedic_teacher_report_evaluates_the_calibrated_ensemble():
    net = _model()
    w = _params(net)
    clients = [_perturbed(w, s) for s in (1, 2)]
    data = _server_data()
    x_test, y_test = data.unlabeled_x[:12], torch.arange(12) % K
    seen = []

    def evaluate(predict):
        out = predict(x_test)
        seen.append(out)
        acc = (out.argmax(1) == y_test).double()
        return float(acc.mean()), np.array([float(acc[y_test == k].mean()) for k in range(K)])

    ctx = ServerRound(1, net, clients, [1, 1], torch.zeros(2, K), data, 0, evaluate=evaluate, final=True)
    part = _fedic(ft=False, la=False, kd=False)
    new, _ = part.after_round(ctx, w, part.init_state(w))
    assert all(torch.equal(new[k], w[k]) for k in w)  # no FT, no KD: the global model is FedAvg's
    ref = torch.stack([_load(net, c)(x_test) for c in clients]).mean(0)  # (a): the plain logit average
    assert torch.allclose(seen[0], ref, atol=1e-6)
    assert ctx.report["teacher_accuracy"] == pytest.approx(float((ref.argmax(1) == y_test).double().mean()))
    assert set(ctx.report) == {"teacher_accuracy", *(f"teacher_acc_class_{k}" for k in range(K))}


def test_fedic_needs_no_unlabelled_data_without_a_kl_term():
    assert _fedic().needs == ("aux", "unlabeled")
    assert _fedic(lam=0.0).needs == ("aux",) and _fedic(kd=False).needs == ("aux",)


# ------------------------------------------------------------------------------ post-hoc re-balancing
def _features_ctx(seed=0):
    net = build_model("logreg", K, (6,))  # h = x: the features are the inputs
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    y = torch.arange(K).repeat(10)
    x = torch.randn(len(y), 6, generator=g) + 2.0 * F.one_hot(y, 6).float()
    data = ServerData(aux_x=x, aux_y=y)
    return net, _params(net), ServerRound(0, net, [], [], torch.zeros(0, K), data, 5)


def test_tau_norm_divides_each_class_row_by_its_norm_to_the_tau():
    net, w, ctx = _features_ctx()
    w["classifier.weight"] = w["classifier.weight"] * torch.tensor([[1.0], [2.0], [3.0], [0.5]])
    new = TauNormalization(tau=0.7).after_training(ctx, w, {})
    for i in range(K):
        row = w["classifier.weight"][i]
        assert torch.allclose(new["classifier.weight"][i], row / row.norm() ** 0.7)
    assert torch.equal(new["classifier.bias"], w["classifier.bias"])
    chosen = TauNormalization().after_training(ctx, w, {})
    x, y, b = ctx.server_data.aux_x, ctx.server_data.aux_y, w["classifier.bias"]
    accs = [float(((x @ tau_normalize(w["classifier.weight"], t).T + b).argmax(1) == y).double().mean())
            for t in TAU_GRID]
    best = TAU_GRID[int(np.argmax(accs))]  # the first τ with the best D_aux accuracy
    assert torch.allclose(chosen["classifier.weight"], tau_normalize(w["classifier.weight"], best))


def _sgd_reference(params, logits, x, y, ctx, epochs, batch, lr):
    opt = torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=5e-4)
    g = ctx.generator(5)
    batches = [p[i:i + batch] for _ in range(epochs) for p in [torch.randperm(len(y), generator=g)]
               for i in range(0, len(y), batch)]
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=len(batches))
    for rows in batches:
        opt.zero_grad()
        F.cross_entropy(logits(x[rows]), y[rows]).backward()
        opt.step()
        sched.step()


def test_crt_retrains_a_fresh_classifier_as_torch_sgd_with_cosine_decay():
    net, w, ctx = _features_ctx()
    new = ClassifierRetraining(epochs=3, batch_size=16, lr=0.1).after_training(ctx, w, {})
    g = ctx.generator(4)
    bound = 1 / math.sqrt(6)
    head = torch.nn.Linear(6, K)
    with torch.no_grad():
        head.weight.copy_(torch.rand(K, 6, generator=g) * 2 * bound - bound)
        head.bias.copy_(torch.rand(K, generator=g) * 2 * bound - bound)
    _sgd_reference(head.parameters(), head, ctx.server_data.aux_x, ctx.server_data.aux_y, ctx, 3, 16, 0.1)
    _close(new, {"classifier.weight": head.weight.detach(), "classifier.bias": head.bias.detach()})


def test_lws_learns_per_class_logit_scales_and_folds_them_into_the_classifier():
    net, w, ctx = _features_ctx()
    new = WeightScaling(epochs=3, batch_size=16, lr=0.1).after_training(ctx, w, {})
    f = torch.nn.Parameter(torch.ones(K))
    frozen = ctx.server_data.aux_x @ w["classifier.weight"].T + w["classifier.bias"]
    _sgd_reference([f], lambda z: f * z, frozen, ctx.server_data.aux_y, ctx, 3, 16, 0.1)
    x = ctx.server_data.aux_x
    assert torch.allclose(x @ new["classifier.weight"].T + new["classifier.bias"], f.detach() * frozen, atol=1e-5)


# ------------------------------------------------------------------------------ Ratio Loss monitor
def test_classifier_updates_are_minus_the_per_class_gradient_of_the_classifier():
    g = torch.Generator().manual_seed(0)
    h, y = torch.randn(20, 6, generator=g, dtype=torch.float64), torch.arange(20) % K
    W = torch.randn(K, 6, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(K, generator=g, dtype=torch.float64)
    got = classifier_updates(h, y, W.detach(), b)
    for i in range(K):
        grad, = torch.autograd.grad(F.cross_entropy(h[y == i] @ W.T + b, y[y == i]), W)
        assert torch.allclose(got[i], -grad)


def test_ratio_estimate_on_a_hand_example():
    # 3 classes, 2 entries: entry 0 owned by class 0 (others < 0.8 of it), entry 1 ambiguous (classes 1 and 2 close)
    updates = torch.tensor([[4.0, 1.0], [1.0, 5.0], [-1.0, 4.5]], dtype=torch.float64)
    ra = ratio_estimate(updates, share=0.8, empty=10.0)
    # class 0 owns entry 0: |4| / |mean(1, −1)| = 4 / 0 -> empty value; move class 2's update to make it finite
    assert ra.tolist() == [10.0, 10.0, 10.0]
    updates[2, 0] = 3.0
    ra = ratio_estimate(updates, share=0.8, empty=10.0)
    assert ra[0] == pytest.approx(4.0 / 2.0) and ra[1] == 10.0 and ra[2] == 10.0


# ------------------------------------------------------------------------------ FedAvgM
def test_server_momentum_is_heavy_ball_on_the_pseudo_gradient():
    opt = ServerMomentum(lr=0.5, beta=0.3)
    w = {"a": torch.tensor([1.0, 2.0])}
    state = opt.init(w)
    g1, g2 = {"a": torch.tensor([0.2, -0.4])}, {"a": torch.tensor([1.0, 0.5])}
    w1, state = opt.apply(w, g1, state)
    w2, state = opt.apply(w1, g2, state)
    v2 = 0.3 * g1["a"] + g2["a"]
    assert torch.allclose(w2["a"], w["a"] - 0.5 * g1["a"] - 0.5 * v2)


def test_fedic_server_round_keeps_every_tensor_on_the_models_device():
    """On a GPU, FEDIC's first server step stopped the run: the calibration parameters were made on the
    CPU while the clients' logits were on the GPU.  The meta device stands in for the GPU here: any tensor
    left on the CPU meets one on meta and raises, as it would on cuda."""
    net = _model().to("meta")
    w = {k: v.to("meta") for k, v in _params(_model()).items()}
    clients = [{k: v.to("meta") for k, v in _perturbed(_params(_model()), s).items()} for s in (1, 2)]
    cpu = _server_data()
    data = ServerData(aux_x=cpu.aux_x.to("meta"), aux_y=cpu.aux_y.to("meta"), unlabeled_x=cpu.unlabeled_x)
    ctx = ServerRound(1, net, clients, [10, 10], torch.zeros(2, K), data, 3, device="meta")
    part = _fedic()
    state = part.init_state(w)
    assert {v.device.type for v in state["calibration"].values()} == {"meta"}
    new, state = part.after_round(ctx, w, state)
    assert {v.device.type for v in new.values()} == {"meta"}
    assert {v.device.type for v in state["calibration"].values()} == {"meta"}
