"""Carrying stored runs over a change of the training code (``fedlib.repro.carry``): a check that trains a tiny run
of each group under the old and the new code and compares them bit for bit, and a copy of the stale entries it
found identical to their current keys -- never of another group's, nor of an entry no record maps."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import REPO
from fedlib.config import Config
from fedlib.repro import carry
from fedlib.simulation import simulate
from fedlib.store import Store, code_version

TINY = dict(dataset="synthetic", num_clients=4, rounds=2, batch_size=32, seed=0)


def _plant(store: Store, cfg: dict, version: str) -> str:
    """A finished run of ``cfg`` (trained here, in seconds) stored under the key code ``version`` gives it."""
    config = Config.from_dict(cfg)
    run = simulate(config, store=None, progress=False)
    key = carry._key_for(config, version)
    store.save_result(key, config, run["summary"], run["history"], run["params"])
    return key


def test_the_key_rule_is_the_stores():
    config = Config.from_dict({**TINY, "method": "fedprox"})
    assert carry._key_for(config, code_version(config)) == Store("/").key(config)


def test_a_record_carries_only_its_identical_groups_stale_entries(tmp_path):
    store = Store(tmp_path)
    a, b = {**TINY, "method": "fedavg"}, {**TINY, "method": "fedprox"}
    a_old, b_old = _plant(store, a, "old-a"), _plant(store, b, "old-b")
    current = _plant(store, {**a, "seed": 1}, code_version(Config.from_dict(a)))  # trained at this code: not stale
    assert sorted(k for k, _ in carry.stale_entries(store)) == sorted([a_old, b_old])
    group = carry._group(a)
    record = {"name": "test.json", "from_commit": "abc", "to_commit": "def",
              "versions": [{"path": group, "from": "old-a", "to": code_version(Config.from_dict(a))},
                           # the same versions under another group (another engine): no licence for a's entries
                           {"path": carry._group(b), "from": "old-a", "to": code_version(Config.from_dict(b))}]}
    done = carry.carry_store(store, [record], log=lambda *_: None)
    new_a = store.key(Config.from_dict(a))
    assert done == [(a_old, new_a)]
    got, old = store.load_result(new_a), store.load_result(a_old)
    assert got["history"] == old["history"] and all((got["params"][k] == old["params"][k]).all() for k in old["params"])
    note = json.loads((store.entry(new_a) / "carried.json").read_text())
    assert note == {"record": "test.json", "from_key": a_old, "from_version": "old-a",
                    "to_version": code_version(Config.from_dict(a)), "from_commit": "abc", "to_commit": "def"}
    assert store.load_result(store.key(Config.from_dict(b))) is None  # b's old version is not mapped for b
    assert store.entry(current).exists() and carry.carry_store(store, [record], log=lambda *_: None) == []


def test_a_carried_copy_of_a_run_still_training_is_carried_again_unless_it_trained_on_itself(tmp_path):
    """A run still training under the old code when it was carried left a checkpoint copy behind: once its source
    moves on (here: it finished), the next carry copies it again; a copy that was itself resumed under its new key
    (written after its carry) is never replaced."""
    import os

    store = Store(tmp_path)
    cfg = {**TINY, "method": "fedavg"}
    config = Config.from_dict(cfg)
    old = carry._key_for(config, "old")
    store.save_checkpoint(old, config, {"history": [{"round": 1, "test_accuracy": 0.5}], "stage_state": {"round": 1}})
    record = {"name": "test.json", "versions": [{"path": carry._group(cfg), "from": "old", "to": code_version(config)}]}
    new = store.key(config)
    assert carry.carry_store(store, [record], log=lambda *_: None) == [(old, new)]
    note = store.entry(new) / "carried.json"
    t = note.stat().st_mtime
    assert carry.carry_store(store, [record], log=lambda *_: None) == []  # nothing moved since
    finished = _plant(Store(tmp_path / "other"), cfg, "old")
    for name in ("params.pt", "result.json"):  # the old-code run finishes after the carry
        shutil.copy(tmp_path / "other" / finished / name, store.entry(old) / name)
        os.utime(store.entry(old) / name, (t + 5, t + 5))
    assert carry.carry_store(store, [record], log=lambda *_: None) == [(old, new)]
    assert store.load_result(new)["history"] == store.load_result(old)["history"]
    # a copy resumed under its new key (a file newer than its carry) stays, whatever its source does
    note = store.entry(new) / "carried.json"
    t = note.stat().st_mtime
    os.utime(store.entry(new) / "params.pt", (t + 10, t + 10))
    os.utime(store.entry(old) / "result.json", (t + 20, t + 20))
    assert carry.carry_store(store, [record], log=lambda *_: None) == []


@pytest.mark.slow
def test_the_check_finds_the_same_code_identical_and_a_changed_one_different(tmp_path):
    configs = [{**TINY, "method": "fedavg", "device": "cuda"}, {**TINY, "method": "fedavg", "seed": 3}]
    same = tmp_path / "same"
    shutil.copytree(REPO / "fedlib", same / "fedlib", ignore=shutil.ignore_patterns("__pycache__"))
    record = carry.check(configs, from_root=same, log=lambda *_: None)
    row, = record["paths"]
    assert row["identical"] and row["runs"] == 2 and row["tiny"]["device"] == "cpu" and row["tiny"]["rounds"] == 2
    version = code_version(Config.from_dict(configs[0]))
    assert record["versions"] == [{"path": row["path"], "from": version, "to": version}]

    changed = tmp_path / "changed"
    shutil.copytree(same, changed)
    client = changed / "fedlib" / "client.py"
    text = client.read_text()
    assert "ClientOptimizer(config.lr, config.momentum" in text
    client.write_text(text.replace("ClientOptimizer(config.lr, config.momentum",
                                   "ClientOptimizer(config.lr * 1.001, config.momentum"))
    record = carry.check(configs, from_root=changed, log=lambda *_: None)
    row, = record["paths"]
    assert not row["identical"] and record["versions"] == []
    assert row["from_versions"] != row["to_versions"]  # the edit moved the old copy's code version


def test_a_group_of_many_runs_reaches_the_tiny_runs_process_whole(tmp_path):
    """A group's configurations go to the fresh process on stdin: on the command line, FedLC's 1,100 quick CNN
    records (one JSON argument far past Linux's 128 KiB for one argument) stopped the check with E2BIG."""
    cfg = {**TINY, "method": "fedavg"}
    configs = [{**cfg, "seed": s} for s in range(1500)]
    assert len(json.dumps(configs)) > 128 * 1024
    out = carry._run(REPO, configs, None, tmp_path / "params.pt")
    assert out["versions"] == [code_version(Config.from_dict(c)) for c in configs]


def test_a_group_whose_tiny_run_fails_is_checked_on_its_next_member_or_else_not_carried(tmp_path, monkeypatch):
    """FEDIC's Fig. 5 at α = 0.01: the tiny subset of a member found no Dirichlet draw, and the whole check stopped.
    Now the next member's tiny configuration is tried; a group none of whose tiny runs trains is "not checked",
    and no version of it is carried."""
    configs = [{**TINY, "method": "fedavg", "seed": 0}, {**TINY, "method": "fedavg", "seed": 1}]
    same = tmp_path / "same"
    shutil.copytree(REPO / "fedlib", same / "fedlib", ignore=shutil.ignore_patterns("__pycache__"))
    real = carry._run

    def flaky(root, members, tiny, out):
        if tiny["seed"] == 0:
            raise RuntimeError("the tiny run failed: Traceback\nPartitionError: dirichlet: no draw")
        return real(root, members, tiny, out)

    monkeypatch.setattr(carry, "_run", flaky)
    row, = carry.check(configs, from_root=same, log=lambda *_: None)["paths"]
    assert row["identical"] and row["tiny"]["seed"] == 1 and row["runs"] == 2

    def broken(root, members, tiny, out):
        raise RuntimeError("the tiny run failed: Traceback\nPartitionError: dirichlet: no draw")

    monkeypatch.setattr(carry, "_run", broken)
    record = carry.check(configs, from_root=same, log=lambda *_: None)
    row, = record["paths"]
    assert not row["identical"] and row["failed"] == "PartitionError: dirichlet: no draw" and record["versions"] == []


def test_the_check_refuses_a_commit_that_is_not_one_before_any_run(tmp_path):
    with pytest.raises(ValueError, match="from must name a commit of this repository, got 'no-such-commit'"):
        carry.check([{**TINY}], from_commit="no-such-commit", log=lambda *_: None)
    with pytest.raises(ValueError, match="give one of from_commit"):
        carry.check([{**TINY}], log=lambda *_: None)


def test_a_record_is_written_only_from_a_committed_tree(monkeypatch, capsys):
    from fedlib.repro.artefacts import provenance

    monkeypatch.setattr(provenance, "git_commit", lambda root=None: "0123abc-dirty")
    with pytest.raises(SystemExit) as stop:
        carry.main(["--from", "HEAD"])
    assert stop.value.code == 2
    assert "commit the code change first" in capsys.readouterr().err


def test_tiny_config_partitions_many_clients_under_strong_skew():
    """A carry's check trains every stored group at the tiny scale: Dir(0.1) over 100 clients (FedLC's quick
    scale) must find a partition there, which 600 samples did not (PartitionError after 1,000 draws)."""
    from fedlib.config import Config
    from fedlib.experiment import prepare
    from fedlib.repro.run.tiny import tiny_config

    cfg = Config(dataset="fmnist", model="mlp", num_clients=100, partition="dirichlet", partition_beta=0.1).to_dict()
    tiny = tiny_config(cfg)
    assert tiny["max_train_samples"] == 3000
    exp = prepare(Config.from_dict(tiny))
    assert len(exp.client_indices) == 100 and min(len(i) for i in exp.client_indices) >= 1


def test_a_record_carries_the_run_records_of_its_identical_groups_so_a_regeneration_goes_on_from_them(
        tmp_path, monkeypatch):
    """Run records trained at an old code version are carried like store entries: only a group (and old
    version) the carry record maps moves to the current version, naming the record; then the grid resumes
    from it instead of training (fedlib.repro.run.records.resumable)."""
    from fedlib.repro.run import records
    from fedlib.repro.run.grid import identity

    a, b = {**TINY, "method": "fedavg"}, {**TINY, "method": "fedprox"}
    recs = [{**records.make_record(identity(cfg), cfg, {"status": "ok", "note": "", "accuracy": 50.0}),
             "code_version": "old"} for cfg in (a, b)]
    absent = {**TINY, "method": "fedavg", "seed": 7}  # its dataset was absent: no number, nothing to carry
    recs.append({**records.make_record(identity(absent), absent, {"status": "not run", "note": "absent"}),
                 "code_version": "old"})
    records.write_compressed(tmp_path / records.RECORDS_FILE, recs)
    assert len(carry.stale_records(tmp_path)) == 2
    mapping = {"name": "test.json", "versions": [{"path": carry._group(a), "from": "old",
                                                  "to": code_version(Config.from_dict(a))}]}
    assert carry.carry_records(tmp_path, [mapping], log=lambda *_: None) == 1
    after = records.read(tmp_path / records.RECORDS_FILE)
    carried = after[records.record_id(identity(a))]
    assert carried["code_version"] == code_version(Config.from_dict(a))
    assert carried["carried"] == {"record": "test.json", "from_version": "old"}
    assert after[records.record_id(identity(b))]["code_version"] == "old"  # not mapped: left stale
    assert [r["config"]["method"] for r in carry.stale_records(tmp_path)] == ["fedprox"]
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path / records.PLAIN_RECORDS))
    monkeypatch.setenv(records.MODE_ENV, "write")
    monkeypatch.setenv(records.RESUME_ENV, "1")
    assert list(records.resumable({identity(a): a, identity(b): b})) == [identity(a)]
