"""A reproduced table as notebooks show it (fedlib.repro.artefacts.views.comparison_view), on comparisons made by hand."""

from __future__ import annotations

import math

import pandas as pd

from fedlib.repro.artefacts.views import comparison_view


def _cell(row, column, dataset, used, paper, ours, note=""):
    return dict(row=row, row_label=row.title(), column=column, column_label=column.upper(), dataset=dataset,
                dataset_used=used, paper_mean=paper, ours_mean=ours,
                delta=ours - paper if not (math.isnan(ours) or math.isnan(paper)) else math.nan, note=note)


def test_one_row_per_method_paper_ours_delta_per_column_run_and_stand_ins_named():
    comp = pd.DataFrame([_cell("fedavg", "a", "mnist", "mnist", 60.0, 58.0), _cell("fedlc", "a", "mnist", "mnist", 70.0, 71.0),
                         _cell("fedavg", "b", "cifar10", "fmnist", 50.0, 55.5), _cell("fedlc", "b", "cifar10", "fmnist", 65.0, math.nan),
                         _cell("fedavg", "c", "svhn", None, 40.0, math.nan, "not run: absent"),
                         _cell("fedlc", "c", "svhn", None, 45.0, math.nan, "not run: absent")])
    styled = comparison_view(comp, {"fmnist": "FMNIST"}.get)
    frame = styled.data
    assert list(frame.index) == ["Fedavg", "Fedlc"]
    assert list(frame.columns) == [("A", "paper"), ("A", "ours"), ("A", "Δ"), ("B (run on FMNIST)", "paper"),
                                   ("B (run on FMNIST)", "ours"), ("B (run on FMNIST)", "Δ")]
    assert frame.loc["Fedlc", ("A", "Δ")] == 1.0 and frame.loc["Fedavg", ("B (run on FMNIST)", "Δ")] == 5.5
    assert math.isnan(frame.loc["Fedlc", ("B (run on FMNIST)", "ours")])
    assert "not run here: C" in styled.caption  # a column with nothing of ours is named, never dropped
    assert "58.00" in styled.to_html()  # one format: two decimals


def test_where_nothing_ran_the_cells_and_their_reasons_are_shown():
    comp = pd.DataFrame([_cell("fedavg", "c", "svhn", None, 40.0, math.nan, "not run: SVHN is absent here")])
    styled = comparison_view(comp)
    assert styled.caption == "Not run here"
    assert list(styled.data.columns) == ["method", "column", "paper", "note"]
    assert styled.data.note.iloc[0] == "not run: SVHN is absent here"


def test_a_table_with_row_groups_keeps_one_row_per_group_and_method():
    """FedLC's Table 5 lists FedAvg once per E: the rows are told apart by their group, never merged."""
    comp = pd.DataFrame([{**_cell("fedavg", "a", "mnist", "mnist", 60.0, 58.0), "row_group": "E=1"},
                         {**_cell("fedavg", "a", "mnist", "mnist", 62.0, 61.0), "row_group": "E=5"}])
    frame = comparison_view(comp).data
    assert list(frame.index) == ["E=1 · Fedavg", "E=5 · Fedavg"]
    assert list(frame[("A", "ours")]) == [58.0, 61.0]


def test_reader_view_names_columns_in_words_and_leaves_out_rows_not_run():
    """A frame of the machinery as a reader reads it: ids dropped beside their labels, codes as words (a verdict's
    own words, a cell status's own), rows where nothing of ours ran left out and counted in the caption."""
    import pandas as pd

    from fedlib.repro.artefacts.views import reader_view
    from fedlib.repro.verdict.compare import STATUS, VERDICT

    frame = pd.DataFrame({"column": ["a_dir0.1", "a_dir0.5"], "column_label": ["A Dir(0.1)", "A Dir(0.5)"],
                          "paper_gain": [3.0, 4.0], "ours_gain": [2.5, float("nan")], "verdict": ["no_spread", None],
                          "status": ["no_spread", "not_run"], "trained_on": ["a", "a"]})
    styled = reader_view(frame, dataset_label=lambda d: d.upper())
    shown = styled.data
    assert list(shown.columns) == ["column", "paper's gain (pp)", "our gain (pp)", "verdict", "cell", "trained on"]
    assert shown.iloc[0].tolist() == ["A Dir(0.1)", 3.0, 2.5, VERDICT["no_spread"], STATUS["no_spread"], "A"]
    assert len(shown) == 1 and styled.caption == "1 row not run here left out"
    assert reader_view(frame.iloc[1:]).data.iloc[0, 0].startswith("nothing of ours ran here")
