"""SCAFFOLD (Karimireddy et al., ICML 2020), control variates with option II.

Server control variate c and client control variates c_k (all start at 0):

* local step:   y ← y − η (g_k(y) − c_k + c)                       (Alg. 1, line 10)
* after K steps: c_k⁺ = c_k − c + (x − y_k) / (K η)                  (option II, line 12)
* server:        c ← c + (1/N) Σ_{k∈S} (c_k⁺ − c_k)                  (line 17)

The model update itself goes through the aggregator and server optimizer like
every other method (fedlib weights clients by n_k as FedAvg does).  In the
first round c = c_k = 0, so SCAFFOLD's first round equals FedAvg's.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import tree
from .kinds import Correction
from .registry import register_method


@dataclass(frozen=True)
class Scaffold(Correction):
    name = "scaffold"

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
        # c_k⁺ = c_k − c + (x − y_k) / (K η)   (option II)
        ck_new = tree.tree_map(lambda a, b, x, y: a - b + (x - y) / (num_steps * lr), ck, c, anchor, local)
        return {"c": ck_new}, {"delta_c": tree.sub(ck_new, ck)}

    def server_update(self, server_state, messages, num_total_clients):
        total = tree.weighted_sum([m["delta_c"] for m in messages], [1.0 / num_total_clients] * len(messages))
        return {"c": tree.add(server_state["c"], total)}  # c ← c + (1/N) Σ Δc_k   (line 17)


register_method("scaffold", parts={"correction": Scaffold}, paper="Karimireddy et al., ICML 2020",
                doc="client correction: + c − c_k, control variates (option II)")
