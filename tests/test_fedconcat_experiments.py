"""The FedConcat companion's studies and their parts against independent references: the round budget and
its sensitivity re-derived by hand from the model's layer shapes, the FedLC comparison built
from the printed tables, the clusters' summary numbers recomputed in loops, the 5-encoder model
of Fig. 4 counted by hand, and the cells of every notebook shared with Table 1's runs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from fedlib.repro.budget.gate import decide, table_cells as gate_table_cells
from fedlib import run
from fedlib.algorithms import fedconcat as fc
from fedlib.repro.artefacts.tables import grid_cells
from fedlib.config import Config
from fedlib.repro.run.grid import GridResult
from fedlib.models import build_model
from fedlib.papers.fedconcat import PAPER
from fedlib.papers.fedconcat import analysis as C
from fedlib.papers.fedconcat import cells as CE
from fedlib.papers.fedconcat import clusters as CL
from fedlib.papers.fedconcat import fig1 as F1
from fedlib.papers.fedconcat import final_architecture as FA
from fedlib.papers.fedconcat import round_budget as RB
from fedlib.papers.fedconcat import third_party as TP
from fedlib.papers.fedconcat import reported as paper
from fedlib.papers.fedconcat.profiles import BUDGET_VARIANTS
from fedlib.repro.budget.costs import ungated
from tests.conftest import have_dataset

_T1 = tuple(c.key for c in paper.TABLE1.columns)


def _study_cells(name: str, profile) -> list[dict]:
    """The cells a declared study asks the grid for under ``profile``."""
    return PAPER.study(name).cells(profile)


# ------------------------------------------------------------------------------ sizes by hand
def _simple_cnn_sizes(channels: int, side: int, classes: int = 10) -> tuple[int, int, int]:
    """(M, |E|, d) of the simple CNN from its layer shapes: conv 5×5 C→6, conv 5×5 6→16, fc →120 → 84."""
    flat = 16 * (((side - 4) // 2 - 4) // 2) ** 2
    encoder = (6 * channels * 25 + 6) + (16 * 6 * 25 + 16) + (flat * 120 + 120) + (120 * 84 + 84)
    return encoder + 84 * classes + classes, encoder, 84


def _budget_by_hand(m, e, d, k, te, tc, classes=10, variant="both") -> float:
    head = k * d * classes + classes
    if variant == "both":
        return te + k * e / (2 * m) + tc * head / m
    if variant == "upload":
        return te + tc * head / m
    if variant == "download":
        return te + k * e / m + tc * head / m
    if variant == "stage2":
        return te
    if variant == "stage2+broadcast":
        return te + k * e / (2 * m)
    if variant == "probe":
        return te + k * e / (2 * m) + tc * head / m + 1
    raise ValueError(variant)


_VARIANT_KEYS = dict(zip(BUDGET_VARIANTS, ("both", "upload", "download", "stage2", "stage2+broadcast", "probe")))


@pytest.mark.parametrize("dataset,channels,side", [("fmnist", 1, 28), ("cifar10", 3, 32)])
@pytest.mark.parametrize("te,tc", [(50, 1000), (10, 100), (3, 7)])
def test_every_way_of_counting_matches_the_hand_formula(dataset, channels, side, te, tc):
    m, e, d = _simple_cnn_sizes(channels, side)
    cfg = {"dataset": dataset, "model": "simple_cnn", "num_clusters": 5, "encoder_rounds": te, "classifier_rounds": tc}
    got = RB.budget_variants(cfg, BUDGET_VARIANTS).set_index("variant")
    for name, key in _VARIANT_KEYS.items():
        expected = _budget_by_hand(m, e, d, 5, te, tc, variant=key)
        assert got.loc[name, "total"] == pytest.approx(expected, rel=1e-12)
        assert got.loc[name, "rounds"] == round(expected)


def test_the_profiles_give_the_baselines_the_stated_rounds():
    for profile, fmnist, cifar in (("paper", 147, 120), ("quick", 14, 13)):
        prof = ungated(PAPER.profile(profile))  # the cells as the profile sets them, whatever this CPU affords
        cells = {(c["row"], c["column"]): c["config"] for c in gate_table_cells(prof, "table1") if c["config"]}
        assert cells[("fedavg", "fmnist_c2")]["rounds"] == fmnist
        assert cells[("moon", "cifar10_c2")]["rounds"] == cifar
        m, e, d = _simple_cnn_sizes(1, 28)
        te, tc = cells[("fedavg", "fmnist_c2")]["encoder_rounds"], cells[("fedavg", "fmnist_c2")]["classifier_rounds"]
        assert fmnist == round(_budget_by_hand(m, e, d, 5, te, tc))
        assert any(f"FMNIST {fmnist}, CIFAR-10 {cifar}" in line for line in prof.deviations("table1"))


def test_centralized_is_one_run_per_dataset_of_ten_epochs():
    quick = PAPER.profile("quick")
    cells = [c["config"] for c in gate_table_cells(quick, "table1")
             if c["row"] == "centralized" and c["config"] and c["config"]["dataset"] == "fmnist"]
    assert len(cells) == 4 and all(c == cells[0] for c in cells)  # identical: run_grid runs it once
    c = Config.from_dict({**cells[0], "seed": 0})
    assert (c.num_clients, c.partition, c.rounds, c.local_epochs) == (1, "iid", 1, C.CENTRALIZED_EPOCHS)
    assert c.partition_k == Config().partition_k and c.partition_beta == Config().partition_beta


# ------------------------------------------------------------------------------ the sensitivity
def _fake_grid(curves: dict, finals: dict, column: str = "fmnist_c2") -> GridResult:
    """Baselines with per-round accuracies ``curves[m]`` (round 1 …), FedConcat(-ID) with final ``finals[m]``."""
    hist, runs = [], []
    for m, accs in curves.items():
        for seed in (0, 1):
            for r, a in enumerate(accs, start=1):
                hist.append({"row": m, "column": column, "method": m, "seed": seed, "round": r,
                             "test_accuracy": a + (0.5 if seed else -0.5), "train_loss": 0.0})
            runs.append({"row": m, "column": column, "method": m, "seed": seed, "status": "ok", "note": "",
                         "accuracy": accs[-1] + (0.5 if seed else -0.5)})
    for m, a in finals.items():
        for seed in (0, 1):
            hist.append({"row": m, "column": column, "method": m, "seed": seed, "round": 3, "test_accuracy": 0.0,
                         "train_loss": 0.0, "stage": "classifier"})
            runs.append({"row": m, "column": column, "method": m, "seed": seed, "status": "ok", "note": "",
                         "accuracy": a})
    return GridResult(pd.DataFrame(runs), pd.DataFrame(hist), ["row", "column", "method"])


def test_sensitivity_reads_each_budget_off_the_curves_and_ranks_by_hand():
    cfg = {"dataset": "fmnist", "model": "simple_cnn", "num_clusters": 5, "encoder_rounds": 3, "classifier_rounds": 20}
    m, e, d = _simple_cnn_sizes(1, 28)
    rng = np.random.default_rng(0)
    n = round(_budget_by_hand(m, e, d, 5, 3, 20))  # the default budget: every curve ends there
    curves = {b: list(np.round(rng.uniform(40, 90, n), 2)) for b in CE.BASELINES}
    grid = _fake_grid(curves, {"fedconcat": 80.0, "fedconcat_id": 60.0})
    sens = RB.budget_sensitivity(grid, BUDGET_VARIANTS, {"fmnist_c2": cfg})
    for name, key in _VARIANT_KEYS.items():
        r = round(_budget_by_hand(m, e, d, 5, 3, 20, variant=key))
        got = sens[sens.variant == name].set_index("method")
        assert (got["rounds"] == r).all()
        expected = {b: (curves[b][r - 1] if r <= n else math.nan) for b in CE.BASELINES}  # mean of ±0.5 over seeds
        expected.update(fedconcat=80.0, fedconcat_id=60.0)
        for meth, acc in expected.items():
            assert (math.isnan(acc) and math.isnan(got.loc[meth, "accuracy"])) or got.loc[meth, "accuracy"] == \
                pytest.approx(acc)
        measured = {k: v for k, v in expected.items() if not math.isnan(v)}
        for meth, acc in measured.items():  # rank 1 = best, ties share the better rank
            assert got.loc[meth, "rank"] == 1 + sum(v > acc for v in measured.values())
    summary = RB.ranking_summary(sens).set_index("variant")
    default = next(iter(BUDGET_VARIANTS))
    best = max(CE.BASELINES, key=lambda b: curves[b][n - 1])
    assert summary.loc[default, "best baseline"] == paper.METHOD_LABELS[best]
    assert summary.loc[default, "FedConcat − best baseline"] == pytest.approx(80.0 - curves[best][n - 1])
    assert summary.loc[default, "baselines measured"] == "5/5"
    beyond = [v for v, k in _VARIANT_KEYS.items() if round(_budget_by_hand(m, e, d, 5, 3, 20, variant=k)) > n]
    assert beyond and all(summary.loc[v, "baselines measured"] == "0/5" for v in beyond)


# ------------------------------------------------------------------------------ FedLC, three ways
def test_fedlc_gaps_come_from_the_printed_tables():
    """FedLC − FedAvg typed from the two papers' tables: FedLC's Table 2 (α=2) and Table 1 (β),
    FedConcat's Table 1 (slides)."""
    gaps = TP.fedlc_gaps().set_index("column")
    claims = {"cifar10_c2": 61.87 - 52.23, "cifar10_dir0.1": 65.91 - 48.07, "cifar10_dir0.5": 72.99 - 60.18,
              "svhn_dir0.1": 84.41 - 79.86, "svhn_dir0.5": 88.48 - 86.02}
    third = {"cifar10_c2": 49.8 - 53.6, "cifar10_c3": 58.1 - 57.6, "cifar10_dir0.1": 53.7 - 53.0,
             "cifar10_dir0.5": 61.5 - 59.9, "svhn_c2": 75.7 - 82.8, "svhn_c3": 84.8 - 85.2, "svhn_dir0.1": 78.8 - 84.0,
             "svhn_dir0.5": 87.1 - 87.2, "fmnist_c2": 77.7 - 79.0, "fmnist_c3": 86.0 - 84.7,
             "fmnist_dir0.1": 82.1 - 85.1, "fmnist_dir0.5": 87.5 - 87.5}
    assert set(gaps.index) == set(third)
    for col, v in third.items():
        assert gaps.loc[col, TP.THIRD_PARTY] == pytest.approx(v)
        assert gaps.loc[col, TP.CLAIM] == pytest.approx(claims[col]) if col in claims else \
            math.isnan(gaps.loc[col, TP.CLAIM])  # FMNIST and #C=3 have no FedLC counterpart
        assert math.isnan(gaps.loc[col, TP.OURS])
    ours = pd.DataFrame([{"column": "fmnist_c2", "row": "fedlc", "ours_mean": 70.25},
                         {"column": "fmnist_c2", "row": "fedavg", "ours_mean": 71.5},
                         {"column": "fmnist_c2", "row": "fedrs", "ours_mean": 99.0}])
    assert TP.fedlc_gaps(ours).set_index("column").loc["fmnist_c2", TP.OURS] == pytest.approx(-1.25)


def test_the_companions_measurement_is_read_from_its_output(tmp_path):
    assert TP.fedlc_companion_gaps(tmp_path) is None
    pd.DataFrame([
        {"setting": "D(β=0.1)", "effect": "FedLC − FedAvg", "paper": 17.84, "stand-in": -0.97, "CIFAR-10": 0.82},
        {"setting": "D(β=0.1)", "effect": "FedLC − FedRS", "paper": 11.87, "stand-in": 6.17, "CIFAR-10": -1.4},
        {"setting": "Q(α=2)", "effect": "FedLC − FedAvg", "paper": 9.64, "stand-in": -0.4, "CIFAR-10": -0.25},
    ]).to_csv(tmp_path / "stand_in_effects.csv", index=False)
    got = TP.fedlc_companion_gaps(tmp_path).set_index(["dataset", "partition"])[TP.COMPANION]
    assert got.to_dict() == {("FMNIST", "Dir(0.1)"): -0.97, ("CIFAR-10", "Dir(0.1)"): 0.82,
                             ("FMNIST", "#C=2"): -0.4, ("CIFAR-10", "#C=2"): -0.25}


def test_fedlc_findings_state_the_means_by_source():
    gaps = TP.fedlc_gaps()
    lines = TP.fedlc_findings(gaps)
    both = gaps.dropna(subset=[TP.CLAIM, TP.THIRD_PARTY])
    claim = np.mean([61.87 - 52.23, 65.91 - 48.07, 72.99 - 60.18, 84.41 - 79.86, 88.48 - 86.02])
    third = np.mean([49.8 - 53.6, 53.7 - 53.0, 61.5 - 59.9, 78.8 - 84.0, 87.1 - 87.2])
    assert len(both) == 5
    assert any(f"claims {claim:+.1f} pp" in line and f"measures {third:+.1f} pp" in line and "no gain" in line
               for line in lines)
    fmnist = np.mean([77.7 - 79.0, 86.0 - 84.7, 82.1 - 85.1, 0.0])
    assert any(line.startswith("FedLC − FedAvg on FMNIST") and f"{fmnist:+.1f} pp" in line for line in lines)


# ------------------------------------------------------------------------------ clusters, Fig. 1
class _Stub:
    def __init__(self, points, clusters):
        self.label_distributions, self.clusters = points, clusters


def test_cluster_view_and_summary_against_loops():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 20, size=(9, 4)) + np.eye(4, dtype=int)[rng.integers(0, 4, 9)] * 50
    true = counts / counts.sum(1, keepdims=True)
    inferred = np.abs(true + rng.normal(0, 0.05, true.shape))
    inferred /= inferred.sum(1, keepdims=True)
    clusters = [2, 0, 1, 2, 0, 1, 1, 0, 2]
    view = CL.cluster_view(_Stub(inferred.tolist(), clusters), counts)
    assert view.client.tolist() == sorted(range(9), key=lambda i: (clusters[i], i))
    stats = CL.cluster_agreement(view, reference_clusters=[5, 3, 4, 5, 3, 4, 4, 3, 5])
    assert stats["sizes"] == [3, 3, 3] and stats["ari_vs_reference"] == pytest.approx(1.0)
    spread = []
    for k in range(3):
        members = true[[i for i in range(9) if clusters[i] == k]]
        spread.append(np.mean([np.abs(row - members.mean(0)).sum() for row in members]))
    assert stats["within_cluster_l1"] == pytest.approx(np.mean(spread))
    r = [np.corrcoef(inferred[i], true[i])[0, 1] for i in range(9)]
    assert stats["mean_correlation"] == pytest.approx(np.mean(r))


def test_disjoint_pair_is_the_least_overlapping():
    counts = np.array([[5, 5, 0, 0], [0, 5, 5, 0], [1, 0, 0, 9], [0, 0, 4, 4]])
    assert F1.disjoint_pair(counts) == (0, 3)  # classes {0,1} and {2,3}: no overlap
    assert F1.disjoint_pair(np.array([[1, 1], [1, 1], [2, 1]])) == (0, 2)


@pytest.mark.skipif(not have_dataset("cifar10"), reason="CIFAR-10 absent")
def test_fig1_evaluates_the_initial_model_on_each_clients_classes():
    from fedlib.simulation import evaluate, prepare

    acc, info = F1.fig1_two_clients(PAPER.profile("smoke"), "cifar10_c2", 1, 0)
    assert len(acc) == len(F1.FIG1_MODELS) * len(F1.FIG1_TESTS)
    assert not set(info["classes"]["A"]) & set(info["classes"]["B"])
    exp = prepare(Config.from_dict(info["config"]))
    params = exp.initial_params()
    for test, cls in zip(F1.FIG1_TESTS, (info["classes"]["A"], info["classes"]["B"], list(range(10)))):
        mask = torch.isin(exp.data.test_y, torch.tensor(cls))
        expected, _ = evaluate(exp.model, params, exp.data.test_x[mask], exp.data.test_y[mask], 10)
        got = acc[(acc.model == F1.FIG1_MODELS[0]) & (acc["test set"] == test)].accuracy.iloc[0]
        assert got == pytest.approx(100 * expected)


@pytest.mark.skipif(not have_dataset("cifar10"), reason="CIFAR-10 absent")
def test_fig1_runs_in_the_paper_profile_where_its_tables_cell_needs_a_gpu(monkeypatch):
    """The paper profile's Fig. 1 stopped with 'not run in this profile': it took Table 1's cell, which a CPU
    cannot afford (120 rounds of E = 10), though Fig. 1 trains one round of two clients."""
    monkeypatch.setenv("FEDLIB_DEVICE", "cpu")
    assert decide(PAPER.profile("paper"), paper.TABLE1.config("fedavg", "cifar10_c2"), "table1")[0] is None
    acc, info = F1.fig1_two_clients(PAPER.profile("paper"), "cifar10_c2", 10, 0)
    cfg = info["config"]
    assert (cfg["dataset"], cfg["rounds"], cfg["local_epochs"], cfg["num_clients"]) == ("cifar10", 1, 10, 40)
    assert len(acc) == len(F1.FIG1_MODELS) * len(F1.FIG1_TESTS) and acc.accuracy.between(0, 100).all()


# ------------------------------------------------------------------------------ Figs. 3-4
def test_fig4_model_is_five_fresh_encoders_and_one_linear_layer():
    m, e, d = _simple_cnn_sizes(3, 32)
    torch.manual_seed(0)
    net = build_model("concat5_simple_cnn", 10, (3, 32, 32))
    assert sum(p.numel() for p in net.parameters()) == 5 * e + 5 * d * 10 + 10
    assert not list(net.buffers()) and net.classifier.in_features == 5 * d
    firsts = [enc.conv1.weight for enc in net.encoders]
    assert all(not torch.equal(firsts[0], w) for w in firsts[1:])  # independently initialised
    x = torch.randn(3, 3, 32, 32)
    assert torch.equal(net.features(x), torch.cat([enc.features(x) for enc in net.encoders], 1))
    assert torch.allclose(net(x), net.classifier(net.features(x)))


def test_fig4_rounds_by_hand():
    m, e, d = _simple_cnn_sizes(3, 32)
    big = 5 * e + 5 * d * 10 + 10
    cfg, _ = decide(PAPER.profile("quick"), paper.TABLE1.config("fedavg", "cifar10_c2"), "table1")
    total = _budget_by_hand(m, e, d, 5, 6, 60)
    assert FA.fig4_rounds(cfg, "concat5_simple_cnn", "rounds") == round(total) == cfg["rounds"]
    assert FA.fig4_rounds(cfg, "concat5_simple_cnn", "communication") == max(1, round(total * m / big)) == 3
    with pytest.raises(ValueError, match="budget must be"):
        FA.fig4_rounds(cfg, "concat5_simple_cnn", "bytes")


@pytest.mark.parametrize("profile", ["quick", "paper"])
def test_the_notebooks_share_table_1s_runs(profile):
    prof = ungated(PAPER.profile(profile))  # every cell configured, whatever this CPU affords
    t1 = {(c["row"], c["column"]): c["config"] for c in grid_cells(prof, "table1") if c["config"]}
    for c in _study_cells("fig3", prof):
        if c["clustering"].startswith("with "):
            assert c["config"] == t1[("fedconcat", c["column"])]
        else:
            assert c["config"] == {**t1[("fedconcat", c["column"])], "fedconcat_clustering": "random"}
    for c in _study_cells("fig4", prof):
        if c["architecture"] != "FedConcat's final architecture":
            assert c["config"] == t1[(c["method"], c["column"])]
        else:
            assert c["config"]["model"] == "concat5_simple_cnn"
            assert {k: v for k, v in c["config"].items() if k not in ("model", "rounds")} == \
                {k: v for k, v in t1[(c["method"], c["column"])].items() if k not in ("model", "rounds")}
    for column in prof.setting("clusters", "columns"):
        for m in ("fedconcat", "fedconcat_id"):
            assert decide(prof, paper.TABLE1.config(m, column), "table1")[0] == t1[(m, column)]


def test_communication_curves_by_hand():
    m, e, d = _simple_cnn_sizes(3, 32)
    cells = _study_cells("fig4", PAPER.profile("quick"))
    hist = pd.DataFrame([{"method": "fedavg", "architecture": a, "seed": 0, "round": r, "test_accuracy": 10.0 * r}
                         for a in ("one cluster model (Table 1)", "FedConcat's final architecture") for r in (1, 2)])
    runs = pd.DataFrame([{"method": "fedconcat", "architecture": "FedConcat", "seed": 0, "status": "ok",
                          "accuracy": 55.0}])
    curves = FA.communication_curves(GridResult(runs, hist, ["method", "architecture"]), cells)
    one = curves[curves.architecture == "one cluster model (Table 1)"]
    assert one.communication_M.tolist() == pytest.approx([2 * m / 1e6, 4 * m / 1e6])
    big = curves[curves.architecture == "FedConcat's final architecture"]
    assert big.communication_M.tolist() == pytest.approx([2 * (5 * e + 5 * d * 10 + 10) * r / 1e6 for r in (1, 2)])
    point = curves[curves.method == "fedconcat"].iloc[0]
    assert point.communication_M == pytest.approx(2 * m * _budget_by_hand(m, e, d, 5, 6, 60) / 1e6)
    assert point.accuracy == 55.0


def test_random_groups_are_balanced_seeded_and_blind_to_the_labels():
    g = fc.random_groups(23, 5, seed=3)
    assert sorted(np.bincount(g, minlength=5).tolist()) == [4, 4, 5, 5, 5]
    assert np.array_equal(g, fc.random_groups(23, 5, seed=3))
    assert not np.array_equal(g, fc.random_groups(23, 5, seed=4))


@pytest.mark.skipif(not have_dataset("fmnist"), reason="FashionMNIST absent")
def test_fedconcat_without_clustering_uses_the_random_groups():
    cfg = dict(dataset="fmnist", partition="classes_per_client", partition_k=2, num_clients=10, max_train_samples=400,
               max_test_samples=100, model="simple_cnn", batch_size=32, lr=0.05, seed=2, method="fedconcat",
               num_clusters=3, encoder_rounds=1, classifier_rounds=1, fedconcat_clustering="random")
    r = run(cfg, store=False, progress=False)
    assert r.clusters == fc.random_groups(10, 3, seed=2).tolist()
    with pytest.raises(Exception, match="fedconcat_clustering"):
        Config.from_dict({**cfg, "fedconcat_clustering": "spectral"})


def test_the_budget_study_has_no_column_where_the_profiles_fedavg_cell_needs_a_gpu(monkeypatch):
    """The paper profile on a CPU trains only Table 1's Centralized cells: notebook 03 stopped on the
    columns where they ran, FedAvg's cell being a GPU's.  Now it has no column, and its tables are empty."""
    monkeypatch.setenv("FEDLIB_DEVICE", "cpu")
    runs = pd.DataFrame({"column": ["cifar10_c2", "fmnist_c2"], "method": ["centralized"] * 2, "seed": [0, 0],
                         "status": ["ok"] * 2, "accuracy": [63.0, 88.0]})
    grid = GridResult(runs, pd.DataFrame(), ["column", "method"], 0.0)
    assert RB.budget_configs(PAPER.profile("paper"), grid, _T1) == {}
    quick = RB.budget_configs(PAPER.profile("quick"), grid, _T1)
    assert set(quick) <= {"cifar10_c2", "fmnist_c2"} and all(cfg["method"] == "fedavg" for cfg in quick.values())
    variants = dict(BUDGET_VARIANTS)
    empty = RB.budget_rounds({}, variants)
    assert empty.empty and list(empty.columns) == ["variant", "total", "rounds", "column"]
    summary = RB.ranking_summary(RB.budget_sensitivity(grid, variants, {}))
    assert summary.empty and "FedConcat rank" in summary.columns
