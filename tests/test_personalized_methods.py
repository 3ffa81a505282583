"""The personalized methods of FedABC's comparison (Local-only, FedPer, LG-FedAvg, FedRep,
FedRoD, FedABC, and FedAvg/FedProx/SCAFFOLD through their personalized models), each against
an independent reference: the other engine, hand-written loops with ``torch.optim.SGD``,
reductions to FedAvg or to a plain loss, and an uninterrupted run for a resumed one.

Multi-round comparisons run in float64 (model and data converted after ``prepare``): in
float32, a ReLU network's rounding differences between the engines (bmm vs. mm summation
order, ~1e-7 per step) are amplified by training to ~1e-4 after a few rounds, which would
hide a real error; in float64 the engines agree to ~1e-15.  One-round comparisons run in
float32 at the project's 1e-5.
"""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest
import torch
import torch.nn.functional as F

from fedlib import run
from fedlib.__main__ import main
from fedlib.algorithms import Algorithm
from fedlib.algorithms.fedabc import FEDABC_WI
from fedlib.algorithms.kinds import ClientLoss
from fedlib.algorithms.fedrep import HeadThenBody
from fedlib.algorithms.fedrod import PersonalHead, WithPersonalHead
from fedlib.algorithms.personalization import KeepLocal, LocallyTrained, Phase
from fedlib.config import Config, ConfigError
from fedlib.engine import client_batches, local_update, sample_clients
from fedlib.losses import balanced_softmax_loss
from fedlib.models import build_model, head_keys
from fedlib.client import client_optimizer, client_tasks
from fedlib.simulation import personalized_evaluation, prepare, run_round, simulate, single_thread
from fedlib.store import Store

from conftest import Interrupted, have_dataset, interrupt_after

SYNTH = dict(dataset="synthetic", synthetic_alpha=0.5, synthetic_beta=0.5, num_clients=8, batch_size=32, seed=0,
             rounds=3, participation=0.5, local_epochs=2, model="mlp", momentum=0.5, weight_decay=1e-3, mu=0.1,
             balanced_test="full")
METHODS = ["local", "fedper", "lg_fedavg", "fedrep", "fedrod", "fedabc", "fedabc+fedprox", "fedabc+scaffold",
           "fedrep+scaffold", "fedrod+fedprox", "lg_fedavg+scaffold", "fedper+fedprox", "local+fedprox"]


def _cfg(**changes) -> Config:
    return Config(**{**SYNTH, **changes})


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-30))


def _close(a: dict, b: dict, tol: float) -> None:
    assert a.keys() == b.keys()
    worst = {k: _rel(a[k], b[k]) for k in b}
    assert max(worst.values()) < tol, worst


def _prepare64(config: Config, algorithm: Algorithm | None = None):
    exp = prepare(config)
    exp.model.double()
    exp.data = dataclasses.replace(exp.data, train_x=exp.data.train_x.double(), test_x=exp.data.test_x.double())
    if algorithm is not None:  # a part of another kind on the same model
        exp.algorithm = algorithm
    return exp


def _simulate64(config: Config, algorithm: Algorithm | None = None, store=None, on_round_end=None) -> dict:
    """Run ``config`` in float64; returns the result with ``client_states`` (after the last round) added."""
    states = {}

    def keep(round_, state):
        states["client_states"] = copy.deepcopy(state.client_states)
        if on_round_end is not None:
            on_round_end(round_, state)

    out = simulate(config, experiment=_prepare64(config, algorithm), progress=False, store=store, on_round_end=keep)
    return {**out, **states}


# ------------------------------------------------------------------------------ engines
@pytest.mark.parametrize("method", ["local", "fedper", "lg_fedavg", "fedrep", "fedrod", "fedabc", "fedabc+scaffold",
                                    "fedrep+scaffold"])
def test_one_round_equals_the_sequential_reference_in_float32(method):
    kw = dict(SYNTH, method=method, rounds=1, store=False, progress=False)
    seq, vec = run(engine="sequential", **kw), run(engine="vectorized", **kw)
    _close(vec.params, seq.params, 1e-5)
    assert vec.personalized_accuracy == seq.personalized_accuracy
    assert vec.drift_accuracy == seq.drift_accuracy


@pytest.mark.parametrize("method", METHODS)
def test_rounds_with_partial_participation_equal_the_sequential_reference(method):
    seq = _simulate64(_cfg(method=method, engine="sequential"))
    vec = _simulate64(_cfg(method=method, engine="vectorized"))
    _close(vec["params"], seq["params"], 1e-10)
    assert vec["summary"]["personalized_per_client"] == seq["summary"]["personalized_per_client"]
    assert vec["summary"]["drift_accuracy"] == seq["summary"]["drift_accuracy"]
    assert seq["client_states"].keys() == vec["client_states"].keys()
    for k, cs in seq["client_states"].items():
        if "local" in cs:
            _close(vec["client_states"][k]["local"], cs["local"], 1e-10)


# ------------------------------------------------------------------------------ hand-written references
def _sgd(model, params: dict, batches, x, y, config: Config, trainable=None, loss=F.cross_entropy) -> dict:
    """A fresh ``torch.optim.SGD`` (as every fedlib local update) over ``batches``; only ``trainable``
    parameters (None: all) are given to the optimiser."""
    net = copy.deepcopy(model)
    net.load_state_dict(params)
    chosen = [p for n, p in net.named_parameters() if trainable is None or n in trainable]
    opt = torch.optim.SGD(chosen, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)
    with single_thread():  # as fedlib trains (and fast on a busy machine)
        for rows in batches:
            opt.zero_grad()
            loss(net(x[torch.as_tensor(rows)]), y[torch.as_tensor(rows)]).backward()
            opt.step()
    return {k: v.detach().clone() for k, v in net.state_dict().items()}


def _pooled_accuracy(model, models: dict, sets, x, y) -> float:
    correct = total = 0
    for k, rows in enumerate(sets):
        net = copy.deepcopy(model)
        net.load_state_dict(models[k])
        with torch.no_grad():
            correct += int((net(x[torch.as_tensor(rows)]).argmax(1) == y[torch.as_tensor(rows)]).sum())
        total += len(rows)
    return correct / total


def _batches(exp, k: int, round_: int, stream: int):
    c = exp.config
    return client_batches(exp.client_indices[k], c.local_epochs, c.batch_size, c.seed, round_, k, stream)


def test_local_only_is_each_client_training_alone():
    config = _cfg(method="local")
    got = _simulate64(config)
    exp = _prepare64(config)
    x, y = exp.data.train_x, exp.data.train_y
    init = exp.initial_params()
    models = {k: dict(init) for k in range(exp.num_clients)}
    for r in range(1, config.rounds + 1):
        for k in sample_clients(exp.num_clients, config.participation, config.seed, r):
            models[k] = _sgd(exp.model, models[k], _batches(exp, k, r, 1), x, y, config)
    for k, cs in got["client_states"].items():
        _close(cs["local"], models[k], 1e-10)
    pms = {k: _sgd(exp.model, models[k], _batches(exp, k, config.rounds, 3), x, y, config)
           for k in range(exp.num_clients)}
    assert got["summary"]["personalized_accuracy"] == _pooled_accuracy(
        exp.model, pms, exp.client_test_indices, exp.data.test_x, exp.data.test_y)
    for k, v in got["params"].items():  # nothing is communicated: the server keeps the initial model
        assert torch.equal(v, init[k])


def test_fedavg_is_evaluated_through_locally_trained_models():
    config = _cfg(method="fedavg", personal_eval_every=3)
    got = _simulate64(config)
    exp = _prepare64(config)
    x, y = exp.data.train_x, exp.data.train_y
    pms = {k: _sgd(exp.model, got["params"], _batches(exp, k, config.rounds, 3), x, y, config)
           for k in range(exp.num_clients)}
    assert got["summary"]["personalized_accuracy"] == _pooled_accuracy(
        exp.model, pms, exp.client_test_indices, exp.data.test_x, exp.data.test_y)
    assert got["summary"]["drift_accuracy"] == _pooled_accuracy(
        exp.model, pms, exp.balanced_test_indices, exp.data.test_x, exp.data.test_y)


def test_fedrep_phases_update_only_their_parameters():
    config = _cfg(method="fedrep", local_epochs=3, fedrep_body_epochs=1, participation=1.0)
    exp = _prepare64(config)
    state = exp.initial_state()
    with single_thread():
        state = run_round(exp, state, 1).state
    task = client_tasks(exp, state, [2], 2, 1)[0]
    head = head_keys(exp.model)
    body = tuple(k for k in task.start if k not in head)
    per_epoch = len(task.batches) // 3
    assert task.phases == [(2 * per_epoch, head), (per_epoch, body)]
    opt = client_optimizer(config)
    x, y = exp.data.train_x, exp.data.train_y
    whole = local_update(exp.model, exp.algorithm, state.params, task, {}, x, y, opt).local
    head_phase = dataclasses.replace(task, phases=task.phases[:1], batches=task.batches[:2 * per_epoch])
    mid = local_update(exp.model, exp.algorithm, state.params, head_phase, {}, x, y, opt).local
    for k in body:
        assert torch.equal(mid[k], task.start[k])  # the head epochs leave the body alone
    for k in head:
        assert torch.equal(whole[k], mid[k])  # the body epochs leave the head alone
    # reference: SGD on the head alone, then SGD on the body alone
    ref_mid = _sgd(exp.model, task.start, task.batches[:2 * per_epoch], x, y, config, trainable=head)
    ref = _sgd(exp.model, ref_mid, task.batches[2 * per_epoch:], x, y, config, trainable=body)
    _close(whole, ref, 1e-10)


# ------------------------------------------------------------------------------ reductions
def _equal(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in b:
        assert torch.equal(a[k], b[k]), k


def test_with_nothing_local_fedper_fedrep_and_lg_reduce_to_fedavg():
    kw = dict(SYNTH, engine="sequential", store=False, progress=False)
    fedavg = run(method="fedavg", **kw).params
    nothing = lambda model: ()  # noqa: E731
    for method, part in (("fedper", KeepLocal(select=nothing)),
                         ("fedrep", HeadThenBody(body_epochs=SYNTH["local_epochs"], head=nothing))):
        exp = prepare(_cfg(method=method, engine="sequential"))
        exp.algorithm = dataclasses.replace(exp.algorithm, personalization=part)
        _equal(simulate(exp.config, experiment=exp, progress=False)["params"], fedavg)
    _equal(run(method="lg_fedavg", lg_global_layers=3, **kw).params, fedavg)  # the MLP's 3 layers all global
    _equal(run(method="lg_fedavg", lg_global_layers=0, **kw).params, run(method="local", **kw).params)


def test_lg_fedavg_keeps_the_lower_layers_local():
    exp = prepare(_cfg(method="lg_fedavg"))
    assert exp.algorithm.personalization.local_keys(exp.model) == ("fc1.weight", "fc1.bias")
    convnet = build_model("convnet", 10, (3, 32, 32))
    assert exp.algorithm.personalization.local_keys(convnet) == (
        "conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias", "fc1.weight", "fc1.bias")


@dataclasses.dataclass(frozen=True)
class _OneVsAllBCE(ClientLoss):
    """Plain one-vs-all binary cross-entropy, summed over classes, mean over the batch."""

    name = "one_vs_all_bce"

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        onehot = (targets.unsqueeze(-1) == torch.arange(logits.shape[-1])).to(logits.dtype)
        per = F.binary_cross_entropy_with_logits(logits, onehot, reduction="none").sum(-1)
        if sample_weight is None:
            return per.mean()
        return (per * sample_weight).sum() / sample_weight.sum()


def test_fedabc_wi_is_fedavg_with_one_vs_all_bce():
    config = _cfg(method="fedabc", **FEDABC_WI)
    bce = _simulate64(config, Algorithm.compose(loss=_OneVsAllBCE(), personalization=LocallyTrained()))
    _close(_simulate64(config)["params"], bce["params"], 1e-10)


@dataclasses.dataclass(frozen=True)
class _BalancedSoftmax(ClientLoss):
    name = "balanced_softmax"

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        return balanced_softmax_loss(logits, targets, class_counts, sample_weight=sample_weight)


def test_fedrod_shared_model_is_fedavg_with_balanced_softmax():
    """The P-head's loss sees detached features and generic logits: the body and the G-head train
    exactly as FedAvg with the balanced softmax alone."""
    rod = _simulate64(_cfg(method="fedrod"))
    bsm = _simulate64(_cfg(method="fedavg"), Algorithm.compose(loss=_BalancedSoftmax()))
    _close({k: v for k, v in rod["params"].items() if not k.startswith("personal_head")}, bsm["params"], 1e-10)


@dataclasses.dataclass(frozen=True)
class _FrozenZeroHead(PersonalHead):
    """FedRoD's P-head at zero and never trained."""

    def phases(self, model, local_epochs):
        return (Phase(local_epochs, tuple(k for k, _ in model.named_parameters() if k not in self.local_keys(model))),)


@pytest.mark.parametrize("personalized_model", ["stored", "local_update"])
def test_fedrod_with_a_zero_frozen_personal_head_predicts_with_the_generic_head(personalized_model):
    config = _cfg(method="fedrod", fedrod_personal_init="zeros", personalized_model=personalized_model)
    exp = prepare(config)
    exp.algorithm = dataclasses.replace(exp.algorithm, personalization=_FrozenZeroHead(init="zeros"))
    state = exp.initial_state()
    with single_thread():
        for r in (1, 2):
            state = run_round(exp, state, r).state
        got = personalized_evaluation(exp, state, 2)
    assert all(float(cs["local"][k].abs().max()) == 0 for cs in state.client_states.values() for k in cs["local"])
    # reference: the plain base model with the generic parameters (after the same local update)
    generic = build_model(config.model, 10, exp.data.input_shape)
    plain = dataclasses.replace(exp, model=generic, algorithm=Algorithm.compose(
        loss=exp.algorithm.loss, personalization=KeepLocal(select=lambda m: ())))
    if personalized_model == "local_update":
        tasks = client_tasks(exp, state, list(range(exp.num_clients)), 2, 3)
        models = [local_update(exp.model, exp.algorithm, state.params, t, {}, exp.data.train_x, exp.data.train_y,
                               client_optimizer(config)).local for t in tasks]
    else:
        models = [state.params] * exp.num_clients
    models = {k: {n: v for n, v in m.items() if not n.startswith("personal_head")} for k, m in enumerate(models)}
    assert got["personalized_accuracy"] == _pooled_accuracy(plain.model, models, exp.client_test_indices,
                                                            exp.data.test_x, exp.data.test_y)


def test_fedrod_model_keeps_names_and_detaches_the_personal_head():
    torch.manual_seed(0)
    base = build_model("mlp", 10, (60,))
    names = [k for k, _ in base.named_parameters()]
    model = WithPersonalHead(base, "generic")
    assert [k for k, _ in model.named_parameters()] == names + ["personal_head.weight", "personal_head.bias"]
    torch.testing.assert_close(model.personal_head.weight, base.classifier.weight)
    x = torch.randn(5, 60)
    out = model(x)
    assert out.shape == (5, 20)
    torch.testing.assert_close(out[:, :10], base(x))
    grads = torch.autograd.grad(out[:, 10:].sum(), [model.fc1.weight, model.personal_head.weight], allow_unused=True)
    assert float(grads[0].abs().max()) == 0 and float(grads[1].abs().max()) > 0  # they do not reach the body
    part = PersonalHead()
    torch.testing.assert_close(part.personal_logits(out), out[:, :10] + out[:, 10:])
    torch.testing.assert_close(part.global_logits(out), out[:, :10])
    assert float(WithPersonalHead(base, "zeros").personal_head.weight.detach().abs().max()) == 0


# ------------------------------------------------------------------------------ resumption
@pytest.mark.parametrize("method", ["fedrep", "fedrod", "local"])
def test_a_resumed_run_ends_identically(tmp_path, method):
    kw = dict(SYNTH, method=method, checkpoint_every=1, progress=False)
    whole = run(store=False, **kw)
    store = Store(tmp_path)
    config = _cfg(method=method, checkpoint_every=1)
    with pytest.raises(Interrupted):
        simulate(config, store=store, progress=False, on_round_end=interrupt_after(2))
    saved = store.load_checkpoint(store.key(config))
    assert saved["stage_state"]["round"] == 2
    assert any("local" in cs for cs in saved["stage_state"]["client_states"].values())  # per-client state stored
    resumed = run(store=store, **kw)
    _equal(resumed.params, whole.params)
    assert resumed.personalized_accuracy == whole.personalized_accuracy
    assert resumed.drift_accuracy == whole.drift_accuracy


# ------------------------------------------------------------------------------ the user-facing contract
def test_personalized_methods_report_personal_metrics_and_fedavg_refuses_them(capsys):
    result = run(**SYNTH, method="fedper", store=False, progress=False)
    assert result.config.personal_eval_every == SYNTH["rounds"]
    assert 0 <= result.personalized_accuracy <= 1 and 0 <= result.drift_accuracy <= 1
    assert 0 <= result.final_accuracy <= 1
    args = [f"{k}={v}" for k, v in SYNTH.items()] + ["method=fedper"]
    assert main(["run", *args, "--no-store", "--quiet"]) == 0
    printed = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    for name in ("personalized_accuracy", "drift_accuracy", "final_accuracy"):
        assert printed[name] == getattr(result, name)
    plain = run(**SYNTH, method="fedavg", store=False, progress=False)
    with pytest.raises(ValueError, match="personal_eval_every"):
        plain.personalized_accuracy
    with pytest.raises(ValueError, match="personal_eval_every"):
        plain.drift_accuracy
    assert "personalized_accuracy" not in plain.to_json_summary()
    exp = prepare(plain.config)
    assert exp.client_test_indices is None
    with pytest.raises(ValueError, match="no per-client test sets"):
        personalized_evaluation(exp, exp.initial_state(), 1)


def test_bad_method_parameters_are_refused_before_any_work():
    with pytest.raises(ConfigError, match="fedrep_body_epochs must be ≤ local_epochs=2"):
        _cfg(method="fedrep", fedrep_body_epochs=3)
    for bad in (dict(fedabc_tau_pos=1.5), dict(fedabc_gamma=-1.0), dict(fedabc_tau_neg_absent=-0.1),
                dict(lg_global_layers=-1), dict(fedrod_personal_init="random"), dict(fedabc_normalization="x")):
        name = next(iter(bad))
        with pytest.raises(ConfigError, match=name):
            _cfg(method="fedabc", **bad)
    with pytest.raises(ConfigError, match="both set"):
        _cfg(method="fedabc+fedper")


@pytest.mark.skipif(not have_dataset("mnist"), reason="MNIST not found under FEDLIB_DATA")
def test_the_mnist_contract_on_a_reduced_run():
    """``fedlib.run(dataset="mnist", partition="dirichlet", partition_beta=0.3, method=..., seed=0)``,
    reduced (1 round, a 3000-sample subset) to stay fast."""
    small = dict(model="mlp", num_clients=10, rounds=1, max_train_samples=3000, max_test_samples=2000,
                 store=False, progress=False)
    for method in ("fedabc", "local", "fedrod"):
        r = run(dataset="mnist", partition="dirichlet", partition_beta=0.3, method=method, seed=0, **small)
        assert 0 < r.personalized_accuracy <= 1 and 0 < r.drift_accuracy <= 1 and 0 <= r.final_accuracy <= 1
        assert len(r.personalized_per_client) == 10
