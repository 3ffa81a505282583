"""FedOpt (Reddi et al., ICLR 2021, "Adaptive Federated Optimization"): FedAdam.

The server treats −Δ (the aggregated client update, negated) as a gradient and
applies Adam without bias correction (Reddi et al. Algorithm 2):

    m ← β1 m + (1 − β1) g,   v ← β2 v + (1 − β2) g²,   w ← w − η m / (√v + ε)

Defaults β1 = 0.9, β2 = 0.99, ε = 1e-3 follow the paper; η (server_lr)
defaults to 0.01 in fedlib (tuned per task in the paper).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import tree
from ..params import Param
from .kinds import ServerOptimizer
from .registry import register_method


@dataclass(frozen=True)
class ServerAdam(ServerOptimizer):
    lr: float = 0.01
    beta1: float = 0.9
    beta2: float = 0.99
    eps: float = 1e-3
    name = "adam"
    from_core = {"lr": "server_lr"}

    def init(self, params):
        return {"m": tree.zeros_like(params), "v": tree.zeros_like(params)}

    def apply(self, params, pseudo_grad, state):
        m = tree.tree_map(lambda m, g: self.beta1 * m + (1 - self.beta1) * g, state["m"], pseudo_grad)
        v = tree.tree_map(lambda v, g: self.beta2 * v + (1 - self.beta2) * g * g, state["v"], pseudo_grad)
        new = tree.tree_map(lambda w, m, v: w - self.lr * m / (torch.sqrt(v) + self.eps), params, m, v)
        return new, {"m": m, "v": v}


register_method(
    "fedopt",
    parts={"server_optimizer": ServerAdam},
    params=(Param("server_beta1", 0.9, float, "FedAdam β1", check=lambda v: 0 <= v < 1, allowed="in [0, 1)",
                  source="Reddi et al. 2021", field="beta1"),
            Param("server_beta2", 0.99, float, "FedAdam β2", check=lambda v: 0 <= v < 1, allowed="in [0, 1)",
                  source="Reddi et al. 2021", field="beta2"),
            Param("server_eps", 1e-3, float, "FedAdam ε", check=lambda v: v > 0, allowed="> 0",
                  source="Reddi et al. 2021", field="eps")),
    defaults={"server_lr": 0.01},
    paper="Reddi et al., ICLR 2021", doc="server optimizer: Adam (FedAdam); server_lr defaults to 0.01")
