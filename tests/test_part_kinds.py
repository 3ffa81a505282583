"""The part kinds added for personalization, representation losses, server training and
stages, exercised with small toy parts registered here (the papers' own methods have
their own tests).  Each check compares with an independent reference: a hand-written
loop, the vectorized engine against the sequential one, a resumed run against an
uninterrupted one, or a reduction to FedAvg."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from fedlib import run
from fedlib.algorithms import Algorithm, register_method
from fedlib.algorithms.kinds import Personalization, RepresentationLoss, ServerTraining, Stages
from fedlib.algorithms.personalization import KeepLocal, Phase
from fedlib.algorithms.stages import SingleStage, Stage
from fedlib.config import Config
from fedlib.engine import ClientOptimizer, local_update
from fedlib.models import body_keys, head_keys
from fedlib.client import client_tasks
from fedlib.simulation import prepare, run_round, simulate, single_thread
from fedlib.store import Store

SYNTH = dict(dataset="synthetic", synthetic_alpha=0.5, synthetic_beta=0.5, num_clients=8, batch_size=32, seed=0,
             rounds=3, participation=0.5, local_epochs=2, store=False, progress=False)


# ------------------------------------------------------------------------------ toy parts
@dataclasses.dataclass(frozen=True)
class _HeadThenBody(Personalization):
    """FedRep-like: the head stays local; E−1 epochs train the head, then 1 the body."""

    name = "toy_head_then_body"
    personalized = True

    def local_keys(self, model):
        return head_keys(model)

    def phases(self, model, local_epochs):
        return (Phase(local_epochs - 1, head_keys(model)), Phase(1, body_keys(model)))


@dataclasses.dataclass(frozen=True)
class _PullToGlobal(RepresentationLoss):
    """A representation term needing a reference model: μ·‖h − h_global‖² (per-sample mean), and a
    per-client state (how many local updates the client made)."""

    mu: float = 0.5
    name = "toy_pull"
    active = True

    def references(self, received, state):
        return {"global": received}

    def __call__(self, h, refs, targets, sample_weight=None):
        per = ((h - refs["global"]) ** 2).sum(-1)
        if sample_weight is None:
            return self.mu * per.mean()
        return self.mu * (per * sample_weight).sum() / sample_weight.sum().clamp_min(1e-12)

    def state_after(self, local, state):
        return {"updates": torch.as_tensor(float(state.get("updates", torch.tensor(0.0))) + 1.0)}


@dataclasses.dataclass(frozen=True)
class _ShrinkOnServer(ServerTraining):
    """Server training with state: after aggregation, w ← w − s·(w − mean of the client models), s
    counting rounds; checks that the server sees every sampled client's own model."""

    name = "toy_shrink"

    def init_state(self, params):
        return {"rounds": torch.tensor(0.0)}

    def after_round(self, ctx, params, state):
        mean = {k: torch.stack([p[k] for p in ctx.client_params]).mean(0) for k in params}
        s = 0.5
        return ({k: v - s * (v - mean[k]) for k, v in params.items()}, {"rounds": state["rounds"] + 1})


@dataclasses.dataclass(frozen=True)
class _TwoStages(Stages):
    """Stage 1 computes a client split (even / odd clients); stage 2 trains FedAvg on the even clients only."""

    name = "toy_two_stages"

    def plan(self, exp):
        def split(e, outputs):
            return {"even": [k for k in range(e.num_clients) if k % 2 == 0]}

        def build(e, outputs):
            members = outputs["split"]["even"]
            return dataclasses.replace(e, client_indices=[e.client_indices[k] for k in members],
                                       class_counts=e.class_counts[members],
                                       algorithm=dataclasses.replace(e.algorithm, stages=SingleStage()))

        return [Stage("split", compute=split),
                Stage("train", rounds=exp.config.rounds, build=build,
                      finish=lambda sub, outputs, params: {"params": params, "members": outputs["split"]["even"]})]

    def final_model(self, model, config):
        return model


register_method("toy_head_then_body", parts={"personalization": lambda c: _HeadThenBody()})
register_method("toy_pull", parts={"representation": lambda c: _PullToGlobal()})
register_method("toy_shrink", parts={"server_training": lambda c: _ShrinkOnServer()})
register_method("toy_two_stages", parts={"stages": lambda c: _TwoStages()})
register_method("toy_fedper", parts={"personalization": lambda c: KeepLocal(select=head_keys, label="toy_fedper")})


def _cfg(**changes) -> Config:
    return Config(**{**{k: v for k, v in SYNTH.items() if k not in ("store", "progress")}, **changes})


def _close(a: dict, b: dict, tol: float = 1e-5):
    for k in b:
        err = float((a[k] - b[k]).abs().max() / b[k].abs().max().clamp_min(1e-30))
        assert err < tol, (k, err)


# ------------------------------------------------------------------------------ personalization
@pytest.mark.parametrize("method", ["toy_fedper", "toy_head_then_body", "toy_head_then_body+fedprox",
                                    "toy_fedper+scaffold"])
def test_personalized_methods_equal_on_both_engines(method):
    kw = dict(SYNTH, method=method, momentum=0.5, mu=0.1, personal_eval_every=3, balanced_test="full")
    seq, vec = run(engine="sequential", **kw), run(engine="vectorized", **kw)
    _close(vec.params, seq.params)
    assert vec.personalized_accuracy == pytest.approx(seq.personalized_accuracy, abs=1e-9)
    assert vec.drift_accuracy == pytest.approx(seq.drift_accuracy, abs=1e-9)


def test_local_parameters_never_leave_the_client_and_persist():
    cfg = _cfg(method="toy_fedper")
    exp = prepare(cfg)
    state = exp.initial_state()
    initial_head = {k: state.params[k].clone() for k in head_keys(exp.model)}
    for r in (1, 2):
        state = run_round(exp, state, r).state
    for k, v in initial_head.items():  # the server's copy of the head never moves
        assert torch.equal(state.params[k], v)
    trained = [c for c, cs in state.client_states.items() if "local" in cs]
    assert trained and all(set(state.client_states[c]["local"]) == set(initial_head) for c in trained)
    # a client's next update starts from its own head
    task = client_tasks(exp, state, [trained[0]], 3, 1)[0]
    for k in initial_head:
        assert torch.equal(task.start[k], state.client_states[trained[0]]["local"][k])


def test_phases_train_only_their_parameters():
    cfg = _cfg(method="toy_head_then_body",
                 local_epochs=3)
    exp = prepare(cfg)
    state = exp.initial_state()
    task = client_tasks(exp, state, [0], 1, 1)[0]
    steps_per_epoch = len(task.batches) // 3
    assert task.phases == [(2 * steps_per_epoch, head_keys(exp.model)), (steps_per_epoch, body_keys(exp.model))]
    # the same update by hand: head-only steps, then body-only steps
    head_only = dataclasses.replace(task, phases=[(2 * steps_per_epoch, head_keys(exp.model))],
                                    batches=task.batches[:2 * steps_per_epoch])
    opt = ClientOptimizer(cfg.lr)
    mid = local_update(exp.model, exp.algorithm, state.params, head_only, {}, exp.data.train_x,
                       exp.data.train_y, opt).local
    for k in body_keys(exp.model):
        assert torch.equal(mid[k], task.start[k] if task.start is not None else state.params[k])
    body_only = dataclasses.replace(task, start=mid, phases=[(steps_per_epoch, body_keys(exp.model))],
                                    batches=task.batches[2 * steps_per_epoch:])
    by_hand = local_update(exp.model, exp.algorithm, state.params, body_only, {}, exp.data.train_x,
                           exp.data.train_y, opt).local
    whole = local_update(exp.model, exp.algorithm, state.params, task, {}, exp.data.train_x, exp.data.train_y,
                         opt).local
    for k in whole:
        assert torch.equal(whole[k], by_hand[k]), k


def test_personalized_models_of_fedavg_are_locally_trained_models():
    """FedAvg's PM under 'local_update' is the client's model after a local update; under 'stored' it
    is the global model, so its pooled accuracy equals the global model's on the per-client sets."""
    kw = dict(SYNTH, participation=1.0, personal_eval_every=3, balanced_test="full")
    stored = run(**kw, personalized_model="stored")
    updated = run(**kw, personalized_model="local_update")
    exp = prepare(stored.config)
    rows = np.concatenate(exp.client_test_indices)
    from fedlib.simulation import evaluate

    acc, _ = evaluate(exp.model, stored.params, exp.data.test_x[rows], exp.data.test_y[rows], 10)
    assert stored.personalized_accuracy == pytest.approx(acc, abs=1e-12)
    assert updated.personalized_accuracy != stored.personalized_accuracy



def test_personalized_classes_held_never_predicts_a_class_the_client_has_no_data_of():
    """personalized_classes='held' masks, per client, the classes it holds no training sample of:
    with FedAvg's stored PM (the global model) Eq. 8 equals a NumPy argmax over the held classes'
    logits; training is untouched, and a client missing a class makes the two readings differ."""
    kw = dict(SYNTH, participation=1.0, personal_eval_every=3, balanced_test="full", personalized_model="stored")
    every, held = run(**kw), run(**kw, personalized_classes="held")
    for k in every.params:
        assert torch.equal(every.params[k], held.params[k]), k
    exp = prepare(held.config)
    assert (exp.class_counts == 0).any()  # some client lacks a class
    correct = total = 0
    for client, rows in enumerate(exp.balanced_test_indices):
        r = torch.as_tensor(rows)
        logits = torch.func.functional_call(exp.model, held.params, (exp.data.test_x[r],)).numpy()
        logits[:, exp.class_counts[client] == 0] = -np.inf
        correct += int((logits.argmax(1) == exp.data.test_y[r].numpy()).sum())
        total += len(rows)
    assert held.drift_accuracy == pytest.approx(correct / total, abs=1e-12)
    assert held.drift_accuracy < every.drift_accuracy
    assert "personalized_classes" not in every.config.key_dict()  # the default keeps stored runs' keys

# ------------------------------------------------------------------------------ representation losses
def test_a_representation_loss_with_a_reference_model_equals_on_both_engines():
    kw = dict(SYNTH, method="toy_pull+fedprox", momentum=0.9, mu=0.1)
    seq, vec = run(engine="sequential", **kw), run(engine="vectorized", **kw)
    _close(vec.params, seq.params)
    np.testing.assert_allclose(vec.history["train_loss"], seq.history["train_loss"], rtol=1e-6)


def test_a_zero_weight_representation_loss_is_fedavg():
    plain = run(**SYNTH)
    exp = prepare(_cfg(method="toy_pull"))
    exp.algorithm = dataclasses.replace(exp.algorithm, representation=_PullToGlobal(mu=0.0))
    zero = simulate(exp.config, experiment=exp, progress=False)
    _close(zero["params"], plain.params, 1e-6)


# ------------------------------------------------------------------------------ server training
def test_server_training_sees_the_client_models_and_keeps_state(tmp_path):
    cfg = _cfg(method="toy_shrink",
                 checkpoint_every=1)
    exp = prepare(cfg)
    state = exp.initial_state()
    before = {k: v.clone() for k, v in state.params.items()}
    # reference: FedAvg's round, then the shrink towards the plain mean of the client models
    plain = prepare(cfg.replace(method="fedavg"))
    ref_state = plain.initial_state()
    ref_state = run_round(plain, ref_state, 1).state
    state = run_round(exp, state, 1).state
    assert float(state.server_training_state["rounds"]) == 1.0
    assert any(not torch.equal(state.params[k], ref_state.params[k]) for k in before)
    # resumable: interrupted after round 2 of 3 ends with the same model
    store = Store(tmp_path)
    whole = simulate(cfg, progress=False)

    class Stop(Exception):
        pass

    def stop(r, s):
        if r == 2:
            raise Stop

    with pytest.raises(Stop):
        simulate(cfg, store=store, progress=False, on_round_end=stop)
    resumed = simulate(cfg, store=store, progress=False)
    for k in whole["params"]:
        assert torch.equal(whole["params"][k], resumed["params"][k])


# ------------------------------------------------------------------------------ stages
def test_two_stages_run_in_turn_and_resume_at_the_stage(tmp_path):
    cfg = _cfg(method="toy_two_stages",
                 checkpoint_every=1, participation=1.0)
    whole = simulate(cfg, progress=False)
    assert whole["summary"]["stage_outputs"]["members"] == [0, 2, 4, 6]
    assert {h["stage"] for h in whole["history"]} == {"train"}
    # reference: FedAvg on the even clients alone, by hand
    exp = prepare(cfg.replace(method="fedavg"))
    sub = dataclasses.replace(exp, client_indices=exp.client_indices[::2], class_counts=exp.class_counts[::2])
    state = sub.initial_state()
    with single_thread():  # as simulate runs
        for r in range(1, cfg.rounds + 1):
            state = run_round(sub, state, r).state
    for k in state.params:
        assert torch.equal(whole["params"][k], state.params[k])

    class Stop(Exception):
        pass

    def stop(r, s):
        if r == 2:
            raise Stop

    store = Store(tmp_path)
    with pytest.raises(Stop):
        simulate(cfg, store=store, progress=False, on_round_end=stop)
    saved = store.load_checkpoint(store.key(cfg))
    assert saved["stage"] == 1 and saved["stage_state"]["round"] == 2 and "split" in saved["outputs"]
    resumed = simulate(cfg, store=store, progress=False)
    for k in whole["params"]:
        assert torch.equal(whole["params"][k], resumed["params"][k])


def test_describe_names_every_part_kind():
    alg = Algorithm.compose()
    assert set(alg.describe()) == {"loss", "representation", "correction", "personalization", "aggregator",
                                   "server_optimizer", "server_training", "stages"}
