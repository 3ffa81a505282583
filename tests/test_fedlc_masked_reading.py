"""FedLC's Table 1 under the masked reading of absent classes (row ``mask/fedlc``, issue 49): the row, where each
profile runs it, and the committed quick records that let Table 1 render without training."""

import dataclasses
import math
from pathlib import Path

import pytest

from fedlib.papers.fedlc import PAPER
from fedlib.papers.fedlc import reported as paper
from fedlib.repro.run import records
from fedlib.repro.budget.gate import table_cells
from fedlib.repro.run.grid import identity as _identity
from fedlib.repro.verdict.compare import gains

ROW = "mask/fedlc"
RECORDS = Path(__file__).resolve().parents[1] / "figures" / "fedlc" / "quick" / records.RECORDS_FILE
#: Where the quick profile trains the row: Table 1's CIFAR-10 columns (on its FMNIST stand-in).
QUICK_COLUMNS = {"cifar10_beta0.05", "cifar10_beta0.1", "cifar10_beta0.3", "cifar10_beta0.5"}


def _cells(profile, row=ROW):
    return {c["column"]: c for c in table_cells(profile, "table1") if c["row"] == row}


def test_the_row_is_fedlc_masked_in_its_own_group_with_the_papers_fedlc_values():
    t = paper.TABLE1
    row = t.row(ROW)
    assert row.params == {"method": "fedlc", "fedlc_missing": "mask"}
    assert row.group and "Eq. 7" in row.group and "Flower" in row.group and "fluke" in row.group
    assert [r.key for r in t.rows if r.group == row.group] == [ROW]
    assert not t.row("fedlc").group and "fedlc_missing" not in t.row("fedlc").params  # the default rows: clamp
    for c in t.columns:
        assert t.value(ROW, c.key) == t.value("fedlc", c.key), c.key
        assert t.config(ROW, c.key) == {**t.config("fedlc", c.key), "fedlc_missing": "mask"}
    assert t.value(ROW, "cifar10_beta0.5") == paper.Cell(72.99, 1.12)


def test_the_headline_gap_reads_the_default_row_only():
    """FedLC − FedAvg is taken per row group: the masked row (no FedAvg in its group) never enters it."""
    frame = paper.TABLE1.frame()
    comp = frame.assign(ours_mean=frame.paper_mean.where(frame.row != ROW, 0.0), spread=math.nan,
                        dataset_used=frame.dataset)
    g = gains(comp, "fedlc", "fedavg")
    assert set(g.row_group) == {""}
    at = g.set_index("column").loc["cifar10_beta0.5"]
    assert at.ours_gain == pytest.approx(72.99 - 60.18)


def test_quick_trains_the_row_where_fedlc_trains_at_table1s_seeds():
    q = PAPER.profile("quick")
    mine, fedlc = _cells(q), _cells(q, "fedlc")
    configured = {k for k, c in mine.items() if c["config"] is not None}
    assert configured == {k for k, c in fedlc.items() if c["config"] is not None}
    trained_here = {k for k in configured if mine[k]["config"]["dataset"] == q.dataset("cifar10")}
    assert trained_here == QUICK_COLUMNS  # SVHN and CIFAR-100 are absent here: "not run" at run time
    for k in configured:
        assert mine[k]["config"] == {**fedlc[k]["config"], "fedlc_missing": "mask"}, k
    assert q.seeds_for("table1") == (0, 1)


def test_smoke_leaves_the_row_out_and_the_paper_profile_needs_a_gpu_for_it():
    assert all(c["config"] is None for c in _cells(PAPER.profile("smoke")).values())
    on_cpu = dataclasses.replace(PAPER.profile("paper"), device="cpu")
    cells = _cells(on_cpu)
    assert set(cells) == {c.key for c in paper.TABLE1.columns}
    for k, c in cells.items():
        assert c["config"] is None and "needs a GPU" in c["note"], (k, c["note"])


def test_the_committed_quick_records_hold_every_run_table1_asks_for():
    """Rendering Table 1 from the committed records (``--render records``) looks up every configured cell at every
    seed; a missing one is an error (:class:`fedlib.repro.run.records.MissingRecords`)."""
    q = PAPER.profile("quick")
    recorded = records.read(RECORDS)
    missing = [(c["row"], c["column"], s) for c in table_cells(q, "table1") if c["config"] is not None
               for s in q.seeds_for("table1")
               if records.record_id(_identity({**c["config"], "seed": s})) not in recorded]
    assert not missing
    for column in QUICK_COLUMNS:  # the new row trained at each of them: a finished run with its accuracy
        for s in q.seeds_for("table1"):
            rec = recorded[records.record_id(_identity({**_cells(q)[column]["config"], "seed": s}))]
            assert rec["config"]["fedlc_missing"] == "mask" and rec["config"]["seed"] == s
            assert rec["result"]["status"] == "ok" and 0 < rec["result"]["accuracy"] <= 100, (column, s)
