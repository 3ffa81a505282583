"""The same federated training in fedlib, in fluke (``fluke-fl``) and in Apple's pfl-research (``pfl``).

Each library gets the work fedlib's configuration describes, on fedlib's own export of it
(:func:`export`): the clients' rows of the training set (fedlib's partition), the test set, and the model
with fedlib's initial weights.  Every driver is a :class:`Federation`: ``round()`` trains one round (the
sampled clients' local SGD, the server's average) and evaluates the global model on the test set, as each
library does by default; ``train(rounds, on_round)`` runs them, calls ``on_round()`` after each (a timer) and
returns the final test accuracy.  fedlib runs as a user runs it (:func:`fedlib.simulation.simulate`: its own
``threads`` setting, evaluation every round); a peer runs on the torch threads the caller set.

Used by ``benchmarks/bench_peers.py`` (time a round) and ``tests/test_peers.py`` (final accuracies agree).
Nothing here is copied from the peers: it calls their public classes as their documentation shows.
"""

from __future__ import annotations

import copy
import importlib.util
from dataclasses import dataclass

import numpy as np
import torch

from fedlib.config import Config
from fedlib.experiment import prepare
from fedlib.simulation import simulate

__all__ = ["PEERS", "peers_installed", "Export", "export", "Federation", "FedlibFederation", "FlukeFederation",
           "PflFederation", "federation"]

#: the peer libraries, by the module each installs
PEERS = {"fluke": "fluke", "pfl": "pfl"}


def peers_installed() -> list[str]:
    """The peers importable here (``pip install -e ".[peers]"`` installs both)."""
    return [name for name, module in PEERS.items() if importlib.util.find_spec(module) is not None]


@dataclass
class Export:
    """What fedlib hands a peer: its configuration, data, partition and initial model."""

    config: Config
    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor
    client_indices: list[np.ndarray]
    model: torch.nn.Module  # fedlib's model, holding fedlib's initial weights

    @property
    def num_classes(self) -> int:
        return self.config.num_classes

    def fresh_model(self) -> torch.nn.Module:
        return copy.deepcopy(self.model)

    def clients_per_round(self) -> int:
        return max(1, int(round(self.config.participation * len(self.client_indices))))


def export(config: Config) -> Export:
    """fedlib's partition, data and initial weights for ``config`` (:func:`fedlib.experiment.prepare`)."""
    exp = prepare(config)
    model = copy.deepcopy(exp.model)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(exp.initial_params()[name])
    return Export(config, exp.data.train_x, exp.data.train_y, exp.data.test_x, exp.data.test_y,
                  [np.asarray(i) for i in exp.client_indices], model)


class Federation:
    """One library's federation of an :class:`Export`."""

    name = ""

    def round(self) -> None:
        raise NotImplementedError

    def accuracy(self) -> float:
        raise NotImplementedError

    def train(self, rounds: int, on_round=lambda: None) -> float:
        for _ in range(rounds):
            self.round()
            on_round()
        return self.accuracy()


class FedlibFederation(Federation):
    """fedlib as a user runs it: :func:`fedlib.simulation.simulate` (no store), evaluating every round."""

    name = "fedlib"

    def __init__(self, config: Config):
        self.config = config.replace(eval_every=1)

    def train(self, rounds: int, on_round=lambda: None) -> float:
        out = simulate(self.config.replace(rounds=rounds), store=None, progress=False,
                       on_round_end=lambda r, s: on_round())
        return float(out["summary"]["final_accuracy"])


class FlukeFederation(Federation):
    """fluke's ``CentralizedFL`` (FedAVG, or FedLC with its calibrated loss) on fedlib's clients: a
    :class:`fluke.data.DataSplitter` whose ``assign`` hands out fedlib's partition as fluke's loaders.
    ``lr_scale`` multiplies the learning rate (a deliberate difference, for a test that must be able to fail)."""

    name = "fluke"

    def __init__(self, ex: Export, method: str = "fedavg", tau: float = 1.0, seed: int = 0, lr_scale: float = 1.0):
        from fluke import DDict, FlukeENV
        from fluke.algorithms.fedavg import FedAVG
        from fluke.algorithms.fedlc import FedLC
        from fluke.data import DataSplitter, FastDataLoader
        from fluke.evaluation import ClassificationEval

        c = ex.config
        env = FlukeENV()
        env.set_seed(seed)
        env.set_device("cpu")
        env.set_eval_cfg(pre_fit=False, post_fit=False, locals=False, server=True)
        env.set_evaluator(ClassificationEval(eval_every=1, n_classes=ex.num_classes))
        k = ex.num_classes

        class FedlibSplit(DataSplitter):
            def __init__(self):  # the data are fedlib's: nothing to split
                pass

            def assign(self, n_clients, batch_size=32):
                train = [FastDataLoader(ex.train_x[i], ex.train_y[i], num_labels=k, batch_size=batch_size,
                                        shuffle=True, skip_singleton=False) for i in ex.client_indices]
                test = FastDataLoader(ex.test_x, ex.test_y, num_labels=k, batch_size=512)
                return (train, [None] * len(train)), test

        hp = DDict(
            client=DDict(batch_size=c.batch_size, local_epochs=c.local_epochs, loss="CrossEntropyLoss",
                         optimizer=DDict(name="SGD", lr=c.lr * lr_scale, momentum=c.momentum, weight_decay=c.weight_decay),
                         scheduler=DDict(name="StepLR", step_size=1, gamma=1.0),
                         **({"tau": tau} if method == "fedlc" else {})),
            server=DDict(weighted=True, lr=1.0),
            model=ex.fresh_model())
        algo = {"fedavg": FedAVG, "fedlc": FedLC}[method]
        self.fl = algo(len(ex.client_indices), FedlibSplit(), hp)
        self.eligible = ex.clients_per_round() / len(ex.client_indices)
        self.last: dict = {}
        self.fl.attach(self)  # an observer: fluke notifies it of each evaluation (the events it has a method for)

    def server_evaluation(self, round, eval_type, evals, **kw):  # noqa: A002 -- fluke's event signature
        if eval_type == "global":
            self.last = dict(evals)

    def round(self) -> None:
        self.fl.run(1, self.eligible, finalize=False)

    def accuracy(self) -> float:
        return float(self.last["accuracy"])


class PflFederation(Federation):
    """pfl-research's ``FederatedAveraging`` on a ``SimulatedBackend``: fedlib's clients as pfl users; the
    test set evaluated by ``PyTorchModel.evaluate`` after each central iteration (what pfl's
    ``CentralEvaluationCallback`` calls)."""

    name = "pfl"

    def __init__(self, ex: Export, seed: int = 0):
        from pfl.aggregate.simulate import SimulatedBackend
        from pfl.algorithm import FederatedAveraging, NNAlgorithmParams
        from pfl.callback.central_evaluation import CentralEvaluationCallback
        from pfl.data.dataset import Dataset
        from pfl.data.federated_dataset import FederatedDataset
        from pfl.data.sampling import get_user_sampler
        from pfl.hyperparam import NNEvalHyperParams, NNTrainHyperParams
        from pfl.internal.ops.selector import set_framework_module
        from pfl.internal.ops import pytorch_ops
        from pfl.metrics import Weighted
        from pfl.model.pytorch import PyTorchModel

        set_framework_module(pytorch_ops)
        c = ex.config
        net = ex.fresh_model()

        class Wrapped(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = net

            def forward(self, x):
                return self.net(x)

            def loss(self, x, y, eval=False):  # noqa: A002 -- pfl's keyword
                self.eval() if eval else self.train()
                return torch.nn.functional.cross_entropy(self(x), y)

            @torch.no_grad()
            def metrics(self, x, y, eval=True):  # noqa: A002
                self.eval()
                out = self(x)
                n = len(y)
                return {"loss": Weighted(float(torch.nn.functional.cross_entropy(out, y, reduction="sum")), n),
                        "accuracy": Weighted(float((out.argmax(1) == y).sum()), n)}

        users = {str(u): (ex.train_x[i], ex.train_y[i]) for u, i in enumerate(ex.client_indices)}
        sampler = get_user_sampler("minimize_reuse", list(users))
        train = FederatedDataset(lambda u: Dataset(users[u], user_id=u), sampler)
        self.model = PyTorchModel(model=Wrapped(), local_optimizer_create=torch.optim.SGD,
                                  central_optimizer=torch.optim.SGD(net.parameters(), lr=1.0))
        self.backend = SimulatedBackend(training_data=train, val_data=None)
        self.central = Dataset((ex.test_x, ex.test_y))
        self.eval_params = NNEvalHyperParams(local_batch_size=512)
        self.train_params = NNTrainHyperParams(local_learning_rate=c.lr, local_num_epochs=c.local_epochs,
                                               local_batch_size=c.batch_size)
        self.algorithm = FederatedAveraging()
        self.rounds_params = lambda rounds: NNAlgorithmParams(
            central_num_iterations=rounds, evaluation_frequency=1, train_cohort_size=ex.clients_per_round(),
            val_cohort_size=None)
        self.evaluation = lambda: CentralEvaluationCallback(self.central, self.eval_params, frequency=1)
        torch.manual_seed(seed)
        np.random.seed(seed)

    def train(self, rounds: int, on_round=lambda: None) -> float:
        from pfl.callback.base import TrainingProcessCallback
        from pfl.metrics import Metrics

        class Timer(TrainingProcessCallback):
            def after_central_iteration(self, aggregate_metrics, model, *, central_iteration):
                on_round()
                return False, Metrics()

        self.algorithm.run(self.rounds_params(rounds), self.backend, self.model, self.train_params,
                           self.eval_params, callbacks=[self.evaluation(), Timer()], send_metrics_to_platform=False)
        metrics = self.model.evaluate(self.central, eval_params=self.eval_params)
        return float(next(v for k, v in metrics if "accuracy" in str(k)).overall_value)


def federation(library: str, config: Config, ex: Export | None = None, **kw) -> Federation:
    """A :class:`Federation` of ``config`` in ``library`` (fedlib, fluke or pfl)."""
    if library == "fedlib":
        return FedlibFederation(config)
    ex = ex or export(config)
    if library == "fluke":
        return FlukeFederation(ex, method=config.method, tau=getattr(config, "tau", 1.0), seed=config.seed, **kw)
    if library == "pfl":
        return PflFederation(ex, seed=config.seed, **kw)
    raise ValueError(f"library must be one of fedlib, fluke, pfl; got {library!r}")
