"""Post-hoc classifier re-balancing of the final FedAvg model (Kang et al., ICLR 2020,
"Decoupling Representation and Classifier for Long-Tailed Recognition"):
FEDIC's "FedAvg + cRT / τ-norm / LWS" baselines.

FedAvg trains as usual; once, after the last round (``after_training``), the
feature extractor is frozen and only the classifier (W, b) changes:

* **cRT** (classifier re-training): W, b are re-initialised and trained with
  class-balanced sampling;
* **τ-norm**: w_i ← w_i / ‖w_i‖^τ for every class row (no training); τ is
  chosen on the balanced set unless ``tau_norm_tau`` fixes it;
* **LWS** (learnable weight scaling): logits z_i ← f_i · z_i, only the K scales
  f (initialised to 1) are trained with class-balanced sampling; folded back
  into the classifier as w_i ← f_i w_i, b_i ← f_i b_i.

**Balanced data: D_aux**, the server's balanced labelled set.  The paper does
not say what cRT, τ-norm and LWS re-balance with; its own argument (the global
distribution is unknown to server and clients, FEDIC §2.2) rules out
re-sampling the clients' data, so the one balanced labelled set of the
setting, D_aux (the same 100 per class FEDIC uses), is the natural choice.
Because D_aux is balanced, class-balanced sampling is uniform sampling.  The
features of D_aux are computed once (no augmentation).  Training: SGD with
momentum and weight decay, cosine learning rate to 0 (Kang et al. §4), in
epochs over D_aux (:data:`POSTHOC_PARAMS`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..engine import ClientOptimizer, sgd_step
from ..losses import cross_entropy
from ..params import Param
from .kinds import ServerTraining
from .registry import register_method
from .server_steps import features_of

__all__ = ["ClassifierRetraining", "TauNormalization", "WeightScaling", "tau_normalize", "train_head",
           "POSTHOC_PARAMS", "TAU_GRID"]

TAU_GRID = tuple(round(0.1 * i, 1) for i in range(21))  # τ ∈ {0, 0.1, …, 2.0}: Kang et al. search τ in [0, 2]

POSTHOC_PARAMS = (
    Param("posthoc_epochs", 30, int, "cRT/LWS: epochs over D_aux", check=lambda v: v >= 1, allowed="an integer ≥ 1",
          source="not in FEDIC; Kang et al. use 10 epochs of a large set, more passes suit the 1,000-sample D_aux",
          field="epochs"),
    Param("posthoc_batch_size", 128, int, "cRT/LWS: mini-batch size", check=lambda v: v >= 1,
          allowed="an integer ≥ 1", source="not in FEDIC (FEDIC's local batch)", field="batch_size"),
    Param("posthoc_lr", 0.1, float, "cRT/LWS: initial SGD learning rate (cosine decay to 0)", check=lambda v: v > 0,
          allowed="> 0", source="not in FEDIC; Kang et al. §4 use 0.2 for batch 512 with cosine decay", field="lr"),
    Param("posthoc_momentum", 0.9, float, "cRT/LWS: SGD momentum", check=lambda v: 0 <= v < 1, allowed="in [0, 1)",
          source="Kang et al. §4", field="momentum"),
    Param("posthoc_weight_decay", 5e-4, float, "cRT/LWS: SGD weight decay", check=lambda v: v >= 0, allowed="≥ 0",
          source="Kang et al. §4", field="weight_decay"),
)


def _aux_features(ctx, params) -> tuple[torch.Tensor, torch.Tensor]:
    x, y = ctx.server_data.aux_x.to(ctx.device), ctx.server_data.aux_y.to(ctx.device)
    return features_of(ctx.model, params, x), y


def train_head(head: dict, logits, h: torch.Tensor, y: torch.Tensor, epochs: int, batch_size: int, lr: float,
               momentum: float, weight_decay: float, generator: torch.Generator) -> dict:
    """SGD (``torch.optim.SGD`` semantics, cosine learning rate from ``lr`` to 0 over all steps)
    on mean CE(logits(head, h_b), y_b); each epoch a fresh permutation of the rows in batches."""
    batches = [perm[i:i + batch_size] for _ in range(epochs)
               for perm in [torch.randperm(len(y), generator=generator)] for i in range(0, len(y), batch_size)]
    head = {k: v.detach().clone() for k, v in head.items()}
    buf: dict = {k: None for k in head}
    for step, rows in enumerate(batches):
        live = {k: v.requires_grad_(True) for k, v in head.items()}
        grads = dict(zip(live, torch.autograd.grad(cross_entropy(logits(live, h[rows]), y[rows]), list(live.values()))))
        eta = 0.5 * lr * (1 + math.cos(math.pi * step / len(batches)))  # CosineAnnealingLR(T_max = steps)
        opt = ClientOptimizer(lr=eta, momentum=momentum, weight_decay=weight_decay)
        with torch.no_grad():
            for k, w in live.items():
                new_w, buf[k] = sgd_step(w, grads[k], buf[k], opt)
                head[k] = new_w.detach()
    return head


@dataclass(frozen=True)
class _PostHoc(ServerTraining):
    epochs: int = 30
    batch_size: int = 128
    lr: float = 0.1
    momentum: float = 0.9
    weight_decay: float = 5e-4
    needs = ("aux",)

    def _train(self, head, logits, h, y, ctx):
        return train_head(head, logits, h, y, self.epochs, self.batch_size, self.lr, self.momentum,
                          self.weight_decay, ctx.generator(5))


@dataclass(frozen=True)
class ClassifierRetraining(_PostHoc):
    name = "crt"

    def after_training(self, ctx, params, state):
        h, y = _aux_features(ctx, params)
        fresh = torch.nn.Linear(h.shape[1], params["classifier.weight"].shape[0])
        g = ctx.generator(4)
        with torch.no_grad():  # PyTorch's default Linear init, drawn from the server generator
            bound = 1.0 / math.sqrt(h.shape[1])
            head = {"weight": torch.rand(fresh.weight.shape, generator=g) * 2 * bound - bound,
                    "bias": torch.rand(fresh.bias.shape, generator=g) * 2 * bound - bound}
        head = self._train({k: v.to(h.device) for k, v in head.items()},
                           lambda p, hb: hb @ p["weight"].T + p["bias"], h, y, ctx)
        return {**params, "classifier.weight": head["weight"], "classifier.bias": head["bias"]}


def tau_normalize(weight: torch.Tensor, tau: float) -> torch.Tensor:
    """w_i / ‖w_i‖^τ for every row i (Kang et al. §3)."""
    return weight / weight.norm(dim=1, keepdim=True).clamp_min(torch.finfo(weight.dtype).tiny) ** tau


@dataclass(frozen=True)
class TauNormalization(ServerTraining):
    tau: float | None = None  # None: the τ of TAU_GRID with the best D_aux accuracy (the smallest on ties)
    name = "tau_norm"
    needs = ("aux",)

    @torch.no_grad()
    def after_training(self, ctx, params, state):
        w, b = params["classifier.weight"], params["classifier.bias"]
        tau = self.tau
        if tau is None:
            h, y = _aux_features(ctx, params)
            scores = [float(((h @ tau_normalize(w, t).T + b).argmax(1) == y).double().mean()) for t in TAU_GRID]
            tau = TAU_GRID[max(range(len(TAU_GRID)), key=lambda i: (scores[i], -i))]
        return {**params, "classifier.weight": tau_normalize(w, tau)}


@dataclass(frozen=True)
class WeightScaling(_PostHoc):
    name = "lws"

    def after_training(self, ctx, params, state):
        h, y = _aux_features(ctx, params)
        w, b = params["classifier.weight"], params["classifier.bias"]
        z = h @ w.T + b  # the frozen classifier's logits; only f is trained
        scale = self._train({"f": torch.ones(w.shape[0], dtype=w.dtype, device=w.device)},
                            lambda p, zb: p["f"] * zb, z, y, ctx)["f"]
        return {**params, "classifier.weight": scale[:, None] * w, "classifier.bias": scale * b}


_PAPER = "Kang et al., ICLR 2020 (on FedAvg's final model, as FEDIC's baselines)"
register_method("crt", parts={"server_training": ClassifierRetraining}, params=POSTHOC_PARAMS,
                paper=_PAPER, doc="FedAvg, then the classifier re-initialised and re-trained on D_aux")
register_method("lws", parts={"server_training": WeightScaling}, params=POSTHOC_PARAMS, paper=_PAPER,
                doc="FedAvg, then per-class logit scales learnt on D_aux (features and classifier frozen)")
register_method(
    "tau_norm", parts={"server_training": TauNormalization},
    params=(Param("tau_norm_tau", None, float, "τ-norm exponent τ; None: chosen on D_aux from {0, 0.1, …, 2}",
                  check=lambda v: v >= 0, allowed="≥ 0 or None", optional=True,
                  source="Kang et al. §3 choose τ on a balanced validation set; not in FEDIC", field="tau"),),
    paper=_PAPER, doc="FedAvg, then classifier rows normalised w_i/‖w_i‖^τ (bias kept)")
