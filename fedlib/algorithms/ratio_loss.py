"""Ratio Loss (Wang et al., AAAI 2021, "Addressing Class Imbalance in Federated Learning").

The server monitors the global class imbalance with a small labelled auxiliary
set D_aux (one class at a time) and the clients train with a cross-entropy
whose class weights grow with the estimated imbalance
(:func:`fedlib.losses.ratio_loss`):

    ℓ = −(α + β·Ra_y) · log p_y

**What is implemented** (the definition of Ra is read from the authors'
released code, ``balanced-fl/Addressing-Class-Imbalance-FL``,
``models/Fed.py: outlier_detect, whole_determination`` and
``models/Update.py: Ratio_Cross_Entropy``; the paper's body could not be read
through the search tools):

1. after aggregation, for every class i the server computes the update ΔW_i of
   the global model's classifier weight W [K, d] that one step on the D_aux
   samples of class i would make, ΔW_i = −∇_W CE(D_aux,i) (closed form
   (P_i − Y_i)ᵀ H_i / n_i for the classifier of the features H_i; the step size
   cancels in Ra);
2. every entry (r, c) of W is *owned* by the class i* whose ΔW_{i*}[r, c] is
   largest, unless another class's |ΔW_j[r, c]| exceeds ``share`` = 0.8 of it
   (ambiguous entries are owned by nobody);
3. Ra_i = |Σ_{owned by i} ΔW_i| / |Σ_{owned by i} mean_{j≠i} ΔW_j| (``empty`` = 10
   when the denominator is 0): how much more the global model moves for class
   i than for the others, large for the classes it has learnt least;
4. the next round's clients use the weights α + β·Ra (1 in the first round), in a batch
   loss normalised by the sum of the batch's class weights (``ratio_loss_normalization``,
   :func:`fedlib.losses.ratio_loss`).

**Why the class-weighted mean.**  The authors' ``Ratio_Cross_Entropy`` divides by the
batch size, so the weights scale the step as well as the balance between classes.  Ra
is a ratio of two update sums and is unbounded: on FashionMNIST-LT (IF = 100, 2-layer
CNN, FEDIC's lr 0.1 without momentum) it reached ≈ 80, weights ≈ 9, and the plain mean
diverged (NaN from round 9, accuracy at chance), where the FEDIC paper reports Ratio Loss
2 pp above FedAvg.  The class-weighted mean (what ``CrossEntropyLoss(weight=…)``
computes, as public re-implementations of Ratio Loss use) keeps the optimiser's step;
``ratio_loss_normalization="samples"`` restores the authors' plain mean.

Deviations from the released code: ΔW_i is one full-batch gradient instead of
a few local epochs of SGD with momentum, and it is computed on the new global
model (used by the next round's clients) instead of on the previous one.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..losses import ratio_loss
from ..losses.ratio import RATIO_NORMALIZATIONS
from ..params import Param
from .kinds import ClientLoss, ServerTraining
from .registry import register_method
from .server_steps import features_of

__all__ = ["RatioLoss", "RatioMonitor", "classifier_updates", "ratio_estimate"]


@dataclass(frozen=True, eq=False)
class RatioLoss(ClientLoss):
    """The clients' class-weighted CE; ``for_round`` puts in the weights the server estimated."""

    class_weights: torch.Tensor | None = None
    normalization: str = "class_weights"
    name = "ratio_loss"

    def for_round(self, server_training_state: dict) -> "RatioLoss":
        return RatioLoss(server_training_state.get("class_weights"), self.normalization)

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        w = self.class_weights
        w = torch.ones(logits.shape[-1]) if w is None else w
        return ratio_loss(logits, targets, w.to(logits.device), sample_weight=sample_weight,
                          normalization=self.normalization)


def classifier_updates(h: torch.Tensor, y: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """ΔW_i = −∇_W mean CE over the samples of class i, for every class i: [K, K, d]
    (class, then W's shape).  For logits z = W h + b: ∇_W = (softmax(z) − onehot(y))ᵀ h / n_i."""
    K = weight.shape[0]
    p = torch.softmax(h @ weight.T + bias, dim=-1)
    residual = p - torch.nn.functional.one_hot(y, K).to(p.dtype)
    out = torch.zeros((K, *weight.shape), dtype=weight.dtype, device=weight.device)
    for i in range(K):
        rows = y == i
        if rows.any():
            out[i] = -(residual[rows].T @ h[rows]) / rows.sum()
    return out


def ratio_estimate(updates: torch.Tensor, share: float = 0.8, empty: float = 10.0) -> torch.Tensor:
    """Ra [K] from the per-class updates ``updates`` [K, …] (steps 2-3 of the module doc)."""
    K = updates.shape[0]
    flat = updates.reshape(K, -1)
    top, owner = flat.max(0)
    close = (flat.abs() / top.abs().clamp_min(torch.finfo(flat.dtype).tiny) > share).sum(0)
    owned = close < 2  # only the owner itself is within `share` of the largest update
    others = (flat.sum(0, keepdim=True) - flat) / (K - 1)  # mean_{j≠i} ΔW_j, for each i
    ra = torch.full((K,), float(empty), dtype=flat.dtype)
    for i in range(K):
        mask = owned & (owner == i)
        den = others[i][mask].sum().abs()
        if den > 0:
            ra[i] = flat[i][mask].sum().abs() / den
    return ra


@dataclass(frozen=True)
class RatioMonitor(ServerTraining):
    alpha: float = 1.0
    beta: float = 0.1
    share: float = 0.8
    empty: float = 10.0
    name = "ratio_monitor"
    needs = ("aux",)

    def init_state(self, params):
        return {"class_weights": torch.ones(params["classifier.weight"].shape[0])}

    @torch.no_grad()
    def after_round(self, ctx, params, state):
        x, y = ctx.server_data.aux_x.to(ctx.device), ctx.server_data.aux_y.to(ctx.device)
        h = features_of(ctx.model, params, x)
        updates = classifier_updates(h, y, params["classifier.weight"], params["classifier.bias"])
        ra = ratio_estimate(updates.cpu(), self.share, self.empty)
        return params, {"class_weights": self.alpha + self.beta * ra}


register_method(
    "ratio_loss",
    parts={"loss": RatioLoss, "server_training": RatioMonitor},
    params=(Param("ratio_loss_alpha", 1.0, float, "Ratio Loss: base class weight α in α + β·Ra",
                  check=lambda v: v >= 0, allowed="≥ 0", source="Wang et al. 2021's code (Fed.py: 1.0 + 0.1·ratio)",
                  field="alpha"),
            Param("ratio_loss_beta", 0.1, float, "Ratio Loss: weight β of the estimated ratio Ra",
                  check=lambda v: v >= 0, allowed="≥ 0", source="Wang et al. 2021's code (Fed.py)", field="beta"),
            Param("ratio_loss_normalization", "class_weights", str, "Ratio Loss: the batch mean's denominator, the sum "
                  "of the batch's class weights (torch's weighted CE) or the batch size (the authors' plain mean, "
                  "which diverges at lr 0.1 on FashionMNIST-LT)",
                  choices=RATIO_NORMALIZATIONS, source="fedlib's choice (Wang et al. 2021's code: 'samples')",
                  field="normalization"),
            Param("ratio_loss_share", 0.8, float, "Ratio Loss monitor: an entry of W is owned by the class with the "
                  "largest update unless another class's update exceeds this share of it",
                  check=lambda v: 0 < v < 1, allowed="in (0, 1)", source="Wang et al. 2021's code (Fed.py: 0.8)",
                  field="share"),
            Param("ratio_loss_empty", 10.0, float, "Ratio Loss monitor: Ra of a class that owns no entry",
                  check=lambda v: v >= 0, allowed="≥ 0", source="Wang et al. 2021's code (Fed.py: 10)", field="empty")),
    paper="Wang et al., AAAI 2021",
    doc="client loss: CE weighted by α + β·Ra, Ra estimated each round by the server on D_aux")
