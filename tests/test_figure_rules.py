"""The figure rules (fedlib.repro.artefacts.figure_rules): each one on a small figure made to break it
(save_figure refuses it, naming the rule and the axes, and writes nothing), the same figure
mended, and a figure that obeys all of them (its sidecar records every check)."""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from fedlib.repro.artefacts import figure_rules as fr  # noqa: E402
from fedlib.repro.artefacts.figure_checks_data import DATA_RULES  # noqa: E402
from fedlib.repro.artefacts.saving import save_figure  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _refused(fig, error, tmp_path, **kw):
    with pytest.raises(error) as info:
        save_figure(fig, "f", tmp_path, **kw)
    assert not list(tmp_path.glob("f.*"))  # nothing written
    return info.value


# ------------------------------------------------------------------ values within the axes
def test_a_bar_below_the_y_axis_is_refused_and_the_axes_named(tmp_path):
    fig, (a, b) = plt.subplots(1, 2)
    a.bar([0, 1], [10, 20])
    b.bar([0, 1], [50.6, 58.0])
    b.set_title("FMNIST #C=2")
    b.set_ylim(57, 60)  # hides the 50.6 bar and cuts every bar's bottom
    err = _refused(fig, fr.ValueOutsideAxes, tmp_path)
    assert err.rule == "values_within_axes" and "axes 2 'FMNIST #C=2'" in str(err)
    assert "bottom y = 0" in str(err) and all(a_ == "axes 2 'FMNIST #C=2'" for _, a_, _ in err.violations)


def test_a_broken_axis_may_cut_bar_bottoms_but_not_tops(tmp_path):
    fig, ax = plt.subplots()
    ax.bar([0, 1], [75.2, 75.4])
    ax.set_ylim(75, 76)
    with pytest.raises(fr.ValueOutsideAxes, match="do not start at 0"):
        fr.check_figure(fig)
    fr.mark_broken_axis(ax, "y")
    assert fr.check_figure(fig)["values_within_axes"]
    ax.set_ylim(75, 75.3)  # now the 75.4 top is hidden
    with pytest.raises(fr.ValueOutsideAxes, match="top y = 75.4"):
        fr.check_figure(fig)


def test_a_line_vertex_or_error_bar_end_outside_the_limits_is_refused():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [10, 20, np.nan])  # (3, NaN) is not drawn: ignored
    ax.set_ylim(0, 25)
    assert fr.check_figure(fig)["values_within_axes"]
    ax.set_xlim(1.5, 3)
    with pytest.raises(fr.ValueOutsideAxes, match="x = 1 outside"):
        fr.check_figure(fig)
    fig, ax = plt.subplots()
    ax.errorbar([1, 2], [10, 20], yerr=[1, 6], fmt="o")
    ax.set_ylim(0, 24)  # 20 + 6 = 26 is cut
    with pytest.raises(fr.ValueOutsideAxes, match="error bar end"):
        fr.check_figure(fig, seeds=3, caption="std over 3 seeds")


def test_a_filled_band_or_a_heatmap_cut_by_the_limits_is_refused():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [10, 12, 14], color="C0")
    ax.fill_between([1, 2, 3], [8, 10, 12], [12, 14, 19], color="C0", alpha=0.2)  # min-max band of the seeds
    ax.set_ylim(0, 20)
    assert fr.check_figure(fig)["values_within_axes"]
    ax.set_ylim(0, 18)  # the band's top at 19 is cut, the line is not
    with pytest.raises(fr.ValueOutsideAxes, match="filled area"):
        fr.check_figure(fig)
    fig, ax = plt.subplots()
    ax.pcolormesh(np.arange(4), np.arange(3), np.ones((2, 3)))  # a 3 × 2 heatmap on [0, 3] × [0, 2]
    assert fr.check_figure(fig)["values_within_axes"]
    ax.set_xlim(0, 2)  # its last column is hidden
    with pytest.raises(fr.ValueOutsideAxes, match="heatmap cell"):
        fr.check_figure(fig)
    fig, ax = plt.subplots()
    ax.imshow(np.ones((2, 3)))
    assert fr.check_figure(fig)["values_within_axes"]
    ax.set_ylim(0.5, -0.5)  # the image's second row is hidden
    with pytest.raises(fr.ValueOutsideAxes, match="image edge"):
        fr.check_figure(fig)


def test_log_axes_compare_in_log_space():
    fig, ax = plt.subplots()
    ax.plot([100, 400, 1000], [1, 2, 3])
    ax.set_xscale("log")
    ax.set_xlim(50, 2000)
    assert fr.check_figure(fig)["values_within_axes"]
    ax.set_xlim(200, 2000)
    with pytest.raises(fr.ValueOutsideAxes):
        fr.check_figure(fig)


# ------------------------------------------------------------------ stand-ins named
def test_an_axes_with_a_stand_in_must_name_it_in_title_or_legend(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4], label="FedAvg")
    ax.set_title("CIFAR-10 #C=2")  # the paper's dataset only
    fr.declare(ax, stand_in="fmnist")
    err = _refused(fig, fr.StandInUnnamed, tmp_path)
    assert "fmnist" in str(err) and "CIFAR-10 #C=2" in str(err)
    ax.set_title("CIFAR-10 #C=2 (run on FashionMNIST)")  # an alias of the token counts
    assert fr.check_figure(fig)["stand_in_named"]
    ax.set_title("CIFAR-10 #C=2")
    ax.legend(title="run on FMNIST", loc="lower right")  # so does the legend
    assert fr.check_figure(fig)["stand_in_named"]


# ------------------------------------------------------------------ cells labelled
def test_a_declared_diverged_or_not_run_cell_needs_its_label(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([100, 200], [60, 62], marker="o")
    fr.declare(ax, cells={"FEDIC @ 400": "diverged", "FEDIC @ 800": "not run"})
    err = _refused(fig, fr.CellUnlabelled, tmp_path)
    assert "diverged (FEDIC @ 400)" in str(err) and "not run (FEDIC @ 800)" in str(err)
    fr.label_cell(ax, 150, 60, "diverged", key="FEDIC @ 400")  # labels the declared cell
    with pytest.raises(fr.CellUnlabelled, match="not run"):
        fr.check_figure(fig)
    ax.text(200, 55, "not run")
    assert fr.check_figure(fig)["cells_labelled"]
    # another diverged cell, still one label -> refused again
    fr.declare(ax, cells={"FedAvg @ 400": "diverged"})
    with pytest.raises(fr.CellUnlabelled, match="2 cell"):
        fr.check_figure(fig)


def test_a_zero_bar_needs_a_value_label_and_a_missing_bar_a_label():
    fig, ax = plt.subplots()
    ax.bar([0, 1, 2], [3.0, 0.0, np.nan])
    with pytest.raises(fr.CellUnlabelled) as info:
        fr.check_figure(fig)
    assert "height 0" in str(info.value) and "drawn as nothing" in str(info.value)
    ax.text(1, 0, "0.0", ha="center")
    ax.text(2, 0, "not run", ha="center")
    ax.set_xlim(-0.5, 2.5)  # the NaN bar's place: matplotlib's limits leave it out
    assert fr.check_figure(fig)["cells_labelled"]
    fig, ax = plt.subplots()
    ax.bar([0, 1], [3.0, 0.0])
    ax.text(0, 3.0, "0.0", ha="center")  # over the other bar: does not label the zero one
    with pytest.raises(fr.CellUnlabelled):
        fr.check_figure(fig)


def test_an_axes_without_our_results_says_paper_only(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [50, 55], ls="--")
    ax.set_title("SVHN")
    fr.declare(ax, ours=False)
    _refused(fig, fr.CellUnlabelled, tmp_path)
    ax.set_title("SVHN (paper only)")
    assert fr.check_figure(fig)["cells_labelled"]


def test_a_suspect_paper_value_needs_its_dagger():
    fig, ax = plt.subplots()
    ax.plot([0.1, 1.0], [80, 83.7], ls="--")
    fr.declare(ax, cells={"Local-only @ Dir(1.0)": "suspect"})
    with pytest.raises(fr.CellUnlabelled, match="suspect"):
        fr.check_figure(fig)
    ax.annotate("83.7 †", (1.0, 83.7))
    assert fr.check_figure(fig)["cells_labelled"]


def test_bad_declarations_are_refused_naming_the_parameter():
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match=r"cells\['a'\]: status must be one of"):
        fr.declare(ax, cells={"a": "broken"})
    with pytest.raises(ValueError, match="seeds must be"):
        fr.declare(ax, seeds=0)
    with pytest.raises(ValueError, match="axis must be"):
        fr.mark_broken_axis(ax, "z")
    with pytest.raises(ValueError, match="waive: unknown rule"):
        fr.check_figure(fig, waive={"nice_colours": "why not"})


# ------------------------------------------------------------------ series distinct
def test_two_series_with_one_colour_style_and_marker_are_refused(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], color="C0", label="FedAvg")
    ax.plot([1, 2], [2, 3], color="C0", label="FedABC")
    err = _refused(fig, fr.SeriesAlike, tmp_path)
    assert "'FedABC' and 'FedAvg'" in str(err)
    ax.lines[1].set_linestyle("--")  # another line style tells them apart
    assert fr.check_figure(fig)["series_distinct"]
    ax.plot([1, 2], [0.5, 1.5], color="C0", label="FedAvg")  # the same series again (one label): allowed
    assert fr.check_figure(fig)["series_distinct"]
    fig, ax = plt.subplots()  # custom dashes (seaborn's style=): matplotlib names each '--'; the pattern tells
    ax.plot([1, 2], [1, 2], color="C0", dashes=(4, 1.5), label="_seed1")
    ax.plot([1, 2], [2, 3], color="C0", dashes=(1, 1), label="_seed2")
    assert [ln.get_linestyle() for ln in ax.lines] == ["--", "--"] and fr.check_figure(fig)["series_distinct"]
    ax.lines[1].set_dashes((4, 1.5))
    with pytest.raises(fr.SeriesAlike, match="'_seed1'"):
        fr.check_figure(fig)
    fig, ax = plt.subplots()
    ax.bar([0, 1], [1, 2], width=0.4, color="C1", label="ours")
    ax.bar([0.4, 1.4], [1, 2], width=0.4, color="C1", label="paper")
    with pytest.raises(fr.SeriesAlike, match="bar series"):
        fr.check_figure(fig)


# ------------------------------------------------------------------ legend clear
def test_a_legend_over_bars_is_refused_and_one_outside_passes(tmp_path):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1, 2], [90, 95, 92], label="ours")
    ax.legend(loc="upper left")  # over the first bar
    err = _refused(fig, fr.LegendCoversData, tmp_path)
    assert "covers bar 'ours'" in str(err)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))  # beside the axes
    assert fr.check_figure(fig)["legend_clear"]


def test_a_legend_over_a_line_segment_is_refused_even_between_vertices():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 10], [0, 10], label="a")
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    # a figure legend placed in the middle of the axes, where the diagonal has no vertex
    fig.legend(loc="center", bbox_to_anchor=(0.5, 0.5), bbox_transform=ax.transAxes)
    with pytest.raises(fr.LegendCoversData, match="the figure"):
        fr.check_figure(fig)


# ------------------------------------------------------------------ error bars
def test_error_bars_need_two_seeds_and_the_caption(tmp_path):
    fig, ax = plt.subplots()
    ax.errorbar([1, 2], [50, 55], yerr=[0, 0], marker="o")  # zero-height caps from one seed
    err = _refused(fig, fr.ErrorBarsWithoutSeeds, tmp_path, seeds=[0], caption="std over seeds")
    assert "1 seed" in str(err)
    _refused(fig, fr.ErrorBarsWithoutSeeds, tmp_path, seeds=[0, 1, 2], caption="std over seeds")
    paths = save_figure(fig, "f", tmp_path, seeds=[0, 1, 2], caption="Error bars: std over 3 seeds.")
    assert json.loads(paths["json"].read_text())["figure_checks"]["error_bars_seeds"] is True
    fig, ax = plt.subplots()
    ax.errorbar([1, 2], [50, 55], yerr=[1, 1])
    with pytest.raises(fr.ErrorBarsWithoutSeeds, match="not known"):
        fr.check_figure(fig)
    fr.declare(ax, seeds=2)  # an axes' own seeds win over the figure's
    assert fr.check_figure(fig, seeds=1, caption="std over 2 seeds")["error_bars_seeds"]
    fig, ax = plt.subplots()
    ax.errorbar([1, 2], [50, 55], marker="o")  # no yerr: no error bars, nothing to say
    assert fr.check_figure(fig, seeds=1)["error_bars_seeds"]


# ------------------------------------------------------------------ a passing figure, a waiver
def test_a_figure_that_obeys_every_rule_records_every_check(tmp_path):
    fig, (a, b) = plt.subplots(1, 2, figsize=(7, 3))
    a.bar([0, 1, 2], [52.0, 0.0, np.nan], color=["C0", "C0", "C0"], label="FedAvg")
    a.text(1, 0, "0.0", ha="center", va="bottom")
    a.text(2, 0, "diverged", ha="center", va="bottom")
    a.set_ylim(0, 100)
    a.set_xlim(-0.5, 2.5)
    a.set_title("CIFAR-10 (run on FMNIST)")
    fr.declare(a, stand_in="fmnist", cells={"FedAvg @ 2": "diverged", "FedAvg @ 1": "zero"})
    b.plot([1, 2], [50, 57], ls="--", marker="o", mfc="none", color="C0", label="FedAvg")
    b.plot([1, 2], [48, 58], ls="--", marker="o", mfc="none", color="C1", label="FedLC")
    b.set_title("SVHN (paper only)")
    fr.declare(b, ours=False)
    fig.legend(loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2)
    paths = save_figure(fig, "ok", tmp_path, title="t", caption="one seed, Dir(0.5)", seeds=[0])
    side = json.loads(paths["json"].read_text())
    assert side["figure_checks"] == {rule: True for rule in fr.RULES + DATA_RULES}
    assert paths["png"].exists() and paths["pdf"].exists() and "figure_waivers" not in side


def test_a_waived_rule_saves_and_is_recorded_false(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [1, 2], color="C0", label="a")
    ax.plot([1, 2], [2, 3], color="C0", label="b")
    ax.set_ylim(1.5, 3)  # also breaks values_within_axes, not waived
    with pytest.raises(fr.ValueOutsideAxes) as info:
        save_figure(fig, "w", tmp_path, waive={"series_distinct": "fixed in issue 23 phase 2"})
    assert {r for r, _, _ in info.value.violations} == {"values_within_axes"}
    ax.set_ylim(0.5, 3)
    paths = save_figure(fig, "w", tmp_path, waive={"series_distinct": "fixed in issue 23 phase 2"})
    side = json.loads(paths["json"].read_text())
    assert side["figure_checks"]["series_distinct"] is False and side["figure_checks"]["values_within_axes"]
    assert side["figure_waivers"] == {"series_distinct": "fixed in issue 23 phase 2"}


def test_label_empty_bars_labels_exactly_the_bars_that_draw_nothing():
    fig, ax = plt.subplots()
    ax.bar([0, 1, 2, 3], [5.0, 0.0, np.nan, 2.0])
    ax.barh([0, 1], [0.0, 1.0])
    assert fr.label_empty_bars(ax, missing="diverged") == 3
    assert sorted(t.get_text() for t in ax.texts) == ["0", "0", "diverged"]
    assert fr.check_figure(fig)["cells_labelled"]


def test_bars_on_a_log_axis_rise_from_its_bottom():
    fig, ax = plt.subplots()
    ax.bar([0, 1, 2], [5000, 500, 50])
    ax.set_yscale("log")
    assert fr.check_figure(fig)["values_within_axes"]
    ax.set_ylim(100, 10000)  # hides the 50 bar's top
    with pytest.raises(fr.ValueOutsideAxes, match="top y = 50"):
        fr.check_figure(fig)


def test_a_figure_of_the_papers_values_alone_stamps_no_seeds(tmp_path):
    """A figure where nothing of ours trained (``datasets=[]``) said "seeds 0, 1, 2" under the paper's curves
    (FedConcat paper Table 2, 2026-11-28); one that trained keeps the profile's seeds."""
    from fedlib.repro.artefacts.context import Context

    ctx = Context("smoke", notebook="fedlc/01_motivation", out_dir=tmp_path)
    for name, datasets in (("paper_only", []), ("ours", ["fmnist"])):
        fig, ax = plt.subplots()
        ax.plot([1, 2], [3, 4])
        ax.set_title("FMNIST")
        fr.declare(ax, stand_in=[] if not datasets else ["FMNIST"])
        ctx.save_figure(fig, name, experiment="fig1", datasets=datasets)
        side = json.loads((tmp_path / f"{name}.json").read_text())
        stamp = " ".join(t.get_text() for t in fig.texts)
        assert (side["seeds"] == []) == (name == "paper_only") and ("seed" in stamp) == (name == "ours"), stamp


def _table_figure_stamp(ctx) -> str:
    """The stamp under a figure of ``ctx``'s Table 1 (reproduced first, so that the stamp reads its cells)."""
    ctx.table("table1")
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    ax.set_title("FMNIST")
    fr.declare(ax, stand_in=["FMNIST"])
    ctx.save_figure(fig, "t", experiment="table1", datasets=["fmnist"])
    return " ".join(t.get_text() for t in fig.texts)


def test_a_table_figure_stamps_the_seeds_its_cells_hold_not_the_profiles(tmp_path, monkeypatch):
    """A paper table whose GPU cells hold seeds 0 and 1 said "seeds 0, 1, 2, 3, 4" (the profile's) under its curve
    (FedLC paper Table 1, 2026-11-29). The stamp now reads the table's ``ours_seeds``: the seeds every cell that ran
    holds, and how many cells hold fewer (a diverged seed left out, a GPU cell)."""
    import pandas as pd

    from fedlib.repro.artefacts import context as context_mod
    from fedlib.repro.artefacts.context import Context

    frame = pd.DataFrame({"ours_seeds": ['{"0": 1.0, "1": 2.0}', '{"0": 1.0, "1": 2.0, "2": 3.0}', ""]})
    monkeypatch.setattr(context_mod, "reproduce_table", lambda *a, **k: (frame, None))
    stamp = _table_figure_stamp(Context("smoke", notebook="fedlc/01_motivation", out_dir=tmp_path))
    side = json.loads((tmp_path / "t.json").read_text())
    assert side["seeds"] == [0, 1, 2] and side["seeds_fewer"] == [1, 2], side
    assert "seeds 0–2 (1 of the 2 cells that ran holds fewer)" in stamp, stamp
    assert "decide" not in stamp  # nothing was added to decide a claim


def test_seeds_decide_added_to_every_cell_that_ran_are_not_said_to_be_in_some_cells_only(tmp_path, monkeypatch):
    """FEDIC quick's Table 1 figure said "1 seed (0) in every cell that ran; seeds 1, 2 in some cells only" once
    decide had given seeds 1 and 2 to all 12 cells that ran (2026-11-30): where every cell holds a seed decide
    added, the stamp counts it with the others; where only some do, it still says so."""
    import pandas as pd

    from fedlib.repro.artefacts import context as context_mod
    from fedlib.repro.artefacts.context import Context

    out = tmp_path / "out"
    out.mkdir()
    (out / "_decided.jsonl").write_text("".join(
        json.dumps({"table": "table1", "row": r, "column": "c", "seeds": [1, 2]}) + "\n" for r in ("a", "b")))

    def stamp_of(seeds_per_cell):
        frame = pd.DataFrame({"ours_seeds": [json.dumps({str(s): 1.0 for s in seeds}) for seeds in seeds_per_cell]})
        monkeypatch.setattr(context_mod, "reproduce_table", lambda *a, **k: (frame, None))
        return _table_figure_stamp(Context("smoke", notebook="fedlc/01_motivation", out_dir=out, announce=False))

    every = stamp_of([(0, 1, 2), (0, 1, 2)])
    assert "seeds 0–2." in every and "some cells only" not in every, every
    some = stamp_of([(0, 1, 2), (0,)])
    assert "1 seed (0) in every cell that ran; seeds 1, 2 in some cells only" in some, some


def test_the_context_requires_every_data_axes_to_name_the_profiles_stand_ins(tmp_path):
    from fedlib.repro.artefacts.context import Context

    ctx = Context("smoke", notebook="fedlc/01_motivation", out_dir=tmp_path)  # smoke: CIFAR-10 -> FMNIST
    assert ctx.stand_ins(["fmnist", "mnist"]) == ["fmnist"] and ctx.stand_ins(None) == []
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([1, 2], [3, 4])
    a.set_title("CIFAR-10")
    b.plot([1, 2], [3, 4])
    b.set_title("FMNIST")
    fr.declare(b, stand_in=[])  # declared: shows no stand-in
    with pytest.raises(fr.StandInUnnamed) as info:
        ctx.save_figure(fig, "f", datasets=["fmnist"])
    assert [a_ for _, a_, _ in info.value.violations] == ["axes 1 'CIFAR-10'"]
    fig.suptitle("CIFAR-10 run on FMNIST")
    ctx.save_figure(fig, "f", datasets=["fmnist"])
    assert json.loads((tmp_path / "f.json").read_text())["figure_checks"]["stand_in_named"] is True


def _comparison(n_seeds):
    import pandas as pd

    rows = []
    for col, ds, used in (("c10", "cifar10", "fmnist"), ("svhn", "svhn", None)):
        for m, base in (("fedavg", 50.0), ("fedlc", 55.0)):
            for beta in (0.1, 0.5):
                ran = used is not None and not (m == "fedlc" and beta == 0.5)
                rows.append({"column": col, "method": m, "beta": beta, "dataset": ds, "dataset_used": used,
                             "paper_mean": base + 10 * beta, "ours_mean": base - 5 + beta if ran else float("nan"),
                             "ours_std": 0.5 if ran and n_seeds > 1 else float("nan"), "n_seeds": n_seeds if ran else 0,
                             "run_status": "ok" if ran else ("diverged" if used else "not run"),
                             "status": "suspect" if (col, m, beta) == ("svhn", "fedavg", 0.5) else "stand_in"})
    return pd.DataFrame(rows)


def test_plot_paper_vs_ours_obeys_the_rules_it_can_see(tmp_path):
    from fedlib.repro.artefacts.figures import plot_paper_vs_ours, seeds_of, std_caption

    fig = plot_paper_vs_ours(_comparison(1), x="beta")
    a, b = fig.axes
    assert "run on FMNIST" in a.get_title() and b.get_title() == "svhn (paper only)"
    # a paper-only panel whose name does not say the data names the paper's (FedConcat Table 2: "#C=2")
    renamed = plot_paper_vs_ours(_comparison(1), x="beta", panel_labels={"svhn": "#C=2"})
    assert renamed.axes[1].get_title() == "#C=2 (paper only, svhn)"
    assert [t.get_text() for t in a.texts] == ["diverged"] and [t.get_text() for t in b.texts] == [" †"]
    assert not any(c.has_yerr for c in a.containers)  # one seed: no error bars
    assert fr.check_figure(fig, seeds=1) == {rule: True for rule in fr.RULES}
    comp = _comparison(3)
    fig = plot_paper_vs_ours(comp, x="beta")
    assert any(c.has_yerr for c in fig.axes[0].containers)
    with pytest.raises(fr.ErrorBarsWithoutSeeds):
        save_figure(fig, "c", tmp_path, caption="ours vs paper")
    save_figure(fig, "c", tmp_path, caption="ours vs paper. " + std_caption(seeds_of(comp)))


def test_a_series_whose_points_hold_different_seeds_says_which_and_the_stamp_counts_no_cell():
    """FedLC quick Table 5: decide gave E = 5 two more seeds (3 of 3) beside E = 10 and 20 at 1 seed.  The key
    said "FedAvg (1 of 3 seeds)" for the whole curve and the stamp "5 seeds (0, 1, 2, 3, 4)" (the union over
    cells, more than any cell holds).  Now the key says some points are over 1 of 3 seeds, the seeds rule
    passes, and the stamp lists the seeds without counting them as a cell's."""
    from fedlib.repro.artefacts.figures import plot_paper_vs_ours, seeds_of, std_caption

    comp = _comparison(3)
    comp.loc[(comp.method == "fedavg") & (comp.beta == 0.5), ["n_seeds", "ours_std"]] = [1, float("nan")]
    fig = plot_paper_vs_ours(comp, x="beta")
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert "FedAvg (some points: 1 of 3 seeds)" in labels or "fedavg (some points: 1 of 3 seeds)" in labels
    caption = "ours vs paper. " + std_caption(seeds_of(comp))
    assert fr.check_figure(fig, caption=caption, seeds=3)["seeds_marked"]
    # the caption gives the range the key qualifies, not "std over 3 seeds" for every point
    ranged = fr.spread_caption(comp)
    assert "1 to 3" in ranged and "a point of 1 seed has no bar" in ranged, ranged
    assert fr.check_figure(fig, caption="ours vs paper. " + ranged, seeds=3)["seeds_marked"]
    assert fr.spread_caption(_comparison(3)) == std_caption(3)  # every cell over 3: the plain sentence
    assert fr.spread_caption(comp.assign(n_seeds=1)) == ""  # no bar anywhere: no sentence
    # a cell of ours that did not run holds no seeds: it does not widen the range
    assert fr.spread_caption(comp.assign(ours_mean=comp.ours_mean.where(comp.n_seeds > 1))) == std_caption(3)
    from fedlib.repro.artefacts.figure_marks import stamp_setting

    stamp_setting(fig, None, {"profile": "quick", "seeds": (0, 1, 2, 3, 4)})
    assert any(t.get_text() == "Profile: quick; seeds 0–4." for t in fig.texts)


def test_lone_points_of_ours_at_one_x_are_set_apart_and_edged_and_curves_stay_in_place():
    """FedLC Table 1 on a GPU: FedAvg and FedLC ours at β = 0.5 only, their error bars one over the other among
    the paper's markers.  Each lone point is drawn larger and edged, the two either side of 0.5 (a log axis:
    by the same factor), their values unmoved; a curve of ours (several x) keeps its x."""
    import pandas as pd

    from fedlib.repro.artefacts.figures import plot_paper_vs_ours

    rows = [{"column": "c10", "method": m, "beta": b, "paper_mean": p + 10 * b,
             "ours_mean": (o + b) if (m == "fedopt" or b == 0.5) else float("nan"), "ours_std": 1.0, "n_seeds": 2,
             "run_status": "ok", "status": ""}
            for m, p, o in (("fedavg", 50.0, 60.0), ("fedlc", 60.0, 61.0), ("fedopt", 55.0, 50.0))
            for b in (0.1, 0.5)]
    fig = plot_paper_vs_ours(pd.DataFrame(rows), x="beta", x_log=True)
    ours = [ln for ln in fig.axes[0].lines if ln.get_linestyle() == "-" and ln.get_marker() == "o"]
    lone = {round(float(pd.Series(ln.get_ydata()).dropna().iloc[0]), 2): ln for ln in ours
            if pd.Series(ln.get_ydata()).notna().sum() == 1}
    assert set(lone) == {60.5, 61.5} and all(ln.get_markersize() == 7 for ln in lone.values())
    (xa,), (xb,) = (pd.Series(lone[v].get_xdata())[pd.Series(lone[v].get_ydata()).notna()] for v in (60.5, 61.5))
    assert xa < 0.5 < xb and xa * xb == pytest.approx(0.25)  # either side of 0.5, evenly on the log axis
    curve, = [ln for ln in ours if pd.Series(ln.get_ydata()).notna().sum() == 2]
    assert list(curve.get_xdata()) == [0.1, 0.5] and curve.get_markersize() == 4


# ------------------------------------------------------------------ issue 34: what the audit found
@pytest.fixture
def strict(monkeypatch):
    """Every rule raises (none only reported)."""
    monkeypatch.setattr(fr, "REPORT_ONLY", set())


def test_a_line_drawn_exactly_under_another_is_refused(tmp_path, strict):
    rounds = np.arange(1, 21)
    acc = 60 - 40 * np.exp(-rounds / 5)
    fig, ax = plt.subplots()
    ax.plot(rounds, acc, color="C0", label="FedAvg")
    ax.plot(rounds, acc, color="C1", label="FedNova")  # FedNova == FedAvg: only FedNova is seen
    ax.legend(loc="lower right")
    err = _refused(fig, fr.SeriesHidden, tmp_path)
    assert "'FedAvg' is drawn under line 'FedNova'" in str(err)
    ax.lines[1].set_ydata(acc + 0.02)  # closer than the line width: still hidden
    with pytest.raises(fr.SeriesHidden):
        fr.check_figure(fig)
    ax.lines[1].set_ydata(acc + 5)  # apart
    ax.relim()
    ax.autoscale_view()
    assert fr.check_figure(fig)["series_visible"]
    ax.lines[1].set_ydata(np.where(rounds < 15, acc, acc + 5))  # the same only for a while: both seen
    assert fr.check_figure(fig)["series_visible"]
    ax.lines[1].set_ydata(acc)
    ax.lines[0].set_marker("s")  # the lower line's markers show
    assert fr.check_figure(fig)["series_visible"]


def test_merge_coinciding_gives_identical_series_one_legend_entry(strict):
    x = np.arange(5)
    fig, ax = plt.subplots()
    ax.plot(x, x * 2.0, color="C0", label="FedAvg")
    ax.plot(x, x * 2.0, color="C1", label="FedNova")
    ax.plot(x, x * 3.0, color="C2", label="FedLC")
    assert fr.merge_coinciding(ax) == ["FedNova = FedAvg"]
    with pytest.raises(fr.SeriesHidden):  # declared but the entry is not shown anywhere yet
        fr.check_figure(fig)
    ax.legend(loc="upper left")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["FedNova = FedAvg", "FedLC"]
    assert fr.check_figure(fig)["series_visible"]
    fig, ax = plt.subplots()
    ax.plot(x, x, color="C0")
    ax.plot(x, x, color="C1")
    with pytest.raises(ValueError, match="names: lines"):
        fr.merge_coinciding(ax)
    assert fr.merge_coinciding(ax, names={ax.lines[0]: "paper", ax.lines[1]: "ours"}) == ["ours = paper"]


def test_an_empty_axes_is_refused_unless_it_says_why(tmp_path, strict):
    fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3))
    a.plot([1, 2], [3, 4])
    b.set_title("SVHN")
    err = _refused(fig, fr.AxesBlank, tmp_path)
    assert [ax_ for _, ax_, _ in err.violations] == ["axes 2 'SVHN'"]
    b.plot([1, 2], [np.nan, np.nan])  # a series with no finite value draws nothing: still blank
    with pytest.raises(fr.AxesBlank):
        fr.check_figure(fig)
    fr.mark_empty(b, "FEDIC on SVHN", "not run under this profile")
    assert fr.check_figure(fig)["axes_not_blank"]
    assert "not run under this profile" in b.texts[-1].get_text()
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([1, 2], [3, 4])
    b.axis("off")  # an unused slot of the grid, nothing shown: not an empty plot
    assert fr.check_figure(fig)["axes_not_blank"]
    with pytest.raises(ValueError, match="why must say"):
        fr.mark_empty(a, "x", " ")


def test_text_below_7_pt_is_refused(tmp_path, strict):
    fig, ax = plt.subplots()
    ax.bar([0, 1], [3, 4])
    ax.text(0, 3, "3.0", fontsize=6)
    err = _refused(fig, fr.TextIllegible, tmp_path)
    assert "'3.0' is 6 pt" in str(err)
    ax.texts[0].set_fontsize(7)
    assert fr.check_figure(fig)["text_legible"]
    ax.tick_params(axis="y", labelsize=5)  # tick labels count too
    with pytest.raises(fr.TextIllegible, match="5 pt"):
        fr.check_figure(fig)


def test_overlapping_tick_labels_and_a_too_wide_figure_are_refused(strict):
    names = [f"Dir(β={b:.2f}) × #C={c}" for b, c in zip(np.linspace(0.1, 1, 12), range(12))]
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(range(12), np.arange(12) + 1.0)
    ax.set_xticks(range(12), names)
    with pytest.raises(fr.TextIllegible, match="tick labels .* overlap"):
        fr.check_figure(fig)
    ax.set_xticks(range(12), names, rotation=90)
    assert fr.check_figure(fig)["text_legible"]
    ax.set_xticks(range(12), names, rotation=45, ha="right")
    assert fr.check_figure(fig)["text_legible"]
    fig, ax = plt.subplots(figsize=(19, 2))
    ax.plot([1, 2], [1, 2])
    with pytest.raises(fr.TextIllegible, match="px wide when saved at 200 dpi"):
        fr.check_figure(fig)
    assert fr.check_figure(fig, dpi=100)["text_legible"]


def test_every_declared_group_is_named_and_one_without_our_value_labelled(strict):
    fig, ax = plt.subplots()
    ax.bar([0], [61.0])
    ax.set_xticks([0], ["CIFAR-10"])
    fr.declare(ax, groups=["CIFAR-10", "SVHN"])  # the paper's columns; SVHN dropped
    with pytest.raises(fr.GroupDropped, match=r"\['SVHN'\]"):
        fr.check_figure(fig)
    fig, ax = plt.subplots()
    ax.bar([0], [61.0])
    pos = fr.label_groups(ax, ["CIFAR-10", "SVHN"], without=["SVHN"])
    assert pos == {"CIFAR-10": 0, "SVHN": 1} and [t.get_text() for t in ax.texts] == ["not run"]
    assert fr.check_figure(fig)["groups_shown"] and fr.facts(ax).cells == {"SVHN": "not run"}
    ax.texts[0].remove()  # its label in place is required (cells_labelled)
    with pytest.raises(fr.CellUnlabelled, match="SVHN"):
        fr.check_figure(fig)
    with pytest.raises(ValueError, match="without: .* not among groups"):
        fr.label_groups(ax, ["a"], without=["b"])


def test_the_saver_stamps_the_datasets_trained_on(tmp_path, strict):
    fig, ax = plt.subplots()
    ax.plot([1, 2], [3, 4])
    ax.set_title("CIFAR-10")
    with pytest.raises(fr.DatasetUnnamed, match="fmnist"):
        fr.check_figure(fig, datasets=["fmnist"])
    fig.legend(["FedAvg"], loc="upper center", bbox_to_anchor=(0.5, 0.0))
    paths = save_figure(fig, "s", tmp_path, datasets=["fmnist"], stand_in={"cifar10": "fmnist"})
    stamps = [t for t in fig.texts if t.get_gid() == "fedlib-datasets"]
    assert [t.get_text() for t in stamps] == ["Trained on: FMNIST (in place of CIFAR-10)."]
    r = fig.canvas.get_renderer()
    assert stamps[0].get_window_extent(r).y1 <= fig.legends[0].get_window_extent(r).y0  # under everything
    assert json.loads(paths["json"].read_text())["figure_checks"]["dataset_named"]
    save_figure(fig, "s", tmp_path, datasets=["mnist"])  # saved again: one stamp, the new one
    assert [t.get_text() for t in fig.texts if t.get_gid() == "fedlib-datasets"] == ["Trained on: MNIST."]


def test_a_series_over_fewer_seeds_than_the_caption_says_is_marked(strict):
    fig, ax = plt.subplots()
    ax.errorbar([1, 2], [50, 55], yerr=[1, 1], label="FedAvg")
    ax.plot([1, 2], [52, 58], label="FedLC")
    fr.declare(ax, seeds=3, series_seeds={"FedLC": 1})
    ax.legend(loc="lower right")
    caption = fr.std_caption(3)
    with pytest.raises(fr.SeedsUnmarked, match="'FedLC' is over 1 seed"):
        fr.check_figure(fig, caption=caption)
    ax.lines[-1].set_label(fr.seeds_label("FedLC", 1, 3))
    ax.legend(loc="lower right")
    assert "FedLC (1 of 3 seeds)" in [t.get_text() for t in ax.get_legend().get_texts()]
    assert fr.check_figure(fig, caption=caption)["seeds_marked"]
    assert fr.seeds_label("FedLC", 3, 3) == "FedLC"


def test_a_baseline_at_chance_accuracy_is_flagged(strict):
    fig, ax = plt.subplots()
    ax.bar([0, 1], [10.4, 62.0])  # FedAvg at 10.4 % on a 10-class dataset: a 52 pp "gap" over chance
    ax.set_xticks([0, 1], ["FedAvg", "FedLC"])
    fr.declare(ax, chance=10.0)
    with pytest.raises(fr.ChanceUnflagged, match="10.4"):
        fr.check_figure(fig)
    fr.mark_chance(ax, 10.0)
    assert fr.check_figure(fig)["chance_flagged"]
    fig, ax = plt.subplots()
    ax.bar([0, 1], [40.0, 62.0])
    fr.declare(ax, chance=10.0)  # nothing near chance: nothing to flag
    assert fr.check_figure(fig)["chance_flagged"]
    with pytest.raises(ValueError, match="chance must be"):
        fr.declare(ax, chance=float("nan"))


def test_a_report_only_rule_warns_records_and_saves(tmp_path, monkeypatch):
    monkeypatch.setattr(fr, "REPORT_ONLY", {"axes_not_blank"})
    log = tmp_path / "report.jsonl"
    monkeypatch.setenv("FEDLIB_FIGURE_REPORT", str(log))
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([1, 2], [3, 4])
    with pytest.warns(fr.FigureRuleWarning, match="axes_not_blank"):
        paths = save_figure(fig, "r", tmp_path / "out")
    assert json.loads(paths["json"].read_text())["figure_checks"]["axes_not_blank"] is False
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["axes"] for r in lines if r["rule"] == "axes_not_blank"] == ["axes 2"]


def test_a_row_group_beside_the_papers_rows_is_its_own_curve():
    """FedABC's "held/fedavg" spans the α values of a panel: its own line (dash-dot, its method's colour, its
    own label), not a second set of points joined to FedAvg's line; FedLC Table 5's "E5/fedavg", one point of
    FedAvg's curve against E, stays in FedAvg's series."""
    import matplotlib

    matplotlib.use("Agg")
    import pandas as pd

    from fedlib.repro.artefacts.figures import plot_paper_vs_ours

    rows = [("fedavg", "FedAvg", a, 60 + a, 50 + a) for a in (0.1, 1.0)] + \
           [("held/fedavg", "FedAvg, held classes", a, 40 + a, 50 + a) for a in (0.1, 1.0)]
    frame = pd.DataFrame([{"row": r, "row_label": lab, "alpha": a, "dataset": "mnist", "ours_mean": o,
                           "paper_mean": p, "n_seeds": 1} for r, lab, a, o, p in rows])
    fig = plot_paper_vs_ours(frame, x="alpha", panel="dataset")
    ours = [ln for ln in fig.axes[0].lines if ln.get_linestyle() in ("-", "-.") and len(ln.get_xdata()) == 2]
    assert sorted(ln.get_linestyle() for ln in ours) == ["-", "-."]
    held = next(ln for ln in ours if ln.get_linestyle() == "-.")
    assert list(held.get_ydata()) == [40.1, 41.0]
    assert "FedAvg, held classes" in [t.get_text() for t in fig.legends[0].get_texts()]
    steps = pd.DataFrame([{"row": f"E{e}/fedavg", "E": e, "column": "c", "ours_mean": 50.0 + e, "paper_mean": 49.0 + e,
                           "n_seeds": 1} for e in (1, 5)])
    fig = plot_paper_vs_ours(steps, x="E", panel="column")
    assert any(len(ln.get_xdata()) == 2 and ln.get_linestyle() == "-" for ln in fig.axes[0].lines)


def test_why_empty_names_the_first_cells_reason_else_the_profile():
    from types import SimpleNamespace

    import pandas as pd

    from fedlib.repro.artefacts.figure_rules import why_empty

    runs = pd.DataFrame({"note": [None, "not run: needs a GPU (est. 7 GPU-min)", "not run: data absent"]})
    assert why_empty(SimpleNamespace(runs=runs), "paper") == "not run: needs a GPU (est. 7 GPU-min)"
    assert why_empty(SimpleNamespace(runs=pd.DataFrame({"note": [None, " "]})), "quick") == \
        "not run under the 'quick' profile"
    assert why_empty(None, "smoke") == "not run under the 'smoke' profile"


def test_paper_vs_ours_merges_coinciding_curves_in_the_geometry_it_is_saved_in():
    """Two curves of ours apart by d pp: either told apart or merged into one legend entry, never hidden, for
    every d.  With the title set after the merging layout, the axes shrank and curves 0.325-0.375 pp apart
    merged at one size were hidden at the saved one (FedLC's quick Table 6: FedAvg under FedProx)."""
    import pandas as pd

    from fedlib.repro.artefacts.figures import plot_paper_vs_ours

    def frame(d):
        rows = []
        for m, lab, off in (("fedavg", "FedAvg", 0.0), ("fedprox", "FedProx", d), ("fedlc", "FedLC", 12.0)):
            for x, base in ((10, 66.0), (30, 64.0), (50, 58.0), (100, 28.0)):
                rows.append({"row": m, "row_label": lab, "column": "c", "m": x, "dataset": "cifar10",
                             "ours_mean": base + off, "paper_mean": base - 8 + (3 if m == "fedlc" else 0),
                             "n_seeds": 1})
        return pd.DataFrame(rows)

    hidden = []
    for d in np.linspace(0.02, 2.0, 40):
        fig = plot_paper_vs_ours(frame(d), x="m", title="Table 6: accuracy against the number of clients\nsecond line")
        try:
            fr.check_figure(fig, seeds=1)
        except fr.SeriesHidden:
            hidden.append(round(float(d), 3))
        plt.close(fig)
    assert hidden == []


def test_a_cell_label_stays_readable_where_curves_cross_it():
    """A "not run" label drawn where curves pass (Table 1's curves at β = 0.05 ran through it): it is drawn
    above every line, on an opaque enough white ground, so the pixels of its box are the label's, not a
    curve's.  Rendered and read back: inside the box no pixel has a curve's colour."""
    import numpy as np

    fig, ax = plt.subplots(figsize=(3, 3), dpi=100)
    for y in np.linspace(0.1, 0.9, 9):
        ax.plot([0, 1], [y, y], color=(1.0, 0.0, 0.0), lw=3)
    text = fr.label_cell(ax, 0.5, 0.3, "not run", key="every method @ 0.5")
    fig.canvas.draw()
    box = text.get_bbox_patch().get_window_extent()
    assert text.get_zorder() > max(line.get_zorder() for line in ax.lines)
    pixels = np.asarray(fig.canvas.buffer_rgba())[::-1]  # rows from the bottom, as display coordinates
    inside = pixels[int(box.y0) + 2:int(box.y1) - 2, int(box.x0) + 2:int(box.x1) - 2, :3].astype(int)
    pure_red = (inside[..., 0] > 200) & (inside[..., 1] < 60) & (inside[..., 2] < 60)
    assert inside.size and not pure_red.any()
    plt.close(fig)


def test_labels_of_neighbouring_empty_bars_do_not_run_into_each_other():
    """Four narrow bars side by side, two without a value: each "n/a" stands upright in its own bar's width
    (drawn flat, two of them read "n/an/a" in FedConcat's FedLC-gaps figure)."""
    fig, ax = plt.subplots(figsize=(3, 2), dpi=100)
    ax.bar(np.arange(12) * 0.2, [1.0, np.nan, np.nan] + [2.0] * 9, 0.2)  # a bar ≈ 18 px wide
    assert fr.label_empty_bars(ax, missing="n/a", fontsize=12) == 2  # "n/a" ≈ 25 px long
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in ax.texts]
    assert not boxes[0].overlaps(boxes[1])
    plt.close(fig)


def test_a_bar_without_a_value_outside_the_axes_is_refused_and_label_empty_bars_keeps_it_inside():
    """Ten categories, one with a value: matplotlib sets the x-limits around that one bar, and the nine
    "not run" cells lie outside the axes (FedLC Fig. 1 under the paper profile drew a 12,520 px figure so).
    The rule sees the empty bars' places; label_empty_bars keeps them inside."""
    fig, ax = plt.subplots()
    ax.bar([f"c{i}" for i in range(10)], [np.nan] * 9 + [64.3])
    for i in range(9):
        ax.text(i, 0, "not run")
    with pytest.raises(fr.CellUnlabelled, match="lies outside the axes"):
        fr.check_figure(fig)
    for t in list(ax.texts):
        t.remove()
    fr.label_empty_bars(ax)
    assert ax.get_xlim()[0] < 0 < 9 < ax.get_xlim()[1]
    assert fr.check_figure(fig)["cells_labelled"]
