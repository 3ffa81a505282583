"""FedDF (Lin et al., NeurIPS 2020, "Ensemble Distillation for Robust Model Fusion in Federated Learning").

After FedAvg's aggregation the server distils the ensemble of the sampled
clients' models into the aggregate w on unlabelled server data D_ulb:

    teacher(x) = (1/|S|) Σ_{k∈S} φ_{w_k}(x)            (the average of the clients' logits)
    w ← Adam steps on KL(softmax(teacher/T) ‖ softmax(φ_w/T)) over D_ulb batches

As in FEDIC's author's own FedDF prototype (FDFT:main.py; notes §5): uniform
logit averaging, Adam with lr 1e-3, T = 1, 100 steps of 128 D_ulb samples, the
student starting from the FedAvg model, no CE term.  FedDF's paper stops
distillation early on a validation set; a fixed budget is used here
(:data:`~fedlib.algorithms.server_steps.DISTILL_PARAMS`).  The optimizer is
fresh every round.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..losses import distillation_kl
from .kinds import ServerTraining
from .registry import register_method
from .server_steps import DISTILL_PARAMS, adam_train, client_outputs, logits_of, sample_rows

__all__ = ["EnsembleDistillation", "distil"]


def distil(model, start: dict, teacher, unlabeled_x: torch.Tensor, steps: int, batch_size: int, lr: float,
           temperature: float, generator: torch.Generator) -> dict:
    """``steps`` Adam steps from ``start`` on KL(teacher(x) ‖ student(x)) over random D_ulb batches;
    ``teacher(x)`` returns logits (or log-probabilities)."""
    batches = [sample_rows(len(unlabeled_x), batch_size, generator) for _ in range(steps)]

    def loss(params, step):
        xb = unlabeled_x[batches[step]]
        return distillation_kl(logits_of(model, params, xb), teacher(xb), temperature)

    trained, _ = adam_train(loss, start, steps, lr)
    return trained


@dataclass(frozen=True)
class EnsembleDistillation(ServerTraining):
    """FedDF's server step; FedBE's (:mod:`.fedbe`) changes the ensemble and how it is averaged."""

    steps: int = 100
    batch_size: int = 128
    lr: float = 1e-3
    temperature: float = 1.0
    name = "feddf"
    needs = ("unlabeled",)

    def ensemble(self, ctx) -> list[dict]:
        """The teacher's members: the sampled clients' models."""
        return ctx.client_params

    def combine(self, member_logits: torch.Tensor) -> torch.Tensor:
        """The teacher's logits from the members' [M, B, K]: (1/|S|) Σ_k φ_{w_k}(x)."""
        return member_logits.mean(0)

    def after_round(self, ctx, params, state):
        model, members = ctx.model, self.ensemble(ctx)

        def teacher(x):
            return self.combine(client_outputs(model, members, x)[1])

        x = ctx.server_data.unlabeled_x.to(ctx.device)
        return distil(model, params, teacher, x, self.steps, self.batch_size, self.lr, self.temperature,
                      ctx.generator(1)), state


register_method(
    "feddf",
    parts={"server_training": EnsembleDistillation},
    params=DISTILL_PARAMS, paper="Lin et al., NeurIPS 2020",
    doc="server training: distil the average of the clients' logits into the FedAvg model on D_ulb")
