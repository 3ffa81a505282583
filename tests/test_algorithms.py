"""Algorithm parts against independent float64 re-derivations, and the
reductions theory demands (FedProx μ=0, SCAFFOLD, FedNova → FedAvg)."""

import numpy as np
import pytest
import torch

from fedlib import Config, run
from fedlib.algorithms import build_algorithm
from fedlib.algorithms.fedavg import CrossEntropyLoss, NoCorrection, ServerSGD, WeightedMean
from fedlib.algorithms.fedlc import CalibratedLoss
from fedlib.algorithms.fednova import NormalizedAveraging
from fedlib.algorithms.fedopt import ServerAdam
from fedlib.algorithms.fedprox import Proximal
from fedlib.algorithms.scaffold import Scaffold


def _random_tree(gen, shapes=((3, 4), (4,))):
    return {f"p{i}": torch.randn(*s, generator=gen) for i, s in enumerate(shapes)}


def _assert_trees_close(a, b, rtol=1e-5, atol=1e-7):
    assert a.keys() == b.keys()
    for k in a:
        torch.testing.assert_close(a[k], b[k], rtol=rtol, atol=atol)


def test_weighted_mean_and_fednova_against_float64_formulas():
    gen = torch.Generator().manual_seed(0)
    deltas = [_random_tree(gen) for _ in range(4)]
    n = [10, 50, 7, 33]
    tau = [3.0, 11.0, 1.0, 6.0]
    p = np.array(n, dtype=np.float64) / sum(n)
    for k in deltas[0]:
        stack = np.stack([d[k].double().numpy() for d in deltas])
        mean = np.tensordot(p, stack, axes=1)
        nova = (p @ np.array(tau)) * np.tensordot(p / np.array(tau), stack, axes=1)
        np.testing.assert_allclose(WeightedMean().combine(deltas, n, tau)[k].numpy(), mean, rtol=1e-6)
        np.testing.assert_allclose(NormalizedAveraging().combine(deltas, n, tau)[k].numpy(), nova, rtol=1e-6)
    # equal steps: FedNova is FedAvg; unequal steps: it is not
    same = NormalizedAveraging().combine(deltas, n, [5.0] * 4)
    _assert_trees_close(same, WeightedMean().combine(deltas, n, [5.0] * 4))
    differ = NormalizedAveraging().combine(deltas, n, tau)
    assert not torch.allclose(differ["p0"], WeightedMean().combine(deltas, n, tau)["p0"])


def test_fedadam_against_reddi_algorithm_2_in_float64():
    gen = torch.Generator().manual_seed(1)
    opt = ServerAdam(lr=0.05, beta1=0.8, beta2=0.95, eps=1e-3)
    w = _random_tree(gen)
    state = opt.init(w)
    ref_w = {k: v.double().numpy() for k, v in w.items()}
    ref_m = {k: np.zeros_like(v) for k, v in ref_w.items()}
    ref_v = {k: np.zeros_like(v) for k, v in ref_w.items()}
    for _ in range(5):
        g = _random_tree(gen)
        w, state = opt.apply(w, g, state)
        for k in ref_w:
            gk = g[k].double().numpy()
            ref_m[k] = 0.8 * ref_m[k] + 0.2 * gk
            ref_v[k] = 0.95 * ref_v[k] + 0.05 * gk**2
            ref_w[k] = ref_w[k] - 0.05 * ref_m[k] / (np.sqrt(ref_v[k]) + 1e-3)
    for k in ref_w:
        np.testing.assert_allclose(w[k].numpy(), ref_w[k], rtol=1e-5, atol=1e-6)


def test_server_sgd_with_unit_lr_is_averaging():
    gen = torch.Generator().manual_seed(2)
    w, d = _random_tree(gen), _random_tree(gen)
    new, _ = ServerSGD(1.0).apply(w, {k: -v for k, v in d.items()}, {})
    _assert_trees_close(new, {k: w[k] + d[k] for k in w})


def test_proximal_gradient_and_effective_steps():
    gen = torch.Generator().manual_seed(3)
    g, w, w0 = _random_tree(gen), _random_tree(gen), _random_tree(gen)
    out = Proximal(mu=0.3).adjust(g, w, w0, {})
    _assert_trees_close(out, {k: g[k] + 0.3 * (w[k] - w0[k]) for k in g})
    # a = Σ_{j<τ} (1 − ημ)^j  (FedNova §4 for FedProx)
    assert Proximal(mu=0.3).effective_steps(7, 0.1) == pytest.approx(sum((1 - 0.03) ** j for j in range(7)))
    assert Proximal(mu=0.0).effective_steps(7, 0.1) == 7.0
    assert NoCorrection().effective_steps(7, 0.1) == 7.0


def test_scaffold_control_variates_follow_option_ii():
    gen = torch.Generator().manual_seed(4)
    sc = Scaffold()
    x, y = _random_tree(gen), _random_tree(gen)
    c, ck = _random_tree(gen), _random_tree(gen)
    ctx = sc.client_context({"c": c}, {"c": ck})
    g = _random_tree(gen)
    _assert_trees_close(sc.adjust(g, y, x, ctx), {k: g[k] - ck[k] + c[k] for k in g})
    K, lr = 5, 0.1
    new_state, msg = sc.client_final(x, y, K, lr, {"c": c}, {"c": ck})
    expected = {k: ck[k] - c[k] + (x[k] - y[k]) / (K * lr) for k in x}
    _assert_trees_close(new_state["c"], expected)
    _assert_trees_close(msg["delta_c"], {k: expected[k] - ck[k] for k in x})
    server = sc.server_update({"c": c}, [msg, msg], num_total_clients=10)
    _assert_trees_close(server["c"], {k: c[k] + 2 * msg["delta_c"][k] / 10 for k in c})



@pytest.mark.parametrize("momentum", [0.5, 0.9])
def test_scaffold_effective_steps_recover_the_gradient_under_client_momentum(momentum):
    """K steps of torch's momentum SGD along a constant gradient g, from x with c = c_k = 0:
    c_k⁺ must be g (what option II estimates).  Dividing by K overshoots by a_k/K ≈ 1/(1 − μ);
    dividing by the effective steps a_k does not."""
    gen = torch.Generator().manual_seed(5)
    x = {"w": torch.randn(6, generator=gen, dtype=torch.float64)}
    g = torch.randn(6, generator=gen, dtype=torch.float64)
    w = x["w"].clone().requires_grad_(True)
    opt = torch.optim.SGD([w], lr=0.05, momentum=momentum)
    K = 12
    for _ in range(K):
        opt.zero_grad()
        (w * g).sum().backward()  # ∇ = g at every step
        opt.step()
    y = {"w": w.detach()}
    zero = {"w": torch.zeros(6, dtype=torch.float64)}
    state, _ = Scaffold(steps="effective", momentum=momentum).client_final(x, y, K, 0.05, {"c": zero}, {"c": zero})
    torch.testing.assert_close(state["c"]["w"], g)
    printed, _ = Scaffold(momentum=momentum).client_final(x, y, K, 0.05, {"c": zero}, {"c": zero})
    ratio = (printed["c"]["w"] / g).mean().item()
    assert ratio == pytest.approx((K - momentum * (1 - momentum**K) / (1 - momentum)) / (1 - momentum) / K)
    assert ratio > 1.5


def test_scaffold_steps_is_declared_and_reads_the_client_momentum():
    alg = build_algorithm(Config(method="scaffold", momentum=0.5, scaffold_steps="effective"))
    assert alg.correction.steps == "effective" and alg.correction.momentum == 0.5
    assert build_algorithm(Config(method="scaffold")).correction.steps == "local"
    with pytest.raises(ValueError, match="scaffold_steps"):
        Config(method="scaffold", scaffold_steps="kaveh")
    # without momentum the effective steps are the local steps: both readings train the same model
    _assert_trees_close(_final(method="scaffold", scaffold_steps="effective"), _final(method="scaffold"),
                        rtol=0, atol=0)
    assert not torch.allclose(_final(method="scaffold", momentum=0.5, scaffold_steps="effective")["classifier.weight"],
                              _final(method="scaffold", momentum=0.5)["classifier.weight"])

def test_method_strings_compose_parts():
    alg = build_algorithm(Config(method="fedlc+scaffold", tau=0.7))
    assert isinstance(alg.loss, CalibratedLoss) and alg.loss.tau == 0.7
    assert isinstance(alg.correction, Scaffold) and isinstance(alg.aggregator, WeightedMean)
    alg = build_algorithm(Config(method="fedlc+fedprox", mu=0.2))
    assert isinstance(alg.correction, Proximal) and alg.correction.mu == 0.2
    alg = build_algorithm(Config(method="fedavg"))
    assert isinstance(alg.loss, CrossEntropyLoss) and isinstance(alg.correction, NoCorrection)
    assert alg.describe() == {"loss": "cross_entropy", "representation": "none", "correction": "none",
                              "personalization": "shared", "aggregator": "weighted_mean", "server_optimizer": "sgd",
                              "server_training": "none", "stages": "single"}
    assert isinstance(build_algorithm(Config(method="fednova")).aggregator, NormalizedAveraging)
    assert isinstance(build_algorithm(Config(method="fedopt")).server_optimizer, ServerAdam)


# --- reductions on real (small) simulations ------------------------------------------
SMALL = dict(dataset="synthetic", num_clients=5, rounds=3, batch_size=32, local_epochs=1, seed=3)


def _final(**params):
    return run(store=False, progress=False, **{**SMALL, **params}).params


def test_fedprox_with_mu_zero_equals_fedavg():
    _assert_trees_close(_final(method="fedprox", mu=0.0), _final(method="fedavg"), rtol=0, atol=0)
    assert not torch.allclose(_final(method="fedprox", mu=1.0)["classifier.weight"],
                              _final(method="fedavg")["classifier.weight"])


def test_fedlc_with_tau_zero_equals_fedavg():
    _assert_trees_close(_final(method="fedlc", tau=0.0), _final(method="fedavg"))


def test_scaffold_first_round_equals_fedavg_and_single_client_always_does():
    _assert_trees_close(_final(method="scaffold", rounds=1), _final(method="fedavg", rounds=1))
    # with one client c = c_1 after every round, so the correction c − c_1 vanishes
    _assert_trees_close(_final(method="scaffold", num_clients=1, rounds=4),
                        _final(method="fedavg", num_clients=1, rounds=4))
    # ...while with several clients the control variates do change the model
    assert not torch.allclose(_final(method="scaffold")["classifier.weight"],
                              _final(method="fedavg")["classifier.weight"], atol=1e-4)


def test_fednova_equals_fedavg_when_all_clients_take_the_same_steps():
    one_step = dict(batch_size=100_000)  # every client: one full-batch step per epoch
    _assert_trees_close(_final(method="fednova", **one_step), _final(method="fedavg", **one_step))
    assert not torch.allclose(_final(method="fednova")["classifier.weight"],
                              _final(method="fedavg")["classifier.weight"], atol=1e-4)
