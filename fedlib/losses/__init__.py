"""Client-side losses, each a plain function of tensors in its own module.

================================  =============================  ========================================
function                          module                         paper
================================  =============================  ========================================
``cross_entropy``                 ``losses.cross_entropy``       softmax cross-entropy (FedAvg)
``fedlc_loss``                    ``losses.logit_calibration``   FedLC (Zhang et al. 2022), Eqs. 4–7
``fedrs_loss``                    ``losses.restricted_softmax``  FedRS (Li & Zhan 2021)
``focal_loss``                    ``losses.focal``               Fed-Focal Loss (Sarkar et al. 2020)
``ratio_loss``                    ``losses.ratio``               Ratio Loss (Wang et al. 2021)
``distillation_kl``               ``losses.distillation``        FedDF, FedBE, FEDIC: KL with temperature
``calibrated_distillation_loss``  ``losses.distillation``        FEDIC Eq. 9: (1 − λ)·CE + λ·KL
================================  =============================  ========================================

Every loss is a pure function: no in-place ops on inputs, no ``.item()``, no
Python branching on tensor values and no shape-changing boolean indexing, so it
runs unchanged under ``torch.func.vmap`` (over a client dimension) and
``torch.func.grad``.  Argument checks look only at static things (option
strings, Python numbers, shapes); value checks on ``class_counts`` live in
:func:`validate_class_counts`, which the caller runs once, outside any transform.
Weighted means are ``Σ w_i ℓ_i / Σ w_i``: a padding sample (weight 0) changes
neither the loss nor its gradient.

A new loss is a new module here whose public names this package re-exports
(every module is imported below, by discovery).
"""

from __future__ import annotations

from ..discovery import import_modules
from ._common import REDUCTIONS

__all__ = ["REDUCTIONS"]


import_modules(__name__, __path__, globals(), skip=())
