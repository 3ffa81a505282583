"""The estimate printed before a regeneration (fedlib.repro.budget.cold_times): measured per-notebook cold
times summed over the notebooks about to run, the cold record of a warm re-render, the profile's
budget when nothing was measured."""

import json
from pathlib import Path

from fedlib.repro.budget.cold_times import cold_record, estimate_minutes, estimate_text
from fedlib.repro.spec.profiles import Profile


def _write(root, paper, profile, record):
    out = root / paper / profile
    out.mkdir(parents=True)
    (out / "_run.json").write_text(json.dumps(record))


def _nb(name, seconds, trained):
    return {"name": name, "status": "ok", "wall_time_s": seconds, "trained": trained}


def test_measured_cold_times_are_summed_over_the_chosen_notebooks(tmp_path):
    prof = Profile(name="quick", description="", seeds=(0,), budget_minutes=60)
    _write(tmp_path, "p", "quick", {"git_commit": "abcdef123", "started": "2026-11-21T10:00:00",
                                    "notebooks": [_nb("01_a", 120.0, 2), _nb("02_b", 600.0, 9), _nb("03_c", 30.0, 0)]})
    assert estimate_minutes("p", prof, ["01_a", "02_b", "03_c"], [tmp_path])[0] == (120 + 600 + 30) / 60
    minutes, how = estimate_minutes("p", prof, ["02_b"], [tmp_path])
    assert minutes == 10.0 and "measured" in how and "abcdef1" in how
    # a timing carried from an earlier regeneration (``previous``) is named at its own commit, not the newest's
    _write(tmp_path / "m", "p", "quick", {"git_commit": "abcdef123", "started": "2026-11-21T10:00:00",
                                          "notebooks": [_nb("01_a", 120.0, 2)],
                                          "previous": [{**_nb("02_b", 600.0, 9), "git_commit": "0123456789"}]})
    minutes, how = estimate_minutes("p", prof, ["01_a", "02_b"], [tmp_path / "m"])
    assert minutes == 12.0 and how == ("measured: cold regenerations at abcdef1 2026-11-21 (1 notebook), "
                                       "0123456 (1 notebook)")
    # every timing summed is an earlier one: named at its commit, without the newer record's date
    assert estimate_minutes("p", prof, ["02_b"], [tmp_path / "m"])[1] == "measured: cold regeneration at 0123456"
    # a notebook never measured: the profile's budget instead
    assert estimate_minutes("p", prof, ["04_new"], [tmp_path]) == (60.0, estimate_minutes("p", prof, [], [])[1])
    text = estimate_text([("p", prof, [Path("02_b.ipynb")]), ("p", prof, [Path("04_new.ipynb")])], [tmp_path])
    assert text.splitlines()[0].startswith("estimated time from an empty results store: ≈ 70 min")
    # a profile with a cost model is planned run by run (fedlib.repro.budget.plan), not from cold times
    import dataclasses

    modelled = dataclasses.replace(prof, name="paper", cost=object())
    assert estimate_text([("p", modelled, [Path("02_b.ipynb")])], [tmp_path]) == ""
    mixed = estimate_text([("p", modelled, [Path("02_b.ipynb")]), ("q", prof, [Path("02_b.ipynb")])], [tmp_path])
    assert "  q (quick" in mixed and "  p (" not in mixed


def test_a_warm_render_keeps_the_cold_measurement_and_a_warm_one_alone_is_not_one(tmp_path):
    warm = {"git_commit": "c", "notebooks": [_nb("01_a", 5.0, 0)]}
    assert cold_record(warm) is None
    cold = {"started": "x", "notebooks": [_nb("01_a", 900.0, 3)]}
    assert cold_record({**warm, "cold": cold}) is cold
    prof = Profile(name="quick", description="", seeds=(0,), budget_minutes=None)
    _write(tmp_path / "a", "p", "quick", warm)
    _write(tmp_path / "b", "p", "quick", {**warm, "cold": cold})
    # a cold record anywhere wins over a warm one; a warm one alone is the last time it ran, said as such
    assert estimate_minutes("p", prof, ["01_a"], [tmp_path / "a", tmp_path / "b"])[0] == 15.0
    minutes, how = estimate_minutes("p", prof, ["01_a"], [tmp_path / "a"])
    assert minutes == 5.0 / 60 and "last regeneration (0 runs trained" in how and "takes longer" in how
    assert estimate_minutes("p", prof, ["01_a"], [tmp_path / "c"]) == (None, "no measurement, no budget")


def test_an_explicit_budget_refuses_a_quick_regeneration_before_any_output_is_touched(tmp_path, capsys):
    """``--budget-hours`` holds for the profiles without a cost model too (their estimate is the
    measured cold times, else the profile's budget): refused with exit 2, the committed outputs intact."""
    from fedlib.repro import regenerate as R

    figs = tmp_path / "figures"
    out = figs / "fedlc" / "smoke"
    out.mkdir(parents=True)
    (out / "keep.csv").write_text("committed\n")
    code = R.main(["--paper", "fedlc", "--profile", "smoke", "--figures", str(figs), "--store", str(tmp_path / "s"),
                   "--no-index", "--budget-hours", "0.001"])
    err = capsys.readouterr().err
    assert code == 2 and "refused" in err and "--budget-hours 0.001" in err
    assert (out / "keep.csv").read_text() == "committed\n" and not (tmp_path / "s").exists()


def test_the_index_states_one_regeneration_of_several_papers_at_one_commit_on_one_store():
    """Grouped by their store, which is a path on the machine that ran them: the line does not print it."""
    from fedlib.repro.artefacts.index import joint_regenerations

    def entry(commit, store, minutes, started, cold=False, only=()):
        run = {"git_commit": commit, "store": store, "total_wall_time_s": minutes * 60, "started": started,
               "finished": started + "+", "only": list(only)}
        return {"run": {**run, "total_wall_time_s": 5.0, "cold": run} if cold else run}

    found = {("a", "quick"): entry("c" * 40, "…/s1", 30, "t1"),
             ("b", "quick"): entry("c" * 40, "…/s1", 45, "t2", cold=True),  # rendered again warm: its cold time
             ("c", "quick"): entry("c" * 40, "…/s2", 99, "t3"),  # another store: not the same regeneration
             ("d", "quick"): entry("c" * 40, "…/s1", 7, "t4", only=("01",))}  # partial: left out
    lines = joint_regenerations(found)
    assert len(lines) == 1 and "**75.0 min**" in lines[0] and "a 30.0 + b 45.0" in lines[0] and "2 papers" in lines[0]
    assert "t1 → t2+" in lines[0] and "…/s1" not in lines[0]  # the store groups them; its path is not printed
    assert joint_regenerations({("a", "quick"): found[("a", "quick")]}) == []


def test_a_full_warm_rerender_keeps_the_cold_record_it_replaces(tmp_path):
    """The earlier _run.json is read before the folder is cleaned: a full re-render at the same commit
    that trains nothing carries the cold regeneration's timing (it was lost when the clean ran first)."""
    import nbformat

    from fedlib.repro import regenerate as R
    from fedlib.repro.artefacts.provenance import git_commit

    nbdir = tmp_path / "notebooks" / "fedlc"
    nbdir.mkdir(parents=True)
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell('profile = "smoke"\nout_dir = None')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params, nbformat.v4.new_code_cell("x = 1")]
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    nb.metadata["language_info"] = {"name": "python"}
    nbformat.write(nb, str(nbdir / "01_a.ipynb"))
    out = tmp_path / "figures" / "fedlc" / "smoke"
    out.mkdir(parents=True)
    cold = {"git_commit": git_commit(), "store": "…/s", "started": "10:00", "finished": "12:00",
            "total_wall_time_s": 7200.0, "only": [], "notebooks": [_nb("01_a", 7000.0, 4)]}
    (out / "_run.json").write_text(json.dumps(cold))
    R.regenerate("smoke", ["fedlc"], figures_root=tmp_path / "figures", store=str(tmp_path / "store"), index=False,
                 notebooks_dir=tmp_path / "notebooks", progress=False)
    record = json.loads((out / "_run.json").read_text())
    assert record["notebooks"][0]["status"] == "ok" and record["notebooks"][0]["trained"] == 0
    assert record["cold"]["total_wall_time_s"] == 7200.0 and record["cold"]["notebooks"][0]["trained"] == 4
