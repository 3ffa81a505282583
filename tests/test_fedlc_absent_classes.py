"""FedLC's classes with n_y = 0 (issue 35): the readings the public code uses, the study that runs them
beside fedlib's default, and the deviation row that names them."""

import pandas as pd
import pytest
import torch

from fedlib.losses import calibration_offsets, fedlc_loss
from fedlib.papers.fedlc import PAPER
from fedlib.papers.fedlc import absent_classes as A
from fedlib.papers.fedlc.calibration import CALIBRATION_VARIANTS
from fedlib.papers.fedlc.deviations import DEVIATIONS
from fedlib.repro.run.grid import GridResult

SMOKE, QUICK = PAPER.profile("smoke"), PAPER.profile("quick")


def test_fl_bench_offset_is_minus_100_tau_and_equals_the_mask_in_float32():
    counts = torch.tensor([500.0, 30.0, 7.0, 1.0, 0.0, 0.0])
    offsets = calibration_offsets(counts, 2.0, min_count=1e-8)
    assert offsets[4].item() == pytest.approx(-200.0)  # −τ·(1e-8)^(−1/4) = −100τ
    assert offsets[3].item() == pytest.approx(-2.0)  # a present class is untouched by the floor
    torch.manual_seed(0)
    logits, targets = torch.randn(64, 6), torch.randint(0, 4, (64,))
    mask = fedlc_loss(logits, targets, counts, 1.0, missing="mask", reduction="none")
    fl_bench = fedlc_loss(logits, targets, counts, 1.0, min_count=1e-8, reduction="none")
    clamp = fedlc_loss(logits, targets, counts, 1.0, reduction="none")
    assert torch.equal(fl_bench, mask)  # e^(−100) vanishes beside the present classes' terms
    # the default keeps the absent classes in the softmax at offset −τ: −log softmax over every class
    reference = -torch.log_softmax(logits - counts.clamp_min(1.0).pow(-0.25), -1).gather(1, targets[:, None])[:, 0]
    assert torch.allclose(clamp, reference) and (clamp - mask).abs().min() > 1e-3


def test_the_quick_profile_runs_each_reading_beside_fedavg_in_the_calibration_settings():
    study = PAPER.study("absent_classes")
    opts = study.options_for(QUICK)
    assert opts.settings == QUICK.experiment("calibration")["settings"] and opts.readings == ("clamp", "fl_bench", "mask")
    cells = study.cells(QUICK)
    assert [c["variant"] for c in cells] == ["fedavg", "clamp", "fl_bench", "mask"] * len(opts.settings)
    configs = {(c["column"], c["variant"]): c["config"] for c in cells}
    calibration = {(c["column"], c["variant"]): c["config"] for c in PAPER.study("calibration").cells(QUICK)}
    for key in opts.settings:  # FedAvg, clamp and mask are the calibration study's own runs (one store entry each)
        assert configs[key, "fedavg"] == calibration[key, "fedavg"]
        assert configs[key, "clamp"] == calibration[key, "standard"]
        assert configs[key, "mask"] == calibration[key, "standard_mask"]
        fl_bench = configs[key, "fl_bench"]
        assert fl_bench["fedlc_min_count"] == 1e-8 and fl_bench["fedlc_missing"] == "clamp"
        assert {k: v for k, v in fl_bench.items() if k != "fedlc_min_count"} == configs[key, "clamp"]
    assert A.FACES_PAPER == "mask" and "faces the paper" in A.LABELS["mask"]
    assert CALIBRATION_VARIANTS["standard_mask"] == A.READINGS["mask"]
    assert [c["variant"] for c in study.cells(SMOKE, readings=("mask",))] == ["fedavg", "mask"]


def test_readings_are_refused_by_name():
    with pytest.raises(Exception, match="readings"):
        PAPER.study("absent_classes").options_for(SMOKE, readings=("zero",))
    with pytest.raises(Exception, match="readings"):
        PAPER.study("absent_classes").options_for(SMOKE, readings=())


def test_findings_name_each_reading_the_one_facing_the_paper_and_flower():
    rows = [("fedavg", 60.0, 58.0), ("clamp", 59.0, 57.0), ("fl_bench", 42.0, 40.0), ("mask", 42.0, 40.5)]
    runs = pd.DataFrame([{"variant": v, "label": A.LABELS[v], "setting": s, "tau": 1.0, "seed": 0, "status": "ok",
                          "note": "", "accuracy": a, "dataset_used": "fmnist"}
                         for v, a, b in rows for s, a in (("Q(α=2)", a), ("D(β=0.1)", b))])
    grid = GridResult(runs, pd.DataFrame(), ["variant", "label", "setting", "tau"])
    study = PAPER.study("absent_classes")
    summary = study.summarize(grid, study.options_for(QUICK))
    lines = study.findings(summary, study.options_for(QUICK))
    assert lines[0] == f"{A.LABELS['clamp']}: -1.00 pp over FedAvg (mean over Q(α=2), D(β=0.1))"
    assert lines[2] == f"{A.LABELS['mask']}: -17.75 pp over FedAvg (mean over Q(α=2), D(β=0.1))"
    assert lines[3] == ("the reading that faces the paper (the mask) against fedlib's default: -16.75 pp; "
                        "no reading beats FedAvg")
    assert lines[4] == "FL-bench's n_s = 1e-8 against the mask: largest accuracy difference 0.50 pp"
    assert lines[5] == ("Flower's FedLC baseline (README), CIFAR-10 Dir(0.05) (mask): FedAvg 68.11, FedLC 62.51 "
                        "(-5.60 pp)")


def test_the_deviation_row_names_what_the_public_code_does():
    row = next(d for d in DEVIATIONS if d["what"] == "classes with n_y = 0")
    for name in ("Flower", "fluke", "FedDecorr", "FL-bench", "PFLlib"):
        assert name in row["code"], name
    assert "fedlc_missing='mask'" in row["param"] and "fedlc_min_count=1e-8" in row["param"]
    assert "absent_classes" in row["fedlib"]
