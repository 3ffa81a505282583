"""End-to-end: every method learns, seeds reproduce, the store returns and
resumes runs, and never trusts a corrupted entry."""

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import torch

import fedlib
from fedlib import Config, run
from fedlib.simulation import StagedCheckpoint, prepare, simulate
from fedlib.store import CorruptEntryWarning, Store

from conftest import REPO, have_dataset

METHODS = ["fedavg", "fedprox", "scaffold", "fednova", "fedopt", "fedrs", "fedlc", "fedlc+fedprox",
           "fedlc+scaffold"]
SYNTH = dict(dataset="synthetic", synthetic_alpha=0.5, synthetic_beta=0.5, num_clients=10, rounds=15,
             batch_size=32, local_epochs=1, seed=0)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_learns_on_synthetic(method):
    result = run(method=method, store=False, progress=False, **SYNTH)
    hist = result.history
    assert list(hist["round"]) == list(range(1, 16))
    assert {"round", "test_accuracy", "train_loss", "acc_class_0", "acc_class_9"} <= set(hist.columns)
    assert 0.0 <= result.final_accuracy <= 1.0
    assert result.final_accuracy > 0.3, f"{method}: {result.final_accuracy:.3f} (chance is 0.1)"
    assert hist["train_loss"].iloc[-1] < hist["train_loss"].iloc[0]


@pytest.mark.skipif(not have_dataset("mnist"), reason="MNIST not found under FEDLIB_DATA")
@pytest.mark.parametrize("method", METHODS)
def test_every_method_learns_on_mnist(method):
    result = run(dataset="mnist", method=method, num_clients=5, partition="dirichlet", partition_beta=0.5,
                 max_train_samples=3000, max_test_samples=2000, rounds=3, batch_size=32, lr=0.05,
                 store=False, progress=False)
    assert result.final_accuracy > 0.3, f"{method}: {result.final_accuracy:.3f} (chance is 0.1)"


def test_same_seed_same_result_and_different_seed_differs():
    a = run(method="fedlc+scaffold", store=False, progress=False, **{**SYNTH, "rounds": 4})
    b = run(method="fedlc+scaffold", store=False, progress=False, **{**SYNTH, "rounds": 4})
    c = run(method="fedlc+scaffold", store=False, progress=False, **{**SYNTH, "rounds": 4, "seed": 1})
    for k in a.params:
        assert torch.equal(a.params[k], b.params[k])
    assert a.history.equals(b.history)
    assert not torch.equal(a.params["classifier.weight"], c.params["classifier.weight"])


def test_participation_samples_a_fraction():
    from fedlib.engine import sample_clients

    picks = [sample_clients(20, 0.25, 0, r) for r in range(1, 30)]
    assert all(len(p) == 5 and len(set(p)) == 5 and all(0 <= k < 20 for k in p) for p in picks)
    assert len({tuple(p) for p in picks}) > 10  # rounds draw different clients
    assert picks == [sample_clients(20, 0.25, 0, r) for r in range(1, 30)]


class _Interrupt(Exception):
    pass


@pytest.mark.parametrize("method", ["scaffold", "fedopt", "fedlc"])
def test_resume_after_interrupt_gives_the_same_final_model(tmp_path, method):
    cfg = Config(method=method, checkpoint_every=2, participation=0.5, **{**SYNTH, "rounds": 7})
    reference = simulate(cfg, store=None, progress=False)

    store = Store(tmp_path / "s")

    def interrupt(round_, state):
        if round_ == 5:
            raise _Interrupt

    with pytest.raises(_Interrupt):
        simulate(cfg, store=store, progress=False, on_round_end=interrupt)
    assert store.load_checkpoint(store.key(cfg))["stage_state"]["round"] == 4
    assert store.load_result(store.key(cfg)) is None  # nothing half-finished is offered as a result

    rounds_run = []
    resumed = simulate(cfg, store=store, progress=False, on_round_end=lambda r, s: rounds_run.append(r))
    assert rounds_run == [5, 6, 7]
    for k in reference["params"]:
        assert torch.equal(reference["params"][k], resumed["params"][k]), k
    assert [h["test_accuracy"] for h in resumed["history"]] == [h["test_accuracy"] for h in reference["history"]]


def test_stored_run_is_returned_without_recomputing(tmp_path, monkeypatch):
    params = dict(method="fedlc", **{**SYNTH, "rounds": 3})
    first = run(store=tmp_path, progress=False, **params)

    def boom(*a, **k):
        raise AssertionError("recomputed a stored run")

    monkeypatch.setattr("fedlib.simulation.prepare", boom)
    again = run(store=tmp_path, progress=False, **params)
    assert again.final_accuracy == first.final_accuracy
    assert again.history.equals(first.history)
    with pytest.raises(AssertionError, match="recomputed"):  # a different config is not in the store
        run(store=tmp_path, progress=False, **{**params, "tau": 0.5})


@pytest.mark.parametrize("damage", ["result_json", "params_pt", "truncate_json"])
def test_corrupted_entry_is_detected_and_recomputed(tmp_path, damage):
    params = dict(method="fedavg", **{**SYNTH, "rounds": 2})
    first = run(store=tmp_path, progress=False, **params)
    entry = Store(tmp_path).entry(first.summary["key"])
    if damage == "result_json":
        body = json.loads((entry / "result.json").read_text())
        body["summary"]["final_accuracy"] = 0.99  # a plausible but forged value
        (entry / "result.json").write_text(json.dumps(body))
    elif damage == "params_pt":
        blob = bytearray((entry / "params.pt").read_bytes())
        blob[-10] ^= 0xFF
        (entry / "params.pt").write_bytes(bytes(blob))
    else:
        text = (entry / "result.json").read_text()
        (entry / "result.json").write_text(text[: len(text) // 2])
    with pytest.warns(CorruptEntryWarning):
        again = run(store=tmp_path, progress=False, **params)
    assert again.final_accuracy == first.final_accuracy  # recomputed, not the forged 0.99
    for k in first.params:
        assert torch.equal(first.params[k], again.params[k])


def test_has_result_says_a_run_finished_not_that_it_started(tmp_path):
    cfg = Config(method="fedavg", checkpoint_every=1, **{**SYNTH, "rounds": 3})
    store = Store(tmp_path)
    assert not store.has_result(cfg)

    def interrupt(round_, state):
        if round_ == 2:
            raise _Interrupt

    with pytest.raises(_Interrupt):  # an interrupted run leaves a checkpoint, which is not a result
        simulate(cfg, store=store, progress=False, on_round_end=interrupt)
    assert (store.entry(store.key(cfg)) / "checkpoint.pt").exists() and not store.has_result(cfg)
    simulate(cfg, store=store, progress=False)
    assert store.has_result(cfg) and store.load_result(store.key(cfg)) is not None
    assert not store.has_result(Config(method="fedavg", checkpoint_every=1, **{**SYNTH, "rounds": 3, "seed": 1}))


def test_corrupted_checkpoint_is_not_trusted(tmp_path):
    cfg = Config(method="fedavg", checkpoint_every=1, **{**SYNTH, "rounds": 4})
    store = Store(tmp_path)

    def interrupt(round_, state):
        if round_ == 2:
            raise _Interrupt

    with pytest.raises(_Interrupt):
        simulate(cfg, store=store, progress=False, on_round_end=interrupt)
    ckpt = store.entry(store.key(cfg)) / "checkpoint.pt"
    ckpt.write_bytes(ckpt.read_bytes()[:-100])
    rounds_run = []
    with pytest.warns(CorruptEntryWarning):
        out = simulate(cfg, store=store, progress=False, on_round_end=lambda r, s: rounds_run.append(r))
    assert rounds_run == [1, 2, 3, 4]  # started over instead of trusting it
    reference = simulate(cfg, store=None, progress=False)
    for k in reference["params"]:
        assert torch.equal(reference["params"][k], out["params"][k])


def test_result_model_reproduces_the_reported_accuracy():
    result = run(method="fedavg", store=False, progress=False, **{**SYNTH, "rounds": 3})
    exp = prepare(result.config)
    with torch.no_grad():
        pred = result.model()(exp.data.test_x).argmax(1)
    assert float((pred == exp.data.test_y).float().mean()) == pytest.approx(result.final_accuracy)
    pc = result.per_class_accuracy
    assert len(pc) == 10 and np.nanmax(pc.values) <= 1.0


def test_cli_prints_progress_and_a_json_summary_last(tmp_path):
    cmd = [sys.executable, "-m", "fedlib", "run", "dataset=synthetic", "method=fedlc", "tau=1.0",
           "num_clients=5", "rounds=3", "batch_size=32", "--store", str(tmp_path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert 0 <= summary["final_accuracy"] <= 1
    assert summary["config"]["tau"] == 1.0 and summary["config"]["method"] == "fedlc"
    assert summary["config"]["batch_size"] == 32 and summary["config"]["lr"] == 0.01  # full resolved config
    assert "round" in proc.stderr  # tqdm progress


def test_cli_rejects_bad_values_with_the_parameter_named():
    proc = subprocess.run([sys.executable, "-m", "fedlib", "run", "dataset=synthetic", "participation=2"],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 2
    assert "participation must be in (0, 1]" in proc.stderr


def test_cli_reports_a_missing_dataset_in_one_line(tmp_path):
    env = {**os.environ, "FEDLIB_DATA": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "fedlib", "run", "dataset=cifar100", "rounds=1", "--no-store"],
                          capture_output=True, text=True, cwd=REPO, timeout=120, env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fedlib: error: dataset 'cifar100' not found")
    assert "Traceback" not in proc.stderr and "cifar-100-python" in lines[0]


def test_cli_params_lists_core_and_method_parameters():
    proc = subprocess.run([sys.executable, "-m", "fedlib", "params"], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert proc.returncode == 0
    assert "momentum=0.0" in proc.stdout and "# method fedlc" in proc.stdout and "tau=1.0" in proc.stdout


def test_code_version_covers_training_code_only(tmp_path):
    """Stored results stay valid when presentation code changes (notebook grids, the regeneration
    runner, the papers' values) or when another method's code changes, and not when the run's own
    training code does (the core, its method's modules, its loss, its model)."""
    import shutil
    from pathlib import Path

    from fedlib.store import _code_digest, code_version, run_modules

    pkg = tmp_path / "fedlib"
    shutil.copytree(Path(fedlib.__file__).parent, pkg, ignore=shutil.ignore_patterns("__pycache__"))
    fedlc = Config(method="fedlc+scaffold", dataset="fmnist")
    extra = run_modules(fedlc)
    assert set(extra) == {"algorithms/fedlc.py", "algorithms/scaffold.py", "losses/logit_calibration.py",
                          "models/fedlc_cnn.py", "models/pooling.py"}
    base = _code_digest(pkg, extra)
    assert base == code_version(fedlc) and base != code_version(Config(method="fedprox", dataset="fmnist"))

    def edited(rel):
        original = (pkg / rel).read_text()
        (pkg / rel).write_text(original + "\n# edited\n")
        changed = _code_digest(pkg, extra) != base
        (pkg / rel).write_text(original)
        return changed

    for rel in ("repro/regenerate.py", "repro/artefacts/report.py", "repro/verdict/compare.py", "repro/artefacts/index.py", "repro/run/grid.py",
                "store.py", "__main__.py", "papers/fedlc/experiments.py",
                "papers/fedlc/reported.py", "algorithms/fedprox.py", "losses/restricted_softmax.py",
                "models/resnet.py"):
        assert not edited(rel), rel
    for rel in ("losses/logit_calibration.py", "algorithms/fedlc.py", "algorithms/scaffold.py", "vectorized.py",
                "engine.py", "simulation.py", "algorithms/fedavg.py", "models/fedlc_cnn.py", "models/pooling.py", "algorithms/kinds.py",
                "algorithms/composition.py", "client.py", "server.py", "state.py", "experiment.py", "evaluation.py"):
        assert edited(rel), rel
    (pkg / "algorithms" / "newmethod.py").write_text("x = 1\n")  # adding a method keeps the stored runs
    assert _code_digest(pkg, extra) == base


class _Payload:
    """An object a pickle-based load would construct (and could run code for)."""

    def __reduce__(self):
        return (print, ("this must never run",))


def test_an_entry_that_needs_more_than_weights_is_refused(tmp_path, capsys):
    """Checkpoints load with weights_only=True: an entry holding pickled objects is refused like a
    corrupted one (with a valid checksum, so only the content is at fault), and nothing in it runs."""
    import hashlib
    import io

    cfg = Config(**{**SYNTH, "rounds": 3})
    store = Store(tmp_path)
    key = store.key(cfg)
    entry = store.entry(key)
    entry.mkdir(parents=True)
    buffer = io.BytesIO()
    torch.save({"stage": 0, "payload": _Payload()}, buffer)
    blob = buffer.getvalue()
    (entry / "checkpoint.pt").write_bytes(blob)
    (entry / "checkpoint.sha256").write_text(hashlib.sha256(blob).hexdigest())
    with pytest.warns(CorruptEntryWarning):
        assert store.load_checkpoint(key) is None
    assert "this must never run" not in capsys.readouterr().out
    assert not (entry / "checkpoint.pt").exists()


def test_a_divergence_before_an_interrupt_is_still_reported_after_the_resume(tmp_path):
    """The first non-finite round is part of the checkpoint (run_round reports it; the driver keeps it
    with the run, not in the round state): a run interrupted after it reports the same round, once."""
    from conftest import Interrupted, interrupt_after

    cfg = Config(dataset="synthetic", num_clients=4, rounds=4, batch_size=32, lr=1e38, checkpoint_every=1)
    store = Store(tmp_path)
    with pytest.warns(RuntimeWarning, match="after round 1"), pytest.raises(Interrupted):
        simulate(cfg, store=store, progress=False, on_round_end=interrupt_after(2))
    assert StagedCheckpoint.from_dict(store.load_checkpoint(store.key(cfg))).diverged_round == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the resumed stage knows it diverged already: no second warning
        resumed = simulate(cfg, store=store, progress=False)
    assert resumed["summary"]["diverged_round"] == 1


# ------------------------------------------------------------------------------ the staged driver's checkpoint
STAGED = dict(method="fedconcat", dataset="synthetic", num_clients=4, batch_size=32, seed=3, num_clusters=2,
              encoder_rounds=2, classifier_rounds=2, fedconcat_kmeans_n_init=1, checkpoint_every=1)


def test_the_checkpoint_round_trips_through_the_store(tmp_path):
    """Every field comes back from the store as it went in (tensors bit for bit), and the record is frozen."""
    import dataclasses

    cfg = Config(**{**SYNTH, "rounds": 3})
    store = Store(tmp_path)
    ckpt = StagedCheckpoint(stage=2, outputs={"clustering": {"clusters": [0, 1, 1], "w": torch.randn(3, 2)}},
                            stage_state={"round": 1, "params": {"fc.weight": torch.randn(4, 3)}},
                            history=[{"round": 1, "test_accuracy": 0.25, "stage": "cluster_0"}], elapsed_s=1.5,
                            diverged_round=1, diverged_stage="cluster_0", personal_final={"personalized_accuracy": 0.5})
    store.save_checkpoint(store.key(cfg), cfg, ckpt.to_dict())
    back = StagedCheckpoint.from_dict(store.load_checkpoint(store.key(cfg)))
    assert [f.name for f in dataclasses.fields(back)] == list(ckpt.to_dict())
    assert (back.stage, back.history, back.elapsed_s, back.diverged_round, back.diverged_stage, back.personal_final) \
        == (2, ckpt.history, 1.5, 1, "cluster_0", {"personalized_accuracy": 0.5})
    assert back.outputs["clustering"]["clusters"] == [0, 1, 1]
    assert torch.equal(back.outputs["clustering"]["w"], ckpt.outputs["clustering"]["w"])
    assert torch.equal(back.stage_state["params"]["fc.weight"], ckpt.stage_state["params"]["fc.weight"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        back.stage = 3


def _interrupted_staged_run(store: Store, cfg: Config) -> dict:
    """The stored checkpoint of a FedConcat run stopped in its second cluster's first round."""
    from conftest import Interrupted

    calls = []

    def hook(r, state):
        calls.append(r)
        if len(calls) == 3:  # cluster_0 rounds 1-2, cluster_1 round 1
            raise Interrupted

    with warnings.catch_warnings(), pytest.raises(Interrupted):
        warnings.simplefilter("ignore")
        simulate(cfg, store=store, progress=False, on_round_end=hook)
    return store.load_checkpoint(store.key(cfg))


def _resume(store: Store, cfg: Config) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return simulate(cfg, store=store, progress=False)


def test_an_interrupted_staged_run_resumes_to_the_same_model(tmp_path):
    cfg = Config(**STAGED)
    whole = _resume(None, cfg)
    store = Store(tmp_path)
    saved = StagedCheckpoint.from_dict(_interrupted_staged_run(store, cfg))
    assert saved.stage == 2 and saved.stage_state["round"] == 1 and set(saved.outputs) == {"clustering", "cluster_0"}
    resumed = _resume(store, cfg)
    for k in whole["params"]:
        assert torch.equal(whole["params"][k], resumed["params"][k]), k
    assert resumed["history"] == whole["history"]
    assert resumed["summary"]["stage_outputs"] == whole["summary"]["stage_outputs"]


def test_a_checkpoint_of_the_earlier_untyped_layout_is_read(tmp_path):
    """A checkpoint written before the typed record (``diverged`` as a dict, ``personal_final`` among the
    outputs, no fields of its own for them) resumes like one written now."""
    cfg = Config(**STAGED)
    whole = _resume(None, cfg)
    store = Store(tmp_path)
    new = _interrupted_staged_run(store, cfg)
    old = {k: new[k] for k in ("stage", "outputs", "stage_state", "history", "elapsed_s")}
    store.save_checkpoint(store.key(cfg), cfg, old)
    resumed = _resume(store, cfg)
    for k in whole["params"]:
        assert torch.equal(whole["params"][k], resumed["params"][k]), k
    assert resumed["history"] == whole["history"]
    legacy = StagedCheckpoint.from_dict({**old, "diverged": {"round": 3, "stage": "cluster_1"},
                                         "outputs": {**old["outputs"], "personal_final": {"pa": 0.5}}})
    assert (legacy.diverged_round, legacy.diverged_stage, legacy.personal_final) == (3, "cluster_1", {"pa": 0.5})
    assert "personal_final" not in legacy.outputs


def test_a_checkpoint_that_is_no_staged_checkpoint_is_ignored_and_the_run_retrains(tmp_path):
    cfg = Config(**{**SYNTH, "rounds": 3, "checkpoint_every": 1})
    fresh = simulate(cfg, store=None, progress=False)
    store = Store(tmp_path)
    store.save_checkpoint(store.key(cfg), cfg, {"round": 2, "params": {}})  # valid checksum, foreign content
    with pytest.raises(ValueError, match="not a staged checkpoint"):
        StagedCheckpoint.from_dict(store.load_checkpoint(store.key(cfg)))
    with pytest.warns(RuntimeWarning, match="checkpoint ignored, the run starts over"):
        again = simulate(cfg, store=store, progress=False)
    for k in fresh["params"]:
        assert torch.equal(fresh["params"][k], again["params"][k]), k
    with pytest.raises(ValueError, match="unknown fields"):
        StagedCheckpoint.from_dict({"stage": 0, "outputs": {}, "history": [], "next_round": 3})
