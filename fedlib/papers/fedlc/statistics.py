"""Appendix B's per-class statistics of a model on a client's samples, and its features h(x).

:func:`class_statistics` gives ``h̄^(y)`` and ``p̄^(y)`` (Definition 3, Appendix B) with and
without FedLC's calibration (Eq. 7) and Theorem 3's ``p̃``, vectorised over the samples in
float64; :func:`extract_features` the penultimate features ``h(x)`` (§3, Fig. 7), computed by
the training engine's own :func:`fedlib.engine.features`.  The conventions are listed in
:mod:`.analysis`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import torch
from torch import Tensor, nn

from ...engine import features
from ...losses import calibration_offsets

__all__ = ["ClassStatistics", "class_statistics", "class_statistics_from_features", "extract_features",
           "WEIGHT_KEY", "BIAS_KEY"]

WEIGHT_KEY = "classifier.weight"
BIAS_KEY = "classifier.bias"


# ----------------------------------------------------------------------------- features
def _params_of(model: nn.Module, params: dict | None) -> dict[str, Tensor]:
    if params is None:
        return {k: v.detach() for k, v in model.named_parameters()}
    return params


def _feature_batches(model: nn.Module, params: dict | None, x: Tensor, batch_size: int):
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
    if not hasattr(model, "features"):
        raise ValueError(f"{type(model).__name__} has no features(x) method (fedlib models do)")
    params = _params_of(model, params)
    with torch.no_grad():
        for i in range(0, len(x), batch_size):
            yield i, features(model, params, x[i:i + batch_size]).flatten(1)


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
