"""Every validation error is raised, before any work, with a message naming the parameter."""

import pytest

from fedlib import Config, ConfigError
from fedlib.config import parse_value


@pytest.mark.parametrize(
    "params, match",
    [
        ({"datset": "mnist"}, r"unknown parameter 'datset'.*dataset"),
        ({"dataset": "imagenet"}, r"dataset must be one of"),
        ({"num_clients": "10"}, r"num_clients must be an integer"),
        ({"num_clients": 2.5}, r"num_clients must be an integer"),
        ({"num_clients": True}, r"num_clients must be an integer"),
        ({"lr": "fast"}, r"lr must be a number"),
        ({"lr": float("nan")}, r"lr must be a finite number"),
        ({"num_clients": 0}, r"num_clients must be an integer in \[1, n\]"),
        ({"dataset": "mnist", "num_clients": 60_001}, r"num_clients must be ≤ 60000"),
        ({"dataset": "mnist", "max_train_samples": 100, "num_clients": 200}, r"num_clients must be ≤ 100"),
        ({"dataset": "mnist", "partition": "shards", "partition_alpha": 0}, r"partition_alpha must be an integer ≥ 1"),
        ({"dataset": "mnist", "partition": "shards", "num_clients": 100, "partition_alpha": 700},
         r"partition_alpha must be ≤ 600"),
        ({"dataset": "mnist", "partition_beta": 0.0}, r"partition_beta must be > 0"),
        ({"dataset": "mnist", "partition_beta": -1.0}, r"partition_beta must be > 0"),
        ({"dataset": "cifar10", "partition_k": 11}, r"partition_k must be in \[1, 10\]"),
        ({"dataset": "cifar100", "partition_k": 101}, r"partition_k must be in \[1, 100\]"),
        ({"dataset": "synthetic", "partition": "dirichlet"}, r"partition must be 'natural' or 'auto'"),
        ({"dataset": "mnist", "partition": "natural"}, r"partition must be one of iid"),
        ({"synthetic_alpha": -0.5}, r"synthetic_alpha must be ≥ 0"),
        ({"synthetic_beta": -0.5}, r"synthetic_beta must be ≥ 0"),
        ({"participation": 0.0}, r"participation must be in \(0, 1\]"),
        ({"participation": 1.5}, r"participation must be in \(0, 1\]"),
        ({"tau": -1.0}, r"tau must be ≥ 0"),
        ({"mu": -0.1}, r"mu must be ≥ 0"),
        ({"fedrs_alpha": 1.5}, r"fedrs_alpha must be in \[0, 1\]"),
        ({"rounds": 0}, r"rounds must be an integer ≥ 1"),
        ({"local_epochs": 0}, r"local_epochs must be an integer ≥ 1"),
        ({"batch_size": 0}, r"batch_size must be an integer ≥ 1"),
        ({"lr": 0.0}, r"lr must be > 0"),
        ({"method": "fedsgd"}, r"method must be one or more of"),
        ({"method": "fedlc+fedrs"}, r"'fedlc' and 'fedrs' both set the client loss"),
        ({"method": "fedprox+scaffold"}, r"'fedprox' and 'scaffold' both set the client correction"),
        ({"method": "fedavg+fedlc"}, r"method must be 'fedavg' alone"),
        ({"fedlc_missing": "drop"}, r"fedlc_missing must be one of 'clamp', 'mask'"),
        ({"fedlc_denominator": "half"}, r"fedlc_denominator must be one of"),
        ({"server_lr": 0.0}, r"server_lr must be > 0"),
        ({"long_tail_if": 0.5, "dataset": "mnist"}, r"long_tail_if must be ≥ 1"),
        ({"device": "tpu"}, r"device must be 'cpu' or 'cuda"),
        ({"engine": "magic"}, r"engine must be one of"),
        ({"seed": -1}, r"seed must be an integer ≥ 0"),
    ],
)
def test_validation_errors_name_the_parameter(params, match):
    with pytest.raises(ConfigError, match=match):
        Config.from_dict(params)


def test_defaults_resolve_and_follow_the_paper():
    c = Config()
    assert (c.batch_size, c.lr, c.weight_decay, c.num_clients, c.rounds) == (128, 0.01, 0.0, 20, 400)
    assert c.partition == "natural" and c.model == "logreg" and c.server_lr == 1.0
    m = Config(dataset="mnist")
    assert m.partition == "dirichlet" and m.model == "cnn_mnist"
    assert Config(dataset="cifar10", method="fedopt").server_lr == 0.01
    assert Config(dataset="cifar10").model == "cnn_cifar"


def test_key_ignores_paths_but_not_results_parameters():
    a, b = Config(data_root="/a"), Config(data_root="/b", checkpoint_every=3)
    assert a.key_dict() == b.key_dict()
    assert Config(method="fedlc", tau=0.5).key_dict() != Config(method="fedlc", tau=1.0).key_dict()
    # a parameter of a method the run does not use changes nothing, so it is not in the key
    assert Config(method="fedavg", tau=0.5).key_dict() == Config(method="fedavg", tau=1.0).key_dict()
    assert "mu" in Config(method="fedlc+fedprox").key_dict() and "mu" not in Config(method="fedlc").key_dict()


def test_parse_value_converts_by_type():
    assert parse_value("num_clients", "7") == 7
    assert parse_value("tau", "0.5") == 0.5
    assert parse_value("server_lr", "none") is None
    assert parse_value("method", "fedlc+scaffold") == "fedlc+scaffold"
    with pytest.raises(ConfigError, match="num_clients must be an integer"):
        parse_value("num_clients", "seven")
    with pytest.raises(ConfigError, match="unknown parameter 'tua'"):
        parse_value("tua", "1")


def test_building_a_config_builds_no_algorithm_and_reads_no_dataset(monkeypatch):
    """Issue 18: a Config validates and resolves its 'auto'/None values from the parts' declarations
    (the server-training part's needs, the personalization's `personalized`, a token's declared
    server_lr) -- without building the algorithm, a model, or loading any dataset."""
    import fedlib.algorithms as algorithms
    import fedlib.data as data

    def boom(*args, **kwargs):
        raise AssertionError("building a Config must not call this")

    monkeypatch.setattr(algorithms, "build_algorithm", boom)
    monkeypatch.setattr(data, "load_dataset", boom)
    fedic = Config(dataset="cifar10", method="fedic", long_tail_if=10.0, data_root="/nonexistent")
    assert fedic.server_aux_per_class == 100
    assert fedic.server_unlabeled == "long_tail_dropped"  # CIFAR-100's files are absent there
    assert Config(dataset="cifar10", method="fedic", fedic_kd=False).server_unlabeled == "none"
    assert Config(method="fedrep", rounds=7).personal_eval_every == 7
    assert Config(method="fedavg", rounds=7).personal_eval_every == 0
    assert Config(method="fedopt").server_lr == 0.01 and Config(method="fedavgm").server_lr == 1.0
