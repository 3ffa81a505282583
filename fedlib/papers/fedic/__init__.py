"""The FEDIC companion: Shang et al., "FEDIC: Federated Learning on Non-IID and Long-Tailed Data via
Calibrated Distillation", ICME 2022.

* :mod:`.reported` -- Tables 1-3 and the claims of Figs. 3-5 as data, the paper's setup and the
  mapping of Table 3's rows to FEDIC's switches (inferred);
* :mod:`.deviations` -- every place fedlib's reproduction departs from the paper or follows its code;
* :mod:`.profiles` -- ``paper``, ``quick``, ``smoke``;
* :mod:`.experiments` -- what each table cell reads, the long tail of a study's cell (``CIFAR10_LT``);
* :mod:`.studies` -- ``STUDIES``: the long-tailed data, Table 3 by group and Figs. 3-5, with their typed options;
* :mod:`.plots` -- the notebooks' figures and shown tables;
* :mod:`.budget` -- the paper profile's cost model and the budget ladder.

The method is :mod:`fedlib.algorithms.fedic`; the baselines are ``fedavg``, ``fedavgm``,
``fedprox``, ``fednova``, ``feddf``, ``fedbe``, ``fed_focal``, ``ratio_loss``, ``crt``,
``tau_norm`` and ``lws``.  Notebooks: ``notebooks/fedic/``; outputs: ``figures/fedic/<profile>/``.
"""

from ...repro.spec.paper import Paper, View
from . import profiles, reported

#: Its notebooks and what each reads (fedlib.repro.spec.paper.View).
VIEWS = (
    View("01_long_tailed_data", studies=("long_tail",)),
    View("02_cifar_lt", tables=("table1",)),
    View("03_imagenet_lt", tables=("table2",)),
    View("04_ablation", tables=("table3",), studies=("table3_groups",)),
    View("05_sensitivity", studies=("fig3", "fig4", "fig5")),
    View("06_budget_ladder", ladder=True),
    View("07_fedavg_learns", studies=("learns",)),
)

PAPER = Paper(
    name="fedic", title="FEDIC (ICME 2022)", citation=reported.PAPER, source="fedic_icme2022.txt",
    tables=reported.TABLES, setup=reported.SETUP, seeds=reported.SEEDS, notes=reported.NOTES,
    method_labels=reported.METHOD_LABELS, method_order=reported.METHOD_ORDER,
    dataset_labels={**reported.DATASET_LABELS, "fmnist": "FashionMNIST-LT"},
    profiles=profiles.PROFILES, experiments=profiles.EXPERIMENTS, experiment_datasets=profiles.EXPERIMENT_DATASETS,
    model_labels=profiles.MODEL_LABELS, views=VIEWS, headline=("fedic", "fedavg"))

__all__ = ["PAPER"]

PAPER.check()  # every profile's settings against its tables and studies: a misspelt key fails at import
