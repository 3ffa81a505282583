"""FedLC's declared studies (fedlib/papers/fedlc/studies.py): options, cells, summaries and findings."""

import json
from pathlib import Path

import pandas as pd
import pytest

from fedlib.params import ConfigError
from fedlib.papers.fedlc import PAPER
from fedlib.papers.fedlc import calibration as C
from fedlib.papers.fedlc import label_skew as S
from fedlib.papers.fedlc import reported as paper
from fedlib.papers.fedlc.experiments import skew_label
from fedlib.papers.fedlc.local_models import client_roles
from fedlib.repro.run.grid import GridResult

REPO = Path(__file__).resolve().parents[1]
SMOKE, QUICK = PAPER.profile("smoke"), PAPER.profile("quick")


def test_every_study_is_run_by_a_notebook_and_every_module_is_short():
    sources = {p.name: "".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"])
               for p in (REPO / "notebooks" / "fedlc").glob("*.ipynb")}
    for name in PAPER.studies:
        assert any(f'ctx.study("{name}"' in s for s in sources.values()), name
    for module in (REPO / "fedlib" / "papers" / "fedlc").glob("*.py"):
        assert len(module.read_text().splitlines()) <= 400, module.name
    assert not any("print(open(" in s for s in sources.values())  # tables are shown as DataFrames


def test_options_are_refused_by_name_before_any_work():
    with pytest.raises(ConfigError, match="bogus"):
        PAPER.study("fig1").options_for(SMOKE, bogus=1)
    with pytest.raises(ConfigError, match="betas"):
        PAPER.study("fig1").options_for(SMOKE, betas=(-0.1,))
    with pytest.raises(ConfigError, match="variants"):
        PAPER.study("calibration").options_for(SMOKE, variants=("no_such_variant",))
    with pytest.raises(ConfigError, match="tau_setting"):
        PAPER.study("calibration_tau").options_for(SMOKE, tau_setting="cifar10_gamma3")
    with pytest.raises(ConfigError, match="max_steps"):
        PAPER.study("deviation").options_for(SMOKE, max_steps=0)


def test_options_come_from_the_profile_then_the_caller():
    calib = PAPER.study("calibration").options_for(SMOKE)
    assert calib.variants == ("standard", "eq7_printed") and calib.settings == ("cifar10_beta0.1",)
    # the τ sweep's variants are its own option: the profile's "variants" (of the same experiment) stay out
    assert PAPER.study("calibration_tau").options_for(SMOKE).tau_variants == ("standard", "log_prior")
    assert PAPER.study("fig7").options_for(QUICK).tsne_samples == 200
    assert PAPER.study("fig7").options_for(QUICK, tsne_samples=50).tsne_samples == 50
    assert PAPER.study("deviation").options_for(PAPER.profile("paper")).max_steps is None


def test_fig1_cells_follow_the_profile_settings():
    cells = PAPER.study("fig1").cells(SMOKE)
    assert [c["setting"] for c in cells] == ["IID", "Q(α=2)", "D(β=0.1)"]
    assert [c["kind"] for c in cells] == ["IID", "Q(α)", "D(β)"]
    partitions = [(c["config"]["partition"], c["config"].get("partition_alpha"), c["config"].get("partition_beta"))
                  for c in cells]
    assert partitions == [("iid", None, None), ("shards", 2, None), ("dirichlet", None, 0.1)]
    for c in cells:
        assert c["config"]["method"] == "fedavg" and c["config"]["dataset"] == "fmnist"  # smoke's stand-in
        assert c["config"]["rounds"] == 2 and c["config"]["lr"] == paper.SETUP["lr"]


def test_analysis_cells_hold_one_seeded_global_model():
    for name, rounds in (("fig2", 2), ("fig6", 2), ("deviation", 1)):
        (cell,) = PAPER.study(name).cells(SMOKE)
        cfg = cell["config"]
        assert cfg["method"] == "fedavg" and cfg["rounds"] == rounds and cfg["seed"] == 0
        assert cfg["partition"] == "dirichlet"
    assert PAPER.study("fig2").cells(SMOKE)[0]["config"]["num_clients"] == 5
    (gated,) = PAPER.study("fig6").cells(PAPER.profile("paper"))  # no GPU here
    assert gated["config"] is None and gated["note"].startswith("not run")


def test_calibration_cells():
    cells = PAPER.study("calibration").cells(QUICK)
    opts = PAPER.study("calibration").options_for(QUICK)
    assert len(cells) == len(opts.settings) * (2 + len(C.CALIBRATION_VARIANTS))
    eq7 = next(c for c in cells if c["variant"] == "eq7_printed")
    assert eq7["config"]["method"] == "fedlc" and eq7["config"]["fedlc_denominator"] == "exclude_true"
    sweep = PAPER.study("calibration_tau").cells(SMOKE)
    taus = [(c["variant"], c["tau"]) for c in sweep if c["variant"] not in ("fedavg", "fedrs")]
    assert taus == [("standard", 0.3), ("standard", 1.0), ("log_prior", 0.3), ("log_prior", 1.0)]
    assert all(c["config"]["tau"] == c["tau"] for c in sweep if c["variant"] not in ("fedavg", "fedrs"))


def test_fig1_summary_and_findings_from_a_hand_made_grid():
    runs = pd.DataFrame([{"setting": s, "kind": k, "order": i, "seed": 0, "status": "ok", "note": "",
                          "accuracy": a, "dataset_used": "fmnist"}
                         for i, (s, k, a) in enumerate([("IID", "IID", 80.0), ("Q(α=2)", "Q(α)", 50.0),
                                                        ("D(β=0.2)", "D(β)", 70.0)])])
    summary = S.fig1_summary(GridResult(runs, pd.DataFrame(), ["setting", "kind", "order"]), None)
    assert summary["accuracy"].drop_vs_iid.tolist() == [0.0, 30.0, 10.0]
    claims = summary["claims"].set_index("claim")
    assert claims.ours_pp.tolist() == [30.0, 10.0]
    assert claims.delta.tolist() == pytest.approx([30.0 - 26.07, 10.0 - 13.97])
    assert S.fig1_findings(summary, None) == ["FedAvg loses 30.0 pp vs IID at Q(α=2) (paper: 26.07)",
                                              "FedAvg loses 10.0 pp vs IID at D(β=0.2) (paper: 13.97)"]


def test_calibration_findings_from_a_hand_made_summary():
    variants = pd.DataFrame({"variant": ["fedavg", "fedrs", "standard", "eq7_printed"],
                             "label": [C.CALIBRATION_LABELS[v] for v in ("fedavg", "fedrs", "standard", "eq7_printed")],
                             "mean gain over FedAvg": [0.0, 1.0, 2.5, -4.0]})
    table = pd.DataFrame(index=[0], columns=["D(β=0.1)", "Q(α=2)"])
    var = pd.DataFrame({"label": ["x"], "setting": ["D(β=0.1)"], "status": ["diverged"], "note": ["diverged: nan"]})
    lines = C.variant_findings({"variants": variants, "table": table, "var": var}, None)
    assert lines[0] == (f"best FedLC variant: {C.CALIBRATION_LABELS['standard']} (+2.50 pp over FedAvg on average "
                        "over D(β=0.1), Q(α=2))")
    assert lines[1] == "Eq. 7 as printed: -4.00 pp over FedAvg vs +2.50 pp for the standard (full softmax) form"
    assert lines[2] == "x / D(β=0.1): diverged: nan (a broken model's accuracy: left out of the table)"


def test_client_roles_keep_fedlc_labels():
    assert client_roles([0, 100, 40, 60, 5]) == ["missing", "majority", "minority", "majority", "minority"]
    assert client_roles([0, 100, 50, 49]) == ["missing", "majority", "majority", "minority"]  # ½ inclusive
    assert client_roles([3, 0], majority_fraction=1.0) == ["majority", "missing"]


def test_skew_label():
    assert [skew_label(k) for k in ("cifar10_iid", "cifar10_alpha2", "cifar10_beta0.05")] == \
        ["IID", "Q(α=2)", "D(β=0.05)"]
