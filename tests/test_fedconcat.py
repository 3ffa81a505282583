"""FedConcat and FedConcat-ID (Diao, Li, He, AAAI 2024) and their models, against
independent references: K = 1 with one stage-3 round is FedAvg followed by a linear
probe computed by hand (float64), K-means recovers planted groups, Eq. 3's inferred
distributions track the true ones, the engines agree, and an interrupted run resumes
at the stage and round where it stopped."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.metrics import adjusted_rand_score

from fedlib import run
from fedlib.__main__ import main
from fedlib.algorithms import fedconcat as fc
from fedlib.config import Config, ConfigError
from fedlib.engine import client_batches
from fedlib.models import body_keys, build_model
from fedlib.simulation import evaluate, prepare, simulate, single_thread
from fedlib.store import Store
from tests.conftest import have_dataset

needs_fmnist = pytest.mark.skipif(not have_dataset("fmnist"), reason="FashionMNIST absent")

TINY = dict(dataset="fmnist", partition="classes_per_client", partition_k=2, num_clients=10, max_train_samples=600,
            max_test_samples=200, model="simple_cnn", batch_size=32, local_epochs=1, lr=0.05, seed=0,
            method="fedconcat", num_clusters=2, encoder_rounds=2, classifier_rounds=2)


def _close(a: dict, b: dict, tol: float = 1e-5):
    assert set(a) == set(b)
    for k in b:
        err = float((a[k] - b[k]).abs().max() / b[k].abs().max().clamp_min(1e-30))
        assert err < tol, (k, err)


# ------------------------------------------------------------------------------ models
@pytest.mark.parametrize("name,shape,total,encoder", [
    ("simple_cnn", (1, 28, 28), 44_426, 43_576),  # notes/fedconcat.md §1a
    ("simple_cnn", (3, 32, 32), 62_006, 61_156),
    ("vgg9", (3, 32, 32), 3_491_530, 3_486_400),
])
def test_models_have_the_codes_sizes_and_split(name, shape, total, encoder):
    torch.manual_seed(0)
    net = build_model(name, 10, shape)
    assert sum(p.numel() for p in net.parameters()) == total
    assert sum(p.numel() for k, p in net.named_parameters() if k in body_keys(net)) == encoder
    assert not list(net.buffers())
    x = torch.randn(2, *shape)
    h = net.features(x)
    assert h.shape == (2, net.classifier.in_features) and bool((h >= 0).all())  # ReLU features
    assert torch.equal(net(x), net.classifier(h))


def test_concatenated_model_concatenates_the_encoders_in_cluster_order():
    torch.manual_seed(0)
    base = build_model("simple_cnn", 10, (1, 28, 28))
    parts = [build_model("simple_cnn", 10, (1, 28, 28)) for _ in range(3)]
    concat = fc.ConcatenatedModel(base, 3)
    concat.load_state_dict({**{f"encoders.{i}.{k}": v for i, p in enumerate(parts)
                               for k, v in p.state_dict().items() if not k.startswith("classifier")},
                            "classifier.weight": torch.zeros(10, 252), "classifier.bias": torch.zeros(10)})
    x = torch.randn(4, 1, 28, 28)
    assert torch.equal(concat.features(x), torch.cat([p.features(x) for p in parts], 1))
    got = fc.concatenated_features(base, [dict(p.named_parameters()) for p in parts], x, chunk=3)
    assert torch.allclose(got, concat.features(x), atol=1e-6)


# ------------------------------------------------------------------------------ stage 1
def test_kmeans_recovers_planted_groups():
    rng = np.random.default_rng(0)
    centres = np.eye(10)[[0, 3, 6, 9]] * 0.7 + 0.03  # four planted label distributions
    truth = rng.integers(0, 4, size=60)
    points = np.abs(centres[truth] + rng.normal(0, 0.02, size=(60, 10)))
    points /= points.sum(1, keepdims=True)
    labels = fc.kmeans_clusters(points, 4, n_init=10, seed=0)
    assert adjusted_rand_score(truth, labels) == 1.0
    assert np.array_equal(labels, fc.kmeans_clusters(points, 4, n_init=10, seed=0))  # seeded
    with pytest.raises(ValueError, match="num_clusters"):
        fc.kmeans_clusters(points[:3], 4, n_init=10, seed=0)


@needs_fmnist
def test_clustering_stage_groups_clients_by_label_set():
    """#C=1 with 20 clients: the clients holding the same class form the planted groups (Eq. 2)."""
    cfg = Config(**{**TINY, "partition_k": 1, "num_clients": 20, "num_clusters": 10})
    exp = prepare(cfg)
    out = exp.algorithm.stages.plan(exp)[0].compute(exp, {})
    np.testing.assert_allclose(out["label_distributions"].numpy(), exp.class_counts / exp.class_counts.sum(1)[:, None])
    held = exp.class_counts.argmax(1)
    assert adjusted_rand_score(held, out["clusters"]) == 1.0


@needs_fmnist
def test_inferred_distributions_track_the_true_ones():
    """Eq. 3 on #C=2: the round-1 local models, probed with random inputs, favour their clients' classes."""
    cfg = Config(**{**TINY, "method": "fedconcat_id", "num_clients": 8, "max_train_samples": 1600,
                    "fedconcat_id_probe_size": 1000, "num_clusters": 3})
    exp = prepare(cfg)
    with single_thread():
        inferred = exp.algorithm.stages.plan(exp)[0].compute(exp, {})["label_distributions"].numpy()
    true = fc.label_distributions(exp.class_counts)
    np.testing.assert_allclose(inferred.sum(1), 1.0, atol=1e-9)
    assert np.corrcoef(true.ravel(), inferred.ravel())[0, 1] > 0.5
    assert all(true[i, inferred[i].argmax()] > 0 for i in range(len(true)))


def test_probe_inputs_are_uniform_pixels_after_normalisation():
    x = fc.probe_inputs("uniform_pixels", 20_000, (1, 2, 2), ((0.5,), (0.25,)), seed=3)
    pixels = x * 0.25 + 0.5
    assert 0 <= float(pixels.min()) and float(pixels.max()) < 1
    assert float(pixels.mean()) == pytest.approx(0.5, abs=0.01)
    assert torch.equal(x, fc.probe_inputs("uniform_pixels", 20_000, (1, 2, 2), ((0.5,), (0.25,)), seed=3))


# ------------------------------------------------------------------------------ the whole method
@needs_fmnist
@pytest.mark.parametrize("steps,weighting", [(0, "samples"), (3, "uniform")])
def test_one_cluster_and_one_classifier_round_is_fedavg_then_a_linear_probe(steps, weighting):
    kw = {**TINY, "num_clusters": 1, "classifier_rounds": 1, "local_epochs": 2, "momentum": 0.5,
          "weight_decay": 1e-3, "store": False, "progress": False}
    got = run(**kw, fedconcat_classifier_steps=steps, fedconcat_classifier_weighting=weighting)
    fedavg = run(**{**kw, "method": "fedavg", "rounds": kw["encoder_rounds"]})
    encoder = {k: v for k, v in fedavg.params.items() if not k.startswith("classifier")}
    for k, v in encoder.items():  # stage 2 with K = 1 is FedAvg on all clients, frozen afterwards
        assert torch.equal(got.params[f"encoders.0.{k}"], v), k

    # stage 3 by hand, in float64: one FedAvg round of a linear classifier on the frozen features
    exp = prepare(got.config)
    net = build_model("simple_cnn", 10, (1, 28, 28))
    net.load_state_dict(fedavg.params)
    with torch.no_grad():
        h = net.features(exp.data.train_x).double()
    head = fc.initial_classifier(84, 10, seed=0)
    w0, b0 = head.classifier.weight.detach().double(), head.classifier.bias.detach().double()
    c = got.config
    news, sizes = [], []
    for k, rows in enumerate(exp.client_indices):
        batches = client_batches(rows, 1 if steps else c.local_epochs, c.batch_size, c.seed, 1, k, 1)
        batches = batches[:steps] if steps else batches
        w, b = w0.clone(), b0.clone()
        buf = None
        for r in batches:
            wr, br = w.clone().requires_grad_(True), b.clone().requires_grad_(True)
            loss = F.cross_entropy(h[r] @ wr.T + br, exp.data.train_y[r])
            gw, gb = torch.autograd.grad(loss, (wr, br))
            d = (gw + c.weight_decay * w, gb + c.weight_decay * b)
            buf = d if buf is None else (c.momentum * buf[0] + d[0], c.momentum * buf[1] + d[1])
            w, b = w - c.lr * buf[0], b - c.lr * buf[1]
        news.append((w, b))
        sizes.append(len(rows))
    weights = np.array(sizes) / sum(sizes) if weighting == "samples" else np.full(len(sizes), 1 / len(sizes))
    w = sum(float(p) * n[0] for p, n in zip(weights, news))
    b = sum(float(p) * n[1] for p, n in zip(weights, news))
    assert torch.allclose(got.params["classifier.weight"].double(), w, atol=1e-5)
    assert torch.allclose(got.params["classifier.bias"].double(), b, atol=1e-5)
    # the reported accuracy is the concatenated model's on the global test set
    model = got.model()
    assert isinstance(model, fc.ConcatenatedModel)
    acc, _ = evaluate(model, dict(model.named_parameters()), exp.data.test_x, exp.data.test_y, 10)
    assert got.final_accuracy == pytest.approx(acc, abs=1e-12)


@needs_fmnist
def test_user_contract_and_cli_report_the_clusters():
    kw = {k: v for k, v in TINY.items()}
    r = run(**kw, store=False, progress=False)
    assert len(r.clusters) == 10 and set(r.clusters) == {0, 1}
    assert r.summary["stage_rounds"] == {"clustering": 0, "cluster_0": 2, "cluster_1": 2, "classifier": 2}
    assert set(r.history["stage"]) == {"classifier"}
    assert 0.0 <= r.final_accuracy <= 1.0
    with pytest.raises(AttributeError, match="stage outputs"):
        r.no_such_output  # noqa: B018
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["run", *[f"{k}={v}" for k, v in kw.items()], "--no-store", "--quiet"]) == 0
    report = json.loads(out.getvalue().strip().splitlines()[-1])
    assert report["stage_outputs"]["clusters"] == r.clusters
    assert report["final_accuracy"] == pytest.approx(r.final_accuracy, abs=1e-12)


@needs_fmnist
def test_features_are_computed_once_not_per_round(monkeypatch):
    calls = []
    real = fc.concatenated_features
    monkeypatch.setattr(fc, "concatenated_features", lambda *a, **k: calls.append(len(a[2])) or real(*a, **k))
    r = run(**{**TINY, "classifier_rounds": 4}, store=False, progress=False)
    assert calls == [600, 200]  # the training and the test inputs, once each for 4 rounds
    assert len(r.history) == 4


@needs_fmnist
@pytest.mark.parametrize("extra", [dict(momentum=0.9), dict(method="fedconcat_id", fedconcat_id_reuse_round=True,
                                                           fedconcat_id_probe_size=500, encoder_rounds=3)])
def test_vectorized_equals_sequential(extra):
    kw = {**TINY, **extra, "store": False, "progress": False}
    seq, vec = run(engine="sequential", **kw), run(engine="vectorized", **kw)
    assert seq.clusters == vec.clusters
    _close(vec.params, seq.params)
    np.testing.assert_allclose(vec.history["test_accuracy"], seq.history["test_accuracy"], atol=1e-9)


@needs_fmnist
def test_fedconcat_id_reusing_round_1_starts_clusters_from_the_members_average():
    kw = {**TINY, "method": "fedconcat_id", "fedconcat_id_probe_size": 500, "fedconcat_id_reuse_round": True,
          "encoder_rounds": 1, "store": False, "progress": False}
    r = run(**kw)
    assert r.summary["stage_rounds"]["cluster_0"] == 0  # T_e − 1 rounds
    exp = prepare(r.config)
    from fedlib.simulation import train_locally

    with single_thread():
        local = [o.local for o in train_locally(exp, exp.initial_state(), list(range(10)), 0, 1)]
    for i in range(2):
        members = [k for k, c in enumerate(r.clusters) if c == i]
        n = np.array([len(exp.client_indices[k]) for k in members], dtype=np.float64)
        for key in ("conv1.weight", "fc2.bias"):
            ref = sum(w * local[k][key].double() for w, k in zip(n / n.sum(), members))
            assert torch.allclose(r.params[f"encoders.{i}.{key}"].double(), ref, atol=1e-6)


@needs_fmnist
def test_interrupted_run_resumes_at_the_stage_and_round(tmp_path):
    cfg = Config(**{**TINY, "encoder_rounds": 3, "classifier_rounds": 3, "checkpoint_every": 1})
    whole = simulate(cfg, progress=False)
    store = Store(tmp_path)

    class Stop(Exception):
        pass

    def stop_at(n):
        calls = []

        def hook(r, s):
            calls.append(r)
            if len(calls) == n:
                raise Stop
        return hook

    with pytest.raises(Stop):  # cluster_0 rounds 1-3, cluster_1 rounds 1-2
        simulate(cfg, store=store, progress=False, on_round_end=stop_at(5))
    saved = store.load_checkpoint(store.key(cfg))
    assert saved["stage"] == 2 and saved["stage_state"]["round"] == 2
    assert set(saved["outputs"]) == {"clustering", "cluster_0"}
    with pytest.raises(Stop):  # cluster_1 round 3, classifier rounds 1-2
        simulate(cfg, store=store, progress=False, on_round_end=stop_at(3))
    saved = store.load_checkpoint(store.key(cfg))
    assert saved["stage"] == 3 and saved["stage_state"]["round"] == 2
    resumed = simulate(cfg, store=store, progress=False)
    assert resumed["summary"]["stage_outputs"]["clusters"] == whole["summary"]["stage_outputs"]["clusters"]
    for k in whole["params"]:
        assert torch.equal(whole["params"][k], resumed["params"][k]), k
    assert [h["test_accuracy"] for h in resumed["history"]] == [h["test_accuracy"] for h in whole["history"]]


def test_bad_input_is_refused_before_any_work():
    with pytest.raises(ConfigError, match="num_clusters"):
        Config(method="fedconcat", num_clients=4, num_clusters=5)
    with pytest.raises(ConfigError, match="fedconcat_cluster_init"):
        Config(method="fedconcat", fedconcat_cluster_init="random")
    with pytest.raises(ConfigError, match="encoder_rounds"):
        Config(method="fedconcat_id", encoder_rounds=0)
    with pytest.raises(ConfigError, match="fedconcat_id_probe_size"):
        Config(method="fedconcat_id", fedconcat_id_probe_size=0)
