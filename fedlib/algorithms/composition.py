"""An algorithm: one part of each kind (:class:`Algorithm`), and how a method's tokens
compose one from a configuration (:func:`build_algorithm`).  The parts a method's tokens
do not set stay FedAvg's (:func:`default_parts`)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from .kinds import (KINDS, Aggregator, ClientLoss, Correction, Part, Personalization, RepresentationLoss,
                    ServerOptimizer, ServerTraining, Stages)
from .registry import parse_method

__all__ = ["Algorithm", "build_algorithm", "method_part", "default_parts"]


@dataclass(frozen=True)
class Algorithm:
    """One part of each kind of :data:`PART_KINDS`, each an instance of its kind's class
    (:data:`fedlib.algorithms.kinds.KINDS`)."""

    loss: ClientLoss
    representation: RepresentationLoss
    correction: Correction
    personalization: Personalization
    aggregator: Aggregator
    server_optimizer: ServerOptimizer
    server_training: ServerTraining
    stages: Stages

    def __post_init__(self) -> None:
        for f in fields(self):
            kind = KINDS[f.name]
            if not isinstance(getattr(self, f.name), kind):
                raise TypeError(f"the {f.name} part must be a fedlib.algorithms.kinds.{kind.__name__}, got "
                                f"{type(getattr(self, f.name)).__name__}")

    @classmethod
    def compose(cls, **parts: Any) -> "Algorithm":
        """FedAvg with the given parts replaced, e.g. ``Algorithm.compose(loss=CalibratedLoss(tau=1))``."""
        return cls(**{**default_parts(), **parts})

    def parts(self) -> dict[str, Part]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def describe(self) -> dict[str, str]:
        return {kind: part.name for kind, part in self.parts().items()}

    def extend_model(self, model):
        """The model a method trains: parts that add modules to it (a projection head,
        a personal head) do so here, in part order; most parts return it unchanged."""
        for part in self.parts().values():
            model = part.extend_model(model)
        return model


def default_parts(server_lr: float = 1.0) -> dict[str, Any]:
    """FedAvg's choice for every part kind (:mod:`fedlib.algorithms.fedavg`)."""
    from .fedavg import default_parts as fedavg_parts

    return fedavg_parts(server_lr)


def build_algorithm(config) -> Algorithm:
    """The algorithm named by ``config.method`` with the config's hyperparameters."""
    parts = default_parts(config.server_lr)
    for token in parse_method(config.method):
        for kind, build in token.parts.items():
            parts[kind] = build(config)
    return Algorithm(**parts)


def method_part(config, kind: str) -> Part:
    """The one part of kind ``kind`` of ``config.method`` (FedAvg's when no token sets it), built
    alone: what a configuration reads from its method's parts (``personalized``, ``needs``)."""
    for token in parse_method(config.method):
        if kind in token.parts:
            return token.parts[kind](config)
    return default_parts(config.server_lr if config.server_lr is not None else 1.0)[kind]
