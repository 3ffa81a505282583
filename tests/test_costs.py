"""Run costs from unit costs, the paper profile's CPU/GPU gate, and the regeneration's budget check."""

import dataclasses
import math

import numpy as np
import pytest

import fedlib
from fedlib.repro.budget.gate import table_cells as gate_table_cells
from fedlib.partition import long_tail
from fedlib.repro.budget import costs
from fedlib.repro.budget import plan as planning
from fedlib.repro.budget.costs import CostModel, UnitCost, train_size
from fedlib.repro.budget.plan import PlanError, check_budget
from fedlib.repro.spec.paper import get_paper


def test_train_size_is_what_the_long_tail_keeps_after_the_server_data():
    # CIFAR-10: 5,000 per class, 100 per class taken out for D_aux, then IF = 100 (the partition code's own cut)
    labels = np.repeat(np.arange(10), 4900)
    kept = long_tail(labels, 100.0, seed=0)
    assert train_size({"dataset": "cifar10", "server_aux_per_class": 100, "long_tail_if": 100.0}) == len(kept)
    assert train_size({"dataset": "mnist"}) == 60000
    assert train_size({"dataset": "mnist", "max_train_samples": 6000, "validation_fraction": 0.2}) == 4800
    assert train_size({"dataset": "synthetic"}) is None  # its clients are drawn with the data


def test_a_run_costs_a_fixed_part_plus_rounds_times_its_client_sample_epochs():
    model = CostModel(units={"mlp": UnitCost(s_per_sample_epoch=1e-4, fixed_s=15.0)}, cpu_run_limit_s=300)
    cfg = {"dataset": "mnist", "model": "mlp", "rounds": 100, "participation": 0.1, "local_epochs": 5}
    # 100 rounds × (0.1 · 60,000 · 5 = 30,000 sample-epochs) × 1e-4 s + 15 s
    assert model.seconds(cfg) == pytest.approx(15.0 + 100 * 30000 * 1e-4)
    assert not model.fits_cpu(cfg) and model.fits_cpu({**cfg, "rounds": 10})
    assert model.seconds({**cfg, "model": "convnet"}) is None  # no unit cost: not estimated
    assert model.seconds(cfg, gpu=True) is None  # no GPU measurement


def test_a_dataset_whose_clients_come_with_it_is_priced_per_round():
    model = CostModel(units={"logreg": UnitCost(fixed_s=0.5, s_per_round=0.04)}, cpu_run_limit_s=60)
    assert model.seconds({"dataset": "synthetic", "rounds": 300}) == pytest.approx(0.5 + 300 * 0.04)


def test_the_most_specific_unit_cost_wins_and_stages_are_priced_each_by_their_own():
    units = {"cnn": UnitCost(s_per_sample_epoch=1.0), "cnn@fmnist": UnitCost(s_per_sample_epoch=2.0),
             "cnn+moon@fmnist": UnitCost(s_per_sample_epoch=3.0), "cnn@fmnist:stage3": UnitCost(s_per_sample_epoch=0.5)}

    def stages(cfg):
        return [(cfg["encoder_rounds"], ""), (cfg["classifier_rounds"], "stage3")] \
            if cfg["method"] == "twostage" else [(cfg["rounds"], "")]

    model = CostModel(units=units, cpu_run_limit_s=1e9, stages=stages)
    base = {"dataset": "fmnist", "model": "cnn", "participation": 1.0, "local_epochs": 1, "max_train_samples": 10}
    assert model.seconds({**base, "method": "fedavg", "rounds": 3}) == pytest.approx(3 * 10 * 2.0)
    assert model.seconds({**base, "method": "moon", "rounds": 3}) == pytest.approx(3 * 10 * 3.0)
    assert model.seconds({**base, "method": "fedavg", "rounds": 3, "dataset": "mnist"}) == pytest.approx(3 * 10 * 1.0)
    two = {**base, "method": "twostage", "encoder_rounds": 4, "classifier_rounds": 6}
    assert model.seconds(two) == pytest.approx(4 * 10 * 2.0 + 6 * 10 * 0.5)


def test_on_a_cpu_a_run_it_cannot_afford_is_not_run_with_its_estimate_and_on_cuda_every_run_runs():
    model = CostModel(units={"mlp": UnitCost(s_per_sample_epoch=1e-4, fixed_s=0.0)}, cpu_run_limit_s=60)
    cfg = {"dataset": "mnist", "model": "mlp", "rounds": 120, "participation": 1.0, "local_epochs": 1}
    out, note = model.gate(cfg, "cpu")
    assert out is None and note == ("not run: needs a GPU (est. GPU time not measured / "
                                    f"{120 * 60000 * 1e-4 / 3600:.1f} CPU-h on one core per run)")
    out, note = model.gate(cfg, "cuda")
    assert out == {**cfg, "device": "cuda"} and note == ""
    with_gpu = dataclasses.replace(model, units={"mlp": dataclasses.replace(model.units["mlp"],
                                                                            gpu_s_per_sample_epoch=1e-6)})
    assert "est. 0 GPU-min / 0.2 CPU-h" in with_gpu.not_run_note(cfg)
    with pytest.raises(ValueError, match="device must be 'cpu' or 'cuda'"):
        model.gate(cfg, "tpu")


def test_the_paper_profile_runs_on_a_cpu_what_fits_and_everything_on_cuda(monkeypatch):
    monkeypatch.delenv(costs.DEVICE_ENV, raising=False)
    prof = get_paper("fedabc").profile("paper")
    cells = gate_table_cells(prof, "table1")
    run = {c["column"] for c in cells if c["config"] is not None}
    assert run == {"mnist_dir0.1", "mnist_dir0.3", "mnist_dir0.5", "mnist_dir1.0"}  # the MLP fits, the ConvNet not
    assert all(c["note"].startswith("not run: needs a GPU (est.") for c in cells if c["config"] is None)
    for c in cells:  # the estimate each MNIST cell passed with is the model's, under the profile's limit
        if c["config"] is not None:
            assert prof.cost.seconds(c["config"]) <= prof.cost.cpu_run_limit_s
    monkeypatch.setenv(costs.DEVICE_ENV, "cuda")
    cells = gate_table_cells(prof, "table1")
    assert all(c["config"] is not None and c["config"]["device"] == "cuda" for c in cells)
    assert prof.to_dict()["device"] == "cuda"
    # the quick profile has no cost model: untouched by the device
    assert all("device" not in (c["config"] or {}) for c in gate_table_cells(get_paper("fedabc").profile("quick"), "table1"))


def test_a_budget_check_refuses_a_plan_over_its_budget_unless_told():
    plans = [{"paper": "x", "profile": "paper", "device": "cpu", "runs": 4, "stored": 1, "not_run": 2,
              "unknown": 0, "cpu_s": 4 * 3600.0, "wall_s": 2 * 3600.0, "workers": 2}]
    assert "estimated total: 2.0 h" in check_budget(plans, 3.0)
    with pytest.raises(PlanError, match="exceeds the budget of 1 h"):
        check_budget(plans, 1.0)
    assert "budget 1 h" in check_budget(plans, 1.0, allow_over=True)


def test_a_plan_counts_the_runs_to_train_less_those_in_the_store(tmp_path, monkeypatch):
    monkeypatch.delenv(costs.DEVICE_ENV, raising=False)
    cfg = {"dataset": "synthetic", "num_clients": 5, "rounds": 2, "seed": 0}
    assert not planning._in_store(cfg, tmp_path)
    fedlib.run(cfg, store=tmp_path, progress=False)
    assert planning._in_store(cfg, tmp_path)
    p = planning.plan("fedabc", "paper", store=tmp_path)
    prof = get_paper("fedabc").profile("paper")
    table_runs = {(c["row"], c["column"]) for c in gate_table_cells(prof, "table1") if c["config"] is not None}
    assert p["runs"] >= len(table_runs) * len(prof.seeds)  # Tables 1-2 share their runs; the studies add more
    assert p["not_run"] >= 36 * len(prof.seeds)  # the CIFAR-10 cells
    assert p["cpu_s"] == pytest.approx(p["wall_s"] * p["workers"]) and not math.isnan(p["cpu_s"])


def test_the_regeneration_refuses_before_running_anything(tmp_path, monkeypatch, capsys):
    from fedlib.repro.regenerate import main

    monkeypatch.delenv(costs.DEVICE_ENV, raising=False)
    code = main(["--profile", "paper", "--paper", "fedabc", "--budget-hours", "0.01", "--figures",
                 str(tmp_path / "figures"), "--store", str(tmp_path / "store"), "--no-index"])
    assert code == 2
    err = capsys.readouterr().err
    assert "refused: the estimate exceeds the budget of 0.01 h" in err and "--over-budget" in err
    assert not (tmp_path / "figures").exists()


def test_fedlc_table4s_synthetic_columns_fit_this_cpu_and_a_notebook_selection_plans_only_its_runs(monkeypatch):
    monkeypatch.delenv(costs.DEVICE_ENV, raising=False)
    pp = get_paper("fedlc")
    views = planning.selected_views("fedlc", ["05"])  # notebook 05: Table 4 (and the α check, which trains nothing)
    assert [v.notebook for v in views] == ["05_federated_datasets"]
    p = planning.plan("fedlc", "paper", store=None, views=views)
    table = pp.table("table4")
    synthetic = [c for c in table.columns if c.dataset == "synthetic"]
    assert p["runs"] == len(table.rows) * len(synthetic) * len(pp.seeds) == 105
    assert p["not_run"] == len(table.rows) * (len(table.columns) - len(synthetic)) * len(pp.seeds)  # FEMNIST
    unit = pp.profile("paper").cost.units["logreg"]
    assert p["cpu_s"] == pytest.approx(105 * (unit.fixed_s + 300 * unit.s_per_round))
    assert planning.plan("fedlc", "paper", store=None)["runs"] > p["runs"]  # the whole paper plans more


def test_a_cell_whose_dataset_is_absent_says_so_first(tmp_path, monkeypatch):
    """On a CPU a gated cell of an absent dataset is 'absent here', not only 'needs a GPU' or 'cost not
    measured' (FedLC's FEMNIST columns); a present dataset keeps the cost model's note alone."""
    monkeypatch.delenv(costs.DEVICE_ENV, raising=False)
    prof = get_paper("fedlc").profile("paper")
    femnist = [c for c in gate_table_cells(prof, "table4") if c["column"].startswith("femnist")]
    assert femnist and all(c["config"] is None for c in femnist)
    assert all(c["note"].startswith("not run: FEMNIST is absent here") and "where present" in c["note"] for c in femnist)
    cifar = [c for c in gate_table_cells(prof, "table1") if c["column"] == "cifar10_beta0.5"]
    assert all(c["note"].startswith("not run: needs a GPU (est.") for c in cifar)  # CIFAR-10 is present here
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))  # an empty data root: now CIFAR-10 is absent too
    cifar = [c for c in gate_table_cells(prof, "table1") if c["column"] == "cifar10_beta0.5"]
    assert all(c["note"].startswith("not run: CIFAR-10 is absent here") and "needs a GPU" in c["note"] for c in cifar)
