"""The GPU lease's CPU side (issue 37): the precision field, packs equal to runs alone, the lease's plan,
check, stop-in-time, data parts and outputs -- all on the CPU, tiny."""

from __future__ import annotations

import json
import math
import time
import warnings
from dataclasses import dataclass

import pytest
import torch

from fedlib.algorithms.registry import method_params
from fedlib.config import Config, ConfigError, CORE_PARAMS, KEY_EXCLUDED, KEY_OMITTED_AT
from fedlib.precision import precision_scope
from fedlib.repro import lease
from fedlib.repro.run.pack import run_pack
from fedlib.simulation import simulate
from fedlib.store import Store

TINY = dict(dataset="fmnist", max_train_samples=320, max_test_samples=64, num_clients=4, rounds=4, batch_size=32,
            checkpoint_every=2)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


# ------------------------------------------------------------------------------------------ precision
def test_precision_needs_cuda_and_names_the_device():
    for precision in ("tf32", "bf16"):
        with pytest.raises(ConfigError, match=r"precision must be 'float32' on device='cpu'.*device='cuda'"):
            Config(precision=precision)
        assert Config(precision=precision, device="cuda").precision == precision  # valid where stored on a GPU
    with pytest.raises(ConfigError, match="precision must be one of 'float32', 'tf32', 'bf16'"):
        Config(precision="fp16")


def test_default_precision_keeps_the_key_content():
    # the content before the field existed: every core parameter but the excluded ones (and none of the fields
    # added since, at their omitted values: KEY_OMITTED_AT)
    assert KEY_OMITTED_AT["precision"] == "float32"
    cfg = Config(dataset="fmnist", method="fedlc", device="cuda")
    before = {k: getattr(cfg, k) for k in CORE_PARAMS if k not in KEY_EXCLUDED and k not in KEY_OMITTED_AT}
    before.update({p.name: getattr(cfg, p.name) for p in method_params("fedlc")})
    assert cfg.key_dict() == before
    other = Config(dataset="fmnist", method="fedlc", device="cuda", precision="tf32")
    assert other.key_dict() == {**before, "precision": "tf32"}
    assert Store("/").key(other) != Store("/").key(cfg)


def test_bf16_scope_runs_a_vectorized_round_in_bfloat16_and_restores_the_switches():
    from fedlib.experiment import prepare
    from fedlib.simulation import run_round, single_thread

    flags = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    exp = prepare(Config.from_dict({**TINY, "rounds": 1}))
    out = {}
    with single_thread():
        for precision in ("float32", "bf16"):  # on the CPU only through the scope: the mechanism, not a config
            with precision_scope(precision, "cpu"):
                assert torch.is_autocast_enabled("cpu") == (precision == "bf16")
                out[precision] = run_round(exp, exp.initial_state(), 1).state.params
    assert (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) == flags
    diff = max(float((out["bf16"][k] - out["float32"][k]).abs().max()) for k in out["float32"])
    ref = max(float(v.abs().max()) for v in out["float32"].values())
    assert all(v.dtype == torch.float32 and bool(v.isfinite().all()) for v in out["bf16"].values())
    assert 0 < diff < 0.05 * ref  # bf16 products: near, not equal


# ------------------------------------------------------------------------------------------ packs
def _configs():
    return [Config.from_dict({**TINY, "method": m, "seed": s})
            for m, s in (("fedavg", 0), ("fedlc", 0), ("fedavg", 1), ("fedprox", 2))]


@pytest.mark.parametrize("mode", ["turns", "streams", "processes"])
def test_a_packed_run_equals_the_run_alone_bit_for_bit(tmp_path, mode):
    configs = _configs()
    runs = run_pack(configs, Store(tmp_path), slots=3, mode=mode)
    assert [r.state for r in runs] == ["finished"] * 4
    for cfg in configs:
        alone = simulate(cfg, store=None, progress=False)["params"]
        packed = Store(tmp_path).load_result(Store(tmp_path).key(cfg))["params"]
        assert all(torch.equal(alone[k], packed[k]) for k in alone)


def test_a_pack_refuses_mixed_precisions_duplicates_and_streams_of_global_rng_methods(tmp_path):
    a = Config.from_dict({**TINY, "device": "cuda"})
    with pytest.raises(ValueError, match="share one precision"):
        run_pack([a, a.replace(precision="tf32")], Store(tmp_path))
    with pytest.raises(ValueError, match="appear twice"):
        run_pack([a, a.replace(checkpoint_every=3)], Store(tmp_path))  # checkpoint_every is not in the key
    concat = Config.from_dict({**TINY, "method": "fedconcat", "num_clusters": 2})
    with pytest.raises(ValueError, match="fedconcat"):
        run_pack([concat], Store(tmp_path), mode="streams")


@dataclass
class _StopAt:
    """A picklable stop: at the first checkpoint at or past ``round_``."""
    round_: int

    def __call__(self, run) -> bool:
        return run.round >= self.round_


def test_a_pack_of_processes_stops_where_told_and_refuses_a_stop_it_cannot_send(tmp_path):
    from fedlib.repro.run.pack import DeadlineStop

    cfg = _configs()[0]
    with pytest.raises(ValueError, match=r"mode='processes' sends stop to each process: it must be picklable "
                                         r"\(fedlib.repro.run.pack.DeadlineStop\)"):
        run_pack([cfg], Store(tmp_path), mode="processes", stop=lambda run: False)
    runs = run_pack([cfg, _configs()[2]], Store(tmp_path), slots=2, mode="processes", stop=_StopAt(2))
    assert [(r.state, r.round) for r in runs] == [("stopped", 2), ("stopped", 2)]
    assert Store(tmp_path).load_checkpoint(Store(tmp_path).key(cfg))["stage_state"]["round"] == 2
    assert len(runs[0].round_ends) == 2 and runs[0].config is cfg
    # a deadline already past: nothing starts
    late = run_pack([_configs()[3]], Store(tmp_path), mode="processes", stop=DeadlineStop(0.0, 1.0))
    assert [(r.state, r.round) for r in late] == [("not started", 0)]


def test_a_deadline_leaves_a_compiled_run_its_first_rounds_compile_time():
    """DeadlineStop before a run's first round: a vectorized run starts when its first checkpoint fits before the
    deadline; a compiled one needs its first round's compile on top (FIRST_ROUND_EXTRA_S); once a round is timed,
    its own times decide, whatever the engine."""
    from types import SimpleNamespace

    from fedlib.repro.run.pack import FIRST_ROUND_EXTRA_S, DeadlineStop

    def run(engine, times=()):
        return SimpleNamespace(round_times=list(times), config=SimpleNamespace(engine=engine, checkpoint_every=5))

    extra = FIRST_ROUND_EXTRA_S["compiled"]
    stop = DeadlineStop(time.time() + 5 * 1.0 + extra / 2, est_round_s=1.0)  # a checkpoint fits, a compile does not
    assert not stop(run("vectorized")) and stop(run("compiled"))
    assert not stop(run("compiled", [extra + 1.0] + [1.0] * 5))  # compiled already: its median round, 1 s


def test_a_stopped_run_resumes_to_the_numbers_of_an_uninterrupted_one(tmp_path):
    cfg = _configs()[1]
    runs = run_pack([cfg], Store(tmp_path), stop=lambda run: run.round >= 2)
    assert (runs[0].state, runs[0].round) == ("stopped", 2)
    assert Store(tmp_path).load_checkpoint(Store(tmp_path).key(cfg))["stage_state"]["round"] == 2
    again = run_pack([cfg], Store(tmp_path))
    assert again[0].state == "finished" and again[0].round_times and len(again[0].round_times) == 2  # rounds 3-4
    alone = simulate(cfg, store=None, progress=False)["params"]
    resumed = Store(tmp_path).load_result(Store(tmp_path).key(cfg))["params"]
    assert all(torch.equal(alone[k], resumed[k]) for k in alone)


# ------------------------------------------------------------------------------------------ the lease
def test_dry_run_prints_the_plan_with_the_cost_models_estimate(capsys):
    from fedlib.repro.budget.costs import GPU_PRECISION_FACTOR
    from fedlib.repro.run.pack import FIRST_ROUND_EXTRA_S

    assert lease.main(["--dry-run", "--minutes", "12"]) == 0
    out = capsys.readouterr().out
    # FedLC's CIFAR-10 unit: 1.93e-5 GPU-s per sample-epoch × 50,000 × 400 rounds + 25.4 s = 411.4 s a run alone;
    # the lease's first minute measures, its last 45 s write: one run finishes at 471.4 s, the next starts there
    # and reaches (720 − 45 − 471.4) / 411.4 of its rounds
    est = 1.93e-5 * 50_000 * 400 + 25.4
    assert "finishes" in out and f"reaches ≈ {100 * (720 - 45 - 60 - est) / est:.0f} %" in out
    assert "vectorized engine in float32" in out
    # two sharing: each run twice as long (packs measured no faster), so neither of the first two finishes
    assert lease.main(["--dry-run", "--minutes", "12", "--slots", "2"]) == 0
    two = capsys.readouterr().out
    assert "finishes" not in two.split("fedconcat")[0] and f"reaches ≈ {100 * (720 - 45 - 60) / (2 * est):.0f} %" in two
    assert "fedlc table1 fedlc/cifar10_beta0.5 seed 0" in out and "not started" in out
    assert "the same run as fedlc table1 fedavg/cifar10_beta0.5 seed 0" in out  # the ladder's top rung is Table 1's
    # the TF32 check run, fifth, priced at TF32's measured round plus the compiled engine's compile: it starts
    # after four float32 runs
    assert lease.main(["--dry-run", "--minutes", "35", "--measure-s", "0"]) == 0
    line, = [x for x in capsys.readouterr().out.splitlines() if "seed 0 in tf32" in x]
    tf32 = est * GPU_PRECISION_FACTOR["tf32"] + FIRST_ROUND_EXTRA_S["compiled"]
    assert line.split()[9:12] == [f"{tf32 / 60:.1f}", f"{4 * est / 60:.1f}", f"{(4 * est + tf32) / 60:.1f}"]
    assert line.endswith("finishes")


def test_default_queue_order_and_check_of_its_cheap_configurations():
    settings, entries = lease.load_queue()
    jobs = lease.queue_jobs(entries)
    names = [j.name for j in jobs if j.config is not None]
    assert names[:5] == ["fedlc table1 fedavg/cifar10_beta0.5 seed 0", "fedlc table1 fedlc/cifar10_beta0.5 seed 0",
                         "fedlc table1 fedavg/cifar10_beta0.5 seed 1", "fedlc table1 fedlc/cifar10_beta0.5 seed 1",
                         "fedlc table1 fedavg/cifar10_beta0.5 seed 0 in tf32 (compiled engine)"]
    tf32 = jobs[4].config
    assert tf32["precision"] == "tf32" and tf32["engine"] == "compiled"
    assert {k: v for k, v in tf32.items() if k not in ("precision", "engine")} == jobs[0].config
    assert lease.with_lease(tf32, "vectorized", "float32", 5)["precision"] == "tf32"  # its own, whatever the lease's
    assert lease.with_lease(tf32, "vectorized", "float32", 5)["engine"] == "compiled"
    assert lease.with_lease(jobs[0].config, "vectorized", "bf16", 5)["precision"] == "bf16"
    assert [j.label["paper"] for j in jobs if j.label["kind"] == "cell"][11:] == \
        ["fedconcat"] * 6 + ["fedic"] * 2 + ["fedabc"] * 6
    assert all(j.config["device"] == "cuda" for j in jobs if j.config)
    # the whole queue's --check takes minutes on a loaded 2-core machine (FEDIC's server round); here the
    # configurations of FedConcat's and FedABC's ladder rungs, which build and train fastest
    cheap = [j for j in jobs if j.label["kind"] == "ladder" and j.label["paper"] in ("fedconcat", "fedabc")]
    assert settings["engines"] == ["vectorized", "compiled"]
    from conftest import have_cxx

    if not have_cxx():  # torch.compile cannot build CPU kernels here: --check would say so for the compiled engine
        settings = {**settings, "engines": ["vectorized"]}
    rows = lease.check(cheap, settings, log=lambda *_: None)
    assert len(rows) == 4 and all(r["ok"] for r in rows), rows
    assert settings["memory_formats"] == ["model", "contiguous"]
    # each trained the tiny round in every engine and layout, compiled ones compiled
    assert all(r["engines"] == [*settings["engines"], *(f"{e} contiguous" for e in settings["engines"])]
               for r in rows)
    assert {r["meta"] for r in rows} <= {"ok", "reached a host read"}


QUEUE = """
[lease]
profile = "paper"
engines = ["vectorized"]
precisions = ["float32"]
checkpoint_every = 5

[[run]]
kind = "cell"
paper = "fedlc"
table = "table4"
columns = ["synthetic_0_0"]
rows = ["fedavg", "fedlc"]
seeds = [0]
"""


def test_a_short_lease_stops_cleanly_with_its_results_stored_and_imports(tmp_path, monkeypatch):
    queue = tmp_path / "queue.toml"
    queue.write_text(QUEUE)
    settings, entries = lease.load_queue(queue)
    jobs = lease.queue_jobs(entries, device="cpu")
    assert [j.config["rounds"] for j in jobs] == [300, 300]
    store = Store(tmp_path / "store")
    t0 = time.time()
    rec = lease.lease(jobs, settings, tmp_path / "out", minutes=0.25, device="cpu", store=store, measure_s=2,
                      reserve_s=1, shares=(1, 2), log=lambda *_: None)
    assert time.time() - t0 < 0.25 * 60 + 10  # stopped before the minutes ran out (a round and a write late at most)
    assert rec["training"]["engine"] == "vectorized" and rec["training"]["precision"] == "float32"
    assert {r["state"] for r in rec["runs"]} <= {"stopped", "finished", "not started"}  # (slots as measured)
    assert rec["runs"][0]["state"] in ("stopped", "finished")
    stopped = [r for r in rec["runs"] if r["state"] == "stopped"]
    for r in stopped:  # each stopped at a checkpoint, which the store holds
        assert r["round"] % 5 == 0 and r["round"] > 0
        assert store.load_checkpoint(r["key"])["stage_state"]["round"] == r["round"]
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files[0] == "lease.json" and len(files) <= 7 and all(f.startswith("store-") for f in files[1:])
    back = json.loads((tmp_path / "out" / "lease.json").read_text())
    assert back["measurements"]["rounds"] and back["runs"][0]["curve"]
    # a developer machine: into another store, and the table's GPU runs as fedlib.repro.gpu_cells --record writes them
    other = tmp_path / "dev-store"
    done = lease.import_lease(tmp_path / "out", store=other, figures=tmp_path / "figures", log=lambda *_: None)
    got = [r for r in rec["runs"] if r["state"] != "not started"]
    assert sorted(done["keys"]) == sorted(r["key"] for r in got)
    for r in got:
        assert (other / r["key"] / ("result.json" if r["state"] == "finished" else "checkpoint.pt")).exists()
    table = (tmp_path / "figures" / "fedlc" / "paper" / "gpu" / "table4_gpu_runs.csv").read_text()
    assert "interrupted" in table or "finished" in table


def test_outputs_fit_the_files_that_come_back(tmp_path, monkeypatch):
    store = Store(tmp_path / "store")
    runs = []
    for i in range(5):
        key = f"k{i}"
        (store.entry(key)).mkdir(parents=True)
        (store.entry(key) / "checkpoint.pt").write_bytes(bytes(3000 + i))
        runs.append({"key": key, "state": "stopped", "round": i, "rounds": 10})
    monkeypatch.setattr(lease, "FILE_LIMIT", 10240 + 10_000)  # room for one entry (≈ 7.1 kB) a part
    rec = lease.write_outputs(tmp_path / "out", {"runs": runs}, store, max_files=3)
    assert [p["keys"] for p in rec["parts"]] == [["k4"], ["k3"]]  # the furthest-got first, max_files − 1 parts
    assert [x["key"] for x in rec["left_out"]] == ["k2", "k1", "k0"]
    assert len(list((tmp_path / "out").iterdir())) == 3


def test_data_parts_round_trip_and_name_a_bad_part(tmp_path):
    root = tmp_path / "data"
    (root / "MNIST" / "raw").mkdir(parents=True)
    gen = torch.Generator().manual_seed(0)
    blob = torch.randint(0, 256, (300_000,), generator=gen, dtype=torch.uint8).numpy().tobytes()
    (root / "MNIST" / "raw" / "train-images-idx3-ubyte").write_bytes(blob)
    manifest = lease.pack_data(["mnist"], tmp_path / "pack", part_mib=0.1, root=root)
    assert len(manifest["parts"]) == math.ceil(manifest["bytes"] / (0.1 * 2 ** 20)) >= 3
    assert all(p["bytes"] <= 0.1 * 2 ** 20 for p in manifest["parts"])
    lease.unpack_data(tmp_path / "pack" / "parts", tmp_path / "device", manifest=tmp_path / "pack" / "manifest.json")
    assert (tmp_path / "device" / "MNIST" / "raw" / "train-images-idx3-ubyte").read_bytes() == blob
    second = tmp_path / "pack" / "parts" / "data-01"
    second.write_bytes(second.read_bytes()[:-1] + b"x")
    with pytest.raises(ValueError, match="data-01"):
        lease.unpack_data(tmp_path / "pack" / "parts", tmp_path / "again", manifest=tmp_path / "pack" / "manifest.json")
    with pytest.raises(FileNotFoundError, match="fmnist"):
        lease.pack_data(["fmnist"], tmp_path / "none", root=root)


def test_a_data_part_is_the_room_the_tracked_tree_leaves_in_a_call(tmp_path, monkeypatch):
    """A call carries the working tree and one part: the part is 64 MiB less the tracked files and the slack,
    whole MiB; untracked files (the device copy skips ignored ones, and the part itself is one) do not count."""
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "tracked.bin").write_bytes(b"\0" * int(1.5 * 2 ** 20))
    (tmp_path / "untracked.bin").write_bytes(b"\0" * 5 * 2 ** 20)
    subprocess.run(["git", "-C", str(tmp_path), "add", "tracked.bin"], check=True)
    assert lease.part_mib_beside_tree(tmp_path) == math.floor(64 - 2 - 1.5) == 60
    monkeypatch.setattr(lease, "CARRY_MIB", 7.0)  # 7 - 2 - 1.5 = 3.5: under the 4 MiB a part needs
    with pytest.raises(ValueError, match="no data part fits"):
        lease.part_mib_beside_tree(tmp_path)


# ------------------------------------------------------------------------------ measuring a pack's rate
class _Ends:
    def __init__(self, *ends):
        self.round_ends = list(ends)


def test_pack_rate_counts_only_the_rounds_all_runs_trained_together():
    """The 2026-11-26 lease summed each run's own best round time: 2.26 rounds/s for 2 runs that then trained
    at 1.1 together.  The pack's rate counts round ends inside the window where every run trains."""
    from fedlib.repro.run.pack import pack_rate

    # turns: two runs alternate 1-second rounds; each run's own round lasts 1 s (the old sum said 2 rounds/s)
    assert pack_rate([_Ends(1, 3, 5, 7), _Ends(2, 4, 6, 8)]) == pytest.approx(1.0)
    # alone: the rounds after the first over their span
    assert pack_rate([_Ends(0.5, 1.5, 2.5, 4.5)]) == pytest.approx(3 / 4)
    # truly concurrent: two runs each finishing a round a second together make 2 rounds/s
    assert pack_rate([_Ends(1, 2, 3, 4), _Ends(1.5, 2.5, 3.5, 4.5)]) == pytest.approx(5 / 2.5)
    # staggered by the serialised setup: never together, no rate (the old measurement said 2 rounds/s)
    assert pack_rate([_Ends(1, 2, 3), _Ends(4, 5, 6)]) is None
    assert pack_rate([_Ends(1), _Ends(1, 2)]) is None and pack_rate([]) is None


def test_pack_rate_of_a_real_pack_in_turns_is_not_the_sum_of_its_runs(tmp_path):
    """Two runs in turns on the CPU compute one at a time: the pack's rate is below the sum of each run's own
    rate by about half (the reduction the turn-taking demands), whatever the machine's speed."""
    from fedlib.repro.run.pack import pack_rate

    configs = [Config.from_dict({**TINY, "rounds": 6, "checkpoint_every": 6, "seed": s}) for s in (0, 1)]
    runs = run_pack(configs, Store(tmp_path), slots=2, mode="turns")
    assert [r.state for r in runs] == ["finished", "finished"]
    a, b = (r.round_ends for r in runs)
    assert all(x < y for x, y in zip(a, b)) and all(y < x for x, y in zip(a[1:], b))  # strictly alternating
    own = sum(1 / min(r.round_times[1:]) for r in runs)
    assert pack_rate(runs) < 0.75 * own


def test_best_share_takes_the_smallest_pack_within_tolerance_of_the_best():
    rows = [{"k": 1, "rounds_per_s": 1.0}, {"k": 2, "rounds_per_s": 1.05}, {"k": 4, "rounds_per_s": 0.9},
            {"k": 8, "note": "not measured"}]
    assert lease.best_share(rows) == 1  # the lease's measurement: packing gave nothing, so runs finish one by one
    assert lease.best_share([{"k": 1, "rounds_per_s": 1.0}, {"k": 2, "rounds_per_s": 2.0},
                             {"k": 4, "rounds_per_s": 2.1}]) == 2
    assert lease.best_share([{"k": 2, "note": "failed: x"}]) == 1


def test_resuming_from_several_leases_keeps_the_latest_checkpoint_and_a_finished_result(tmp_path):
    """Two leases' bring-backs, oldest first (scripts/lease.sh passes benchmarks/leases/*/ in order): the later
    checkpoint of a run replaces the earlier; a result already in the store is kept."""
    def bring_back(name, entries):
        store = Store(tmp_path / f"{name}-store")
        for key, files in entries.items():
            store.entry(key).mkdir(parents=True)
            for f, data in files.items():
                (store.entry(key) / f).write_bytes(data)
        rows = [{"key": k, "state": "finished" if "result.json" in fs else "stopped", "round": 1, "rounds": 2}
                for k, fs in entries.items()]
        lease.write_outputs(tmp_path / name, {"runs": rows}, store)
        return tmp_path / name

    old = bring_back("old", {"a": {"checkpoint.pt": b"round 230"}, "b": {"checkpoint.pt": b"round 225"}})
    new = bring_back("new", {"a": {"checkpoint.pt": b"round 400", "result.json": b"{}"}})
    dev = Store(tmp_path / "dev")
    assert sorted(lease.unpack_store_parts(old, dev)) == ["a", "b"]
    assert lease.unpack_store_parts(new, dev) == ["a"]
    assert (dev.entry("a") / "checkpoint.pt").read_bytes() == b"round 400" and (dev.entry("a") / "result.json").exists()
    assert (dev.entry("b") / "checkpoint.pt").read_bytes() == b"round 225"
    assert lease.unpack_store_parts(old, dev) == ["b"]  # again: the finished run is kept, not set back
    assert (dev.entry("a") / "checkpoint.pt").read_bytes() == b"round 400"


def test_pruning_deletes_only_parts_a_later_lease_holds_as_far_and_resuming_skips_them(tmp_path):
    """Three bring-backs: the second holds the first's runs further on, the third holds one of the second's
    runs but not the other.  The first's part goes, the second's stays; a resume of all three still
    restores every run at its furthest checkpoint or result."""
    def bring_back(name, entries):
        store = Store(tmp_path / f"{name}-store")
        rows = []
        for key, (round_, files) in entries.items():
            store.entry(key).mkdir(parents=True)
            for f, data in files.items():
                (store.entry(key) / f).write_bytes(data)
            rows.append({"key": key, "state": "finished" if "result.json" in files else "stopped", "round": round_,
                         "rounds": 400})
        lease.write_outputs(tmp_path / "leases" / name, {"runs": rows}, store)

    bring_back("1-old", {"a": (225, {"checkpoint.pt": b"a 225"}), "b": (0, {"checkpoint.pt": b"b 0"})})
    bring_back("2-mid", {"a": (400, {"params.pt": b"a", "result.json": b"{}"}), "b": (220, {"checkpoint.pt": b"b 220"}),
                         "c": (65, {"checkpoint.pt": b"c 65"})})
    bring_back("3-new", {"c": (130, {"checkpoint.pt": b"c 130"})})
    removed = lease.prune_superseded(tmp_path / "leases")
    assert [p.split("leases/")[1] for p in removed] == ["1-old/store-00.tar"]
    assert json.loads((tmp_path / "leases" / "1-old" / "lease.json").read_text())["parts"][0]["pruned"] == "2-mid"
    assert (tmp_path / "leases" / "2-mid" / "store-00.tar").exists()  # b is nowhere later
    assert lease.prune_superseded(tmp_path / "leases") == []  # idempotent
    dev = Store(tmp_path / "dev")
    for name in ("1-old", "2-mid", "3-new"):
        lease.unpack_store_parts(tmp_path / "leases" / name, dev)
    assert (dev.entry("a") / "result.json").exists() and (dev.entry("b") / "checkpoint.pt").read_bytes() == b"b 220"
    assert (dev.entry("c") / "checkpoint.pt").read_bytes() == b"c 130"


def test_a_lease_without_git_is_matched_to_its_commit_by_its_code_fingerprint(tmp_path):
    """The device's copy of the tree has no .git: the lease records a fingerprint of fedlib/'s files, and the
    developer machine finds the commit whose tracked files give it (caches ignored; an edit matches none)."""
    import shutil
    import subprocess

    from fedlib.repro.artefacts.provenance import code_fingerprint, commit_of_code

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    (repo / "fedlib" / "sub").mkdir(parents=True)
    (repo / "fedlib" / "a.py").write_text("x = 1\n")
    (repo / "fedlib" / "sub" / "b.py").write_text("y = 2\n")
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "HOME": str(tmp_path), "PATH": __import__("os").environ["PATH"]}

    def git(*args):
        return subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    first = git("rev-parse", "HEAD").strip()
    (repo / "fedlib" / "a.py").write_text("x = 3\n")
    git("commit", "-qam", "two")
    second = git("rev-parse", "HEAD").strip()
    device = tmp_path / "device"  # a copy without .git, with the caches a run leaves
    shutil.copytree(repo / "fedlib", device / "fedlib")
    (device / "fedlib" / "__pycache__").mkdir()
    (device / "fedlib" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\0")
    assert commit_of_code(code_fingerprint(device), repo) == second
    (device / "fedlib" / "a.py").write_text("x = 1\n")
    assert commit_of_code(code_fingerprint(device), repo) == first
    (device / "fedlib" / "a.py").write_text("x = 4\n")
    assert commit_of_code(code_fingerprint(device), repo) is None
    assert lease.lease_commit({"commit": "unknown", "code": code_fingerprint(repo)}, repo) == second
    assert lease.lease_commit({"commit": "unknown", "code": code_fingerprint(device)}, repo) == "unknown"
    assert lease.lease_commit({"commit": first, "code": code_fingerprint(repo)}, repo) == first  # git knew it


def test_a_queue_names_its_layouts_among_those_the_tables_read(tmp_path):
    queue = tmp_path / "queue.toml"
    queue.write_text(QUEUE)
    assert lease.load_queue(queue)[0]["memory_formats"] == ["model"]  # unnamed: the model's registered layout
    queue.write_text(QUEUE.replace('precisions = ["float32"]', 'precisions = ["float32"]\nmemory_formats = ["nhwc"]'))
    with pytest.raises(ValueError, match=r"memory_formats must be a non-empty list among \('model', 'contiguous'\)"):
        lease.load_queue(queue)
    job = {**TINY, "device": "cuda"}
    assert lease.with_lease(job, "vectorized", "float32", 5, 4.0, "contiguous")["memory_format"] == "contiguous"
    assert lease.with_lease({**job, "memory_format": "model"}, "vectorized", "float32", 5, 4.0,
                             "contiguous")["memory_format"] == "model"  # a run's own layout kept


def test_the_measuring_minute_times_each_allowed_layout_and_skips_a_compile_it_cannot_fit():
    """The rows the lease chooses among come first (engine × precision × layout), each timed; a compiled row
    whose compile (FIRST_ROUND_EXTRA_S) would overrun what is left is not started; the choice names a layout."""
    cfg = {**TINY, "device": "cpu", "dataset": "cifar10", "model": "simple_cnn", "rounds": 3}
    from conftest import have_dataset

    if not have_dataset("cifar10"):
        cfg = {**cfg, "dataset": "synthetic", "model": "logreg"}
    m = lease.measure(cfg, precisions=["float32"], shares=(), budget_s=30.0, engines=["vectorized", "compiled"],
                      memory_formats=["model", "contiguous"], log=lambda *_: None)
    rows = [(r["engine"], r["precision"], r["memory_format"]) for r in m["rounds"]]
    assert rows == [("vectorized", "float32", "model"), ("vectorized", "float32", "contiguous"),
                    ("compiled", "float32", "model"), ("compiled", "float32", "contiguous")]  # a CPU has float32 only
    assert all(r["round_s"] > 0 for r in m["rounds"][:2])
    assert all("its compile" in r["note"] and "round_s" not in r for r in m["rounds"][2:])
    timed = {r["memory_format"]: r["round_s"] for r in m["rounds"][:2]}
    assert m["best"] == {"engine": "vectorized", "precision": "float32", "memory_format": min(timed, key=timed.get),
                         "round_s": min(timed.values()), "slots": 1}
