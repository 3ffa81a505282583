"""FedABC's declared studies (fedlib/papers/fedabc/studies/): typed options refused before any work,
their cells against Table 1's and the profiles' stated counts, their summaries and findings from
hand-made grids, and notebook 07's ladder text generated from the ladder's rungs."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import fedlib
from fedlib.algorithms.fedabc import FEDABC_WI
from fedlib.config import Config
from fedlib.params import ConfigError
from fedlib.papers.fedabc import PAPER
from fedlib.papers.fedabc import budget as B
from fedlib.papers.fedabc import experiments as E
from fedlib.papers.fedabc import reported as paper
from fedlib.papers.fedabc.deviations import DEFAULTS
from fedlib.papers.fedabc.studies import heterogeneity, motivation, sensitivity
from fedlib.repro.artefacts.context import Context
from fedlib.repro.budget.gate import decide, table_cells as gate_table_cells
from fedlib.repro.run.grid import GridResult
from fedlib.simulation import evaluate, prepare

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks" / "fedabc"


def _fake_grid(rows, labels):
    runs = pd.DataFrame(rows).assign(status="ok", note="", dataset_used="cifar10", seed=0)
    return GridResult(runs, pd.DataFrame(), labels)


def _markdown(notebook: str) -> str:
    cells = json.loads((NOTEBOOKS / notebook).read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


# ----------------------------------------------------------------------------- the declarations
def test_every_figure_and_analysis_is_a_declared_study_named_by_its_experiment():
    assert set(PAPER.studies) == {"fig2", "fig4", "fig5", "sensitivity"}
    assert set(PAPER.studies) <= set(PAPER.experiments)
    for study in PAPER.studies.values():
        assert study.name == study.id
        for option in study.describe():
            assert option["source"], (study.name, option["name"])
    assert not PAPER.study("fig4").trains


@pytest.mark.parametrize("name,given,match", [
    ("fig5", {"betas": (0.2,)}, "betas must be a non-empty tuple of Table 1's Dir"),
    ("fig5", {"datasets": ("svhn",)}, "datasets must be"),
    ("fig5", {"rounds": 3}, "no option 'rounds'"),
    ("fig2", {"beta": 0.25}, "beta must be one of Table 1's Dir"),
    ("fig2", {"local_epochs": 0}, "local_epochs must be ≥ 1"),
    ("fig4", {"datasets": ()}, "datasets must be"),
    ("sensitivity", {"validation_fraction": 1.0}, r"validation_fraction must be in \(0, 1\)"),
    ("sensitivity", {"center": {"lr": 0.1}}, "center must be a mapping of fedabc_tau_pos"),
    ("sensitivity", {"grid": {"fedabc_gamma": 2.0}}, "grid must be a mapping"),
    ("sensitivity", {"dataset": "svhn"}, "dataset must be one of 'mnist', 'cifar10'"),
])
def test_a_bad_option_is_refused_by_name_before_any_work(tmp_path, monkeypatch, name, given, match):
    ctx = Context("smoke", notebook="fedabc/05_ablation", out_dir=tmp_path)

    def no_work(*args, **kwargs):
        raise AssertionError("a grid started before the options were checked")

    monkeypatch.setattr(Context, "grid", no_work)
    with pytest.raises(ConfigError, match=match):
        ctx.study(name, **given)


def test_options_come_from_the_profile_and_the_caller():
    smoke, quick = PAPER.profile("smoke"), PAPER.profile("quick")
    assert PAPER.study("fig2").options_for(smoke).local_epochs == smoke.experiment("fig2")["local_epochs"]
    assert PAPER.study("fig5").options_for(quick).betas == paper.BETAS
    assert PAPER.study("fig5").options_for(quick, betas=(0.1,)).betas == (0.1,)
    opts = PAPER.study("sensitivity").options_for(quick)
    assert opts.center == DEFAULTS and opts.grid == quick.experiment("sensitivity")["grid"]
    assert opts.profile is quick  # carried for the summary, never an option


# ----------------------------------------------------------------------------- Fig. 2
def test_the_skewed_client_uses_fedabcs_mean_rule():
    counts = np.array([[30, 30, 0, 0],    # no minority class
                       [60, 5, 4, 0],     # 2 minority, 69 samples
                       [80, 2, 3, 0],     # 2 minority, 85 samples: chosen
                       [10, 10, 10, 10]])  # nothing absent
    assert motivation.skewed_client(counts) == 2
    # mean of the present classes (50 + 10 + 40) / 3 ≈ 33.3: 40 is majority, 10 minority
    assert motivation.skewed_client(np.array([[50, 10, 0, 40]])) == 0
    with pytest.raises(ValueError):
        motivation.skewed_client(np.array([[5, 5], [3, 3]]))


def test_fig2_reads_table1s_fedavg_and_fedabc_cells_with_the_profiles_first_seed():
    for name in ("smoke", "quick", "paper"):
        p = PAPER.profile(name)
        table = {c["row"]: c["config"] for c in gate_table_cells(p, "table1") if c["column"] == "mnist_dir0.3"}
        cells = PAPER.study("fig2").cells(p)
        assert [c["model"] for c in cells] == ["softmax + CE", "FedABC loss"]
        for cell, method in zip(cells, ("fedavg", "fedabc")):
            assert cell["config"] == {**table[method], "seed": p.seeds_for("fig2")[0]}, (name, method)


def test_fig2_summary_asks_the_gate_for_each_model_once_with_its_own_values(monkeypatch):
    """Fig. 2's summary asks the gate (``decide``) for every model's Table 1 cell with the model's own values
    and the seed as ``then`` values, never editing the answer (the method is the cell's, not a ``then``
    value); where the gate runs nothing, the summary is empty."""
    calls = []

    def gate(profile, base, experiment=None, *, then=None):
        calls.append((base["method"], experiment, dict(then or {})))
        return None, "not run"

    monkeypatch.setattr(motivation, "decide", gate)
    quick = PAPER.profile("quick")
    out = motivation.build_summary(None, PAPER.study("fig2").options_for(quick))
    assert out["per_class"].empty and calls
    method, experiment, extra = calls[0]
    assert experiment == "table1" and "method" not in extra and extra["seed"] == quick.seeds_for("fig2")[0]


def test_fig2_personalized_model_is_the_one_eq7_scores():
    """The personalized model Fig. 2 rebuilds for a client (a local update from the run's final
    global model on the evaluation mini-batches) scores exactly the run's per-client Eq. 7 accuracy."""
    cfg = Config(dataset="synthetic", num_clients=6, rounds=3, method="fedabc", local_epochs=1, batch_size=16,
                 seed=1, personal_eval_every=3, balanced_test="full")
    r = fedlib.run(cfg, store=False, progress=False)
    exp = prepare(cfg)
    for k in (0, 4):
        local = motivation._local_model(exp, r.params, k, cfg.rounds)
        rows = exp.client_test_indices[k]
        acc, _ = evaluate(exp.model, local, exp.data.test_x[rows], exp.data.test_y[rows], exp.data.num_classes)
        assert acc == pytest.approx(r.personalized_per_client[k], abs=1e-12)


def test_fig2_role_table_and_findings_by_hand():
    per_class = pd.DataFrame([("local training", "softmax + CE", 0, "majority", 50, 90.0),
                              ("local training", "softmax + CE", 1, "majority", 40, 80.0),
                              ("local training", "softmax + CE", 2, "minority", 5, 10.0),
                              ("local training", "softmax + CE", 3, "absent", 0, 0.0)],
                             columns=["panel", "model", "class", "role", "n_train", "accuracy"])
    roles = motivation.role_summary(per_class)
    assert roles.iloc[0][["majority", "minority", "absent"]].tolist() == [85.0, 10.0, 0.0]
    lines = PAPER.study("fig2").findings({"roles": roles}, {})
    assert lines == ["Fig. 2 (measured, local training): mean per-class accuracy (%): majority classes softmax + CE "
                     "85.0; minority classes softmax + CE 10.0; absent classes softmax + CE 0.0"]


# ----------------------------------------------------------------------------- Fig. 4
def test_heterogeneity_stats_by_hand():
    counts = pd.DataFrame([{"beta": 0.1, "client": k, "class": c, "count": n}
                           for k, row in enumerate([[8, 2, 0], [0, 0, 5]]) for c, n in enumerate(row)])
    s = heterogeneity.heterogeneity_stats(counts).iloc[0]
    assert s.classes_per_client == 1.5 and s.largest_class_share == pytest.approx((0.8 + 1.0) / 2)
    assert (s.min_size, s.median_size, s.max_size) == (5, 7.5, 10)


# ----------------------------------------------------------------------------- Fig. 5
def test_fig5_shares_table1s_fedabc_runs_and_changes_only_the_four_parameters():
    for name in ("quick", "smoke", "paper"):
        p = PAPER.profile(name)
        opts = PAPER.study("fig5").options_for(p)
        table = {(c["column"]): c["config"] for c in gate_table_cells(p, "table1") if c["row"] == "fedabc"}
        cells = PAPER.study("fig5").cells(p)
        assert len(cells) == 2 * len(opts.datasets) * len(opts.betas)
        for cell in cells:
            key = E.column_key(cell["dataset"], cell["beta"])
            if cell["variant"] == "fedabc" and table.get(key) is not None:
                assert cell["config"] == table[key], (name, key)
            if cell["variant"] == "fedabc_wi" and cell["config"] is not None:
                base = dict(cell["config"])
                assert {k: base.pop(k) for k in FEDABC_WI} == FEDABC_WI
                ref = decide(p, paper.TABLE1.config("fedabc", E.column_key(cell["dataset"], cell["beta"])), "fig5")[0]
                assert base == {k: v for k, v in ref.items() if k not in FEDABC_WI}


def test_fig5_summary_gains_the_smallest_and_the_findings():
    rows = [{"dataset": "cifar10", "beta": b, "variant": v, "personalized_accuracy": acc}
            for b, (a, w) in zip(paper.BETAS, [(90, 89.5), (80, 78), (75, 73), (70, 67)])
            for v, acc in (("fedabc", a), ("fedabc_wi", w))]
    study = PAPER.study("fig5")
    s = study.summarize(_fake_grid(rows, ["dataset", "beta", "variant"]), profile=PAPER.profile("smoke"))
    assert s.dataset.unique().tolist() == ["CIFAR-10"]
    assert s.gain.tolist() == pytest.approx([0.5, 2.0, 2.0, 3.0])
    assert s.smallest_gain.tolist() == [True, False, False, False]
    lines = study.findings(s, profile=PAPER.profile("smoke"))
    assert lines == ["Fig. 5 (CIFAR-10): FedABC − FedABC_wi = Dir(0.1) +0.50, Dir(0.3) +2.00, Dir(0.5) +2.00, "
                     "Dir(1) +3.00 pp; FedABC ahead in 4 of 4 (paper: ahead at every α); the smallest gain is at "
                     "Dir(0.1) (paper: Dir(0.1))"]


# ----------------------------------------------------------------------------- sensitivity
@pytest.mark.parametrize("name,count", [("quick", 12), ("paper", 16)])
def test_sensitivity_cells_hold_out_training_data_and_vary_one_factor_at_a_time(name, count):
    """quick: 1 center + 8 one-factor values + the profile's setting + FedABC_wi + FedAvg = 12 runs
    (profiles' docstring); paper: 1 + 12 + 3 = 16 settings (budget.PAPER_ESTIMATE)."""
    p = PAPER.profile(name)
    opts = p.experiment("sensitivity")
    cells = PAPER.study("sensitivity").cells(p)
    assert len(cells) == count
    assert all(c["config"]["validation_fraction"] == opts["validation_fraction"] > 0 for c in cells)
    center = {k: float(v) for k, v in opts["center"].items()}
    for c in cells:
        if c["factor"] in E.HYPERPARAMETERS:
            cfg = c["config"]
            differ = [k for k in E.HYPERPARAMETERS if float(cfg[k]) != center[k]]
            assert differ == [c["factor"]] and float(cfg[c["factor"]]) == c["value"]
    labels = [c["label"] for c in cells]
    assert "FedAvg (softmax + CE)" in labels and "FedABC_wi (one-vs-all BCE)" in labels


def test_sensitivity_summary_picks_the_best_value_of_each_factor_and_says_so():
    p = PAPER.profile("quick")
    center = {k: float(v) for k, v in p.experiment("sensitivity")["center"].items()}
    rows = [{"factor": "setting", "value": math.nan, "label": "center", "personalized_accuracy": 90.0},
            {"factor": "fedabc_gamma", "value": 0.0, "label": "γ = 0", "personalized_accuracy": 91.0},
            {"factor": "fedabc_gamma", "value": 4.0, "label": "γ = 4", "personalized_accuracy": 89.0},
            {"factor": "fedabc_tau_pos", "value": 0.8, "label": "τ_pos = 0.8", "personalized_accuracy": 89.9},
            {"factor": "fedabc_gamma", "value": 1.0, "label": "γ = 1", "personalized_accuracy": 90.5}]
    study = PAPER.study("sensitivity")
    summary = study.summarize(_fake_grid(rows, ["factor", "value", "label"]), profile=p)
    frame, choice = summary["cells"], summary["choice"]
    assert choice["best"] == {**center, "fedabc_gamma": 0.0}
    assert choice["chosen"] == {**center, "fedabc_gamma": 1.0}  # γ = 0 switches hard-sample mining off
    assert choice["profile"] == E.fedabc_setting(p, "mnist")
    assert choice["agree"] == (choice["chosen"] == choice["profile"])
    delta = frame.set_index("label").delta_vs_center
    assert delta["γ = 0"] == pytest.approx(1.0) and delta["center"] == 0.0
    lines = study.findings(summary, profile=p)
    # γ ranges over 89.0 .. 91.0 with the center's 90.0; τ_pos over 89.9 .. 90.0
    assert lines[0].endswith("(others at the center): γ 2.00 pp, τ_pos 0.10 pp")
    assert lines[1] == "sensitivity: validation PFL accuracy (%): center 90.00"
    table = sensitivity.choice_frame(choice)
    assert table.loc["γ", "best (one at a time)"] == 0.0 and table.loc["γ", "best, both strategies on"] == 1.0


# ----------------------------------------------------------------------------- notebook prose from the profiles
def test_the_ladder_text_comes_from_its_rungs():
    plan = pd.DataFrame({"rounds": [20, 34, 58, 100], "local_epochs": [5] * 4, "max_train_samples": [0] * 4})
    assert B.rungs_text(plan) == "rounds 20 → 34 → 58 → 100 (local epochs E = 5 and all training samples at every rung)"
    assert B.paper_gap_text() == "98.7 − 98.3 = +0.40 pp"
    assert "(table1)" not in B.ladder_title() and B.ladder_title().endswith("MNIST Dir(0.3), Table 1")
    smoke = B.ladder_finding(pd.DataFrame(), PAPER.profile("smoke"))
    assert "mean nothing" in smoke and "toward" not in smoke
    # notebook 07 types no rung into its prose: every round count of quick's ladder is printed from the plan
    from fedlib.repro.budget.ladder import plan_frame

    prose = _markdown("07_budget_ladder.ipynb")
    for rounds in plan_frame(B.LADDER, PAPER.profile("quick")).rounds:
        assert not re.search(rf"\b{rounds}\b", prose), rounds


def test_profile_values_quoted_in_the_notebooks_prose_match_the_profiles():
    seeds = re.search(r"\((\d+) in `paper`\)", _markdown("03_pfl_accuracy.ipynb"))
    assert seeds and int(seeds.group(1)) == len(PAPER.profile("paper").seeds)
    clients = re.search(r"fedlib uses (\d+) \(notes §2\)", _markdown("02_heterogeneity.ipynb"))
    cfg, _ = decide(PAPER.profile("paper"), paper.TABLE1.config("fedavg", E.column_key("mnist", 0.3)), "fig4")
    assert clients and int(clients.group(1)) == cfg["num_clients"]
    assert "γ = 2 from focal loss" in _markdown("06_sensitivity.ipynb") and DEFAULTS["fedabc_gamma"] == 2
