"""No configuration is trained twice in one regeneration: equal configurations share one run
(within a grid, across grids and notebooks, across processes at once), and the regeneration
record counts what was trained and what was reused."""

import subprocess
import sys
import time

from conftest import REPO

from fedlib import Config
from fedlib.repro.run.grid import progress_channel, run_grid
from fedlib.repro.regenerate_notebook import Watcher
from fedlib.store import Store

BASE = {"dataset": "synthetic", "num_clients": 4, "rounds": 2, "batch_size": 32, "method": "fedavg"}


def _entries(root):
    return sorted(p.name for p in root.iterdir() if (p / "result.json").exists())


def test_configurations_equal_but_for_ignored_parameters_train_once_in_a_grid(tmp_path, monkeypatch):
    channel = tmp_path / "progress.jsonl"
    monkeypatch.setenv("FEDLIB_PROGRESS", str(channel))
    cells = [{"row": "plain", "config": dict(BASE)},
             {"row": "tau", "config": {**BASE, "tau": 5.0}},  # FedLC's τ: FedAvg ignores it
             {"row": "default", "config": {**BASE, "lr": 0.01, "checkpoint_every": 3}}]  # a default, bookkeeping
    g = run_grid(cells, seeds=(0,), store=tmp_path / "store", workers=2, progress=False, desc="equal")
    assert (g.runs.status == "ok").all() and g.runs.key.nunique() == 1 and g.runs.accuracy.nunique() == 1
    last = list(progress_channel(channel))[-1]
    assert last["total"] == 1 and last["trained"] == 1  # one run, not three
    assert len(_entries(tmp_path / "store")) == 1


_CHILD = """
import pathlib, sys, fedlib
pathlib.Path(sys.argv[2]).touch()
r = fedlib.run(dataset="synthetic", num_clients=4, rounds=3, batch_size=32, method="fedavg", seed=1,
               store=sys.argv[1], progress=False)
print("FROM_STORE", r.from_store, r.final_accuracy)
"""


def test_two_processes_asking_for_one_configuration_at_once_train_it_once(tmp_path):
    """Both processes look up the key while it is being trained (the test holds its claim, as a
    first trainer would): one trains when the claim is released, the other waits and reuses it."""
    store = Store(tmp_path / "store")
    key = store.key(Config.from_dict({**BASE, "rounds": 3, "seed": 1}))
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    with store.claim(key):
        procs = [subprocess.Popen([sys.executable, "-c", _CHILD, str(store.root), str(tmp_path / f"ready{i}")],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                  env={**env, "HOME": str(tmp_path)}) for i in range(2)]
        deadline = time.time() + 300
        while not all((tmp_path / f"ready{i}").exists() for i in range(2)) and time.time() < deadline:
            time.sleep(0.2)
        time.sleep(1.0)  # both are past their imports: they find no result and wait for the claim
        assert store.load_result(key) is None
    outs = [p.communicate(timeout=600) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-2000:] for _, err in outs]
    lines = [next(ln for ln in out.splitlines() if ln.startswith("FROM_STORE")).split() for out, _ in outs]
    assert sorted(ln[1] for ln in lines) == ["False", "True"]  # exactly one trained
    assert lines[0][2] == lines[1][2]  # and the other returned its result
    assert _entries(store.root) == [key]


def test_the_regeneration_record_counts_trained_reused_and_trained_again(tmp_path, monkeypatch):
    """Three "notebooks" through the record's counter: the first trains a run, the second asks for
    it again (reused from the store), the third trains it again into another store -- the
    case the record exists to expose."""
    trained_before: set = set()
    counts = []
    for name, store in (("nb1", "store"), ("nb2", "store"), ("nb3", "other_store")):
        channel = tmp_path / f"{name}.jsonl"
        monkeypatch.setenv("FEDLIB_PROGRESS", str(channel))
        run_grid([{"row": "a", "config": dict(BASE)}, {"row": "b", "config": {**BASE, "method": "fedlc"}}],
                 store=tmp_path / store, progress=False, desc=name)
        counts.append(Watcher(channel, name, enabled=False).counts(trained_before))
    assert counts[0] == {"runs": 2, "trained": 2, "reused": 0, "not_run": 0, "trained_again": 0}
    assert counts[1] == {"runs": 2, "trained": 0, "reused": 2, "not_run": 0, "trained_again": 0}
    assert counts[2] == {"runs": 2, "trained": 2, "reused": 0, "not_run": 0, "trained_again": 2}
    assert len(trained_before) == 2


def test_a_run_that_cannot_run_here_is_counted_as_not_run_not_as_from_the_store(tmp_path, monkeypatch):
    """SVHN is absent: its run is neither trained nor read from the store (the index said 'the rest from the
    store' of it)."""
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path / "no_data"))
    channel = tmp_path / "nb.jsonl"
    monkeypatch.setenv("FEDLIB_PROGRESS", str(channel))
    g = run_grid([{"row": "a", "config": dict(BASE)},
                  {"row": "svhn", "config": {**BASE, "dataset": "svhn", "max_train_samples": 200}}],
                 store=tmp_path / "store", progress=False, desc="nb")
    assert list(g.runs.status) == ["ok", "not run"]
    counts = Watcher(channel, "nb", enabled=False).counts(set())
    assert counts == {"runs": 2, "trained": 1, "reused": 0, "not_run": 1, "trained_again": 0}
