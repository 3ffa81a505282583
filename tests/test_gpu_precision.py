"""GPU runs in TF32 (issue 37): a profile's tables read one precision (``Profile.gpu_precision``), runs in
another are recorded apart and checked, run by run, against the same runs in float32; the lease's plan prices
a precision and skips what the store already holds.  All on the CPU: the GPU runs are results planted under
their store keys, with learning curves written out here, so every expected number is known by hand."""

from __future__ import annotations

import dataclasses
import json
import math

import pytest
import torch

from fedlib.config import Config
from fedlib.repro import lease
from fedlib.repro.budget.costs import GPU_PRECISION_FACTOR
from fedlib.repro import gpu_cells as cells
from fedlib.repro.budget.gate import decide
from fedlib.repro.spec.paper import get_paper
from fedlib.store import Store

COLUMN = "cifar10_beta0.5"
no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks what a machine without CUDA does")


def _config(row: str, precision: str) -> dict:
    job, = cells.cell_jobs("fedlc", "table1", rows=[row], columns=[COLUMN], precision=precision)
    return job["config"]


def _plant(store: Store, row: str, precision: str, seed: int, curve: dict[int, float], *, finished=True,
           **variant) -> str:
    """A GPU run of FedLC Table 1 (``row``, CIFAR-10 β=0.5) in ``precision``: its test accuracy (a fraction) at
    each evaluated round of ``curve``; finished (a result), or stopped at its last round (a checkpoint); trained
    under ``variant`` (engine, memory budget, layout) where given."""
    cfg = Config.from_dict({**_config(row, precision), "seed": seed, **variant})
    key = store.key(cfg)
    history = [{"round": r, "test_accuracy": a} for r, a in sorted(curve.items())]
    if finished:
        store.save_result(key, cfg, {"device_name": "Test GPU", "final_accuracy": history[-1]["test_accuracy"]},
                          history, {"w": torch.zeros(1)})
    else:
        store.save_checkpoint(key, cfg, {"history": history, "stage_state": {"round": max(curve)}})
    return key


def test_a_profiles_gpu_precision_is_validated_naming_the_profile_and_the_choices():
    prof = get_paper("fedlc").profile("paper")
    assert prof.gpu_precision == "float32"
    with pytest.raises(ValueError, match=r"gpu_precision of profile 'paper' must be one of float32, tf32, bf16, "
                                         r"got 'fp16'"):
        dataclasses.replace(prof, gpu_precision="fp16")


def test_the_tf32_key_differs_and_only_the_precision_changes():
    f32, tf32 = _config("fedlc", "float32"), _config("fedlc", "tf32")
    assert f32["device"] == tf32["device"] == "cuda" and "precision" not in f32
    assert {k: v for k, v in tf32.items() if k != "precision"} == f32 and tf32["precision"] == "tf32"
    assert Store("/").key(Config.from_dict(tf32)) != Store("/").key(Config.from_dict(f32))


@no_cuda
def test_a_cell_reads_its_gpu_runs_in_the_profiles_precision_only(tmp_path, monkeypatch):
    """A TF32 run in the store is not what a float32 profile shows, nor a float32 run a TF32 profile: no cell
    mixes precisions, and the note names a precision other than float32."""
    monkeypatch.setenv("FEDLIB_STORE", str(tmp_path))
    store = Store(tmp_path)
    _plant(store, "fedlc", "tf32", 0, {400: 0.70})
    pp = get_paper("fedlc")
    base = pp.table("table1").config("fedlc", COLUMN)
    f32 = dataclasses.replace(pp.profile("paper"), device="cpu")
    cfg, note = decide(f32, base, "table1")
    assert cfg is None and "needs a GPU" in note
    cfg, note = decide(dataclasses.replace(f32, gpu_precision="tf32"), base, "table1")
    assert cfg == _config("fedlc", "tf32") and "(Test GPU, in tf32): 1 of 5 seeds" in note
    _plant(store, "fedlc", "float32", 1, {400: 0.66})
    cfg, note = decide(f32, base, "table1")
    assert cfg == _config("fedlc", "float32") and "(Test GPU): 1 of 5 seeds" in note and "tf32" not in note
    on_gpu = dataclasses.replace(f32, device="cuda", gpu_precision="tf32")  # a GPU regeneration trains in it
    assert decide(on_gpu, base, "table1")[0]["precision"] == "tf32"


def test_a_gpu_estimate_scales_by_its_precisions_measured_factor():
    cost = get_paper("fedlc").profile("paper").cost
    f32, tf32 = _config("fedlc", "float32"), _config("fedlc", "tf32")
    assert cost.seconds(tf32, gpu=True) == pytest.approx(cost.seconds(f32, gpu=True) * 0.612 / 0.952)
    assert cost.seconds(tf32) == cost.seconds(f32)  # the CPU estimate is float32's: a CPU has no TF32
    assert GPU_PRECISION_FACTOR["float32"] == 1.0 and 0 < GPU_PRECISION_FACTOR["tf32"] < 1


def test_the_plan_skips_runs_the_store_finished_and_prices_a_resumed_one_by_its_rounds_left(tmp_path):
    store = Store(tmp_path)
    entries = [{"kind": "cell", "paper": "fedlc", "table": "table1", "columns": [COLUMN], "rows": ["fedavg", "fedlc"],
                "seeds": [0]}]
    jobs = lease.queue_jobs(entries)
    cost = get_paper("fedlc").profile("paper").cost
    est = cost.seconds(_config("fedavg", "tf32"), gpu=True)
    kw = dict(measure_s=0.0, reserve_s=0.0, precision="tf32")
    rows = lease.plan(jobs, 60, store=store, **kw)
    assert [r["outcome"] for r in rows] == ["finishes", "finishes"] and rows[1]["end_min"] == pytest.approx(2 * est / 60)
    _plant(store, "fedavg", "tf32", 0, {5: 0.2, 400: 0.6})
    _plant(store, "fedlc", "tf32", 0, {5: 0.2, 100: 0.5}, finished=False)
    _plant(store, "fedlc", "float32", 0, {5: 0.2, 400: 0.6})  # another precision: not this lease's run
    rows = lease.plan(jobs, 60, store=store, **kw)
    assert rows[0]["outcome"] == "finished in the store" and rows[0]["est_gpu_min"] == 0.0
    assert rows[1]["outcome"] == "resumes at round 100: finishes"
    assert rows[1]["est_gpu_min"] == pytest.approx(est * 300 / 400 / 60) and rows[1]["start_min"] == 0.0
    # cut short: the run reaches round 100 + the rounds of the minutes left
    minutes = est * 150 / 400 / 60
    cut, = [r for r in lease.plan(jobs, minutes, store=store, **kw) if "resumes" in r["outcome"]]
    assert cut["outcome"] == "resumes at round 100: reaches ≈ 62 %"  # (100 + 150) / 400
    f32 = lease.plan(jobs, 60, store=store, **{**kw, "precision": "float32"})
    assert [r["outcome"] for r in f32] == ["finishes", "finished in the store"]


def _check_store(tmp_path) -> Store:
    """Seeds 0 and 1 of FedAvg and FedLC in float32 and in TF32, evaluated at rounds 200 and 400; FedLC seed 1 in
    float32 stopped at round 200."""
    store = Store(tmp_path)
    acc = {("fedavg", "float32", 0): (0.50, 0.6585), ("fedavg", "float32", 1): (0.48, 0.6282),
           ("fedlc", "float32", 0): (0.52, 0.6644), ("fedlc", "float32", 1): (0.49, None),
           ("fedavg", "tf32", 0): (0.51, 0.6600), ("fedavg", "tf32", 1): (0.47, 0.6250),
           ("fedlc", "tf32", 0): (0.53, 0.6700), ("fedlc", "tf32", 1): (0.50, 0.6400)}
    for (row, precision, seed), (mid, end) in acc.items():
        curve = {200: mid} if end is None else {200: mid, 400: end}
        _plant(store, row, precision, seed, curve, finished=end is not None)
    return store


def test_the_precision_check_sets_each_run_against_itself_and_seeds_against_seeds(tmp_path):
    store = _check_store(tmp_path)
    out = cells.precision_check("fedlc", "table1", tmp_path / "gpu-tf32", seeds=[0, 1], precision="tf32",
                                rows=["fedavg", "fedlc"], columns=[COLUMN], store=store, trained_at="abc1234")
    pairs = out["pairs"].set_index(["row", "seed"])
    # counted: the three runs both precisions finished, at round 400; FedLC seed 1 (float32 at round 200) is not
    assert sorted(pairs.index) == [("fedavg", 0), ("fedavg", 1), ("fedlc", 0)]
    assert (pairs["round"] == 400).all()
    assert pairs.loc[("fedavg", 0), "diff_pp"] == pytest.approx(66.00 - 65.85)
    assert pairs.loc[("fedavg", 1), "diff_pp"] == pytest.approx(62.50 - 62.82)
    assert pairs.loc[("fedlc", 0), "diff_pp"] == pytest.approx(67.00 - 66.44)
    # the yardstick at round 400: seeds 0 and 1 of FedAvg in float32, of FedAvg and of FedLC in TF32
    assert sorted(out["seed_diffs"]) == pytest.approx(sorted([65.85 - 62.82, 66.00 - 62.50, 67.00 - 64.00]))
    assert out["verdict"] == "within"  # (0.15 + 0.32 + 0.56) / 3 = 0.34 pp against (3.03 + 3.50 + 3.00) / 3
    caption = (tmp_path / "gpu-tf32" / "table1_precision_check.md").read_text()
    assert "tf32 moves a run by 0.34 pp on average (3 runs, largest 0.56)" in caption
    assert "within the 3.18 pp that changing only the seed moves one (3 seed pairs)" in caption
    assert "fedlc seed 1 (+1.00 at round 200)" in caption  # listed, not counted
    meta = json.loads((tmp_path / "gpu-tf32" / "table1_precision_curves.json").read_text())
    assert meta["verdict"] == "within" and meta["precision"] == "float32, tf32" and meta["trained_at"] == "abc1234"
    assert (tmp_path / "gpu-tf32" / "table1_precision_curves.png").exists()


def test_the_precision_check_pairs_a_run_trained_in_another_layout_and_names_it(tmp_path):
    """A lease that measured the contiguous layout faster trains its TF32 runs so: the check still pairs each with
    its float32 run (the layout changes rounding only: GPU_MEMORY_FORMATS), and its caption says which layout."""
    store = Store(tmp_path)
    _plant(store, "fedavg", "float32", 0, {400: 0.6585})
    _plant(store, "fedavg", "float32", 1, {400: 0.6282})
    _plant(store, "fedavg", "tf32", 0, {400: 0.6600}, memory_format="contiguous")
    out = cells.precision_check("fedlc", "table1", tmp_path / "gpu-tf32", seeds=[0, 1], precision="tf32",
                                rows=["fedavg"], columns=[COLUMN], store=store)
    pair, = out["pairs"].itertuples()
    assert (pair.seed, pair.round) == (0, 400) and pair.diff_pp == pytest.approx(66.00 - 65.85)
    caption = (tmp_path / "gpu-tf32" / "table1_precision_check.md").read_text()
    assert "in float32 (vectorized engine, 4 GB) and in tf32 (vectorized engine, 4 GB, contiguous)" in caption


def test_the_precision_check_says_beyond_or_no_pair_by_the_same_rule(tmp_path):
    store = Store(tmp_path)
    for seed, (f32, tf32) in enumerate([(0.60, 0.70), (0.62, 0.66)]):  # TF32 moves the runs 10 and 4 pp
        _plant(store, "fedavg", "float32", seed, {400: f32})
        _plant(store, "fedavg", "tf32", seed, {400: tf32})
    kw = dict(seeds=[0, 1], rows=["fedavg"], columns=[COLUMN], store=store)
    out = cells.precision_check("fedlc", "table1", tmp_path / "a", precision="tf32", **kw)
    assert sorted(out["seed_diffs"]) == pytest.approx([2.0, 4.0])  # float32 62 − 60, TF32 70 − 66: mean 3
    assert math.isclose(out["pairs"].diff_pp.abs().mean(), 7.0) and out["verdict"] == "beyond"
    none = cells.precision_check("fedlc", "table1", tmp_path / "b", precision="bf16", **kw)
    assert none["verdict"] == "no pair" and none["pairs"].empty
    with pytest.raises(ValueError, match="precision must be another than float32"):
        cells.precision_check("fedlc", "table1", tmp_path / "c", precision="float32", **kw)


def test_a_tf32_lease_is_imported_apart_with_its_precision_check(tmp_path):
    """A lease that trained in TF32: its runs go into figures/<paper>/paper/gpu-tf32/ with the precision check;
    the float32 record (gpu/) is not touched."""
    device_store = _check_store(tmp_path / "device")
    runs = [{"kind": "cell", "paper": "fedlc", "source": "table1", "row": row, "column": COLUMN, "seed": seed,
             "state": "finished", "round": 400, "rounds": 400,
             "key": device_store.key(Config.from_dict({**_config(row, "tf32"), "seed": seed}))}
            for row in ("fedavg", "fedlc") for seed in (0, 1)]
    record = {"device": "cuda", "device_name": "Test GPU", "commit": "abc1234", "profile": "paper",
              "training": {"engine": "vectorized", "precision": "tf32", "slots": 1}, "runs": runs}
    lease.write_outputs(tmp_path / "out", record, device_store)
    dev = tmp_path / "dev-store"
    for row, seed in (("fedavg", 0), ("fedavg", 1), ("fedlc", 0)):  # the float32 runs an earlier lease brought
        _plant(Store(dev), row, "float32", seed, {200: 0.5, 400: 0.65})
    done = lease.import_lease(tmp_path / "out", store=dev, figures=tmp_path / "figures", log=lambda *_: None)
    folder = tmp_path / "figures" / "fedlc" / "paper" / "gpu-tf32"
    assert done["written"] == {"fedlc table1 tf32": str(folder)} and not (folder.parent / "gpu").exists()
    names = {p.name for p in folder.iterdir()}
    assert {"table1_gpu_runs.md", "table1_gpu_curves.png", "table1_precision_check.md",
            "table1_precision_curves.png", "lease.json"} <= names
    assert "on Test GPU, in tf32, paper profile: 4 finished" in (folder / "table1_gpu_runs.md").read_text()
    assert "3 runs" in (folder / "table1_precision_check.md").read_text()


def test_a_lease_trains_an_entrys_own_precision_and_engine_in_a_pack_of_its_own_in_queue_order(tmp_path, monkeypatch):
    """A pack holds one precision (fedlib.repro.run.pack refuses a mix) and one engine: the lease splits the queue
    where either changes, and keeps the queue's order across the packs.  A run an earlier lease started under
    another engine (a checkpoint in the store) resumes under that engine."""
    from types import SimpleNamespace

    import fedlib.repro.run.pack as pack

    entries = [{"kind": "cell", "paper": "fedlc", "table": "table1", "columns": [COLUMN], "rows": ["fedavg", "fedlc"],
                "seeds": [0]},
               {"kind": "cell", "paper": "fedlc", "table": "table1", "columns": [COLUMN], "rows": ["fedavg"],
                "seeds": [0], "precision": "tf32", "engine": "compiled"},
               {"kind": "cell", "paper": "fedlc", "table": "table1", "columns": [COLUMN], "rows": ["fedavg"],
                "seeds": [1]}]
    jobs = lease.queue_jobs(entries)
    assert [j.name for j in jobs][2] == f"fedlc table1 fedavg/{COLUMN} seed 0 in tf32 (compiled engine)"
    store = Store(tmp_path)
    held = Config.from_dict({**_config("fedavg", "float32"), "seed": 1, "engine": "compiled", "checkpoint_every": 5})
    store.save_checkpoint(store.key(held), held, {"history": [], "stage_state": {"round": 5}})
    packs = []

    modes = []

    def fake_pack(configs, store, *, slots, mode, stop, on_event):
        packs.append([(c.seed, c.method, c.precision, c.engine) for c in configs])
        modes.append(mode)
        return [SimpleNamespace(index=i, state="finished", round=c.rounds, config=c, wall_s=1.0, error=None,
                                round_times=[0.1, 0.1]) for i, c in enumerate(configs)]

    monkeypatch.setattr(pack, "run_pack", fake_pack)
    rows = lease.train(jobs, store, engine="vectorized", precision="float32", checkpoint_every=5, slots=2,
                       deadline=math.inf, log=lambda *_: None)
    assert packs == [[(0, "fedavg", "float32", "vectorized"), (0, "fedlc", "float32", "vectorized")],
                     [(0, "fedavg", "tf32", "compiled")], [(1, "fedavg", "float32", "compiled")]]
    assert [r.get("precision") for r in rows] == [None, None, "tf32", None]  # the label the import groups by
    assert modes == ["streams"] * 3  # a CUDA queue's default pack
    packs.clear(), modes.clear()
    lease.train(jobs, store, engine="vectorized", precision="float32", checkpoint_every=5, slots=2,
                deadline=math.inf, pack="processes", log=lambda *_: None)
    assert modes == ["processes"] * 3 and len(packs) == 3
    queue = tmp_path / "pack.toml"
    queue.write_text('[lease]\npack = "threads"\n')
    with pytest.raises(ValueError, match="pack must be 'streams' or 'processes', got 'threads'"):
        lease.load_queue(queue)
    with pytest.raises(ValueError, match="run 0: precision must be one of float32, tf32, bf16, got 'fp16'"):
        queue = tmp_path / "q.toml"
        queue.write_text('[[run]]\nkind = "cell"\npaper = "fedlc"\ntable = "table1"\nprecision = "fp16"\n')
        lease.load_queue(queue)
    with pytest.raises(ValueError, match="run 0: engine must be one of vectorized, compiled, sequential, got 'jit'"):
        queue.write_text('[[run]]\nkind = "cell"\npaper = "fedlc"\ntable = "table1"\nengine = "jit"\n')
        lease.load_queue(queue)
    with pytest.raises(ValueError, match=r"memory_budget_gb must be one of \(4.0, 24.0\).*got 8"):
        queue.write_text('[lease]\nmemory_budget_gb = 8\n')
        lease.load_queue(queue)
    assert lease.load_queue()[0]["memory_budget_gb"] == 4.0  # the default queue's: 24 GB was no faster on an H100
    assert lease.with_lease(jobs[0].config, "vectorized", "float32", 5, 24.0)["memory_budget_gb"] == 24.0
    assert "memory_budget_gb" not in lease.with_lease(jobs[0].config, "vectorized", "float32", 5)  # the config's
