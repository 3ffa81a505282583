"""The gap figure (fedlib.repro.artefacts.gap_curves): ours paired seed by seed, the paper's a difference of its
means, a probable typo of the paper's left out, and a figure the rules accept."""

import json

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from fedlib.repro.artefacts import figure_rules as fr  # noqa: E402
from fedlib.repro.artefacts.gap_curves import gap_caption, gap_frame, plot_gaps  # noqa: E402


def _cell(method, x, seeds, paper, suspect=""):
    vals = list(seeds.values())
    return {"column": "c10", "method": method, "row": method, "beta": x, "dataset": "cifar10",
            "dataset_used": "fmnist", "paper_mean": paper, "ours_mean": float(np.mean(vals)) if vals else np.nan,
            "ours_std": float(np.std(vals, ddof=1)) if len(vals) > 1 else np.nan, "n_seeds": len(vals),
            "ours_seeds": json.dumps({str(k): v for k, v in seeds.items()}), "suspect": suspect}


def test_ours_is_paired_over_the_common_seeds_and_a_suspect_paper_value_makes_no_gap():
    frame = pd.DataFrame([
        _cell("fedavg", 0.1, {0: 50.0, 1: 40.0, 2: 30.0}, 60.0), _cell("fedlc", 0.1, {0: 53.0, 1: 41.0}, 70.0),
        _cell("fedavg", 0.5, {0: 70.0}, 80.0), _cell("fedlc", 0.5, {0: 69.0}, 95.0, suspect="typo?"),
        _cell("held/fedlc", 0.5, {0: 1.0}, 1.0)])  # a reading, not a method's own row: no gap of its own
    gaps = gap_frame(frame, x="beta", baseline="fedavg").set_index("beta")
    # seeds 0 and 1 pair: differences 3 and 1 (seed 2 has no FedLC value); the unpaired means would give +7.0
    d = np.array([53.0 - 50.0, 41.0 - 40.0])
    assert gaps.loc[0.1, "ours_gap"] == pytest.approx(d.mean()) and gaps.loc[0.1, "n_seeds"] == 2
    assert gaps.loc[0.1, "ours_gap_std"] == pytest.approx(d.std(ddof=1))
    assert gaps.loc[0.1, "paper_gap"] == pytest.approx(10.0)
    assert gaps.loc[0.5, "ours_gap"] == pytest.approx(-1.0) and np.isnan(gaps.loc[0.5, "ours_gap_std"])
    assert np.isnan(gaps.loc[0.5, "paper_gap"]) and len(gaps) == 2
    with pytest.raises(ValueError, match="baseline must be a method"):
        gap_frame(frame, x="beta", baseline="fedprox")


def test_the_gap_figure_obeys_the_rules_and_its_caption_names_the_seeds():
    frame = pd.DataFrame([_cell("fedavg", b, {0: 50.0 + b, 1: 48.0 + b}, 60.0) for b in (0.1, 0.5)]
                         + [_cell("fedlc", b, {0: 52.0 + b, 1: 49.0 + b}, 70.0) for b in (0.1, 0.5)])
    fig, gaps = plot_gaps(frame, x="beta", baseline="fedavg", x_log=True)
    caption = gap_caption(gaps, "FedAvg")
    assert "std over 2 seeds" in caption
    assert "run on FMNIST" in fig.axes[0].get_title()
    assert fr.check_figure(fig, caption=caption, seeds=2) == {rule: True for rule in fr.RULES}


def test_panels_over_different_seeds_each_have_their_count_in_the_caption():
    """FedABC quick Table 1's gaps: decide gave MNIST 7-9 seeds and CIFAR-10 (on FMNIST) kept 3; a caption of the
    largest count alone broke the CIFAR-10 panel's rule, so the figure was not saved."""
    def panel(column, seeds):
        return [{**_cell(m, b, {k: 50.0 + b + k * (m == "fedlc") for k in range(seeds)}, 60.0), "column": column}
                for m in ("fedavg", "fedlc") for b in (0.1, 0.5)]

    fig, gaps = plot_gaps(pd.DataFrame(panel("mnist", 7) + panel("c10", 3)), x="beta", baseline="fedavg",
                          panel_labels={"mnist": "MNIST", "c10": "CIFAR-10"})
    caption = gap_caption(gaps, "FedAvg")
    assert "std over 7 seeds in MNIST; std over 3 seeds in CIFAR-10" in caption
    assert fr.check_figure(fig, caption=caption, seeds=7) == {rule: True for rule in fr.RULES}


def test_a_panel_of_the_papers_gaps_alone_says_why_ours_is_absent():
    """A "paper only" panel gave no reason where the curves beside it did (FedLC paper Table 1, 2026-11-29)."""
    ran = [_cell(m, b, {0: 50.0 + b + (m == "fedlc"), 1: 48.0 + b}, 60.0) for m in ("fedavg", "fedlc") for b in (0.1, 0.5)]
    absent = [{**_cell(m, b, {}, 60.0 + (m == "fedlc")), "column": "svhn", "dataset": "svhn", "dataset_used": "svhn",
               "note": "not run: SVHN is absent here (no files under the data root)"}
              for m in ("fedavg", "fedlc") for b in (0.1, 0.5)]
    fig, _ = plot_gaps(pd.DataFrame(ran + absent), x="beta", baseline="fedavg")
    titles = [ax.get_title() for ax in fig.axes]
    assert "paper only" in titles[1] and "SVHN absent here" in titles[1], titles
    assert "paper only" not in titles[0]
