"""The stand-in check (notebook 06): the same Table 1/2 cells on the profile's
stand-in and on CIFAR-10 itself, and the effects compared by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from fedlib.papers.fedlc import stand_in as SI
from fedlib.config import Config
from fedlib.papers.fedlc import reported as paper
from fedlib.papers.fedlc import PAPER
from fedlib.repro.artefacts.tables import grid_cells
from fedlib.repro.run.grid import GridResult


def _cells(profile):
    """The stand-in study's cells under ``profile``."""
    return PAPER.study("stand_in").cells(PAPER.profile(profile))


def _strip(cfg):
    return {k: v for k, v in cfg.items() if k not in ("dataset", "model")}


def test_quick_cells_share_the_tables_runs_and_differ_only_in_dataset_and_model():
    q = PAPER.profile("quick")
    opts = q.experiment("stand_in")
    cells = _cells(q)
    settings, methods = opts["settings"], opts["methods"]
    skewed = [s for s in settings if not s.endswith("iid")]
    assert len(cells) == 2 * (1 + len(skewed) * len(methods))
    table_cfg = {(c["column"], c["row"]): c["config"] for t in ("table1", "table2") for c in grid_cells(q, t)}
    fig1_cfg = {c["setting"]: c["config"] for c in PAPER.study("fig1").cells(q)}
    by_key = {}
    for c in cells:
        by_key.setdefault((c["column"], c["method"]), {})[c["trained_on"]] = c["config"]
    for (column, method), pair in by_key.items():
        stand_in, real = pair[SI.STAND_IN], pair[SI.ON_CIFAR10]
        # the stand-in run is exactly the table's (or Fig. 1's) run, so the store shares it
        expected = fig1_cfg["IID"] if column.endswith("iid") else table_cfg[(column, method)]
        assert stand_in == expected
        assert stand_in["dataset"] == q.dataset("cifar10") != "cifar10"
        assert real["dataset"] == "cifar10" and real["model"] == opts["overrides"]["model"]
        assert _strip(real) == _strip(stand_in)
        Config(**real)  # a valid configuration
    assert {m for (col, m) in by_key if col.endswith("iid")} == {"fedavg"}


def test_no_check_when_the_profile_trains_on_cifar10():
    assert _cells("paper") == []
    import dataclasses

    q = PAPER.profile("quick")
    assert _cells(dataclasses.replace(q, datasets={})) == []


def test_quick_deviations_name_the_model_and_not_a_substitution():
    devs = PAPER.profile("quick").deviations("stand_in")
    assert any(d.startswith("model cnn_mnist") and "Table 9 CNN" in d for d in devs)
    assert not any("replaced by" in d for d in devs)
    assert any("communication rounds" in d for d in devs)


def _fake_grid(rng):
    """Random accuracies for every (cell, seed) of the quick check, with a NaN run."""
    rows = []
    for c in _cells("quick"):
        for seed in (0, 1):
            rows.append({k: v for k, v in c.items() if k not in ("config", "note")}
                        | {"seed": seed, "status": "ok", "note": "", "accuracy": float(rng.uniform(10, 90)),
                           "wall_time_s": 1.0, "key": "k", "dataset_used": c["config"]["dataset"]})
    runs = pd.DataFrame(rows)
    return GridResult(runs, pd.DataFrame(), ["setting", "column", "source", "method", "trained_on"])


def test_comparison_against_a_loop_over_the_runs():
    rng = np.random.default_rng(3)
    grid = _fake_grid(rng)
    acc, effects = SI.stand_in_comparison(grid)
    runs = grid.runs

    def mean(setting, method, trained_on):
        vals = [r.accuracy for r in runs.itertuples() if r.setting == setting and r.method == method
                and r.trained_on == trained_on]
        return sum(vals) / len(vals) if vals else math.nan

    assert len(acc) == 1 + 3 * 3
    for _, r in acc.iterrows():
        method = next(k for k, v in paper.METHOD_LABELS.items() if v == r.method)
        for col in (SI.STAND_IN, SI.ON_CIFAR10):
            assert r[col] == pytest.approx(mean(r.setting, method, col))
        if r.source == "fig1":
            assert math.isnan(r.paper)
        else:
            f = paper.table(r.source).frame()
            assert r.paper == f[(f.column == r.column) & (f.row == method)].paper_mean.iloc[0]

    row = effects[(effects.setting == "D(β=0.1)") & (effects.effect == "FedLC − FedAvg")].iloc[0]
    for col in (SI.STAND_IN, SI.ON_CIFAR10):
        assert row[col] == pytest.approx(mean("D(β=0.1)", "fedlc", col) - mean("D(β=0.1)", "fedavg", col))
    assert row.paper == pytest.approx(65.91 - 48.07)  # Table 1, CIFAR-10 β=0.1
    assert row["same sign"] == (np.sign(row[SI.STAND_IN]) == np.sign(row[SI.ON_CIFAR10]))

    drop = effects[(effects.setting == "Q(α=2)") & (effects.effect.str.startswith("FedAvg drop"))].iloc[0]
    assert drop.paper == 26.07  # Fig. 1's stated drop at α = 2
    for col in (SI.STAND_IN, SI.ON_CIFAR10):
        assert drop[col] == pytest.approx(mean("IID", "fedavg", col) - mean("Q(α=2)", "fedavg", col))
    assert math.isnan(effects[(effects.setting == "D(β=0.5)")
                              & effects.effect.str.startswith("FedAvg drop")].paper.iloc[0])
    # 3 skewed settings × (FedLC − FedAvg, FedLC − FedRS, drop from IID)
    assert len(effects) == 9

    lines = SI.stand_in_findings(effects, "fmnist")
    assert len(lines) == 3 and all("stand-in check" in line for line in lines)
    n_agree = int(effects[effects.effect == "FedLC − FedRS"]["same sign"].astype(bool).sum())
    assert f"in {n_agree} of 3" in lines[1]


def test_plot_effects_one_panel_per_effect_one_bar_per_source():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fedlib.repro.artefacts import figures as F

    _, effects = SI.stand_in_comparison(_fake_grid(np.random.default_rng(0)))
    fig = F.plot_effects(effects, sources=["paper", SI.STAND_IN, SI.ON_CIFAR10])
    axes = fig.axes
    assert len(axes) == effects.effect.nunique()
    heights = sorted(round(p.get_height(), 6) for p in axes[0].patches if p.get_height() == p.get_height()
                     and p.get_width() > 0)
    first = effects[effects.effect == effects.effect.iloc[0]]
    expected = sorted(round(v, 6) for v in first[["paper", SI.STAND_IN, SI.ON_CIFAR10]].to_numpy().ravel()
                      if not math.isnan(v))
    assert heights == expected
    plt.close(fig)
