"""What a table's CSV says of a cell beyond its mean: why it has fewer seeds than asked, and that its runs repeat
another row's run for run (FedNova with equal local steps is FedAvg)."""

import math

import pandas as pd

from fedlib.repro.artefacts.tables import repeated_rows
from fedlib.repro.run.grid import aggregate


def _runs(rows):
    return pd.DataFrame(rows, columns=["row", "column", "seed", "status", "note", "value"])


def test_a_cell_with_fewer_seeds_than_asked_says_why():
    runs = _runs([("a", "c", 0, "ok", "", 50.0), ("a", "c", 1, "not run", "not run: needs a GPU (est. 3 GPU-min)", math.nan),
                  ("a", "c", 2, "diverged", "diverged: the parameters were not finite after round 4", 10.0)])
    cell = aggregate(runs, ["row", "column"], value="value").iloc[0]
    assert cell.n_seeds == 1 and cell.ours_mean == 50.0
    assert cell.note == ("1 of 3 seeds diverged (seed 2: diverged: the parameters were not finite after round 4): "
                         "left out of the mean; 1 of 3 seeds without a result (seed 1: not run: needs a GPU (est. "
                         "3 GPU-min)): the mean is over the others")
    full = aggregate(runs[runs.seed == 0], ["row", "column"], value="value").iloc[0]
    assert full.note == ""


def _hist(row, accs):
    return [{"row": row, "column": "c", "seed": s, "round": r, "test_accuracy": a}
            for s, curve in enumerate(accs) for r, a in enumerate(curve)]


def test_a_row_that_repeats_another_run_for_run_is_named():
    curves = [[10.0, 20.0], [11.0, 21.0]]
    values = _runs([(r, "c", s, "ok", "", curves[s][-1]) for r in ("fedavg", "fednova", "fedprox") for s in (0, 1)])
    values.loc[values.row == "fedprox", "value"] = [20.0, 21.5]  # differs at seed 1
    hist = pd.DataFrame(_hist("fedavg", curves) + _hist("fednova", curves)
                        + _hist("fedprox", [[10.0, 20.0], [11.0, 21.5]]))
    assert repeated_rows(values, hist, ["fedavg", "fednova", "fedprox"]) == {("fednova", "c"): "fedavg"}
    # the same final values with another curve are not the same runs
    other = hist.copy()
    other.loc[(other.row == "fednova") & (other["round"] == 0), "test_accuracy"] = 9.0
    assert repeated_rows(values, other, ["fedavg", "fednova", "fedprox"]) == {}
    # a cell with a seed that did not finish is never declared a repeat
    values.loc[(values.row == "fednova") & (values.seed == 1), "status"] = "diverged"
    assert repeated_rows(values, hist, ["fedavg", "fednova", "fedprox"]) == {}
