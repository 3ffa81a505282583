"""FedNova (Wang et al., NeurIPS 2020, "Tackling the Objective Inconsistency Problem").

Normalized averaging: each client's update is divided by a_k, the norm of its
local gradient-accumulation vector (τ_k local SGD steps → a_k = τ_k), and the
server rescales by τ_eff = Σ p_k a_k (FedNova Eq. 6-7):

    Δ = τ_eff · Σ_k p_k Δ_k / a_k.

When every client takes the same number of steps this is exactly FedAvg.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import tree
from .kinds import Aggregator
from .registry import register_method


@dataclass(frozen=True)
class NormalizedAveraging(Aggregator):
    name = "fednova"

    def combine(self, deltas, num_samples, steps):
        total = float(sum(num_samples))
        p = [n / total for n in num_samples]
        tau_eff = sum(pk * ak for pk, ak in zip(p, steps))
        return tree.weighted_sum(deltas, [tau_eff * pk / ak for pk, ak in zip(p, steps)])


register_method("fednova", parts={"aggregator": NormalizedAveraging}, paper="Wang et al., NeurIPS 2020",
                doc="aggregator: normalized averaging")
