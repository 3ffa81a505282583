"""Stages: a method as a sequence of stages, each checkpointed in the store.

Most methods are one stage of federated rounds (:class:`SingleStage`,
FedAvg's part).  A multi-stage method (FedConcat: cluster the clients, train
one model per cluster, train a classifier on the frozen, concatenated
encoders) returns several :class:`Stage` objects from ``plan(experiment)``.

A stage is either

* a **computation** (``rounds == 0``): ``compute(experiment, outputs)``
  returns its output, e.g. a clustering; or
* **federated rounds**: ``build(experiment, outputs)`` returns the
  :class:`~fedlib.experiment.Experiment` the rounds run on (which clients,
  which data -- e.g. features of frozen encoders --, which model, which
  algorithm), ``initial(sub, outputs)`` its initial parameters (None: the
  sub-experiment's model as built), and ``finish(sub, outputs, params)`` its
  output once the rounds are done.

``outputs`` maps the names of earlier stages to their outputs; it is part of
the checkpoint (tensors, numbers, strings, lists and dicts only), so an
interrupted run resumes at the stage and round where it stopped.  The output of
the last stage is ``{"params": ..., ...}``: the final model's parameters.
``final_model(model, config)`` builds the final ``nn.Module`` those
parameters belong to (default: the model itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .kinds import Stages

__all__ = ["Stage", "SingleStage"]


@dataclass(frozen=True)
class Stage:
    name: str
    rounds: int = 0
    compute: Callable[[Any, dict], Any] | None = None
    build: Callable[[Any, dict], Any] | None = None
    initial: Callable[[Any, dict], dict | None] | None = None
    finish: Callable[[Any, dict, dict], Any] | None = None
    evaluate: bool = True  # evaluate on the sub-experiment's test set during the rounds (history rows)

    def __post_init__(self) -> None:
        if self.rounds < 0:
            raise ValueError(f"stage {self.name!r}: rounds must be ≥ 0, got {self.rounds}")
        if self.rounds == 0 and self.compute is None:
            raise ValueError(f"stage {self.name!r}: a stage without rounds needs compute")


@dataclass(frozen=True)
class SingleStage(Stages):
    """One stage: ``config.rounds`` federated rounds of the method over all clients."""

    name = "single"

    def plan(self, experiment) -> list[Stage]:
        return [Stage("train", rounds=experiment.config.rounds,
                      finish=lambda sub, outputs, params: {"params": params})]
