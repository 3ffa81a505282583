"""The FedLC companion: Zhang et al., "Federated Learning with Label Distribution Skew via Logits
Calibration", ICML 2022.

* :mod:`.reported` -- Tables 1–7 and the numbers quoted for the figures, as data;
* :mod:`.deviations` -- where fedlib's FedLC, baselines and models depart from the paper or fill its gaps;
* :mod:`.profiles` -- ``paper``, ``quick``, ``smoke``;
* :mod:`.studies` -- every figure and analysis that is not a table, as declared studies (``ctx.study``);
  their build functions by concept: :mod:`.label_skew` (Figs. 1, 4, 5), :mod:`.toy` (Fig. 3),
  :mod:`.local_models` (Figs. 2, 6, 7), :mod:`.deviation_study`, :mod:`.calibration` (§4),
  :mod:`.synthetic`, :mod:`.stand_in`; :mod:`.experiments` -- their skew settings and trained global model;
* :mod:`.plots`, :mod:`.result_plots` -- the figures;
* :mod:`.analysis` -- the deviation bound D_jr (Definition 3, Theorems 1 and 3) measured during training
  (:mod:`.statistics`, :mod:`.deviation_bound`, :mod:`.local_update`).

Notebooks: ``notebooks/fedlc/``; outputs: ``figures/fedlc/<profile>/``.
"""

from ...repro.spec.paper import Paper, View
from . import profiles, reported

#: Its notebooks and what each reads (fedlib.repro.spec.paper.View).
VIEWS = (
    View("01_motivation", studies=("fig1", "fig2", "fig3")),
    View("02_deviation_bound", studies=("deviation",)),
    View("03_logit_calibration", studies=("calibration", "calibration_tau", "absent_classes")),
    View("04_label_skew", studies=("fig4",)),
    View("05_federated_datasets", tables=("table4",), studies=("synthetic_alpha",)),
    View("06_real_world_datasets", tables=("table1", "table2", "table3"), studies=("fig5", "stand_in")),
    View("07_analysis", studies=("fig6", "fig7")),
    View("08_ablations", tables=("table5", "table6", "table7")),
    View("09_budget_ladder", ladder=True),
)

PAPER = Paper(
    name="fedlc", title="FedLC (ICML 2022)", citation=reported.PAPER, source="fedlc_icml2022.md",
    tables=reported.TABLES, setup=reported.SETUP, seeds=reported.SEEDS, notes=reported.NOTES,
    method_labels=reported.METHOD_LABELS, method_order=reported.METHOD_ORDER, dataset_labels=reported.DATASET_LABELS,
    unsupported=reported.UNSUPPORTED_DATASETS,
    profiles=profiles.PROFILES, experiments=profiles.EXPERIMENTS, experiment_datasets=profiles.EXPERIMENT_DATASETS,
    model_labels=profiles.MODEL_LABELS, views=VIEWS, headline=("fedlc", "fedavg"))

__all__ = ["PAPER"]

PAPER.check()  # every profile's settings against its tables and studies: a misspelt key fails at import
