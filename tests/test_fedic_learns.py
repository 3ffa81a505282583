"""FEDIC's ``learns`` study (issue 49, item 5): the head classes' share, the budget choice, its cells, and a run
under the smoke profile."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from fedlib.papers.fedic import PAPER
from fedlib.papers.fedic.learns import choose_budget, head_classes, head_share, learns_figure, paired_gaps


def test_head_classes_of_the_long_tail_if100():
    """FashionMNIST-LT at IF = 100 (6,000 − 100 of D_aux per class, n_k = 5,900 · 100^(−k/9)): classes 0 and 1 hold
    9,424 of ≈ 14,900 samples, class 0 alone 5,900 (< half): the head is {0, 1}, 20 % of a balanced test set."""
    counts = np.floor(5900 * 100.0 ** (-np.arange(10) / 9)).astype(int)
    assert counts[0] < counts.sum() / 2 < counts[:2].sum()
    head = head_classes(counts)
    assert head == [0, 1]
    assert head_share(np.repeat(np.arange(10), 20), head) == pytest.approx(20.0)


def test_head_classes_boundaries_and_order():
    assert head_classes([50, 30, 20]) == [0]  # exactly half is enough
    assert head_classes([40, 40, 20]) == [0, 1]
    assert head_classes([10, 60, 30]) == [1]  # by size, not by index
    assert head_classes([10, 60, 30], fraction=0.7) == [1, 2]
    assert head_classes([1, 1, 1, 1], fraction=1.0) == [0, 1, 2, 3]
    with pytest.raises(ValueError):
        head_classes([1, 2], fraction=0.0)


def test_head_share_reads_the_test_labels():
    """An unbalanced test set: the share is the fraction of its images in the head classes."""
    labels = [0] * 30 + [1] * 10 + [2] * 60
    assert head_share(labels, [0]) == pytest.approx(30.0)
    assert head_share(labels, [0, 1]) == pytest.approx(40.0)
    assert head_share(labels, [3]) == 0.0


def test_choose_budget_smallest_well_above():
    acc = {1: 28.75, 2: 33.0, 4: 41.0, 8: 52.0}
    assert choose_budget(acc, 20.0, 15.0) == 4
    assert choose_budget(acc, 20.0, 13.0) == 2  # 33.0 ≥ 33.0: at the threshold counts
    assert choose_budget(acc, 20.0, 8.75) == 1
    assert choose_budget(acc, 20.0, 40.0) is None
    assert choose_budget({8: 52.0, 1: 40.0}, 20.0, 15.0) == 1  # the order given does not matter
    assert choose_budget({1: math.nan, 2: None, 4: 36.0}, 20.0, 15.0) == 4  # not run never qualifies
    assert choose_budget({}, 20.0, 0.0) is None


def test_cells_scale_the_rounds_and_list_the_comparison():
    study = PAPER.study("learns")
    quick = PAPER.profile("quick")
    cells = study.cells(quick)  # no store: the comparison at the largest multiple (the cost's upper bound)
    sweep = [c for c in cells if c["stage"] == "sweep"]
    assert [c["budget"] for c in sweep] == [1, 2, 4, 8]
    assert [c["config"]["rounds"] for c in sweep] == [8, 16, 32, 64]
    assert all(c["config"]["method"] == "fedavg" and c["config"]["seed"] == 0 for c in sweep)
    assert sweep[0]["config"]["long_tail_if"] == 100.0 and sweep[0]["config"]["dataset"] == "fmnist"
    paired = [(c["method"], c["budget"], c["config"]["seed"]) for c in cells if c["stage"] == "paired"]
    assert paired == [("fedavg", 8, 1), ("fedavg", 8, 2), ("fedic", 8, 0), ("fedic", 8, 1), ("fedic", 8, 2)]
    fixed = study.cells(quick, budget=2)
    assert {c["budget"] for c in fixed if c["stage"] == "paired"} == {2}


def test_the_x1_runs_are_table1s():
    """The ×1 cells are the quick Table 1 cells (so they share its runs)."""
    from fedlib.repro.budget.gate import table_cells

    quick = PAPER.profile("quick")
    t1 = {c["row"]: c["config"] for c in table_cells(quick, "table1") if c["column"] == "cifar10_if100"}
    cells = PAPER.study("learns").cells(quick, budget=1)
    mine = {c["method"]: c["config"] for c in cells if c["budget"] == 1 and c["config"]["seed"] == 0}
    for m in ("fedavg", "fedic"):
        assert {k: v for k, v in mine[m].items() if k != "seed"} == t1[m]


def test_paper_profile_needs_a_gpu_on_a_cpu():
    cells = PAPER.study("learns").cells(PAPER.profile("paper"))
    assert cells and all(c["config"] is None for c in cells)
    assert all("GPU" in c["note"] or "absent" in c["note"] for c in cells)
    assert {c["rounds"] for c in cells} == {200}


def test_smoke_runs_the_study(tmp_path):
    from fedlib.repro.artefacts.context import Context

    ctx = Context("smoke", notebook="fedic/07_fedavg_learns", out_dir=tmp_path / "out", store=tmp_path / "store",
                  progress=False, announce=False)
    result = ctx.study("learns")
    s = result.summary
    runs = result.grid.runs[["method", "budget", "seed", "status", "note"]].to_string()
    assert list(zip(s.method, s.budget)) == [("fedavg", 1), ("fedavg", 2), ("fedic", 1)], runs
    for col in ("ours_mean", "ours_std", "n_seeds", "ours_seeds", "dataset_used", "head_share", "chosen"):
        assert col in s
    assert set(s.dataset_used) == {"fmnist"}
    chosen = s[s.chosen]
    assert list(chosen.method) == ["fedavg", "fedic"] and set(chosen.budget) == {1}  # margin −100: the first budget
    assert all(n == 2 for n in chosen.n_seeds) and s[~s.chosen].n_seeds.tolist() == [1]
    seeds = json.loads(chosen[chosen.method == "fedic"].ours_seeds.iloc[0])
    assert sorted(seeds) == ["0", "1"]
    gaps = paired_gaps(s)
    assert sorted(gaps) == [0, 1]
    fedavg = json.loads(chosen[chosen.method == "fedavg"].ours_seeds.iloc[0])
    assert gaps[0] == pytest.approx(seeds["0"] - fedavg["0"])
    assert 0 < s.head_share.iloc[0] < 100 and s.head_classes.iloc[0] == "0 1"
    assert any("paired by seed" in line for line in result.findings)
    learns_figure(ctx, result)  # the figure obeys the figure rules (save_figure refuses one that breaks them)
    ctx.save_study(result, "learns", seeds=tuple(result.options.compare_seeds))
    assert (tmp_path / "out" / "learns_budget.png").exists() and (tmp_path / "out" / "learns.csv").exists()


def test_the_paper_profile_says_why_it_does_not_run(tmp_path):
    """On a CPU the paper profile trains nothing: the summary's rows are 'not run' with the gate's reason, the
    findings say so, and the figure is a placeholder that says why it is empty."""
    from fedlib.repro.artefacts.context import Context

    ctx = Context("paper", notebook="fedic/07_fedavg_learns", out_dir=tmp_path / "out", store=tmp_path / "store",
                  progress=False, announce=False)
    result = ctx.study("learns")
    s = result.summary
    assert list(zip(s.method, s.budget)) == [("fedavg", 1)] and s.n_seeds.tolist() == [0]
    assert result.findings[0].startswith("not run") and "GPU" in result.findings[0]
    learns_figure(ctx, result)


def test_a_notebook_runs_the_study():
    """The regeneration's cost plan counts a study's cells where a notebook quotes its name."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "notebooks/fedic/07_fedavg_learns.ipynb").read_text()
    assert 'ctx.study(\\"learns\\")' in text
    assert "learns" in PAPER.studies and PAPER.study("learns").id in PAPER.experiments
