"""FedABC's transcribed Tables 1–2: shape, the paper's text cell by cell (where the paper's text is
available next to the repository), the suspect cells and a cell's configuration."""

from __future__ import annotations

import re

import pytest

from fedlib.config import Config
from fedlib.papers.fedabc import reported as paper

from conftest import REPO

TEXT = REPO.parent / "shared" / "papers" / "fedabc_aaai2023.txt"


def _printed_tables() -> list[list[list[float]]]:
    """The two tables of the paper's text: 8 lines of 9 numbers each, in print order."""
    lines = [ln for ln in TEXT.read_text().splitlines() if re.match(r"^\| (MNIST \| |CIFAR-10 \| )?Dir\(", ln)]
    rows = [[float(v) for v in re.findall(r"\| (\d+\.\d)", ln)] for ln in lines]
    return [rows[:8], rows[8:]]


def test_shape_and_suspect_cells():
    for t in paper.TABLES.values():
        readings = ["effective/scaffold"] + (["held/fedavg", "held/fedprox", "held/scaffold"] if t.id == "table2" else [])
        assert [r.key for r in t.rows] == list(paper.METHODS) + readings
        for r in t.rows[len(paper.METHODS):]:  # a reading that faces the paper carries its method's printed values
            assert all(t.value(r.key, c.key) == t.value(r.key.split("/")[1], c.key) for c in t.columns)
            assert r.group and r.params["method"] == r.key.split("/")[1]
        assert len(t.columns) == 8 and all(t.value(r.key, c.key) is not None for r in t.rows for c in t.columns)
        assert set(t.suspect) == {("local", "cifar10_dir1.0")}
        assert not t.has_std
    assert paper.TABLE1.value("local", "cifar10_dir1.0").mean == 83.7
    assert paper.TABLE2.value("local", "cifar10_dir1.0").mean == 14.4
    assert paper.TABLE1.value("fedabc", "cifar10_dir0.3").mean == 83.3
    assert paper.TABLE2.value("scaffold", "mnist_dir0.1").mean == 76.8
    assert paper.METRICS == {"table1": "personalized_accuracy", "table2": "drift_accuracy"}


@pytest.mark.skipif(not TEXT.exists(), reason="the paper's text is not next to the repository")
def test_transcription_equals_the_papers_text():
    for t, printed in zip((paper.TABLE1, paper.TABLE2), _printed_tables()):
        for column, numbers in zip(t.columns, printed):
            assert [t.value(m, column.key).mean for m in paper.METHODS] == numbers, column.label


def test_a_cells_configuration_is_a_valid_run():
    cell = paper.TABLE1.config("fedavg", "mnist_dir0.3")
    assert cell["model"] == "mlp" and cell["batch_size"] == 64 and cell["partition_beta"] == 0.3
    config = Config(**cell)
    assert config.personal_eval_every == config.rounds == 100  # FedAvg evaluated through personalized models
    assert Config(**paper.TABLE2.config("fedabc", "cifar10_dir1.0")).model == "convnet"
    fig5 = paper.FIGURE_CLAIMS["fig5"]["variants"]["fedabc_wi"]
    assert Config(**{**paper.TABLE1.config("fedabc", "cifar10_dir0.1"), **fig5}).fedabc_gamma == 0.0


def test_parse_columns_refuses_a_mismatched_block():
    from fedlib.repro.spec.reported import parse_columns

    rows, cols = list(paper.ROWS), list(paper.COLUMNS)
    with pytest.raises(ValueError, match="do not match columns"):
        parse_columns("mnist_dir0.3 | " + " | ".join(["1.0"] * 9), rows, cols[:1])
    with pytest.raises(ValueError, match="expected 9 cells"):
        parse_columns("mnist_dir0.1 | 1.0 | 2.0", rows, cols[:1])
