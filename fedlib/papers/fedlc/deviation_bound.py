"""The deviation bound D_jr (Definition 3, Theorem 3) and the update signs of Theorem 1.

* :func:`deviation_bound` -- ``D_jr`` from :class:`~.statistics.ClassStatistics`, before and after
  calibration (Definition 3, Eq. 18, Eq. 21);
* :func:`predicted_update_signs` -- Eq. 9 / Eq. 17's ``Δw_r·h̄^(r)`` and ``Δw_j·h̄^(r)``;
* :func:`measured_update` -- the same from a real update's change of the classifier weights.

The conventions and the two printed typos read in their intended form are listed in :mod:`.analysis`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np
import torch
from torch import Tensor

from .statistics import WEIGHT_KEY, ClassStatistics, _as_counts

__all__ = ["DeviationBound", "UpdatePrediction", "MeasuredUpdate", "deviation_bound", "predicted_update_signs",
           "measured_update"]


# ----------------------------------------------------------------------------- deviation bound
@dataclass
class DeviationBound:
    """``D_jr`` of Definition 3 for one (majority ``j``, minority ``r``) pair.

    Attributes:
        d_jr: Definition 3, ratio form
            ``(1 − p̄_r^(r)) ‖h̄^(r)‖² / (p̄_r^(j) h̄^(r)·h̄^(j))`` with the
            statistics' probabilities — calibrated ones when ``tau > 0``, which
            makes it the bound after calibration (Eq. 21, first expression).
        d_jr_sum: Definition 3, sum form
            ``Σ_{y≠r} p̄_y^(r) ‖h̄^(r)‖² / (p̄_r^(j) h̄^(r)·h̄^(j))`` (equal by Eq. 18).
        d_jr_theorem3: Theorem 3 / Eq. 21 with ``p̃`` and ``e^{Δ_(r,y)}``:
            ``Σ_{y≠r} e^{Δ_(r,y)} p̃̄_y^(r) ‖h̄^(r)‖² / (p̃̄_r^(j) h̄^(r)·h̄^(j))``
            (equal to ``d_jr`` by Eq. 19–20; equal to the plain bound at τ = 0).
        d_jr_plain: Definition 3 with plain ``p = softmax(f)`` (before calibration).
        numerator, denominator: of ``d_jr``; ``h_dot = h̄^(r)·h̄^(j)``.
        valid: ``denominator > 0`` and ``d_jr > 0`` and finite — the
            ``D_jr > 0`` assumption of Theorems 1 and 3.

    Non-positive denominator: if ``h̄^(r)·h̄^(j) < 0`` the bound is returned
    *signed* (negative) with ``valid=False``.  Then the class-``j`` term of
    ``Δw_r·h̄^(r)`` in Eq. 17, ``−η p̄_r^(j) h̄^(j)·h̄^(r) n_j``, is positive, so
    class ``j`` pushes ``w_r`` in the expected direction and Theorem 1 predicts
    no deviation from it however large ``n_j/n_r`` is.  A zero denominator
    (``h̄^(r) ⟂ h̄^(j)`` or ``p̄_r^(j) = 0``) gives NaN and ``valid=False``.
    """

    j: int
    r: int
    tau: float
    d_jr: float
    d_jr_sum: float
    d_jr_theorem3: float
    d_jr_plain: float
    numerator: float
    denominator: float
    h_dot: float
    valid: bool

    def as_dict(self) -> dict:
        return asdict(self)


def _signed_ratio(num: float, den: float) -> float:
    return num / den if den != 0 and math.isfinite(den) else math.nan


def _check_pair(stats: ClassStatistics, j: int, r: int) -> tuple[int, int]:
    K = stats.num_classes
    for name, c in (("j", j), ("r", r)):
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 0 <= c < K:
            raise ValueError(f"{name} must be a class index in [0, {K}), got {c!r}")
    if j == r:
        raise ValueError(f"j and r must differ, got j = r = {j}")
    for name, c in (("j", j), ("r", r)):
        if stats.counts[c] <= 0:
            raise ValueError(f"class {name}={c} has no samples in these statistics: h̄^({c}) is undefined")
    return int(j), int(r)


def deviation_bound(stats: ClassStatistics, j: int, r: int) -> DeviationBound:
    """``D_jr`` (Definition 3; Theorem 3 after calibration) — see :class:`DeviationBound`.

    With statistics computed at ``τ = 0`` all of ``d_jr``, ``d_jr_sum``,
    ``d_jr_theorem3``, ``d_jr_plain`` coincide; at ``τ > 0`` the first three
    are the bound after calibration and ``d_jr_plain`` the one before.
    """
    j, r = _check_pair(stats, j, r)
    hr, hj = stats.h_bar[r], stats.h_bar[j]
    hr_sq = float(hr @ hr)  # ‖h̄^(r)‖²
    h_dot = float(hr @ hj)  # h̄^(r)·h̄^(j)
    not_r = torch.arange(stats.num_classes) != r

    def ratio_form(p_bar: Tensor) -> tuple[float, float]:
        num = (1.0 - float(p_bar[r, r])) * hr_sq  # (1 − p̄_r^(r)) ‖h̄^(r)‖²  (Def. 3)
        den = float(p_bar[j, r]) * h_dot  # p̄_r^(j) h̄^(r)·h̄^(j)  (Def. 3)
        return num, den

    num, den = ratio_form(stats.p_bar)
    d_jr = _signed_ratio(num, den)
    # Eq. 18: 1 − p̄_r^(r) = Σ_{y≠r} p̄_y^(r)
    d_sum = _signed_ratio(float(stats.p_bar[r, not_r].sum()) * hr_sq, den)
    exp_margin = stats.margins()[r].exp()  # e^{Δ_(r,y)} = e^{−τ n_y^(−1/4)} / e^{−τ n_r^(−1/4)}  (Eq. 21)
    # Eq. 21 numerator: Σ_{y≠r} e^{Δ_(r,y)} p̃̄_y^(r) ‖h̄^(r)‖²
    num3 = float((exp_margin[not_r] * stats.p_tilde_bar[r, not_r]).sum()) * hr_sq
    d_thm3 = _signed_ratio(num3, float(stats.p_tilde_bar[j, r]) * h_dot)  # ÷ p̃̄_r^(j) h̄^(r)·h̄^(j)  (Eq. 21)
    d_plain = _signed_ratio(*ratio_form(stats.p_plain_bar))  # Def. 3 before calibration
    valid = bool(den > 0 and math.isfinite(d_jr) and d_jr > 0)
    return DeviationBound(j, r, stats.tau, d_jr, d_sum, d_thm3, d_plain, num, den, h_dot, valid)


# ----------------------------------------------------------------------------- Eq. 9 / 17
class _DeviationSigns:
    """Theorem 1's deviations, for anything with ``wr_hr`` and ``wj_hr``."""

    @property
    def deviation_r(self) -> bool:
        """Theorem 1's deviation for ``w_r``: ``Δw_r·h̄^(r) < 0``."""
        return self.wr_hr < 0

    @property
    def deviation_j(self) -> bool:
        """Theorem 1's deviation for ``w_j``: ``Δw_j·h̄^(r) > 0``."""
        return self.wj_hr > 0


@dataclass
class UpdatePrediction(_DeviationSigns):
    """Eq. 17's prediction of ``Δw_r·h̄^(r)`` and ``Δw_j·h̄^(r)`` for one step.

    Attributes:
        wr_hr, wj_hr: Eq. 17 — Eq. 9 after Property 1 (``mean(p_k h) ≈ p̄_k h̄``),
            full sums over all classes.
        wr_hr_exact, wj_hr_exact: Eq. 9's first line (no approximation) — the
            exact ``−η∇_{w}L`` of one full-batch step on the statistics' samples.
        terms_r: the per-class terms of ``Δw_r·h̄^(r)`` (Eq. 17, first line):
            ``terms_r[r] = η(1 − p̄_r^(r)) ‖h̄^(r)‖² n_r`` and, for ``k ≠ r``,
            ``terms_r[k] = −η p̄_r^(k) h̄^(k)·h̄^(r) n_k``; ``Σ terms_r = wr_hr``.
        terms_j: the same for ``Δw_j·h̄^(r)`` (Eq. 17, second line):
            ``terms_j[j] = η(1 − p̄_j^(j)) h̄^(j)·h̄^(r) n_j``,
            ``terms_j[k] = −η p̄_j^(k) h̄^(k)·h̄^(r) n_k``.
        pair_r: ``terms_r[r] + terms_r[j]`` — the two terms Theorem 1's proof
            compares; negative iff ``n_j/n_r > D_jr`` (for ``h̄^(r)·h̄^(j) > 0``).
        pair_j: ``terms_j[j] + terms_j[r]``.
    All values are multiplied by ``η`` and, for ``reduction="mean"``, divided
    by ``N = Σ_y n_y`` (fedlib's losses average over the batch).
    """

    j: int
    r: int
    lr: float
    reduction: str
    wr_hr: float
    wj_hr: float
    wr_hr_exact: float
    wj_hr_exact: float
    pair_r: float
    pair_j: float
    terms_r: np.ndarray = field(repr=False)
    terms_j: np.ndarray = field(repr=False)


def predicted_update_signs(stats: ClassStatistics, class_counts, lr: float, j: int, r: int, *,
                           reduction: str = "mean") -> UpdatePrediction:
    """Eq. 9 / Eq. 17: the predicted ``Δw_r·h̄^(r)`` and ``Δw_j·h̄^(r)``.

    ``Δw_y = η (1 − p̄_y^(y)) h̄^(y) n_y − η Σ_{y'≠y} p̄_y^(y') h̄^(y') n_{y'}``
    (Eq. 9) with the statistics' probabilities: for statistics at ``τ > 0``
    this is the update of FedLC's calibrated loss (its gradient has the same
    form with calibrated ``p``); use ``stats.plain()`` for plain CE.

    Args:
        stats: :func:`class_statistics` of the model *before* the step.
        class_counts: the ``n_y`` of Eq. 9 (samples per class in the full
            batch); ``None`` uses ``stats.counts``.  The exact form always
            uses the statistics' own samples.
        lr: ``η``; pass ``η·S`` to predict ``S`` steps from one set of statistics.
        j, r: the majority and the minority class.
        reduction: ``"mean"`` (default; one step of fedlib's mean-reduced loss
            on the full batch: Eq. 9 divided by ``N = Σ_y n_y``) or ``"sum"``
            (Eq. 9 literally).
    """
    if reduction not in ("mean", "sum"):
        raise ValueError(f"reduction must be 'mean' or 'sum', got {reduction!r}")
    j, r = _check_pair(stats, j, r)
    K = stats.num_classes
    n = stats.counts if class_counts is None else _as_counts(class_counts, K)
    total = float(n.sum())
    scale = float(lr) / total if reduction == "mean" else float(lr)
    h_bar = torch.nan_to_num(stats.h_bar, nan=0.0)  # a class with n_y = 0 contributes nothing
    hr = h_bar[r]
    dots = h_bar @ hr  # h̄^(k)·h̄^(r), [K]
    # Eq. 17, first line: η(1 − p̄_r^(r)) h̄^(r)·h̄^(r) n_r − η Σ_{k≠r} p̄_r^(k) h̄^(k)·h̄^(r) n_k
    terms_r = -stats.p_bar[:, r] * dots * n
    terms_r[r] = (1.0 - stats.p_bar[r, r]) * dots[r] * n[r]
    # Eq. 17, second line: η(1 − p̄_j^(j)) h̄^(j)·h̄^(r) n_j − η Σ_{k≠j} p̄_j^(k) h̄^(k)·h̄^(r) n_k
    terms_j = -stats.p_bar[:, j] * dots * n
    terms_j[j] = (1.0 - stats.p_bar[j, j]) * dots[j] * n[j]
    terms_r, terms_j = torch.nan_to_num(terms_r * scale), torch.nan_to_num(terms_j * scale)
    # Eq. 9, first line (exact): Δw_y = η Σ_i (1[y_i=y] − p_y(x_i)) h(x_i) = η N · neg_grad_w[y]
    exact_scale = float(lr) if reduction == "mean" else float(lr) * stats.num_samples
    exact = exact_scale * (stats.neg_grad_w @ hr)
    return UpdatePrediction(
        j=j, r=r, lr=float(lr), reduction=reduction,
        wr_hr=float(terms_r.sum()), wj_hr=float(terms_j.sum()),
        wr_hr_exact=float(exact[r]), wj_hr_exact=float(exact[j]),
        pair_r=float(terms_r[r] + terms_r[j]), pair_j=float(terms_j[j] + terms_j[r]),
        terms_r=terms_r.numpy(), terms_j=terms_j.numpy())


@dataclass
class MeasuredUpdate(_DeviationSigns):
    """The actual ``Δw_r·h̄^(r)``, ``Δw_j·h̄^(r)`` of a real update.

    ``Δw_y`` = row ``y`` of ``classifier.weight`` after − before (so one SGD step
    gives ``Δw = −η∇_w L``, the sign convention of Eq. 9); ``h̄^(r)`` is taken from
    the statistics before the update.  ``dw_hr[k] = Δw_k·h̄^(r)`` for every class.
    """

    j: int
    r: int
    wr_hr: float
    wj_hr: float
    dw_hr: np.ndarray = field(repr=False)


def measured_update(params_before: dict, params_after: dict, stats_before: ClassStatistics, j: int, r: int, *,
                    weight_key: str = WEIGHT_KEY) -> MeasuredUpdate:
    """``Δw_r·h̄^(r)`` and ``Δw_j·h̄^(r)`` from the classifier weights' change.

    ``Δw = params_after[weight_key] − params_before[weight_key]`` (rows are the
    ``w_y``); ``h̄^(r)`` is ``stats_before.h_bar[r]`` (the features before the
    update, as in Eq. 17).
    """
    j, r = _check_pair(stats_before, j, r)
    dw = params_after[weight_key].detach().to("cpu", torch.float64) - \
        params_before[weight_key].detach().to("cpu", torch.float64)  # Δw_y = w_y(after) − w_y(before)
    if dw.shape != stats_before.h_bar.shape:
        raise ValueError(f"{weight_key} has shape {tuple(dw.shape)}, statistics have h̄ of shape "
                         f"{tuple(stats_before.h_bar.shape)}")
    dw_hr = dw @ stats_before.h_bar[r]  # Δw_k·h̄^(r)
    return MeasuredUpdate(j, r, float(dw_hr[r]), float(dw_hr[j]), dw_hr.numpy())
