"""FedConcat's declared studies (fedlib/papers/fedconcat/studies.py): options refused by name before
any work, cells that are Table 1's own, findings computed from hand-made summaries, every study
called by one notebook, the notebooks' profile prose checked against the profiles, and FedConcat's
stages part filled by name from its parameters."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest

from fedlib.algorithms import METHODS
from fedlib.algorithms.fedconcat import FedConcatStages
from fedlib.config import Config
from fedlib.params import ConfigError
from fedlib.papers.fedconcat import PAPER
from fedlib.papers.fedconcat import reported as paper
from fedlib.papers.fedconcat.analysis import budget_of
from fedlib.papers.fedconcat.profiles import BUDGET_VARIANTS
from fedlib.repro.artefacts.tables import grid_cells
from fedlib.repro.budget.costs import ungated

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks" / "fedconcat"


def _sources() -> dict[str, str]:
    return {p.name: "\n".join(c.source for c in nbformat.read(p, 4).cells) for p in sorted(NOTEBOOKS.glob("*.ipynb"))}


def test_every_experiment_that_is_not_a_table_is_a_study_called_by_one_notebook():
    names = set(PAPER.studies)
    assert {"fig1", "budget_rounds", "budget", "fedlc_third_party", "clusters", "fig3", "fig4"} == names
    experiments = {s.id for s in PAPER.studies.values()}
    assert experiments == set(PAPER.profile("paper").experiments) - {"table1", "table2", "table3"}
    sources = _sources()
    for name in names:
        callers = [nb for nb, src in sources.items() if f'ctx.study("{name}"' in src]
        assert len(callers) == 1, (name, callers)
    for nb, src in sources.items():  # tables are DataFrames, never printed markdown
        assert "print(open(" not in src and ".md\").read()" not in src, nb
    for study in PAPER.studies.values():
        for option in study.options:
            assert option.doc and option.source, (study.name, option.name)


@pytest.mark.parametrize("name,given,match", [
    ("fig4", {"budget": "bytes"}, "budget must be one of"),
    ("fig4", {"methods": ("fedavg", "fedconcat")}, "methods must be among"),
    ("budget", {"variants": ()}, "variants must be one or more"),
    ("budget", {"variants": ("every byte",)}, "variants must be one or more"),
    ("clusters", {"columns": ("cifar10_c9",)}, "columns must be Table 1 column keys"),
    ("fig1", {"local_epochs": 0}, "local_epochs must be an integer ≥ 1"),
    ("fig3", {"rounds": 3}, "no option 'rounds'"),
])
def test_a_bad_option_is_refused_by_name_before_any_work(name, given, match):
    """ctx.study resolves the options first: a refused one stops it before any cell is built."""
    with pytest.raises(ConfigError, match=match):
        PAPER.study(name).options_for(PAPER.profile("smoke"), **given)


def test_options_come_from_the_profile_then_the_caller():
    quick = PAPER.profile("quick")
    assert PAPER.study("fig4").options_for(quick).budget == "communication"  # quick's setting
    assert PAPER.study("fig4").options_for(PAPER.profile("paper")).budget == "rounds"
    assert PAPER.study("fig4").options_for(quick, budget="rounds").budget == "rounds"
    assert PAPER.study("fig1").options_for(quick).local_epochs == paper.SETUP["local_epochs"]
    assert PAPER.study("fig1").options_for(PAPER.profile("smoke")).local_epochs == 1
    assert PAPER.study("fig3").options_for(quick).profile is quick


@pytest.mark.parametrize("profile", ["smoke", "quick", "paper"])
def test_the_studies_cells_are_table_1s_cells(profile):
    prof = ungated(PAPER.profile(profile))
    t1 = {(c["row"], c["column"]): c for c in grid_cells(prof, "table1")}
    for name in ("budget", "fedlc_third_party"):
        cols = PAPER.study(name).options_for(prof).columns
        got = PAPER.study(name).cells(prof)
        assert [(c["row"], c["column"]) for c in got] == [k for k in t1 if k[1] in cols and not k[0].startswith("unit/")]
        assert all(c == t1[(c["row"], c["column"])] for c in got)
    for c in PAPER.study("clusters").cells(prof):
        assert c["config"] == t1[(c["method"], c["column"])]["config"]


def _study(name: str, **given):
    study = PAPER.study(name)
    return study, study.options_for(PAPER.profile("smoke"), **given)


def test_fig3_findings_from_a_hand_made_summary():
    study, opts = _study("fig3")
    table = pd.DataFrame({"partition": ["#C=2", "#C=2", "Dir(0.5)", "Dir(0.5)"],
                          "clustering": ["with clustering (K-means)", "without (random groups)"] * 2,
                          "ours_mean": [60.0, 52.5, 70.0, math.nan]})
    assert study.findings(table, opts) == [
        "Fig. 3 at #C=2: FedConcat ends at 60.00% with K-means and 52.50% with random groups (+7.50 pp for "
        "clustering; the paper shows clustering ahead)"]


def test_fig4_findings_from_a_hand_made_summary():
    study, opts = _study("fig4")
    final = pd.DataFrame({"method": ["fedavg", "fedavg", "fedlc", "fedlc", "fedconcat"],
                          "architecture": ["one cluster model (Table 1)", "FedConcat's final architecture"] * 2
                          + ["FedConcat"],
                          "rounds": [14, 3, 14, 1, None], "ours_mean": [50.0, 55.25, 40.0, math.nan, 61.0]})
    assert study.findings({"final": final, "curves": None}, opts) == [
        "Fig. 4: FedAvg reaches 55.25% on FedConcat's final architecture (3 rounds) and 50.00% on one cluster "
        "model; FedConcat 61.00%"]


def test_budget_findings_from_a_hand_made_ranking():
    study, opts = _study("budget")
    names = list(BUDGET_VARIANTS)[:2]
    ranking = pd.DataFrame({"column": ["a", "a", "b", "b"], "variant": names * 2,
                            "FedConcat rank": [1.0, 2.0, 1.0, 1.0]})
    lines = study.findings({"ranking": ranking, "variants": {n: BUDGET_VARIANTS[n] for n in names}}, opts)
    assert lines == ["FedConcat is the best method in 3 of 4 (column, budget) pairs measured (2 of 2 columns at the "
                     "default budget)", "FedConcat's rank changes with the way of counting in 1 of 2 columns (a)"]


def test_clusters_findings_from_a_hand_made_summary():
    study, opts = _study("clusters")
    stats = pd.DataFrame({"column": ["fmnist_c2", "fmnist_c2"], "method": ["FedConcat", "FedConcat-ID"],
                          "correlation with the true distributions": [1.0, 0.876],
                          "ARI vs K-means on Eq. 2": [1.0, 0.5]})
    assert study.findings({"stats": stats, "views": {}}, opts) == [
        "FedConcat-ID's clusters agree with K-means on the true distributions with ARI 0.50 at fmnist_c2 (its "
        "inferred rows correlate 0.88 with the true ones)"]


def test_the_budget_rounds_study_is_the_arithmetic_at_both_scales():
    study, opts = _study("budget_rounds")
    table = study.summarize(None, opts)
    smoke = PAPER.profile("smoke").image
    for scale, knobs in (("paper", paper.SETUP), ("smoke", {**paper.SETUP, **smoke})):
        for ds in ("fmnist", "cifar10"):
            row = table[(table.scale == scale) & (table.dataset == paper.DATASET_LABELS[ds])].iloc[0]
            cfg = {"dataset": ds, "model": "simple_cnn",
                   **{k: knobs[k] for k in ("num_clusters", "encoder_rounds", "classifier_rounds")}}
            assert row["R (baseline rounds)"] == budget_of(cfg).rounds
    assert study.findings(table, opts)[0] == (f"same communication cost at the paper's K, T_e, T_c: "
                                              f"{table['R (baseline rounds)'].iloc[0]} baseline rounds on FMNIST")


def test_the_notebooks_profile_prose_states_the_profiles_values():
    """Every notebook's **Profile.** paragraph quotes the quick and paper profiles' scale: checked here."""
    quick, full = PAPER.profile("quick"), PAPER.profile("paper")
    def r(ds: str, image: dict) -> int:
        return budget_of({"dataset": ds, "model": "simple_cnn", **{k: image.get(k, paper.SETUP[k]) for k in
                                                                   ("num_clusters", "encoder_rounds", "classifier_rounds")}}).rounds

    q = quick.image
    expected = [f"E = {q['local_epochs']}, T_e = {q['encoder_rounds']}, T_c = {q['classifier_rounds']} "
                f"({r('fmnist', q)} baseline rounds) and {len(quick.seeds)} seed".replace("1 seed", "one seed"),
                f"({len(full.seeds)} seeds, E = {paper.SETUP['local_epochs']}, T_e = {paper.SETUP['encoder_rounds']}, "
                f"T_c = {paper.SETUP['classifier_rounds']}, {r('fmnist', {})} / {r('cifar10', {})} baseline rounds)"]
    assert q["max_train_samples"] * 4 == 60_000  # "a quarter of the training set"
    for nb, src in _sources().items():
        if "**Profile.** All settings" not in src:
            continue
        prose = re.sub(r"\s+", " ", src)
        for text in expected:
            assert text in prose, (nb, text)


def test_fedconcat_stages_are_filled_by_name_from_the_parameters():
    names = {f.name for f in dataclasses.fields(FedConcatStages)}
    probe = {"probe_size", "probe_kind", "reuse_round"}  # FedConcat-ID's own (FedConcat keeps their defaults)
    for token, unfilled in (("fedconcat", {"infer"} | probe), ("fedconcat_id", {"infer"})):
        filled = {p.field_name for p in METHODS[token].params}
        assert filled <= names and names - filled == unfilled  # infer: the token's own choice
    changed = dict(num_clusters=3, encoder_rounds=4, classifier_rounds=7, fedconcat_kmeans_n_init=2,
                   fedconcat_cluster_init="shared", fedconcat_classifier_steps=3,
                   fedconcat_classifier_weighting="uniform", fedconcat_clustering="random",
                   fedconcat_id_probe_size=32, fedconcat_id_probe_inputs="standard_normal",
                   fedconcat_id_reuse_round=True)
    cfg = Config.from_dict(dict(method="fedconcat_id", dataset="fmnist", **changed))
    stages = METHODS["fedconcat_id"].parts["stages"](cfg)
    assert stages == FedConcatStages(3, 4, 7, 2, "shared", 3, "uniform", True, 32, "standard_normal", True, "random")
    plain = METHODS["fedconcat"].parts["stages"](Config.from_dict({**cfg.to_dict(), "method": "fedconcat"}))
    assert plain == dataclasses.replace(FedConcatStages(), num_clusters=3, encoder_rounds=4, classifier_rounds=7,
                                        n_init=2, cluster_init="shared", classifier_steps=3,
                                        classifier_weighting="uniform", clustering="random")


def test_table1_cells_of_the_studies_hold_one_row_per_method():
    """Table 1 runs FedAvg and FedConcat twice (fedlib's inputs, and the code's [0, 1] inputs): the studies
    that key Table 1's runs by (column, method) read the default rows only, so a [0, 1] run never stands in
    for a default one."""
    from fedlib.papers.fedconcat import PAPER
    from fedlib.papers.fedconcat import reported as paper
    from fedlib.papers.fedconcat.cells import table1_cells

    cells = table1_cells(PAPER.profile("quick"), [c.key for c in paper.TABLE1.columns])
    rows = {c["row"] for c in cells}
    assert rows == {r.key for r in paper.TABLE1.rows if r.group != paper.CODE_INPUTS_GROUP}
    assert not any(c["row"].startswith("unit/") for c in cells)
    assert any(r.key.startswith("unit/") for r in paper.TABLE1.rows)  # the table itself still has them
