"""The part kinds, declared once: every hook a part of each kind has, the optional ones
included, with its default.

An :class:`~fedlib.algorithms.Algorithm` is one part of each kind (in the order
a round uses them, :data:`~fedlib.algorithms.registry.PART_KINDS`).  A part
subclasses its kind and overrides what it changes; the engines, the round loop
and the driver call every hook unconditionally (no probing for attributes).
FedAvg's parts (:mod:`fedlib.algorithms.fedavg` and the ``No…``/``Shared…``
parts beside each kind's module) are ordinary parts of these kinds.

Hooks every part has (:class:`Part`):

* ``name`` -- how results and ``Algorithm.describe()`` name it;
* ``sequential_only`` -- None, or why the vectorized engine cannot batch it
  (the run then falls back to the sequential engine with a warning);
* ``extend_model(model)`` -- modules the part adds to the model (a projection
  head, a personal head); default: the model unchanged.

A part's hyperparameters are dataclass fields named as its
:class:`~fedlib.params.Param` declarations say (``Param.field``), so the method
registry builds it from a configuration by name
(:func:`fedlib.algorithms.registry.build_part`); ``from_core`` maps the fields
filled from a core parameter (FEDIC's ``seed``, FedAdam's ``lr`` from ``server_lr``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..tree import Params

__all__ = ["Part", "ClientLoss", "RepresentationLoss", "Correction", "Personalization", "Aggregator",
           "ServerOptimizer", "ServerTraining", "Stages", "KINDS", "Phase"]


@dataclass(frozen=True)
class Phase:
    """``epochs`` local epochs in which only ``trainable`` parameters change (None: all)."""

    epochs: int
    trainable: tuple[str, ...] | None = None


class Part:
    """What every part has (module doc)."""

    name: ClassVar[str] = ""
    sequential_only: ClassVar[str | None] = None
    from_core: ClassVar[dict[str, str]] = {}  # field -> the core parameter that fills it

    def extend_model(self, model):
        return model


class ClientLoss(Part):
    """The client loss on the model's output: ``loss(logits, targets, class_counts,
    sample_weight)``, a batch mean (Σ w ℓ / Σ w with sample weights), a pure function of
    tensors (it runs under ``vmap``)."""

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        raise NotImplementedError

    def for_round(self, server_training_state: dict) -> "ClientLoss":
        """The loss to use in a round, given the server-training part's state (Ratio Loss
        puts in the class weights the server estimated); default: itself."""
        return self


class RepresentationLoss(Part):
    """A client loss term on the features ``h`` with reference models' features (MOON).
    ``active`` False: no term (the engines skip the features altogether)."""

    active: ClassVar[bool] = True

    def references(self, received: Params, state: dict) -> dict:
        """The reference models' parameters for one client, from the model it received
        and its per-client ``"representation"`` state."""
        return {}

    def __call__(self, h, refs: dict, targets, sample_weight=None):
        """The term, given ``h`` [B, d] and ``refs[name]`` [B, d] (no gradient)."""
        return 0.0

    def state_after(self, local: Params, state: dict) -> dict:
        """The client's representation state after its local update."""
        return state


class Correction(Part):
    """A client correction of the local gradient, with client and server state (FedProx,
    SCAFFOLD).  The defaults are plain local SGD on the client loss."""

    def init_server_state(self, params: Params) -> dict:
        return {}

    def init_client_state(self, params: Params) -> dict:
        return {}

    def client_context(self, server_state: dict, client_state: dict) -> dict:
        """Tensors the client needs during its local steps (e.g. c − c_i)."""
        return {}

    def adjust(self, grads: Params, params: Params, anchor: Params, context: dict) -> Params:
        """The gradient actually stepped along; ``anchor`` is the round's global model.  The engines step
        in place and use the returned tensors as scratch: return ``grads`` or new tensors, never one held
        in a state or in ``context``."""
        return grads

    def effective_steps(self, num_steps: int, lr: float, momentum: float = 0.0) -> float:
        """a_k of FedNova (Wang et al. 2020, Eq. 6): the ℓ1 norm of the local
        gradient-accumulation vector; τ_k for plain local SGD, and with momentum ρ
        [τ − ρ(1 − ρ^τ)/(1 − ρ)] / (1 − ρ) (FedNova §4)."""
        if not momentum:
            return float(num_steps)
        rho = momentum
        return (num_steps - rho * (1.0 - rho**num_steps) / (1.0 - rho)) / (1.0 - rho)

    def client_final(self, anchor: Params, local: Params, num_steps: int, lr: float,
                     server_state: dict, client_state: dict) -> tuple[dict, dict]:
        """(new client state, message to the server) after local training."""
        return client_state, {}

    def server_update(self, server_state: dict, messages: list[dict], num_total_clients: int) -> dict:
        return server_state


class Personalization(Part):
    """Which parameters stay on the client, how local training is phased, how the global
    and a personalized model's output are read (:mod:`fedlib.algorithms.personalization`).
    ``personalized``: runs evaluate personalized models by default."""

    personalized: ClassVar[bool] = False

    def local_keys(self, model) -> tuple[str, ...]:
        return ()

    def phases(self, model, local_epochs: int) -> tuple:
        """The local epochs as :class:`Phase` objects (default: one phase training everything)."""
        return (Phase(local_epochs),)

    def global_logits(self, out):
        return out

    def personal_logits(self, out):
        return out


class Aggregator(Part):
    """How the sampled clients' updates Δ_k become one update Δ."""

    def combine(self, deltas: list[Params], num_samples: list[int], steps: list[float]) -> Params:
        raise NotImplementedError


class ServerOptimizer(Part):
    """How the server applies the pseudo-gradient −Δ to the shared parameters."""

    def init(self, params: Params) -> dict:
        return {}

    def apply(self, params: Params, pseudo_grad: Params, state: dict) -> tuple[Params, dict]:
        raise NotImplementedError


class ServerTraining(Part):
    """Training on server-held data after aggregation (:mod:`fedlib.algorithms.server_training`).
    ``needs``: the server data it uses (``"aux"``, ``"unlabeled"``); the defaults change nothing."""

    needs: ClassVar[tuple[str, ...]] = ()

    def init_state(self, params: Params) -> dict:
        return {}

    def after_round(self, ctx, params: Params, state: dict) -> tuple[Params, dict]:
        return params, state

    def after_training(self, ctx, params: Params, state: dict) -> Params:
        return params


class Stages(Part):
    """The stages of a method (:mod:`fedlib.algorithms.stages`)."""

    def plan(self, experiment) -> list:
        raise NotImplementedError

    def final_model(self, model, config):
        """The ``nn.Module`` the final parameters belong to (default: the model itself)."""
        return model


#: The class of each part kind, by the name an :class:`~fedlib.algorithms.Algorithm` field has.
KINDS: dict[str, type[Part]] = {
    "loss": ClientLoss,
    "representation": RepresentationLoss,
    "correction": Correction,
    "personalization": Personalization,
    "aggregator": Aggregator,
    "server_optimizer": ServerOptimizer,
    "server_training": ServerTraining,
    "stages": Stages,
}

