"""The generic reporting machinery: paper-vs-ours comparison (with stand-in, suspect and
undecided cells), grids and their progress channel, saving (placeholders, provenance, no
machine paths), the notebook context's output rule, the index across papers, regeneration."""

import json
import math
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from fedlib.repro.artefacts.comparison_text import render_comparison
from fedlib.repro.verdict.compare import compare, gains, summarize, winners
from fedlib.repro.run.grid import aggregate, diverged_lines, progress_channel, run_grid
from fedlib.papers import all_papers

REPO = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------ comparison math
def _paper(rows, dataset="d"):
    return pd.DataFrame([{"row": r, "column": c, "row_label": r, "column_label": c, "row_group": "",
                          "dataset": dataset, "paper_mean": pm, "paper_std": ps} for r, c, pm, ps in rows])


def _ours(rows, used="d", std=math.nan, n=1):
    return pd.DataFrame([{"row": r, "column": c, "ours_mean": om, "ours_std": std, "n_seeds": n,
                          "status": "ok" if not math.isnan(om) else "not run", "note": "", "dataset_used": used}
                         for r, c, om in rows])


def test_compare_delta_and_within_std_by_hand():
    p = _paper([("a", "x", 50.0, 1.0), ("b", "x", 50.0, 1.0), ("c", "x", 50.0, 1.0), ("d", "x", 60.0, math.nan),
                ("e", "x", math.nan, math.nan), ("f", "x", 40.0, 2.0)])
    o = _ours([("a", "x", 50.5), ("b", "x", 48.9), ("c", "x", 51.0), ("d", "x", 61.0), ("e", "x", 30.0),
               ("f", "x", math.nan)], std=0.0, n=3)
    c = compare(p, o).set_index("row")  # three seeds that agree: a measured spread of 0
    assert c.delta["a"] == pytest.approx(0.5) and c.within_std["a"] is True and c.status["a"] == "within"
    assert c.delta["b"] == pytest.approx(-1.1) and c.within_std["b"] is False and c.status["b"] == "outside"
    assert c.within_std["c"] is True  # |Δ| = std exactly counts as within
    assert c.delta["d"] == pytest.approx(1.0) and c.within_std["d"] is None and c.status["d"] == "no_std"
    assert c.status["e"] == "not_in_paper" and math.isnan(c.delta["e"])
    assert c.status["f"] == "not_run" and c.within_std["f"] is None
    s = summarize(c.reset_index())
    assert s["counts"] == {"within": 2, "outside": 1, "undecided": 0, "no_spread": 0, "no_std": 1,
                           "std_not_seeds": 0, "stand_in": 0, "suspect": 0, "not_in_paper": 1, "not_run": 1}
    assert s["run"] == 5
    assert s["within"] == ["a @ x", "c @ x"] and s["outside"] == ["b @ x"]


def test_a_cell_on_a_stand_in_dataset_is_never_within_or_outside():
    p = _paper([("a", "x", 50.0, 1.0), ("b", "x", 50.0, 1.0)], dataset="cifar10")
    o = _ours([("a", "x", 50.2), ("b", "x", 80.0)], used="fmnist")
    c = compare(p, o)
    assert list(c.status) == ["stand_in", "stand_in"] and c.within_std.isna().all()
    s = summarize(c)
    assert s["counts"]["within"] == s["counts"]["outside"] == 0 and s["counts"]["stand_in"] == 2
    assert s["median_abs_delta"] is None and s["median_abs_delta_stand_in"] == pytest.approx(15.1)
    assert "⇄" in render_comparison(c)


def test_a_suspect_paper_value_is_shown_but_not_counted():
    p = _paper([("a", "x", 83.7, 1.0), ("b", "x", 50.0, 1.0)])
    p["suspect"] = ["breaks the monotone trend (probable typo)", ""]
    o = _ours([("a", "x", 20.0), ("b", "x", 50.5)], std=0.0, n=3)
    c = compare(p, o).set_index("row")
    assert c.status["a"] == "suspect" and c.status["b"] == "within"
    md = render_comparison(c.reset_index())
    assert "83.70±1.00 → 20.00±0.00 (-63.70) †" in md and "probable typo" in md
    w = winners(c.reset_index())
    assert w.empty or "a" not in set(w.paper_best)  # a suspect value never decides the best method


def test_a_verdict_within_the_spread_is_undecided():
    p = _paper([("a", "x", 50.0, 1.0), ("b", "x", 50.0, 1.0), ("c", "x", 50.0, 1.0)])
    # three seeds that agree, machine spread 0.3: |Δ| = 1.2 is within 0.3 of the std 1.0 -> undecided; 0.1 and
    # 3.0 are clear
    c = compare(p, _ours([("a", "x", 51.2), ("b", "x", 50.1), ("c", "x", 53.0)], std=0.0, n=3),
                spread=0.3).set_index("row")
    assert (c.status["a"], c.status["b"], c.status["c"]) == ("undecided", "within", "outside")
    assert c.spread["a"] == pytest.approx(0.3) and c.spread_source["a"] == "cross-machine (this table)"
    # with several seeds the spread is our std over seeds, not the machine spread
    c = compare(p, _ours([("a", "x", 51.2)], std=0.1, n=3), spread=0.05).set_index("row")
    assert c.spread["a"] == pytest.approx(0.1) and c.status["a"] == "outside"
    assert c.spread_source["a"] == "std over 3 seeds"
    # the largest measured spread wins: a cross-machine spread larger than the std over seeds
    c = compare(p, _ours([("a", "x", 51.2)], std=0.1, n=3), spread=5.0).set_index("row")
    assert c.spread["a"] == pytest.approx(5.0) and c.status["a"] == "undecided"
    assert summarize(compare(p, _ours([("a", "x", 51.2)], std=0.0, n=2), spread=0.3))["undecided"] == ["a @ x"]


def test_a_cell_of_one_seed_is_never_judged_on_a_spread_borrowed_from_other_cells_or_machines():
    """The table's seed-to-seed spread (other cells) and its cross-machine spread (another machine) only widen
    a cell's own std over seeds; a cell of one seed has none, and no within/outside, best-method or sign
    verdict is decided on it (the claims' rule, docs/reproducibility.md#the-decision-rule)."""
    from fedlib.repro.verdict.compare import ONE_SEED
    from fedlib.repro.verdict.spread import Spread

    table = [Spread(2.0, "seed-to-seed (max std over seeds [0, 1, 2] of the headline cells)"),
             Spread(0.5, "cross-machine (this table)")]
    p = _paper([("fedavg", "x", 50.0, 1.0), ("fedlc", "x", 60.0, 1.0)])
    one = _ours([("fedavg", "x", 40.0), ("fedlc", "x", 70.0)])  # far outside the paper's std, 30 pp apart
    c = compare(p, one, spread=table)
    assert list(c.status) == ["no_spread", "no_spread"] and c.within_std.isna().all()
    assert c.spread.isna().all() and set(c.spread_source) == {ONE_SEED}
    assert winners(c).verdict.iloc[0] == "no_spread" and gains(c, "fedlc", "fedavg").verdict.iloc[0] == "no_spread"
    # the same means over three seeds: decided, on the larger of the cell's std and the table's spreads
    three = _ours([("fedavg", "x", 40.0), ("fedlc", "x", 70.0)], std=0.4, n=3)
    c = compare(p, three, spread=table)
    assert list(c.status) == ["outside", "outside"] and list(c.spread) == [2.0, 2.0]
    assert winners(c).verdict.iloc[0] == "agree" and gains(c, "fedlc", "fedavg").verdict.iloc[0] == "agree"
    # a table spread never narrows the cell's own: a std of 3 over seeds stays 3 beside a table spread of 2
    wide = compare(p, _ours([("fedavg", "x", 51.5)], std=3.0, n=3), spread=table).set_index("row")
    assert wide.spread["fedavg"] == 3.0 and wide.status["fedavg"] == "undecided"


def test_winners_and_gains_with_their_verdicts():
    p = _paper([("fedavg", "x", 50.0, 1.0), ("fedlc", "x", 60.0, 1.0), ("fedavg", "y", 70.0, 1.0),
                ("fedlc", "y", 75.0, 1.0)])
    o = _ours([("fedavg", "x", 52.0), ("fedlc", "x", 51.0), ("fedavg", "y", 60.0), ("fedlc", "y", 66.0)],
              std=0.0, n=3)
    c = compare(p, o, spread=0.0)
    w = winners(c).set_index("column")
    assert w.verdict["x"] == "disagree" and w.verdict["y"] == "agree"
    g = gains(c, "fedlc", "fedavg").set_index("column")
    assert g.paper_gain["x"] == pytest.approx(10.0) and g.ours_gain["x"] == pytest.approx(-1.0)
    assert g.verdict["x"] == "disagree" and g.verdict["y"] == "agree"
    s = summarize(c, ("fedlc", "fedavg"))
    assert (s["winner_agree"], s["winner_total"], s["gain_same_sign"], s["gain_total"]) == (1, 2, 1, 2)
    assert s["ours_gain_mean"] == pytest.approx(2.5) and s["paper_gain_mean"] == pytest.approx(7.5)
    # the same numbers with a machine spread of 1.0: the gain of -1 at x is within √2 of zero
    c = compare(p, o, spread=1.0)
    g = gains(c, "fedlc", "fedavg").set_index("column")
    assert g.verdict["x"] == "undecided" and g.spread["x"] == pytest.approx(math.sqrt(2))
    assert winners(c).set_index("column").verdict["x"] == "undecided"  # 51 is within √2 of 52
    s = summarize(c, ("fedlc", "fedavg"))
    assert (s["gain_same_sign"], s["gain_undecided"], s["winner_undecided"]) == (1, 1, 1)


def test_render_comparison_cells():
    p = _paper([("a", "x", 50.0, 1.0), ("b", "x", 50.0, math.nan), ("c", "x", 50.0, 1.0)])
    o = _ours([("a", "x", 50.5), ("b", "x", 47.0), ("c", "x", math.nan)], std=0.0, n=3)
    o.loc[2, "note"] = "not run: dataset 'svhn' is absent"
    md = render_comparison(compare(p, o))
    assert "50.00±1.00 → 50.50±0.00 (+0.50) ✓" in md
    assert "50.00 → 47.00±0.00 (-3.00) ~" in md
    assert "not run[^1]" in md and "[^1]: not run: dataset 'svhn' is absent" in md


def test_aggregate_mean_and_sample_std_of_any_metric():
    runs = pd.DataFrame([
        {"row": "a", "column": "x", "seed": 0, "status": "ok", "note": "", "accuracy": 60.0,
         "personalized_accuracy": 80.0, "dataset_used": "d"},
        {"row": "a", "column": "x", "seed": 1, "status": "ok", "note": "", "accuracy": 62.0,
         "personalized_accuracy": 84.0, "dataset_used": "d"},
        {"row": "b", "column": "x", "seed": 0, "status": "ok", "note": "", "accuracy": 70.0,
         "personalized_accuracy": 90.0, "dataset_used": "d"},
        {"row": "c", "column": "x", "seed": 0, "status": "not run", "note": "absent", "accuracy": math.nan,
         "personalized_accuracy": math.nan, "dataset_used": None},
    ])
    agg = aggregate(runs, ["row", "column"]).set_index("row")
    assert agg.ours_mean["a"] == pytest.approx(61.0) and agg.ours_std["a"] == pytest.approx(math.sqrt(2))
    assert agg.n_seeds["a"] == 2 and math.isnan(agg.ours_std["b"])
    assert agg.status["c"] == "not run" and agg.note["c"] == "absent" and math.isnan(agg.ours_mean["c"])
    pm = aggregate(runs, ["row", "column"], value="personalized_accuracy").set_index("row")
    assert pm.ours_mean["a"] == pytest.approx(82.0) and pm.ours_std["a"] == pytest.approx(math.sqrt(8))


# ------------------------------------------------------------------------------ grids
def test_run_grid_seeds_cache_absent_dataset_and_progress(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path / "no-data"))
    channel = tmp_path / "progress.jsonl"
    monkeypatch.setenv("FEDLIB_PROGRESS", str(channel))
    base = {"dataset": "synthetic", "num_clients": 4, "rounds": 2, "batch_size": 32}
    cells = [{"method": "fedavg", "config": {**base, "method": "fedavg"}},
             {"method": "fedlc", "config": {**base, "method": "fedlc"}},
             {"method": "svhn", "config": {"dataset": "svhn", "rounds": 1}},
             {"method": "skipped", "config": None, "note": "not run: grid reduced"}]
    store = tmp_path / "store"
    g = run_grid(cells, seeds=(0, 1), store=store, progress=False, desc="demo")
    assert len(g.runs) == 8
    ok = g.runs[g.runs.status == "ok"]
    assert len(ok) == 4 and ok.accuracy.between(0, 100).all()
    svhn = g.runs[g.runs.method == "svhn"]
    assert set(svhn.status) == {"not run"} and svhn.note.str.contains("absent").all()
    assert not svhn.note.str.contains(str(tmp_path)).any()  # no machine path in what is committed
    assert set(g.runs[g.runs.method == "skipped"].note) == {"not run: grid reduced"}
    assert set(g.histories["round"]) == {1, 2}
    assert g.aggregate(["method"]).set_index("method").n_seeds["fedavg"] == 2
    lines = list(progress_channel(channel))  # one line at the start and one per finished run
    assert [ln["done"] for ln in lines] == [0, 1, 2, 3, 4, 5, 6] and {ln["total"] for ln in lines} == {6}
    assert lines[-1]["desc"] == "demo" and lines[-1]["eta_s"] == 0 and lines[-1]["trained"] == 4
    assert not g.runs[g.runs.status == "ok"].from_store.any()
    again = run_grid(cells[:2], seeds=(0, 1), store=store, progress=False, desc="again")  # from the store
    assert again.runs.accuracy.tolist() == ok.accuracy.tolist() and again.runs.from_store.all()
    assert list(progress_channel(channel))[-1]["trained"] == 0


def test_progress_estimates_the_time_left_from_runs_trained_not_runs_read_from_the_store(tmp_path, monkeypatch):
    """A grid that finds its first runs in the store has trained nothing yet: it promises no time left until
    a run has trained, then prices the runs left at the trained runs' pace (a regeneration that found 12 of
    24 runs in the store once printed "~3 s left" before an hour of training)."""
    channel = tmp_path / "progress.jsonl"
    monkeypatch.setenv("FEDLIB_PROGRESS", str(channel))
    base = {"dataset": "synthetic", "num_clients": 4, "rounds": 2, "batch_size": 32, "method": "fedavg"}
    store = tmp_path / "store"
    run_grid([{"method": "a", "config": base}], seeds=(0, 1), store=store, progress=False, desc="first")
    channel.unlink()
    run_grid([{"method": "a", "config": base}], seeds=(0, 1, 2, 3), store=store, progress=False, desc="then")
    lines = list(progress_channel(channel))
    assert [(ln["done"], ln["trained"]) for ln in lines] == [(0, 0), (1, 0), (2, 0), (3, 1), (4, 2)]
    assert [ln["eta_s"] for ln in lines[:3]] == [None, None, None]  # only store reads so far: no pace yet
    # one run trained in `elapsed` seconds, one left: the estimate is that run's time, not a third of it
    assert lines[3]["eta_s"] == pytest.approx(lines[3]["elapsed_s"], abs=0.11) and lines[4]["eta_s"] == 0


def test_a_run_whose_parameters_stop_being_finite_is_reported_as_diverged_not_as_a_number(tmp_path):
    """lr = 1e38 overflows the first update to inf: the run warns, its summary names the round, the
    grid marks it "diverged" (kept out of the means) and the table says "diverged", not chance accuracy."""
    from fedlib import run

    base = {"dataset": "synthetic", "num_clients": 4, "rounds": 2, "batch_size": 32, "method": "fedavg"}
    with pytest.warns(RuntimeWarning, match="diverged.*after round 1"):
        broken = run(**base, lr=1e38, store=False, progress=False)
    assert broken.diverged_round == 1 and broken.to_json_summary()["diverged_round"] == 1
    fine = run(**base, store=False, progress=False)
    assert fine.diverged_round is None and "diverged_round" not in fine.to_json_summary()
    cells = [{"row": "a", "column": "x", "config": {**base, "lr": 1e38}},
             {"row": "b", "column": "x", "config": base}]
    with pytest.warns(RuntimeWarning, match="diverged"):
        g = run_grid(cells, seeds=(0,), store=tmp_path / "store", progress=False)
    status = g.runs.set_index("row").status
    assert (status["a"], status["b"]) == ("diverged", "ok")
    assert g.runs.set_index("row").note["a"] == "diverged: the parameters were not finite after round 1"
    agg = aggregate(g.runs, ["row", "column"])
    assert math.isnan(agg.set_index("row").ours_mean["a"]) and agg.set_index("row").status["a"] == "diverged"
    assert diverged_lines(agg, ["row", "column"]) == ["a / x: diverged: the parameters were not finite after round 1"]
    md = render_comparison(compare(_paper([("a", "x", 50.0, 1.0), ("b", "x", 50.0, 1.0)]), agg))
    assert "→ diverged[^1]" in md and "[^1]: diverged: the parameters were not finite after round 1" in md
    again = run_grid(cells[:1], seeds=(0,), store=tmp_path / "store", progress=False)  # from the store: still
    assert again.runs.status.tolist() == ["diverged"] and again.runs.from_store.all()


# ------------------------------------------------------------------------------ saving
def test_save_figure_writes_pdf_png_and_sidecar_with_commit(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlib import __version__
    from fedlib.repro.artefacts.provenance import git_commit
    from fedlib.repro.artefacts.saving import save_figure
    from fedlib.repro.artefacts.style import use_style
    from fedlib.papers.fedlc import PAPER

    use_style()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="x")
    paths = save_figure(fig, "demo", tmp_path, title="Demo", caption="cap", profile=PAPER.profile("quick"),
                        experiment="fig1", seeds=[1, 0], datasets=["fmnist"], parameters={"rounds": 3})
    assert {p.suffix for p in paths.values()} == {".pdf", ".png", ".json"}
    assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pdf = paths["pdf"].read_bytes()
    assert pdf.startswith(b"%PDF") and b"/FontFile2" in pdf and b"/Type3" not in pdf  # TrueType embedded
    meta = json.loads(paths["json"].read_text())
    assert meta["git_commit"] == git_commit() and meta["git_commit"]
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    assert set(meta["cpu"]) == {"vendor", "model"} and meta["cpu"]["vendor"] and meta["cpu"]["model"]
    assert not cpuinfo or (meta["cpu"]["vendor"] in cpuinfo and meta["cpu"]["model"] in cpuinfo)  # this CPU's
    assert meta["fedlib_version"] == __version__ and meta["paper"] == "fedlc" and meta["profile"] == "quick"
    assert meta["kind"] == "figure" and meta["seeds"] == [0, 1] and meta["placeholder"] is False
    assert meta["parameters"] == {"rounds": 3} and meta["files"] == {"pdf": "demo.pdf", "png": "demo.png"}
    assert meta["deviations"]  # quick fig1 deviates from the paper
    plt.close(fig)


def test_a_placeholder_never_replaces_a_real_artefact(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlib.repro.artefacts.saving import _SAVED, is_placeholder, save_figure, save_table

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])  # a figure with data (an empty axes breaks the rule axes_not_blank)
    real = save_figure(fig, "fig4", tmp_path, title="real")
    before = real["png"].read_bytes()
    assert save_figure(fig, "fig4", tmp_path, title="not run", placeholder=True) is None
    assert real["png"].read_bytes() == before and not is_placeholder(real["json"])
    assert save_table(pd.DataFrame({"a": [1]}), "counts", tmp_path, placeholder=True)  # nothing to replace
    assert is_placeholder(tmp_path / "counts.json")
    assert save_table(pd.DataFrame({"a": [2]}), "counts", tmp_path)  # real data replace a placeholder
    assert not is_placeholder(tmp_path / "counts.json")
    plt.close(fig)
    _SAVED.clear()


def test_sidecars_name_no_machine_paths(tmp_path, monkeypatch):
    from fedlib.repro.artefacts.provenance import repo_root
    from fedlib.repro.artefacts.saving import save_table

    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path / "data"))
    body = save_table(pd.DataFrame({"a": [1]}), "t", tmp_path, parameters={
        "data_root": str(tmp_path / "data" / "cifar10"), "store": str(repo_root() / ".fedlib-store")})["json"]
    text = body.read_text()
    assert str(tmp_path) not in text and str(repo_root()) not in text
    assert "<data root>/cifar10" in text and "./.fedlib-store" in text


def test_git_commit_outside_git_is_unknown(tmp_path):
    from fedlib.repro.artefacts.provenance import git_commit

    assert git_commit(tmp_path) == "unknown"


def test_git_commit_marks_dirty_tree(tmp_path):
    import shutil
    import subprocess

    from fedlib.repro.artefacts.provenance import git_commit
    from fedlib.repro.run.machine import _git_commit

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
    from fedlib.repro.artefacts.saving import save_table

    df = pd.DataFrame({"a": [1.0, 2.5], "b": ["x", "y|z"]})
    paths = save_table(df, "t", tmp_path, title="T", caption="C", profile="smoke")
    assert pd.read_csv(paths["csv"]).equals(df)
    md = paths["md"].read_text()
    assert md.startswith("**T**") and "| a | b |" in md and "y\\|z" in md
    assert json.loads(paths["json"].read_text())["kind"] == "table"


def test_an_unchanged_artefact_is_not_written_again_and_a_changed_one_is(tmp_path):
    """Issue 50: rendering one paper never rewrites another's outputs.  A figure or table whose bytes and sidecar
    (but for when, at which commit, on which CPU and how fast it was made) equal those on disk is left as it is, its sidecar
    keeping the commit that made it; a changed one is written again, and a sidecar of uncommitted code is never
    kept.  (The claims step drew every paper's headline again with a new commit and time on each run.)"""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlib.repro.artefacts.provenance import git_commit
    from fedlib.repro.artefacts.saving import save_figure, save_table
    from fedlib.repro.artefacts.style import use_style

    use_style()

    def figure(y):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, y], label="x")
        return fig

    def made_at(path, commit):  # the sidecar as another commit, at another time, wrote it
        side = json.loads(path.read_text())
        side.update(git_commit=commit, created="2020-01-01T00:00:00+00:00")
        path.write_text(json.dumps(side, indent=1, sort_keys=True) + "\n")

    kw = dict(caption="cap", profile="smoke", datasets=["fmnist"], seeds=[0])
    paths = save_figure(figure(1), "demo", tmp_path, **kw)
    made_at(paths["json"], "abc1234")
    before = {p: p.read_bytes() for p in paths.values()}
    assert save_figure(figure(1), "demo", tmp_path, **kw) == paths
    assert {p: p.read_bytes() for p in paths.values()} == before  # the same figure: nothing written
    save_figure(figure(2), "demo", tmp_path, **kw)
    assert paths["png"].read_bytes() != before[paths["png"]]
    assert json.loads(paths["json"].read_text())["git_commit"] == git_commit()
    made_at(paths["json"], "abc1234")
    save_figure(figure(2), "demo", tmp_path, **{**kw, "caption": "another caption"})  # the sidecar differs
    assert json.loads(paths["json"].read_text())["caption"] == "another caption"

    frame = pd.DataFrame({"a": [1.0, 2.5]})
    tpaths = save_table(frame, "t", tmp_path, title="T", profile="smoke")
    made_at(tpaths["json"], "abc1234")
    kept = {p: p.read_bytes() for p in tpaths.values()}
    save_table(frame, "t", tmp_path, title="T", profile="smoke")
    assert {p: p.read_bytes() for p in tpaths.values()} == kept
    save_table(frame.assign(a=[1.0, 2.6]), "t", tmp_path, title="T", profile="smoke")
    assert pd.read_csv(tpaths["csv"]).a.tolist() == [1.0, 2.6]
    assert json.loads(tpaths["json"].read_text())["git_commit"] == git_commit()
    made_at(tpaths["json"], "abc1234-dirty")
    save_table(frame.assign(a=[1.0, 2.6]), "t", tmp_path, title="T", profile="smoke")
    assert json.loads(tpaths["json"].read_text())["git_commit"] == git_commit()  # -dirty is never kept
    plt.close("all")


def test_a_figure_may_not_take_the_name_of_a_table_saved_in_the_same_run(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlib.repro.artefacts.saving import save_figure, save_table

    save_table(pd.DataFrame({"a": [1]}), "effects", tmp_path, title="T", findings=["f"])
    fig, _ = plt.subplots()
    with pytest.raises(ValueError, match="'effects' is already used by a table"):
        save_figure(fig, "effects", tmp_path)
    plt.close(fig)
    assert not (tmp_path / "effects.pdf").exists() and not (tmp_path / "effects.png").exists()
    meta = json.loads((tmp_path / "effects.json").read_text())
    assert meta["kind"] == "table" and meta["findings"] == ["f"]
    save_table(pd.DataFrame({"a": [2]}), "effects", tmp_path)  # saving the same artefact again is fine


# ------------------------------------------------------------------------------ the notebook context
def test_each_profile_writes_to_its_own_folder(tmp_path, monkeypatch):
    """The output rule: figures/<paper>/<profile>/; a non-profile seed gets its own folder too."""
    from fedlib.repro.artefacts import provenance
    from fedlib.repro.artefacts.context import Context

    monkeypatch.setattr(provenance, "repo_root", lambda: tmp_path)
    monkeypatch.setattr("fedlib.repro.artefacts.context.repo_root", lambda: tmp_path)
    smoke = Context("smoke", notebook="fedlc/04_label_skew", store=False)
    quick = Context("quick", notebook="fedlc/04_label_skew", store=False)
    seeded = Context("quick", notebook="fedlc/04_label_skew", seed=7, store=False)
    assert smoke.out_dir == tmp_path / "figures" / "fedlc" / "smoke"
    assert quick.out_dir == tmp_path / "figures" / "fedlc" / "quick"
    assert seeded.out_dir == tmp_path / "figures" / "fedlc" / "quick-seed7" and seeded.profile.seeds == (7,)
    assert Context("quick", notebook="fedlc/04", out_dir="elsewhere", store=False).out_dir == tmp_path / "elsewhere"
    assert "figures/fedlc/quick" in repr(quick) and str(tmp_path) not in repr(quick)
    with pytest.raises(ValueError, match="'<paper>/<section>'"):
        Context("quick", notebook="fedlc_04_label_skew")


def test_a_notebook_computes_with_one_thread(tmp_path):
    import torch

    from fedlib.repro.artefacts.context import Context

    torch.set_num_threads(2)
    Context("smoke", notebook="fedlc/04_label_skew", store=False, out_dir=tmp_path)
    assert torch.get_num_threads() == 1


# ------------------------------------------------------------------------------ index across papers
def _write(folder, name, body):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(body))


def test_build_index_across_papers_and_profiles(tmp_path):
    from fedlib.repro.artefacts.index import build_index

    root = tmp_path / "figures"
    quick, paper_profile = root / "fedlc" / "quick", root / "fedlc" / "paper"
    _write(quick, "fig1_x", {"kind": "figure", "name": "fig1_x", "title": "Fig. 1: x", "caption": "cap",
                             "profile": "quick", "notebook": "fedlc/01_motivation", "deviations": ["1 seed"],
                             "files": {"png": "fig1_x.png"}, "git_commit": "abc", "findings": ["something measured"]})
    summary = {"counts": {"within": 1, "outside": 2, "undecided": 1, "no_std": 0, "stand_in": 5, "not_run": 3},
               "run": 9, "within": ["FedLC @ CIFAR-10 β=0.5"], "outside": ["FedAvg @ x", "FedRS @ x"],
               "undecided": ["FedProx @ x"], "median_abs_delta": 4.0, "winner_agree": 1, "winner_undecided": 1,
               "winner_total": 2, "gain_same_sign": 1, "gain_undecided": 0, "gain_total": 1,
               "ours_gain_mean": 2.0, "paper_gain_mean": 10.0}
    for folder, prof in ((quick, "quick"), (paper_profile, "paper")):
        _write(folder, "table1", {"kind": "table", "name": "table1", "title": "Table 1: t", "profile": prof,
                                  "paper_table": "table1", "notebook": "fedlc/06_real_world_datasets",
                                  "deviations": [], "files": {"md": "table1.md"}, "summary": summary,
                                  "git_commit": "abc"})
        (folder / "table1.md").write_text("| method | x |\n| --- | --- |\n| FedAvg | 1 → 2 |\n")
    (quick / "_run.json").write_text(json.dumps({"total_wall_time_s": 120.0, "notebooks": [
        {"name": "01_motivation", "status": "ok", "wall_time_s": 100.0}]}))
    (quick / "_spread.json").write_text(json.dumps({"machines": "A vs B", "note": "measured on two machines",
                                                    "tables": {"table1": {"cells": 10, "identical": 7,
                                                                          "median_abs_delta": 0.1,
                                                                          "max_abs_delta": 2.1,
                                                                          "cpus": "AMD EPYC vs Intel Xeon"}}}))
    top = build_index(root).read_text()
    text = (root / "fedlc" / "README.md").read_text()  # the paper's page: per-table detail
    assert "| FedLC (ICML 2022) | `paper` |" in top and "| FedLC (ICML 2022) | `quick` | 2.0 min | 9 | 1 | 2 | 1 | 0 | 0 | 0 | 5 |" in top
    assert top.index("`paper`") < top.index("`quick`")  # paper-profile numbers beside (before) the quick ones
    assert "[fedlc / quick](fedlc/README.md#fedlc-quick)" in top and '<a id="fedlc-quick"></a>' in text
    assert "| `quick` | table1 | A vs B | AMD EPYC vs Intel Xeon | 10 | 7 | 0.10 | 2.10 |" in text
    assert "![fig1_x](quick/fig1_x.png)" in text and "| FedAvg | 1 → 2 |" in text
    assert "something measured" in text and "1/2 (1 undecided within our spread)" in text
    # cells by count with their CSV; the deviation stated once, in the page's list, and referred to by number
    assert "* Cells undecided: Table 1 1 ([table1.csv](quick/table1.csv))" in text and "FedProx @ x" not in text
    assert "1. 1 seed (`quick`)" in text and "*Deviations* ([listed once](#deviations)): 1." in text
    others = sorted(set(all_papers()) - {"fedlc"})
    assert others and all(f"not regenerated here yet: `make figures PAPER={p}`" in top for p in others)
    assert "not regenerated here yet: `make figures PAPER=fedlc`" not in top
    assert "[FedLC (ICML 2022)](fedlc/README.md): claims: not generated yet" in top
    (root / "fedlc" / "claims.md").write_text("# claims\n")
    (root / "fedlc" / "claims.csv").write_text("claim,scale,verdict\na,quick,reproduced\nb,quick,not tested\n"
                                                "c,paper,reproduced\n")
    top = build_index(root).read_text()
    assert ("[FedLC (ICML 2022)](fedlc/README.md): [claims](fedlc/claims.md) ([CSV](fedlc/claims.csv)): 3 rows, "
            "2 reproduced, 1 not tested") in top
    assert "[the claims, one verdict each](claims.md)" in (root / "fedlc" / "README.md").read_text()


def test_regenerate_selects_notebooks_by_name_number_or_substring(tmp_path):
    from fedlib.repro.regenerate import select

    paths = [tmp_path / f"0{i}_{n}.ipynb" for i, n in ((1, "motivation"), (4, "label_skew"))]
    assert select(paths, None) == paths
    assert select(paths, ["04_label_skew"]) == [paths[1]]
    assert select(paths, ["01"]) == [paths[0]]
    assert select(paths, ["label"]) == [paths[1]]
    assert select(paths, ["nothing"]) == []


def test_regenerate_lists_papers_and_refuses_unknown_ones(capsys):
    from fedlib.repro.regenerate import main

    assert main(["--list", "--paper", "fedlc"]) == 0
    out = capsys.readouterr().out.split()
    assert "fedlc/01_motivation" in out and all(line.startswith("fedlc/") for line in out)
    assert main(["--paper", "nonesuch"]) == 2
    assert "unknown paper" in capsys.readouterr().err
    assert main(["--paper", "fedlc", "--profile", "huge"]) == 2


def test_regenerate_passes_absolute_paths_to_the_kernels(tmp_path, monkeypatch):
    """The kernels run in notebooks/<paper>/, so FEDLIB_DATA=../shared/data (the README's main
    command) must reach them resolved against the caller's folder."""
    from unittest import mock

    from fedlib.repro.regenerate_notebook import environment

    caller = tmp_path / "repo"
    (tmp_path / "shared" / "data").mkdir(parents=True)
    caller.mkdir()
    monkeypatch.chdir(caller)
    with mock.patch.dict(os.environ, {"FEDLIB_DATA": "../shared/data", "FEDLIB_CACHE": "cache"}, clear=False):
        env = environment("store")
        assert os.environ["FEDLIB_DATA"] == env["data"] == str(tmp_path / "shared" / "data")
        assert os.environ["FEDLIB_STORE"] == env["store"] == str(caller / "store")
        assert os.environ["FEDLIB_CACHE"] == str(caller / "cache")


def test_partial_regenerations_keep_one_timing_per_notebook():
    from fedlib.repro.regenerate import earlier_timings

    nb = lambda name, t: {"name": name, "status": "ok", "wall_time_s": t}  # noqa: E731
    full = {"notebooks": [nb("a", 1.0), nb("b", 2.0), nb("c", 3.0)]}
    first = {"notebooks": [nb("b", 20.0)]}
    first["previous"] = earlier_timings(first, full)
    assert first["previous"] == [nb("a", 1.0), nb("c", 3.0)]
    second = {"notebooks": [nb("c", 30.0)]}
    second["previous"] = earlier_timings(second, first)
    assert second["previous"] == [nb("a", 1.0), nb("b", 20.0)]
    # each kept timing names the commit it ran at, through any chain of partial regenerations
    full["git_commit"], first["git_commit"], second["git_commit"] = "aaa", "bbb", "ccc"
    first["previous"] = earlier_timings(first, full)
    second["previous"] = earlier_timings(second, first)
    assert [(n["name"], n["git_commit"]) for n in second["previous"]] == [("a", "aaa"), ("b", "bbb")]
    third = {"notebooks": [nb("a", 5.0)], "git_commit": "ddd"}
    assert [(n["name"], n["git_commit"]) for n in earlier_timings(third, second)] == [("b", "bbb"), ("c", "ccc")]


def test_a_partial_regeneration_keeps_which_other_notebooks_were_rendered_from_records():
    """FedLC's paper outputs: notebooks 01-08 rendered from their records at one commit, then notebook 09 trained
    again alone.  The record lost the ``rendered`` block, and with it how 01-08's outputs were made."""
    from fedlib.repro.regenerate import still_rendered

    old = {"git_commit": "aaa", "notebooks": [{"name": "06", "status": "ok"}],
           "rendered": {"from": "_records.jsonl.gz", "git_commit": "rrr", "at": "12:00",
                        "notebooks": [{"name": n, "status": "rendered"} for n in ("01", "08", "09")]}}
    kept = still_rendered({"notebooks": [{"name": "09", "status": "ok"}]}, old)
    assert kept == {**old["rendered"], "notebooks": [{"name": "01", "status": "rendered"},
                                                     {"name": "08", "status": "rendered"}]}
    assert still_rendered({"notebooks": [{"name": n} for n in ("01", "08", "09")]}, old) is None  # all run again
    assert still_rendered({"notebooks": [{"name": "09"}]}, {"notebooks": []}) is None  # nothing was rendered


def test_a_warm_render_keeps_the_timing_of_the_cold_regeneration(tmp_path):
    """Rendering again from a filled store (e.g. after recording a spread) trains nothing; the
    index must still say what regenerating costs from an empty store, and only at the same commit."""
    from fedlib.repro.artefacts.index import build_index
    from fedlib.repro.regenerate import cold_timing

    nb = lambda name, t, trained: {"name": name, "status": "ok", "wall_time_s": t, "runs": 4,  # noqa: E731
                                   "trained": trained}
    cold = {"git_commit": "abc", "started": "10:00", "finished": "12:00", "total_wall_time_s": 7200.0,
            "notebooks": [nb("01_a", 7000.0, 4)], "runs": {"runs": 4, "trained": 4, "reused": 0, "trained_again": 0}}
    warm = {"git_commit": "abc", "started": "13:00", "finished": "13:01", "total_wall_time_s": 60.0,
            "notebooks": [nb("01_a", 60.0, 0)]}
    assert cold_timing(warm, cold)["total_wall_time_s"] == 7200.0
    again = {**warm, "cold": cold_timing(warm, cold)}
    assert cold_timing(warm, again) == again["cold"]  # carried through any number of warm renders
    assert cold_timing({**warm, "git_commit": "def"}, cold) is None  # another commit: not the same runs
    assert cold_timing({**warm, "notebooks": [nb("01_a", 60.0, 1)]}, cold) is None  # it trained: it is its own timing
    assert cold_timing(cold, warm) is None

    folder = tmp_path / "figures" / "fedlc" / "quick"
    _write(folder, "fig1_x", {"kind": "figure", "name": "fig1_x", "title": "Fig. 1: x", "caption": "cap",
                              "profile": "quick", "notebook": "fedlc/01_a", "deviations": [],
                              "files": {"png": "fig1_x.png"}, "git_commit": "abc", "wall_time_s": 5.0})
    (folder / "_run.json").write_text(json.dumps(again))
    text = build_index(tmp_path / "figures").read_text()
    assert "| FedLC (ICML 2022) | `quick` | 120.0 min from an empty store |" in text
    text = (tmp_path / "figures" / "fedlc" / "README.md").read_text()
    assert "rendered again from that store at the same commit in 1.0 min (13:00 → 13:01)" in text
    assert "`01_a`: ok, 7000 s, 4 of 4 runs trained" in text
    assert "* runs: 4 trained, 0 from the store, 0 trained a second time" in text  # the cold run's counts
    assert "rendered from the store in 5 s" in text  # a figure's own time is its rendering


def _executed(ran_at: str, widget: str, table: str, address: str, value: str) -> dict:
    """An executed notebook as papermill writes it: what the execution itself leaves beside one output."""
    timing = {"start_time": ran_at, "end_time": ran_at, "duration": 0.5, "status": "completed", "exception": False}
    return {"metadata": {"papermill": {**timing, "parameters": {"profile": "quick"}},
                         "widgets": {"application/vnd.jupyter.widget-state+json": {"state": {widget: {}}}}},
            "cells": [{"cell_type": "code", "id": widget[:8], "source": "profile = 'quick'",
                       "metadata": {"tags": ["injected-parameters"], "papermill": dict(timing)}, "outputs": []},
                      {"cell_type": "code", "id": "fixed", "source": "show(table)",
                       "metadata": {"execution": {"iopub.execute_input": ran_at}, "papermill": dict(timing)},
                       "outputs": [{"output_type": "display_data", "metadata": {},
                                    "data": {"application/vnd.jupyter.widget-view+json": {"model_id": widget},
                                             "text/plain": ["grid:   0%|"]}},
                                   {"output_type": "display_data", "metadata": {},
                                    "data": {"text/html": [f'<table id="T_{table}">', f"#T_{table}_row0 {value}"],
                                             "text/plain": [f"<pandas.io.formats.style.Styler at {address}>"]}}]}]}


def test_an_executed_copy_rendered_again_from_the_same_outputs_is_the_same_bytes():
    """What papermill and Jupyter record of the execution itself (times, a random injected-cell id, progress
    widgets, pandas' random table ids, memory addresses) is dropped, so a render that changes no output leaves
    the executed copy as it was; an output that changed still shows."""
    from fedlib.repro.regenerate_notebook import steady

    a = steady(_executed("2026-11-30T02:05:47", "a91fc68da9ce49bf", "fb575", "0x7f34bf4b8f50", "58.1"))
    b = steady(_executed("2026-11-30T03:00:00", "3bbbcb0f777a4b27", "a09fa", "0x7f1f860b5190", "58.1"))
    assert a == b
    assert "widgets" not in a["metadata"] and set(a["metadata"]["papermill"]) == {"status", "exception", "parameters"}
    assert [len(c["outputs"]) for c in a["cells"]] == [0, 1]  # the progress bar's widget goes, the table stays
    assert a["cells"][0]["id"] == "injected-parameters" and a["cells"][1]["id"] == "fixed"
    assert a["cells"][1]["outputs"][0]["data"]["text/html"] == ['<table id="T_00000">', "#T_00000_row0 58.1"]
    assert steady(_executed("2026-11-30T02:05:47", "a91fc68da9ce49bf", "fb575", "0x1", "58.2")) != a


def test_every_committed_executed_copy_holds_no_trace_of_its_execution():
    """Each committed executed notebook is already steady, so rendering it again writes it again only where an
    output changed."""
    from fedlib.repro.regenerate_notebook import steady

    out = subprocess.run(["git", "ls-files", "figures"], cwd=REPO, capture_output=True, text=True)
    copies = [REPO / p for p in out.stdout.splitlines() if "/executed/" in p and p.endswith(".ipynb")]
    if not copies:
        pytest.skip("not a git checkout")
    moving = [str(p.relative_to(REPO)) for p in copies
              if steady(json.loads(p.read_text())) != json.loads(p.read_text())]
    assert not moving, f"executed copies with timings, widgets or random ids: {moving}"


def test_executed_notebooks_name_no_figures_root_outside_the_repository(tmp_path):
    from fedlib.repro.regenerate_notebook import scrub_executed

    root = tmp_path / "elsewhere" / "figures_copy"
    nb = root / "fedlc" / "quick" / "executed" / "01_x.ipynb"
    nb.parent.mkdir(parents=True)
    nb.write_text(json.dumps({"out_dir": str(root / "fedlc" / "quick"), "output_path": str(nb)}))
    scrub_executed(nb, root)
    body = json.loads(nb.read_text())
    assert body == {"out_dir": "figures/fedlc/quick", "output_path": "figures/fedlc/quick/executed/01_x.ipynb"}
