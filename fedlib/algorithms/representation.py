"""Representation losses: a client loss term on the features ``h`` that needs the
features of other models (reference models), e.g. MOON's model-contrastive loss
with the global model and the client's previous local model.

A representation part has

* ``active`` -- False for FedAvg's :class:`NoRepresentationLoss` (the engines
  then skip the features altogether);
* :meth:`references` -- the reference models' parameters for one client, from
  the model it received and its per-client state;
* ``__call__(h, refs, targets, sample_weight)`` -- the loss term, given the
  local features ``h`` [B, d] and the reference features ``refs[name]`` [B, d]
  (computed on the same batch, without gradient); a pure function of tensors,
  so it runs under ``vmap``;
* :meth:`state_after` -- the client's representation state after its local
  update (MOON keeps the new local model as the next "previous" one);
* ``extend_model(model)`` (optional) -- a projection head, say.
"""

from __future__ import annotations

from dataclasses import dataclass

from .kinds import RepresentationLoss

__all__ = ["NoRepresentationLoss"]


@dataclass(frozen=True)
class NoRepresentationLoss(RepresentationLoss):
    name = "none"
    active = False

    """No representation term (FedAvg): every hook at its default."""
