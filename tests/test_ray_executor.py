"""Grids on Ray (fedlib.repro.run.executors): the same numbers as the local executor, the store's runs
never submitted, a killed worker retried from its checkpoint, configuration failures reported.

One local Ray instance with 2 CPUs (and one logical GPU, for scheduling only) for the whole module
(Ray is slow to start on a shared machine)."""

import json
import sys

import pandas as pd
import pytest
import torch

from fedlib.repro.run.executors import CPUS_ENV, EXECUTOR_ENV, GPUS_ENV, KillOnce, LocalExecutor, make_executor
from fedlib.repro.run.grid import run_grid
from fedlib.store import Store

BASE = {"dataset": "synthetic", "num_clients": 4, "rounds": 3, "batch_size": 32, "eval_every": 1}
CELLS = [{"method": m, "config": {**BASE, "method": m}} for m in ("fedavg", "fedlc")]
SEEDS = (0, 1)
# what legitimately differs between two executions of the same run
_TIMING = ["wall_time_s", "from_store"]


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, num_gpus=1, include_dashboard=False, log_to_driver=False)  # a logical GPU: no CUDA
    yield ray
    ray.shutdown()


def _ray(**kwargs):
    from fedlib.repro.run.executors import RayExecutor

    return RayExecutor(**kwargs)


def _numbers(grid):
    runs = grid.runs.drop(columns=[c for c in _TIMING if c in grid.runs]).sort_values(["method", "seed"])
    return runs.reset_index(drop=True), grid.histories.sort_values(["method", "seed", "round"]).reset_index(drop=True)


def _same_params(store_a, store_b, keys):
    for key in keys:
        a, b = Store(store_a).load_result(key), Store(store_b).load_result(key)
        assert a is not None and b is not None
        assert a["params"].keys() == b["params"].keys()
        assert all(torch.equal(a["params"][k], b["params"][k]) for k in a["params"])


def _entries_complete(root):
    """Every entry of the store holds a finished, verified result and nothing half-written (besides the
    entry's lock file, ``Store.claim``'s, which holds no data)."""
    for entry in root.iterdir():
        assert sorted(p.name for p in entry.iterdir()
                      if p.name not in ("config.json", ".lock")) == ["params.pt", "result.json"]
        assert Store(root).load_result(entry.name) is not None


def test_ray_grid_equals_local_bit_for_bit_and_skips_stored_runs(ray_session, tmp_path, monkeypatch):
    local = run_grid(CELLS, seeds=SEEDS, store=tmp_path / "local", progress=False)
    assert (local.runs.status == "ok").all() and len(local.runs) == 4

    channel = tmp_path / "progress.jsonl"
    monkeypatch.setenv("FEDLIB_PROGRESS", str(channel))
    executor = _ray()
    on_ray = run_grid(CELLS, seeds=SEEDS, store=tmp_path / "ray", progress=False, executor=executor, desc="r")
    assert sorted(executor.submitted) == sorted(local.runs.key)  # one task per configuration × seed
    assert not on_ray.runs.from_store.any()
    for a, b in zip(_numbers(local), _numbers(on_ray)):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    _same_params(tmp_path / "local", tmp_path / "ray", local.runs.key)
    _entries_complete(tmp_path / "ray")
    lines = [json.loads(line) for line in channel.read_text().splitlines()]
    assert [ln["done"] for ln in lines] == [0, 1, 2, 3, 4] and {ln["total"] for ln in lines} == {4}
    assert lines[-1]["eta_s"] == 0 and lines[-1]["trained"] == 4

    # the local store already holds all four runs: nothing is submitted, the numbers are read back
    again = _ray()
    from_store = run_grid(CELLS, seeds=SEEDS, store=tmp_path / "local", progress=False, executor=again)
    assert again.submitted == [] and from_store.runs.from_store.all()
    for a, b in zip(_numbers(local), _numbers(from_store)):
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_workers_import_this_checkout(ray_session):
    import fedlib

    where = ray_session.remote(lambda: __import__("fedlib").__file__)
    assert ray_session.get(where.options(runtime_env=_ray().runtime_env()).remote()) == fedlib.__file__


def test_a_run_given_a_gpu_gets_a_worker_process_of_its_own(ray_session, tmp_path):
    import os

    def worker_pid(config, store_root):  # defined here: Ray ships it by value
        return {"status": "ok", "note": "", "pid": os.getpid(), "device": config["device"]}

    jobs = {str(seed): {**BASE, "device": "cpu", "seed": seed} for seed in range(2)}  # CPU runs, a GPU each
    results = _ray(gpus_per_run=1).run(jobs, worker_pid, str(tmp_path), lambda job, result: None)
    # one logical GPU: the runs go one after the other, each in a fresh worker (a reused one keeps CUDA memory)
    assert len({r["pid"] for r in results.values()}) == 2
    assert {r["device"] for r in results.values()} == {"cpu"}  # a device the configuration names is kept
    defaulted = _ray(gpus_per_run=1).run({"0": dict(BASE)}, worker_pid, str(tmp_path), lambda job, result: None)
    assert defaulted["0"]["device"] == "cuda"  # a run given a GPU trains on it


def test_killed_worker_is_retried_from_its_checkpoint(ray_session, tmp_path):
    cells = [{"method": "fedlc", "config": {**BASE, "method": "fedlc", "checkpoint_every": 1}}]
    reference = run_grid(cells, seeds=(0,), store=tmp_path / "reference", progress=False, executor="local")
    marker = tmp_path / "fault.txt"
    executor = _ray(max_retries=2, fault=KillOnce(str(marker), at=2))
    grid = run_grid(cells, seeds=(0,), store=tmp_path / "store", progress=False, executor=executor)
    # killed just before its second checkpoint (round 2), resumed from the first (round 1) by the retry
    assert marker.read_text().splitlines() == ["killed before checkpoint 2", "resumed 1"]
    assert grid.runs.status.tolist() == ["ok"]
    for a, b in zip(_numbers(reference), _numbers(grid)):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    _same_params(tmp_path / "reference", tmp_path / "store", reference.runs.key)
    _entries_complete(tmp_path / "store")


def test_configuration_failures_are_reported_and_not_retried(ray_session, tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path / "no-data"))
    cells = [{"method": "bad", "config": {**BASE, "method": "fedavg", "rounds": 0}},  # ConfigError
             {"method": "absent", "config": {"dataset": "mnist", "num_clients": 4, "rounds": 2}}]  # no dataset
    local = run_grid(cells, seeds=(0,), store=tmp_path / "local", progress=False)
    executor = _ray(max_retries=3)
    grid = run_grid(cells, seeds=(0,), store=tmp_path / "ray", progress=False, executor=executor)
    assert grid.runs.status.tolist() == ["failed", "not run"]
    assert "ConfigError" in grid.runs.note[0] and "rounds" in grid.runs.note[0]
    assert "not run: dataset" in grid.runs.note[1]
    assert grid.runs[["status", "note"]].equals(local.runs[["status", "note"]])
    assert len(executor.submitted) == 1  # the bad configuration never left this process


def test_bad_executor_settings_are_refused_before_any_run(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="executor must be one of 'local', 'ray', got 'dask'"):
        run_grid(CELLS, store=tmp_path, progress=False, executor="dask")
    assert not any(tmp_path.iterdir())
    pytest.importorskip("ray")
    for kwargs, name in (({"gpus_per_run": 1.5}, "gpus_per_run"), ({"gpus_per_run": -0.5}, "gpus_per_run"),
                         ({"cpus_per_run": 0}, "cpus_per_run"), ({"max_retries": -1}, "max_retries")):
        with pytest.raises(ValueError, match=name):
            _ray(**kwargs)
    with pytest.raises(ValueError, match="gpus_per_run must be > 0"):
        run_grid([{"m": 1, "config": {**BASE, "device": "cuda"}}], store=tmp_path, progress=False, executor="ray")
    with pytest.raises(ValueError, match="needs a store"):
        run_grid(CELLS, store=False, progress=False, executor="ray")


def test_executor_and_resources_from_the_environment(monkeypatch):
    monkeypatch.delenv(EXECUTOR_ENV, raising=False)
    assert isinstance(make_executor(None, workers=2), LocalExecutor) and make_executor(None, workers=2).workers == 2
    pytest.importorskip("ray")
    monkeypatch.setenv(EXECUTOR_ENV, "ray")
    ex = make_executor(None, cpus_per_run=2, gpus_per_run=0.5)  # the profile's values ...
    assert (ex.name, ex.cpus_per_run, ex.gpus_per_run) == ("ray", 2, 0.5)
    monkeypatch.setenv(GPUS_ENV, "0.25")
    monkeypatch.setenv(CPUS_ENV, "1")
    ex = make_executor(None, cpus_per_run=2, gpus_per_run=0.5)  # ... lose to the command line's
    assert (ex.cpus_per_run, ex.gpus_per_run) == (1, 0.25)


def test_regenerate_without_ray_ends_with_one_line_and_status_2(monkeypatch, capsys):
    from fedlib.repro.regenerate import main

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if it were not installed
    monkeypatch.delenv(EXECUTOR_ENV, raising=False)
    assert main(["--executor", "ray", "--list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and 'pip install "fedlib[ray]"' in err[0]
    assert main(["--gpus-per-run", "2.5", "--list"]) == 2
    assert "gpus_per_run" in capsys.readouterr().err


def test_ray_is_imported_only_by_the_ray_executor():
    import subprocess

    code = ("import sys; from fedlib.repro.run.grid import run_grid; "
            "g = run_grid([{'m': 1, 'config': {'dataset': 'synthetic', 'num_clients': 2, 'rounds': 1}}], "
            "store=False, progress=False, executor='local'); "
            "assert g.runs.status.tolist() == ['ok']; print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_regenerate_passes_the_executor_flags_to_the_notebooks_grids(monkeypatch, capsys):
    import os

    from fedlib.repro.regenerate import main

    pytest.importorskip("ray")
    saved = dict(os.environ)  # main sets the kernels' environment in this process: restore all of it after
    try:
        for var in (EXECUTOR_ENV, GPUS_ENV, "RAY_ADDRESS"):
            os.environ.pop(var, None)
        assert main(["--executor", "ray", "--ray-address", "head:6379", "--gpus-per-run", "0.25", "--list"]) == 0
        assert (os.environ[EXECUTOR_ENV], os.environ["RAY_ADDRESS"], os.environ[GPUS_ENV]) == ("ray", "head:6379",
                                                                                              "0.25")
        ex = make_executor(None, gpus_per_run=1)  # what a notebook's grid then builds
        assert (ex.name, ex.gpus_per_run) == ("ray", 0.25)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    assert EXECUTOR_ENV not in os.environ or os.environ[EXECUTOR_ENV] == saved[EXECUTOR_ENV]
