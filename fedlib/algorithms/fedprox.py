"""FedProx (Li et al., MLSys 2020, "Federated Optimization in Heterogeneous Networks").

Client objective h_k(w) = F_k(w) + μ/2 ‖w − w^t‖² (FedProx Eq. 2), i.e. the
local gradient gains μ (w − w^t).  μ = 0 is exactly FedAvg.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import tree
from ..params import Param
from .kinds import Correction
from .registry import register_method


@dataclass(frozen=True)
class Proximal(Correction):
    mu: float = 0.01
    name = "fedprox"

    def adjust(self, grads, params, anchor, context):
        # ∇h_k = ∇F_k(w) + μ (w − w^t)   (FedProx Eq. 2)
        return tree.tree_map(lambda g, w, w0: g + self.mu * (w - w0), grads, params, anchor)

    def effective_steps(self, num_steps, lr, momentum=0.0):
        # FedNova (Wang et al. 2020) §4: a = [1 − (1 − ημ)^τ] / (ημ) for FedProx.
        if self.mu == 0:
            return super().effective_steps(num_steps, lr, momentum)
        if not momentum:
            q = 1.0 - lr * self.mu
            return (1.0 - q**num_steps) / (lr * self.mu)
        # with momentum ρ: a = −x_τ/η for the scalar local iterates under a unit gradient,
        # x ← x − η·buf, buf ← ρ·buf + 1 + μx (the local update is linear in the gradients)
        x = buf = 0.0
        for _ in range(num_steps):
            buf = momentum * buf + 1.0 + self.mu * x
            x -= lr * buf
        return -x / lr


register_method(
    "fedprox", parts={"correction": Proximal},
    params=(Param("mu", 0.01, float, "FedProx proximal weight μ", check=lambda v: v >= 0, allowed="≥ 0",
                  source="FedProx Eq. 2; value not in FedLC"),),
    paper="Li et al., MLSys 2020", doc="client correction: + μ(w − w^t)")
