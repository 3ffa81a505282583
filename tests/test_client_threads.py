"""One run on several threads with the numbers of one (``client_threads``, :mod:`fedlib.threads`; issue 52).

The sequential engine trains the clients of a round on ``client_threads`` Python threads, each with one
intra-op thread, and scores the test set's chunks on them.  Each client's arithmetic is then the 1-thread
run's, kernel for kernel, and the outputs are aggregated in the clients' order: the runs are compared bit for
bit (every final parameter and every history value), not to a tolerance.  That holds where each thread runs
the kernels the 1-thread run runs; the tests below check it on the machine they run on, and check that the
work did run on more than one thread (else the comparison proves nothing).
"""

import threading

import numpy as np
import pytest
import torch

from fedlib import engine, run
from fedlib.config import Config, ConfigError
from fedlib.evaluation import evaluate
from fedlib.models import build_model
from fedlib.simulation import intra_op_threads
from fedlib.store import Store
from fedlib.threads import own_copy, thread_map

from conftest import have_dataset

needs_fmnist = pytest.mark.skipif(not have_dataset("fmnist"), reason="FashionMNIST not found under FEDLIB_DATA")
TINY = dict(dataset="fmnist", num_clients=6, partition="dirichlet", partition_beta=0.5, max_train_samples=600,
            max_test_samples=300, rounds=2, batch_size=32, lr=0.05, seed=3, engine="sequential")


@pytest.mark.parametrize("bad, match", [(dict(client_threads=0), r"client_threads must be an integer ≥ 1"),
                                        (dict(client_threads=2), r"engine must be 'sequential'"),
                                        (dict(client_threads=2, engine="sequential", threads=2),
                                         r"threads must be 1 for client_threads=2")])
def test_bad_client_threads_are_refused_by_name(bad, match):
    with pytest.raises(ConfigError, match=match):
        Config(**bad)


def test_client_threads_stay_out_of_the_store_key(tmp_path):
    store = Store(tmp_path)
    one, two = Config(**TINY), Config(**TINY, client_threads=2)
    assert "client_threads" not in two.key_dict() and store.key(one) == store.key(two)


def _flat(result) -> np.ndarray:
    return np.concatenate([result.params[k].detach().flatten().numpy() for k in sorted(result.params)])


@needs_fmnist
@pytest.mark.parametrize("method, model, extra", [
    ("fedavg", "cnn_mnist", {}), ("fedlc+scaffold", "mlp", {}), ("moon", "cnn_mnist", {}), ("fedprox", "mlp", {}),
    ("fedrod", "cnn_mnist", {}),  # a personalized head per client, kept across rounds
    ("fedconcat", "cnn_mnist", dict(rounds=1)),  # per-cluster encoders, then a classifier on their concatenation
    ("fedic", "cnn_mnist", dict(rounds=1, server_unlabeled="mnist", server_unlabeled_size=100,
                                server_aux_per_class=5))])  # server-side calibration and distillation
def test_clients_on_two_threads_give_the_one_thread_run_bit_for_bit(monkeypatch, method, model, extra):
    names = set()
    update = engine.local_update

    def seen(*args, **kw):
        names.add(threading.current_thread().name)
        return update(*args, **kw)

    kw = dict(TINY, method=method, model=model, store=False, progress=False, **extra)
    one = run(**kw)
    monkeypatch.setattr(engine, "local_update", seen)
    two = run(**kw, client_threads=2)
    assert len({n for n in names if n.startswith("fedlib")}) == 2  # the clients did train on two threads
    assert np.array_equal(_flat(one), _flat(two))  # bit for bit: not a tolerance
    assert one.history.equals(two.history)


def test_evaluation_on_threads_counts_what_one_thread_counts():
    """The chunks of an evaluation scored on 3 threads: the accuracy and per-class accuracy of a plain loop."""
    torch.manual_seed(0)
    model = build_model("cnn_mnist", 10, (1, 28, 28))
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = torch.randn(700, 1, 28, 28), torch.randint(0, 10, (700,))
    with torch.no_grad():
        pred = model(x).argmax(1)
    per_class = np.array([float((pred[y == k] == k).double().mean()) for k in range(10)])
    with intra_op_threads(1):  # as a run evaluates
        acc, got = evaluate(model, params, x, y, 10, batch_size=64, threads=3)
    with pytest.raises(ValueError, match="needs one intra-op thread"), intra_op_threads(2):
        evaluate(model, params, x, y, 10, batch_size=64, threads=3)
    assert acc == float((pred == y).double().mean()) and np.allclose(got, per_class, rtol=0, atol=1e-15)
    assert (acc, got.tolist()) == (lambda r: (r[0], r[1].tolist()))(evaluate(model, params, x, y, 10,
                                                                              batch_size=64))


def test_each_thread_calls_its_own_copy_of_the_model():
    """functional_call swaps a module's parameters while it runs: two threads on one module would read each
    other's weights (a first try of this feature trained to another accuracy)."""
    model = torch.nn.Linear(2, 2)
    with intra_op_threads(1):
        copies = thread_map(lambda _: own_copy(model), range(8), threads=2)
    assert own_copy(model) is model and all(c is not model for c in copies)
    assert len({id(c) for c in copies}) <= 2 and all(torch.equal(c.weight, model.weight) for c in copies)
    with intra_op_threads(1):
        assert thread_map(lambda i: i * i, range(5), threads=2) == [0, 1, 4, 9, 16]
