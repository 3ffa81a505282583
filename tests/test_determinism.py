"""Same configuration, same numbers: a run's final parameters do not depend on the caller's
torch thread count, on the number of grid workers, or on whether it came from fedlib.run,
the CLI or a notebook grid.

The runs are a CNN on FashionMNIST with 10 clients of ~200 samples and batch 16: the
vectorized engine's grouped convolutions then split their reductions by thread, and
without :func:`fedlib.simulation.single_thread` 1 and 2 threads give different parameters
(max |Δ| 1.5e-8 after 2 rounds on the machine that wrote this; ``make bench`` measures it
with the speed cost)."""

import json
import subprocess
import sys

import pytest
import torch

from fedlib import run
from fedlib.repro.run.grid import run_grid
from fedlib.store import Store

from conftest import REPO, have_dataset

pytestmark = pytest.mark.skipif(not have_dataset("fmnist"), reason="FashionMNIST not found under FEDLIB_DATA")

CNN = dict(dataset="fmnist", num_clients=10, max_train_samples=2000, max_test_samples=200, rounds=2,
           batch_size=16, partition_beta=0.5, seed=3)


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


@pytest.fixture(scope="module")
def reference():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return run(**CNN, store=False, progress=False)
    finally:
        torch.set_num_threads(before)


def test_the_callers_thread_count_does_not_matter(reference):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        two = run(**CNN, store=False, progress=False)
    finally:
        torch.set_num_threads(before)
    _same(two.params, reference.params)
    assert torch.get_num_threads() == before  # the caller's setting is restored


def test_the_number_of_grid_workers_does_not_matter(reference, tmp_path):
    cells = [{"name": "a", "config": dict(CNN)}, {"name": "b", "config": {**CNN, "partition_beta": 0.1}}]
    one = run_grid(cells, seeds=None, store=tmp_path / "one", workers=1, progress=False)
    two = run_grid(cells, seeds=None, store=tmp_path / "two", workers=2, progress=False)
    assert one.runs.accuracy.tolist() == two.runs.accuracy.tolist()
    for key in one.runs.key:
        _same(Store(tmp_path / "one").load_result(key)["params"], Store(tmp_path / "two").load_result(key)["params"])
    _same(Store(tmp_path / "one").load_result(one.runs.key.iloc[0])["params"], reference.params)


def test_the_cli_gives_what_fedlib_run_gives(reference, tmp_path):
    args = [f"{k}={v}" for k, v in CNN.items()]
    proc = subprocess.run([sys.executable, "-m", "fedlib", "run", *args, "--store", str(tmp_path), "--quiet"],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr
    key = json.loads(proc.stdout.strip().splitlines()[-1])["key"]
    _same(Store(tmp_path).load_result(key)["params"], reference.params)
