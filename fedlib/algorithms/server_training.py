"""Server training: training on server-held data after the clients' updates are in.

Some methods train on the server, on data the server holds (:class:`ServerData`):
ensemble distillation on unlabelled data (FedDF, FedBE), calibration and
distillation on a small balanced labelled set (FEDIC), or post-hoc classifier
re-balancing of the final model (cRT, τ-norm, LWS).  A server-training part has

* ``needs`` -- which server-held data it uses: ``"aux"`` (the balanced labelled
  set D_aux) and/or ``"unlabeled"`` (D_ulb); the run refuses to start without them;
* :meth:`init_state` -- its own server state (e.g. an optimizer's moments that
  persist across rounds), part of the checkpoint;
* :meth:`after_round` -- called every round after aggregation with a
  :class:`ServerRound` (the sampled clients' own models, not only their
  averaged update, their sample counts and class counts, the server data) and
  the aggregated parameters; returns the new global parameters and state;
* :meth:`after_training` -- called once on the final model (a changed model is
  evaluated again and becomes the run's final result).

A part may also *report* numbers about a round (e.g. FEDIC's teacher accuracy):
``ServerRound.evaluate(predict)`` evaluates any predictor ``x -> logits`` on
the run's test set (never to train on), ``evaluating``/``final`` say whether
this round is evaluated / the last one, and what the part puts in
``ServerRound.report`` (numbers) goes into that round's history row.

FedAvg's part, :class:`NoServerTraining`, returns the aggregate unchanged.
Randomness on the server must come from ``ServerRound.generator()`` (seeded by
the run's seed and the round), never from the global RNG.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from .kinds import ServerTraining

__all__ = ["ServerData", "ServerRound", "NoServerTraining"]


@dataclass
class ServerData:
    """Data the server holds.  ``aux_x``/``aux_y``: D_aux, balanced and labelled, taken
    out of the training set before any long tail or partition; ``unlabeled_x``:
    D_ulb (labels never used).  Either may be None."""

    aux_x: torch.Tensor | None = None
    aux_y: torch.Tensor | None = None
    unlabeled_x: torch.Tensor | None = None
    description: dict = field(default_factory=dict)  # what each set is, for outputs


@dataclass
class ServerRound:
    """What the server sees after round ``round`` (1-based; ``round = 0`` for
    :meth:`NoServerTraining.after_training`)."""

    round: int
    model: Any  # the nn.Module the parameters belong to
    client_params: list[dict]  # each sampled client's model after its local update
    client_weights: list[int]  # n_k
    client_class_counts: torch.Tensor  # [clients, K]
    server_data: ServerData | None
    seed: int
    device: str = "cpu"
    global_class_counts: torch.Tensor | None = None  # Σ over all clients, [K]
    evaluate: Callable[[Callable], tuple[float, Any]] | None = None  # predict -> (accuracy, per-class) on the test set
    evaluating: bool = False  # this round's global model is evaluated
    final: bool = False  # the stage's last round
    report: dict = field(default_factory=dict)  # numbers for this round's history row

    def generator(self, stream: int = 0) -> torch.Generator:
        """A torch generator seeded by (seed, round, stream): server randomness that
        does not depend on anything else."""
        g = torch.Generator(device="cpu")
        g.manual_seed(int(self.seed) * 1_000_003 + int(self.round) * 1_009 + int(stream))
        return g


@dataclass(frozen=True)
class NoServerTraining(ServerTraining):
    """No server training (FedAvg): every hook at its default."""

    name = "none"
