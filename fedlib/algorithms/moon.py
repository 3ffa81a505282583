"""MOON (Li, He, Song, CVPR 2021, "Model-Contrastive Federated Learning").

The client loss is ℓ = ℓ_sup + μ·ℓ_con (MOON Eq. 4): cross-entropy plus the
model-contrastive loss of Eq. 3 (:func:`fedlib.losses.model_contrastive_loss`),
which pulls the local representation z of an input towards the global model's
z_glob and pushes it away from the client's previous local model's z_prev.

The network has MOON's three parts (§3.2): the base encoder (the model's
``features``), a projection head -- a 2-layer MLP ``Linear(d, d) → ReLU →
Linear(d, out_dim)`` (hidden width d as in the code, model.py ``ModelFedCon``
l1/l2) -- and an output layer ``Linear(out_dim, K)`` that replaces the base
model's classifier.  The representation z is the projection head's output (the
input of the output layer), so in fedlib's model contract ``features(x)`` is z.
The head is added by :meth:`ModelContrastive.extend_model`.

The previous local model is per-client state (``client_states[k]
["representation"]["previous"]``, in the store's checkpoints): the
representation network (everything but the output layer) after the client's
last local update.

**Before a client's first participation** it has no previous model.  MOON's
code then leaves the negative out: its pool of previous models is empty in the
first round (main.py:466-479 of QinbinLi/MOON at 8fcba3c: ``load_first_net``
copies the nets but never appends them to ``old_nets_pool``), so ℓ_con is the
cross-entropy of a single logit, 0, and the update is FedAvg's.  Here the
previous model is the model the client received (the global model): then
z_prev = z_glob, ℓ_con = log 2 whatever z, its gradient is zero, and the update
is the same as the code's; only the logged loss differs (by μ·log 2).  (With
partial participation the code's later rounds would use, for a client that never
trained, its own independently initialised net; fedlib uses the received model
until the client has trained.)

One previous model is kept (MOON's ``model_buffer_size`` default 1, Eq. 3).
Defaults μ = 1, τ = 0.5, out_dim = 256 are the code's (main.py:42-44); the
paper uses μ = 5 on CIFAR-10 (README example) and recommends tuning
μ ∈ {0.001, …, 10}.  FedConcat (Table 1) does not state its MOON settings.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor, nn

from ..losses import model_contrastive_loss
from ..models import body_params  # the representation network: all but the output layer
from ..params import Param
from .kinds import RepresentationLoss
from .registry import register_method

__all__ = ["ModelContrastive", "ProjectedModel"]


class ProjectedModel(nn.Module):
    """A fedlib model with MOON's projection head: ``features(x)`` = projection(base.features(x))
    = z, ``classifier`` = Linear(out_dim, K).  The base model's own classifier is removed."""

    def __init__(self, base: nn.Module, out_dim: int):
        super().__init__()
        d, num_classes = base.classifier.in_features, base.classifier.out_features
        del base.classifier  # replaced by MOON's output layer on z
        self.encoder = base
        self.projection = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, out_dim))
        self.classifier = nn.Linear(out_dim, num_classes)

    def features(self, x: Tensor) -> Tensor:
        return self.projection(self.encoder.features(x))

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(self.features(x))


@dataclass(frozen=True)
class ModelContrastive(RepresentationLoss):
    mu: float = 1.0
    temperature: float = 0.5
    out_dim: int = 256
    name = "moon"
    active = True

    def extend_model(self, model: nn.Module) -> nn.Module:
        return ProjectedModel(model, self.out_dim)

    def references(self, received: dict, state: dict) -> dict:
        glob = body_params(received)
        return {"global": glob, "previous": state.get("previous", glob)}  # first participation: see module doc

    def __call__(self, h, refs, targets, sample_weight=None):
        # μ·ℓ_con (MOON Eq. 4), ℓ_con of Eq. 3 on z = h
        return self.mu * model_contrastive_loss(h, refs["global"], refs["previous"], self.temperature,
                                                sample_weight=sample_weight)

    def state_after(self, local: dict, state: dict) -> dict:
        return {"previous": body_params(local)}


register_method(
    "moon",
    parts={"representation": ModelContrastive},
    params=(Param("moon_mu", 1.0, float, "MOON weight μ of the model-contrastive loss (Eq. 4)", check=lambda v: v >= 0,
                  allowed="≥ 0", source="MOON code default (main.py:42); paper: 5 on CIFAR-10, 1 on CIFAR-100",
                  field="mu"),
            Param("moon_temperature", 0.5, float, "MOON temperature τ of Eq. 3", check=lambda v: v > 0, allowed="> 0",
                  source="MOON paper §4.1 / code default (main.py:44)", field="temperature"),
            Param("moon_out_dim", 256, int, "output dimension of MOON's projection head (2-layer MLP)",
                  check=lambda v: v >= 1, allowed="an integer ≥ 1", source="MOON code default (main.py:43)",
                  field="out_dim")),
    paper="Li, He, Song, CVPR 2021", doc="representation loss: μ·model-contrastive loss (global vs previous local "
                                         "model) on a projection head")
