"""The client optimizer: SGD with momentum and weight decay, as torch.optim.SGD does it,
in both engines, and FedNova's a_k with momentum."""

import numpy as np
import pytest
import torch

from fedlib import run
from fedlib.algorithms import Algorithm, build_algorithm
from fedlib.algorithms.fedavg import NoCorrection
from fedlib.algorithms.fedprox import Proximal
from fedlib.config import Config
from fedlib.engine import ClientOptimizer, ClientTask, local_update
from fedlib.models import build_model

METHODS = ["fedavg", "fedprox", "scaffold", "fednova", "fedopt", "fedrs", "fedlc", "fedlc+fedprox",
           "fedlc+scaffold"]


@pytest.mark.parametrize("momentum,weight_decay", [(0.0, 0.0), (0.5, 0.0), (0.9, 1e-3), (0.9, 0.0)])
@pytest.mark.parametrize("seed", [0, 1])
def test_local_update_equals_torch_optim_sgd(momentum, weight_decay, seed):
    """A fresh torch.optim.SGD per local update (buffer starts at zero), batches of unequal size."""
    g = torch.Generator().manual_seed(seed)
    x, y = torch.randn(37, 1, 28, 28, generator=g), torch.randint(0, 10, (37,), generator=g)
    torch.manual_seed(seed)
    model = build_model("cnn_mnist", 10, (1, 28, 28))
    start = {k: v.detach().clone() for k, v in model.named_parameters()}
    batches = list(torch.randperm(37, generator=g).split(8))  # 8, 8, 8, 8, 5
    opt = ClientOptimizer(0.05, momentum, weight_decay)
    task = ClientTask(0, torch.arange(37), torch.bincount(y, minlength=10).float(), batches)
    ours = local_update(model, build_algorithm(Config(method="fedavg")), start, task, {}, x, y, opt).local

    reference = build_model("cnn_mnist", 10, (1, 28, 28))
    reference.load_state_dict(start)
    sgd = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=momentum, weight_decay=weight_decay)
    for rows in batches:
        sgd.zero_grad()
        torch.nn.functional.cross_entropy(reference(x[rows]), y[rows]).backward()
        sgd.step()
    for k, v in reference.named_parameters():
        torch.testing.assert_close(ours[k], v.detach(), rtol=1e-5, atol=1e-6)


def test_momentum_changes_the_result_and_zero_momentum_is_plain_sgd():
    kw = dict(dataset="synthetic", num_clients=6, rounds=2, store=False, progress=False, local_epochs=2)
    plain, zero, heavy = run(**kw), run(**kw, momentum=0.0), run(**kw, momentum=0.9)
    for k in plain.params:
        assert torch.equal(plain.params[k], zero.params[k])
    assert any(not torch.allclose(plain.params[k], heavy.params[k]) for k in plain.params)


@pytest.mark.parametrize("method", METHODS)
def test_vectorized_equals_sequential_with_momentum(method):
    kw = dict(dataset="synthetic", synthetic_alpha=0.5, synthetic_beta=0.5, num_clients=12, batch_size=32, seed=0,
              mu=0.1, rounds=3, participation=0.5, local_epochs=2, weight_decay=1e-3, momentum=0.9, method=method,
              store=False, progress=False)
    seq, vec = run(engine="sequential", **kw), run(engine="vectorized", **kw)
    for k in seq.params:
        err = float((vec.params[k] - seq.params[k]).abs().max() / seq.params[k].abs().max())
        assert err < 1e-5, (k, err)
    np.testing.assert_allclose(vec.history["train_loss"], seq.history["train_loss"], rtol=1e-6)


def _unit_gradient_steps(num_steps, lr, momentum, mu=0.0):
    """−(w_τ − w_0)/η of torch.optim.SGD on the scalar loss w + μ/2·w² from w_0 = 0: the ℓ1 norm
    of the gradient-accumulation vector FedNova calls a_k (the local update is linear in the gradients)."""
    w = torch.zeros((), dtype=torch.float64, requires_grad=True)
    sgd = torch.optim.SGD([w], lr=lr, momentum=momentum)
    for _ in range(num_steps):
        sgd.zero_grad()
        (w + 0.5 * mu * w * w).backward()
        sgd.step()
    return float(-w.detach() / lr)


@pytest.mark.parametrize("num_steps", [1, 5, 23])
@pytest.mark.parametrize("momentum", [0.0, 0.5, 0.9])
def test_fednova_effective_steps_with_momentum(num_steps, momentum):
    a = NoCorrection().effective_steps(num_steps, 0.05, momentum)
    assert a == pytest.approx(_unit_gradient_steps(num_steps, 0.05, momentum), rel=1e-9)
    b = Proximal(mu=0.3).effective_steps(num_steps, 0.05, momentum)
    assert b == pytest.approx(_unit_gradient_steps(num_steps, 0.05, momentum, mu=0.3), rel=1e-9)


def test_fednova_with_momentum_reduces_to_fedavg_when_steps_are_equal():
    """Equal τ_k (IID, equal client sizes) make every a_k equal: normalized averaging is FedAvg."""
    kw = dict(dataset="fmnist", partition="iid", num_clients=4, max_train_samples=400, max_test_samples=100,
              batch_size=20, rounds=2, momentum=0.9, store=False, progress=False)
    pytest.importorskip("torchvision")
    from conftest import have_dataset

    if not have_dataset("fmnist"):
        pytest.skip("FashionMNIST not found under FEDLIB_DATA")
    nova, avg = run(method="fednova", **kw), run(method="fedavg", **kw)
    for k in avg.params:
        torch.testing.assert_close(nova.params[k], avg.params[k], rtol=1e-5, atol=1e-7)


def test_momentum_is_validated_before_any_work():
    from fedlib import ConfigError

    with pytest.raises(ConfigError, match=r"momentum must be in \[0, 1\)"):
        Config(momentum=1.0)
    with pytest.raises(ConfigError, match="momentum must be a number"):
        Config(momentum="0.9")
    assert isinstance(Algorithm.compose().correction, NoCorrection)


@pytest.mark.parametrize("momentum,weight_decay", [(0.0, 0.0), (0.5, 0.0), (0.9, 1e-3), (0.0, 1e-3)])
def test_the_in_place_step_gives_the_functional_steps_bits(momentum, weight_decay):
    """Both engines step parameters in place (:func:`sgd_step_`, issue 52: no fresh tensors a step), the
    sequential one from no buffer (None), the vectorized one from a zero buffer; :func:`sgd_step` (new tensors,
    the definition) is the reference, compared bit for bit over six steps from the same gradients, buffer and
    zeros included."""
    from fedlib.engine import sgd_step, sgd_step_

    g = torch.Generator().manual_seed(7)
    opt = ClientOptimizer(0.05, momentum, weight_decay)
    w0 = torch.randn(50, 30, generator=g)
    w0[0] = 0.0  # zeros keep their sign as the functional step gives it
    grads = [torch.randn(50, 30, generator=g) for _ in range(6)]
    for d in grads:
        d[1] = 0.0
    w, buf = w0.clone(), None
    mine, my_buf = w0.clone(), None  # the sequential engine's first step: no buffer yet
    stacked, stacked_buf = w0.clone(), torch.zeros_like(w0)  # the vectorized engine's: a zero buffer, updated
    for d in grads:
        w, buf = sgd_step(w, d, buf, opt)
        my_buf = sgd_step_(mine, d.clone(), my_buf, opt)  # the engine hands over a gradient it owns
        sgd_step_(stacked, d.clone(), stacked_buf, opt)
        assert torch.equal(mine, w) and torch.equal(stacked, w) and (buf is None) == (my_buf is None)
        assert buf is None or (torch.equal(my_buf, buf) and torch.equal(stacked_buf, buf))
    assert not torch.equal(mine, w0)
