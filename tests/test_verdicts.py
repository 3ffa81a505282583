"""Verdicts a reviewer can trust (issue 19), each rule on a small hand-made comparison whose
right answer is worked out here: a tie in the paper, a zero paper gain, an unmeasured spread,
a spread borrowed only from a table of the same metric, a paper ± that is not over seeds,
Kendall's τ-b against a pair-by-pair count, a stand-in cell and the marks on captions and
findings, the recount of a saved table; and the two copies of the FedLC paper, number by number."""

import itertools
import json
import math
import os
import re
import statistics
from pathlib import Path

import pandas as pd
import pytest

from fedlib.papers import all_papers
from fedlib.papers.fedlc import reported as fedlc
from fedlib.repro.artefacts.comparison_text import findings, mark_stand_in, render_comparison, verdict_text
from fedlib.repro.verdict.compare import (NO_SEED_STD, ONE_SEED, close_without_std, compare, gains, half_printed_unit,
                                         kendall_tau, summarize, winners)
from fedlib.repro.verdict.seeds import seed_spread
from fedlib.repro.verdict.spread import Spread, record_seed_spread, spread_for
from fedlib.repro.artefacts.tables import recount


def _cells(paper: dict, ours: dict, *, dataset="d", used="d", std=0.0, n=3, paper_std=1.0, **extra):
    """{(row, column): paper mean} and {(row, column): our mean} -> (paper frame, ours frame); ours by default over
    three seeds that agree (a measured std of 0), so that a table spread given to compare is the one it uses."""
    p = pd.DataFrame([{"row": r, "column": c, "row_label": r.upper(), "column_label": c, "row_group": "",
                       "dataset": dataset, "paper_mean": v, "paper_std": paper_std, **extra}
                      for (r, c), v in paper.items()])
    o = pd.DataFrame([{"row": r, "column": c, "ours_mean": v, "ours_std": std, "n_seeds": n, "status": "ok",
                       "note": "", "dataset_used": used} for (r, c), v in ours.items()])
    return p, o


def _brute_tau_b(x, y):
    """Kendall's τ-b by counting pairs: (concordant − discordant) / √((n0 − ties in x)(n0 − ties in y))."""
    nc = nd = tx = ty = 0
    for i, j in itertools.combinations(range(len(x)), 2):
        dx, dy = x[i] - x[j], y[i] - y[j]
        if dx == 0 and dy == 0:
            tx, ty = tx + 1, ty + 1
        elif dx == 0:
            tx += 1
        elif dy == 0:
            ty += 1
        elif dx * dy > 0:
            nc += 1
        else:
            nd += 1
    n0 = len(x) * (len(x) - 1) / 2
    return (nc - nd) / math.sqrt((n0 - tx) * (n0 - ty))


# ------------------------------------------------------------------------------ no std in the paper
def test_half_a_printed_unit_is_read_from_the_transcribed_value():
    assert half_printed_unit(99.1) == pytest.approx(0.05)
    assert half_printed_unit(98.0) == pytest.approx(0.05)
    assert half_printed_unit(75.46) == pytest.approx(0.005)
    assert half_printed_unit(97) == pytest.approx(0.05)  # an int is printed as 97.0 here: one decimal assumed


def test_where_the_paper_gives_no_std_our_value_is_checked_within_our_spread_of_its_printed_value():
    # FedABC-like: one decimal printed, no std; ours over 3 seeds
    paper = {("fedavg", "a"): 99.1, ("fedavg", "b"): 98.3, ("fedavg", "c"): 98.0, ("fedabc", "a"): 99.3}
    ours = {("fedavg", "a"): 99.07, ("fedavg", "b"): 98.21, ("fedavg", "c"): 97.70, ("fedabc", "a"): 99.20}
    p, o = _cells(paper, ours, std=0.04, n=3, paper_std=math.nan)
    comp = compare(p, o)
    assert set(comp.status) == {"no_std"}  # never within/outside: there is no std to be within
    close = dict(zip(zip(comp.row, comp.column), close_without_std(comp)))
    # |Δ| against 0.04 + 0.05 = 0.09: a 0.03 yes, b 0.09 yes (at the edge), c 0.30 no, fedabc a 0.10 no
    assert close == {("fedavg", "a"): True, ("fedavg", "b"): True, ("fedavg", "c"): False, ("fedabc", "a"): False}
    s = summarize(comp)
    assert s["no_std_close"] == ["FEDAVG @ a", "FEDAVG @ b"] and s["no_std_far"] == ["FEDABC @ a", "FEDAVG @ c"]
    assert s["counts"]["within"] == s["counts"]["outside"] == 0
    assert any("2 of the 4 with a measured spread" in f and "2 are farther" in f for f in findings(comp))
    # one seed and no measured spread: nothing is said to be close or far
    p1, o1 = _cells(paper, ours, n=1, paper_std=math.nan)
    one = summarize(compare(p1, o1))
    assert one["no_std_close"] == one["no_std_far"] == []
    # a cell with a std in the paper is judged against it, never by this check
    p2, o2 = _cells(paper, ours, std=0.04, n=3, paper_std=0.5)
    assert close_without_std(compare(p2, o2)).isna().all()


# ------------------------------------------------------------------------------ ties in the paper
def test_a_three_way_tie_in_the_paper_counts_our_best_as_agreeing():
    # FedABC Table 1, MNIST Dir(0.1): Scaffold, FedRoD and FedABC at 99.3; our best is the third of them
    paper = {("scaffold", "x"): 99.3, ("fedrod", "x"): 99.3, ("fedabc", "x"): 99.3, ("fedavg", "x"): 99.1}
    ours = {("scaffold", "x"): 97.46, ("fedrod", "x"): 98.55, ("fedabc", "x"): 98.80, ("fedavg", "x"): 98.67}
    p, o = _cells(paper, ours)
    w = winners(compare(p, o, spread=0.0)).iloc[0]
    assert w.paper_best == "SCAFFOLD = FEDROD = FEDABC" and w.paper_tied == 3 and w.ours_best == "FEDABC"
    assert (w.face_value, w.verdict) == ("agree", "agree")  # row order (idxmax) would pick Scaffold: disagree
    # our best outside the tie disagrees
    ours_b = {**ours, ("fedavg", "x"): 99.0}
    w = winners(compare(*_cells(paper, ours_b), spread=0.0)).iloc[0]
    assert (w.ours_best, w.verdict) == ("FEDAVG", "disagree")
    # FedAvg 98.85 is within √(0.1² + 0.1²) = 0.14 of our best FedABC 98.80 + ... : undecided
    ours_c = {**ours, ("fedavg", "x"): 98.70}
    w = winners(compare(*_cells(paper, ours_c), spread=0.1)).iloc[0]
    assert (w.face_value, w.verdict) == ("agree", "undecided")
    # the same with a spread below 0.10 pp: FedAvg (0.10 below) is out of reach, FedABC is decided
    w = winners(compare(*_cells(paper, ours_c), spread=0.05)).iloc[0]
    assert w.verdict == "agree"


# ------------------------------------------------------------------------------ zero gains
def test_a_zero_gain_in_the_paper_has_no_sign_and_is_counted_apart():
    paper = {("fedabc", "x"): 60.0, ("fedavg", "x"): 60.0, ("fedabc", "y"): 62.0, ("fedavg", "y"): 60.0,
             ("fedabc", "z"): 58.0, ("fedavg", "z"): 60.0}
    ours = {("fedabc", "x"): 61.0, ("fedavg", "x"): 60.0, ("fedabc", "y"): 61.0, ("fedavg", "y"): 60.0,
            ("fedabc", "z"): 61.0, ("fedavg", "z"): 60.0}
    c = compare(*_cells(paper, ours), spread=0.0)
    g = gains(c, "fedabc", "fedavg").set_index("column")
    assert g.paper_gain["x"] == 0.0 and g.verdict["x"] == "zero_in_paper" and pd.isna(g.face_value["x"])
    assert pd.isna(g.same_sign["x"])
    assert (g.verdict["y"], g.verdict["z"]) == ("agree", "disagree")
    s = summarize(c, ("fedabc", "fedavg"))
    assert (s["gain_same_sign"], s["gain_zero_in_paper"], s["gain_total"], s["decided_gain_columns"]) == (1, 1, 3, 2)
    assert verdict_text(s, "gain") == "1/3 (1 zero gain in the paper)"


# ------------------------------------------------------------------------------ unmeasured spread
def test_with_no_spread_measured_nothing_is_decided_and_the_face_value_is_shown():
    paper = {("fedabc", "x"): 60.0, ("fedavg", "x"): 59.0, ("fedabc", "y"): 70.0, ("fedavg", "y"): 71.0}
    ours = {("fedabc", "x"): 60.13, ("fedavg", "x"): 60.0, ("fedabc", "y"): 70.5, ("fedavg", "y"): 70.0}
    c = compare(*_cells(paper, ours, std=math.nan, n=1))  # one seed, no table spread: not measured (never 0)
    assert c.spread.isna().all() and set(c.spread_source) == {ONE_SEED}
    assert set(c.status) == {"no_spread"} and c.within_std.isna().all()
    w = winners(c).set_index("column")
    assert list(w.verdict) == ["no_spread", "no_spread"] and list(w.face_value) == ["agree", "disagree"]
    g = gains(c, "fedabc", "fedavg").set_index("column")  # +0.13 on one seed is no agreement
    assert list(g.verdict) == ["no_spread", "no_spread"] and list(g.face_value) == ["agree", "disagree"]
    s = summarize(c, ("fedabc", "fedavg"))
    assert s["counts"]["no_spread"] == 4 and s["counts"]["within"] == s["counts"]["outside"] == 0
    assert (s["winner_agree"], s["winner_no_spread"], s["winner_agree_face_value"]) == (0, 2, 1)
    assert verdict_text(s, "winner") == "0/2 (2 spread not measured; 1/2 at face value)"
    assert s["spread_sources"] == {ONE_SEED: 4}
    assert "∅" in render_comparison(c) and f"{ONE_SEED} (4 cells)" in render_comparison(c)
    # a spread the table measured on other cells, or on another machine, does not stand in for one seed's
    borrowed = [Spread(3.0, "seed-to-seed"), Spread(0.4, "cross-machine (this table)")]
    assert set(compare(*_cells(paper, ours, std=math.nan, n=1), spread=borrowed).status) == {"no_spread"}
    # two seeds measure a spread of their own: std over seeds, named
    c = compare(*_cells(paper, ours, std=0.05, n=2))
    assert set(c.spread_source) == {"std over 2 seeds"} and "no_spread" not in set(c.status)


def _sidecar(folder: Path, name: str, value: str | None):
    body = {"kind": "table", "name": name}
    if value is not None:
        body.update(paper_table=name, parameters={"value": value})
    (folder / f"{name}.json").write_text(json.dumps(body))


def test_a_table_without_its_own_spread_borrows_only_from_a_table_of_the_same_metric(tmp_path):
    # FedLC: the largest spread measured in the profile is 10.83, on a table of D ratios
    _sidecar(tmp_path, "deviation_by_minority_size", None)
    _sidecar(tmp_path, "table1", "accuracy")
    _sidecar(tmp_path, "table6", "accuracy")
    _sidecar(tmp_path, "table9", "personalized_accuracy")
    tables = {"deviation_by_minority_size": 10.83, "table1": 1.8, "table6": 2.1, "table9": 3.0}
    (tmp_path / "_spread.json").write_text(json.dumps({"tables": {t: {"max_abs_delta": v} for t, v in tables.items()}}))
    assert spread_for(tmp_path, "table3", "accuracy") == [
        Spread(2.1, "cross-machine (largest measured on a accuracy table: table6)")]
    assert spread_for(tmp_path, "table3", "drift_accuracy") == []  # no table of its metric: not measured
    assert spread_for(tmp_path, "table3", None) == []  # a table of several metrics borrows nothing
    assert spread_for(tmp_path, "table1", "accuracy") == [Spread(1.8, "cross-machine (this table)")]
    # a seed-to-seed measurement joins; a cell takes the largest measured
    record_seed_spread(tmp_path, {"table1": {"seeds": [0, 1, 2], "cells": 4, "median_std": 1.0, "max_std": 2.5,
                                             "gains": 2, "max_gain_std": 3.0}}, "cmd")
    spreads = spread_for(tmp_path, "table1", "accuracy")
    assert [s.value for s in spreads] == [2.5, 1.8]
    paper = {("a", "x"): 50.0, ("b", "x"): 55.0}
    c = compare(*_cells(paper, {("a", "x"): 52.0, ("b", "x"): 53.0}), spread=spreads)
    assert list(c.spread) == [2.5, 2.5] and c.spread_source.iloc[0].startswith("seed-to-seed")
    assert list(c.status) == ["undecided", "undecided"]  # |Δ| = 2 is within 2.5 of the std 1


def test_seed_spread_of_the_headline_cells_by_hand():
    runs = pd.DataFrame([
        {"row": r, "column": c, "seed": s, "value": v}
        for (r, c), vals in {("fedlc", "x"): (60.0, 62.0, 61.0), ("fedavg", "x"): (50.0, 50.5, 52.0),
                             ("fedlc", "y"): (70.0, 70.0, 73.0), ("fedavg", "y"): (69.0, 71.0, 70.0),
                             ("fedrs", "x"): (10.0, 90.0, 50.0)}.items()
        for s, v in enumerate(vals)])
    s = seed_spread(runs, ("fedlc", "fedavg"))
    stds = [statistics.stdev(v) for v in ((60, 62, 61), (50, 50.5, 52), (70, 70, 73), (69, 71, 70))]
    gain_stds = [statistics.stdev([10.0, 11.5, 9.0]), statistics.stdev([1.0, -1.0, 3.0])]
    assert s["seeds"] == [0, 1, 2] and s["cells"] == 4 and s["gains"] == 2  # FedRS is not a headline row
    assert s["max_std"] == pytest.approx(max(stds)) and s["median_std"] == pytest.approx(statistics.median(stds))
    assert s["max_gain_std"] == pytest.approx(max(gain_stds))
    assert seed_spread(runs[runs.seed == 0], ("fedlc", "fedavg")) is None  # one seed measures nothing


def test_measure_seed_spread_runs_the_headline_cells_with_each_seed(tmp_path):
    import fedlib
    from fedlib.repro.artefacts.tables import grid_cells
    from fedlib.repro.measure_spread import main, measure_seed_spread

    prof = all_papers()["fedlc"].profile("smoke")  # Table 4: Synthetic(1,1), FedAvg and FedLC, 2 rounds
    got = measure_seed_spread("fedlc", "smoke", (0, 1), tables=["table4"], out_dir=tmp_path, store=False,
                              progress=False)["table4"]
    cells = [c for c in grid_cells(prof, "table4") if c["config"] is not None]
    assert {c["row"] for c in cells} == {"fedavg", "fedlc"}
    acc = {(c["row"], c["column"], s): 100 * fedlib.run({**c["config"], "seed": s}, store=False,
                                                        progress=False).final_accuracy
           for c in cells for s in (0, 1)}
    stds = [statistics.stdev([acc[(c["row"], c["column"], s)] for s in (0, 1)]) for c in cells]
    gain = [acc[("fedlc", "synthetic_1_1", s)] - acc[("fedavg", "synthetic_1_1", s)] for s in (0, 1)]
    assert got["seeds"] == [0, 1] and got["cells"] == len(cells)
    assert got["max_std"] == pytest.approx(max(stds)) and got["max_gain_std"] == pytest.approx(statistics.stdev(gain))
    with pytest.raises(SystemExit):
        main(["fedlc", "--profile", "smoke", "--seeds", "0"])  # one seed measures no spread


# ------------------------------------------------------------------------------ what ± means
def test_a_paper_std_over_rounds_is_shown_and_not_judged():
    paper = {("fedavg", "x"): 8.4, ("fedconcat", "x"): 18.5}
    p, o = _cells(paper, {("fedavg", "x"): 8.5, ("fedconcat", "x"): 30.0}, std_over="the last 10 rounds")
    c = compare(p, o, spread=0.0)
    assert set(c.status) == {"std_not_seeds"} and c.within_std.isna().all()
    s = summarize(c, ("fedconcat", "fedavg"))
    assert s["counts"]["std_not_seeds"] == 2 and s["counts"]["outside"] == 0 and s["gain_same_sign"] == 1
    assert "the last 10 rounds, not over seeds" in render_comparison(c)
    t3 = all_papers()["fedconcat"].table("table3")
    assert set(t3.frame().std_over) == {"the last 10 rounds"}
    assert set(all_papers()["fedconcat"].table("table1").frame().std_over) == {"seeds"}


def test_ours_over_the_last_rounds_is_the_papers_statistic_and_no_seed_spread():
    from fedlib.repro.artefacts.tables import last_rounds, over_last_rounds

    assert last_rounds("the last 10 rounds") == 10 and last_rounds("seeds") is None
    # two seeds of one cell; a two-stage run whose last stage's rounds 1..5 end at 50, 52, 54 (window of 3)
    hist = pd.DataFrame(
        [{"row": "a", "column": "x", "seed": 0, "stage": "encoders", "round": r, "test_accuracy": 99.0}
         for r in (1, 2, 3)]
        + [{"row": "a", "column": "x", "seed": 0, "stage": "classifier", "round": r, "test_accuracy": v}
           for r, v in ((1, 10.0), (2, 20.0), (3, 50.0), (4, 52.0), (5, 54.0))]
        + [{"row": "a", "column": "x", "seed": 1, "stage": "classifier", "round": r, "test_accuracy": v}
           for r, v in ((3, 40.0), (4, 40.0), (5, 46.0))])
    got = over_last_rounds(hist, 3).set_index("row")
    assert got.ours_mean["a"] == pytest.approx((52.0 + 42.0) / 2)
    assert got.ours_std["a"] == pytest.approx((statistics.stdev([50, 52, 54]) + statistics.stdev([40, 40, 46])) / 2)
    assert got.rounds_evaluated["a"] == 3
    # our ± over rounds never counts as a spread over seeds
    p, o = _cells({("a", "x"): 50.0}, {("a", "x"): 47.0}, std=2.5, n=2, std_over="the last 3 rounds")
    c = compare(p, o.assign(ours_std_over="the last 3 rounds"))
    assert c.spread_source.iloc[0] == NO_SEED_STD and c.status.iloc[0] == "std_not_seeds"


def test_reproduce_table_reads_a_table_over_rounds_from_the_histories(monkeypatch):
    from dataclasses import replace

    from fedlib.repro.artefacts.tables import reproduce_table

    pp = all_papers()["fedlc"]  # smoke Table 4: Synthetic(1,1), FedAvg and FedLC, 2 rounds, evaluated every round
    monkeypatch.setitem(pp.tables, "table4", replace(pp.tables["table4"], std_over="the last 2 rounds"))
    comp, grid = reproduce_table("table4", pp.profile("smoke"), store=False, save=False, progress=False)
    ran = comp[comp.ours_mean.notna()].set_index("row")
    for row in ("fedavg", "fedlc"):
        h = grid.histories[(grid.histories.row == row) & (grid.histories.column == "synthetic_1_1")]
        assert sorted(h["round"]) == [1, 2]
        assert ran.ours_mean[row] == pytest.approx(h.test_accuracy.mean())
        assert ran.ours_std[row] == pytest.approx(h.test_accuracy.std(ddof=1))
        assert ran.ours_std_over[row] == "the last 2 rounds" and ran.status[row] == "std_not_seeds"


# ------------------------------------------------------------------------------ Kendall's τ-b
def test_kendall_tau_b_per_column_against_a_pair_count():
    x, y = [3.0, 2.0, 2.0, 1.0], [4.0, 3.0, 2.0, 1.0]
    assert _brute_tau_b(x, y) == pytest.approx(5 / math.sqrt(30))  # 5 concordant, 1 pair tied in x only
    assert kendall_tau(x, y) == pytest.approx(5 / math.sqrt(30))
    assert kendall_tau(x, [-v for v in x]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau([1.0], [2.0])) and math.isnan(kendall_tau([1.0, 1.0], [1.0, 2.0]))
    rows = ["a", "b", "c", "d"]
    z = [1.0, 4.0, 2.0, 3.0]
    paper = {**{(r, "x"): v for r, v in zip(rows, x)}, **{(r, "y"): v for r, v in zip(rows, x)}}
    ours = {**{(r, "x"): v for r, v in zip(rows, y)}, **{(r, "y"): v for r, v in zip(rows, z)}}
    s = summarize(compare(*_cells(paper, ours), spread=0.0))
    assert s["kendall_tau"] == {"x": pytest.approx(_brute_tau_b(x, y)), "y": pytest.approx(_brute_tau_b(x, z))}
    assert s["kendall_tau_median"] == pytest.approx((_brute_tau_b(x, y) + _brute_tau_b(x, z)) / 2)


# ------------------------------------------------------------------------------ stand-ins
def test_a_stand_in_cell_is_flagged_in_the_comparison_and_the_gain():
    paper = {("fedic", "x"): 60.0, ("fedavg", "x"): 50.0}
    c = compare(*_cells(paper, {("fedic", "x"): 90.0, ("fedavg", "x"): 46.15}, dataset="cifar10", used="fmnist"),
                spread=0.0)
    assert set(c.status) == {"stand_in"}
    g = gains(c, "fedic", "fedavg").iloc[0]
    assert g.stand_in and g.trained_on == "fmnist" and g.ours_gain == pytest.approx(43.85)


def test_captions_and_findings_beside_a_paper_value_name_the_stand_in():
    fedic, fedlc_paper = all_papers()["fedic"], all_papers()["fedlc"]
    meta = {"experiment": "table1", "datasets": ["fmnist"], "caption": "Ours: solid.",
            "findings": ["CIFAR-10-LT IF=100: FEDIC − FedAvg = +43.85 (paper +10.99)", "a curve without numbers",
                         "Table 1: 24 cells ran on a stand-in dataset (paper values)"]}
    out = mark_stand_in(meta, fedic.profile("quick"), fedic)
    assert out["stand_in"] == {"cifar10": "fmnist"}
    assert out["findings"][0] == ("CIFAR-10-LT IF=100: FEDIC − FedAvg = +43.85 (paper +10.99) "
                                  "[⇄ CIFAR-10-LT ran on FashionMNIST-LT (a stand-in)]")
    assert out["findings"][1:] == meta["findings"][1:]  # no paper value; already says so
    assert out["caption"].startswith("⇄ CIFAR-10-LT ran on FashionMNIST-LT (a stand-in): a paper value beside it is "
                                     "on CIFAR-10-LT") and out["caption"].endswith("Ours: solid.")
    assert mark_stand_in(out, fedic.profile("quick"), fedic) == out  # idempotent
    # FedLC Fig. 1's drops: the datasets field was empty
    fig1 = mark_stand_in({"experiment": "fig1", "datasets": [], "caption": "",
                          "findings": ["FedAvg loses 4.8 pp vs IID at Q(α=2) (paper: 26.07)"]},
                         fedlc_paper.profile("quick"), fedlc_paper)
    assert fig1["datasets"] == ["fmnist"] and fig1["findings"][0].endswith("[⇄ CIFAR-10 ran on FMNIST (a stand-in)]")
    # a finding about a dataset that ran as in the paper (CIFAR-100, not CIFAR-10) is not marked
    t1 = mark_stand_in({"experiment": "table1", "datasets": ["fmnist", "cifar100"], "caption": "",
                        "findings": ["CIFAR-100 β=0.1: FedLC − FedAvg = +1.0 (paper +15.95)"]},
                       fedlc_paper.profile("quick"), fedlc_paper)
    assert t1["findings"] == ["CIFAR-100 β=0.1: FedLC − FedAvg = +1.0 (paper +15.95)"]
    # an experiment run on the paper's own datasets: nothing to mark
    fc = all_papers()["fedconcat"]
    same = mark_stand_in({"experiment": "table1", "datasets": ["cifar10"], "caption": "c", "findings": ["x (paper)"]},
                         fc.profile("quick"), fc)
    assert same["stand_in"] == {} and same["caption"] == "c" and same["findings"] == ["x (paper)"]


# ------------------------------------------------------------------------------ recount of saved tables
def test_recount_a_saved_table_and_the_index_says_what_changed(tmp_path):
    from fedlib.repro.artefacts.index import build_index

    folder = tmp_path / "figures" / "fedlc" / "quick"
    folder.mkdir(parents=True)
    # FedLC Table 1, SVHN β=0.05: paper FedAvg 69.51, FedLC 82.36; ours (one seed) 70.0 and 80.0
    pd.DataFrame([{"table": "table1", "row_group": "", "row": r, "row_label": r, "column": "svhn_beta0.05",
                   "column_label": "SVHN β=0.05", "dataset": "svhn", "dataset_used": "svhn", "paper_mean": pm,
                   "paper_std": ps, "ours_mean": om, "ours_std": math.nan, "n_seeds": 1, "status": "outside",
                   "note": ""} for r, pm, ps, om in (("fedavg", 69.51, 1.45, 70.0), ("fedlc", 82.36, 0.67, 80.0))]
                 ).to_csv(folder / "table1.csv", index=False)
    old = {"counts": {"within": 1, "outside": 1}, "run": 2, "winner_agree": 1, "winner_total": 1,
           "gain_same_sign": 1, "gain_total": 1}
    (folder / "table1.json").write_text(json.dumps({
        "kind": "table", "name": "table1", "title": "Table 1: t", "profile": "quick", "paper_table": "table1",
        "notebook": "fedlc/06_real_world_datasets", "files": {"md": "table1.md", "csv": "table1.csv"},
        "parameters": {"value": "accuracy"}, "summary": old, "git_commit": "abc", "findings": []}))
    (folder / "table1.md").write_text("grid\n")
    fedlc_paper = all_papers()["fedlc"]
    s = recount(folder / "table1.csv", fedlc_paper.table("table1"), fedlc_paper)
    # 94 = 8 rows × 12 columns − the 2 run (Table 1's seven methods and the masked reading of FedLC)
    assert s["counts"]["no_spread"] == 2 and s["counts"]["not_run"] == 94 and s["run"] == 2
    assert (s["winner_agree"], s["winner_no_spread"], s["winner_agree_face_value"]) == (0, 1, 1)
    assert verdict_text(s, "gain") == "0/1 (1 spread not measured; 1/1 at face value)"
    build_index(tmp_path / "figures")
    text = (tmp_path / "figures" / "fedlc" / "README.md").read_text()  # the paper's page holds the per-table detail
    assert ("* Table 1: best method agrees 1/1 → 0/1 (1 spread not measured; 1/1 at face value); headline gain sign "
            "agrees 1/1 → 0/1 (1 spread not measured; 1/1 at face value); within std 1 → 0; outside std 1 → 0")in text
    assert "One seed, so no spread of the cell's own, in Table 1 (2 of 2 cells run)" in text
    # a measured cross-machine spread of this table does not decide a cell of one seed (another machine's rerun
    # of the same seed is no spread over seeds)
    (folder / "_spread.json").write_text(json.dumps({"tables": {"table1": {"max_abs_delta": 0.2}}}))
    s = recount(folder / "table1.csv", fedlc_paper.table("table1"), fedlc_paper)
    assert (s["counts"]["no_spread"], s["counts"]["within"], s["counts"]["outside"], s["winner_agree"]) == (2, 0, 0, 0)
    # two seeds each decide them, on the larger of each cell's std over seeds and the table's spread
    frame = pd.read_csv(folder / "table1.csv").assign(ours_std=0.1, n_seeds=2)
    frame.to_csv(folder / "table1.csv", index=False)
    s, c = recount(folder / "table1.csv", fedlc_paper.table("table1"), fedlc_paper, comparison=True)
    assert (s["counts"]["within"], s["counts"]["outside"], s["winner_agree"]) == (1, 1, 1)
    assert set(c.spread[c.ours_mean.notna()]) == {0.2}


# ------------------------------------------------------------------------------ the two copies of FedLC
# the papers' texts sit beside the data (../shared/papers next to ../shared/data) where present
PAPERS = next((p for p in (Path(__file__).resolve().parents[1].parent / "shared" / "papers",
                           Path(os.environ.get("FEDLIB_DATA", "data")).resolve().parent / "papers") if p.is_dir()),
              Path("absent"))
MD, HTML = PAPERS / "fedlc_icml2022.md", PAPERS / "fedlc_icml2022_html.txt"
_LABELS = {"FedAvg": "fedavg", "FedProx": "fedprox", "Scaffold": "scaffold", "FedNova": "fednova",
           "FedOpt": "fedopt", "FedOPT": "fedopt", "FedRS": "fedrs", "Ours": "fedlc", "Ours+Scaffold": "fedlc+scaffold",
           "Ours+FedProx": "fedlc+fedprox"}
_MD_CELL = re.compile(r"^(\d+\.\d+)\s*(?:_\{\\pm\s*(\d+\.\d+)\}|\\pm\s*(\d+\.\d+))?$")
_HTML_STD = re.compile(r"^(\d+\.\d+)±(\d+\.\d+)subscript")


def _printed_rows(t) -> list:
    """A table's rows the paper prints: not the readings fedlib adds beside them (FedLC's ``mask/fedlc``, the
    paper's FedLC values under the literal reading of absent classes, printed nowhere as a row of its own)."""
    return [r for r in t.rows if not r.key.startswith("mask/")]


def _printed(path: Path, heading: str, row_parser) -> dict[int, list]:
    """{table number: [(method, group label, [cell | None])]} from a copy of the paper; the first
    ``len(rows)`` rows after each table's heading."""
    lines, out = path.read_text().splitlines(), {}
    for i, line in enumerate(lines):
        m = re.match(heading, line)
        if m and int(m[1]) in {t.number for t in fedlc.TABLES.values()} and int(m[1]) not in out:
            rows = [r for r in map(row_parser, lines[i + 1:i + 40]) if r is not None]
            out[int(m[1])] = rows[:len(_printed_rows(fedlc.table(int(m[1]))))]
    return out


def _md_row(line: str):
    fields = line.split("\t")
    at = next((k for k, f in enumerate(fields[:2]) if f.strip() in _LABELS), None)
    if at is None:
        return None
    cells = []
    for f in fields[at + 1:]:
        f = f.replace("$", "").strip()
        m = _MD_CELL.match(f) if f else None
        assert m or not f, f
        cells.append(None if not f else (float(m[1]), float(m[2] or m[3]) if (m[2] or m[3]) else None))
    return _LABELS[fields[at].strip()], fields[0].strip() if at == 1 else "", cells


def _html_row(line: str):
    tokens = line.split()
    group = tokens.pop(0) if tokens and re.fullmatch(r"E=\d+", tokens[0]) else ""
    if not tokens or tokens[0] not in _LABELS:
        return None
    cells = []
    for t in tokens[1:]:
        m = _HTML_STD.match(t)
        if m:
            cells.append((float(m[1]), float(m[2])))
        elif re.fullmatch(r"\d+\.\d+", t):
            cells.append((float(t), None))
    return _LABELS[tokens[0]], group, cells


@pytest.mark.skipif(not (MD.exists() and HTML.exists()), reason="the two copies of the FedLC paper are absent")
def test_the_two_copies_of_fedlc_agree_but_for_three_cells_and_the_transcription_is_the_html_copy():
    md, html = _printed(MD, r"^Table (\d)\. ", _md_row), _printed(HTML, r"^Table (\d): ", _html_row)
    numbers = {name: sum(1 + (c[1] is not None) for rows in copy.values() for _, _, cells in rows
                         for c in cells if c is not None) for name, copy in (("md", md), ("html", html))}
    assert numbers == {"md": 466, "html": 472}
    differ = []
    for number, t in ((t.number, t) for t in fedlc.TABLES.values()):
        rows = _printed_rows(t)
        assert [r[0] for r in html[number]] == [r[0] for r in md[number]] == [r.params["method"] for r in rows]
        for row, (_, _, html_cells), (_, _, md_cells) in zip(rows, html[number], md[number]):
            assert len(html_cells) == len(md_cells) == len(t.columns)
            for col, h, m in zip(t.columns, html_cells, md_cells):
                cell = t.value(row.key, col.key)
                assert h == (cell.mean, cell.std), (t.id, row.key, col.key)  # every printed number, transcribed
                if h != m:
                    differ.append((t.id, row.key, col.key, m))
    assert differ == [("table1", "fedprox", "cifar10_beta0.3", None), ("table1", "fedprox", "cifar100_beta0.05", None),
                      ("table1", "scaffold", "svhn_beta0.3", None)]
    # Table 5's group labels: the Markdown copy labels the E=5 group's FedNova row "E=3"
    assert [g for _, g, _ in md[5]][4:8] == ["", "E=5", "E=3", ""]
    assert [g for _, g, _ in html[5]][::4] == ["E=1", "E=5", "E=10", "E=20"]
    # the percentages the text quotes are the same in both copies
    quoted = [sorted(re.findall(r"(\d+(?:\.\d+)?)\s*\\?%", p.read_text())) for p in (MD, HTML)]
    assert quoted[0] == quoted[1] and "7.2" in quoted[0] and "6.01" in quoted[0]


def test_fedlc_table3_notes_the_7_2_and_6_01_claim_against_the_table():
    t3 = fedlc.TABLE3
    gap = {c: t3.value("fedlc", c).mean - t3.value("fedrs", c).mean for c in ("imagenet_alpha2", "imagenet_beta0.1")}
    assert gap == {"imagenet_alpha2": pytest.approx(5.20), "imagenet_beta0.1": pytest.approx(6.01)}
    note = next(n for n in t3.notes if "7.2%" in n)
    assert "5.20 at α=2" in note and "6.01 at β=0.1" in note


def test_a_cell_whose_seeds_partly_diverged_keeps_the_mean_of_the_rest_and_the_table_says_so():
    from fedlib.repro.run.grid import aggregate

    runs = pd.DataFrame([
        {"row": "scaffold", "column": "x", "seed": 0, "status": "ok", "note": "", "value": 96.0},
        {"row": "scaffold", "column": "x", "seed": 1, "status": "diverged", "value": 10.0,
         "note": "diverged: the parameters were not finite after round 23"},
        {"row": "scaffold", "column": "x", "seed": 2, "status": "ok", "note": "", "value": 97.0},
        {"row": "fedavg", "column": "x", "seed": 0, "status": "ok", "note": "", "value": 98.0},
    ])
    ours = aggregate(runs, ["row", "column"], value="value").set_index("row")
    assert ours.loc["scaffold", "ours_mean"] == pytest.approx(96.5) and ours.loc["scaffold", "n_seeds"] == 2
    assert ours.loc["scaffold", "note"] == ("1 of 3 seeds diverged (seed 1: diverged: the parameters were not "
                                            "finite after round 23): left out of the mean")
    assert ours.loc["fedavg", "note"] == ""
    p, _ = _cells({("scaffold", "x"): 98.6, ("fedavg", "x"): 98.1}, {}, paper_std=math.nan)
    text = render_comparison(compare(p, ours.reset_index()))
    assert "98.60 → 96.50±0.71[^1] (-2.10) ~" in text and "98.10 → 98.00 (-0.10) ~" in text
    assert "[^1]: 1 of 3 seeds diverged (seed 1:" in text


def test_a_cell_that_did_not_run_has_no_spread_even_where_the_table_has_one():
    """A table's cross-machine spread belongs to the cells that ran; a not-run cell showed it (FedLC's FEMNIST
    column, 1.4e-14 "cross-machine (this table)")."""
    paper = {("fedavg", "x"): 60.0, ("fedavg", "femnist"): 84.0}
    p, o = _cells(paper, {("fedavg", "x"): 61.0})
    c = compare(p, o, spread=0.3).set_index("column")
    assert c.loc["x", "spread"] == 0.3 and c.loc["x", "spread_source"] == "cross-machine (this table)"
    assert math.isnan(c.loc["femnist", "spread"]) and c.loc["femnist", "spread_source"] == "not measured"
    assert c.loc["femnist", "status"] == "not_run"
