"""FedLC's profiles: the paper's setup, smoke is small, quick states its reductions.
(Every paper's profiles are checked generically in tests/test_profiles.py.)"""

import pytest

from fedlib.papers.fedlc import PAPER
from fedlib.papers.fedlc import reported as paper
from fedlib.repro.budget.costs import ungated
from fedlib.repro.budget.gate import decide, table_cells as gate_table_cells

PROFILES = PAPER.profiles


def get_profile(name=None):
    return PAPER.profile(name)


def test_paper_profile_is_the_papers_setup():
    p = ungated(get_profile("paper"))  # the cell as the paper sets it, whatever this CPU affords
    assert p.seeds == (0, 1, 2, 3, 4) and p.datasets == {}
    for key in ("rounds", "max_train_samples", "max_test_samples", "lr", "batch_size", "num_clients"):
        assert key not in p.image and key not in p.synthetic
    cfg, note = decide(p, paper.TABLE1.config("fedlc", "cifar10_beta0.05"), "table1")
    assert cfg["rounds"] == 400 and cfg["num_clients"] == 20 and cfg["lr"] == 0.01 and cfg["batch_size"] == 128
    assert cfg["dataset"] == "cifar10" and note == ""
    devs = " ".join(p.deviations("table1"))
    assert "seed" not in devs and "rounds (paper" not in devs


def test_smoke_is_small():
    s = get_profile("smoke")
    assert len(s.seeds) == 1
    assert s.image["rounds"] <= 3 and s.image["max_train_samples"] <= 1000 and s.image["max_test_samples"] <= 500
    assert s.synthetic["rounds"] <= 3 and s.synthetic["num_clients"] <= 20
    for tid in paper.TABLES:
        run = [c for c in gate_table_cells(s, tid) if c["config"] is not None]
        assert len(run) <= 8, tid


def test_quick_states_its_reductions():
    q = get_profile("quick")
    devs = q.deviations("table1")
    assert any("seed" in d for d in devs)
    assert any("communication rounds" in d for d in devs)
    assert any("FMNIST" in d for d in devs)
    assert any("training samples" in d for d in devs)


def test_femnist_and_imagenet_cells_are_configurations_run_where_the_files_are():
    """FEMNIST (natural LEAF clients) and the ImageNet subset have loaders: their cells are real
    configurations, "not run" at run time when the files are absent (tests/test_grid.py)."""
    paper_profile = ungated(get_profile("paper"))
    femnist = [c for c in gate_table_cells(paper_profile, "table4") if c["column"] == "femnist"]
    assert femnist and all(c["config"]["dataset"] == "femnist" for c in femnist)
    imagenet = gate_table_cells(paper_profile, "table3")
    assert all(c["config"]["dataset"] == "imagenet_subset" and c["config"]["model"] == "resnet18" for c in imagenet)


def test_get_profile_by_name_and_environment(monkeypatch):
    assert get_profile("smoke").name == "smoke"
    monkeypatch.setenv("FEDLIB_PROFILE", "paper")
    assert get_profile().name == "paper"
    monkeypatch.delenv("FEDLIB_PROFILE")
    assert get_profile().name == "quick"
    with pytest.raises(KeyError):
        get_profile("huge")
