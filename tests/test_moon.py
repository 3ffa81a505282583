"""MOON (Li, He, Song, CVPR 2021): the model-contrastive loss against a float64
re-derivation, one client's local update against a hand-written torch.optim loop,
μ = 0 against FedAvg on the same model, and the vectorized engine against the
sequential one."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fedlib import run
from fedlib.algorithms.moon import ProjectedModel
from fedlib.algorithms.representation import NoRepresentationLoss
from fedlib.config import Config
from fedlib.engine import ClientOptimizer, local_update
from fedlib.losses import model_contrastive_loss
from fedlib.client import client_tasks
from fedlib.simulation import prepare, run_round, simulate, single_thread, train_locally
from tests.conftest import have_dataset

pytestmark = pytest.mark.skipif(not have_dataset("fmnist"), reason="FashionMNIST absent")

TINY = dict(dataset="fmnist", partition="classes_per_client", partition_k=3, num_clients=4, max_train_samples=400,
            max_test_samples=100, model="simple_cnn", batch_size=50, local_epochs=1, lr=0.05, rounds=2, seed=0,
            method="moon", moon_out_dim=16, moon_mu=5.0, moon_temperature=0.5)


def _reference_loss(z, zg, zp, tau, w=None):
    z, zg, zp = (np.asarray(a, dtype=np.float64) for a in (z, zg, zp))
    cos = lambda a, b: (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))  # noqa: E731
    pos, neg = np.exp(cos(z, zg) / tau), np.exp(cos(z, zp) / tau)
    per = -np.log(pos / (pos + neg))  # MOON Eq. 3
    return per.mean() if w is None else (per * w).sum() / w.sum()


def test_loss_matches_a_float64_rederivation():
    g = torch.Generator().manual_seed(0)
    z, zg, zp = (torch.randn(7, 5, generator=g) for _ in range(3))
    w = torch.tensor([1, 1, 0, 1, 2, 0, 1], dtype=torch.float32)
    for tau in (0.1, 0.5, 2.0):
        assert float(model_contrastive_loss(z, zg, zp, tau)) == pytest.approx(_reference_loss(z, zg, zp, tau), rel=1e-5)
        assert float(model_contrastive_loss(z, zg, zp, tau, sample_weight=w)) == pytest.approx(
            _reference_loss(z, zg, zp, tau, w.numpy()), rel=1e-5)
    per = model_contrastive_loss(z, zg, zp, 0.5, reduction="none")
    assert per.shape == (7,) and bool((per > 0).all())


def test_loss_is_log2_with_zero_gradient_when_previous_is_global():
    z = torch.randn(6, 4, dtype=torch.float64, requires_grad=True)
    zg = torch.randn(6, 4, dtype=torch.float64)
    loss = model_contrastive_loss(z, zg, zg.clone(), 0.5)
    assert float(loss.detach()) == pytest.approx(np.log(2.0), abs=1e-12)
    (grad,) = torch.autograd.grad(loss, z)
    assert float(grad.abs().max()) < 1e-12


def test_loss_refuses_bad_input():
    z = torch.randn(3, 4)
    with pytest.raises(ValueError, match="temperature"):
        model_contrastive_loss(z, z, z, 0.0)
    with pytest.raises(ValueError, match="same shape"):
        model_contrastive_loss(z, z[:2], z, 0.5)


def test_projection_head_is_moon_design():
    cfg = Config(**TINY)
    exp = prepare(cfg)
    assert isinstance(exp.model, ProjectedModel)
    p = dict(exp.model.named_parameters())
    assert p["projection.0.weight"].shape == (84, 84) and p["projection.2.weight"].shape == (16, 84)
    assert p["classifier.weight"].shape == (10, 16)
    assert not any(k.startswith("encoder.classifier") for k in p)  # the base head is replaced
    x = exp.data.train_x[:3]
    assert torch.equal(exp.model(x), exp.model.classifier(exp.model.features(x)))


def test_local_update_equals_a_hand_written_loop_with_previous_model():
    """Round 2 (the client has a previous model) by hand: nn.Modules and torch.optim.SGD."""
    cfg = Config(**{**TINY, "momentum": 0.9, "weight_decay": 1e-4, "engine": "sequential"})
    exp = prepare(cfg)
    state = exp.initial_state()
    with single_thread():
        state = run_round(exp, state, 1).state
        # the stored previous model is the client's round-1 local model (all but the output layer)
        first = train_locally(exp, exp.initial_state(), [2], 1, 1)[0].local
        previous = state.client_states[2]["representation"]["previous"]
        assert set(previous) == {k for k in first if not k.startswith("classifier")}
        for k, v in previous.items():
            assert torch.equal(v, first[k]), k
        task = client_tasks(exp, state, [2], 2, 1)[0]
        opt = ClientOptimizer(cfg.lr, cfg.momentum, cfg.weight_decay)
        got = local_update(exp.model, exp.algorithm, state.params, task, {}, exp.data.train_x, exp.data.train_y,
                           opt).local

        def module(params):
            m = prepare(cfg).model
            m.load_state_dict({**dict(m.named_parameters()), **params}, strict=True)
            return m

        net, glob, prev = module(state.params), module(state.params), module(previous)
        sgd = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
        for rows in task.batches:
            x, y = exp.data.train_x[rows], exp.data.train_y[rows]
            z = net.features(x)
            with torch.no_grad():
                zg, zp = glob.features(x), prev.features(x)
            logits = torch.stack([F.cosine_similarity(z, zg, dim=-1), F.cosine_similarity(z, zp, dim=-1)], 1) / 0.5
            con = F.cross_entropy(logits, torch.zeros(len(y), dtype=torch.long))  # MOON code's form of Eq. 3
            loss = F.cross_entropy(net.classifier(z), y) + 5.0 * con
            sgd.zero_grad()
            loss.backward()
            sgd.step()
    for k, v in net.named_parameters():
        err = float((got[k] - v.detach()).abs().max() / v.detach().abs().max())
        assert err < 1e-5, (k, err)


def test_mu_zero_equals_fedavg_on_the_same_model():
    cfg = Config(**{**TINY, "moon_mu": 0.0, "momentum": 0.5})
    zero = simulate(cfg, progress=False)
    exp = prepare(cfg)
    exp.algorithm = dataclasses.replace(exp.algorithm, representation=NoRepresentationLoss())  # FedAvg's part
    plain = simulate(cfg, experiment=exp, progress=False)
    for k, v in plain["params"].items():
        assert torch.allclose(zero["params"][k], v, rtol=0, atol=1e-6), k


@pytest.mark.parametrize("extra", [dict(participation=0.5, rounds=3), dict(momentum=0.9, method="moon+fedprox", mu=0.1)])
def test_vectorized_equals_sequential(extra):
    kw = {**TINY, **extra, "store": False, "progress": False}
    seq, vec = run(engine="sequential", **kw), run(engine="vectorized", **kw)
    for k, v in seq.params.items():
        err = float((vec.params[k] - v).abs().max() / v.abs().max().clamp_min(1e-30))
        assert err < 1e-5, (k, err)
    np.testing.assert_allclose(vec.history["train_loss"], seq.history["train_loss"], rtol=1e-5)
