"""The FEDIC companion's experiments (fedlib.papers.fedic.experiments), the cells of its figure studies
(fedlib.papers.fedic.studies) and its profiles: what each table cell reads, the figure grids, the runs
tables and figures share, and the long-tailed data, checked against the paper's definitions and hand
computations.  The studies' options, summaries and findings: tests/test_fedic_studies.py."""

import math

import numpy as np
import pandas as pd
import pytest

from fedlib.repro.budget.gate import table_cells as gate_table_cells
from fedlib.repro.artefacts.tables import metric_of
from fedlib.config import Config
from fedlib.data import DatasetNotFoundError
from fedlib.repro.run.grid import GridResult
from fedlib.papers import get_paper
from fedlib.papers.fedic import experiments as E
from fedlib.papers.fedic import reported as R
from fedlib.repro.budget.costs import ungated

PAPER = get_paper("fedic")


def test_table3_cells_read_the_teacher_in_rows_a_to_d_and_the_global_model_in_e_to_h():
    m = metric_of(E.table_value("table3"), R.TABLE3)
    for row, (_, _, kd) in R.TABLE3_INFERRED.items():
        prefix = "" if kd else "teacher_"
        assert m(row, "all") == f"{prefix}accuracy"
        assert [m(row, g) for g in ("many", "medium", "few")] == [f"{prefix}group_accuracy_{g}"
                                                                  for g in ("many", "medium", "few")]


def test_table2_columns_read_the_groups_and_table1_the_accuracy():
    m = metric_of(E.table_value("table2"), R.TABLE2)
    assert [m("fedic", c) for c in ("all", "many", "medium", "few")] == [
        "accuracy", "group_accuracy_many", "group_accuracy_medium", "group_accuracy_few"]
    assert metric_of(E.table_value("table1"), R.TABLE1)("fedavg", "cifar10_if100") == "accuracy"


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_the_teacher_rows_are_runs_of_the_student_rows_and_h_is_table1s_fedic(profile):
    """A teacher row (a-d) runs the KD run of the same teacher; (h) is Table 1's FEDIC at IF = 100, so
    Table 3 costs four runs and shares one with Table 1."""
    prof = ungated(PAPER.profile(profile))  # the cells as the profile sets them, whatever this CPU affords
    cells = {(c["row"], c["column"]): c["config"] for c in gate_table_cells(prof, "table3")}
    key = lambda cfg: Config.from_dict({**cfg, "seed": 0}).key_dict()  # noqa: E731
    for teacher, student in zip("abcd", "efgh"):
        assert key(cells[(teacher, "all")]) == key(cells[(student, "all")])
    t1 = {(c["row"], c["column"]): c["config"] for c in gate_table_cells(prof, "table1")}
    assert key(cells[("h", "few")]) == key(t1[("fedic", "cifar10_if100")])
    assert len({str(sorted(key(c).items())) for c in cells.values()}) == 4


def test_fig3_runs_fedavg_once_per_aux_size_and_ft_is_fedics_teacher_without_la():
    prof = ungated(PAPER.profile("paper"))  # the cells as the paper sets them, whatever this CPU affords
    study = PAPER.study("fig3")
    cells = study.cells(prof)
    opts = study.options_for(prof)
    sizes, ulbs = opts.aux_per_class, opts.ulb_sizes
    assert len(sizes) == 5 and len(ulbs) == 3
    assert len(cells) == len(sizes) * (1 + 2 * len(ulbs))
    for c in cells:
        cfg = c["config"]
        assert cfg["server_aux_per_class"] == c["aux_per_class"] and cfg["long_tail_if"] == 100
        if c["curve"] == "FT":
            assert (cfg["method"], cfg["fedic_la"], c["metric"]) == ("fedic", False, "teacher_accuracy")
        elif c["curve"] == "FEDIC":
            assert cfg["method"] == "fedic" and "fedic_la" not in cfg and c["metric"] == "accuracy"
        else:
            assert cfg["method"] == "fedavg" and "server_unlabeled_size" not in cfg
        if c["curve"] != "FedAvg":
            assert cfg["server_unlabeled_size"] == (0 if c["ulb"] == "all" else c["ulb"])


def test_fig4_and_fig5_sweep_their_parameter_in_the_papers_setting():
    prof = ungated(PAPER.profile("paper"))
    lams = [c["config"]["fedic_lambda"] for c in PAPER.study("fig4").cells(prof)]
    assert lams == [0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]
    cells = PAPER.study("fig5").cells(prof)
    assert {(c["method"], c["config"]["partition_beta"]) for c in cells} == {
        (m, a) for m in ("fedavg", "fedprox", "feddf", "fedic") for a in (1.0, 0.5, 0.1, 0.05, 0.01)}
    assert all(c["config"]["model"] == "resnet8" and c["config"]["rounds"] == 200 for c in cells)


def test_quick_runs_the_stand_in_with_its_unlabelled_set_and_the_papers_server_settings():
    cfg = {(c["row"], c["column"]): c["config"] for c in gate_table_cells(PAPER.profile("quick"), "table1")}
    c = cfg[("fedic", "cifar10_if100")]
    assert (c["dataset"], c["model"], c["server_unlabeled"]) == ("fmnist", "cnn_mnist", "mnist")
    for key in ("num_clients", "participation", "batch_size", "lr", "partition_beta", "server_aux_per_class"):
        assert c[key] == R.SETUP[key]
    assert cfg[("fedic", "cifar100_if100")] is None


def _grid(rows: list[dict]) -> GridResult:
    runs = pd.DataFrame(rows)
    runs["status"] = "ok"
    runs["note"] = ""
    return GridResult(runs, pd.DataFrame(), ["curve", "x"], 0.0)


def test_curve_reads_each_cells_metric_and_averages_over_seeds():
    g = _grid([{"curve": "FT", "x": 1, "seed": 0, "metric": "teacher_accuracy", "accuracy": 50.0,
                "teacher_accuracy": 60.0},
               {"curve": "FT", "x": 1, "seed": 1, "metric": "teacher_accuracy", "accuracy": 52.0,
                "teacher_accuracy": 64.0},
               {"curve": "FedAvg", "x": 1, "seed": 0, "metric": "accuracy", "accuracy": 40.0,
                "teacher_accuracy": math.nan}])
    out = E.curve(g, ["curve", "x"]).set_index("curve")
    assert out.loc["FT", "ours_mean"] == 62.0 and out.loc["FT", "ours_std"] == pytest.approx(np.std([60, 64], ddof=1))
    assert out.loc["FedAvg", "ours_mean"] == 40.0 and out.loc["FedAvg", "n_seeds"] == 1


def test_gain_lines_subtract_the_baseline_per_column_ours_and_the_papers():
    comp = pd.DataFrame([
        {"row": "fedic", "column": "c1", "column_label": "IF=100", "ours_mean": 70.0, "paper_mean": 63.11},
        {"row": "fedavg", "column": "c1", "column_label": "IF=100", "ours_mean": 50.0, "paper_mean": 52.12},
        {"row": "fedic", "column": "c2", "column_label": "IF=10", "ours_mean": math.nan, "paper_mean": 65.5},
        {"row": "fedavg", "column": "c2", "column_label": "IF=10", "ours_mean": math.nan, "paper_mean": 59.97}])
    assert E.gain_lines(comp, "fedic", ("fedavg", "feddf")) == ["IF=100: fedic − fedavg = +20.00 (paper +10.99)"]
    # a baseline less than the margin above the head classes' share is said to have learned little beyond them
    [near] = E.gain_lines(comp, "fedic", ("fedavg",), head={"share": 40.0, "classes": "0, 1", "margin_pp": 15.0})
    assert near.startswith("IF=100: fedic − fedavg = +20.00 (paper +10.99); our fedavg is at 50.0 %, not 15 pp above")
    assert "40.0 % that the head classes 0, 1 alone give" in near
    far = E.gain_lines(comp, "fedic", ("fedavg",), head={"share": 40.0, "classes": "0, 1", "margin_pp": 5.0})
    assert far == ["IF=100: fedic − fedavg = +20.00 (paper +10.99)"]  # 50 % is more than 5 pp above 40 %


def test_the_long_tailed_data_follow_the_papers_recipe():
    """D_aux (100 per class) first, then the long tail IF = 100 on the rest; groups 3/4/3 by count."""
    study = PAPER.study("long_tail")
    summary = study.summarize(None, study.options_for(PAPER.profile("quick")))  # the full FashionMNIST
    counts, info = summary["counts"], summary["setting"]
    if counts is None:
        pytest.skip("FashionMNIST absent")
    assert (counts.aux_count == 100).all() and info["aux"] == 1000
    # 6,000 − 100 per class remain after D_aux; class k keeps int(5,900 · IF^(−k/9))
    assert counts.train_count.tolist() == [int(5900 * 100 ** (-k / 9)) for k in range(10)]
    ranks = np.argsort(-counts.train_count.to_numpy(), kind="stable")
    assert counts.group.to_numpy()[ranks].tolist() == ["many"] * 3 + ["medium"] * 4 + ["few"] * 3
    assert info["unlabeled"] == "mnist" and info["unlabeled_size"] > 0
    assert info["client_size_max"] - info["client_size_min"] <= 1  # equal-sized clients


@pytest.mark.parametrize("profile", ["smoke", "quick", "paper"])
def test_every_figure_cell_is_a_valid_configuration(profile):
    profile = ungated(PAPER.profile(profile))  # every cell configured, whatever this CPU affords
    for cells in (PAPER.study(name).cells(profile) for name in ("fig3", "fig4", "fig5")):
        assert cells
        for c in cells:
            Config.from_dict({**c["config"], "seed": 0})


def test_the_most_skewed_partition_of_fig5_can_be_drawn():
    """D(α = 0.01) over 20 workers, then the equal-size re-cut (the quick profile's Fig. 5 end point)."""
    from fedlib.simulation import prepare

    quick = PAPER.profile("quick")
    cell = next(c for c in PAPER.study("fig5").cells(quick) if c["alpha"] == min(quick.setting("fig5", "alphas")))
    try:
        exp = prepare(Config.from_dict({**cell["config"], "seed": 0, "rounds": 1}))
    except DatasetNotFoundError:
        pytest.skip("FashionMNIST absent")
    sizes = exp.class_counts.sum(axis=1)
    assert sizes.max() - sizes.min() <= 1 and np.median((exp.class_counts > 0).sum(axis=1)) <= 2
