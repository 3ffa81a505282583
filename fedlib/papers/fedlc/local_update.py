"""FedLC's analysis measured on real local updates of fedlib's engine.

* :func:`deviation_experiment` -- Theorems 1 and 3 during one client's local SGD, step by step
  (§3-4, the deviation-bound notebook);
* :func:`per_class_accuracy_before_after` -- per-class accuracy of the global model, of the
  clients' updated models and of their aggregate (§5.5, Figs. 2, 6, 7), from
  :func:`fedlib.client.train_locally` and :func:`fedlib.server.server_update`, the functions a
  simulated round calls;
* :func:`client_classes` / :func:`most_skewed_client` -- a client's majority, minority and missing
  classes (Definition 2) by :mod:`fedlib.repro.spec.class_roles`' ``"max_fraction"`` rule.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import torch

from ... import tree
from ...algorithms import Algorithm, build_algorithm
from ...algorithms.fedlc import CalibratedLoss
from ...client import client_optimizer, train_locally
from ...config import Config
from ...engine import ClientOptimizer, ClientTask, client_batches, local_update, train_clients_sequential
from ...repro.spec import class_roles
from ...server import server_update
from ...simulation import Experiment, evaluate, prepare
from .deviation_bound import deviation_bound, measured_update, predicted_update_signs
from .statistics import _check_calibration, class_statistics

__all__ = ["client_classes", "most_skewed_client", "deviation_experiment", "per_class_accuracy_before_after"]


# ----------------------------------------------------------------------------- classes of a client
def client_classes(class_counts, majority_fraction: float = 0.5) -> tuple[list[int], list[int], list[int]]:
    """Majority ``J``, minority ``R`` and missing ``S`` classes of one client (Definition 2).

    The paper only asks ``n_j ≫ n_r > 0 = n_s``; fedlib's rule (:mod:`fedlib.repro.spec.class_roles`,
    ``"max_fraction"``): majority ``n_j ≥ majority_fraction · max_y n_y``, minority the other
    present classes, missing ``n_s = 0``.  ``majority_fraction`` in ``(0, 1]``.  How skewed a pair
    really is, is ``n_j/n_r`` (recorded by :func:`deviation_experiment`)."""
    return class_roles.split(class_counts, rule="max_fraction", fraction=majority_fraction)


def most_skewed_client(class_counts: np.ndarray, majority_fraction: float = 0.5) -> int:
    """The client with the largest ``max_y n_y / min_{y: n_y>0} n_y`` among those
    with at least one minority class (ties: lowest index)."""
    best, best_ratio = None, -1.0
    for k, counts in enumerate(np.asarray(class_counts)):
        J, R, _ = client_classes(counts, majority_fraction)
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
            :func:`client_classes` (``majority_fraction``).  Missing classes have
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
        J, R, _ = client_classes(counts, majority_fraction)
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


# ----------------------------------------------------------------------------- §5.5: around one round
def per_class_accuracy_before_after(global_params: dict, experiment: Experiment, clients: Iterable[int] | None = None,
                                    *, method: str | None = None, tau: float | None = None, epochs: int = 1,
                                    lr: float | None = None, batch_size: int | None = None, round_: int = 0,
                                    aggregate: bool = True, return_params: bool = False):
    """Per-class test accuracy of the global model and of each client's locally
    updated model (FedLC Fig. 2, Fig. 6 left) and of their aggregate (Fig. 6 right).

    One round of the simulation from ``global_params`` with the algorithm of ``method`` (default
    the experiment's; ``tau`` overrides the config's τ), ``epochs`` local epochs and the listed
    clients: their local updates are :func:`fedlib.client.train_locally`'s (the mini-batches of
    round ``round_``, the sequential reference engine, corrections from their initial state), the
    aggregate is :func:`fedlib.server.server_update`'s from the initial server state.

    Returns:
        A DataFrame with one row per (client, class): ``client``, ``class``,
        ``n_train`` (the client's n_y), ``acc_before`` (the global model — the
        same for every client, :func:`fedlib.simulation.evaluate`),
        ``acc_after`` (the client's local model), and with ``aggregate`` also
        ``acc_aggregated``; accuracies are NaN for a class absent from the test
        set.  With ``return_params`` also ``{client: local params}`` (for
        :func:`~.statistics.extract_features` / t-SNE, Fig. 7).
    """
    clients = list(range(len(experiment.client_indices))) if clients is None else [int(k) for k in clients]
    if not clients:
        raise ValueError("clients is empty")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
        raise ValueError(f"epochs must be an integer >= 1, got {epochs!r}")
    changes = {"local_epochs": epochs, "method": method, "tau": None if tau is None else float(tau),
               "lr": None if lr is None else float(lr), "batch_size": None if batch_size is None else int(batch_size)}
    cfg = experiment.config.replace(**{k: v for k, v in changes.items() if v is not None})
    exp = replace(experiment, config=cfg, algorithm=build_algorithm(cfg))
    device = cfg.device
    params = {k: v.detach().to(device) for k, v in global_params.items()}
    state = exp.initial_state(params)
    data, model, K = exp.data, exp.model, exp.data.num_classes

    def per_class(p):
        return evaluate(model, p, data.test_x.to(device), data.test_y.to(device), K)[1]

    before = per_class(params)
    outputs = train_locally(exp, state, clients, round_, stream=1, trainer=train_clients_sequential)
    local = {o.client: tree.add(params, o.delta) for o in outputs}  # w + Δ_k: the model the server receives
    if aggregate:
        aggregated = server_update(model, exp.algorithm, state, outputs, client_optimizer(cfg),
                                   num_clients=exp.num_clients, round_=round_ + 1).params
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
