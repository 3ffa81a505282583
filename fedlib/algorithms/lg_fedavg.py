"""LG-FedAvg (Liang et al. 2020, "Think Locally, Act Globally: Federated Learning with Local
and Global Representations"): the lower layers (local representations) stay on the client,
the upper layers are global and averaged.

Which layers are global differs between implementations (notes §3): LG-FedAvg's own code
averages the last ``num_layers_keep`` entries of a list whose order makes them the conv
layers of its CIFAR CNN; FedRep's code keeps conv1, conv2, fc1 local and averages fc2 and
fc3 of the same ConvNet FedABC uses (and the top two layers of its MNIST MLP); PFLlib shares
the head only; FL-bench shares the *first* layers.  fedlib follows FedRep's split, which
matches the paper's idea (lower layers local, upper global): ``lg_global_layers`` counts the
global layers from the top, a layer being a module owning parameters
(:func:`fedlib.models.layer_keys`).  The default 2 makes fc2 and the classifier global for
both FedABC networks.  0 keeps every layer local (Local-only); at least the model's number
of layers makes every layer global (FedAvg).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..models import layer_keys
from ..params import Param
from .kinds import Personalization
from .registry import register_method


@dataclass(frozen=True)
class LowerLayersLocal(Personalization):
    """All but the top ``global_layers`` layers stay on the client."""

    global_layers: int = 2
    name = "lg_fedavg"
    personalized = True

    def local_keys(self, model) -> tuple[str, ...]:
        layers = layer_keys(model)
        local = layers[:max(0, len(layers) - self.global_layers)]
        return tuple(k for layer in local for k in layer)


register_method(
    "lg_fedavg", parts={"personalization": LowerLayersLocal},
    params=(Param("lg_global_layers", 2, int, "LG-FedAvg: number of top layers that are global (averaged); the "
                  "layers below stay on the client", check=lambda v: v >= 0, allowed="an integer ≥ 0",
                  source="FedRep code's LG split (lgcollins/FedRep main_fedrep.py: fc2, fc3 global); "
                         "not in FedABC", field="global_layers"),),
    paper="Liang et al. 2020", doc="personalization: lower layers local, top lg_global_layers layers global")
