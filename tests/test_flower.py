"""fedlib.flower: fedlib's methods as Flower apps.

The heart is parity: the same configuration run in Flower's own simulation engine (Ray actors,
records crossing the wire, replies in whatever order they come) ends with the same parameters
as fedlib's sequential reference, for every method of issue 22's list.  Each simulation starts a
local Ray instance of 2 CPUs (one per ClientApp), which costs ≈ 40 s on a loaded 2-core machine,
so each dataset's configurations run one after another in ONE simulation (``run_simulations``).
"""

import json
import subprocess
import sys

import pytest
import torch

from conftest import REPO, have_dataset

flwr = pytest.importorskip("flwr", reason="fedlib[flower] not installed")
pytest.importorskip("ray", reason="fedlib[flower] not installed")

import fedlib  # noqa: E402
import fedlib.flower  # noqa: E402
from fedlib.__main__ import main  # noqa: E402
from fedlib.config import Config  # noqa: E402
from fedlib.flower import bridge  # noqa: E402
from fedlib.flower.records import from_record, to_record  # noqa: E402

RUN = dict(engine="sequential", store=False, progress=False)

SYNTHETIC = dict(dataset="synthetic", num_clients=3, rounds=2, batch_size=32, seed=0)
SYNTHETIC_RUNS = {
    "fedavg": {}, "fedprox": {"mu": 0.1}, "scaffold": {}, "fednova": {"momentum": 0.5}, "fedopt": {"server_lr": 0.05},
    "fedlc": {"tau": 0.5}, "fedrs": {}, "fedlc+scaffold": {}, "fedper": {"personal_eval_every": 1},
    # fedlib's client sampling, seeded by (seed, round), is the server's: two of three clients a round
    "scaffold@0.5": {"participation": 0.5},
}
FMNIST = dict(dataset="fmnist", model="cnn_mnist", max_train_samples=1200, max_test_samples=300, long_tail_if=10,
              partition="dirichlet", min_client_size=5, num_clients=4, batch_size=32, rounds=2, seed=0, lr=0.05,
              server_aux_per_class=5, server_unlabeled="long_tail_dropped", distill_steps=2, distill_batch_size=16,
              fedic_finetune_steps=2, fedic_calibration_steps=2, fedic_distill_steps=2, fedic_ulb_batch_size=16)
FMNIST_RUNS = {"fedavg": {}, "fedlc+scaffold": {}, "fedper": {"personal_eval_every": 2}, "feddf": {}, "fedic": {},
               "ratio_loss": {}}


def _configs(base: dict, runs: dict) -> dict:
    return {name: {**base, "method": name.split("@")[0], **extra} for name, extra in runs.items()}


def _parity(flower_result, config: dict) -> None:
    """Final parameters equal to float32 rounding, and the same evaluated history."""
    ref = fedlib.run(**config, **RUN)
    assert flower_result.params.keys() == ref.params.keys()
    for k, v in ref.params.items():
        torch.testing.assert_close(flower_result.params[k], v, rtol=1e-5, atol=1e-6, msg=k)
    assert flower_result.history["round"].tolist() == ref.history["round"].tolist()
    for col in ("test_accuracy", "train_loss", "personalized_accuracy", "drift_accuracy", "teacher_accuracy"):
        if col in ref.history:
            expected = pytest.approx(ref.history[col].tolist(), rel=1e-6, nan_ok=True)
            assert flower_result.history[col].tolist() == expected, col
    assert flower_result.final_accuracy == pytest.approx(ref.final_accuracy, rel=1e-6)
    assert flower_result.summary["engine"] == "flower"


@pytest.fixture(scope="module")
def synthetic_results():
    configs = _configs(SYNTHETIC, SYNTHETIC_RUNS)
    return dict(zip(configs, fedlib.flower.run_simulations(list(configs.values())))), configs


@pytest.fixture(scope="module")
def fmnist_results():
    if not have_dataset("fmnist"):
        pytest.skip("FashionMNIST not under the data root")
    configs = _configs(FMNIST, FMNIST_RUNS)
    return dict(zip(configs, fedlib.flower.run_simulations(list(configs.values())))), configs


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SYNTHETIC_RUNS))
def test_flower_simulation_equals_fedlib_sequential_on_synthetic(synthetic_results, name):
    results, configs = synthetic_results
    _parity(results[name], configs[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FMNIST_RUNS))
def test_flower_simulation_equals_fedlib_sequential_on_fmnist(fmnist_results, name):
    results, configs = fmnist_results
    _parity(results[name], configs[name])


@pytest.mark.slow
def test_personalized_evaluation_on_the_nodes_pools_as_fedlib(synthetic_results):
    results, configs = synthetic_results
    ref = fedlib.run(**configs["fedper"], **RUN)
    assert results["fedper"].personalized_accuracy == pytest.approx(ref.personalized_accuracy, rel=1e-9)
    assert results["fedper"].drift_accuracy == pytest.approx(ref.drift_accuracy, rel=1e-9)
    assert results["fedper"].personalized_per_client == pytest.approx(ref.personalized_per_client, rel=1e-9)


# ------------------------------------------------------------------------------ without Ray: the apps' parts
@pytest.fixture
def task_identity(monkeypatch):
    """Messages outside a run need a task identity (Flower sets it in a run)."""
    from flwr.supercore.task_identity import TaskIdentity

    for name in ("_run_id", "_task_id", "_node_id"):
        monkeypatch.setattr(TaskIdentity, name, 1)


def _train_message(exp, state, round_):
    from flwr.app import Message, MessageType

    from fedlib.flower import components

    return Message(components._server_message(exp, state, round_), dst_node_id=7, message_type=MessageType.TRAIN)


def _context(partition_id: int):
    from flwr.app import Context, RecordDict

    return Context(run_id=1, node_id=7, node_config={"partition-id": partition_id}, state=RecordDict(), run_config={})


def test_scaffold_control_variate_lives_in_the_node_context_and_its_delta_crosses_the_wire(task_identity):
    """One ClientApp call: c_k in Context.state and Δc_k in the reply equal SCAFFOLD's option II,
    re-derived here from the client's model and step count (c = c_k = 0 in round 1)."""
    cfg = Config(**SYNTHETIC, method="scaffold")
    exp = bridge.experiment(cfg)
    state = bridge.initial_state(exp)
    context = _context(2)
    reply = fedlib.flower.client_app()(_train_message(exp, state, 1), context)
    metrics = reply.content["metrics"]
    assert metrics["partition-id"] == 2 and metrics["num-examples"] == len(exp.client_indices[2])
    w_k = from_record(reply.content["arrays"])
    steps, lr = metrics["num-steps"], cfg.lr
    expected = {k: (state.params[k] - w_k[k]) / (steps * lr) for k in w_k}  # c_k⁺ = (x − y_k)/(Kη)
    (key,) = [k for k in context.state if k.startswith("fedlib-client-state")]
    kept = from_record(context.state[key])["correction"]["c"]
    sent = from_record(reply.content["message"])["delta_c"]
    for k in expected:
        torch.testing.assert_close(kept[k], expected[k])
        torch.testing.assert_close(sent[k], expected[k])
    stats = from_record(reply.content["stats"])["class-counts"]
    assert stats.tolist() == exp.class_counts[2].tolist()


@pytest.mark.parametrize("method", ["fedlc+scaffold", "fednova"])
def test_rounds_through_the_apps_equal_run_round_whatever_order_the_replies_come_in(task_identity, method):
    """Without Ray: two rounds of the strategy's messages to the ClientApp (each node's state kept
    in its Context), its replies back in two orders, the strategy's aggregation — bit for bit
    fedlib's own rounds (``run_round``, sequential engine), SCAFFOLD's server c included."""
    from fedlib.engine import train_clients_sequential
    from fedlib.flower.components import FedlibStrategy
    from fedlib.simulation import run_round

    exp = bridge.experiment(bridge.resolve_config({**SYNTHETIC, "method": method, "momentum": 0.5}))
    client = fedlib.flower.client_app()

    def two_rounds(reverse: bool):
        strategy = FedlibStrategy(exp, {k: 7 for k in range(exp.num_clients)})
        contexts = {k: _context(k) for k in range(exp.num_clients)}
        for r in (1, 2):
            messages = list(strategy.configure_train(r, None, None, None))
            replies = [client(m, contexts[k]) for k, m in zip(bridge.sampled_clients(exp, r), messages)]
            strategy.aggregate_train(r, replies[::-1] if reverse else replies)
        return strategy.state

    ref = exp.initial_state()
    for r in (1, 2):
        ref = run_round(exp, ref, r, trainer=train_clients_sequential).state
    for state in (two_rounds(False), two_rounds(True)):
        assert all(torch.equal(state.params[k], ref.params[k]) for k in ref.params)
        for k, c in ref.correction_state.get("c", {}).items():
            assert torch.equal(state.correction_state["c"][k], c)


def test_a_node_without_a_valid_partition_id_is_refused(task_identity):
    exp = bridge.experiment(Config(**SYNTHETIC))
    with pytest.raises(ValueError, match="partition-id=3 is outside fedlib's clients 0..2"):
        fedlib.flower.client_app()(_train_message(exp, bridge.initial_state(exp), 1), _context(3))


def test_records_carry_nested_tensors_exactly():
    tree = {"delta_c": {"fc.weight": torch.randn(3, 4), "fc.bias": torch.randn(3, dtype=torch.float64)},
            "counts": torch.tensor([0, 5, 2]), "step": 3}
    back = from_record(to_record(tree))
    for k in ("fc.weight", "fc.bias"):
        assert back["delta_c"][k].dtype == tree["delta_c"][k].dtype
        assert torch.equal(back["delta_c"][k], tree["delta_c"][k])
    assert torch.equal(back["counts"], tree["counts"]) and int(back["step"]) == 3
    with pytest.raises(ValueError, match="may not contain '/'"):
        to_record({"a/b": torch.zeros(1)})


def test_stage_methods_are_refused_with_one_line(tmp_path):
    with pytest.raises(ValueError, match="cannot be a Flower app") as err:
        fedlib.flower.apps(method="fedconcat", dataset="fmnist")
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="cannot be a Flower app"):
        fedlib.flower.write_app(tmp_path / "app", method="fedconcat", dataset="fmnist")
    assert not (tmp_path / "app").exists()


def test_bad_configuration_is_refused_before_anything_starts():
    with pytest.raises(fedlib.ConfigError, match="tau"):
        fedlib.flower.run_simulation(method="fedlc", tau=-1.0)
    with pytest.raises(ValueError, match="num_clients must be the same"):
        fedlib.flower.run_simulations([dict(num_clients=3), dict(num_clients=4)])


# ------------------------------------------------------------------------------ lazy import
def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**__import__("os").environ, "PYTHONPATH": str(REPO)})


def test_fedlib_never_imports_flower_until_it_is_used():
    out = _python("import sys, fedlib, fedlib.flower, fedlib.__main__\n"
                  "print('flwr' in sys.modules, 'ray' in sys.modules)")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "False"]


def test_without_the_extra_one_line_names_it(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n in ("flwr", "ray") else real(n, *a))
    for use in (lambda: fedlib.flower.apps(method="fedavg"), lambda: fedlib.flower.run_simulation(),
                fedlib.flower.client_app):
        with pytest.raises(fedlib.flower.FlowerNotInstalled) as err:
            use()
        assert "\n" not in str(err.value) and 'pip install "fedlib[flower]"' in str(err.value)


# ------------------------------------------------------------------------------ the `flwr run` folder
def test_flower_app_folder_is_a_valid_flower_app_with_the_configuration(tmp_path, capsys):
    from flwr.cli.config_utils import load_and_validate
    from flwr.common.config import get_fused_config_from_dir

    out = tmp_path / "fedlc_app"
    assert main(["flower-app", "method=fedlc+scaffold", "dataset=synthetic", "num_clients=4", "rounds=3", "tau=0.5",
                 "--out", str(out)]) == 0
    command = 'flwr run . --stream --federation-config "num-supernodes=4 client-resources-num-cpus=1"'
    assert command in capsys.readouterr().out and command in (out / "README.md").read_text()
    sys.path.insert(0, str(out))  # Flower imports the components from the app folder
    try:
        config, warnings = load_and_validate(out / "pyproject.toml", check_module=True)
    finally:
        sys.path.remove(str(out))
    assert config["tool"]["flwr"]["app"]["components"] == {"serverapp": "fedlib_app.server_app:app",
                                                           "clientapp": "fedlib_app.client_app:app"}
    run_config = get_fused_config_from_dir(out, {})  # what the ServerApp's context.run_config holds
    expected = Config(method="fedlc+scaffold", dataset="synthetic", num_clients=4, rounds=3, tau=0.5,
                      engine="sequential")  # what a node runs
    assert bridge.resolve_config({}, run_config) == expected
    assert bridge.resolve_config({}, {**run_config, "rounds": 7}).rounds == 7  # flwr run --run-config


def test_flower_app_cli_refuses_a_stage_method_with_exit_status_2(tmp_path, capsys):
    assert main(["flower-app", "method=fedconcat", "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot be a Flower app" in err and not (tmp_path / "x").exists()


@pytest.mark.slow
def test_summary_is_json_like_fedlib_runs(synthetic_results):
    results, _ = synthetic_results
    json.dumps(results["fedavg"].to_json_summary())
