"""SCAFFOLD (Karimireddy et al., ICML 2020), control variates with option II.

Server control variate c and client control variates c_k (all start at 0):

* local step:   y ← y − η (g_k(y) − c_k + c)                       (Alg. 1, line 10)
* after K steps: c_k⁺ = c_k − c + (x − y_k) / (K η)                  (option II, line 12)
* server:        c ← c + (1/N) Σ_{k∈S} (c_k⁺ − c_k)                  (line 17)

Option II assumes plain local SGD: then x − y_k = η Σ_steps ĝ, and dividing by K η gives the mean
corrected gradient.  With client momentum μ (the buffer restarting at zero each round) the same K
steps move y_k by about η a_k ĝ, where a_k = [K − μ(1 − μ^K)/(1 − μ)] / (1 − μ) ≈ K/(1 − μ)
(FedNova §4, :meth:`~fedlib.algorithms.kinds.Correction.effective_steps`), so option II's c_k⁺
overshoots the gradient by a_k/K: about 2 at μ = 0.5.  ``scaffold_steps="effective"`` divides by
a_k η instead (the gradient steps the momentum steps amount to); the default ``"local"`` is
option II as printed (the paper and public SCAFFOLD code use plain SGD, or momentum with K).

The model update itself goes through the aggregator and server optimizer like
every other method (fedlib weights clients by n_k as FedAvg does).  In the
first round c = c_k = 0, so SCAFFOLD's first round equals FedAvg's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import tree
from ..params import Param
from .kinds import Correction
from .registry import register_method


#: What option II divides x − y_k by (times η): the local steps K, or the effective steps a_k.
SCAFFOLD_STEPS = ("local", "effective")


@dataclass(frozen=True)
class Scaffold(Correction):
    steps: str = "local"  # "local": K (option II as printed); "effective": a_k under client momentum
    momentum: float = 0.0  # the client SGD's momentum μ (the core parameter)
    name = "scaffold"
    from_core = {"momentum": "momentum"}

    def init_server_state(self, params):
        return {"c": tree.zeros_like(params)}

    def init_client_state(self, params):
        return {"c": tree.zeros_like(params)}

    def client_context(self, server_state, client_state):
        return {"c_minus_ck": tree.sub(server_state["c"], client_state["c"])}

    def adjust(self, grads, params, anchor, context):
        return tree.add(grads, context["c_minus_ck"])  # g − c_k + c   (line 10)

    def client_final(self, anchor, local, num_steps, lr, server_state, client_state):
        c, ck = server_state["c"], client_state["c"]
        # c_k⁺ = c_k − c + (x − y_k) / (K η)   (option II); a_k η in place of K η with "effective"
        steps = num_steps if self.steps == "local" else self.effective_steps(num_steps, lr, self.momentum)
        ck_new = tree.tree_map(lambda a, b, x, y: a - b + (x - y) / (steps * lr), ck, c, anchor, local)
        return {"c": ck_new}, {"delta_c": tree.sub(ck_new, ck)}

    def server_update(self, server_state, messages, num_total_clients):
        total = tree.weighted_sum([m["delta_c"] for m in messages], [1.0 / num_total_clients] * len(messages))
        return {"c": tree.add(server_state["c"], total)}  # c ← c + (1/N) Σ Δc_k   (line 17)


register_method(
    "scaffold", parts={"correction": Scaffold},
    params=(Param("scaffold_steps", "local", str, "SCAFFOLD option II divides x − y_k by η times the local steps K "
                  "('local', as printed) or the effective steps a_k = [K − μ(1 − μ^K)/(1 − μ)]/(1 − μ) the client "
                  "momentum μ makes of them ('effective'; equal to 'local' at μ = 0)", choices=SCAFFOLD_STEPS,
                  source="Karimireddy et al. 2020, Alg. 1 line 12 (plain SGD); 'effective': FedNova §4's a_k "
                         "(fedlib)", field="steps"),),
    paper="Karimireddy et al., ICML 2020", doc="client correction: + c − c_k, control variates (option II)")
