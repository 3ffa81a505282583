"""FedLC's studies: every figure and analysis of the companion that is not one of the paper's tables.

Each :class:`fedlib.repro.spec.study.Study` names its experiment (the profiles' settings key, see
:data:`.profiles.EXPERIMENTS`), its typed options (default: the ``paper`` profile's value; a
profile's setting of the same name overrides it, a notebook's keyword overrides both) and its
build functions, which live in the module of their concept.  A notebook runs one with
``ctx.study("<name>")`` and shows or saves its summary.  Tables 1-7 are
:class:`fedlib.repro.spec.reported.PaperTable` s (``ctx.table``); the ablations of §5.6 are Tables 5-7.

=================  ============================================  ===========================
study              what                                          notebook
=================  ============================================  ===========================
fig1               Fig. 1: FedAvg under IID, Q(α), D(β)          01_motivation
fig2               Fig. 2: per-class accuracy around a local      01_motivation
                   update, by class role
fig3               Fig. 3 measured: the two-client toy            01_motivation
deviation          §3-4: the deviation bound D_jr, Theorems 1, 3  02_deviation_bound
calibration        §4: FedLC's loss variants                      03_logit_calibration
calibration_tau    §4: τ sensitivity                              03_logit_calibration
absent_classes     §4: classes with n_y = 0, each reading         03_logit_calibration
fig4               Fig. 4: Q(α=4), D(β=0.5) partitions            04_label_skew
synthetic_alpha    Synthetic(α, β): does α change the data?       05_federated_datasets
fig5               Fig. 5: accuracy per round, FedLC vs FedRS     06_real_world_datasets
stand_in           Tables 1-2's effects on CIFAR-10 itself        06_real_world_datasets
fig6               Fig. 6: per-class accuracy around aggregation  07_analysis
fig7               Fig. 7: t-SNE of missing/minority/majority     07_analysis
=================  ============================================  ===========================
"""

from __future__ import annotations

from ...repro.spec.study import Option, Study
from . import absent_classes as A
from . import calibration as C
from . import deviation_study as D
from . import label_skew as S
from . import local_models as M
from . import stand_in as SI
from . import synthetic as Y
from . import toy as T
from .experiments import skew_params

__all__ = ["STUDIES"]


def _settings(keys) -> bool:
    try:
        return all(isinstance(k, str) and skew_params(k) for k in keys)
    except ValueError:
        return False


def _positive(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in values)


def _non_negative(values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 for v in values)


_SETTINGS = "skew keys such as 'cifar10_beta0.1', 'cifar10_alpha2', 'cifar10_iid'"
_BETA = "a Dirichlet β > 0"


def _global_model(rounds_name: str, rounds: int, num_clients: int, beta: float, source: str) -> tuple[Option, ...]:
    """The options of an analysis study's FedAvg global model."""
    return (
        Option("dataset", "cifar10", str, "the dataset of the global model (the profile may substitute it)",
               source="paper " + source),
        Option("num_clients", num_clients, int, "clients of the global model", check=lambda v: v >= 1,
               allowed="≥ 1", source=f"paper {source}" if num_clients == 20 else "fedlib's choice"),
        Option("partition_beta", beta, float, "its D(β) skew (the paper does not state the partition)",
               check=lambda v: v > 0, allowed=_BETA, source="fedlib's choice"),
        Option(rounds_name, rounds, int, "FedAvg rounds of the global model", check=lambda v: v >= 1,
               allowed="≥ 1", source="paper §5.2 (400 rounds)" if rounds == 400 else "fedlib's choice"),
    )


STUDIES = (
    Study("fig1", "Fig. 1: FedAvg under IID, Q(α) and D(β) skews", S.fig1_cells, S.fig1_summary, S.fig1_findings,
          options=(Option("iid", True, bool, "run the IID reference", source="paper Fig. 1"),
                   Option("alphas", (2, 4, 6, 8), tuple, "the α of Q(α)", check=_positive, allowed="integers ≥ 1",
                          source="paper Fig. 1"),
                   Option("betas", (0.05, 0.1, 0.2, 0.3, 0.5), tuple, "the β of D(β)", check=_positive,
                          allowed="numbers > 0", source="paper Fig. 1"))),
    Study("fig2", "Fig. 2: per-class accuracy before/after the local update vs class size",
          M.global_model_cells("fig2"), M.fig2_summary, M.fig2_findings,
          options=_global_model("rounds", 400, 5, 0.5, "Fig. 2 (five clients)")),
    Study("fig3", "Fig. 3 measured: two clients with opposite label skew", lambda profile, opts: [],
          T.toy_summary, T.toy_findings, trains=False,
          options=(Option("points_per_class", 400, int, "training points per majority class (a tenth per minority "
                          "class)", check=lambda v: v >= 20, allowed="≥ 20", source="fedlib's choice"),
                   Option("local_steps", 100, int, "full-batch gradient steps per local update",
                          check=lambda v: v >= 1, allowed="≥ 1", source="fedlib's choice"),
                   Option("rounds", 50, int, "FedAvg rounds", check=lambda v: v >= 1, allowed="≥ 1",
                          source="fedlib's choice"),
                   Option("std", 1.5, float, "std of each Gaussian class", check=lambda v: v > 0, allowed="> 0",
                          source="fedlib's choice"),
                   Option("tau", 3.0, float, "FedLC's τ (Eq. 7)", check=lambda v: v >= 0, allowed="≥ 0",
                          source="fedlib's choice"),
                   Option("lr", 0.5, float, "learning rate", check=lambda v: v > 0, allowed="> 0",
                          source="fedlib's choice"),
                   Option("seed", 0, int, "the points' seed", source="fedlib's choice"))),
    Study("deviation", "§3-4: the deviation bound D_jr and the update signs (Definition 3, Theorems 1 and 3)",
          M.global_model_cells("deviation"), D.deviation_summary, D.deviation_findings,
          options=_global_model("pretrain_rounds", 50, 20, 0.1, "§5.2 (20 clients)") + (
              Option("epochs", 1, int, "local epochs measured", check=lambda v: v >= 1, allowed="≥ 1",
                     source="fedlib's choice"),
              Option("max_steps", None, int, "at most this many local steps (None: all)", check=lambda v: v >= 1,
                     allowed="≥ 1 or None", optional=True, source="fedlib's choice"))),
    Study("calibration", "§4: FedLC's loss variants beside FedAvg and FedRS", C.variant_cells, C.variant_summary,
          C.variant_findings,
          options=(Option("settings", ("cifar10_alpha2", "cifar10_beta0.1", "cifar10_beta0.5"), tuple,
                          "the skew settings", check=_settings, allowed=_SETTINGS, source="fedlib's choice"),
                   Option("variants", tuple(C.CALIBRATION_VARIANTS), tuple, "FedLC's loss variants",
                          check=lambda v: set(v) <= set(C.CALIBRATION_VARIANTS),
                          allowed="names of CALIBRATION_VARIANTS", source="paper Eq. 5-7 (fedlib's readings)"))),
    Study("calibration", "§4: sensitivity of FedLC to τ", C.tau_cells, C.tau_summary, C.tau_findings,
          name="calibration_tau",
          options=(Option("taus", (0.1, 0.3, 1.0, 3.0, 10.0), tuple, "the τ values (the paper gives none)",
                          check=_non_negative, allowed="numbers ≥ 0", source="fedlib's choice"),
                   Option("tau_setting", "cifar10_beta0.1", str, "the skew setting of the sweep",
                          check=lambda v: _settings([v]), allowed=_SETTINGS, source="fedlib's choice"),
                   Option("tau_variants", ("standard", "log_prior"), tuple, "the variants swept (full softmax)",
                          check=lambda v: set(v) <= set(C.CALIBRATION_VARIANTS),
                          allowed="names of CALIBRATION_VARIANTS", source="fedlib's choice"))),
    Study("calibration", "§4: classes a client lacks (n_y = 0) in FedLC's loss, each reading beside FedAvg",
          A.absent_cells, C.variant_summary, A.absent_findings, name="absent_classes",
          doc="Eq. 7 with n_y = 0: masked out of the softmax (the literal reading, and Flower's FedLC baseline, "
              "fluke and FedDecorr; it faces the paper), n_y := 1e-8 (FL-bench), n_y := 1 (fedlib's default, the "
              "tables' FedLC); PFLlib's counts over all clients make FedLC FedAvg on balanced data.",
          options=(Option("settings", ("cifar10_alpha2", "cifar10_beta0.1", "cifar10_beta0.5"), tuple,
                          "the skew settings (the calibration study's)", check=_settings, allowed=_SETTINGS,
                          source="fedlib's choice"),
                   Option("readings", tuple(A.READINGS), tuple, "the readings of n_y = 0",
                          check=lambda v: len(v) >= 1 and set(v) <= set(A.READINGS),
                          allowed="names of absent_classes.READINGS",
                          source="paper Eq. 7 and Def. 2; Flower, fluke, FedDecorr, FL-bench (issue 35)"))),
    Study("fig4", "Fig. 4: Q(α=4) and D(β=0.5) partitions of CIFAR-10 on 5 clients", lambda profile, opts: [],
          S.fig4_summary, trains=False,
          options=(Option("seed", 0, int, "the partition seed (the notebook passes the profile's first)",
                          source="fedlib's choice"),)),
    Study("synthetic_alpha", "Synthetic(α, β): does α change the data?", lambda profile, opts: [],
          Y.synthetic_alpha_summary, Y.synthetic_alpha_findings, trains=False,
          options=(Option("alphas", (0.0, 0.5, 1.0), tuple, "FedProx's α (the first is the reference)",
                          check=lambda v: len(v) >= 1 and _non_negative(v), allowed="numbers ≥ 0",
                          source="paper §5.3 (Synthetic(0,0), (0.5,0.5), (1,1))"),
                   Option("betas", (0.0, 0.5, 1.0), tuple, "FedProx's β", check=_non_negative,
                          allowed="numbers ≥ 0", source="paper §5.3"),
                   Option("num_clients", 100, int, "clients", check=lambda v: v >= 1, allowed="≥ 1",
                          source="paper §5.3"),
                   Option("seed", 0, int, "the generator's seed", source="fedlib's choice"))),
    Study("fig5", "Fig. 5: accuracy per round, FedLC vs FedRS", S.fig5_cells, S.fig5_summary, S.fig5_findings,
          options=(Option("settings", ("cifar10_alpha2", "cifar10_alpha4", "cifar10_beta0.1", "cifar10_beta0.3"),
                          tuple, "the skew settings (the paper: ImageNet-subset)", check=_settings,
                          allowed=_SETTINGS, source="fedlib's choice"),
                   Option("num_clients", 40, int, "clients", check=lambda v: v >= 1, allowed="≥ 1",
                          source="paper Fig. 5"))),
    Study("stand_in", "Stand-in check: Tables 1-2's CIFAR-10 cells on CIFAR-10 itself", SI.stand_in_cells,
          SI.stand_in_summary, SI.stand_in_study_findings,
          options=(Option("settings", (), tuple, "Tables 1-2's CIFAR-10 columns (and 'cifar10_iid', Fig. 1)",
                          check=_settings, allowed=_SETTINGS, source="fedlib's choice"),
                   Option("methods", ("fedavg", "fedlc"), tuple, "the methods", source="fedlib's choice"))),
    Study("fig6", "Fig. 6: per-class accuracy before/after aggregation, FedAvg vs FedLC",
          M.global_model_cells("fig6"), M.fig6_summary, M.fig6_findings,
          options=_global_model("rounds", 400, 20, 0.1, "§5.2 (20 clients)")),
    Study("fig7", "Fig. 7: t-SNE of missing / minority / majority classes", M.global_model_cells("fig7"),
          M.fig7_summary, M.fig7_findings,
          options=_global_model("rounds", 400, 20, 0.1, "§5.2 (20 clients)") + (
              Option("tsne_samples", 300, int, "test samples per class embedded", check=lambda v: v >= 3,
                     allowed="≥ 3", source="fedlib's choice"),)),
)
