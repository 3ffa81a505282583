"""A table that reports a different metric per column, row or cell (fedlib.repro.artefacts.tables.metric_of),
and the metrics a grid run carries: group accuracies and what a part reported (Result.reported,
fedlib.repro.run.grid.run_metrics), checked against hand computations."""

import math

import numpy as np
import pandas as pd
import pytest

import fedlib.repro.spec.paper
from fedlib import run
from fedlib.api import Result
from fedlib.repro.artefacts.tables import cell_values, metric_of, reproduce_table
from fedlib.config import Config
from fedlib.repro.run.grid import run_metrics
from fedlib.papers import Paper
from fedlib.repro.spec.profiles import Profile
from fedlib.repro.spec.reported import Cell, Column, PaperTable, Row

COLS = (Column("all", "All", "synthetic"), Column("many", "Many", "synthetic"), Column("few", "Few", "synthetic"))
ROWS = (Row("fedavg", "FedAvg", {"method": "fedavg"}), Row("fedprox", "FedProx", {"method": "fedprox"}))


def _table(values=None) -> PaperTable:
    values = values or {(r.key, c.key): Cell(50.0) for r in ROWS for c in COLS}
    return PaperTable("table1", 1, "toy", "§0", COLS, ROWS, values)


# ------------------------------------------------------------------------------ metric_of
def test_one_metric_for_every_cell():
    m = metric_of("personalized_accuracy", _table())
    assert {m(r.key, c.key) for r in ROWS for c in COLS} == {"personalized_accuracy"}


def test_a_mapping_by_column_by_row_by_cell_and_a_default():
    t = _table()
    m = metric_of({"many": "group_accuracy_many", "few": "group_accuracy_few"}, t)
    assert [m("fedavg", c.key) for c in COLS] == ["accuracy", "group_accuracy_many", "group_accuracy_few"]
    m = metric_of({"fedprox": "teacher_accuracy", "*": "x"}, t)
    assert (m("fedprox", "all"), m("fedavg", "all")) == ("teacher_accuracy", "x")
    m = metric_of({("fedprox", "few"): "a", "few": "b", "fedprox": "c"}, t)
    assert (m("fedprox", "few"), m("fedavg", "few"), m("fedprox", "all")) == ("a", "b", "c")


def test_a_cell_named_by_both_its_row_and_its_column_is_ambiguous():
    m = metric_of({"few": "group_accuracy_few", "fedprox": "teacher_accuracy"}, _table())
    assert m("fedavg", "few") == "group_accuracy_few" and m("fedprox", "all") == "teacher_accuracy"
    with pytest.raises(ValueError, match="ambiguous"):
        m("fedprox", "few")


def test_keys_that_name_nothing_in_the_table_are_refused():
    with pytest.raises(ValueError, match="'medium'"):
        metric_of({"medium": "group_accuracy_medium"}, _table())
    with pytest.raises(ValueError, match="pair"):
        metric_of({("fedavg", "medium"): "x"}, _table())
    with pytest.raises(TypeError):
        metric_of(3, _table())


def test_a_function_of_row_and_column():
    m = metric_of(lambda r, c: f"{r}:{c}", _table())
    assert m("fedavg", "few") == "fedavg:few"


def test_cell_values_pick_each_runs_metric_and_nan_where_it_is_missing():
    runs = pd.DataFrame([
        {"row": "fedavg", "column": "all", "seed": 0, "accuracy": 60.0, "group_accuracy_few": 10.0},
        {"row": "fedavg", "column": "few", "seed": 0, "accuracy": 60.0, "group_accuracy_few": 10.0},
        {"row": "fedprox", "column": "few", "seed": 0, "accuracy": 61.0, "group_accuracy_few": math.nan},
    ])
    out = cell_values(runs, metric_of({"few": "group_accuracy_few"}))
    assert out.metric.tolist() == ["accuracy", "group_accuracy_few", "group_accuracy_few"]
    assert out.value.tolist()[:2] == [60.0, 10.0] and math.isnan(out.value.iloc[2])
    assert cell_values(runs, metric_of("teacher_accuracy")).value.isna().all()


# ------------------------------------------------------------------------------ what a run carries
def _result(history: list[dict], counts, **config) -> Result:
    return Result(Config(**config), pd.DataFrame(history), {"final_accuracy": history[-1]["test_accuracy"],
                                                            "train_class_counts": list(counts)}, {})


def test_reported_values_are_the_last_reported_and_grouped_like_the_global_models():
    counts = [500, 400, 300, 200, 100, 90, 80, 70, 60, 50]  # ranks: many 0-2, medium 3-6, few 7-9
    acc = np.linspace(0.9, 0.0, 10)
    teacher = np.linspace(0.5, 0.95, 10)
    hist = [{"round": 1, "test_accuracy": 0.3, **{f"acc_class_{k}": 0.3 for k in range(10)},
             "teacher_accuracy": 0.2, **{f"teacher_acc_class_{k}": 0.2 for k in range(10)}},
            {"round": 2, "test_accuracy": 0.5, **{f"acc_class_{k}": a for k, a in enumerate(acc)},
             "teacher_accuracy": 0.7, **{f"teacher_acc_class_{k}": t for k, t in enumerate(teacher)}},
            {"round": 3, "test_accuracy": 0.45, **{f"acc_class_{k}": a for k, a in enumerate(acc)}}]
    r = _result(hist, counts, group_rule="ranks", group_rank_fraction=0.3)
    assert r.group_accuracy == pytest.approx({"many": acc[:3].mean(), "medium": acc[3:7].mean(),
                                              "few": acc[7:].mean()})
    rep = r.reported
    assert rep["teacher_accuracy"] == 0.7  # the last round that reported it, not the last round
    assert rep["teacher_group_accuracy"] == pytest.approx({"many": teacher[:3].mean(), "medium": teacher[3:7].mean(),
                                                           "few": teacher[7:].mean()})
    assert set(rep) == {"teacher_accuracy", "teacher_group_accuracy"}  # not the model's own test accuracy
    m = run_metrics(r)
    assert m["final_accuracy"] == 0.45 and m["group_accuracy"] == r.group_accuracy and m["teacher_accuracy"] == 0.7


def test_a_run_that_reports_nothing_has_nothing_reported():
    r = _result([{"round": 1, "test_accuracy": 0.5, **{f"acc_class_{k}": 0.5 for k in range(3)}}], [3, 2, 1])
    assert r.reported == {}


# ------------------------------------------------------------------------------ a whole table
def test_reproduce_table_reads_each_columns_metric_from_the_same_runs(tmp_path, monkeypatch):
    table = _table()
    paper = Paper("toy", "Toy", "", "", {"table1": table}, {}, {"table1": "toy"}, {"fedavg": "FedAvg",
                                                                                  "fedprox": "FedProx"})
    prof = Profile("smoke", "toy", (0,), paper="toy",
                   synthetic={"rounds": 2, "num_clients": 10, "batch_size": 32, "group_rule": "ranks",
                              "synthetic_alpha": 0.0, "synthetic_beta": 0.0})  # every class in train and test
    monkeypatch.setattr(fedlib.repro.spec.paper, "all_papers", lambda: {"toy": paper})
    value = {"many": "group_accuracy_many", "few": "group_accuracy_few", "fedprox": "teacher_accuracy"}
    with pytest.raises(ValueError, match="ambiguous"):
        reproduce_table("table1", prof, store=tmp_path / "s", save=False, progress=False, value=value)
    value = {"many": "group_accuracy_many", "few": "group_accuracy_few", ("fedprox", "all"): "teacher_accuracy"}
    comp, grid = reproduce_table("table1", prof, store=tmp_path / "s", out_dir=tmp_path / "out", progress=False,
                                 value=value)
    assert grid.runs.key.nunique() == 2  # one run per method, read three ways
    ours = comp.set_index(["row", "column"])
    ref = run(dataset="synthetic", method="fedavg", rounds=2, num_clients=10, batch_size=32, seed=0, group_rule="ranks",
              synthetic_alpha=0.0, synthetic_beta=0.0, store=False, progress=False)
    per_class, counts = ref.per_class_accuracy.to_numpy(), np.asarray(ref.summary["train_class_counts"])
    assert not np.isnan(per_class).any()
    order = np.argsort(-counts, kind="stable")
    assert ours.loc[("fedavg", "all"), "ours_mean"] == pytest.approx(100 * ref.final_accuracy)
    assert ours.loc[("fedavg", "many"), "ours_mean"] == pytest.approx(100 * per_class[order[:3]].mean())
    assert ours.loc[("fedavg", "few"), "ours_mean"] == pytest.approx(100 * per_class[order[7:]].mean())
    # FedProx reports no teacher: that cell says so instead of showing a number
    assert ours.loc[("fedprox", "all"), "status"] == "not_run"
    assert "do not report teacher_accuracy" in ours.loc[("fedprox", "all"), "note"]
    import json

    sidecar = json.loads((tmp_path / "out" / "table1.json").read_text())
    assert sidecar["parameters"]["value"]["fedavg/many"] == "group_accuracy_many"
