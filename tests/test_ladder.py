"""Budget ladders: geometric rungs between quick's scale and the paper's, the rungs a budget or a
device affords, the gap per rung and the finding."""

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from fedlib.repro.budget import costs
from fedlib.repro.artefacts import ladder as L
from fedlib.repro.budget import ladder as budget_ladder  # its private cell builder, for a test that plants a run
from fedlib.repro.spec.paper import get_paper


def test_rungs_are_geometric_between_the_two_ends_and_the_full_training_set_is_zero():
    low = {"dataset": "cifar10", "rounds": 30, "local_epochs": 1, "max_train_samples": 6000}
    high = {"dataset": "cifar10", "rounds": 400, "local_epochs": 10}
    rungs = L.rung_scales(low, high, ("rounds", "local_epochs", "max_train_samples"), 4)
    t = np.arange(4) / 3
    assert [r["rounds"] for r in rungs] == [int(round(v)) for v in 30 * (400 / 30) ** t]
    assert [r["local_epochs"] for r in rungs] == [int(round(v)) for v in 10 ** t]
    samples = [int(round(v)) for v in 6000 * (50000 / 6000) ** t]
    assert [r["max_train_samples"] for r in rungs] == samples[:3] + [0]  # the last rung: all of it
    with pytest.raises(ValueError, match="rungs must be ≥ 2"):
        L.rung_scales(low, high, ("rounds",), 1)


def _table(gaps, stds=None, paper=0.4):
    n = len(gaps)
    return pd.DataFrame({"rung": range(n), "gap": gaps, "gap_std": stds or [math.nan] * n, "paper_gap": [paper] * n})


@pytest.mark.parametrize("gaps,stds,verdict", [
    ([-6.0, -3.0, 0.1], None, "toward the paper's value"),
    ([0.3, 1.0, 2.5], None, "away from the paper's value"),
    ([0.1, 0.2, 0.3], None, "not at all"),
    ([-2.0, -1.0, -0.5], [1.0, 1.0, 1.0], "not at all"),  # 1.5 pp closer, within twice the std
    # a measured std decides, not the one-seed floor of 0.5 pp: 0.35 pp closer against twice 0.05
    ([0.0, 0.1, 0.35], [0.05, 0.05, 0.05], "toward the paper's value"),
    ([0.0, 0.1, 0.35], [0.0, 0.0, 0.0], "not at all"),  # a std of 0 measured: the one-seed floor, never 0
])
def test_the_finding_compares_the_distance_to_the_papers_gap_at_the_lowest_and_highest_rung(gaps, stds, verdict):
    spec = L.spec_for("fedabc")
    text = L.finding(spec, _table(gaps, stds))
    assert f"the gap moves {verdict} as the budget grows" in text
    assert text.startswith("Budget ladder, FedABC − FedAvg at MNIST Dir(0.3) (table1)")
    assert "undecided" in L.finding(spec, _table([0.1, math.nan, math.nan]))


def test_rungs_whose_baseline_is_at_chance_are_named_and_left_out_of_the_trend():
    """Issue 35: FEDIC's CPU rungs had FedAvg at 10.00 % on CIFAR-10-LT (chance): a gap over a baseline that
    learns nothing is no measurement of the method's gain, so those rungs do not enter the trend."""
    spec = L.spec_for("fedic")
    committed = pd.DataFrame({"rung": [0, 1, 2, 3], "fedavg_mean": [13.34, 10.0, 10.0, math.nan],
                              "fedic_mean": [19.79, 20.35, 25.39, math.nan],
                              "gap": [6.45, 10.35, 15.39, math.nan], "gap_std": [math.nan] * 4,
                              "paper_gap": [10.99] * 4})
    assert L.at_chance(spec, committed).tolist() == [False, True, True, False]
    text = L.finding(spec, committed)
    assert "left out: rungs 1 (FedAvg 10.00 %), 2 (FedAvg 10.00 %), the baseline at chance" in text
    assert text.endswith("undecided (one budget ran where the baseline learns)") and "moves" not in text
    assert "+15.39" not in text  # rung 2's gap is not reported as the top of the trend
    # every rung at chance: no trend at all; a baseline 1.01 pp above chance learns (the margin is 1 pp)
    assert "undecided" in L.finding(spec, committed.assign(fedavg_mean=[10.0, 10.0, 10.5, math.nan]))
    learns = L.finding(spec, committed.assign(fedavg_mean=[13.34, 11.01, 11.01, math.nan]))
    assert "left out" not in learns and "the gap moves" in learns
    with pytest.raises(ValueError, match="chance_margin_pp must be ≥ 0"):
        dataclasses.replace(spec, chance_margin_pp=-1.0)


def test_the_table_pairs_the_two_methods_by_seed():
    spec = L.spec_for("fedlc")
    plan = pd.DataFrame({"rung": [0, 1], "est_cpu_min": [1.0, 2.0], "runs_here": [True, False]})
    runs = pd.DataFrame({"rung": [0, 0, 0, 0, 1, 1], "method": ["fedavg", "fedlc"] * 3,
                         "seed": [0, 0, 1, 1, 0, 0], "status": ["ok"] * 4 + ["not run"] * 2,
                         "accuracy": [50.0, 60.0, 52.0, 58.0, math.nan, math.nan]})
    table = L.ladder_table(spec, plan, runs)
    assert table.gap[0] == pytest.approx(8.0) and table.gap_std[0] == pytest.approx(np.std([10.0, 6.0], ddof=1))
    assert table.fedavg_mean[0] == pytest.approx(51.0) and math.isnan(table.gap[1])
    assert table.paper_gap[0] == pytest.approx(72.99 - 60.18)
    # a seed that finished for one method only pairs with nothing (never with the other method's next seed)
    runs.loc[(runs.method == "fedlc") & (runs.seed == 0), "status"] = "diverged"
    table = L.ladder_table(spec, plan, runs)
    assert table.gap[0] == pytest.approx(58.0 - 52.0) and table.n_seeds[0] == 1


def test_quick_runs_the_rungs_its_budget_affords_and_shows_the_papers_budget_with_its_cost(monkeypatch):
    monkeypatch.delenv(costs.DEVICE_ENV, raising=False)
    quick = get_paper("fedlc").profile("quick")
    unit = get_paper("fedlc").profile("paper").cost.units["cnn_cifar"]
    # FedLC's own quick ladder budget is 0: every rung is planned, with its cost, and none runs
    spec0 = L.spec_for("fedlc")
    cells0, plan0 = L.ladder_cells(spec0, quick)
    assert spec0.quick_budget_minutes == 0 and not plan0.runs_here.any()
    assert all(c["config"] is None for c in cells0) and all("beyond the ladder's budget" in n for n in plan0.note)
    # with an hour on 2 workers, the rungs that fit from the bottom run
    spec = dataclasses.replace(spec0, quick_budget_minutes=60)
    cells, plan = L.ladder_cells(spec, quick)
    # rung 0: quick's scale (15 rounds, 6,000 samples) on CIFAR-10, two methods, one seed, from the unit cost
    assert (plan.rounds[0], plan.max_train_samples[0]) == (15, 6000)
    assert plan.est_cpu_min[0] == pytest.approx(2 * (unit.fixed_s + 15 * 6000 * unit.s_per_sample_epoch) / 60)
    ran = plan[plan.runs_here]
    assert len(ran) >= 3 and ran.est_cpu_min.sum() <= spec.quick_budget_minutes * quick.workers + 1e-9
    last = plan.iloc[-1]  # the paper's own budget, not run, with its estimate
    assert (last.rounds, last.max_train_samples, bool(last.runs_here)) == (400, 0, False)
    assert "beyond the ladder's budget" in last.note
    assert all(c["config"] is None for c in cells if c["rung"] == last.rung)
    cfg = next(c["config"] for c in cells if c["rung"] == 0 and c["method"] == "fedlc")
    assert cfg["dataset"] == "cifar10" and cfg.get("model", "auto") in ("auto", "cnn_cifar") and cfg["batch_size"] == 128


def test_on_cuda_the_paper_profile_runs_every_rung_on_the_gpu(monkeypatch):
    monkeypatch.setenv(costs.DEVICE_ENV, "cuda")
    spec = L.spec_for("fedlc")
    cells, plan = L.ladder_cells(spec, get_paper("fedlc").profile("paper"))
    assert len(plan) == spec.rungs and plan.runs_here.all()
    assert all(c["config"]["device"] == "cuda" for c in cells)
    assert L.ladder_seeds(spec, get_paper("fedlc").profile("paper")) == tuple(get_paper("fedlc").seeds)


def test_on_a_cpu_the_paper_profile_ladder_runs_the_seeds_it_declares_and_every_seed_on_a_gpu(monkeypatch):
    paper = get_paper("fedlc").profile("paper")
    spec = L.spec_for("fedlc")
    monkeypatch.setenv(costs.DEVICE_ENV, "cpu")
    assert spec.cpu_seeds == 3 and L.ladder_seeds(spec, paper) == tuple(get_paper("fedlc").seeds)[:3]
    cells, plan = L.ladder_cells(spec, paper)
    # the rungs' estimates count those 3 seeds: rung 0 is 2 methods × 3 seeds × one run's estimate
    run0 = next(c["config"] for c in cells if c["rung"] == 0 and c["method"] == "fedavg")
    assert plan.est_cpu_min[0] == pytest.approx(2 * 3 * paper.cost.seconds(run0) / 60, rel=0.05)
    assert any("trains 3 of the table's 5 seeds (0, 1, 2" in d for d in L.deviations(spec, paper))
    everything = dataclasses.replace(spec, cpu_seeds=None)
    assert not any("of the table's" in d for d in L.deviations(everything, paper))
    assert L.ladder_seeds(everything, paper) == tuple(get_paper("fedlc").seeds)
    monkeypatch.setenv(costs.DEVICE_ENV, "cuda")
    assert L.ladder_seeds(spec, paper) == tuple(get_paper("fedlc").seeds)
    # more than the table's seeds (a ladder row's decision): the table's, then the next integers, and it says so
    monkeypatch.setenv(costs.DEVICE_ENV, "cpu")
    seeds = tuple(get_paper("fedlc").seeds)
    more = dataclasses.replace(spec, cpu_seeds=len(seeds) + 2)
    assert L.ladder_seeds(more, paper) == seeds + (max(seeds) + 1, max(seeds) + 2)
    assert any(f"trains {len(seeds) + 2} seeds" in d and f"table's {len(seeds)}" in d
               for d in L.deviations(more, paper))
    # quick and smoke train one seed, whatever the spec says
    assert L.ladder_seeds(spec, get_paper("fedlc").profile("quick")) == tuple(get_paper("fedlc").seeds)[:1]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_a_ladder_with_a_bad_seed_count_is_refused_naming_it(bad):
    with pytest.raises(ValueError, match="cpu_seeds must be an integer ≥ 1"):
        dataclasses.replace(L.spec_for("fedlc"), cpu_seeds=bad)


def test_the_sidecar_records_the_seeds_the_ladder_trained_not_the_tables(monkeypatch):
    import types

    monkeypatch.setenv(costs.DEVICE_ENV, "cpu")
    paper = get_paper("fedlc").profile("paper")
    spec = L.spec_for("fedlc")
    grid = types.SimpleNamespace(runs=pd.DataFrame({"dataset_used": ["cifar10", None, "cifar10"]}))
    meta = L.sidecar_meta(spec, paper, grid)
    assert meta["seeds"] == (0, 1, 2) and len(paper.seeds_for(spec.table)) == 5
    assert meta["datasets"] == ["cifar10"] and meta["deviations"] == L.deviations(spec, paper)


def test_the_ladder_figure_labels_one_tick_per_rung_and_no_minor_ticks():
    """The FedABC paper ladder's default log ticks printed 3×10⁶ and 4×10⁶ on top of each other."""
    import matplotlib.pyplot as plt

    spec = L.spec_for("fedabc")
    table = _table([0.09, 0.16, 0.11, 0.13], [0.05, 0.02, 0.04, 0.03]).assign(
        sample_epochs=[6.0e5, 1.02e6, 1.74e6, 3.0e6], fedavg_mean=[97.2, 97.8, 98.2, 98.5],
        fedabc_mean=[97.3, 97.9, 98.3, 98.6], n_seeds=[3] * 4)
    fig = L.ladder_figure(spec, table)
    fig.canvas.draw()
    for ax in fig.axes:
        assert [t.get_text() for t in ax.get_xticklabels()] == ["600k", "1.02M", "1.74M", "3M"]
        assert ax.xaxis.get_minor_locator().tick_values(1e5, 1e7) == []
    plt.close(fig)
    assert [L.compact_count(v) for v in (950, 6000, 2.0e7, 1.5e9)] == ["950", "6k", "20M", "1.5G"]


def _labels(ax) -> list[tuple[float, str]]:
    """Every visible x tick label, major and minor, with its tick, in the order of the ticks."""
    ticks = [(t.get_loc(), t.label1) for t in ax.xaxis.get_major_ticks() + ax.xaxis.get_minor_ticks()]
    return sorted((loc, label) for loc, label in ticks if label.get_visible() and label.get_text()
                  and ax.get_xlim()[0] <= loc <= ax.get_xlim()[1])


def _overlapping_labels(fig, ax) -> list[tuple[str, str]]:
    """Pairs of tick labels (major and minor) whose boxes overlap on the canvas."""
    renderer = fig.canvas.get_renderer()
    boxes = [(label.get_text(), label.get_window_extent(renderer)) for _, label in _labels(ax)]
    return [(a, b) for i, (a, ba) in enumerate(boxes) for b, bb in boxes[i + 1:] if ba.overlaps(bb)]


def test_rung_labels_that_would_overlap_go_on_a_second_line_and_every_rung_keeps_its_label():
    """FEDIC's CPU rungs (4.86k, 9.72k, 38.9k sample-epochs) beside the paper's 9.72M: 4.86k and 9.72k,
    a factor 2 apart on an axis of 3.7 decades, were printed on top of each other, then 9.72k was dropped
    (FedConcat's quick ladder showed a rung without its budget).  Then 9.72k was put on a second line by a
    leading newline, whose box still overlapped 4.86k's (the figure rules refused the paper ladder,
    2026-11-26).  The second line is the minor ticks', padded down: no two boxes overlap, every rung has
    its label, and the second line's labels sit below the first's."""
    import matplotlib.pyplot as plt

    spec = L.spec_for("fedic")
    table = _table([6.45, 10.35, 15.39, math.nan], paper=10.99).assign(
        sample_epochs=[4862.4, 9724.8, 38899.2, 9724800.0], fedavg_mean=[13.3, 10.0, 10.0, math.nan],
        fedic_mean=[19.8, 20.4, 25.4, math.nan], n_seeds=[1, 1, 1, 0])
    fig = L.ladder_figure(spec, table)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        labels = _labels(ax)
        assert [loc for loc, _ in labels] == [4862.4, 9724.8, 38899.2, 9724800.0]  # a label at every rung
        assert [label.get_text() for _, label in labels] == ["4.86k", "9.72k", "38.9k", "9.72M"]
        assert _overlapping_labels(fig, ax) == []
        first, second = labels[0][1].get_window_extent(renderer), labels[1][1].get_window_extent(renderer)
        assert second.y1 <= first.y0  # the second line, below
        assert fig.bbox.contains(second.x0, second.y0)  # and on the canvas
    plt.close(fig)
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    ax.set_xlim(1e3, 1e5)
    from fedlib.repro.artefacts.ladder_figure import rung_ticks

    rung_ticks(ax, [2e3, 9e4, 1e5])
    fig.canvas.draw()
    assert [label.get_text() for _, label in _labels(ax)] == ["2k", "90k", "100k"]
    assert [t.get_loc() for t in ax.xaxis.get_minor_ticks() if t.label1.get_text()] == [1e5]
    assert _overlapping_labels(fig, ax) == []
    plt.close(fig)
    fig, ax = plt.subplots()  # the old thinning's case, labelled on one line: the check sees the overlap
    ax.set_xscale("log")
    ax.set_xlim(1e3, 1e5)
    ax.set_xticks([9e4, 1e5], ["90k", "100k"])
    ax.xaxis.set_minor_locator(plt.NullLocator())
    fig.canvas.draw()
    assert _overlapping_labels(fig, ax) == [("90k", "100k")]
    plt.close(fig)


def test_where_quicks_scale_does_not_fit_a_cpu_run_the_paper_ladder_starts_at_its_floor(monkeypatch):
    """FEDIC: a run of quick's 8 rounds of E = 2 on CIFAR-10-LT with ResNet-8 (and FEDIC's server steps) is
    beyond a CPU run's limit, so on a CPU the ladder climbs from its floor; on a GPU from quick's scale."""
    monkeypatch.setenv(costs.DEVICE_ENV, "cpu")
    paper = get_paper("fedic").profile("paper")
    spec = L.spec_for("fedic")
    assert spec.cpu_floor and spec.cpu_run_limit_s is not None
    cells, plan = L.ladder_cells(spec, paper)
    assert {k: plan[k][0] for k in spec.cpu_floor} == spec.cpu_floor
    ran = plan[plan.runs_here]
    assert len(ran) >= 3 and list(ran.rung) == list(range(len(ran)))  # from the bottom, at least three budgets
    for c in cells:
        if c["config"] is not None:  # every run that trains fits the ladder's own run limit
            assert paper.cost.seconds(c["config"]) <= spec.cpu_run_limit_s
    last = plan.iloc[-1]
    assert (last.rounds, last.local_epochs, bool(last.runs_here)) == (200, 10, False) and "needs a GPU" in last.note
    assert any("from a floor below the quick profile's scale" in d for d in L.deviations(spec, paper))
    # without the floor nothing fits: quick's own scale is already beyond a run's limit
    _, bare = L.ladder_cells(dataclasses.replace(spec, cpu_floor={}), paper)
    assert not bare.runs_here.any() and (bare.rounds[0], bare.local_epochs[0]) == (8, 2)
    # on a GPU every rung runs, from quick's scale
    monkeypatch.setenv(costs.DEVICE_ENV, "cuda")
    _, gpu = L.ladder_cells(spec, paper)
    assert gpu.runs_here.all() and (gpu.rounds[0], gpu.local_epochs[0]) == (8, 2)
    assert not any("floor" in d for d in L.deviations(spec, paper))


def test_a_floor_is_not_used_where_quicks_scale_fits_a_cpu_run(monkeypatch):
    monkeypatch.setenv(costs.DEVICE_ENV, "cpu")
    paper = get_paper("fedabc").profile("paper")
    spec = L.spec_for("fedabc")
    _, plain = L.ladder_cells(spec, paper)
    _, floored = L.ladder_cells(dataclasses.replace(spec, cpu_floor={"rounds": 2}), paper)
    assert plain.equals(floored) and plain.rounds[0] == 20


@pytest.mark.parametrize("floor", [{"rounds": 0}, {"lr": 1}, {"rounds": 1.5}, {"local_epochs": True}])
def test_a_bad_floor_or_run_limit_is_refused_naming_it(floor):
    with pytest.raises(ValueError, match="cpu_floor must map scale keys"):
        dataclasses.replace(L.spec_for("fedic"), cpu_floor=floor)
    with pytest.raises(ValueError, match="cpu_run_limit_s must be > 0"):
        dataclasses.replace(L.spec_for("fedic"), cpu_run_limit_s=0.0)


def test_the_plan_counts_the_ladder_runs_its_own_run_limit_affords(monkeypatch):
    """FEDIC's top CPU rung (4 rounds of E = 2, ≈ 58 CPU-min for FEDIC) is beyond the tables' 30-min limit and
    within the ladder's 60: the plan a regeneration is budgeted with counts it."""
    from fedlib.repro.budget.plan import plan

    monkeypatch.setenv(costs.DEVICE_ENV, "cpu")
    spec, paper = L.spec_for("fedic"), get_paper("fedic").profile("paper")
    _, ladder = L.ladder_cells(spec, paper)
    ran = ladder[ladder.runs_here]
    assert ran.est_cpu_min.max() * 60 / 2 > paper.cost.cpu_run_limit_s  # a rung's run beyond the tables' limit
    counted = plan("fedic")
    assert counted["runs"] == 2 * len(ran) * len(L.ladder_seeds(spec, paper))
    assert counted["cpu_s"] == pytest.approx(ran.est_cpu_min.sum() * 60)


def test_a_rung_whose_baseline_is_at_chance_is_drawn_apart_from_the_gap_the_finding_reads():
    """FEDIC's paper ladder: FedAvg at 10 % (chance on CIFAR-10) on rungs 1 and 2, whose +10.35 and +15.39 the
    finding leaves out (at_chance).  Drawn on the gap's line they read as a gap reaching the paper's: they are
    open markers off the line, named in the legend; the line holds rung 0 alone."""
    import matplotlib.pyplot as plt

    spec = L.spec_for("fedic")
    table = _table([6.30, 10.35, 15.39, math.nan], paper=10.99).assign(
        sample_epochs=[4862.4, 9724.8, 38899.2, 9724800.0], fedavg_mean=[13.3, 10.0, 10.0, math.nan],
        fedic_mean=[19.8, 20.4, 25.4, math.nan], n_seeds=[1, 1, 1, 0])
    assert list(L.at_chance(spec, table)) == [False, True, True, False]
    fig = L.ladder_figure(spec, table)
    gap = fig.axes[0]
    lines = {line.get_label(): line for line in gap.get_lines()}
    assert list(lines["ours (1 seed per rung: no spread measured)"].get_ydata()) == [6.30]
    apart = lines["ours, FedAvg at chance (left out)"]
    assert list(apart.get_ydata()) == [10.35, 15.39] and apart.get_markerfacecolor() == "none"
    assert apart.get_linestyle() == "None"
    assert "ours, FedAvg at chance (left out)" in [t.get_text() for t in gap.get_legend().get_texts()]
    # a rung not run is said in words at the bottom of the gap panel, not drawn as a marker on the paper's line
    assert "not run here" not in lines and [t.get_text() for t in gap.texts] == ["not run"]
    # the accuracy panel's empty rung (the paper's budget, 9.72M) is labelled in place, not left blank
    accuracy = fig.axes[1]
    assert [t.get_text() for t in accuracy.texts] == ["not run"]
    assert accuracy.texts[0].get_position()[0] == pytest.approx(9724800.0)
    from fedlib.repro.artefacts import figure_rules as fr

    assert fr.check_figure(fig, seeds=1)["cells_labelled"]
    plt.close(fig)


def test_a_rung_over_fewer_seeds_is_drawn_and_named_apart_and_the_figure_passes_its_rules():
    """FedLC's paper ladder: rungs 0-2 over the CPU's 3 seeds, the top rung over the 2 seeds a GPU trained.
    The caption said "std over 2 seeds" (the fewest) while three rungs' bars were over 3, and the figure rules
    refused it (2026-11-26).  Now the bars' caption is the most seeds', the top rung is an open square named
    "ours (2 of 3 seeds)" with its own std in the caption, the accuracy panel names its seeds at the rung, and
    the line still joins every rung."""
    import matplotlib.pyplot as plt
    from matplotlib.container import ErrorbarContainer

    from fedlib.repro.artefacts import figure_rules as fr

    spec = L.spec_for("fedlc")
    table = _table([0.64, 0.44, 0.91, 0.79], [3.52, 0.67, 0.52, 2.84], paper=12.81).assign(
        sample_epochs=[9.0e4, 2.08e5, 4.73e5, 2.0e7], fedavg_mean=[17.05, 25.95, 31.56, 64.33],
        fedlc_mean=[17.69, 26.39, 32.47, 65.12], n_seeds=[3, 3, 3, 2])
    caption = L.figure_caption(table)
    assert "std over 3 seeds" in caption and "the rung over 2 of 3 seeds (open squares): std over 2 seeds" in caption
    fig = L.ladder_figure(spec, table)
    assert all(fr.check_figure(fig, caption=caption, seeds=3).values())
    gap, accuracy = fig.axes
    bars = {c.get_label(): c for c in gap.containers if isinstance(c, ErrorbarContainer)}
    assert list(bars["ours"].lines[0].get_ydata()) == [0.64, 0.44, 0.91]
    apart = bars["ours (2 of 3 seeds)"].lines[0]
    assert list(apart.get_ydata()) == [0.79] and apart.get_marker() == "s" and apart.get_markerfacecolor() == "white"
    joined, = [ln for ln in gap.get_lines() if ln.get_label() == "_" and len(ln.get_xdata()) == 4]
    assert list(joined.get_ydata()) == [0.64, 0.44, 0.91, 0.79]
    assert "ours (2 of 3 seeds)" in [t.get_text() for t in gap.get_legend().get_texts()]
    named, = [t for t in accuracy.texts if t.get_text() == "2 of 3 seeds"]  # the accuracy panel names it at its rung
    assert named.get_position()[0] == pytest.approx(2.0e7)
    plt.close(fig)
    # the same rungs all over 3 seeds: one series, the caption as before
    even = table.assign(n_seeds=[3] * 4)
    assert L.figure_caption(even).endswith("Error bars: std over 3 seeds.")
    fig = L.ladder_figure(spec, even)
    assert [c.get_label() for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)] == ["ours"]
    assert all(fr.check_figure(fig, caption=L.figure_caption(even), seeds=3).values())
    plt.close(fig)


def test_on_a_cpu_a_rung_a_gpu_trained_is_read_from_the_store_and_its_other_seeds_say_not_run(tmp_path, monkeypatch):
    """FedLC's top rung is Table 1's cell (the same store keys): once a lease trained seeds 0 and 1 of both
    methods, the CPU's ladder shows that rung from them, as the table does (``budget.gate.decide``), and the grid
    reads those seeds and marks seed 2 "not run"; with one method's runs only, the rung stays not run."""
    from fedlib.config import Config
    from fedlib.repro.run.grid import run_grid
    from fedlib.store import Store

    monkeypatch.setenv(costs.DEVICE_ENV, "cpu")
    monkeypatch.setenv("FEDLIB_STORE", str(tmp_path))
    paper, spec = get_paper("fedlc").profile("paper"), L.spec_for("fedlc")
    _, plan = L.ladder_cells(spec, paper)
    top = int(plan.rung.max())
    assert not plan.runs_here.iloc[-1] and "needs a GPU" in plan.note.iloc[-1]
    store = Store(tmp_path)

    def plant(method: str, seed: int, accuracy: float) -> None:  # a finished GPU run of Table 1's cell, as a
        gpu = Config.from_dict({**budget_ladder._cell(paper, spec, method), "device": "cuda", "seed": seed})  # lease leaves it
        history = [{"round": gpu.rounds, "test_accuracy": accuracy}]
        summary = {"final_accuracy": accuracy, "device_name": "Test GPU", "wall_time_s": 400.0}
        store.save_result(store.key(gpu), gpu, summary, history, {})

    for seed in (0, 1):
        plant("fedavg", seed, 0.60 + seed / 100)
    cells, plan = L.ladder_cells(spec, paper)
    assert not plan.runs_here.iloc[-1]  # FedLC's runs are not there: no gap to show
    plant("fedlc", 0, 0.61)
    plant("fedlc", 1, 0.63)
    cells, plan = L.ladder_cells(spec, paper)
    assert plan.runs_here.iloc[-1] and "trained on a GPU (Test GPU): 2 of 3 seeds" in plan.note.iloc[-1]
    top_cells = [c for c in cells if c["rung"] == top]
    assert {c["method"] for c in top_cells} == {"fedavg", "fedlc"}
    assert all(c["config"]["device"] == "cuda" for c in top_cells)
    assert all(c["config"].get("device", "cpu") == "cpu" for c in cells if c["rung"] < top and c["config"])
    grid = run_grid(top_cells, seeds=L.ladder_seeds(spec, paper), store=tmp_path, progress=False)
    status = grid.runs.set_index(["method", "seed"]).status
    assert status.loc[("fedlc", 1)] == "ok" and status.loc[("fedavg", 2)] == "not run"
    assert grid.runs.set_index(["method", "seed"]).accuracy.loc[("fedlc", 1)] == pytest.approx(63.0)


def test_a_ladder_of_no_rung_is_not_drawn_and_says_what_each_rung_would_cost(tmp_path):
    """FEDIC's and FedLC's quick ladders ran no rung: their figures were two axes of "not run" labels beside
    the paper's line on a magnified axis, which read like data on the paper's value.  Now nothing is drawn:
    the sidecar says what the figure would show (the paper's gap) and each rung's estimated CPU time."""
    import json

    import matplotlib.pyplot as plt

    from fedlib.repro.artefacts.saving import save_figure

    spec = L.spec_for("fedic")
    table = _table([math.nan] * 4, paper=10.99).assign(
        sample_epochs=[77798.4, 335505.6, 1983859.2, 9724800.0], est_cpu_min=[130.3, 412.8, 1586.9, 6115.9],
        fedavg_mean=[math.nan] * 4, fedic_mean=[math.nan] * 4, n_seeds=[0] * 4)
    fig = L.ladder_figure(spec, table, title="Budget ladder")
    paths = save_figure(fig, "ladder", tmp_path, caption="The gap per rung.", seeds=(0,), datasets=[])
    plt.close(fig)
    assert set(paths) == {"json"} and not (tmp_path / "ladder.png").exists()
    said = json.loads((tmp_path / "ladder.json").read_text())["not_rendered"]
    assert "+10.99 pp" in said and "77.8k sample-epochs: 130 CPU-min" in said and "9.72M sample-epochs: 6116" in said
    assert L.figure_caption(table).startswith("No rung ran in this profile, so nothing is drawn")
