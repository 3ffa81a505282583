"""Every paper companion: three profiles with the required keys, every table cell a valid
configuration or a reason, every experiment a deviation list, smoke small, the paper profile
without reductions.  Papers are found by discovery, so a new companion is checked here too."""


import pytest

from fedlib.repro.budget.gate import table_cells as gate_table_cells
from fedlib.config import Config
from fedlib.papers import Paper, all_papers
from fedlib.repro.spec.profiles import PROFILE_NAMES

REQUIRED = ("name", "paper", "description", "seeds", "datasets", "image", "synthetic", "experiments", "notes",
            "workers")
PAPERS = sorted(all_papers())
CASES = [(p, name) for p in PAPERS for name in PROFILE_NAMES]


def test_the_papers_are_discovered():
    assert {"fedlc", "fedabc", "fedic", "fedconcat"} <= set(PAPERS)


@pytest.mark.parametrize("paper", PAPERS)
def test_a_paper_has_the_three_profiles_with_the_required_keys(paper):
    pp = all_papers()[paper]
    assert set(pp.profiles) == set(PROFILE_NAMES)
    for prof in pp.profiles.values():
        d = prof.to_dict()
        assert all(key in d for key in REQUIRED), prof.name
        assert prof.paper == paper and prof.seeds and all(isinstance(s, int) for s in prof.seeds)
        assert set(prof.experiments) <= set(pp.experiments), set(prof.experiments) - set(pp.experiments)
        assert set(pp.tables) <= set(pp.experiments)


@pytest.mark.parametrize("paper,name", CASES)
def test_every_experiment_has_a_deviation_list(paper, name):
    prof = all_papers()[paper].profile(name)
    for exp in all_papers()[paper].experiments:
        devs = prof.deviations(exp)
        assert isinstance(devs, list) and all(isinstance(d, str) and d for d in devs), exp


@pytest.mark.parametrize("paper,name", CASES)
def test_every_table_cell_is_a_valid_configuration_or_says_why_not(paper, name):
    pp = all_papers()[paper]
    prof = pp.profile(name)
    for tid in pp.tables:
        for cell in gate_table_cells(prof, tid):
            if cell["config"] is None:
                assert cell["note"].startswith("not run"), (tid, cell)
            else:
                Config.from_dict({**cell["config"], "seed": 0})


@pytest.mark.parametrize("paper", PAPERS)
def test_smoke_is_small_and_says_so(paper):
    pp = all_papers()[paper]
    smoke = pp.profile("smoke")
    assert len(smoke.seeds) == 1
    for tid in pp.tables:
        run = [c for c in gate_table_cells(smoke, tid) if c["config"] is not None]
        assert len(run) <= 8, tid
        for c in run:
            assert c["config"].get("rounds", 10**9) <= 5, (tid, c["config"])
    assert any("smoke" in d for d in smoke.deviations(next(iter(pp.experiments))))


@pytest.mark.parametrize("paper", PAPERS)
def test_the_paper_profile_keeps_the_papers_seeds(paper):
    pp = all_papers()[paper]
    prof = pp.profile("paper")
    assert tuple(prof.seeds) == tuple(pp.seeds) and prof.datasets == {}
    for key in ("max_train_samples", "max_test_samples"):
        assert key not in prof.image
