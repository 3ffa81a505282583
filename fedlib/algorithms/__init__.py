"""Federated algorithms as compositions of small parts.

``method`` is one or more tokens joined by ``+``; each token sets one or more
parts (:data:`~fedlib.algorithms.registry.PART_KINDS`) and the rest stay
FedAvg's (:mod:`fedlib.algorithms.fedavg`).  So "FedLC + SCAFFOLD" of FedLC
Table 7 is ``method="fedlc+scaffold"``: the calibrated loss with SCAFFOLD's
control variates, and nothing new.

The part kinds, every hook with its default, are declared in
:mod:`~fedlib.algorithms.kinds`; an :class:`Algorithm` (one part of each kind)
and how tokens compose it are in :mod:`~fedlib.algorithms.composition`.
Each token is registered, with the parameters it reads, in the module that
implements it; this package imports every module by discovery.
``python -m fedlib params`` lists the tokens, the parts they set and their
parameters.
"""

from __future__ import annotations

from ..discovery import import_modules
from .composition import Algorithm, build_algorithm, default_parts, method_part
from .registry import METHODS, PART_KINDS, MethodToken, method_params, parse_method, register_method

__all__ = ["Algorithm", "build_algorithm", "method_part", "METHODS", "PART_KINDS", "MethodToken", "method_params",
           "parse_method", "register_method", "default_parts"]


import_modules(__name__, __path__, skip=("registry", "kinds", "composition"))
