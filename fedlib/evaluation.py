"""Evaluation: the global model on the test set, and every client's personalized model
on its own test sets.

* :func:`evaluate` / :func:`evaluate_predictor`: accuracy and per-class accuracy of
  a model (or any ``x -> logits``) on a test set;
* :func:`evaluation_row`: the global model's history row of a round;
* :func:`personalized_evaluation`: FedABC Eq. 7 and Eq. 8, every client's
  personalized model on its own test set and on a class-balanced one.
"""

from __future__ import annotations

from typing import Callable

import weakref

import numpy as np
import torch

from .client import client_tasks, train_locally
from .state import ServerState
from .threads import own_copy, thread_map

__all__ = ["evaluate", "evaluate_predictor", "eval_batch_size", "evaluation_row", "personalized_evaluation",
           "personal_scores", "pool_personal"]

#: the largest layer output one evaluation chunk may hold on a CPU (bytes).  A chunk whose activations stay in
#: the caches is faster: on FedLC's CIFAR CNN, 2,000 test images take 1.9 s in chunks of 64 against 3.2 s in one
#: batch of 2,048 (1 thread; benchmarks/results_peers.md).  The logits are each row's own: the chunking does
#: not change them where the kernels are batch-invariant, and never changes them beyond float rounding
#: (tests/test_evaluation.py says which holds on the machine that runs it).
EVAL_ACTIVATION_BYTES = 32 * 2**20
#: the bounds of a chunk: below 64 rows a linear layer's GEMM takes other kernels (logits move by rounding)
EVAL_BATCH_RANGE = (64, 2048)
_ROW_BYTES: "weakref.WeakKeyDictionary[torch.nn.Module, dict]" = weakref.WeakKeyDictionary()


def eval_batch_size(model: torch.nn.Module, params: dict, x: torch.Tensor) -> int:
    """Rows per evaluation chunk: on a CPU, a power of two within :data:`EVAL_BATCH_RANGE` whose largest layer
    output fits :data:`EVAL_ACTIVATION_BYTES` (the bytes a row's largest output takes are measured once per
    model and input shape: a forward of one row, every module's output seen by a hook); on an accelerator,
    whose kernels want large batches and whose caches are not the point, the upper bound."""
    if x.device.type != "cpu":
        return EVAL_BATCH_RANGE[1]
    key = (tuple(x.shape[1:]), x.dtype, x.device)
    known = _ROW_BYTES.setdefault(model, {})
    if key not in known:
        largest = [0]

        def seen(_module, _inputs, out):
            if isinstance(out, torch.Tensor):
                largest[0] = max(largest[0], out[:1].numel() * out.element_size())

        hooks = [m.register_forward_hook(seen) for m in model.modules()]
        try:
            with torch.no_grad():
                torch.func.functional_call(model, params, (x[:1],))
        finally:
            for h in hooks:
                h.remove()
        known[key] = max(largest[0], 1)
    lo, hi = EVAL_BATCH_RANGE
    rows = max(1, EVAL_ACTIVATION_BYTES // known[key])
    return int(min(hi, max(lo, 1 << (rows.bit_length() - 1))))


def evaluate(model: torch.nn.Module, params: dict, x: torch.Tensor, y: torch.Tensor, num_classes: int,
             batch_size: int | None = None, logits: Callable | None = None,
             threads: int = 1) -> tuple[float, np.ndarray]:
    """Test accuracy and per-class accuracy (NaN for a class absent from the test set).
    ``logits`` reads the model's output (default: the output itself); ``batch_size`` rows go through the
    model at once (default :func:`eval_batch_size`); ``threads`` score the chunks at once (a run's
    ``client_threads``: each row's logits are its own, so the same counts)."""
    def predict(xb):
        out = torch.func.functional_call(own_copy(model), params, (xb,))
        return logits(out) if logits is not None else out

    if batch_size is None:
        batch_size = eval_batch_size(model, params, x) if len(y) > EVAL_BATCH_RANGE[0] else len(y) or 1
    return evaluate_predictor(predict, x, y, num_classes, batch_size, threads=threads)


@torch.no_grad()
def evaluate_predictor(predict: Callable, x: torch.Tensor, y: torch.Tensor, num_classes: int,
                       batch_size: int = 2048, threads: int = 1) -> tuple[float, np.ndarray]:
    """:func:`evaluate` for any ``predict(x) -> logits`` (e.g. an ensemble; with ``threads`` > 1 it must be
    safe to call from several threads at once).  The counts stay on the data's device and come to the host
    once (they are whole numbers: exact in float64, whatever the order they are added in)."""
    def hits(i: int) -> torch.Tensor:
        with torch.no_grad():  # no_grad is per thread
            return (predict(x[i:i + batch_size]).argmax(1) == y[i:i + batch_size]).to(torch.float64)

    correct = torch.zeros(num_classes, dtype=torch.float64, device=y.device)
    starts = range(0, len(y), batch_size)
    for i, hit in zip(starts, thread_map(hits, starts, threads)):
        correct.index_add_(0, y[i:i + batch_size], hit)
    correct = correct.cpu()
    total = torch.bincount(y, minlength=num_classes).to(torch.float64).cpu()
    per_class = np.where(total.numpy() > 0, correct.numpy() / np.maximum(total.numpy(), 1), np.nan)
    return float(correct.sum() / max(float(total.sum()), 1.0)), per_class


def evaluation_row(exp, params: dict, round_: int) -> dict:
    """The global model's test accuracy and per-class accuracy as a history row."""
    acc, per_class = evaluate(exp.model, params, exp.data.test_x, exp.data.test_y, exp.data.num_classes,
                              logits=exp.algorithm.personalization.global_logits,
                              threads=getattr(exp.config, "client_threads", 1))
    row = {"round": round_, "test_accuracy": acc}
    row.update({f"acc_class_{k}": (None if np.isnan(v) else float(v)) for k, v in enumerate(per_class)})
    return row


def personalized_evaluation(exp, state: ServerState, round_: int, trainer=None) -> dict:
    """FedABC Eq. 7 and Eq. 8: every client's personalized model (PM) on its own
    test set (pooled accuracy Σ correct / Σ samples) and on its class-balanced
    local test set.  The PM is the client's model after a local update from the
    current server state (``personalized_model="local_update"``, stream 3 batches,
    nothing kept) or the global model with its stored local parameters
    (``"stored"``).  Returns ``{"personalized_accuracy", "drift_accuracy",
    "personalized_per_client", "drift_per_client"}``."""
    if exp.client_test_indices is None:
        raise ValueError("this experiment has no per-client test sets (personal_eval_every = 0)")
    c = exp.config
    clients = list(range(exp.num_clients))
    if c.personalized_model == "local_update":
        models = [o.local for o in train_locally(exp, state, clients, round_, 3, trainer)]
    else:
        models = [t.start if t.start is not None else state.params
                  for t in client_tasks(exp, state, clients, round_, 3)]
    return pool_personal([personal_scores(exp, models[k], k) for k in clients])


def _personal_logits(exp, client: int):
    """How client ``client``'s personalized model's output is read: the personalization's logits,
    with the classes the client holds no training sample of masked out under
    ``personalized_classes="held"``."""
    read = exp.algorithm.personalization.personal_logits
    if exp.config.personalized_classes == "all":
        return read
    absent = torch.as_tensor(np.asarray(exp.class_counts[client]) == 0)

    def held_only(out):
        logits = read(out)
        return logits.masked_fill(absent.to(logits.device), float("-inf"))

    return held_only


def personal_scores(exp, model: dict, client: int) -> dict:
    """One client's personalized model ``model`` on its own test set (Eq. 7) and on its class-balanced
    local test set (Eq. 8): ``{"personalized": (accuracy, samples), "drift": (…)}``, ``(nan, 0)`` where
    the client has no such samples."""
    out = {}
    logits = _personal_logits(exp, client)
    for name, sets in (("personalized", exp.client_test_indices), ("drift", exp.balanced_test_indices)):
        rows = sets[client]
        if len(rows) == 0:
            out[name] = (float("nan"), 0)
            continue
        r = torch.as_tensor(rows)
        acc, _ = evaluate(exp.model, model, exp.data.test_x[r], exp.data.test_y[r], exp.data.num_classes,
                          logits=logits)
        out[name] = (acc, len(rows))
    return out


def pool_personal(scores: list[dict]) -> dict:
    """FedABC Eqs. 7-8 pooled over the clients' :func:`personal_scores` (Σ correct / Σ samples), with
    each client's accuracy (None without samples)."""
    out = {}
    for name in ("personalized", "drift"):
        correct = total = 0
        for s in scores:
            acc, n = s[name]
            if n:
                correct += acc * n
                total += n
        out[f"{name}_accuracy"] = correct / max(total, 1)
        out[f"{name}_per_client"] = [s[name][0] if s[name][1] else None for s in scores]
    return out
