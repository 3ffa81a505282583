"""The figure rules read from the data (fedlib.repro.artefacts.figure_checks_data): each rejects a
figure made to break it, naming the rule and the axes, and accepts the mended figure; save_figure
records them and mends what needs no judgement (a series at chance, a bar too short to see)."""

import json

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

from fedlib.repro.artefacts import figure_checks_data as fd  # noqa: E402
from fedlib.repro.artefacts.figure_artists import data_lines  # noqa: E402
from fedlib.repro.artefacts.saving import save_figure  # noqa: E402


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _check(fig, **meta):
    return fd.check_data(fig, name="f", title="t", caption="Dir(0.5)", meta=meta)


# ------------------------------------------------------------------ chance, from the dataset's classes
def _at_chance_figure():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2, 3], [60.0, 70.0, 72.0], color="C0", label="FedConcat")
    ax.plot([1, 2, 3], [10.0, 10.3, 10.0], color="C1", label="MOON")
    ax.set_ylim(0, 100)
    ax.set_ylabel("test accuracy (%)")
    ax.legend(loc="center right")
    return fig, ax


def test_a_series_at_chance_of_its_datasets_classes_is_refused_unflagged():
    fig, ax = _at_chance_figure()
    with pytest.raises(fd.ChanceFromData, match="MOON") as info:
        _check(fig, datasets=["cifar10"], seeds=[0, 1])
    assert info.value.rule == "chance_from_data" and info.value.axes == "axes 1"
    ax.text(2, 12, "MOON at chance")
    assert _check(fig, datasets=["cifar10"], seeds=[0, 1])["chance_from_data"]


def test_a_line_at_chance_is_ringed_and_named_in_the_note_above_the_data(tmp_path):
    """FedConcat quick Fig. 4: "<line> at chance" written beside a point landed on the other curves, which crowd
    near chance.  The points are ringed in the line's colour, and the line is named in the note above the data."""
    fig, ax = _at_chance_figure()
    ax.plot([1, 2, 3], [84.0, 86.0, 88.0], color="C2", label="FedAvg")
    save_figure(fig, "c", tmp_path, caption="#C=2", datasets=["cifar10"], seeds=[0], profile="quick")
    [note] = [t for t in ax.texts if "chance" in t.get_text()]  # no other text: none beside a point
    assert note.get_text().startswith("at chance (1/10 = 10): MOON (ringed)") and "FedConcat" not in note.get_text()
    [ring] = [line for line in ax.lines if line.get_label() == "_at chance"]
    assert list(ring.get_ydata()) == [10.0, 10.3, 10.0] and ring.get_markeredgecolor() == ax.lines[1].get_color()
    assert ring.get_linestyle() == "None"
    assert ring not in data_lines(ax)
    assert note.get_position()[1] > 0.9 and ax.get_ylim()[1] > 100  # above the data, in headroom


def test_the_rings_of_two_lines_at_chance_at_the_same_points_are_marks_not_lines_hiding_each_other(tmp_path):
    """The smoke budget ladders: two methods at chance at every rung, told apart by their markers; their rings
    coincide, and were read as one unnamed line drawn under another (series_visible) or as points under the legend."""
    fig, ax = plt.subplots(figsize=(4, 3))
    for colour, marker, label in (("C0", "o", "FedAvg"), ("C1", "s", "FedLC")):
        ax.plot([1, 2, 3], [10.0, 10.2, 10.0], color=colour, marker=marker, label=label)
    ax.set_ylim(0, 100)
    ax.set_ylabel("test accuracy (%)")
    ax.legend(loc="upper right")
    save_figure(fig, "rings", tmp_path, caption="#C=2", datasets=["cifar10"], seeds=[0], profile="quick")
    rings = [line for line in ax.lines if line.get_label() == "_at chance"]
    assert len(rings) == 2 and not set(rings) & set(data_lines(ax)) and (tmp_path / "rings.png").exists()


def test_chance_follows_the_classes_and_a_gap_axes_is_not_an_accuracy():
    fig, ax = _at_chance_figure()
    assert _check(fig, datasets=["cifar100"], seeds=[0, 1])["chance_from_data"]  # 1 % chance: 10 % is above it
    ax.set_ylabel("FedLC − FedAvg (pp)")
    assert _check(fig, datasets=["cifar10"], seeds=[0, 1])["chance_from_data"]


def test_save_figure_flags_a_series_at_chance_and_records_the_rules(tmp_path):
    fig, ax = _at_chance_figure()
    paths = save_figure(fig, "c", tmp_path, caption="#C=2", datasets=["cifar10"], seeds=[0], profile="quick")
    assert any("at chance" in t.get_text() and "MOON" in t.get_text() for t in ax.texts)
    side = json.loads(paths["json"].read_text())
    assert all(side["figure_checks"][r] for r in fd.DATA_RULES)
    assert any("Profile: quick; 1 seed (0)" in t.get_text() for t in fig.texts)


# ------------------------------------------------------------------ every value visible
def _bars_figure():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1, 2], [17.84, -0.15, 6.2], color=["C0", "C1", "C2"])
    ax.set_ylim(-5, 20)
    ax.set_ylabel("FedLC − FedAvg (pp)")
    return fig, ax


def test_a_bar_whose_value_draws_no_visible_pixel_is_refused():
    fig, ax = _bars_figure()
    with pytest.raises(fd.ValueInvisible, match="-0.15"):
        _check(fig)
    ax.text(1, -0.15, "−0.15", ha="center", va="top")
    assert _check(fig)["values_visible"]


def test_save_figure_labels_the_bar_too_short_to_see(tmp_path):
    fig, ax = _bars_figure()
    save_figure(fig, "b", tmp_path, caption="Dir(0.1)")
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["−0.15"]  # only the short bar; the others show


# ------------------------------------------------------------------ overplotting
def _scatter_figure(minority_on_top: bool):
    rng = np.random.default_rng(0)
    fig, ax = plt.subplots(figsize=(4, 3))
    few = rng.uniform(0, 1, size=(40, 2))
    many = np.vstack([few + rng.normal(0, 0.005, size=few.shape), rng.uniform(0, 1, size=(400, 2))])
    z_few, z_many = (3, 2) if minority_on_top else (2, 3)
    ax.scatter(*few.T, s=30, color="C3", label="deviated (40)", zorder=z_few)
    ax.scatter(*many.T, s=60, color="C0", marker="s", label="not deviated (440)", zorder=z_many)
    ax.set_xlim(-0.1, 1.1)
    ax.set_ylim(-0.1, 1.1)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig, ax


def test_a_scatter_category_more_than_half_covered_is_refused():
    fig, _ = _scatter_figure(minority_on_top=False)
    with pytest.raises(fd.CategoryCovered, match="deviated"):
        _check(fig)
    fig, _ = _scatter_figure(minority_on_top=True)
    assert _check(fig)["scatter_uncovered"]


def test_a_scatter_category_without_its_count_is_refused():
    fig, ax = _scatter_figure(minority_on_top=True)
    ax.collections[0].set_label("deviated")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    with pytest.raises(fd.CategoryCovered, match="count"):
        _check(fig)


# ------------------------------------------------------------------ legend entries stand for something drawn
def test_a_legend_entry_with_nothing_drawn_is_refused():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2], [50, 60], ls="--", marker="o", color="C0", label="paper")
    keys = [Line2D([], [], color="0.3", marker="o", ls="-"), Line2D([], [], color="0.3", marker="o", ls="--")]
    ax.legend(keys, ["ours", "paper"], loc="lower right")
    with pytest.raises(fd.LegendEntryEmpty, match="'ours'"):
        _check(fig)
    ax.plot([1, 2], [52, 61], ls="-", marker="o", color="C1", label="FedAvg")
    assert _check(fig)["legend_drawn"]


def test_a_labelled_artist_outside_the_axes_limits_is_nothing_drawn():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2], [50, 60], label="paper")
    ax.plot([1, 2], [np.nan, np.nan], label="ours")
    ax.legend(loc="lower right")
    with pytest.raises(fd.LegendEntryEmpty, match="'ours'"):
        _check(fig)


# ------------------------------------------------------------------ noise in sight
def test_an_axes_narrower_than_its_noise_without_error_bars_is_refused():
    fig, ax = plt.subplots(figsize=(4, 3))
    x, y = np.array([0.1, 0.5, 1.0]), np.array([97.90, 97.93, 97.95])
    ax.plot(x, y, marker="o", label="FedABC")
    ax.set_ylabel("validation accuracy (%)")
    fd.declare_noise(ax, std=0.06, seeds=3)
    with pytest.raises(fd.NoiseHidden, match="error bar"):
        _check(fig, seeds=[0, 1, 2])
    ax.errorbar(x, y, yerr=0.06, fmt="none", color="C0")
    ax.set_title("mean ± std over 3 seeds")
    assert _check(fig, seeds=[0, 1, 2])["noise_shown"]


def test_a_one_seed_figure_says_one_seed():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2], [50, 60], label="FedAvg")
    with pytest.raises(fd.NoiseHidden, match="1 seed"):
        _check(fig, seeds=[0])
    ax.set_title("FedAvg, 1 seed")
    assert _check(fig, seeds=[0])["noise_shown"]


# ------------------------------------------------------------------ the setting named
def test_seeds_and_datasets_given_as_arrays_are_read(tmp_path):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2], [50, 60], label="FedAvg")
    for seeds in (np.array([], dtype=int), np.array([0, 1])):  # and datasets: a grid's unique(), maybe empty
        save_figure(fig, "s", tmp_path, caption="Dir(0.5)", seeds=seeds, profile="quick", datasets=np.array([]))


def test_a_figure_without_its_partition_is_reported(tmp_path):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1, 2], [50, 60], label="FedAvg")
    with pytest.warns(UserWarning, match="setting_named"):
        checks = fd.check_data(fig, name="f", meta={"profile": "quick"})
    assert checks["setting_named"] is False
    ax.set_title("CIFAR-10, Dir(0.5), profile quick")
    assert fd.check_data(fig, name="f", meta={"profile": "quick"})["setting_named"]


def test_a_centralized_figure_names_its_setting_by_saying_so():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0], [88.0], label="Centralized")  # one client holding the training set: no partition to name
    ax.set_title("CIFAR-10, profile quick")
    with pytest.warns(UserWarning, match="setting_named"):
        assert fd.check_data(fig, name="f", meta={"profile": "quick"})["setting_named"] is False
    ax.set_title("CIFAR-10, centralized (one client), profile quick")
    assert fd.check_data(fig, name="f", meta={"profile": "quick"})["setting_named"]


# ------------------------------------------------------------------ no figure of nothing
def test_a_placeholder_that_draws_nothing_writes_no_png_and_says_why(tmp_path):
    from fedlib.repro.artefacts.figure_rules import mark_empty

    (tmp_path / "f.png").write_bytes(b"an older placeholder")
    fig, ax = plt.subplots(figsize=(4, 3))
    mark_empty(ax, "FEDIC against λ on CIFAR-10-LT", "not run under the 'paper' profile: needs a GPU (≈ 40 h)")
    paths = save_figure(fig, "f", tmp_path, caption="Dir(0.5)", placeholder=True)
    assert set(paths) == {"json"} and not (tmp_path / "f.png").exists() and not (tmp_path / "f.pdf").exists()
    side = json.loads(paths["json"].read_text())
    assert side["files"] == {} and "needs a GPU" in side["not_rendered"] and "FEDIC against λ" in side["not_rendered"]
    fig, ax = plt.subplots(figsize=(4, 3))  # the paper's values drawn: a figure, labelled as the paper's
    ax.plot([0.1, 1.0], [60.0, 70.0], ls="--", marker="o", mfc="none", label="FEDIC (paper)")
    ax.legend(loc="lower right")
    assert "png" in save_figure(fig, "g", tmp_path, caption="Dir(0.5)", placeholder=True)


def test_a_grid_of_not_run_panels_is_not_drawn_either(tmp_path):
    from fedlib.repro.artefacts.figure_rules import mark_empty

    fig, axes = plt.subplots(1, 2, figsize=(6, 3))
    for ax in axes:
        mark_empty(ax, "MOON per round", "not run under the 'paper' profile: needs a GPU")
    paths = save_figure(fig, "grid", tmp_path, caption="#C=2")
    assert set(paths) == {"json"} and "needs a GPU" in json.loads(paths["json"].read_text())["not_rendered"]


def test_a_class_key_matches_a_scatter_coloured_by_class():
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(["C0", "C1", "C2"])
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.scatter([0, 1, 2], [0, 1, 2], c=[0, 1, 2], cmap=cmap, vmin=-0.5, vmax=2.5)
    keys = [Line2D([], [], ls="none", marker="o", color=cmap(k)) for k in range(3)]
    ax.legend(keys, ["class 0", "class 1", "class 2"], loc="upper left", bbox_to_anchor=(1.0, 1.0))
    assert _check(fig)["legend_drawn"]
    ax.legend(keys + [Line2D([], [], ls="none", marker="o", color="C5")], ["class 0", "class 1", "class 2", "class 9"],
              loc="upper left", bbox_to_anchor=(1.0, 1.0))
    with pytest.raises(fd.LegendEntryEmpty, match="class 9"):
        _check(fig)


# ------------------------------------------------------------------ the chance note: in headroom, wrapped, named
def test_the_chance_note_covers_no_bar_and_names_every_series_though_wrapped(tmp_path):
    """Bars up to 98 % on a 0-100 axis and several series at chance in a narrow axes: the note wraps, the axes gain
    headroom above the data so that the note's box meets no bar, no tick reads past 100 %, and every series is
    named as flagged though its label is cut by a line break."""
    fig, ax = plt.subplots(figsize=(3.2, 2.6))
    x = np.arange(4)
    names = ["softmax + cross-entropy", "one-vs-all binary cross-entropy", "FedABC loss with both thresholds"]
    for i, name in enumerate(names):
        ax.bar(x + 0.25 * i, [98.0, 60.0, 3.0, 9.5], 0.25, label=name)
    ax.set_xticks(x + 0.25, ["a", "b", "c", "d"])
    ax.set_ylim(0, 100)
    ax.set_ylabel("per-class test accuracy (%)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), fontsize=7)
    save_figure(fig, "n", tmp_path, caption="Dir(0.3)", datasets=["mnist"], seeds=[0], profile="quick")
    fig.canvas.draw()
    [note] = [t for t in ax.texts if t.get_text().startswith("at chance (1/10")]
    assert "\n" in note.get_text()  # wrapped to the axes' width
    box = note.get_window_extent()
    assert box.x1 <= ax.get_window_extent().x1 + 1
    bars = [p.get_window_extent() for p in ax.patches if p.get_height() > 0]
    assert bars and not any(box.overlaps(b) for b in bars)
    assert max(ax.get_yticks()) <= 100.0 < ax.get_ylim()[1]
    for name in names:
        assert fd.flagged(ax, fig, name)


def test_a_value_well_under_chance_is_marked_at_chance_or_below(tmp_path):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1, 2], [3.0, 10.5, 80.0], label="local model")
    ax.set_xticks([0, 1, 2], ["class 0", "class 1", "class 2"])
    ax.set_ylim(0, 100)
    ax.set_ylabel("test accuracy (%)")
    save_figure(fig, "b", tmp_path, caption="#C=2", datasets=["cifar10"], seeds=[0], profile="quick")
    marks = sorted((round(t.get_position()[0]), t.get_text()) for t in ax.texts if t.get_rotation() == 90)
    assert marks == [(0, "at chance or below"), (1, "at chance")]


def test_a_chance_mark_over_a_bar_with_an_error_bar_starts_above_its_whisker(tmp_path):
    """FedConcat quick Fig. 4: "at chance" written from the bar's top crossed its error bar (12.0 ± 1.7)."""
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar([0, 1, 2], [12.0, 10.0, 60.0], yerr=[1.7, 0.0, 3.0], capsize=2, label="final architecture")
    ax.set_xticks([0, 1, 2], ["FedProx", "MOON", "FedAvg"])
    ax.set_ylim(0, 100)
    ax.set_ylabel("test accuracy (%)")
    save_figure(fig, "b", tmp_path, caption="#C=2; mean ± std over 3 seeds", datasets=["cifar10"], seeds=[0, 1, 2],
                profile="quick")
    marks = {round(t.get_position()[0]): t.get_position()[1] for t in ax.texts if t.get_rotation() == 90}
    assert marks == {0: pytest.approx(13.7), 1: pytest.approx(10.0)}  # the whisker's top; no whisker: the bar's


def test_the_stamp_says_which_seeds_every_cell_holds_and_which_some_do():
    from fedlib.repro.artefacts.figure_marks import stamp_setting

    fig, _ = plt.subplots()
    stamp_setting(fig, None, {"profile": "quick", "seeds": (0, 1, 2, 3, 4), "seeds_some": [2, 3, 4]})
    [text] = [t.get_text() for t in fig.texts]
    assert text == ("Profile: quick; seeds 0, 1 in every cell that ran; seeds 2–4 in some cells only (added to "
                    "decide a claim).")


def test_a_figure_of_the_papers_values_says_why_every_cell_of_ours_is_absent():
    """The legend's one line where nothing of ours ran speaks for every cell, not the first one's note: the GPU
    time of each (a range), and the datasets absent here."""
    from fedlib.repro.artefacts.figures import not_run_summary

    notes = ["not run: needs a GPU (est. 7 GPU-min / 20.8 CPU-h on one core per run)",
             "not run: SVHN is absent here (no files under the data root); where present, needs a GPU (est. 10 "
             "GPU-min / 30.5 CPU-h on one core per run)",
             "not run: needs a GPU (est. 2.2 GPU-h / 400.0 CPU-h on one core per run)"]
    assert not_run_summary(notes) == "not run: needs a GPU (est. 7–132 GPU-min a run); SVHN absent here"
    assert not_run_summary(["not run: needs a GPU (est. GPU time not measured / 30.3 CPU-h on one core per run)"]) \
        == "not run: needs a GPU (est. 30.3 CPU-h a run on one core; GPU time not measured)"
    assert not_run_summary(["not run: dataset 'svhn' is absent (expected <data root>/train_32x32.mat)"],
                           label=str.upper) == "not run: SVHN absent here"
    assert not_run_summary(["not run: SVHN is absent here", "not run: dataset 'svhn' is absent"]) == \
        "not run: SVHN absent here"
    assert not_run_summary(["not run: grid reduced in the 'quick' profile"]) == \
        "not run: grid reduced in the 'quick' profile"


def test_a_source_with_no_value_says_why_in_its_key():
    import pandas as pd

    from fedlib.repro.artefacts.figures import plot_effects

    effects = pd.DataFrame({"dataset": ["CIFAR-10", "CIFAR-10"], "partition": ["#C=2", "Dir(0.5)"],
                            "claim": [9.6, 12.8], "ours": [float("nan")] * 2})
    fig = plot_effects(effects, sources=["claim", "ours"], panel="dataset", x="partition",
                       why_none={"ours": "not run: needs a GPU (est. 7 GPU-min a run)"})
    labels = [t.get_text() for leg in fig.legends for t in leg.get_texts()]
    assert labels == ["claim", "ours: no value here\n(not run: needs a GPU (est. 7 GPU-min a run))"]
