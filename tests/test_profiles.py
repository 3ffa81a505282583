"""Profiles: required keys, valid configurations, deviations, smoke is small."""

import pytest

from fedlib.config import Config
from fedlib.papers.fedlc import reported as paper
from fedlib.profiles import EXPERIMENTS, PROFILES, get_profile

REQUIRED = ("name", "description", "seeds", "datasets", "image", "synthetic", "experiments", "notes", "workers")


def test_three_profiles_with_the_required_keys():
    assert set(PROFILES) == {"smoke", "quick", "paper"}
    for prof in PROFILES.values():
        d = prof.to_dict()
        for key in REQUIRED:
            assert key in d, (prof.name, key)
        assert prof.seeds and all(isinstance(s, int) for s in prof.seeds)
        assert set(prof.experiments) <= set(EXPERIMENTS)


def test_paper_profile_is_the_papers_setup():
    p = get_profile("paper")
    assert p.seeds == (0, 1, 2, 3, 4) and p.datasets == {}
    for key in ("rounds", "max_train_samples", "max_test_samples", "lr", "batch_size", "num_clients"):
        assert key not in p.image and key not in p.synthetic
    cfg, note = p.config(paper.TABLE1.config("fedlc", "cifar10_beta0.05"), "table1")
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
        run = [c for c in s.table_cells(tid) if c["config"] is not None]
        assert len(run) <= 8, tid


def test_quick_states_its_reductions():
    q = get_profile("quick")
    devs = q.deviations("table1")
    assert any("seed" in d for d in devs)
    assert any("communication rounds" in d for d in devs)
    assert any("FMNIST" in d for d in devs)
    assert any("training samples" in d for d in devs)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_experiment_has_a_deviation_list(name):
    prof = get_profile(name)
    for exp in EXPERIMENTS:
        devs = prof.deviations(exp)
        assert isinstance(devs, list) and all(isinstance(d, str) and d for d in devs)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_table_cell_is_a_valid_configuration_or_says_why_not(name):
    prof = get_profile(name)
    for tid in paper.TABLES:
        for cell in prof.table_cells(tid):
            if cell["config"] is None:
                assert cell["note"].startswith("not run"), (tid, cell)
            else:
                Config.from_dict({**cell["config"], "seed": 0})


def test_unsupported_datasets_are_never_run():
    for prof in PROFILES.values():
        assert all(c["config"] is None for c in prof.table_cells("table3"))
        femnist = [c for c in prof.table_cells("table4") if c["column"] == "femnist"]
        assert femnist and all(c["config"] is None for c in femnist)


def test_get_profile_by_name_and_environment(monkeypatch):
    assert get_profile("smoke").name == "smoke"
    monkeypatch.setenv("FEDLIB_PROFILE", "paper")
    assert get_profile().name == "paper"
    monkeypatch.delenv("FEDLIB_PROFILE")
    assert get_profile().name == "quick"
    with pytest.raises(KeyError):
        get_profile("huge")
