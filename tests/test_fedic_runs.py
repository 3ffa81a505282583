"""The FEDIC companion's methods in whole runs on a small long-tailed FMNIST problem: reductions to
FedAvg, both engines, resume after an interrupt, the post-hoc re-evaluation and the teacher report."""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fedlib import run
from fedlib.algorithms.ratio_loss import classifier_updates, ratio_estimate
from fedlib.algorithms.server_training import ServerRound
from fedlib.config import Config
from fedlib.engine import features
from fedlib.simulation import evaluate, prepare, round_algorithm, run_round, simulate, single_thread
from fedlib.store import Store

from conftest import Interrupted, have_dataset, interrupt_after

pytestmark = pytest.mark.skipif(not have_dataset("fmnist"), reason="FashionMNIST not under the data root")

SMALL = dict(dataset="fmnist", model="cnn_mnist", max_train_samples=3000, max_test_samples=500, long_tail_if=10,
             num_clients=6, participation=0.5, batch_size=32, rounds=2, seed=0, lr=0.05, server_aux_per_class=10,
             server_unlabeled="long_tail_dropped", fedic_finetune_steps=3, fedic_calibration_steps=3,
             fedic_distill_steps=3, fedic_ulb_batch_size=16, distill_steps=3, distill_batch_size=16,
             posthoc_epochs=2, fedbe_samples=2)
RUN = dict(store=False, progress=False)


def _cfg(**kw) -> Config:
    return Config(**{**SMALL, **kw})


def _close(a, b, tol=1e-5):
    worst = {k: float((a[k] - b[k]).abs().max() / b[k].abs().max().clamp_min(1e-12)) for k in b}
    assert max(worst.values()) < tol, worst


def test_fedic_without_calibration_and_lambda_0_is_fedavg_then_ce_finetuning_on_d_aux():
    """FT, LA off and λ = 0: the distillation is (1 − 0)·CE on D_aux from the FedAvg model, with one
    torch.optim.Adam kept across rounds (FEDIC's code) -- FedAvg followed by CE fine-tuning."""
    cfg = _cfg(method="fedic", fedic_ft=False, fedic_la=False, fedic_lambda=0.0, fedic_distill_steps=4)
    assert cfg.server_unlabeled == "long_tail_dropped"
    fedic = simulate(cfg, progress=False)
    exp = prepare(cfg.replace(method="fedavg"))
    state = exp.initial_state()
    net = exp.model
    opt = None
    aux_x, aux_y = exp.server_data.aux_x, exp.server_data.aux_y
    with single_thread():
        for r in (1, 2):
            state = run_round(exp, state, r).state  # FedAvg's round
            with torch.no_grad():
                for k, p in net.named_parameters():
                    p.copy_(state.params[k])
            opt = opt or torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=2e-4)
            g = ServerRound(r, None, [], [], None, None, cfg.seed).generator(3)
            for _ in range(4):
                rows = torch.randperm(len(aux_y), generator=g)[:20]
                opt.zero_grad()
                F.cross_entropy(net(aux_x[rows]), aux_y[rows]).backward()
                opt.step()
            state.params = {k: v.detach().clone() for k, v in net.named_parameters()}
    _close(fedic["params"], state.params, 1e-4)


def test_fedavgm_with_zero_momentum_is_fedavg_and_ratio_loss_starts_as_fedavg():
    plain = run(**SMALL, **RUN)
    zero = run(**{**SMALL, "method": "fedavgm", "fedavgm_beta": 0.0}, **RUN)
    for k in plain.params:
        assert torch.equal(zero.params[k], plain.params[k])
    one = run(**{**SMALL, "method": "ratio_loss", "rounds": 1}, **RUN)  # weights 1 in the first round: CE
    first = run(**{**SMALL, "rounds": 1}, **RUN)
    for k in first.params:
        assert torch.equal(one.params[k], first.params[k])


@pytest.mark.parametrize("normalization", ["class_weights", "samples"])
def test_ratio_loss_clients_use_the_weights_the_monitor_estimated_on_the_global_model(normalization):
    cfg = _cfg(method="ratio_loss", ratio_loss_normalization=normalization)
    exp = prepare(cfg)
    state = exp.initial_state()
    with single_thread():
        state = run_round(exp, state, 1).state
    p = state.params
    h = features(exp.model, p, exp.server_data.aux_x)
    ra = ratio_estimate(classifier_updates(h, exp.server_data.aux_y, p["classifier.weight"], p["classifier.bias"]))
    expected = cfg.ratio_loss_alpha + cfg.ratio_loss_beta * ra
    assert torch.allclose(state.server_training_state["class_weights"], expected)
    client_loss = round_algorithm(exp.algorithm, state.server_training_state).loss
    assert torch.equal(client_loss.class_weights, state.server_training_state["class_weights"])
    assert client_loss.normalization == normalization  # the configured mean, every round
    assert (expected != expected[0]).any()  # the weights do differ between classes


NEW_METHODS = ["fed_focal", "ratio_loss", "fedavgm", "feddf", "fedbe", "fedic", "crt", "tau_norm", "lws"]


# FEDIC's server steps use Adam, whose step is ≈ lr·sign(g) where a gradient is tiny: a gradient whose sign
# float32 rounding flips (the engines' clients differ by ~1e-7) moves a parameter by up to 2·lr in one step.
# So FEDIC's engines agree to float rounding only with server learning rates below float32 resolution
# (measured: max |Δ| 6e-8 at lr 1e-5, 1.9e-4 at the default 1e-3, on a CPU with AVX-512).
_TINY_SERVER_LR = {"fedic": dict(fedic_finetune_lr=1e-5, fedic_calibration_lr=1e-5, fedic_distill_lr=1e-5)}


@pytest.mark.parametrize("method", NEW_METHODS)
def test_vectorized_engine_equals_the_sequential_reference(method):
    kw = {**SMALL, "method": method, "momentum": 0.5, **_TINY_SERVER_LR.get(method, {}), **RUN}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to the sequential engine
        vec = run(engine="vectorized", **kw)
    seq = run(engine="sequential", **kw)
    _close(vec.params, seq.params, 1e-4)
    assert vec.final_accuracy == pytest.approx(seq.final_accuracy, abs=2e-3)


def test_fedic_engines_differ_at_most_by_adams_sign_steps_at_the_default_learning_rates():
    """At FEDIC's default server learning rates the engines' difference is bounded by Adam's sign steps:
    at most 2·lr per server step (fine-tuning, calibration and distillation, every round)."""
    kw = {**SMALL, "method": "fedic", "momentum": 0.5, **RUN}
    vec, seq = run(engine="vectorized", **kw), run(engine="sequential", **kw)
    steps = SMALL["rounds"] * (SMALL["fedic_finetune_steps"] + SMALL["fedic_calibration_steps"]
                               + SMALL["fedic_distill_steps"])
    bound = 2 * 1e-3 * steps
    worst = max(float((vec.params[k] - seq.params[k]).abs().max()) for k in seq.params)
    assert 0 <= worst <= bound, (worst, bound)


@pytest.mark.parametrize("method", ["fedic", "ratio_loss", "fedbe", "crt"])
def test_resume_after_an_interrupt_ends_with_the_same_model(tmp_path, method):
    cfg = _cfg(method=method, rounds=3, checkpoint_every=1)
    whole = simulate(cfg, progress=False)
    store = Store(tmp_path)
    with pytest.raises(Interrupted):
        simulate(cfg, store=store, progress=False, on_round_end=interrupt_after(2))
    resumed = simulate(cfg, store=store, progress=False)
    for k in whole["params"]:
        assert torch.equal(whole["params"][k], resumed["params"][k]), k
    assert resumed["summary"]["final_accuracy"] == whole["summary"]["final_accuracy"]


def test_post_hoc_model_is_evaluated_again_and_is_the_final_result():
    r = run(**{**SMALL, "method": "crt"}, **RUN)
    last = r.history.iloc[-1]
    assert last["after_training"] is True or last["after_training"] == 1.0
    exp = prepare(r.config)
    acc, per_class = evaluate(exp.model, r.params, exp.data.test_x, exp.data.test_y, 10)
    assert r.final_accuracy == acc
    np.testing.assert_allclose(r.per_class_accuracy.to_numpy(), per_class)
    plain = run(**SMALL, **RUN)  # cRT's FedAvg rounds are FedAvg's
    before = r.history[r.history["after_training"] != True]  # noqa: E712
    assert before["test_accuracy"].tolist() == plain.history["test_accuracy"].tolist()


def test_fedic_reports_its_teacher_accuracy_at_the_last_round():
    r = run(**{**SMALL, "method": "fedic"}, **RUN)
    assert r.history["teacher_accuracy"].notna().tolist() == [False, True]
    teacher = [r.history.iloc[-1][f"teacher_acc_class_{k}"] for k in range(10)]
    assert r.history.iloc[-1]["teacher_accuracy"] == pytest.approx(np.mean(teacher), abs=0.05)
    assert set(r.group_accuracy) == {"many", "medium", "few"}
