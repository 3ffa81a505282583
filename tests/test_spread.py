"""The cross-machine spread: measured per table, recorded with the largest spread winning,
read back by the comparisons."""

import json
import math

import pandas as pd
import pytest

from fedlib.repro.verdict.spread import load_spread
from fedlib.repro.verdict.spread import folder_spread, main, record, table_spread


def _table(values):
    return pd.DataFrame({"row": list("abcd"), "column": "x", "paper_mean": [50.0] * 4, "ours_mean": values})


def test_table_spread_of_a_paper_table_compares_our_values_only():
    s = table_spread(_table([60.0, 61.0, math.nan, 63.0]), _table([60.0, 61.5, 70.0, 60.9]))
    assert s == {"cells": 3, "identical": 1, "median_abs_delta": pytest.approx(0.5),
                 "max_abs_delta": pytest.approx(2.1)}
    assert table_spread(_table([1.0] * 4), _table([1.0] * 3 + [2.0]).iloc[:3]) is None  # shapes differ


def test_other_tables_compare_every_numeric_column_but_the_papers():
    a = pd.DataFrame({"setting": ["s", "t"], "seed": [0, 1], "share_deviated": [0.85, 0.44], "paper_value": [1.0, 2.0]})
    b = a.assign(share_deviated=[0.80, 0.44], paper_value=[9.0, 9.0])
    s = table_spread(a, b)
    assert s["cells"] == 2 and s["identical"] == 1 and s["max_abs_delta"] == pytest.approx(0.05)


def test_measurements_are_recorded_and_the_largest_wins(tmp_path):
    ours, other = tmp_path / "ours", tmp_path / "other"
    ours.mkdir(), other.mkdir()
    _table([60.0, 61.0, 62.0, 63.0]).to_csv(ours / "table1.csv", index=False)
    _table([60.0, 61.2, 62.0, 63.0]).to_csv(other / "table1.csv", index=False)
    assert folder_spread(ours, other)["table1"]["max_abs_delta"] == pytest.approx(0.2)
    assert main([str(ours), str(other), "--machines", "A vs B", "--write"]) == 0
    assert main([str(ours), "--machines", "reported: A vs C", "--reported", "table1=0.1,1.8",
                 "--reported", "table6=0.1,2.1", "--cpus", "AMD EPYC vs Intel Xeon", "--write"]) == 0
    body = json.loads((ours / "_spread.json").read_text())
    assert len(body["measurements"]) == 2
    assert body["tables"]["table1"]["max_abs_delta"] == pytest.approx(1.8)
    assert body["tables"]["table1"]["from"] == "reported: A vs C"
    assert body["tables"]["table1"]["cpus"] == "AMD EPYC vs Intel Xeon"  # the CPUs of the measurement it came from
    assert body["measurements"][0].get("cpus") is None  # a measurement that named none
    # each table's own measurement only (a table without one borrows by metric: tests/test_verdicts.py)
    assert load_spread(ours) == {"table1": pytest.approx(1.8), "table6": pytest.approx(2.1)}
    record(ours, {"table1": {"cells": 4, "identical": 4, "median_abs_delta": 0.0, "max_abs_delta": 0.0}}, "A vs B")
    assert len(json.loads((ours / "_spread.json").read_text())["measurements"]) == 2  # replaced, not added
