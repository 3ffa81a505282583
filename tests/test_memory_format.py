"""A model's declared memory format (channels-last) changes float rounding only: both engines'
runs equal, to float32 rounding, the same model registered contiguous; the format reaches the
parameters, the data and the batches; it is part of the code version."""

import pytest
import torch
from conftest import have_dataset

import fedlib
from fedlib.models import MODELS, build_model, memory_format, register_model
from fedlib.experiment import prepare
from fedlib.store import run_modules
from fedlib.vectorized import _rows

CL = torch.channels_last
TINY = dict(num_clients=4, rounds=2, batch_size=16, partition="dirichlet", max_train_samples=160, max_test_samples=64,
            seed=2, momentum=0.5, weight_decay=1e-4)


@pytest.fixture
def contiguous_twin():
    """``simple_cnn`` registered again, same builder and module, declared contiguous."""
    spec = MODELS["simple_cnn"]
    register_model("_simple_cnn_contiguous", spec.doc, memory_format="contiguous")(spec.build)
    yield "_simple_cnn_contiguous"
    del MODELS["_simple_cnn_contiguous"]


def _channels_last(t: torch.Tensor) -> bool:
    return t.is_contiguous(memory_format=CL) and not t.is_contiguous()


def test_declared_format_applies_to_parameters_of_multichannel_models_only():
    assert MODELS["simple_cnn"].memory_format == "channels_last" and MODELS["logreg"].memory_format == "contiguous"
    cl = build_model("simple_cnn", 10, (3, 32, 32))
    assert all(_channels_last(p) for p in cl.parameters() if p.ndim == 4)
    assert memory_format("simple_cnn", (1, 28, 28)) == torch.contiguous_format  # one channel: NCHW is NHWC
    assert all(p.is_contiguous() for p in build_model("simple_cnn", 10, (1, 28, 28)).parameters())
    with pytest.raises(ValueError, match="memory_format must be one of"):
        register_model("_bad", "", memory_format="nhwc")


@pytest.mark.skipif(not have_dataset("cifar10"), reason="CIFAR-10 absent")
def test_data_and_batches_take_the_models_format_once():
    exp = prepare(fedlib.Config(dataset="cifar10", model="simple_cnn", **TINY))
    assert _channels_last(exp.data.train_x) and _channels_last(exp.data.test_x)
    rows = torch.tensor([5, 1, 7])
    batch = _rows(exp.data.train_x, rows)
    assert _channels_last(batch) and torch.equal(batch, exp.data.train_x.contiguous()[rows])
    plain = torch.randn(6, 3, 4, 4)
    assert _rows(plain, rows[:2]).is_contiguous() and torch.equal(_rows(plain, rows[:2]), plain[rows[:2]])


@pytest.mark.skipif(not have_dataset("cifar10"), reason="CIFAR-10 absent")
@pytest.mark.parametrize("engine", ["sequential", "vectorized"])
def test_channels_last_runs_equal_contiguous_runs_to_float_rounding(engine, contiguous_twin):
    runs = {m: fedlib.run(dataset="cifar10", model=m, engine=engine, store=False, progress=False, **TINY)
            for m in ("simple_cnn", contiguous_twin)}
    cl, ref = runs["simple_cnn"].params, runs[contiguous_twin].params
    assert cl.keys() == ref.keys()
    for k in ref:
        torch.testing.assert_close(cl[k], ref[k], rtol=1e-4, atol=1e-6, msg=k)
    assert any(not torch.equal(cl[k], ref[k]) for k in ref)  # another kernel ran: the layouts differed
    assert runs["simple_cnn"].final_accuracy == pytest.approx(runs[contiguous_twin].final_accuracy, abs=1 / 64)


@pytest.mark.skipif(not have_dataset("fmnist"), reason="FMNIST absent")
def test_one_channel_inputs_keep_contiguous_numbers_exactly(contiguous_twin):
    """One channel: the declared format is not applied, so the run is the contiguous one bit for bit."""
    runs = [fedlib.run(dataset="fmnist", model=m, store=False, progress=False, **TINY)
            for m in ("simple_cnn", contiguous_twin)]
    assert all(torch.equal(runs[0].params[k], runs[1].params[k]) for k in runs[1].params)


def test_the_declaring_module_is_part_of_the_code_version():
    config = fedlib.Config(dataset="cifar10", model="simple_cnn")
    declared_in = MODELS["simple_cnn"].build.__module__.split(".", 1)[1].replace(".", "/") + ".py"
    assert declared_in in run_modules(config)


@pytest.mark.skipif(not have_dataset("cifar10"), reason="CIFAR-10 absent")
def test_the_memory_format_field_trains_the_model_contiguous_as_its_contiguous_twin_bit_for_bit(contiguous_twin):
    """``memory_format="contiguous"`` (a GPU's stacked convolutions may prefer it): the parameters, the data and
    so every kernel are those of the same model registered contiguous, so the run is that run, bit for bit; and
    it is a key of its own (the default, ``model``, stays out of the key's content)."""
    asked = fedlib.run(dataset="cifar10", model="simple_cnn", memory_format="contiguous", store=False,
                       progress=False, **TINY)
    twin = fedlib.run(dataset="cifar10", model=contiguous_twin, store=False, progress=False, **TINY)
    assert all(torch.equal(asked.params[k], twin.params[k]) for k in twin.params)
    exp = prepare(fedlib.Config(dataset="cifar10", model="simple_cnn", memory_format="contiguous", **TINY))
    assert exp.data.train_x.is_contiguous() and all(p.is_contiguous() for p in exp.model.parameters())
    default = fedlib.Config(dataset="cifar10", model="simple_cnn", **TINY)
    assert "memory_format" not in default.key_dict()
    assert default.replace(memory_format="contiguous").key_dict()["memory_format"] == "contiguous"


def test_a_layout_asked_of_a_model_reaches_every_4d_parameter_and_a_bad_one_is_named():
    built = build_model("concat5_simple_cnn", 10, (3, 32, 32), layout="contiguous")  # built of channels-last parts
    assert all(p.is_contiguous() for p in built.parameters())
    assert any(_channels_last(p) for p in build_model("concat5_simple_cnn", 10, (3, 32, 32)).parameters())
    assert memory_format("simple_cnn", (3, 32, 32), "contiguous") == torch.contiguous_format
    with pytest.raises(ValueError, match="layout must be one of"):
        build_model("simple_cnn", 10, (3, 32, 32), layout="channels_first")
    with pytest.raises(fedlib.ConfigError, match="memory_format must be one of 'model', 'contiguous'"):
        fedlib.Config(dataset="cifar10", memory_format="nhwc")
