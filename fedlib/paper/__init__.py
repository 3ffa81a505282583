"""Values reported by the papers fedlib reproduces, transcribed as data.

* :mod:`fedlib.paper.fedlc` -- Zhang et al., "Federated Learning with Label
  Distribution Skew via Logits Calibration", ICML 2022: Tables 1-7 and the
  numbers quoted for Figure 1.
"""

from . import fedlc

__all__ = ["fedlc"]
