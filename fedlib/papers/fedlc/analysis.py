"""FedLC's analysis of the local update as measurable, tested functions (the theory in one place).

FedLC (Zhang et al., ICML 2022) explains why local training on a label-skewed
client biases the classifier, and why calibrated logits help:

* §3, Definition 2 — the classes of a client are split into majority
  ``j ∈ J``, minority ``r ∈ R`` and missing ``s ∈ S`` classes
  (:func:`~.local_update.client_classes`, by
  :mod:`fedlib.repro.spec.class_roles`' ``"max_fraction"`` rule).
* Appendix B, Eq. 9 — one full-batch SGD step of the last layer
  ``f(x) = {w_y^T h}`` under softmax cross-entropy moves ``w_y`` by
  ``Δw_y = η (1 − p̄_y^(y)) h̄^(y) n_y − η Σ_{y'≠y} p̄_y^(y') h̄^(y') n_y'``
  with the per-class means ``h̄^(y)`` and ``p̄_k^(y)``
  (:func:`class_statistics`, :func:`predicted_update_signs`).
* §3, Definition 3 / Eq. 18 — the deviation bound
  ``D_jr = (1 − p̄_r^(r)) ‖h̄^(r)‖² / (p̄_r^(j) h̄^(r)·h̄^(j))``;
  Theorem 1 (proof: Appendix C, Eq. 17) — when ``n_j/n_r ≫ D_jr > 0`` the
  update deviates: ``Δw_r·h̄^(r) < 0`` and ``Δw_j·h̄^(r) > 0``
  (:func:`deviation_bound`, :func:`measured_update`).
* §4, Theorem 3 (proof: Eq. 19–21) — with FedLC's calibrated loss (Eq. 7) the
  bound is computed from calibrated probabilities; written with the paper's
  ``p̃`` it is ``Σ_{y≠r} e^{Δ_(r,y)} p̃̄_y^(r) ‖h̄^(r)‖² / (p̃̄_r^(j) h̄^(r)·h̄^(j))``.
* §5.5 — per-class accuracy before/after a local update (Fig. 2, Fig. 6) and
  the features ``h`` for t-SNE (Fig. 7)
  (:func:`per_class_accuracy_before_after`, :func:`extract_features`).

:func:`deviation_experiment` runs the measurement end to end: real local SGD
(fedlib's engine) on a skewed client with plain CE and with FedLC's loss, and
records, per step, ``n_j/n_r``, ``D_jr`` before and after calibration, the
predicted and the measured ``Δw_r·h̄^(r)``, ``Δw_j·h̄^(r)``.

Conventions (each is also stated where it is used):

* ``p̄`` is a ``[K, K]`` matrix with ``p_bar[y, k] = p̄_k^(y)`` — row ``y`` is
  the mean probability vector over the samples of class ``y``.
* ``Δw = w_after − w_before`` (row ``y`` of ``classifier.weight``).  SGD moves
  ``w ← w − η ∇L``, so for one full-batch step ``Δw = −η ∇_w L``; with
  fedlib's mean-reduced losses that is Eq. 9 divided by ``N = Σ_y n_y``
  (Eq. 9 is written for the summed loss).  ``reduction="sum"`` gives Eq. 9
  literally.  Signs are the same either way.
* Calibration offsets ``o_y`` come from :func:`fedlib.losses.calibration_offsets`
  (``o_y = −τ n_y^(−1/4)`` for FedLC's Eq. 6–7); calibrated logits are
  ``f + o`` and ``Δ_(r,y) = o_y − o_r = τ (n_r^(−1/4) − n_y^(−1/4))``.
* Everything is computed in float64 from the model's features, vectorised over
  samples (no per-sample Python loops); features are accumulated in chunks, so
  2048-d CIFAR features of a whole client fit easily in memory.

What the measurements show (tests/test_fedlc_analysis.py; not the paper's words):

* Theorem 1 holds as stated for ``w_r``: the sign of the full-batch
  ``Δw_r·h̄^(r)`` follows the condition ``n_j/n_r > D_jr`` (it is exactly the
  sign of the two Eq. 17 terms Theorem 1's proof compares, plus the other
  classes' terms).  ``Δw_j·h̄^(r) > 0`` needs ``n_j/n_r ≫ D_jr``: it stops
  once the ratio falls to about 2·D_jr.  Training itself raises ``D_jr``
  (``p̄_r^(j)`` shrinks), so the deviation is strongest in the first steps.
* Theorem 3's "calibration enlarges D_jr" is true at a fixed model whenever
  ``r`` has the smallest offset of all classes in the softmax (the rarest
  class, with ``missing="clamp"`` and no missing class): then
  ``p_r^cal(x) ≤ p_r(x)`` for every ``x``.  It is *not* universal: a minority
  class with rarer classes beside it — in particular any missing class,
  which ``"clamp"`` treats as ``n = 1`` and ``"mask"`` removes from the
  softmax — gains calibrated probability, its ``D_jr`` falls, and FedLC's
  step then deviates *more* than plain CE's.

Two things in the paper's printed formulas are read as typos and implemented
in their evident intended form (the tests check the identities):

* Eq. 9's last line writes ``p̄_{y'}^(y)`` / ``p̄_{y'}^(y')``; Eq. 17 (and the
  line above it in Eq. 9) show it is ``p̄_y^(y)`` / ``p̄_y^(y')``.
* Eq. 21's last expression (and Theorem 3's statement) multiplies by
  ``Δ_(r,y)``; the middle expression of Eq. 21 shows the factor is
  ``e^{−τ n_y^(−1/4)} / e^{−τ n_r^(−1/4)} = e^{Δ_(r,y)}``.  Theorem 3's
  statement also has ``p̃̄_r^(r)`` in the denominator where Eq. 21 has
  ``p̃̄_r^(j)``; Eq. 21 (which follows from Definition 3) is used.


The functions live in three modules, by concept: :mod:`.statistics` (Appendix B's class statistics
and the features), :mod:`.deviation_bound` (Definition 3, Eq. 9/17, Theorems 1 and 3) and
:mod:`.local_update` (the measurements on real local updates); this module gathers them.
"""

from .deviation_bound import (DeviationBound, MeasuredUpdate, UpdatePrediction, deviation_bound, measured_update,
                              predicted_update_signs)
from .local_update import client_classes, deviation_experiment, most_skewed_client, per_class_accuracy_before_after
from .statistics import ClassStatistics, class_statistics, class_statistics_from_features, extract_features

__all__ = [
    "ClassStatistics", "DeviationBound", "UpdatePrediction", "MeasuredUpdate", "class_statistics",
    "class_statistics_from_features", "extract_features", "deviation_bound", "predicted_update_signs",
    "measured_update", "client_classes", "most_skewed_client", "deviation_experiment",
    "per_class_accuracy_before_after",
]
