"""The FedABC companion: Wang et al., "FedABC: Targeting Fair Competition in Personalized
Federated Learning", AAAI 2023.

* :mod:`.reported` -- Tables 1–2 and the claims of the text, as data;
* :mod:`.deviations` -- where fedlib's FedABC and baselines depart from the paper or fill its gaps;
* :mod:`.profiles` -- ``paper``, ``quick``, ``smoke``;
* :mod:`.experiments` -- Tables 1-2's cells under a profile, their claims and gains;
* :mod:`.studies` -- Fig. 2, Fig. 4, Fig. 5 and the sensitivity study as declared studies (``STUDIES``);
* :mod:`.budget` -- the paper profile's cost model and the budget ladder; :mod:`.plots` -- the figures.

Notebooks: ``notebooks/fedabc/``; outputs: ``figures/fedabc/<profile>/``.

**Headline gain: FedABC − FedAvg.**  FedABC is FedAvg with one change, the client's loss
(one-vs-all sigmoid with under-sampling and hard-sample mining instead of softmax + CE):
the same aggregation, the same shared parameters, the same personalized-model protocol.
FedABC − FedAvg therefore measures exactly the paper's contribution, the comparison its
motivation (Fig. 2) is about.  FedABC − FedRoD, the best baseline by the paper's text, is
reported next to it in the notebooks; it mixes the loss with a different architecture
(FedRoD's extra personal head) and is 0.0 in two of Table 1's four MNIST columns (no sign
to compare), against one for FedAvg.
"""

from ...repro.spec.paper import Paper, View
from . import profiles, reported

#: Its notebooks and what each reads (fedlib.repro.spec.paper.View).
VIEWS = (
    View("01_motivation", studies=("fig2",)),
    View("02_heterogeneity", studies=("fig4",)),
    View("03_pfl_accuracy", tables=("table1",)),
    View("04_client_drift", tables=("table2",)),
    View("05_ablation", studies=("fig5",)),
    View("06_sensitivity", studies=("sensitivity",)),
    View("07_budget_ladder", ladder=True),
)

PAPER = Paper(
    name="fedabc", title="FedABC (AAAI 2023)", citation=reported.PAPER, source="fedabc_aaai2023.txt",
    tables=reported.TABLES, setup=reported.SETUP, seeds=profiles.SEEDS, notes=reported.NOTES,
    method_labels=reported.METHOD_LABELS, method_order=reported.METHOD_ORDER, dataset_labels=reported.DATASETS,
    profiles=profiles.PROFILES, experiments=profiles.EXPERIMENTS, experiment_datasets=profiles.EXPERIMENT_DATASETS,
    model_labels=profiles.MODEL_LABELS, views=VIEWS, headline=("fedabc", "fedavg"),
    metric="PFL accuracy (%), Eq. 7 (Table 1); client-drift accuracy (%), Eq. 8 (Table 2)")

__all__ = ["PAPER"]

PAPER.check()  # every profile's settings against its tables and studies: a misspelt key fails at import
