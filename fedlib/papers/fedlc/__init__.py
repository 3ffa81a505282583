"""The FedLC companion: Zhang et al., "Federated Learning with Label Distribution Skew via Logits
Calibration", ICML 2022.

* :mod:`.reported` -- Tables 1–7 and the numbers quoted for the figures, as data;
* :mod:`.profiles` -- ``paper``, ``quick``, ``smoke``;
* :mod:`.experiments` -- the grids and studies the notebooks run;
* :mod:`.analysis` -- the deviation bound D_jr (Definition 3, Theorems 1 and 3) measured during training.

Notebooks: ``notebooks/fedlc/``; outputs: ``figures/fedlc/<profile>/``.
"""

from ...papers import Paper
from . import reported
from .profiles import EXPERIMENT_DATASETS, EXPERIMENTS, MODEL_LABELS, PROFILES

PAPER = Paper(
    name="fedlc",
    title="FedLC (ICML 2022)",
    citation=reported.PAPER,
    source="fedlc_icml2022.md",
    tables=reported.TABLES,
    profiles=PROFILES,
    experiments=EXPERIMENTS,
    method_labels=reported.METHOD_LABELS,
    dataset_labels=reported.DATASET_LABELS,
    setup=reported.SETUP,
    seeds=reported.SEEDS,
    headline=("fedlc", "fedavg"),
    experiment_datasets=EXPERIMENT_DATASETS,
    model_labels=MODEL_LABELS,
    unsupported=reported.UNSUPPORTED_DATASETS,
    notes=reported.NOTES,
)

__all__ = ["PAPER"]
