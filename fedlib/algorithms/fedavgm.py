"""FedAvgM (Hsu et al. 2019, "Measuring the Effects of Non-Identical Data Distribution
for Federated Visual Classification"): FedAvg with server momentum.

The server treats g = −Δ (the aggregated client update, negated) as a gradient:

    v ← β·v + g,    w ← w − η_g·v

β = 0 (or a single round) is FedAvg with server learning rate η_g.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import tree
from ..params import Param
from .kinds import ServerOptimizer
from .registry import register_method

__all__ = ["ServerMomentum"]


@dataclass(frozen=True)
class ServerMomentum(ServerOptimizer):
    lr: float = 1.0
    beta: float = 0.2
    name = "momentum"
    from_core = {"lr": "server_lr"}

    def init(self, params):
        return {"v": tree.zeros_like(params)}

    def apply(self, params, pseudo_grad, state):
        v = tree.tree_map(lambda v, g: self.beta * v + g, state["v"], pseudo_grad)  # v ← βv + g
        return tree.tree_map(lambda w, v: w - self.lr * v, params, v), {"v": v}  # w ← w − η_g v


register_method(
    "fedavgm", parts={"server_optimizer": ServerMomentum},
    params=(Param("fedavgm_beta", 0.2, float, "FedAvgM server momentum β", check=lambda v: 0 <= v < 1,
                  allowed="in [0, 1)", source="FEDIC's code options.py:48 (init_belta=0.2 under 'FedAvgM', unused "
                  "there); Hsu et al. tune β (0.9 common), CReFF uses 0.97", field="beta"),),
    paper="Hsu et al. 2019", doc="server optimizer: SGD with momentum β on the pseudo-gradient")
