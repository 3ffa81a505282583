"""FedConcat's studies: every figure and analysis of the companion that is not one of the paper's
tables (those are :data:`.reported.TABLE1`-3, run by ``ctx.table``), declared as data and run by
``ctx.study(name)`` (:class:`fedlib.repro.spec.study.Study`).

=====================  =========================  ======================================
study                  notebook                   what it measures
=====================  =========================  ======================================
``fig1``               01_motivation              Fig. 1: two local models and their average
``budget_rounds``      03_communication_budget    the baselines' round budget, by stage
``budget``             03_communication_budget    Table 1 read at other round budgets
``fedlc_third_party``  04_fedlc_third_party       FedLC − FedAvg by source
``clusters``           05_clustering              the clusters of Table 1's runs
``fig3``               05_clustering              Fig. 3: with vs without clustering
``fig4``               06_final_architecture      Fig. 4: the baselines on the final architecture
=====================  =========================  ======================================

Tables 2 and 3 (notebooks 07 and 08) are paper tables; the budget ladder (09) is
:data:`.budget.LADDER`.  A study's ``id`` is its experiment (the profiles' settings key); its
options are read from the profile's settings of that experiment, then from ``ctx.study``'s keywords.
A study's ``doc`` is the caption of the table it saves (``ctx.save_study``).
"""

from __future__ import annotations

from . import clusters, fig1, final_architecture, reported, round_budget, third_party
from .cells import BASELINES
from .profiles import BUDGET_VARIANTS
from ...repro.spec.study import Option, Study

__all__ = ["STUDIES"]

_COLUMNS = tuple(c.key for c in reported.TABLE1.columns)
_FIG = "fedlib's choice (the figure does not state it)"


def _columns(default: tuple = _COLUMNS, doc: str = "Table 1 columns") -> Option:
    return Option("columns", default, tuple, doc, check=lambda v: set(v) <= set(_COLUMNS),
                  allowed="Table 1 column keys (" + ", ".join(_COLUMNS) + ")", source="fedlib's choice (the profile's)")


FIG1 = Study(
    "fig1", "Fig. 1: test accuracy (%) of the local models and their average", trains=False,
    build_cells=list, build_summary=fig1._summary, build_findings=fig1._findings,
    options=(Option("column", "cifar10_c2", str, "the Table 1 partition the two clients come from",
                    check=lambda v: v in _COLUMNS, allowed="a Table 1 column key",
                    source="paper Fig. 1 (label skew; the setting is not stated: CIFAR-10 #C=2, fedlib's choice)"),
             Option("local_epochs", reported.SETUP["local_epochs"], int, "E: local epochs of each client",
                    check=lambda v: v >= 1, allowed="an integer ≥ 1", source="paper §Experiments (E = 10)"),
             Option("seed", None, int, "the seed of the partition and the initial model (None: the profile's first)",
                    optional=True, check=lambda v: v >= 0, allowed="an integer ≥ 0 or None", source=_FIG)),
    doc="Two clients of a Table 1 partition with the least overlapping classes train E local epochs from the same "
        "initial model; their n_k-weighted average is FedAvg's first round (the saved table's caption names them).")

BUDGET_ROUNDS = Study(
    "budget", "The baselines' round budget: FedConcat's communication per client in rounds of one cluster model",
    name="budget_rounds", trains=False, build_cells=list, build_summary=round_budget._rounds_summary,
    build_findings=round_budget._rounds_findings,
    options=(Option("datasets", ("fmnist", "cifar10", "svhn"), tuple, "datasets of the simple CNN",
                    check=lambda v: set(v) <= {"fmnist", "cifar10", "svhn"}, allowed="among fmnist, cifar10, svhn",
                    source="paper Table 1"),),
    doc="stage 2 = T_e; broadcast = K·|E|/(2M); stage 3 = T_c·|C|/M; R = the total, rounded. Parameter counts of "
        "fedlib's simple CNN (notes/fedconcat.md §1a).")

BUDGET = Study(
    "budget", "Table 1 under other round budgets: FedConcat's rank and its margin over the best baseline",
    build_cells=round_budget._cells, build_summary=round_budget._summary, build_findings=round_budget._findings,
    options=(_columns(doc="Table 1 columns read at other budgets (where FedAvg's cell runs)"),
             Option("variants", tuple(BUDGET_VARIANTS), tuple, "ways of counting 'same communication cost' "
                    "(the first is the default)", check=lambda v: len(v) >= 1 and set(v) <= set(BUDGET_VARIANTS),
                    allowed="one or more of " + ", ".join(map(repr, BUDGET_VARIANTS)),
                    source="fedlib's choice (the paper states no number: notes/fedconcat.md §2)")),
    doc="R per way of counting; baselines read at round R of their run (not measured beyond it); FedConcat and "
        "FedConcat-ID at their end. Rank 1 = best of the methods measured.")

FEDLC_THIRD_PARTY = Study(
    "fedlc_third_party", "FedLC − FedAvg (pp): the FedLC paper, FedConcat's Table 1, and ours",
    build_cells=third_party._cells, build_summary=third_party._summary, build_findings=third_party._findings,
    options=(_columns(doc="Table 1 columns whose runs give our FedLC − FedAvg"),
             Option("figures_root", None, str, "a figures folder whose fedlc/<profile>/ is read before the "
                    "repository's (the FedLC companion's outputs beside ours)", optional=True, source="fedlib's choice")),
    doc="FedLC paper: its Tables 1-2 (20 clients, 400 rounds) at the equivalent skew; FedConcat Table 1: 40 "
        "clients, FedConcat's budget; ours: this profile's Table 1 runs")

CLUSTERS = Study(
    "clusters", "The clusters: sizes, spread, and FedConcat-ID against K-means on the true distributions",
    build_cells=clusters._cluster_cells, build_summary=clusters._cluster_summary,
    build_findings=clusters._cluster_findings,
    options=(_columns(doc="Table 1 columns whose FedConcat(-ID) runs are shown"),
             Option("methods", ("fedconcat", "fedconcat_id"), tuple, "the methods whose clusters are shown",
                    check=lambda v: len(v) >= 1 and set(v) <= {"fedconcat", "fedconcat_id"},
                    allowed="fedconcat and/or fedconcat_id", source="paper (Eq. 2 and Eq. 3)")),
    doc="within-cluster L1: mean over clusters of the mean L1 distance of a member's true label distribution to "
        "its cluster's mean; ARI: adjusted Rand index against FedConcat's clusters.")

FIG3 = Study(
    "fig3", "Fig. 3: final accuracy (%) with and without clustering",
    build_cells=clusters._fig3_cells, build_summary=clusters._fig3_summary, build_findings=clusters._fig3_findings,
    options=(_columns(default=tuple(c for c in _COLUMNS if c.startswith("cifar10")),
                      doc="Table 1 columns of Fig. 3 (the paper: CIFAR-10, 40 clients, partition not stated)"),),
    doc="The within-cluster L1 spread of the random groups' true label distributions is in the last column "
        "(compare with the K-means clusters' in the clusters table).")

FIG4 = Study(
    "fig4", "Fig. 4: final accuracy (%) of the baselines on one cluster model and on FedConcat's final architecture",
    build_cells=final_architecture._cells, build_summary=final_architecture._summary,
    build_findings=final_architecture._findings,
    options=(Option("column", "cifar10_c2", str, "the Table 1 column", check=lambda v: v in _COLUMNS,
                    allowed="a Table 1 column key", source="paper Fig. 4 (CIFAR-10, 40 clients, #C=2)"),
             Option("model", "concat5_simple_cnn", str, "FedConcat's final architecture as a model",
                    check=lambda v: v.startswith("concat"), allowed="a concatenated model (concat<K>_<model>)",
                    source="paper Fig. 4 (K = 5 simple-CNN encoders and one linear layer)"),
             Option("budget", "rounds", str, "the baselines' rounds on it: 'rounds' (Table 1's R) or "
                    "'communication' (FedConcat's communication in rounds of the bigger model)",
                    choices=("rounds", "communication"), source=_FIG),
             Option("methods", BASELINES, tuple, "the baselines",
                    check=lambda v: len(v) >= 1 and set(v) <= set(BASELINES),
                    allowed="among " + ", ".join(BASELINES), source="paper Fig. 4")),
    doc="")

STUDIES = (FIG1, BUDGET_ROUNDS, BUDGET, FEDLC_THIRD_PARTY, CLUSTERS, FIG3, FIG4)
