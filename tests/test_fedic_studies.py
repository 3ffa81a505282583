"""FEDIC's studies (fedlib.papers.fedic.studies): typed options refused by name before any work, the
options each profile gives them, summaries and findings computed from hand-made grids and summaries,
every study named in a notebook, and the numbers the notebooks' prose quotes."""

import dataclasses
import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from fedlib.params import ConfigError
from fedlib.papers import get_paper
from fedlib.papers.fedic import reported as R
from fedlib.papers.fedic.budget import LADDER
from fedlib.papers.fedic.profiles import QUICK
from fedlib.repro.run.grid import GridResult

PAPER = get_paper("fedic")
ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks" / "fedic").glob("*.ipynb"))


def _source(notebook: Path, kind: str) -> str:
    return "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == kind)


def test_the_companion_declares_its_studies():
    assert set(PAPER.studies) == {"long_tail", "table3_groups", "fig3", "fig4", "fig5", "learns"}
    assert {s.id for s in PAPER.studies.values()} <= set(PAPER.experiments)


@pytest.mark.parametrize("name", ["long_tail", "table3_groups", "fig3", "fig4", "fig5", "learns"])
def test_every_study_is_run_by_a_notebook(name):
    """The regeneration's cost plan counts a study's cells where its name is quoted in a notebook."""
    assert any(f'ctx.study("{name}")' in _source(nb, "code") for nb in NOTEBOOKS), name


@pytest.mark.parametrize("study,given,match", [
    ("fig4", {"lambdas": (0.5, 1.5)}, r"lambdas must be numbers in \[0, 1\]"),
    ("fig4", {"lambdas": 0.5}, "lambdas must be a tuple"),
    ("fig3", {"aux_per_class": (100, 0)}, "aux_per_class must be positive integers"),
    ("fig3", {"ulb_sizes": (-1,)}, "ulb_sizes must be integers ≥ 0"),
    ("fig5", {"methods": ("fedavg", "fedlc")}, "methods must be Table 1's methods"),
    ("fig5", {"alphas": (1.0, 0.0)}, "alphas must be positive numbers"),
    ("fig5", {"betas": (0.1,)}, "no option 'betas'"),
    ("long_tail", {"seed": -1}, "seed must be an integer ≥ 0"),
    ("table3_groups", {"rows": ("a",)}, "no option 'rows'; declared: none"),
])
def test_a_bad_option_is_refused_by_name_before_any_work(study, given, match, tmp_path, monkeypatch):
    from fedlib.repro.artefacts.context import Context

    ctx = Context("smoke", notebook="fedic/05_sensitivity", out_dir=tmp_path / "out", store=tmp_path / "store",
                  announce=False, progress=False)
    monkeypatch.setattr(ctx, "grid", lambda *a, **k: pytest.fail("a grid ran before the options were checked"))
    with pytest.raises(ConfigError, match=match):
        ctx.study(study, **given)


def test_options_are_the_declared_defaults_at_the_paper_profile_and_the_profiles_settings_elsewhere():
    paper, quick, smoke = (PAPER.profile(p) for p in ("paper", "quick", "smoke"))
    fig3 = PAPER.study("fig3")
    assert fig3.options_for(paper).aux_per_class == (20, 50, 100, 200, 500)
    assert fig3.options_for(quick).aux_per_class == (25, 100, 400) and fig3.options_for(quick).ulb_sizes == (0,)
    assert PAPER.study("fig4").options_for(smoke).lambdas == (0.5, 1.0)
    assert PAPER.study("fig5").options_for(quick, alphas=(0.5,)).alphas == (0.5,)  # the caller's keyword last
    assert PAPER.study("fig5").options_for(quick).methods == ("fedavg", "feddf", "fedic")


@pytest.mark.parametrize("given,seed", [({}, 0), ({"seed": 3}, 3)])
def test_the_long_tail_study_trains_nothing_and_draws_the_profiles_data_setting(monkeypatch, given, seed):
    """It draws the profile's CIFAR-10-LT (IF = 100) setting for FEDIC with the profile's first seed (or
    the one given), and says "not run" with the reason where the data are absent."""
    import fedlib.simulation
    from fedlib.data import DatasetNotFoundError

    study, quick = PAPER.study("long_tail"), PAPER.profile("quick")
    assert not study.trains and study.cells(quick) == []
    drawn = []

    def prepare(config):
        drawn.append(config)
        raise DatasetNotFoundError("fmnist", "fmnist/")

    monkeypatch.setattr(fedlib.simulation, "prepare", prepare)
    summary = study.summarize(None, study.options_for(quick, **given))
    assert summary["counts"] is None and summary["setting"]["not run"].startswith("dataset 'fmnist' is absent")
    (c,) = drawn
    assert (c.dataset, c.long_tail_if, c.method, c.seed) == ("fmnist", 100.0, "fedic", seed)
    assert c.server_aux_per_class == R.SETUP["server_aux_per_class"]


def test_the_long_tail_findings_from_a_hand_made_summary():
    counts = pd.DataFrame({"class": [0, 1, 2], "train_count": [500, 50, 5], "group": ["many", "medium", "few"],
                           "aux_count": [10, 10, 10]})
    setting = {"dataset": "cifar10", "long_tail_if": 100.0, "train": 555, "imbalance": 100.0, "aux": 30,
               "unlabeled": "cifar100", "unlabeled_size": 50000, "clients": 20, "client_size_min": 27,
               "client_size_max": 28, "group_rule": "ranks"}
    lines = PAPER.study("long_tail").findings({"counts": counts, "setting": setting}, {})
    assert lines == ["IF = 100: 555 training samples after D_aux (30) is taken out; the largest class has 100× the "
                     "samples of the smallest (500 vs 5)",
                     "groups (ranks): many: classes 0; medium: classes 1; few: classes 2",
                     "D_ulb: cifar100 (50,000 images); 20 clients of 27-28 samples"]
    absent = {"counts": None, "setting": {"not run": "CIFAR-10 is absent"}}
    assert PAPER.study("long_tail").findings(absent, {}) == ["not run: CIFAR-10 is absent"]


def _grid(rows: list[dict], labels: list[str]) -> GridResult:
    runs = pd.DataFrame(rows)
    runs["status"] = ["ok" if not math.isnan(r.get("accuracy", 0.0)) else "not run" for r in rows]
    runs["note"] = ""
    return GridResult(runs, pd.DataFrame(), labels, 0.0)


def test_table3_groups_reads_the_teacher_for_rows_a_to_d_and_the_student_for_e_to_h():
    """Its cells are Table 3's (the same runs); a teacher row reads the run's teacher values."""
    study, quick = PAPER.study("table3_groups"), PAPER.profile("quick")
    cells = study.cells(quick)
    assert len(cells) == 32 and {c["metric"] for c in cells if c["row"] == "a"} == {
        "teacher_accuracy", "teacher_group_accuracy_many", "teacher_group_accuracy_medium",
        "teacher_group_accuracy_few"}
    from fedlib.repro.budget.gate import table_cells

    assert [c["config"] for c in cells] == [c["config"] for c in table_cells(quick, "table3")]
    # one run (row d's, read as teacher and as student h) of hand-made values
    run = {"accuracy": 70.0, "teacher_accuracy": 75.0, "group_accuracy_few": 60.0, "teacher_group_accuracy_few": 66.0}
    rows = [{**{k: v for k, v in c.items() if k not in ("config", "note")}, "seed": 0,
             **(run if c["row"] in "dh" else {"accuracy": math.nan})} for c in cells if c["column"] in ("all", "few")]
    wide = study.summarize(_grid(rows, ["row_label", "column_label"]), {})
    assert list(wide.columns) == ["All", "Many", "Medium", "Few"] and len(wide) == 8
    assert wide.loc["(d) FT+LA", "All"] == 75.0 and wide.loc["(d) FT+LA", "Few"] == 66.0
    assert wide.loc["(h) FT+LA+KD", "All"] == 70.0 and wide.loc["(h) FT+LA+KD", "Few"] == 60.0
    assert wide.loc["(a) none"].isna().all() and wide["Many"].isna().all()


def test_table3_groups_findings_set_our_lifts_beside_the_papers():
    t = R.TABLES["table3"]
    teachers = [[50.0, 0, 0, 30.0], [60.0, 0, 0, 45.0], [55.0, 0, 0, 20.0], [65.0, 0, 0, 50.0]]
    wide = pd.DataFrame(teachers + [[1.0] * 4] * 4, index=[r.label for r in t.rows],
                        columns=["All", "Many", "Medium", "Few"])
    lines = PAPER.study("table3_groups").findings(wide, {})
    assert lines[0] == ("Table 3 (ours): few-shot accuracy of the teacher over the plain ensemble (a): "
                        "FT (b) +15.00 pp (paper +21.20 pp), LA (c) -10.00 pp (paper +18.36 pp)")
    assert lines[1] == ("Table 3 (ours): best teacher overall of the 4 that ran: (d) FT+LA (65.00 %); the paper's: "
                        "(d) FT+LA (64.77 %)")


def test_figure_findings_from_hand_made_summaries():
    fig3 = pd.DataFrame({"curve": ["FedAvg", "FT", "FEDIC", "FedAvg", "FT", "FEDIC"], "ulb": ["all"] * 6,
                         "aux_per_class": [25, 25, 25, 100, 100, 100],
                         "ours_mean": [30.0, 70.0, 72.0, 30.0, 80.0, 78.0]})
    opts3 = PAPER.study("fig3").options_for(None, aux_per_class=(25, 100), ulb_sizes=(0,))
    assert PAPER.study("fig3").findings(fig3, opts3) == [
        "Fig. 3 (D_ulb all): FEDIC above FedAvg at 2 and above FT at 1 of the 2 D_aux sizes it ran "
        "(paper: above both at every size)"]
    fig4 = pd.DataFrame({"curve": "FEDIC", "lambda": [0.0, 0.5, 1.0], "ours_mean": [76.7, 78.2, 71.3]})
    assert PAPER.study("fig4").findings(fig4, {}) == [
        "Fig. 4: FEDIC at λ = 1: 71.30 %, at the other λ 76.70-78.20 % (λ = 1 minus the lowest of them: -5.40 pp; "
        "paper: robust to most λ, a severe drop at λ = 1)"]
    assert PAPER.study("fig4").findings(fig4[fig4["lambda"] < 1], {}) == [
        "Fig. 4: λ = 1 and another λ did not both run"]
    fig5 = pd.DataFrame({"curve": ["FedAvg", "FedAvg", "FEDIC", "FEDIC"], "alpha": [1.0, 0.01, 1.0, 0.01],
                         "ours_mean": [60.0, 40.0, 80.0, 75.0]})
    opts5 = PAPER.study("fig5").options_for(None, alphas=(1.0, 0.01))
    assert PAPER.study("fig5").findings(fig5, opts5) == [
        "Fig. 5, α 1 → 0.01: FedAvg -20.00 pp, FEDIC -5.00 pp; FEDIC drops the least "
        "(paper: every method drops, the compared methods more than FEDIC)"]
    # a method at chance (10 classes: 10 %) at the lowest α: its drop is the floor's, said and not compared
    at_chance = pd.concat([fig5, pd.DataFrame({"curve": "FedDF", "alpha": [1.0, 0.01], "ours_mean": [28.3, 10.25]})])
    assert PAPER.study("fig5").findings(at_chance, opts5) == [
        "Fig. 5, α 1 → 0.01: FedAvg -20.00 pp, FEDIC -5.00 pp, FedDF -18.05 pp (at chance at α 0.01); FEDIC drops "
        "the least of the methods above chance (paper: every method drops, the compared methods more than FEDIC)"]


# ----------------------------------------------------------------------------- the notebooks' prose
def test_every_two_decimal_accuracy_in_the_prose_is_a_value_the_paper_reports():
    reported = {f"{c.mean:.2f}" for t in R.TABLES.values() for c in t.values.values() if c is not None}
    for nb in NOTEBOOKS:
        for number in re.findall(r"(?<![\d.])[1-9]\d*\.\d\d(?!\d)", _source(nb, "markdown")):  # α = 0.01 is not one
            assert number in reported or number == "10.99", (nb.name, number)  # 10.99: 63.11 − 52.12 in 06


def test_table1_gains_quoted_in_notebook_02_are_the_papers():
    t, text = R.TABLES["table1"], _source(ROOT / "notebooks/fedic/02_cifar_lt.ipynb", "markdown")
    cols = [c.key for c in t.columns if c.dataset == "cifar10"]
    for base, quoted in (("fedavg", "5.5 to 11.4 points above FedAvg"), ("feddf", "FedDF by 6.7 to 12.8 points")):
        gains = [t.value("fedic", c).mean - t.value(base, c).mean for c in cols]
        assert f"{min(gains):.1f} to {max(gains):.1f}" in quoted and quoted in text


def test_the_ladder_notebooks_quoted_scales_are_the_profiles():
    """Notebook 06 quotes quick's rounds and local epochs, the paper's, the CPU floor, the run limit and the
    CPU's top rung: each is computed here from the profile and the ladder."""
    from fedlib.repro.budget import ladder as L

    text = " ".join(_source(ROOT / "notebooks/fedic/06_budget_ladder.ipynb", "markdown").split())
    assert f"({QUICK.image['rounds']} rounds of {QUICK.image['local_epochs']} local epochs)" in text
    assert f"({R.SETUP['rounds']} rounds of {R.SETUP['local_epochs']})" in text
    assert f"runs of at most {LADDER.cpu_run_limit_s / 60:.0f} CPU-min" in text
    assert (f"a floor of {LADDER.cpu_floor['rounds']} round of {LADDER.cpu_floor['local_epochs']} local epoch"
            in text)
    plan = L.plan_frame(LADDER, dataclasses.replace(PAPER.profile("paper"), device="cpu"))
    top, paper_rung = plan[plan.runs_here].iloc[-1], plan.iloc[-1]
    share = 100 * top.sample_epochs / paper_rung.sample_epochs
    assert f"reaches {top.rounds} rounds of {top.local_epochs}, {share:.1f} % of the paper's budget" in text
