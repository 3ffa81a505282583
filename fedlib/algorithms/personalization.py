"""Personalization: which parameters stay on the client, how local training is
phased, and how a client's personalized model (PM) is obtained.

A personalization part answers, for a model:

* :meth:`~SharedModel.local_keys` -- the parameters that stay on the client.
  They are never sent, never averaged; each client keeps its own copy in its
  per-client state (in the results store, so a resumed run ends identically),
  starting from the initial model.  A client starts each local update from the
  global model with its own local parameters put in.
* :meth:`~SharedModel.phases` -- the local epochs as phases, each training a
  subset of the parameters (FedRep: head epochs, then body epochs).
* :meth:`~SharedModel.global_logits` / :meth:`~SharedModel.personal_logits` --
  how the model's output is read by the global model and by a personalized
  model (FedRoD adds a personal head's logits).
* ``extend_model(model)`` (optional) -- modules the method adds (FedRoD's
  personal head).
* ``personalized`` -- whether runs of this method evaluate personalized models
  by default (the ``personal_eval_every`` parameter overrides it).

How the PM is obtained is the run's ``personalized_model`` parameter, the same
for every method: ``"local_update"`` (FedRoD's and FedABC's protocol: the
client's model after its local update from the current server state) or
``"stored"`` (the current global parameters with the client's stored local
parameters, no extra training).

FedAvg's part, :class:`SharedModel`, shares everything in one phase;
:class:`LocallyTrained` trains the same way and evaluates personalized models by
default (FedABC); :class:`KeepLocal` keeps a selection of parameters on the client
(Local-only, FedPer).  FedAvg, FedProx and SCAFFOLD are evaluated through their
personalized (locally trained) models by setting ``personal_eval_every`` (e.g. to
``rounds``: once, at the last round).
"""

from __future__ import annotations

from dataclasses import dataclass

from .kinds import Personalization, Phase

__all__ = ["Phase", "SharedModel", "LocallyTrained", "KeepLocal"]


@dataclass(frozen=True)
class SharedModel(Personalization):
    """Every parameter is shared and averaged; one phase trains everything (FedAvg)."""

    name = "shared"
    personalized = False


@dataclass(frozen=True)
class LocallyTrained(Personalization):
    """Every parameter shared and averaged, as FedAvg; personalized models are evaluated by
    default (the PM is the locally trained model: FedRoD's observation, FedABC's protocol)."""

    name = "locally_trained"
    personalized = True


@dataclass(frozen=True)
class KeepLocal(Personalization):
    """The parameters selected by ``select(model) -> keys`` stay on the client; the rest is
    shared.  ``personalized``: evaluate personalized models by default."""

    select: object = None  # callable model -> tuple of parameter names
    label: str = "keep_local"
    personalized = True

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.label

    def local_keys(self, model) -> tuple[str, ...]:
        return tuple(self.select(model))
