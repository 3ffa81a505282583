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
