"""The benchmark scripts run (their --quick modes measure tiny cases and write nothing)."""

import subprocess
import sys

import pytest

from conftest import REPO


@pytest.mark.slow
@pytest.mark.parametrize("script", ["bench_engines.py", "bench_threads.py", "bench_memory_format.py",
                                    "bench_quick_units.py"])
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


def _tiny_probe(tmp_path, device: str) -> list[dict]:
    """benchmarks/probe_gpu_paths.py on ``device``, tiny (1 step, 2 clients, batch 4, no torch.compile): its rows."""
    import json

    out = tmp_path / f"probe-{device}.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "probe_gpu_paths.py"), "--device", device,
                           "--steps", "1", "--clients", "2", "--batch", "4", "--no-compile", "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())["rows"]


@pytest.mark.slow
def test_the_gpu_step_probe_runs_on_the_cpu_and_scales_each_step_to_a_round(tmp_path):
    """benchmarks/probe_gpu_paths.py on the CPU, tiny and without torch.compile: every path a CPU has (no
    CUDA graphs) in float32, each row's round the step's time × 50,000 samples ÷ the step's samples."""
    rows = _tiny_probe(tmp_path, "cpu")
    assert [(r["path"], r["layout"]) for r in rows] == [("seq_eager", "channels_last"), ("big_eager", "channels_last"),
                                                      ("vmap_eager", "channels_last"), ("vmap_eager", "contiguous")]
    assert {r["precision"] for r in rows} == {"float32"}
    for r in rows:
        assert r["samples_per_step"] == (4 if r["path"] == "seq_eager" else 8)
        assert r["round_s"] == pytest.approx(r["step_ms"] / 1e3 * 50_000 / r["samples_per_step"], rel=1e-2, abs=2e-3)


def test_the_probe_times_dispatch_alone_on_the_meta_device(tmp_path):
    """--device meta: every eager path a step has, shapes only (no kernel runs), so each time is dispatch."""
    rows = _tiny_probe(tmp_path, "meta")
    assert [r["path"] for r in rows] == ["seq_eager", "big_eager", "vmap_eager", "vmap_eager"]
    assert all(r["step_ms"] > 0 and "note" not in r for r in rows)


@pytest.mark.slow
def test_the_round_profiler_runs_on_the_cpu_and_counts_the_steps_the_engine_takes(tmp_path):
    """benchmarks/profile_gpu_round.py --smoke: one precision on a CPU (no device time), and its step counts
    are those of the clients' real mini-batches (fedlib.client.client_tasks), counted here independently."""
    import json

    from conftest import have_dataset

    if not have_dataset("cifar10"):
        pytest.skip("CIFAR-10 is not under FEDLIB_DATA")
    out = tmp_path / "round.json"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "profile_gpu_round.py"), "--smoke",
                           "--processes", "2", "--timed", "1", "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    row, = json.loads(out.read_text())["rows"]
    assert row["precision"] == "float32" and row["round_s"] > 0 and row["kernel_s"] is None and row["top_host"]
    shared = row["shared"]  # two processes at once: together at most 2 rounds in the slower one's mean round
    assert shared["processes"] == 2 and len(shared["round_s_each"]) == 2
    assert 0 < shared["rounds_per_s"] <= 2 / max(shared["round_s_each"]) + 1e-3

    sys.path.insert(0, str(REPO / "benchmarks"))
    import profile_gpu_round as prof
    from fedlib.client import client_tasks
    from fedlib.config import Config
    from fedlib.experiment import prepare
    from fedlib.engine import sample_clients

    exp = prepare(Config.from_dict(prof.round_config("cpu", "float32", smoke=True)))
    state = exp.initial_state()
    tasks = client_tasks(exp, state, sample_clients(exp.num_clients, exp.config.participation, 0, 1), 1, stream=1)
    batches = [len(t.batches) for t in tasks]
    assert (row["steps"], row["client_steps"]) == (max(batches), sum(batches)) == prof.steps_of(exp)
    # its rounds train where the run would: prepare leaves the data on the CPU, simulate (and the profiler) copy
    # it to the configured device (Experiment.data_on); the 2026-11-26 H100 profile failed every row without it
    import inspect

    assert inspect.getsource(prof.profile_round).count("prepare(config).data_on()") == 1
    loaded = exp.data
    assert exp.data_on() is exp and exp.data is loaded  # on the CPU: nothing moves
    exp.data_on("meta")
    assert {getattr(exp.data, n).device.type for n in ("train_x", "train_y", "test_x", "test_y")} == {"meta"}
    assert loaded.train_x.device.type == "cpu"  # a copy: the loaded data is shared


@pytest.mark.slow
def test_operators_a_step_dispatches_do_not_depend_on_the_clients_stacked_and_exceed_the_bare_step():
    """benchmarks/count_step_ops.py: a stacked step dispatches the same operators for 20 clients as for 5 (vmap
    batches, it does not loop), at least the bare stacked step's, and the count is one a step: the difference
    between 2 and 4 steps equals that between 4 and 8 (what a round spends once cancels)."""
    from conftest import have_dataset

    if not have_dataset("cifar10"):
        pytest.skip("CIFAR-10 is not under FEDLIB_DATA")
    sys.path.insert(0, str(REPO / "benchmarks"))
    import count_step_ops as ops

    twenty, five = ops.per_step(20, 2), ops.per_step(5, 2)
    assert twenty == five
    assert twenty["total"] == ops.per_step(5, 4)["total"]
    assert twenty["by_op"]["convolution"] == 3  # the CNN's 3 convolutions, once each, whatever the clients
    assert twenty["total"] >= ops.bare_ops(5) > 100


def test_the_round_profilers_variants_name_an_engine_a_budget_and_a_layout():
    sys.path.insert(0, str(REPO / "benchmarks"))
    import profile_gpu_round as prof

    assert prof.parse_variant("vectorized@4") == ("vectorized", 4.0, "model")
    assert prof.parse_variant("compiled@24:contiguous") == ("compiled", 24.0, "contiguous")
    for bad in ("vectorized", "fast@4", "vectorized@4:nhwc"):
        with pytest.raises(ValueError, match="the layout one of"):
            prof.parse_variant(bad)
    cfg = prof.round_config("cpu", "float32", smoke=True, memory_format="contiguous")
    assert cfg["memory_format"] == "contiguous" and cfg["dataset"] == "cifar10"
