"""FedRep (Collins et al., ICML 2021, "Exploiting Shared Representations for Personalized
Federated Learning").

The body is shared and averaged, the head (the final ``classifier``) stays on the client.
Each local update trains the head first with the body frozen, then the body with the head
frozen (FedRep Algorithm 1).  The E local epochs are split as E − ``fedrep_body_epochs``
head epochs followed by ``fedrep_body_epochs`` body epochs, so every method trains E epochs
(notes §3: FedRep's code trains 1 body epoch after its head epochs; FL-bench's
``train_body_epoch`` is 1 too).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..models import head_keys
from ..params import ConfigError, Param
from .kinds import Personalization, Phase
from .registry import register_method


@dataclass(frozen=True)
class HeadThenBody(Personalization):
    """The head (``head(model)``: the classifier) is local; E − b head epochs with the body
    frozen, then b body epochs (every other parameter) with the head frozen."""

    body_epochs: int = 1
    head: Callable = head_keys
    name = "fedrep"
    personalized = True

    def local_keys(self, model) -> tuple[str, ...]:
        return tuple(self.head(model))

    def phases(self, model, local_epochs: int) -> tuple[Phase, ...]:
        head = self.local_keys(model)
        body = tuple(k for k, _ in model.named_parameters() if k not in head)
        return (Phase(local_epochs - self.body_epochs, head), Phase(self.body_epochs, body))


def _check(config) -> None:
    if config.fedrep_body_epochs > config.local_epochs:
        raise ConfigError(f"fedrep_body_epochs must be ≤ local_epochs={config.local_epochs} (the body epochs are "
                          f"the last of the E local epochs), got {config.fedrep_body_epochs}")


register_method(
    "fedrep", parts={"personalization": HeadThenBody}, check=_check,
    params=(Param("fedrep_body_epochs", 1, int, "FedRep: local epochs that train the body (the last ones; the "
                  "E − fedrep_body_epochs before them train the head)", check=lambda v: v >= 0,
                  allowed="an integer in [0, local_epochs]",
                  source="FedRep code (local_rep_ep = 1); not in FedABC", field="body_epochs"),),
    paper="Collins et al., ICML 2021", doc="personalization: head local; head epochs, then body epochs")
