"""FedProx (Li et al., MLSys 2020, "Federated Optimization in Heterogeneous Networks").

Client objective h_k(w) = F_k(w) + μ/2 ‖w − w^t‖² (FedProx Eq. 2), i.e. the
local gradient gains μ (w − w^t).  μ = 0 is exactly FedAvg.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import tree
from .fedavg import NoCorrection


@dataclass(frozen=True)
class Proximal(NoCorrection):
    mu: float = 0.01
    name = "fedprox"

    def adjust(self, grads, params, anchor, context):
        # ∇h_k = ∇F_k(w) + μ (w − w^t)   (FedProx Eq. 2)
        return tree.tree_map(lambda g, w, w0: g + self.mu * (w - w0), grads, params, anchor)

    def effective_steps(self, num_steps, lr):
        # FedNova (Wang et al. 2020) §4: a = [1 − (1 − ημ)^τ] / (ημ) for FedProx.
        if self.mu == 0:
            return float(num_steps)
        q = 1.0 - lr * self.mu
        return (1.0 - q**num_steps) / (lr * self.mu)
