"""The Study type (fedlib.repro.spec.study) and the one gate (fedlib.repro.budget.gate): options are typed and
refused before any work, the driver runs cells → grid → summary → findings, and the gate is the one
place that turns a profile's cell into "trains here", "from the store" or "not run"."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from fedlib.params import ConfigError
from fedlib.repro import Option, Study
from fedlib.repro.budget.gate import decide
from fedlib.repro.spec.paper import get_paper


def _toy(**kw) -> Study:
    def cells(profile, opts):
        return [{"beta": b, "config": None, "note": "not run: toy"} for b in opts.betas]

    def summary(grid, opts):
        return pd.DataFrame({"beta": list(opts.betas), "rounds": opts.rounds})

    def findings(frame, opts):
        return [f"{len(frame)} rows at {opts.rounds} rounds"]

    return Study("fig5", "toy", build_cells=cells, build_summary=summary, build_findings=findings,
                 options=(Option("betas", (0.1, 0.5), tuple, "Dir(β) values", check=lambda v: all(b > 0 for b in v),
                                 allowed="positive numbers", source="toy"),
                          Option("rounds", 3, int, "rounds", check=lambda v: v >= 1, allowed="≥ 1")), **kw)


def test_options_come_from_defaults_then_the_profile_then_the_caller():
    study = _toy()
    prof = get_paper("fedabc").profile("smoke")
    assert dict(study.options_for(None)) == {"betas": (0.1, 0.5), "rounds": 3}
    with_setting = dataclasses.replace(prof, experiments={**prof.experiments, "fig5": {"rounds": 7}})
    assert study.options_for(with_setting).rounds == 7
    assert study.options_for(with_setting, rounds=9).rounds == 9
    opts = study.options_for(None, betas=(0.3,))
    assert study.cells(None, opts) == [{"beta": 0.3, "config": None, "note": "not run: toy"}]
    frame = study.summarize(None, opts)
    assert study.findings(frame, opts) == ["1 rows at 3 rounds"]
    with pytest.raises(AttributeError):
        opts.rounds = 4
    assert study.options_for(with_setting).profile is with_setting and opts.profile is None
    assert opts.bound("somewhere").store == "somewhere" and dict(opts.bound("somewhere")) == dict(opts)
    with pytest.raises(ConfigError, match="no option 'profile'"):  # the profile is positional, never an option
        study.options_for(None, profile="quick")


def test_an_option_may_not_take_the_name_of_what_options_are_resolved_for():
    with pytest.raises(ValueError, match="profile"):
        Study("x", "x", build_cells=list, build_summary=list, options=(Option("profile", 1, int, "p"),))


@pytest.mark.parametrize("given,match", [({"rounds": 0}, "rounds must be ≥ 1"), ({"rounds": 1.5}, "rounds must be"),
                                         ({"betas": (0.1, -1.0)}, "betas must be positive"),
                                         ({"betas": 0.1}, "betas must be a tuple"), ({"lr": 0.1}, "no option 'lr'")])
def test_a_bad_option_is_refused_by_name_before_any_work(given, match):
    with pytest.raises(ConfigError, match=match):
        _toy().options_for(None, **given)


def test_an_option_declared_twice_is_refused():
    with pytest.raises(ValueError, match="declared twice"):
        Study("x", "x", build_cells=list, build_summary=list,
              options=(Option("a", 1, int, "a"), Option("a", 2, int, "a")))


def test_the_gate_is_the_profile_resolution_plus_the_cost_and_store_decision():
    """On the paper profile on a CPU, a CIFAR-10 cell of FedLC's Table 1 resolves (the profile runs it)
    but the gate says it needs a GPU; the quick profile, with no cost model, is the resolution as is."""
    pp = get_paper("fedlc")
    base = pp.table("table1").config("fedlc", "cifar10_beta0.5")
    paper = dataclasses.replace(pp.profile("paper"), device="cpu")
    resolved, _ = paper.resolve(base, "table1")
    assert resolved is not None
    cfg, note = decide(paper, base, "table1")
    assert cfg is None and "GPU" in note
    quick = pp.profile("quick")
    assert decide(quick, base, "table1") == quick.resolve(base, "table1")


def test_every_notebook_context_states_its_expected_time_before_anything_trains(tmp_path, capsys):
    """From the committed cold record of the notebook (figures/<paper>/<profile>/_run.json); under smoke, that its
    numbers mean nothing; under a cost model, its view's runs; printed when the Context is made (a notebook's
    first cell), before any grid."""
    import json

    from fedlib.repro.artefacts.context import Context
    from fedlib.repro.artefacts.provenance import repo_root

    record = json.loads((repo_root() / "figures" / "fedconcat" / "quick" / "_run.json").read_text())
    cold = record.get("cold", record)
    # a partial regeneration keeps the other notebooks' timings in ``previous``, as the estimate reads them
    seconds = {n["name"]: n["wall_time_s"] for n in cold.get("previous", []) + cold.get("notebooks", [])}[
        "02_effectiveness"]
    Context("quick", notebook="fedconcat/02_effectiveness", out_dir=tmp_path / "a", progress=False)
    out = capsys.readouterr().out
    assert "Expected time for fedconcat/02_effectiveness under the 'quick' profile" in out
    assert f"about {seconds / 60:.0f} min" in out and "measured: cold regeneration" in out
    Context("smoke", notebook="fedconcat/02_effectiveness", out_dir=tmp_path / "b", progress=False)
    assert "seconds to a minute" in (smoke := capsys.readouterr().out) and "its numbers mean nothing" in smoke
    Context("paper", notebook="fedconcat/02_effectiveness", out_dir=tmp_path / "d", progress=False,
            store=tmp_path / "store")  # a cost model: the runs of its declared view, here and on a GPU
    assert "runs to train here" in (paper := capsys.readouterr().out) and "not run here" in paper
    Context("quick", notebook="fedconcat/02_effectiveness", out_dir=tmp_path / "c", progress=False, announce=False)
    assert capsys.readouterr().out == ""


def test_a_tables_figure_stamps_the_seeds_decide_added(tmp_path):
    """A figure of a table whose cells ``decide`` extended names those seeds too (issue 51: FedConcat quick's
    table1_bars said "1 seed (0)" beside 3-seed cells); another table's decided seeds are not its own."""
    import json

    from fedlib.repro.artefacts.context import Context

    out = tmp_path / "out"
    out.mkdir()
    (out / "_decided.jsonl").write_text(
        json.dumps({"table": "table1", "row": "unit/fedavg", "column": "fmnist_c2", "seeds": [1, 2]}) + "\n"
        + json.dumps({"table": "table2", "row": "fedavg", "column": "n100_cifar10_c2", "seeds": [5]}) + "\n")
    ctx = Context("quick", notebook="fedconcat/02_effectiveness", out_dir=out, progress=False, announce=False)
    assert ctx.profile.seeds_for("table1") == (0,)
    assert ctx.seeds_of("table1") == (0, 1, 2) and ctx.seeds_of("table2") == (0, 5)
    assert ctx.seeds_of("table3") == (0,) and ctx._meta("table1", {})["seeds"] == (0, 1, 2)


def test_a_notebooks_options_parameter_reaches_its_studies_and_writes_apart(tmp_path):
    """``papermill -y "options: {lambdas: [0.0, 1.0]}"`` sets a study's option (issue 50): the notebook's
    ``options`` go to the studies of its View that declare them, a key none declares is refused before anything
    trains, and outputs go to a folder of their own beside the profile's."""
    from fedlib.params import ConfigError
    from fedlib.repro.artefacts.context import Context

    with pytest.raises(ConfigError, match=r"\['lambda'\] are no option of the studies of fedic/05_sensitivity"):
        Context("quick", notebook="fedic/05_sensitivity", store=tmp_path / "s", progress=False, announce=False,
                options={"lambda": [0.0]})
    ctx = Context("quick", notebook="fedic/05_sensitivity", store=tmp_path / "s", progress=False, announce=False,
                  options={"lambdas": (0.0, 1.0)})
    import shutil

    shutil.rmtree(ctx.out_dir)  # made under the repository's figures/ (never committed: .gitignore)
    assert ctx.out_dir.name.startswith("quick-options-") and ctx.out_dir.parent.name == "fedic"
    assert ctx._meta("fig4", {})["study_options"] == {"lambdas": (0.0, 1.0)}
    fig4 = ctx.paper.study("fig4")
    cells = fig4.cells(ctx.profile, fig4.options_for(ctx.profile, lambdas=ctx.options["lambdas"]))
    assert sorted({c["lambda"] for c in cells}) == [0.0, 1.0]
    plain = Context("quick", notebook="fedic/05_sensitivity", out_dir=tmp_path / "o", store=tmp_path / "s",
                    progress=False, announce=False)
    assert plain.options == {} and plain.out_dir == (tmp_path / "o").resolve()
