"""FedConcat's profiles: the paper profile is the recovered setup, quick runs Table 1's whole FMNIST
row and says how it differs, every experiment has its settings.  (Every paper's profiles are also
checked generically in tests/test_profiles.py.)"""

from __future__ import annotations

import pytest

from fedlib.papers.fedconcat import PAPER
from fedlib.papers.fedconcat import reported as paper
from fedlib.repro.budget.costs import ungated
from fedlib.repro.budget.gate import decide, table_cells as gate_table_cells


def test_paper_profile_is_the_recovered_setup():
    p = ungated(PAPER.profile("paper"))  # the cell as the paper sets it, whatever this CPU affords
    assert p.seeds == (0, 1, 2) and p.datasets == {} and p.image == {}
    cfg, note = decide(p, paper.TABLE1.config("fedconcat", "fmnist_c2"), "table1")
    for key, value in paper.SETUP.items():
        assert cfg[key] == value, key
    assert cfg["rounds"] == 147 and note == ""
    devs = " ".join(p.deviations("table1"))
    assert "seed" not in devs and "training samples" not in devs and "batch size" not in devs
    assert p.setting("fig4", "budget") == "rounds" and p.setting("fig1", "local_epochs") == 10


def test_quick_runs_the_whole_fmnist_row_and_states_its_reductions():
    q = PAPER.profile("quick")
    run = [(c["row"], c["column"]) for c in gate_table_cells(q, "table1") if c["config"] is not None]
    fmnist = [c.key for c in paper.TABLE1.columns if c.dataset == "fmnist"]
    assert {(r, c) for r in paper.METHODS for c in fmnist} <= set(run)
    for c in gate_table_cells(q, "table1"):
        if c["config"] is not None and c["column"] in fmnist and c["row"] != "centralized":
            assert c["config"]["num_clients"] == 40 and c["config"]["max_train_samples"] == 15_000
            assert c["config"]["batch_size"] == 16 and c["config"]["local_epochs"] == 1
    devs = " ".join(q.deviations("table1"))
    for text in ("1 seed", "15000 training samples", "batch size 16 (paper: 64)", "encoder_rounds=6 (paper: 50)",
                 "classifier_rounds=60 (paper: 1000)", "FMNIST 14", "columns not run"):
        assert text in devs, text
    assert q.budget_minutes <= 60 and q.workers == 2


@pytest.mark.parametrize("name", ["smoke", "quick", "paper"])
def test_table1_runs_the_codes_inputs_beside_fedlibs_and_names_the_reading_that_faces_the_paper(name):
    """Issue 35: every profile that runs a Table 1 column runs FedAvg and FedConcat with the code's [0, 1]
    inputs too, at the same scale as the standardised rows, and its deviations say which reading faces the paper."""
    prof = ungated(PAPER.profile(name))
    cells = {(c["row"], c["column"]): c["config"] for c in gate_table_cells(prof, "table1")}
    ran = [col for (row, col), cfg in cells.items() if row == "fedconcat" and cfg is not None]
    assert ran
    for col in ran:
        for m in ("fedavg", "fedconcat"):
            unit, std = cells[(f"unit/{m}", col)], cells[(m, col)]
            assert unit["input_normalization"] == "unit_interval" and std.get("input_normalization") is None
            assert {k: v for k, v in unit.items() if k != "input_normalization"} == std
    assert "face the paper" in " ".join(PAPER.profile(name).deviations("table1"))


@pytest.mark.parametrize("name", ["smoke", "quick", "paper"])
def test_every_experiment_is_configured_or_needs_nothing(name):
    prof = PAPER.profile(name)
    assert prof.setting("fig4", "model") == "concat5_simple_cnn"
    assert prof.setting("fig4", "budget") in ("rounds", "communication")
    assert prof.setting("fig3", "columns") and prof.setting("clusters", "columns")
    for exp in ("budget", "fedlc_third_party", "clusters"):
        assert set(prof.setting(exp, "columns")) <= {c.key for c in paper.TABLE1.columns}


def test_quick_table_3_is_not_run_and_says_why():
    for c in gate_table_cells(PAPER.profile("quick"), "table3"):
        assert c["config"] is None and "not used by the 'quick' profile" in c["note"]
    paper_cells = gate_table_cells(ungated(PAPER.profile("paper")), "table3")
    assert all(c["config"]["model"] == "resnet18" for c in paper_cells)  # where the files are
