"""The paper's values, the paper-vs-ours comparison, grids, saving and the index."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from fedlib.papers.fedlc import reported as paper
from fedlib.report import aggregate, build_index, compare, gains, render_comparison, run_grid, summarize, winners

# ------------------------------------------------------------------------------ paper values
SHAPES = {"table1": (7, 12), "table2": (7, 8), "table3": (7, 4), "table4": (7, 4), "table5": (16, 4),
          "table6": (7, 4), "table7": (4, 4)}


def test_all_seven_tables_parse_with_their_shapes():
    assert set(paper.TABLES) == set(SHAPES)
    for tid, (rows, cols) in SHAPES.items():
        t = paper.TABLES[tid]
        assert (len(t.rows), len(t.columns)) == (rows, cols), tid
        assert len(t.values) == rows * cols
        frame = t.frame()
        assert len(frame) == rows * cols
        assert frame.paper_mean.dropna().between(0, 100).all()


def test_the_seven_methods_in_the_papers_order():
    for tid in ("table1", "table2", "table3", "table4", "table6"):
        assert [r.params["method"] for r in paper.TABLES[tid].rows] == list(paper.METHODS)
    assert [r.key for r in paper.TABLE7.rows] == ["fedavg", "fedlc", "fedlc+scaffold", "fedlc+fedprox"]
    assert {r.params["method"] for r in paper.TABLE5.rows} == {"fedavg", "fedprox", "fednova", "fedlc"}


def test_missing_cells_stay_missing():
    missing = {k for k, v in paper.TABLE1.values.items() if v is None}
    assert missing == {("fedprox", "cifar10_beta0.3"), ("fedprox", "cifar100_beta0.05"), ("scaffold", "svhn_beta0.3")}
    for t in paper.TABLES.values():
        if t.id != "table1":
            assert all(v is not None for v in t.values.values()), t.id


@pytest.mark.parametrize("tid,row,col,mean,std", [
    ("table1", "fedlc", "cifar10_beta0.05", 54.55, 1.70),
    ("table1", "fedavg", "svhn_beta0.05", 69.51, 1.45),
    ("table1", "fedrs", "cifar100_beta0.5", 38.98, 1.35),
    ("table2", "fedavg", "cifar10_alpha2", 52.23, 1.01),
    ("table2", "fedlc", "cifar100_alpha80", 53.42, 0.85),
    ("table4", "fedlc", "synthetic_1_1", 75.46, 0.52),
    ("table4", "fedopt", "femnist", 86.56, 0.48),
    ("table3", "fedlc", "imagenet_beta0.1", 53.24, None),
    ("table5", "E1/fedlc", "cifar10_beta0.5", 70.41, None),
    ("table5", "E20/fednova", "svhn_alpha5", 89.24, None),
    ("table6", "fedlc", "m100", 43.81, None),
    ("table7", "fedlc+fedprox", "svhn_beta0.3", 89.49, None),
])
def test_spot_checked_cells(tid, row, col, mean, std):
    cell = paper.TABLES[tid].value(row, col)
    assert cell.mean == mean
    assert cell.std == std


def test_std_is_reported_exactly_for_tables_1_2_4():
    assert {t.id for t in paper.TABLES.values() if t.has_std} == {"table1", "table2", "table4"}


def test_parse_cell():
    assert paper.parse_cell("69.51±1.45") == paper.Cell(69.51, 1.45)
    assert paper.parse_cell(" 53.87 ") == paper.Cell(53.87, None)
    assert paper.parse_cell("—") is None
    with pytest.raises(ValueError):
        paper.parse_cell("12,3")


def test_cell_configurations():
    cfg = paper.TABLE5.config("E5/fedlc", "svhn_alpha5")
    assert cfg["local_epochs"] == 5 and cfg["num_clients"] == 10 and cfg["method"] == "fedlc"
    assert cfg["dataset"] == "svhn" and cfg["partition"] == "shards" and cfg["partition_alpha"] == 5
    cfg = paper.TABLE1.config("fedopt", "cifar10_beta0.05")
    assert cfg == {"num_clients": 20, "batch_size": 128, "lr": 0.01, "weight_decay": 0.0, "rounds": 400,
                   "dataset": "cifar10", "partition": "dirichlet", "partition_beta": 0.05, "method": "fedopt"}
    assert paper.TABLE4.config("fedavg", "synthetic_0.5_0.5")["rounds"] == 300
    assert paper.TABLE6.config("fedrs", "m50")["num_clients"] == 50
    assert paper.table(7) is paper.TABLE7 and paper.table("table3") is paper.TABLE3


# ------------------------------------------------------------------------------ comparison math
def _paper(rows):
    return pd.DataFrame([{"row": r, "column": c, "row_label": r, "column_label": c, "row_group": "", "dataset": "d",
                          "paper_mean": pm, "paper_std": ps} for r, c, pm, ps in rows])


def _ours(rows):
    return pd.DataFrame([{"row": r, "column": c, "ours_mean": om, "ours_std": math.nan, "n_seeds": 1,
                          "status": "ok" if not math.isnan(om) else "not run", "note": ""} for r, c, om in rows])


def test_compare_delta_and_within_std_by_hand():
    p = _paper([("a", "x", 50.0, 1.0), ("b", "x", 50.0, 1.0), ("c", "x", 50.0, 1.0), ("d", "x", 60.0, math.nan),
                ("e", "x", math.nan, math.nan), ("f", "x", 40.0, 2.0)])
    o = _ours([("a", "x", 50.5), ("b", "x", 48.9), ("c", "x", 51.0), ("d", "x", 61.0), ("e", "x", 30.0),
               ("f", "x", math.nan)])
    c = compare(p, o).set_index("row")
    assert c.delta["a"] == pytest.approx(0.5) and c.within_std["a"] is True and c.status["a"] == "within"
    assert c.delta["b"] == pytest.approx(-1.1) and c.within_std["b"] is False and c.status["b"] == "outside"
    assert c.within_std["c"] is True  # |Δ| = std exactly counts as within
    assert c.delta["d"] == pytest.approx(1.0) and c.within_std["d"] is None and c.status["d"] == "no_std"
    assert c.status["e"] == "not_in_paper" and math.isnan(c.delta["e"])
    assert c.status["f"] == "not_run" and c.within_std["f"] is None
    s = summarize(c.reset_index())
    assert s["counts"] == {"within": 2, "outside": 1, "no_std": 1, "not_in_paper": 1, "not_run": 1}
    assert s["run"] == 5
    assert s["within"] == ["a @ x", "c @ x"] and s["outside"] == ["b @ x"]


def test_winners_and_gains():
    p = _paper([("fedavg", "x", 50.0, 1.0), ("fedlc", "x", 60.0, 1.0), ("fedavg", "y", 70.0, 1.0),
                ("fedlc", "y", 75.0, 1.0)])
    o = _ours([("fedavg", "x", 52.0), ("fedlc", "x", 51.0), ("fedavg", "y", 60.0), ("fedlc", "y", 66.0)])
    c = compare(p, o)
    w = winners(c).set_index("column")
    assert not w.agree["x"] and w.agree["y"]
    g = gains(c).set_index("column")
    assert g.paper_gain["x"] == pytest.approx(10.0) and g.ours_gain["x"] == pytest.approx(-1.0)
    assert not g.same_sign["x"] and g.same_sign["y"]
    s = summarize(c)
    assert (s["winner_agree"], s["winner_total"], s["gain_same_sign"], s["gain_total"]) == (1, 2, 1, 2)
    assert s["ours_fedlc_gain_mean"] == pytest.approx(2.5) and s["paper_fedlc_gain_mean"] == pytest.approx(7.5)


def test_render_comparison_cells():
    p = _paper([("a", "x", 50.0, 1.0), ("b", "x", 50.0, math.nan), ("c", "x", 50.0, 1.0)])
    o = _ours([("a", "x", 50.5), ("b", "x", 47.0), ("c", "x", math.nan)])
    o.loc[2, "note"] = "not run: dataset 'svhn' is absent"
    md = render_comparison(compare(p, o))
    assert "50.00±1.00 → 50.50 (+0.50) ✓" in md
    assert "50.00 → 47.00 (-3.00) ~" in md
    assert "not run[^1]" in md and "[^1]: not run: dataset 'svhn' is absent" in md


def test_aggregate_mean_and_sample_std():
    runs = pd.DataFrame([
        {"row": "a", "column": "x", "seed": 0, "status": "ok", "note": "", "accuracy": 60.0, "dataset_used": "d"},
        {"row": "a", "column": "x", "seed": 1, "status": "ok", "note": "", "accuracy": 62.0, "dataset_used": "d"},
        {"row": "b", "column": "x", "seed": 0, "status": "ok", "note": "", "accuracy": 70.0, "dataset_used": "d"},
        {"row": "c", "column": "x", "seed": 0, "status": "not run", "note": "absent", "accuracy": math.nan,
         "dataset_used": None},
    ])
    agg = aggregate(runs, ["row", "column"]).set_index("row")
    assert agg.ours_mean["a"] == pytest.approx(61.0) and agg.ours_std["a"] == pytest.approx(math.sqrt(2))
    assert agg.n_seeds["a"] == 2 and math.isnan(agg.ours_std["b"])
    assert agg.status["c"] == "not run" and agg.note["c"] == "absent" and math.isnan(agg.ours_mean["c"])


# ------------------------------------------------------------------------------ grids
def test_run_grid_seeds_cache_and_absent_dataset(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path / "no-data"))
    base = {"dataset": "synthetic", "num_clients": 4, "rounds": 2, "batch_size": 32}
    cells = [{"method": "fedavg", "config": {**base, "method": "fedavg"}},
             {"method": "fedlc", "config": {**base, "method": "fedlc"}},
             {"method": "svhn", "config": {"dataset": "svhn", "rounds": 1}},
             {"method": "skipped", "config": None, "note": "not run: grid reduced"}]
    store = tmp_path / "store"
    g = run_grid(cells, seeds=(0, 1), store=store, progress=False)
    assert len(g.runs) == 8
    ok = g.runs[g.runs.status == "ok"]
    assert len(ok) == 4 and ok.accuracy.between(0, 100).all()
    assert set(g.runs[g.runs.method == "svhn"].status) == {"not run"}
    assert g.runs[g.runs.method == "svhn"].note.str.contains("absent").all()
    assert set(g.runs[g.runs.method == "skipped"].note) == {"not run: grid reduced"}
    assert set(g.histories["round"]) == {1, 2}
    agg = g.aggregate(["method"]).set_index("method")
    assert agg.n_seeds["fedavg"] == 2
    again = run_grid(cells[:2], seeds=(0, 1), store=store, progress=False)  # from the store
    assert again.runs.accuracy.tolist() == ok.accuracy.tolist()


# ------------------------------------------------------------------------------ saving
def test_save_figure_writes_pdf_png_and_sidecar_with_commit(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlib import __version__
    from fedlib.figures import git_commit, save_figure, use_style

    use_style()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="x")
    ax.set_title("title")
    paths = save_figure(fig, "demo", tmp_path, title="Demo", caption="cap", profile="quick", experiment="fig1",
                        seeds=[1, 0], datasets=["fmnist"], parameters={"rounds": 3})
    assert {p.suffix for p in paths.values()} == {".pdf", ".png", ".json"}
    assert all(p.exists() and p.stat().st_size > 0 for p in paths.values())
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pdf = paths["pdf"].read_bytes()
    assert pdf.startswith(b"%PDF") and b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType embedded
    meta = json.loads(paths["json"].read_text())
    assert meta["git_commit"] == git_commit() and meta["git_commit"]
    assert meta["fedlib_version"] == __version__
    assert meta["kind"] == "figure" and meta["seeds"] == [0, 1] and meta["profile"] == "quick"
    assert meta["parameters"] == {"rounds": 3} and meta["files"] == {"pdf": "demo.pdf", "png": "demo.png"}
    assert isinstance(meta["deviations"], list) and meta["deviations"]  # quick fig1 deviates from the paper


def test_git_commit_outside_git_is_unknown(tmp_path):
    from fedlib.figures import git_commit

    assert git_commit(tmp_path) == "unknown"


def test_git_commit_marks_dirty_tree(tmp_path):
    import shutil
    import subprocess

    from fedlib.figures import _git_commit, git_commit

    if shutil.which("git") is None:
        pytest.skip("git not installed")
    run = lambda *a: subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True)  # noqa: E731
    run("init", "-q")
    (tmp_path / "a.txt").write_text("1")
    run("add", "a.txt")
    run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "x")
    clean = git_commit(tmp_path)
    assert len(clean) == 40 and not clean.endswith("-dirty")
    (tmp_path / "a.txt").write_text("2")
    _git_commit.cache_clear()
    assert git_commit(tmp_path) == clean + "-dirty"
    _git_commit.cache_clear()


def test_save_table_writes_csv_markdown_and_sidecar(tmp_path):
    from fedlib.figures import save_table

    df = pd.DataFrame({"a": [1.0, 2.5], "b": ["x", "y|z"]})
    paths = save_table(df, "t", tmp_path, title="T", caption="C", profile="smoke")
    assert pd.read_csv(paths["csv"]).equals(df)
    md = paths["md"].read_text()
    assert md.startswith("**T**") and "| a | b |" in md and "y\\|z" in md
    assert json.loads(paths["json"].read_text())["kind"] == "table"


def test_a_figure_may_not_take_the_name_of_a_table_saved_in_the_same_run(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlib.figures import save_figure, save_table

    save_table(pd.DataFrame({"a": [1]}), "effects", tmp_path, title="T", findings=["f"])
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="'effects' is already used by a table"):
        save_figure(fig, "effects", tmp_path)
    plt.close(fig)
    # nothing of the figure was written and the table's sidecar is intact
    assert not (tmp_path / "effects.pdf").exists() and not (tmp_path / "effects.png").exists()
    meta = json.loads((tmp_path / "effects.json").read_text())
    assert meta["kind"] == "table" and meta["findings"] == ["f"]
    save_table(pd.DataFrame({"a": [2]}), "effects", tmp_path)  # saving the same artefact again is fine
    fig, _ = plt.subplots()
    save_figure(fig, "effects_bars", tmp_path)
    plt.close(fig)


def test_build_index_summarises_tables_and_embeds_figures(tmp_path):
    out = tmp_path / "figures" / "fedlc"
    out.mkdir(parents=True)
    meta = {"kind": "figure", "name": "fig1_x", "title": "Fig. 1: x", "caption": "cap", "profile": "quick",
            "notebook": "fedlc_01_motivation", "deviations": ["1 seed"], "files": {"png": "fig1_x.png"},
            "git_commit": "abc", "fedlib_version": "0.1.0", "findings": ["something measured"]}
    (out / "fig1_x.json").write_text(json.dumps(meta))
    table = {"kind": "table", "name": "table1", "title": "Table 1: t", "profile": "quick", "paper_table": "table1",
             "notebook": "fedlc_06_real_world_datasets", "deviations": [], "files": {"md": "table1.md"},
             "summary": {"counts": {"within": 1, "outside": 2, "no_std": 0, "not_in_paper": 0, "not_run": 3}, "run": 3,
                         "within": ["FedLC @ CIFAR-10 β=0.5"], "outside": ["FedAvg @ x", "FedRS @ x"],
                         "median_abs_delta": 4.0, "winner_agree": 1, "winner_total": 1, "gain_same_sign": 1,
                         "gain_total": 1, "ours_fedlc_gain_mean": 2.0, "paper_fedlc_gain_mean": 10.0}}
    (out / "table1.json").write_text(json.dumps(table))
    (out / "table1.md").write_text("| method | x |\n| --- | --- |\n| FedAvg | 1 → 2 |\n")
    index = build_index(out, run_info={"total_wall_time_s": 120.0, "notebooks": []})
    text = index.read_text()
    assert index == tmp_path / "figures" / "README.md"
    assert "![fig1_x](fedlc/fig1_x.png)" in text
    assert "| FedAvg | 1 → 2 |" in text
    assert "FedLC @ CIFAR-10 β=0.5" in text and "FedRS @ x" in text
    assert "total wall time: 2.0 min" in text and "something measured" in text
    assert "  * 1 seed" in text
    partial = {"total_wall_time_s": 30.0, "only": ["06"],
               "notebooks": [{"name": "fedlc_06_real_world_datasets", "status": "ok", "wall_time_s": 30.0}],
               "previous": [{"name": "fedlc_01_motivation", "status": "ok", "wall_time_s": 128.3}]}
    text = build_index(out, run_info=partial).read_text()
    assert "wall time of this partial regeneration: 0.5 min" in text and "only 06 was rerun" in text
    assert text.index("`fedlc_01_motivation`: ok, 128 s (earlier regeneration)") < \
        text.index("`fedlc_06_real_world_datasets`: ok, 30 s\n")


def test_regenerate_selects_notebooks_by_name_number_or_substring(tmp_path):
    from fedlib.regenerate import select

    paths = [tmp_path / f"fedlc_0{i}_{n}.ipynb" for i, n in ((1, "motivation"), (4, "label_skew"))]
    assert select(paths, None) == paths
    assert select(paths, ["04_label_skew"]) == [paths[1]]
    assert select(paths, ["fedlc_01_motivation"]) == [paths[0]]
    assert select(paths, ["label"]) == [paths[1]]
    with pytest.raises(SystemExit):
        select(paths, ["nothing"])


def test_regenerate_passes_absolute_paths_to_the_kernels(tmp_path, monkeypatch):
    """The kernels run in notebooks/, so FEDLIB_DATA=../shared/data (the README's main
    command) must reach them resolved against the caller's folder."""
    import os
    from unittest import mock

    from fedlib.regenerate import _environment

    caller = tmp_path / "repo"
    caller.mkdir()
    monkeypatch.chdir(caller)
    with mock.patch.dict(os.environ, {"FEDLIB_DATA": "../shared/data", "FEDLIB_CACHE": "cache"}, clear=False):
        env = _environment("store")
        assert os.environ["FEDLIB_DATA"] == env["data"] == str(tmp_path / "shared" / "data")
        assert os.environ["FEDLIB_STORE"] == env["store"] == str(caller / "store")
        assert os.environ["FEDLIB_CACHE"] == str(caller / "cache")


def test_partial_regenerations_keep_one_timing_per_notebook():
    from fedlib.regenerate import earlier_timings

    nb = lambda name, t: {"name": name, "status": "ok", "wall_time_s": t}  # noqa: E731
    full = {"notebooks": [nb("a", 1.0), nb("b", 2.0), nb("c", 3.0)]}
    first = {"notebooks": [nb("b", 20.0)]}
    first["previous"] = earlier_timings(first, full)
    assert first["previous"] == [nb("a", 1.0), nb("c", 3.0)]
    second = {"notebooks": [nb("c", 30.0)]}
    second["previous"] = earlier_timings(second, first)
    # a from the full run, b from the first partial run; c is this run's own
    assert second["previous"] == [nb("a", 1.0), nb("b", 20.0)]
