"""The benchmark scripts run (their --quick modes measure tiny cases and write nothing)."""

import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.slow
@pytest.mark.parametrize("script", ["bench_engines.py", "bench_threads.py"])
def test_benchmark_script_runs(script):
    before = sorted(p.name for p in (REPO / "benchmarks").iterdir())
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), "--quick"], capture_output=True,
                          text=True, cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "|" in proc.stdout  # a table of ratios
    assert sorted(p.name for p in (REPO / "benchmarks").iterdir()) == before  # --quick writes nothing


@pytest.mark.slow
def test_gpu_benchmark_runs_on_the_cpu_in_its_tiny_setting():
    from conftest import have_dataset

    if not have_dataset("cifar10"):
        pytest.skip("CIFAR-10 is not under FEDLIB_DATA")
    before = sorted(p.name for p in (REPO / "benchmarks").iterdir())
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_gpu.py"), "--device", "cpu", "--tiny"],
                          capture_output=True, text=True, cwd=REPO, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert len(rows) == 2 * 2 + 2  # (2 client counts × 2 engines) + (k = 1, 2 runs sharing the device)
    assert sorted(p.name for p in (REPO / "benchmarks").iterdir()) == before  # --tiny writes nothing
