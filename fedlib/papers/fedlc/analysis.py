"""FedLC's analysis of the local update as measurable, tested functions.

FedLC (Zhang et al., ICML 2022) explains why local training on a label-skewed
client biases the classifier, and why calibrated logits help:

* §3, Definition 2 — the classes of a client are split into majority
  ``j ∈ J``, minority ``r ∈ R`` and missing ``s ∈ S`` classes
  (:func:`split_classes`).
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

What the measurements show (tests/test_analysis.py; not the paper's words):

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
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn
from torch.func import functional_call

from ... import tree
from ...algorithms import Algorithm, build_algorithm
from ...algorithms.fedlc import CalibratedLoss
from ...config import Config
from ...engine import ClientOptimizer, ClientTask, client_batches, local_update, train_clients_sequential
from ...losses import calibration_offsets
from ...simulation import Experiment, evaluate, prepare

__all__ = [
    "ClassStatistics",
    "DeviationBound",
    "UpdatePrediction",
    "MeasuredUpdate",
    "class_statistics",
    "class_statistics_from_features",
    "extract_features",
    "deviation_bound",
    "predicted_update_signs",
    "measured_update",
    "split_classes",
    "most_skewed_client",
    "deviation_experiment",
    "per_class_accuracy_before_after",
]

WEIGHT_KEY = "classifier.weight"
BIAS_KEY = "classifier.bias"


# ----------------------------------------------------------------------------- features
class _FeatureMap(nn.Module):
    """``forward = model.features`` so that ``functional_call`` can run it on given params."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.model = model

    def forward(self, x: Tensor) -> Tensor:
        return self.model.features(x)


def _params_of(model: nn.Module, params: dict | None) -> dict[str, Tensor]:
    if params is None:
        return {k: v.detach() for k, v in model.named_parameters()}
    return params


def _feature_batches(model: nn.Module, params: dict | None, x: Tensor, batch_size: int):
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    if not hasattr(model, "features"):
        raise ValueError(f"{type(model).__name__} has no features(x) method (fedlib models do)")
    wrapper = _FeatureMap(model)
    named = {f"model.{k}": v for k, v in _params_of(model, params).items()}
    with torch.no_grad():
        for i in range(0, len(x), batch_size):
            yield i, functional_call(wrapper, named, (x[i:i + batch_size],)).flatten(1)


def extract_features(model: nn.Module, params: dict | None, x: Tensor, batch_size: int = 1024) -> Tensor:
    """The penultimate features ``h(x)`` (FedLC §3: the input of the last layer),
    shape ``[N, d]``, in the model's dtype on the CPU, without gradients.

    ``params`` (a ``{name: tensor}`` dict such as ``Result.params``) are used in
    place of the model's own parameters; ``None`` uses the model as it is.
    Intended for t-SNE (FedLC Fig. 7), e.g. ``sklearn.manifold.TSNE``.
    """
    chunks = [h.cpu() for _, h in _feature_batches(model, params, x, batch_size)]
    if not chunks:
        raise ValueError("x is empty")
    return torch.cat(chunks)


# ----------------------------------------------------------------------------- statistics
@dataclass
class ClassStatistics:
    """Per-class means of FedLC Appendix B over a set of samples ``(x_i, y_i)``.

    All tensors are float64 on the CPU.  Rows of classes without samples are NaN.

    Attributes:
        num_classes: ``K``.
        counts: ``n_y`` — the number of the given samples in class ``y``, ``[K]``.
        class_counts: the ``n_y`` the calibration offsets were computed from
            (default ``counts``), ``[K]``.
        tau, margin, missing, min_count: the calibration (see
            :func:`fedlib.losses.calibration_offsets`).  ``tau = 0`` with
            ``missing="clamp"`` is plain softmax cross-entropy.
        offsets: ``o_y`` (``−τ n_y^(−1/4)`` for FedLC), ``[K]``; calibrated logits
            are ``f + o``.
        h_bar: ``h̄^(y) = (1/n_y) Σ_{i∈O_y} h(x_i)``, ``[K, d]``.
        p_bar: ``p_bar[y, k] = p̄_k^(y)`` with ``p = softmax(f + o)`` — the
            probabilities whose gradient the (calibrated) loss follows.
        p_plain_bar: the same with ``p = softmax(f)`` (before calibration).
        p_tilde_bar: the same with Theorem 3's
            ``p̃_k(x) = e^{f_k(x)} / Σ_i e^{f_i(x) + o_i}``.
        neg_grad_w: ``(1/N) Σ_i (e_{y_i} − p(x_i)) h(x_i)^T``, ``[K, d]`` with
            ``N = Σ counts`` — exactly ``−∇_W`` of the mean loss, i.e. Eq. 9's
            first line (before Property 1's approximation) divided by ``ηN``.
        neg_grad_w_plain: the same with ``p = softmax(f)``.
        loss: the mean calibrated loss ``−log p_{y_i}(x_i)`` (FedLC's Eq. 7 with the
            full softmax; plain CE at τ = 0); loss_plain: the mean plain CE.
    """

    num_classes: int
    counts: Tensor
    class_counts: Tensor
    tau: float
    margin: str
    missing: str
    min_count: float
    offsets: Tensor
    h_bar: Tensor
    p_bar: Tensor
    p_plain_bar: Tensor
    p_tilde_bar: Tensor
    neg_grad_w: Tensor
    neg_grad_w_plain: Tensor
    loss: float
    loss_plain: float

    @property
    def num_samples(self) -> int:
        return int(self.counts.sum().item())

    def margins(self) -> Tensor:
        """``Δ[r, y] = Δ_(r,y) = o_y − o_r = τ (n_r^(−1/4) − n_y^(−1/4))`` (Eq. 6)."""
        return self.offsets[None, :] - self.offsets[:, None]

    def plain(self) -> "ClassStatistics":
        """The statistics of plain softmax CE on the same model (τ = 0)."""
        zeros = torch.zeros_like(self.offsets)
        return replace(self, tau=0.0, missing="clamp", offsets=zeros, p_bar=self.p_plain_bar,
                       p_tilde_bar=self.p_plain_bar, neg_grad_w=self.neg_grad_w_plain, loss=self.loss_plain)


class _Accumulator:
    """Sums over samples, chunk by chunk, of what :class:`ClassStatistics` averages."""

    def __init__(self, weight: Tensor, bias: Tensor | None, class_counts: Tensor | None, tau: float,
                 margin: str, missing: str, min_count: float):
        self.W = weight.detach().to("cpu", torch.float64)  # w_y = rows, [K, d]
        self.K = self.W.shape[0]
        self.b = (torch.zeros(self.K, dtype=torch.float64) if bias is None
                  else bias.detach().to("cpu", torch.float64))
        self.class_counts = None if class_counts is None else _as_counts(class_counts, self.K)
        self.tau, self.margin, self.missing, self.min_count = float(tau), margin, missing, float(min_count)
        d = self.W.shape[1]
        z = lambda *s: torch.zeros(*s, dtype=torch.float64)  # noqa: E731
        self.n, self.sum_h = z(self.K), z(self.K, d)
        self.sum_p, self.sum_p_plain, self.sum_p_tilde = z(self.K, self.K), z(self.K, self.K), z(self.K, self.K)
        self.sum_g, self.sum_g_plain = z(self.K, d), z(self.K, d)
        self.sum_loss, self.sum_loss_plain = 0.0, 0.0

    def offsets(self, counts: Tensor) -> Tensor:
        return calibration_offsets(counts, self.tau, margin=self.margin, missing="clamp",
                                   min_count=self.min_count)

    def add(self, h: Tensor, y: Tensor, counts_for_offsets: Tensor) -> None:
        h = h.detach().to("cpu", torch.float64).flatten(1)
        y = y.detach().to("cpu", torch.long)
        if h.shape[1] != self.W.shape[1]:
            raise ValueError(f"features have dim {h.shape[1]} but the classifier expects {self.W.shape[1]}")
        if len(y) and (int(y.min()) < 0 or int(y.max()) >= self.K):
            raise ValueError(f"labels must lie in [0, {self.K}), got range [{int(y.min())}, {int(y.max())}]")
        onehot = torch.nn.functional.one_hot(y, self.K).to(torch.float64)  # 1[y_i = y], [B, K]
        f = h @ self.W.T + self.b  # logits f(x) = {w_y^T h + b_y}  (§3)
        o = self.offsets(counts_for_offsets)
        f_cal = f + o  # Eq. 7: f_y(x) − τ n_y^(−1/4)
        if self.missing == "mask":  # as fedlib.losses.fedlc_loss: absent i ≠ y leave the softmax
            absent = (counts_for_offsets <= 0)[None, :] & ~onehot.bool()
            f_cal = torch.where(absent, torch.full_like(f_cal, -math.inf), f_cal)
        log_z_cal = f_cal.logsumexp(1, keepdim=True)
        p = (f_cal - log_z_cal).exp()  # calibrated p_k(x) (proof of Thm 3)
        log_p_plain = f.log_softmax(1)
        p_plain = log_p_plain.exp()  # p = σ(f(x))  (§3)
        p_tilde = (f - log_z_cal).exp()  # p̃_k(x) = e^{f_k} / Σ_i e^{f_i − τ n_i^(−1/4)}  (Thm 3)
        self.n += onehot.sum(0)
        self.sum_h += onehot.T @ h
        self.sum_p += onehot.T @ p
        self.sum_p_plain += onehot.T @ p_plain
        self.sum_p_tilde += onehot.T @ p_tilde
        self.sum_g += (onehot - p).T @ h  # Eq. 9, first line: Σ_i (1[y_i=y] − p_y(x_i)) h(x_i)
        self.sum_g_plain += (onehot - p_plain).T @ h
        self.sum_loss += float((log_z_cal.squeeze(1) - f_cal.gather(1, y[:, None]).squeeze(1)).sum())  # −log p_{y_i}
        self.sum_loss_plain += float(-log_p_plain.gather(1, y[:, None]).sum())

    def finish(self, counts_for_offsets: Tensor) -> ClassStatistics:
        n = self.n
        if n.sum() == 0:
            raise ValueError("no samples")
        inv = torch.where(n > 0, 1.0 / n.clamp_min(1), torch.full_like(n, math.nan))[:, None]
        offsets = calibration_offsets(counts_for_offsets, self.tau, margin=self.margin, missing=self.missing,
                                      min_count=self.min_count)
        total = n.sum()
        return ClassStatistics(
            num_classes=self.K, counts=n, class_counts=counts_for_offsets, tau=self.tau, margin=self.margin,
            missing=self.missing, min_count=self.min_count, offsets=offsets,
            h_bar=self.sum_h * inv,  # h̄^(y) = (1/n_y) Σ_{i∈O_y} h(x_i)  (Def. 3)
            p_bar=self.sum_p * inv,  # p̄_k^(y) = (1/n_y) Σ_{i∈O_y} p_k(x_i)  (Def. 3)
            p_plain_bar=self.sum_p_plain * inv, p_tilde_bar=self.sum_p_tilde * inv,  # p̃̄ (Thm 3)
            neg_grad_w=self.sum_g / total, neg_grad_w_plain=self.sum_g_plain / total,
            loss=self.sum_loss / float(total), loss_plain=self.sum_loss_plain / float(total))


def _as_counts(counts, num_classes: int) -> Tensor:
    c = torch.as_tensor(np.asarray(counts, dtype=np.float64) if not isinstance(counts, Tensor) else counts)
    c = c.detach().to("cpu", torch.float64).flatten()
    if c.numel() != num_classes:
        raise ValueError(f"class_counts must have K = {num_classes} entries, got {c.numel()}")
    if not bool(torch.isfinite(c).all()) or bool((c < 0).any()):
        raise ValueError("class_counts must be finite and >= 0")
    return c


def _check_calibration(tau, margin: str, missing: str) -> None:
    if isinstance(tau, bool) or not isinstance(tau, (int, float)) or not (0 <= tau < math.inf):
        raise ValueError(f"tau must be a finite number >= 0, got {tau!r}")
    if missing not in ("clamp", "mask"):
        raise ValueError(f"missing must be 'clamp' or 'mask', got {missing!r}")
    if margin not in ("quarter_power", "log_prior"):
        raise ValueError(f"margin must be 'quarter_power' or 'log_prior', got {margin!r}")


def _label_counts(y: Tensor, num_classes: int) -> Tensor:
    return torch.bincount(y.detach().to("cpu", torch.long), minlength=num_classes)[:num_classes].to(torch.float64)


def class_statistics_from_features(h: Tensor, y: Tensor, weight: Tensor, bias: Tensor | None = None, *,
                                   class_counts=None, tau: float = 0.0, margin: str = "quarter_power",
                                   missing: str = "clamp", min_count: float = 1.0) -> ClassStatistics:
    """:class:`ClassStatistics` from given features ``h`` ``[N, d]``, labels ``y``
    ``[N]`` and the last layer ``f = h W^T + b`` (``weight`` ``[K, d]``).

    ``class_counts`` (the ``n_y`` of the calibration, Eq. 7) defaults to the
    label counts of ``y``.  See :func:`class_statistics`.
    """
    _check_calibration(tau, margin, missing)
    if h.ndim < 2 or y.ndim != 1 or len(h) != len(y):
        raise ValueError(f"h must be [N, d] and y [N], got {tuple(h.shape)} and {tuple(y.shape)}")
    acc = _Accumulator(weight, bias, class_counts, tau, margin, missing, min_count)
    counts = acc.class_counts if acc.class_counts is not None else _label_counts(y, acc.K)
    acc.add(h, y, counts)
    return acc.finish(counts)


def class_statistics(model: nn.Module, params: dict | None, x: Tensor, y: Tensor, *, num_classes: int | None = None,
                     class_counts=None, tau: float = 0.0, margin: str = "quarter_power", missing: str = "clamp",
                     min_count: float = 1.0, batch_size: int = 1024) -> ClassStatistics:
    """Per-class means ``h̄^(y)``, ``p̄^(y)`` (Definition 3, Appendix B) of a model
    with ``features(x) -> h`` and a final linear ``classifier`` on ``(x, y)``.

    Args:
        model: a fedlib model (``f(x) = W h(x) + b`` with ``W = classifier.weight``).
        params: ``{name: tensor}`` to evaluate the model at (e.g.
            ``Result.params``); ``None`` uses the model's own parameters.
        x, y: the samples (e.g. one client's local data) and their labels.
        num_classes: ``K``; checked against ``classifier.weight`` when given.
        class_counts: ``n_y`` for the calibration offsets, default the label
            counts of ``y`` (pass the client's counts when ``x`` is a subset).
        tau: ``τ``.  ``p_bar`` uses ``p = softmax(f + o)`` with
            ``o = calibration_offsets(class_counts, τ, margin, missing)`` — the
            probabilities of FedLC's loss (Eq. 7; proof of Theorem 3); at
            ``τ = 0`` (``missing="clamp"``) these are plain ``softmax(f)``.
            ``p_plain_bar`` is always ``softmax(f)`` and ``p_tilde_bar`` uses
            Theorem 3's ``p̃``.
        margin, missing, min_count: as :func:`fedlib.losses.calibration_offsets`
            (``missing="mask"`` removes absent classes ``i ≠ y`` from the
            softmax, exactly as :func:`fedlib.losses.fedlc_loss` does).
        batch_size: chunk size of the feature pass (memory only).
    """
    _check_calibration(tau, margin, missing)
    params = _params_of(model, params)
    if WEIGHT_KEY not in params:
        raise ValueError(f"params have no {WEIGHT_KEY!r}: the model needs a final linear layer named 'classifier'")
    weight = params[WEIGHT_KEY]
    if num_classes is not None and weight.shape[0] != num_classes:
        raise ValueError(f"num_classes={num_classes} but {WEIGHT_KEY} has {weight.shape[0]} rows")
    if len(x) != len(y) or len(y) == 0:
        raise ValueError(f"x and y must be non-empty and of equal length, got {len(x)} and {len(y)}")
    acc = _Accumulator(weight, params.get(BIAS_KEY), class_counts, tau, margin, missing, min_count)
    counts = acc.class_counts if acc.class_counts is not None else _label_counts(y, acc.K)
    for i, h in _feature_batches(model, params, x, batch_size):
        acc.add(h, y[i:i + len(h)], counts)
    return acc.finish(counts)


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


# ----------------------------------------------------------------------------- classes of a client
def split_classes(class_counts, majority_fraction: float = 0.5) -> tuple[list[int], list[int], list[int]]:
    """Majority ``J``, minority ``R`` and missing ``S`` classes (Definition 2).

    Rule (the paper only asks ``n_j ≫ n_r > 0 = n_s``):
    missing ``s``: ``n_s = 0``; majority ``j``: ``n_j ≥ majority_fraction · max_y n_y``;
    minority ``r``: the rest (``0 < n_r < majority_fraction · max_y n_y``).
    ``majority_fraction`` in ``(0, 1]``; 1 makes only the largest classes majority.
    How skewed a pair really is, is ``n_j/n_r`` (recorded by :func:`deviation_experiment`).
    """
    if isinstance(majority_fraction, bool) or not isinstance(majority_fraction, (int, float)) \
            or not 0 < majority_fraction <= 1:
        raise ValueError(f"majority_fraction must be in (0, 1], got {majority_fraction!r}")
    n = np.asarray(class_counts.cpu() if isinstance(class_counts, Tensor) else class_counts, dtype=np.float64)
    if n.ndim != 1 or not np.all(np.isfinite(n)) or np.any(n < 0):
        raise ValueError("class_counts must be a 1-D array of finite counts >= 0")
    missing = np.flatnonzero(n == 0)
    if n.max(initial=0) == 0:
        return [], [], missing.tolist()
    threshold = majority_fraction * n.max()
    majority = np.flatnonzero(n >= threshold)
    minority = np.flatnonzero((n > 0) & (n < threshold))
    return majority.tolist(), minority.tolist(), missing.tolist()


def most_skewed_client(class_counts: np.ndarray, majority_fraction: float = 0.5) -> int:
    """The client with the largest ``max_y n_y / min_{y: n_y>0} n_y`` among those
    with at least one minority class (ties: lowest index)."""
    best, best_ratio = None, -1.0
    for k, counts in enumerate(np.asarray(class_counts)):
        J, R, _ = split_classes(counts, majority_fraction)
        if J and R:
            ratio = counts[J].max() / counts[R].min()
            if ratio > best_ratio:
                best, best_ratio = k, ratio
    if best is None:
        raise ValueError("no client has both a majority and a minority class")
    return best


# ----------------------------------------------------------------------------- the experiment
def _resolve_source(source, params):
    """(experiment, starting params) from a Config / dict / Result / Experiment."""
    from ...api import Result

    if isinstance(source, Experiment):
        exp, start = source, None
    elif isinstance(source, Result):
        exp, start = prepare(source.config), source.params
    elif isinstance(source, (Config, dict)):
        exp, start = prepare(source if isinstance(source, Config) else Config.from_dict(source)), None
    else:
        raise ValueError(f"source must be a Config, dict, Result or Experiment, got {type(source).__name__}")
    if params is not None:
        start = params
    if start is None:
        start = exp.initial_params()
    return exp, {k: v.detach().clone().to(exp.config.device) for k, v in start.items()}


def _cross_entropy_algorithm() -> Algorithm:
    return build_algorithm(Config(method="fedavg"))


def _calibrated_algorithm(config: Config, tau: float) -> Algorithm:
    loss = CalibratedLoss(tau=tau, denominator="full", margin=config.fedlc_margin, missing=config.fedlc_missing,
                          min_count=config.fedlc_min_count)
    return replace(build_algorithm(Config(method="fedavg")), loss=loss)


def deviation_experiment(source, *, client: int | None = None, params: dict | None = None, epochs: int = 1,
                         max_steps: int | None = None, batch_size: int | str | None = None,
                         lr: float | None = None, tau: float | None = None, losses: Sequence[str] = ("ce", "fedlc"),
                         pairs: Iterable[tuple[int, int]] | None = None, majority_fraction: float = 0.5,
                         record: str = "step", seed: int | None = None) -> pd.DataFrame:
    """Measure Theorem 1 and Theorem 3 during real local training of one client.

    From the starting model (a pre-trained global model: ``Result`` or
    ``params``; else the config's seeded initial model), the client runs local
    SGD with fedlib's engine (:func:`fedlib.engine.local_update`, no correction,
    the config's weight decay) once with plain CE (``"ce"``) and once with
    FedLC's calibrated loss (``"fedlc"``: Eq. 7 with the config's margin /
    missing options and ``τ``; always the ``"full"`` softmax denominator, whose
    gradient has Eq. 9's form).  Both runs see the same mini-batches.

    Before every recorded interval (one step, or one epoch with
    ``record="epoch"``) the class statistics of the model on the client's
    whole local data are computed, and for every pair ``(j, r)`` one row is
    written with:

    ``n_j, n_r, ratio`` (= n_j/n_r); ``D_plain`` (Definition 3, before
    calibration), ``D_cal`` (Theorem 3 at ``τ``), ``D`` (the bound of the loss
    being trained: ``D_plain`` for CE, ``D_cal`` for FedLC; ``tau`` is the
    loss's τ — 0 for CE — and ``tau_cal`` the τ of ``D_cal``), ``D_valid``
    (``D > 0`` and ``h̄^(r)·h̄^(j) > 0``), ``condition`` (``ratio > D > 0``),
    ``ratio_over_D``; ``p_rr = p̄_r^(r)``, ``p_rj = p̄_r^(j)`` (the loss's
    probabilities), ``h_dot``; the prediction of Eq. 17 (``pred_wr_hr``,
    ``pred_wj_hr``, the two-term ``pair_r``, ``pair_j`` of Theorem 1's proof,
    and the exact ``pred_exact_*`` of Eq. 9's first line) for the interval,
    scaled as ``η · (steps in the interval)`` times one full-data mean-gradient
    step; the measured ``meas_wr_hr``, ``meas_wj_hr`` (:func:`measured_update`);
    ``deviation_r`` (measured ``Δw_r·h̄^(r) < 0``), ``deviation_j`` (measured
    ``Δw_j·h̄^(r) > 0``), ``deviated`` (both), ``predicted_deviation`` (both,
    from Eq. 17); and ``loss_value`` (the loss on the client's data).

    Args:
        source: a :class:`Config` / dict (``prepare`` is called), a
            :class:`fedlib.api.Result` (its config and final global params), or
            a prepared :class:`Experiment`.
        client: the client; ``None`` picks :func:`most_skewed_client`.
        params: starting params overriding the source's.
        epochs: local epochs ``E``; ``max_steps`` caps the number of steps.
        batch_size: ``None`` = the config's; ``"full"`` = full-batch gradient
            descent (one step = one epoch; Eq. 9 is then exact up to Property 1).
        lr: ``η`` (default the config's); tau: ``τ`` (default the config's).
        losses: any of ``"ce"``, ``"fedlc"``.
        pairs: ``(j, r)`` pairs; default every majority × minority pair of
            :func:`split_classes` (``majority_fraction``).  Missing classes have
            no ``h̄`` and cannot enter ``D_jr``.
        record: ``"step"`` or ``"epoch"``.
        seed: the mini-batch order seed (default the config's seed).

    Returns:
        A DataFrame with one row per (recorded interval, pair, loss).
    """
    exp, start = _resolve_source(source, params)
    cfg = exp.config
    if record not in ("step", "epoch"):
        raise ValueError(f"record must be 'step' or 'epoch', got {record!r}")
    unknown = set(losses) - {"ce", "fedlc"}
    if unknown or not losses:
        raise ValueError(f"losses must be a non-empty subset of ('ce', 'fedlc'), got {tuple(losses)!r}")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be an integer >= 1, got {epochs!r}")
    tau = cfg.tau if tau is None else tau
    _check_calibration(tau, cfg.fedlc_margin, cfg.fedlc_missing)
    lr = cfg.lr if lr is None else float(lr)
    seed = cfg.seed if seed is None else seed
    counts_all = np.asarray(exp.class_counts)
    client = most_skewed_client(counts_all, majority_fraction) if client is None else int(client)
    if not 0 <= client < len(exp.client_indices):
        raise ValueError(f"client must be in [0, {len(exp.client_indices)}), got {client}")
    rows = np.asarray(exp.client_indices[client])
    counts = counts_all[client].astype(np.float64)
    if pairs is None:
        J, R, _ = split_classes(counts, majority_fraction)
        pairs = [(j, r) for j in J for r in R]
    pairs = [(int(j), int(r)) for j, r in pairs]
    for j, r in pairs:
        if counts[j] <= 0 or counts[r] <= 0 or j == r:
            raise ValueError(f"pair (j={j}, r={r}) needs two distinct classes present on client {client} "
                             f"(counts {counts[j]:g}, {counts[r]:g})")
    if not pairs:
        raise ValueError(f"client {client} has no (majority, minority) pair; class counts {counts.tolist()}")

    device = cfg.device
    x_all, y_all = exp.data.train_x.to(device), exp.data.train_y.to(device)
    xc, yc = x_all[torch.as_tensor(rows, device=device)], y_all[torch.as_tensor(rows, device=device)]
    if batch_size == "full":
        batches = [rows] * epochs
        steps_per_epoch = 1
    else:
        bs = cfg.batch_size if batch_size is None else batch_size
        if isinstance(bs, bool) or not isinstance(bs, int) or bs < 1:
            raise ValueError(f"batch_size must be an integer >= 1, 'full' or None, got {batch_size!r}")
        batches = client_batches(rows, epochs, bs, seed, 0, client)
        steps_per_epoch = -(-len(rows) // bs)
    if max_steps is not None:
        batches = batches[:max_steps]
    if record == "step":
        intervals = [[b] for b in batches]
    else:
        intervals = [batches[i:i + steps_per_epoch] for i in range(0, len(batches), steps_per_epoch)]
    counts_t = torch.as_tensor(counts, dtype=torch.float32, device=device)
    model = exp.model
    out = []
    for loss_name in losses:
        alg = _cross_entropy_algorithm() if loss_name == "ce" else _calibrated_algorithm(cfg, tau)
        loss_tau = 0.0 if loss_name == "ce" else float(tau)
        current = tree.clone(start)
        step = 0
        for interval in intervals:
            stats = class_statistics(model, current, xc, yc, class_counts=counts, tau=tau, margin=cfg.fedlc_margin,
                                     missing=cfg.fedlc_missing, min_count=cfg.fedlc_min_count)
            loss_stats = stats.plain() if loss_name == "ce" else stats
            loss_value = loss_stats.loss
            task = ClientTask(client, torch.as_tensor(rows), counts_t,
                              [torch.as_tensor(b, device=device) for b in interval])
            after = local_update(model, alg, current, task, {}, x_all, y_all,
                                 ClientOptimizer(lr, 0.0, cfg.weight_decay)).local
            step += len(interval)
            for j, r in pairs:
                bound = deviation_bound(stats, j, r)
                d_loss = bound.d_jr_plain if loss_name == "ce" else bound.d_jr
                den = (float(loss_stats.p_bar[j, r]) * bound.h_dot)
                ratio = counts[j] / counts[r]
                pred = predicted_update_signs(loss_stats, counts, lr * len(interval), j, r)
                meas = measured_update(current, after, stats, j, r)
                valid = bool(den > 0 and math.isfinite(d_loss) and d_loss > 0)
                out.append({
                    "loss": loss_name, "tau": loss_tau, "tau_cal": float(tau), "client": client, "step": step,
                    "epoch": (step - 1) // steps_per_epoch + 1, "j": j, "r": r,
                    "n_j": int(counts[j]), "n_r": int(counts[r]), "ratio": ratio,
                    "D_plain": bound.d_jr_plain, "D_cal": bound.d_jr, "D": d_loss, "D_valid": valid,
                    "condition": bool(valid and ratio > d_loss), "ratio_over_D": ratio / d_loss if valid else math.nan,
                    "p_rr": float(loss_stats.p_bar[r, r]), "p_rj": float(loss_stats.p_bar[j, r]),
                    "h_dot": bound.h_dot,
                    "pred_wr_hr": pred.wr_hr, "pred_wj_hr": pred.wj_hr, "pair_r": pred.pair_r,
                    "pair_j": pred.pair_j, "pred_exact_wr_hr": pred.wr_hr_exact,
                    "pred_exact_wj_hr": pred.wj_hr_exact,
                    "meas_wr_hr": meas.wr_hr, "meas_wj_hr": meas.wj_hr,
                    "deviation_r": meas.deviation_r, "deviation_j": meas.deviation_j,
                    "deviated": meas.deviation_r and meas.deviation_j,
                    "predicted_deviation": pred.deviation_r and pred.deviation_j,
                    "loss_value": loss_value,
                })
            current = after
    return pd.DataFrame(out)


# ----------------------------------------------------------------------------- §5.5 helpers
def per_class_accuracy_before_after(global_params: dict, experiment: Experiment, clients: Iterable[int] | None = None,
                                    *, method: str | None = None, tau: float | None = None, epochs: int = 1,
                                    lr: float | None = None, batch_size: int | None = None, round_: int = 0,
                                    aggregate: bool = True, return_params: bool = False):
    """Per-class test accuracy of the global model and of each client's locally
    updated model (FedLC Fig. 2, Fig. 6 left) and of their aggregate (Fig. 6 right).

    Every listed client starts from ``global_params`` and runs ``epochs`` local
    epochs with fedlib's sequential engine and the algorithm of ``method``
    (default the experiment's; ``tau`` overrides the config's τ), on the
    mini-batches :func:`fedlib.engine.client_batches` draws for round
    ``round_``; client corrections start from their initial state.  The
    aggregate is the algorithm's aggregation of these clients' updates applied
    by its server optimizer from a fresh state.

    Returns:
        A DataFrame with one row per (client, class): ``client``, ``class``,
        ``n_train`` (the client's n_y), ``acc_before`` (the global model — the
        same for every client, :func:`fedlib.simulation.evaluate`),
        ``acc_after`` (the client's local model), and with ``aggregate`` also
        ``acc_aggregated``; accuracies are NaN for a class absent from the test
        set.  With ``return_params`` also ``{client: local params}`` (for
        :func:`extract_features` / t-SNE, Fig. 7).
    """
    exp = experiment
    cfg = exp.config
    if method is not None or tau is not None:
        cfg = cfg.replace(**({"method": method} if method is not None else {}),
                          **({"tau": float(tau)} if tau is not None else {}))
    alg = build_algorithm(cfg)
    clients = list(range(len(exp.client_indices))) if clients is None else [int(k) for k in clients]
    if not clients:
        raise ValueError("clients is empty")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be an integer >= 1, got {epochs!r}")
    lr = cfg.lr if lr is None else float(lr)
    bs = cfg.batch_size if batch_size is None else int(batch_size)
    device = cfg.device
    params = {k: v.detach().to(device) for k, v in global_params.items()}
    data = exp.data
    K = data.num_classes
    model = exp.model

    def per_class(p):
        return evaluate(model, p, data.test_x.to(device), data.test_y.to(device), K)[1]

    before = per_class(params)
    tasks = []
    for k in clients:
        rows = np.asarray(exp.client_indices[k])
        batches = [torch.as_tensor(b, device=device) for b in client_batches(rows, epochs, bs, cfg.seed, round_, k)]
        counts = torch.as_tensor(exp.class_counts[k], dtype=torch.float32, device=device)
        tasks.append(ClientTask(k, torch.as_tensor(rows), counts, batches))
    outputs = train_clients_sequential(model, alg, params, tasks, alg.correction.init_server_state(params),
                                       data.train_x.to(device), data.train_y.to(device),
                                       ClientOptimizer(lr, 0.0, cfg.weight_decay))
    local = {o.client: tree.add(params, o.delta) for o in outputs}
    if aggregate:
        steps = [alg.correction.effective_steps(o.num_steps, lr) for o in outputs]
        delta = alg.aggregator.combine([o.delta for o in outputs], [o.num_samples for o in outputs], steps)
        aggregated, _ = alg.server_optimizer.apply(params, tree.scale(delta, -1.0), alg.server_optimizer.init(params))
        agg_acc = per_class(aggregated)
    frame_rows = []
    for k in clients:
        after = per_class(local[k])
        for c in range(K):
            row = {"client": k, "class": c, "n_train": int(exp.class_counts[k][c]),
                   "acc_before": float(before[c]), "acc_after": float(after[c])}
            if aggregate:
                row["acc_aggregated"] = float(agg_acc[c])
            frame_rows.append(row)
    frame = pd.DataFrame(frame_rows)
    if return_params:
        return frame, {k: {n: v.detach().cpu() for n, v in p.items()} for k, p in local.items()}
    return frame
