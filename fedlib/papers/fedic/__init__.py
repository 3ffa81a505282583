"""The FEDIC companion: Shang et al., "FEDIC: Federated Learning on Non-IID and Long-Tailed Data via
Calibrated Distillation", ICME 2022.

* :mod:`.reported` -- Tables 1-3 and the claims of Figs. 3-5 as data, the paper's setup and the
  mapping of Table 3's rows to FEDIC's switches (inferred);
* :mod:`.deviations` -- every place fedlib's reproduction departs from the paper or follows its code;
* :mod:`.profiles` -- ``paper``, ``quick``, ``smoke``;
* :mod:`.experiments` -- the grids of Figs. 3-5, what each table cell reads, the long-tailed data.

The method is :mod:`fedlib.algorithms.fedic`; the baselines are ``fedavg``, ``fedavgm``,
``fedprox``, ``fednova``, ``feddf``, ``fedbe``, ``fed_focal``, ``ratio_loss``, ``crt``,
``tau_norm`` and ``lws``.  Notebooks: ``notebooks/fedic/``; outputs: ``figures/fedic/<profile>/``.
"""

from ...papers import Paper
from . import reported
from .profiles import EXPERIMENT_DATASETS, EXPERIMENTS, MODEL_LABELS, PROFILES

PAPER = Paper(
    name="fedic",
    title="FEDIC (ICME 2022)",
    citation=reported.PAPER,
    source="fedic_icme2022.txt",
    tables=reported.TABLES,
    profiles=PROFILES,
    experiments=EXPERIMENTS,
    method_labels=reported.METHOD_LABELS,
    dataset_labels={**reported.DATASET_LABELS, "fmnist": "FashionMNIST-LT"},
    setup=reported.SETUP,
    seeds=reported.SEEDS,
    headline=("fedic", "fedavg"),
    experiment_datasets=EXPERIMENT_DATASETS,
    model_labels=MODEL_LABELS,
    notes=reported.NOTES,
)

__all__ = ["PAPER"]
