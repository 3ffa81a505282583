"""Run records (fedlib.repro.run.records): a grid answered from its records equals the grid that trained, trains
nothing, and refuses, by name, a run it has no record of; the committed records render a paper's committed
tables again byte for byte."""

import gzip
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from fedlib.repro.run import grid as grid_module
from fedlib.repro.run import records
from fedlib.repro.run.grid import run_grid
from fedlib.store import Store

from conftest import REPO, have_dataset

TINY = dict(dataset="synthetic", num_clients=4, rounds=2, local_epochs=1, batch_size=32)
CELLS = [{"method": m, "config": {**TINY, "method": m}} for m in ("fedavg", "fedprox")]


@pytest.fixture
def written(tmp_path, monkeypatch):
    path = tmp_path / "records.jsonl"
    monkeypatch.setenv(records.RECORDS_ENV, str(path))
    monkeypatch.setenv(records.MODE_ENV, "write")
    trained = run_grid(CELLS, seeds=(0, 1), store=tmp_path / "store", progress=False)
    return trained, path


def _comparable(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=[c for c in ("from_store", "wall_time_s") if c in frame]).reset_index(drop=True)


def test_a_grid_read_from_its_records_equals_the_grid_that_trained(written, monkeypatch, tmp_path):
    trained, path = written
    assert len(records.read(path)) == 4  # one record per distinct run: 2 methods x 2 seeds
    monkeypatch.setenv(records.MODE_ENV, "read")
    monkeypatch.setattr(grid_module, "_run_one", lambda *a: pytest.fail("a run trained while reading records"))
    again = run_grid(CELLS, seeds=(0, 1), store=tmp_path / "empty", progress=False)
    pd.testing.assert_frame_equal(_comparable(again.runs), _comparable(trained.runs))
    pd.testing.assert_frame_equal(again.histories.reset_index(drop=True), trained.histories.reset_index(drop=True))
    assert again.runs.from_store.all()
    assert not (tmp_path / "empty").exists()  # nothing was trained or stored


def test_a_run_without_a_record_is_refused_by_name(written, monkeypatch, tmp_path):
    _, path = written
    monkeypatch.setenv(records.MODE_ENV, "read")
    extra = [{"method": "fedavg", "config": {**TINY, "method": "fedavg", "rounds": 3}}]
    with pytest.raises(records.MissingRecords, match=r"^longer: 1 of 3 runs have no record in records.jsonl"):
        run_grid(CELLS + extra, seeds=(0,), store=tmp_path / "s", progress=False, desc="longer")


def test_a_record_keeps_what_decides_the_run_and_no_parameters(written):
    _, path = written
    rec = next(iter(records.read(path).values()))
    assert set(rec) == {"id", "config", "code_version", "commit", "machine", "result"}
    assert rec["config"]["method"] in ("fedavg", "fedprox") and rec["config"]["seed"] in (0, 1)
    assert rec["result"]["status"] == "ok" and rec["result"]["history"]
    assert "params" not in json.dumps(rec["result"])
    assert len(rec["code_version"]) == 16


def test_the_compressed_file_is_the_same_bytes_for_the_same_records(written, tmp_path):
    _, path = written
    recs = list(records.read(path).values())
    one, two = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    records.write_compressed(one, recs)
    records.write_compressed(two, recs[::-1])
    assert one.read_bytes() == two.read_bytes()
    assert records.read(one) == records.read(path)
    assert gzip.decompress(one.read_bytes()).decode().count("\n") == 4


def test_merge_replaces_on_a_full_regeneration_and_keeps_the_rest_on_a_partial_one(tmp_path):
    old = [{"id": "a", "result": {"v": 1}}, {"id": "b", "result": {"v": 1}}]
    records.write_compressed(tmp_path / "r.gz", old)
    records.append(tmp_path / "new.jsonl", [{"id": "b", "result": {"v": 2}}])
    assert records.merge(tmp_path / "new.jsonl", tmp_path / "r.gz", replace=False) == 2
    assert {k: v["result"]["v"] for k, v in records.read(tmp_path / "r.gz").items()} == {"a": 1, "b": 2}
    assert not (tmp_path / "new.jsonl").exists()
    records.append(tmp_path / "new.jsonl", [{"id": "c", "result": {"v": 3}}])
    assert records.merge(tmp_path / "new.jsonl", tmp_path / "r.gz", replace=True) == 1


def test_a_partial_merge_refuses_to_replace_a_record_of_other_code_and_other_numbers(tmp_path):
    """A partial regeneration retrained runs whose committed records came from older code: the tables not rerun
    read those records, so replacing them silently mixed two code versions in one folder (2026-11-28: quick
    tables moved by 0.01-0.35 pp on a later render).  Same numbers under new code (a carry in effect) replace."""
    old = [{"id": "a", "code_version": "v1", "result": {"accuracy": 90.0, "key": "k1", "wall_time_s": 3.0}},
           {"id": "b", "code_version": "v1", "result": {"accuracy": 80.0, "key": "k2", "wall_time_s": 3.0}}]
    records.write_compressed(tmp_path / "r.gz", old)
    before = (tmp_path / "r.gz").read_bytes()
    same = {"id": "a", "code_version": "v2", "result": {"accuracy": 90.0, "key": "k3", "wall_time_s": 9.0}}
    other = {"id": "b", "code_version": "v2", "result": {"accuracy": 80.5, "key": "k4", "wall_time_s": 3.0}}
    records.append(tmp_path / "new.jsonl", [same, other])
    with pytest.raises(records.RecordsConflict, match=r"1 record\(s\).*ids b.*--only"):
        records.merge(tmp_path / "new.jsonl", tmp_path / "r.gz", replace=False)
    assert (tmp_path / "r.gz").read_bytes() == before and (tmp_path / "new.jsonl").exists()
    assert records.conflicts(records.read(tmp_path / "r.gz"), records.read(tmp_path / "new.jsonl")) == ["b"]
    # decide trains a run again because its record is of other code: it replaces it
    assert records.merge(tmp_path / "new.jsonl", tmp_path / "r.gz", replace=False, retrain=True) == 2
    assert records.read(tmp_path / "r.gz")["b"]["result"]["accuracy"] == 80.5
    # a full regeneration replaces everything; the same numbers under new code are no conflict
    records.append(tmp_path / "new.jsonl", [{**same, "code_version": "v3"}])
    assert records.merge(tmp_path / "new.jsonl", tmp_path / "r.gz", replace=False) == 2


def test_fold_refuses_a_record_of_other_code_and_other_numbers(tmp_path):
    records.write_compressed(tmp_path / records.RECORDS_FILE,
                             [{"id": "a", "code_version": "v1", "result": {"accuracy": 90.0}}])
    records.append(tmp_path / records.PLAIN_RECORDS, [{"id": "a", "code_version": "v2", "result": {"accuracy": 91.0}},
                                                      {"id": "c", "code_version": "v2", "result": {"accuracy": 1.0}}])
    with pytest.raises(records.RecordsConflict):
        records.fold(tmp_path)
    assert list(records.read(tmp_path / records.RECORDS_FILE)) == ["a"]


def test_the_read_only_store_serves_what_it_holds_and_refuses_to_train(tmp_path):
    from fedlib import run

    cfg = {**TINY, "method": "fedavg", "seed": 0}
    stored = run(cfg, store=Store(tmp_path), progress=False)
    again = run(cfg, store=records.ReadOnlyStore(tmp_path), progress=False)
    assert again.from_store and again.summary["final_accuracy"] == stored.summary["final_accuracy"]
    with pytest.raises(records.NeedsTraining, match="needs trained models"):
        run({**cfg, "seed": 1}, store=records.ReadOnlyStore(tmp_path), progress=False)


def test_the_mode_is_checked(monkeypatch):
    monkeypatch.setenv(records.RECORDS_ENV, "x")
    monkeypatch.setenv(records.MODE_ENV, "append")
    with pytest.raises(ValueError, match="FEDLIB_RECORDS_MODE must be 'write' or 'read'"):
        records.mode()


# ------------------------------------------------------------------------------ the committed records
#: The paper and profile whose committed outputs are rendered again from their records (the cheapest to render).
RENDERED = ("fedic", "quick")


@pytest.mark.notebooks
@pytest.mark.slow
@pytest.mark.skipif(not have_dataset("fmnist"), reason="FashionMNIST not found under FEDLIB_DATA")
def test_the_committed_records_render_the_committed_tables_byte_for_byte(tmp_path):
    """Renders FEDIC's quick outputs from figures/fedic/quick/_records.jsonl.gz alone (no store, nothing trains)
    into a copy of its folder, and compares every table (CSV and Markdown) with the committed one."""
    pytest.importorskip("papermill")
    paper, profile = RENDERED
    committed = REPO / "figures" / paper / profile
    assert (committed / records.RECORDS_FILE).exists(), "the committed outputs carry their run records"
    import shutil

    shutil.copytree(committed, tmp_path / "figures" / paper / profile)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    env.pop("FEDLIB_STORE", None)
    proc = subprocess.run([sys.executable, "-m", "fedlib.repro.regenerate", "--paper", paper, "--profile", profile,
                           "--figures", str(tmp_path / "figures"), "--render", "records", "--force", "--no-index", "--quiet"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    tables = sorted(p.name for p in committed.glob("*") if p.suffix in (".csv", ".md"))
    assert tables
    different = [n for n in tables if (tmp_path / "figures" / paper / profile / n).read_bytes() != (committed / n).read_bytes()]
    assert not different, f"rendered from records, these tables differ from the committed ones: {different}"
    rendered = json.loads((tmp_path / "figures" / paper / profile / "_run.json").read_text())["rendered"]
    assert {n["status"] for n in rendered["notebooks"]} == {"rendered"}


def test_a_render_from_records_sees_the_gpu_runs_the_records_hold_without_their_store(tmp_path, monkeypatch):
    """A GPU's runs live in the store that imported them; a render from records on another checkout has an
    empty store.  Where a cell is shown from GPU runs (``budget.gate.decide`` asks ``stored_gpu_runs``), the
    records answer: without that, the render turned FedLC's Fig. 1 GPU bar into "not run"."""
    import fedlib
    from fedlib.config import Config
    from fedlib.repro.budget.costs import stored_gpu_runs

    store = Store(tmp_path / "gpu-store")
    cfg = {**TINY, "method": "fedavg"}
    out = fedlib.run({**cfg, "seed": 0}, store=False, progress=False)  # trained here, stored as a GPU run
    gpu = Config.from_dict({**cfg, "device": "cuda", "seed": 0})
    store.save_result(store.key(gpu), gpu, {**out.summary, "device_name": "Test GPU"},
                      out.history.to_dict("records"), out.params)
    monkeypatch.setenv(records.RECORDS_ENV, str(tmp_path / "records.jsonl"))
    monkeypatch.setenv(records.MODE_ENV, "write")  # the regeneration: the grid reads seed 0, seed 1 is not run
    written = run_grid([{"m": "fedavg", "config": {**cfg, "device": "cuda"}}], seeds=(0, 1), store=store.root,
                       progress=False)
    assert list(written.runs.sort_values("seed").status) == ["ok", "not run"]
    monkeypatch.setenv("FEDLIB_STORE", str(tmp_path / "empty"))
    assert stored_gpu_runs(cfg, [0, 1], store.root) == {0: "Test GPU"}  # (write mode: the store's answer)
    assert stored_gpu_runs(cfg, [0, 1]) == {}  # the render's own store holds none
    monkeypatch.setenv(records.MODE_ENV, "read")
    assert stored_gpu_runs(cfg, [0, 1]) == {0: "Test GPU"}  # the records do; seed 1's record is "not run"
    assert stored_gpu_runs({**cfg, "lr": 0.5}, [0]) == {}  # another configuration: no record, not found


def _committed(tmp_path, recs):
    """``recs`` as the committed records of a figures folder ``tmp_path / "fig"``; the plain file a
    regeneration there would append to."""
    folder = tmp_path / "fig"
    folder.mkdir(exist_ok=True)
    records.write_compressed(folder / records.RECORDS_FILE, recs)
    return folder, folder / records.PLAIN_RECORDS


def test_a_regeneration_goes_on_from_the_runs_that_finished_under_this_code(written, monkeypatch, tmp_path):
    """In write mode with --resume, a run recorded under the code version the current code gives it is not
    trained again (the store's own rule, from the records a checkout carries); one recorded under other code is
    trained.  Without --resume, the committed records are not read: the regeneration trains.
    Every run's record, resumed or trained, is in the new records file; a resumed one as it was, naming the
    commit and machine that trained it (before 2026-12-07 it was written again with the reader's)."""
    trained, path = written
    recs = list(records.read(path).values())
    stale = recs[0]["id"]
    recs[0] = {**recs[0], "code_version": "0" * 16}  # trained by other code
    recs[1] = {**recs[1], "commit": "c0ffee" * 6 + "c0ff", "machine": {"model": "another CPU"}}  # trained elsewhere
    folder, plain = _committed(tmp_path, recs)
    monkeypatch.setenv(records.RECORDS_ENV, str(plain))
    calls = []
    real = grid_module._run_one
    monkeypatch.setattr(grid_module, "_run_one", lambda cfg, root: calls.append(cfg) or real(cfg, root))
    run_grid(CELLS, seeds=(0, 1), store=tmp_path / "cold", progress=False)
    assert len(calls) == 4  # without --resume a regeneration trains (cold, or from its store), as ever
    calls.clear()
    plain.unlink()
    monkeypatch.setenv(records.RESUME_ENV, "1")
    again = run_grid(CELLS, seeds=(0, 1), store=tmp_path / "empty", progress=False)
    assert len(calls) == 1 and records.record_id(grid_module.identity(calls[0])) == stale
    pd.testing.assert_frame_equal(_comparable(again.runs), _comparable(trained.runs))
    assert set(records.read(plain)) == {r["id"] for r in recs}
    assert records.read(plain)[recs[1]["id"]] == recs[1]


def test_each_run_is_recorded_as_it_finishes_so_a_stopped_grid_keeps_them(monkeypatch, tmp_path):
    folder, plain = _committed(tmp_path, [])
    monkeypatch.setenv(records.RECORDS_ENV, str(plain))
    monkeypatch.setenv(records.MODE_ENV, "write")
    real, calls = grid_module._run_one, []

    def stopped_at_third(cfg, root):
        calls.append(cfg)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the machine is handed back mid-grid
        return real(cfg, root)

    monkeypatch.setattr(grid_module, "_run_one", stopped_at_third)
    with pytest.raises(KeyboardInterrupt):
        run_grid(CELLS, seeds=(0, 1), store=tmp_path / "s1", progress=False)
    assert len(records.read(plain)) == 2  # the two that finished
    calls.clear()
    monkeypatch.setattr(grid_module, "_run_one", lambda cfg, root: calls.append(cfg) or real(cfg, root))
    run_grid(CELLS, seeds=(0, 1), store=tmp_path / "s2", progress=False)  # another machine: an empty store
    assert len(calls) == 2 and len(records.read(plain)) == 4


def test_a_record_cut_off_mid_line_is_no_record(tmp_path):
    good = {"id": "a" * 20, "result": {"status": "ok"}}
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps(good) + "\n" + '{"id": "bbbb", "resu')
    assert list(records.read(path)) == [good["id"]]
    path.write_text('{"id": "bbbb", "resu\n' + json.dumps(good) + "\n")
    with pytest.raises(json.JSONDecodeError):  # inside the file it is damage, not a stop: refused
        records.read(path)


def test_fold_adds_a_regeneration_under_way_to_the_committed_records_and_keeps_its_file(tmp_path):
    a, b, c = ({"id": k * 20, "result": {"status": "ok"}} for k in "abc")
    folder, plain = _committed(tmp_path, [a])
    records.write_plain(folder / records.STOPPED_RECORDS, [b])
    records.append(plain, [c])
    assert records.main(["fold", str(folder)]) == 0
    assert set(records.read(folder / records.RECORDS_FILE)) == {a["id"], b["id"], c["id"]}
    assert plain.exists() and list(records.read(plain)) == [c["id"]]


def test_a_stopped_regenerations_records_are_set_aside_for_the_next_one(tmp_path):
    """regenerate: the plain file a stopped regeneration left moves beside the committed records (where the
    grids resume from it), merged with an earlier stopped one's; the new regeneration starts an empty file."""
    a, b = ({"id": k * 20, "result": {"status": "ok"}} for k in "ab")
    folder, plain = _committed(tmp_path, [])
    assert records.set_aside_stopped(folder) == 0
    records.write_plain(folder / records.STOPPED_RECORDS, [a])
    records.append(plain, [b])
    assert records.set_aside_stopped(folder) == 2
    assert not plain.exists() and set(records.read(folder / records.STOPPED_RECORDS)) == {a["id"], b["id"]}


#: Committed folders whose records hold runs of one method and model under more than one training-code version
#: (`python -m fedlib.repro.run.records versions figures/<paper>/<profile>`), that no carry proved equal.  They leave
#: this list when retrained whole at one code (`regenerate --profile P --paper X`) or carried; it may only shrink.
#: Empty since 2026-11-29: the five folders it named were carried (benchmarks/carries/*-193dec5.json), and the nine
#: records a dirty tree had trained were retrained at one code (the same numbers).
MIXED_CODE: set[str] = set()


def test_code_versions_counts_each_method_and_models_versions():
    cfg = {**TINY, "method": "fedavg", "model": "logreg"}
    recs = {"a": {"config": {**cfg, "seed": 0}, "code_version": "v1"},
            "b": {"config": {**cfg, "seed": 1}, "code_version": "v2"},
            "c": {"config": {**cfg, "method": "fedprox", "seed": 0}, "code_version": "v3"}}
    found = records.code_versions(recs)
    assert sorted(found.values(), key=len) == [{"v3": 1}, {"v1": 1, "v2": 1}]


def test_a_committed_folder_mixes_code_versions_only_where_listed():
    import glob

    folders = {os.path.relpath(os.path.dirname(p), REPO)
               for p in glob.glob(str(REPO / "figures" / "*" / "*" / records.RECORDS_FILE))
               if "/smoke" not in p}
    mixed = {f for f in folders if any(len(v) > 1 for v in records.code_versions(
        records.read(REPO / f / records.RECORDS_FILE)).values())}
    assert mixed <= MIXED_CODE, f"records of two training codes in one folder: {sorted(mixed - MIXED_CODE)}"
    assert not MIXED_CODE - mixed, f"one code now: take {sorted(MIXED_CODE - mixed)} off MIXED_CODE"


def test_a_record_names_its_machine_and_a_run_that_never_trained_holds_no_code():
    """Records of one code computed on two CPUs differed by 0.0003-0.0005 in accuracy after 10-15 rounds (FedABC
    and FedLC quick, 2026-11-29: the old commit's code and the current one gave the same numbers here, the record
    another): a record names its machine, and the versions report counts them. A "not run" record (an absent
    dataset) holds no number, so it mixes no code."""
    from fedlib.repro.run.machine import fingerprint

    cfg = {**TINY, "method": "fedavg", "model": "logreg"}
    rec = records.make_record("x", cfg, {"status": "ok", "accuracy": 1.0})
    here = fingerprint()
    assert rec["machine"] == here
    recs = {"a": {**rec, "code_version": "v1"},
            "b": {"config": {**cfg, "seed": 1}, "code_version": "v2", "result": {"status": "not run"}}}
    assert list(records.code_versions(recs).values()) == [{"v1": 1}]
    recs["c"] = {"config": {**cfg, "seed": 2}, "code_version": "v1", "result": {"status": "ok"}}
    assert records.machines(recs) == {f"{here['model']}, {here['isa']}, torch {here['torch']}": 1, "not recorded": 1}


def test_no_committed_record_was_trained_by_uncommitted_code():
    """A record whose commit ends in -dirty came from a tree with uncommitted changes: its code is nowhere to be
    read again, so it cannot back a number (FedLC quick held 16 such CIFAR-100 runs until 2026-12-07)."""
    import glob

    found = glob.glob(str(REPO / "figures" / "*" / "*" / records.RECORDS_FILE))
    dirty = [f"{os.path.relpath(p, REPO)}: {r['id']}" for p in found
             for r in records.read(p).values() if str(r.get("commit", "")).endswith("-dirty")]
    assert not dirty, "records trained by uncommitted code:\n" + "\n".join(dirty[:20])
