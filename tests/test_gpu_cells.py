"""Cells trained on a GPU, read on a CPU: a configuration naming ``cuda`` is valid anywhere, a run on it
needs CUDA (a clear error before any work), and a result that a GPU put in the store is what a CPU
regeneration shows for that cell and seed, with the device named (``fedlib.repro.gpu_cells``)."""

import dataclasses
import math

import pandas as pd
import pytest
import torch

import fedlib
from fedlib.config import Config, ConfigError
from fedlib.repro import gpu_cells
from fedlib.repro.budget.costs import gpu_note, stored_gpu_runs
from fedlib.repro.budget.gate import decide
from fedlib.repro.run.grid import _run_one, run_grid
from fedlib.repro.spec.paper import get_paper
from fedlib.store import Store

BASE = {"dataset": "synthetic", "num_clients": 4, "rounds": 2, "batch_size": 32, "method": "fedavg"}
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks what a machine without CUDA does")


def _plant_gpu_result(store: Store, cfg: dict, device_name: str = "Test GPU 80GB") -> dict:
    """Store, under the key of ``cfg`` on cuda, a result as a GPU run leaves it: trained here on the CPU
    (the store keeps whatever was trained under a key), its summary naming ``device_name``."""
    out = fedlib.run({**cfg, "device": "cpu", "engine": "vectorized"}, store=False, progress=False)  # (any engine's)
    gpu = Config.from_dict({**cfg, "device": "cuda"})
    summary = {**out.summary, "device_name": device_name, "key": store.key(gpu)}
    history = out.history.to_dict("records")
    store.save_result(store.key(gpu), gpu, summary, history, out.params)
    return summary


def test_a_cuda_configuration_is_valid_without_cuda_and_its_run_fails_before_any_work():
    cfg = Config.from_dict({**BASE, "device": "cuda"})
    assert cfg.device == "cuda" and cfg.key_dict()["device"] == "cuda"  # the device is part of the result's key
    if torch.cuda.is_available():
        pytest.skip("CUDA is available: the run would train")
    with pytest.raises(ConfigError, match="device must be 'cpu' on this machine"):
        fedlib.run({**BASE, "device": "cuda"}, store=False, progress=False)


def test_a_run_names_the_device_it_trained_on():
    out = fedlib.run(BASE, store=False, progress=False)
    assert isinstance(out.summary["device_name"], str) and out.summary["device_name"]


@no_cuda
def test_a_gpu_result_in_the_store_is_read_on_a_cpu_and_a_missing_seed_is_not_run(tmp_path):
    store = Store(tmp_path)
    planted = _plant_gpu_result(store, {**BASE, "seed": 0})
    cuda = {**BASE, "device": "cuda"}
    read = _run_one({**cuda, "seed": 0}, str(tmp_path))
    assert read["status"] == "ok" and read["from_store"] and read["device_name"] == "Test GPU 80GB"
    assert read["accuracy"] == pytest.approx(100.0 * planted["final_accuracy"])
    missing = _run_one({**cuda, "seed": 1}, str(tmp_path))
    assert missing["status"] == "not run" and "needs a GPU" in missing["note"]
    assert not store.has_result(Config.from_dict({**cuda, "seed": 1}))
    assert stored_gpu_runs(BASE, [0, 1, 2], store) == {0: "Test GPU 80GB"}
    assert stored_gpu_runs(BASE, [0], Store(tmp_path / "empty")) == {}

    grid = run_grid([{"m": "fedavg", "config": cuda}], seeds=[0, 1], store=tmp_path, progress=False)
    by_seed = grid.runs.set_index("seed")
    assert by_seed.loc[0, "status"] == "ok" and by_seed.loc[0, "device_name"] == "Test GPU 80GB"
    assert by_seed.loc[1, "status"] == "not run"
    assert grid.aggregate(["m"])["n_seeds"].tolist() == [1]  # the mean is over the seeds a GPU trained


@no_cuda
def test_a_cell_too_large_for_the_cpu_shows_its_gpu_seeds_from_the_store(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_STORE", str(tmp_path))
    pp = get_paper("fedlc")
    prof = dataclasses.replace(pp.profile("paper"), device="cpu")
    base = pp.table("table1").config("fedlc", "cifar10_beta0.5")
    cfg, note = decide(prof, base, "table1")
    assert cfg is None and "needs a GPU" in note  # 400 rounds of CIFAR-10: ≈ 21 CPU-h a run
    gpu_cfg = {k: v for k, v in gpu_cells.cell_jobs("fedlc", "table1", rows=["fedlc"], columns=["cifar10_beta0.5"])[0]
               ["config"].items() if k != "device"}
    store = Store(tmp_path)
    for seed in (0, 1):  # stand-ins trained in seconds, under the keys of the two GPU runs
        small = {**BASE, "seed": seed}
        out = fedlib.run(small, store=False, progress=False)
        key = store.key(Config.from_dict({**gpu_cfg, "device": "cuda", "seed": seed}))
        store.save_result(key, Config.from_dict({**gpu_cfg, "device": "cuda", "seed": seed}),
                          {**out.summary, "device_name": "Test GPU 80GB"}, out.history.to_dict("records"), out.params)
    cfg, note = decide(prof, base, "table1")
    assert cfg == {**gpu_cfg, "device": "cuda"}
    assert note == gpu_note({0: "Test GPU 80GB", 1: "Test GPU 80GB"}, prof.seeds_for("table1"))
    assert "2 of 5 seeds" in note and "Test GPU 80GB" in note and "the others need a GPU" in note
    assert "others" not in gpu_note({0: "Test GPU 80GB", 1: "Test GPU 80GB"}, [0, 1])  # every seed trained


def test_the_cells_command_refuses_unknown_rows_columns_tables_and_seeds_before_any_work(tmp_path):
    with pytest.raises(ValueError, match="rows must be among .*fedavg"):
        gpu_cells.cell_jobs("fedlc", "table1", rows=["fedgan"])
    with pytest.raises(ValueError, match="columns must be among .*cifar10_beta0.5"):
        gpu_cells.cell_jobs("fedlc", "table1", columns=["cifar11"])
    with pytest.raises(ValueError, match="table must be one of"):
        gpu_cells.cell_jobs("fedlc", "table99")
    with pytest.raises(ValueError, match="seeds must be"):
        gpu_cells.train_cells("fedlc", "table1", seeds=[-1], store=tmp_path, progress=False)
    assert not any(tmp_path.iterdir())


def test_the_cells_command_trains_the_chosen_cells_into_the_store_as_the_profile_configures_them(tmp_path):
    jobs = gpu_cells.cell_jobs("fedlc", "table1", profile="smoke", rows=["fedavg", "fedlc"],
                               columns=["cifar10_beta0.5"], device="cpu")
    pp = get_paper("fedlc")
    smoke = dataclasses.replace(pp.profile("smoke"), device="cpu")
    assert [j["config"] for j in jobs] == [decide(smoke, pp.table("table1").config(r, "cifar10_beta0.5"), "table1")[0]
                                           for r in ("fedavg", "fedlc")]
    assert gpu_cells.main(["--paper", "fedlc", "--table", "table1", "--profile", "smoke", "--device", "cpu",
                           "--rows", "fedavg", "--columns", "cifar10_beta0.5", "--seeds", "0,1",
                           "--store", str(tmp_path)]) == 0
    record = (tmp_path / "cells-fedlc-table1.json").read_text()
    assert '"seed": 1' in record and '"status": "ok"' in record
    store = Store(tmp_path)
    for seed in (0, 1):
        key = store.key(Config.from_dict({**jobs[0]["config"], "seed": seed}))
        assert store.load_result(key) is not None


class _Stop(Exception):
    pass


def test_progress_and_record_show_finished_interrupted_and_unstarted_runs(tmp_path):
    """One run finished, one stopped after its first round (its checkpoint in the store), one never
    started: the record says which, how far each got and the gain where both reached the same round."""
    from fedlib.repro.artefacts.paper_page import gpu_lines
    from fedlib.simulation import simulate

    kw = dict(profile="smoke", rows=["fedavg", "fedlc"], columns=["cifar10_beta0.5"], device="cpu")
    gpu_cells.train_cells("fedlc", "table1", seeds=[0], store=tmp_path, progress=False, **{**kw, "rows": ["fedavg"]})
    fedlc = Config.from_dict({**gpu_cells.cell_jobs("fedlc", "table1", **kw)[1]["config"], "seed": 0,
                              "checkpoint_every": 1})
    assert fedlc.rounds >= 2

    def stop(round_, state):
        if round_ == 1:
            raise _Stop

    with pytest.raises(_Stop):
        simulate(fedlc, store=Store(tmp_path), progress=False, on_round_end=stop)
    runs, curves = gpu_cells.progress("fedlc", "table1", seeds=[0, 1], store=tmp_path, device_name="Test GPU", **kw)
    state = {(r.row, r.seed): r for r in runs.itertuples()}
    assert state[("fedavg", 0)].state == "finished" and state[("fedavg", 0)].round == fedlc.rounds
    assert state[("fedlc", 0)].state == "interrupted" and state[("fedlc", 0)].round == 1
    assert state[("fedavg", 1)].state == "not started" and math.isnan(state[("fedavg", 1)].accuracy)
    assert state[("fedlc", 0)].device_name == "Test GPU" and pd.isna(state[("fedavg", 1)].device_name)  # on none yet
    assert set(curves.seed) == {0} and curves[curves.row == "fedlc"]["round"].max() == 1
    assert (tmp_path / Store(tmp_path).key(fedlc) / "checkpoint.pt").exists()  # reading it removed nothing

    out = gpu_cells.record("fedlc", "table1", tmp_path / "gpu", seeds=[0, 1], store=tmp_path, device_name="Test GPU",
                           trained_at="abc1234", **kw)
    assert {p.name for p in (tmp_path / "gpu").iterdir()} >= {"table1_gpu_runs.md", "table1_gpu_runs.csv",
                                                             "table1_gpu_curves.pdf", "table1_gpu_curves.png"}
    caption = (tmp_path / "gpu" / "table1_gpu_runs.md").read_text()
    assert "1 finished" in caption and "1 interrupted" in caption and "2 not started" in caption
    # the two runs of seed 0 stopped at different rounds: compared at the last round both reached (1), read
    # from the curves, never at their different last rounds; seed 1 never started and has no comparison
    at_one = curves[curves["round"] == 1].set_index("row").test_accuracy
    paired = out["runs"].set_index(["row", "seed"])
    assert paired.loc[("fedavg", 0), "paired_round"] == paired.loc[("fedlc", 0), "paired_round"] == 1
    assert paired.loc[("fedavg", 0), "paired_accuracy"] == at_one["fedavg"]
    assert paired.loc[("fedlc", 0), "paired_accuracy"] == at_one["fedlc"]
    assert math.isnan(paired.loc[("fedavg", 1), "paired_accuracy"])
    assert (f"at round 1 (the furthest round both runs of a seed reached): {at_one['fedlc'] - at_one['fedavg']:+.2f} pp"
            " over 1 seed") in caption
    assert out["runs"].paper.notna().all()
    lines = "\n".join(gpu_lines(tmp_path / "gpu", "gpu"))
    assert "table1_gpu_curves.png" in lines and "trained at `abc1234`" in lines and "Test GPU" in lines


def test_only_seeds_compared_at_the_furthest_round_count(tmp_path):
    """Seed 0's runs both finished (paired at 400); seed 1's FedLC run is at round 60.  The comparison and
    the claims' cells count seed 0 alone: an accuracy at round 60 is no draw of the one at round 400."""
    import pandas as pd

    from fedlib.repro.artefacts.claim_evidence import _gpu_frame

    runs = pd.DataFrame({"row": ["fedavg", "fedlc", "fedavg", "fedlc"], "column": ["cifar10_beta0.5"] * 4,
                         "seed": [0, 0, 1, 1], "state": ["finished", "finished", "finished", "interrupted"],
                         "round": [400, 400, 400, 65], "rounds": [400] * 4, "accuracy": [65.0, 66.0, 62.0, 44.0],
                         "paired_round": [400, 400, 60, 60], "paired_accuracy": [65.0, 66.0, 42.0, 44.0],
                         "paper": [60.18, 72.99] * 2})
    kept = gpu_cells.compared(runs)
    assert sorted(kept.seed) == [0, 0]
    text = gpu_cells._gain_text(get_paper("fedlc"), runs)
    assert "at round 400" in text and "+1.00 pp over 1 seed" in text and "seed 1 (+2.00 at round 60)" in text

    path = tmp_path / "runs.csv"
    runs.to_csv(path, index=False)
    frame = _gpu_frame(path, get_paper("fedlc"), "table1").set_index("row")
    assert frame.loc["fedavg", "n_seeds"] == 1 and frame.loc["fedavg", "ours_mean"] == 65.0
    assert frame.loc["fedlc", "ours_mean"] == 66.0 and "round 400" in frame.loc["fedlc", "note"]


def test_a_run_of_another_engine_memory_budget_or_layout_is_read_as_the_cells_and_a_lease_resumes_it_so(tmp_path):
    """The tables read GPU runs of the vectorized and the compiled engine under either memory budget and either
    layout (GPU_ENGINES × GPU_MEMORY_BUDGETS × GPU_MEMORY_FORMATS: rounding-only variants; float32 only): a seed
    the compiled engine finished is found, under its own key; a lease that chose the vectorized engine and
    another budget skips it, and resumes a checkpoint under the engine, budget and layout that wrote it."""
    from fedlib.repro.budget.costs import GPU_ENGINES, GPU_MEMORY_BUDGETS, GPU_MEMORY_FORMATS, gpu_key
    from fedlib.repro.lease_queue import held_variant

    assert GPU_ENGINES == ("vectorized", "compiled") and GPU_MEMORY_BUDGETS == (4.0, 24.0)
    assert GPU_MEMORY_FORMATS == ("model", "contiguous")
    store = Store(tmp_path)
    _plant_gpu_result(store, {**BASE, "seed": 0, "engine": "compiled"})
    compiled0 = store.key(Config.from_dict({**BASE, "seed": 0, "engine": "compiled", "device": "cuda"}))
    assert gpu_key(store, {**BASE, "seed": 0, "device": "cuda"}) == compiled0
    assert gpu_key(store, {**BASE, "seed": 1, "device": "cuda"}) == store.key(
        Config.from_dict({**BASE, "seed": 1, "device": "cuda"}))
    _plant_gpu_result(store, {**BASE, "seed": 1, "memory_budget_gb": 24.0}, device_name="Test GPU 141GB")
    _plant_gpu_result(store, {**BASE, "seed": 4, "memory_format": "contiguous"}, device_name="Test GPU 94GB")
    assert stored_gpu_runs(BASE, [0, 1, 2, 4], store) == {0: "Test GPU 80GB", 1: "Test GPU 141GB",
                                                          4: "Test GPU 94GB"}
    assert stored_gpu_runs({**BASE, "precision": "tf32"}, [0], store) == {}  # another precision: not this cell
    assert stored_gpu_runs({**BASE, "memory_budget_gb": 8.0}, [2], store) == {}
    cuda = {**BASE, "device": "cuda", "engine": "vectorized", "precision": "float32", "memory_budget_gb": 24.0}
    held = {"engine": "compiled", "memory_budget_gb": 4.0, "memory_format": "model"}
    assert held_variant(store, {**cuda, "seed": 0}) == held
    assert held_variant(store, {**cuda, "seed": 0, "memory_format": "contiguous"}) == held  # its own layout kept
    assert held_variant(store, {**cuda, "seed": 1, "memory_budget_gb": 4.0}) == {
        "engine": "vectorized", "memory_budget_gb": 24.0, "memory_format": "model"}
    assert held_variant(store, {**cuda, "seed": 4}) == {"engine": "vectorized", "memory_budget_gb": 4.0,
                                                         "memory_format": "contiguous"}
    assert held_variant(store, {**cuda, "seed": 2, "engine": "compiled", "memory_format": "contiguous"}) == {
        "engine": "compiled", "memory_budget_gb": 24.0, "memory_format": "contiguous"}  # its own
    assert held_variant(store, {**cuda, "seed": 0, "precision": "tf32"})["engine"] == "vectorized"
    assert held_variant(store, {**cuda, "seed": 0, "engine": "sequential"}) == {}
    ckpt = store.key(Config.from_dict({**cuda, "seed": 3, "engine": "compiled", "memory_budget_gb": 4.0}))
    store.entry(ckpt).mkdir(parents=True)
    (store.entry(ckpt) / "checkpoint.pt").write_bytes(b"")
    assert held_variant(store, {**cuda, "seed": 3}) == held
