"""The FedConcat companion: Diao, Li, He, "Exploiting Label Skews in Federated Learning with Model
Concatenation", AAAI 2024.

* :mod:`.reported` -- Tables 1-3 as data (from the AAAI slides);
* :mod:`.analysis` -- the communication analysis: the baselines' round budget ("same communication cost")
  from the model sizes;
* :mod:`.deviations` -- where fedlib's FedConcat, MOON and models depart from the paper or its code;
* :mod:`.profiles` -- ``paper``, ``quick``, ``smoke``;
* :mod:`.studies` -- every figure and analysis that is not a table, as declared studies (``ctx.study``):
  Table 1's cells (:mod:`.cells`), Fig. 1 (:mod:`.fig1`), the round budget (:mod:`.round_budget`), FedLC by a
  third party (:mod:`.third_party`), the clusters and Fig. 3 (:mod:`.clusters`), Fig. 4
  (:mod:`.final_architecture`); :mod:`.plots` -- their figures.

The method itself is :mod:`fedlib.algorithms.fedconcat` (tokens ``fedconcat``, ``fedconcat_id``).
Notebooks: ``notebooks/fedconcat/``; outputs: ``figures/fedconcat/<profile>/``.
"""

from ...repro.spec.paper import Paper, View
from . import profiles, reported

#: Its notebooks and what each reads (fedlib.repro.spec.paper.View).
VIEWS = (
    View("01_motivation", studies=("fig1",)),
    View("02_effectiveness", tables=("table1",)),
    View("03_communication_budget", studies=("budget_rounds", "budget")),
    View("04_fedlc_third_party", studies=("fedlc_third_party",)),
    View("05_clustering", studies=("clusters", "fig3")),
    View("06_final_architecture", studies=("fig4",)),
    View("07_scalability", tables=("table2",)),
    View("08_larger_models", tables=("table3",)),
    View("09_budget_ladder", ladder=True),
)

PAPER = Paper(
    name="fedconcat", title="FedConcat (AAAI 2024)", citation=reported.PAPER, source="fedconcat_aaai2024_slides.txt",
    tables=reported.TABLES, setup=reported.SETUP, seeds=reported.SEEDS, notes=reported.NOTES,
    method_labels=reported.METHOD_LABELS, method_order=reported.METHOD_ORDER, dataset_labels=reported.DATASET_LABELS,
    unsupported=reported.UNSUPPORTED_DATASETS,
    profiles=profiles.PROFILES, experiments=profiles.EXPERIMENTS, experiment_datasets=profiles.EXPERIMENT_DATASETS,
    model_labels=profiles.MODEL_LABELS, views=VIEWS, headline=("fedconcat", "fedavg"),
    reads=("fedlc",))  # notebook 04 reads the FedLC companion's stand-in check

__all__ = ["PAPER"]

PAPER.check()  # every profile's settings against its tables and studies: a misspelt key fails at import
