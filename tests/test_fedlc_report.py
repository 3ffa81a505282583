"""FedLC's reported values: shapes, missing cells, spot checks, cell configurations.
(The comparison machinery is tested generically in tests/test_reporting.py.)"""


import pytest

from fedlib.papers.fedlc import reported as paper

# ------------------------------------------------------------------------------ paper values
SHAPES = {"table1": (8, 12), "table2": (7, 8), "table3": (7, 4), "table4": (7, 4), "table5": (16, 4),
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
        assert [r.params["method"] for r in paper.TABLES[tid].rows if not r.group] == list(paper.METHODS)
    assert [r.key for r in paper.TABLE1.rows if r.group] == ["mask/fedlc"]  # the reading that faces the paper
    assert [r.key for r in paper.TABLE7.rows] == ["fedavg", "fedlc", "fedlc+scaffold", "fedlc+fedprox"]
    assert {r.params["method"] for r in paper.TABLE5.rows} == {"fedavg", "fedprox", "fednova", "fedlc"}


def test_no_cell_is_missing_the_html_copy_prints_the_three_the_markdown_copy_lacks():
    for t in paper.TABLES.values():
        assert all(v is not None for v in t.values.values()), t.id
    assert paper.TABLE1.value("fedprox", "cifar10_beta0.3") == paper.Cell(57.88, 0.93)
    assert paper.TABLE1.value("fedprox", "cifar100_beta0.05") == paper.Cell(22.92, 1.71)
    assert paper.TABLE1.value("scaffold", "svhn_beta0.3") == paper.Cell(86.32, 1.19)


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
