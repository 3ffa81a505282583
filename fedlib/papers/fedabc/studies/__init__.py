"""FedABC's studies: every figure and analysis that is not Table 1 or 2, declared as data.

``STUDIES`` (read by :attr:`fedlib.repro.spec.paper.Paper.studies`; a notebook runs one with
``ctx.study(name)``); each study's id is its experiment in the profiles (its seeds, overrides and
option values come from the profile's settings of that experiment):

=============  ==========================================================  ==============================
study          what                                                        notebook
=============  ==========================================================  ==============================
``fig2``       Fig. 2 measured: per-class accuracy by role on a skewed      ``01_motivation``
               client (:mod:`.motivation`)
``fig4``       Fig. 4: the clients' label heterogeneity (:mod:`.heterogeneity`)  ``02_heterogeneity``
``fig5``       Fig. 5: ablation, FedABC vs FedABC_wi (:mod:`.ablation`)    ``05_ablation``
``sensitivity``  the four blank hyperparameters on held-out training data  ``06_sensitivity``
               (:mod:`.sensitivity`)
=============  ==========================================================  ==============================

Tables 1 and 2 are :class:`fedlib.repro.spec.reported.PaperTable` s (``ctx.table``); their claims and
gains (:mod:`..experiments`) are read from the table's comparison, not a study of their own.
"""

from __future__ import annotations

from ....repro import Option, Study
from ..deviations import DEFAULTS
from ..experiments import HYPERPARAMETERS
from ..profiles import EXPERIMENT_DATASETS, SENSITIVITY_GRID
from ..reported import BETAS, DATASETS
from . import ablation, heterogeneity, motivation, sensitivity

__all__ = ["STUDIES"]


def _dataset(name: str, default: str, source: str) -> Option:
    return Option(name, default, str, "the paper's dataset (a profile may run a stand-in)", choices=tuple(DATASETS),
                  source=source)


def _beta(default: float, source: str) -> Option:
    return Option("beta", default, float, "Dir(β) of Table 1's partition", check=lambda b: float(b) in BETAS,
                  allowed="one of Table 1's Dir(β): " + ", ".join(f"{b:g}" for b in BETAS), source=source)


def _datasets(default: tuple, source: str) -> Option:
    return Option("datasets", default, tuple, "the paper's datasets", source=source,
                  check=lambda v: len(v) > 0 and set(v) <= set(DATASETS),
                  allowed="a non-empty tuple of " + ", ".join(DATASETS))


def _betas(source: str) -> Option:
    return Option("betas", BETAS, tuple, "the Dir(β) values", source=source,
                  check=lambda v: len(v) > 0 and all(not isinstance(b, bool) and b in BETAS for b in v),
                  allowed="a non-empty tuple of Table 1's Dir(β): " + ", ".join(f"{b:g}" for b in BETAS))


def _setting(v) -> bool:
    return set(v) <= set(HYPERPARAMETERS) and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                   for x in v.values())


def _grid(v) -> bool:
    return set(v) <= set(HYPERPARAMETERS) and all(
        isinstance(xs, (tuple, list)) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
        for xs in v.values())


_HYPER = ", ".join(HYPERPARAMETERS)


def _declare(experiment: str, title: str, module, **fields) -> Study:
    """A study whose build functions are ``module``'s ``build_cells``, ``build_summary`` and
    ``build_findings`` (those it defines)."""
    steps = {step: getattr(module, step) for step in ("build_cells", "build_summary", "build_findings")
             if hasattr(module, step)}
    return Study(experiment, title, **steps, **fields)


FIG2 = _declare(
    "fig2", "Fig. 2 (measured): per-class accuracy of softmax + CE vs one-vs-all on a skewed client",
    motivation,
    options=(_dataset("dataset", "mnist", "fedlib's choice: Fig. 2 is a schematic; measured on Table 1's MNIST"),
             _beta(0.3, "fedlib's choice: Table 1's middle heterogeneity"),
             Option("local_epochs", None, int, "epochs of the client's local training (None: Table 1's E)",
                    check=lambda e: e >= 1, allowed="≥ 1 or None", optional=True, source="fedlib's choice")),
    doc="The client alone and its personalized model in Table 1's FedAvg and FedABC runs.")

FIG4 = _declare(
    "fig4", "Fig. 4: the clients' label heterogeneity, class × client bubbles per Dir(β)",
    heterogeneity, build_cells=lambda profile, opts: [], trains=False,
    options=(_datasets(EXPERIMENT_DATASETS["fig4"], "paper §Experiments, Setup (Fig. 4: MNIST and CIFAR-10)"),
             _betas("paper §Experiments, Setup")),
    doc="The partitions of Table 1's runs under the profile; nothing trains.")

FIG5 = _declare(
    "fig5", "Fig. 5: ablation, FedABC vs FedABC_wi (no under-sampling, no hard-sample mining)", ablation,
    options=(_datasets(EXPERIMENT_DATASETS["fig5"], "paper §Ablation study (CIFAR-10)"),
             _betas("paper §Ablation study (the four Dir(α))")),
    doc="FedABC's bars are Table 1's cells; FedABC_wi changes only the four hyperparameters.")

SENSITIVITY = _declare(
    "sensitivity", "FedABC's four hyperparameters on held-out local training data, one at a time",
    sensitivity,
    options=(_dataset("dataset", "mnist", "fedlib's choice (the notes: one dataset and one Dir(α))"),
             _beta(0.3, "fedlib's choice (the notes: one dataset and one Dir(α))"),
             Option("validation_fraction", 0.2, float, "share of every client's training samples of each class "
                    "held out for validation", check=lambda f: 0 < f < 1, allowed="in (0, 1)",
                    source="fedlib's choice"),
             Option("center", dict(DEFAULTS), dict, "the setting the others vary around", check=_setting,
                    allowed=f"a mapping of {_HYPER} to numbers",
                    source="fedlib's defaults: the middle of the notes' grids, γ = 2 from focal loss (notes §1)"),
             Option("grid", dict(SENSITIVITY_GRID), dict, "the values of each hyperparameter", check=_grid,
                    allowed=f"a mapping of {_HYPER} to tuples of numbers", source="the notes' grids (notes §1)")),
    doc="Not in the paper: no test set is used, so the profiles' setting (deviations.TUNED) is not tuned on it.")

STUDIES = (FIG2, FIG4, FIG5, SENSITIVITY)
