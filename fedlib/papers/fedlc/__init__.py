"""The FedLC companion: Zhang et al., "Federated Learning with Label Distribution Skew via Logits
Calibration", ICML 2022.

* :mod:`.reported` -- Tables 1–7 and the numbers quoted for the figures, as data;
* :mod:`.deviations` -- where fedlib's FedLC, baselines and models depart from the paper or fill its gaps;
* :mod:`.profiles` -- ``paper``, ``quick``, ``smoke``;
* :mod:`.experiments` -- the grids, studies and tables the notebooks run; :mod:`.plots` -- their figures;
* :mod:`.analysis` -- the deviation bound D_jr (Definition 3, Theorems 1 and 3) measured during training.

Notebooks: ``notebooks/fedlc/``; outputs: ``figures/fedlc/<profile>/``.
"""

from ...repro.paper import Paper
from . import profiles, reported

PAPER = Paper.from_modules(reported, profiles, name="fedlc", title="FedLC (ICML 2022)", source="fedlc_icml2022.md",
                           headline=("fedlc", "fedavg"))

__all__ = ["PAPER"]
