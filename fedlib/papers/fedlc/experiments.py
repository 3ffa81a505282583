"""The FedLC paper's experiments as functions the notebooks call.

Each function takes a :class:`fedlib.repro.profiles.Profile` (or its name) and
returns data (DataFrames, models); the notebooks only plot and save.  Runs go
through :func:`fedlib.run` and the results store (:func:`fedlib.repro.report.run_grid`),
so notebooks that need the same run share it.

* :func:`fig1_cells` -- FedAvg under IID, Q(α), D(β) (Fig. 1).
* :func:`pretrained` / :func:`experiment_config` -- the "well-trained" global
  model of an analysis experiment (Fig. 2, 6, 7, the deviation bound).
* :func:`before_after` -- per-class accuracy before/after the local update and
  after aggregation (Fig. 2, Fig. 6), from :mod:`fedlib.analysis`.
* :func:`tsne_embedding` -- features of a missing, a minority and a majority
  class after the local update, embedded by t-SNE (Fig. 7).
* :func:`toy_two_clients` -- Fig. 3 measured: two skewed clients in 2-D.
* :data:`CALIBRATION_VARIANTS`, :func:`calibration_cells`, :func:`tau_cells`
  -- FedLC's loss variants and τ (§4).
* :func:`synthetic_alpha_effect` -- Synthetic(α, β): α does not change the data.
* :func:`stand_in_cells`, :func:`stand_in_comparison`, :func:`stand_in_findings`
  -- is the profile's stand-in for CIFAR-10 faithful?  Tables 1-2's effects
  measured on the stand-in and on CIFAR-10 itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from . import PAPER
from . import reported as paper
from ...repro.gate import decide
from ...repro.profiles import Profile


__all__ = [
    "fig1_cells", "experiment_config", "pretrained", "before_after", "class_roles", "tsne_embedding",
    "ToyResult", "toy_two_clients", "CALIBRATION_VARIANTS", "calibration_cells", "tau_cells",
    "synthetic_alpha_effect", "curve_cells", "skew_label", "pick_tsne_client", "CALIBRATION_LABELS",
    "stand_in_cells", "stand_in_comparison", "stand_in_findings", "STAND_IN", "ON_CIFAR10",
    "fig1_frame", "fig1_claims", "fig2_by_role", "toy_panels", "fig3_toy_table", "LOSS_NAMES",
    "deviation_summary", "deviation_by_minority_size", "Calibration", "calibration_table",
    "fig4_counts_table",
    "fig6_per_class", "fig6_summary", "fig7_separation",
]


def _skew_params(key: str) -> dict:
    """``"cifar10_beta0.1"`` / ``"cifar10_alpha2"`` / ``"iid"`` -> partition parameters."""
    if key.endswith("iid"):
        return {"partition": "iid"}
    kind = key.rsplit("_", 1)[-1]
    if kind.startswith("beta"):
        return {"partition": "dirichlet", "partition_beta": float(kind[4:])}
    if kind.startswith("alpha"):
        return {"partition": "shards", "partition_alpha": int(kind[5:])}
    raise ValueError(f"cannot read a skew from {key!r}")


def skew_label(key: str) -> str:
    """``"cifar10_beta0.1"`` -> ``"D(β=0.1)"``, ``"cifar10_alpha2"`` -> ``"Q(α=2)"``, ``"…_iid"`` -> ``"IID"``."""
    p = _skew_params(key)
    if p["partition"] == "iid":
        return "IID"
    return f"D(β={p['partition_beta']:g})" if p["partition"] == "dirichlet" else f"Q(α={p['partition_alpha']})"


def _setting_config(profile: Profile, key: str, experiment: str, **extra) -> tuple[dict | None, str]:
    dataset = key.split("_", 1)[0]
    base = {**paper.SETUP, "dataset": dataset, **_skew_params(key), **extra}
    return decide(profile, base, experiment)


# ----------------------------------------------------------------------------- Fig. 1
def fig1_cells(profile: Profile | str | None = None) -> list[dict]:
    """FedAvg on CIFAR-10 under IID, each Q(α) and each D(β) of the profile."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("fig1")
    keys = (["cifar10_iid"] if opts.get("iid", True) else []) \
        + [f"cifar10_alpha{a}" for a in opts.get("alphas", ())] + [f"cifar10_beta{b}" for b in opts.get("betas", ())]
    cells = []
    for i, key in enumerate(keys):
        cfg, note = _setting_config(prof, key, "fig1", method="fedavg")
        kind = "IID" if key.endswith("iid") else ("Q(α)" if "alpha" in key else "D(β)")
        cells.append({"setting": skew_label(key), "kind": kind, "order": i, "config": cfg, "note": note})
    return cells


def curve_cells(profile: Profile | str | None, experiment: str, methods: Sequence[str]) -> list[dict]:
    """Cells (setting × method) of a curve figure (Fig. 5) from the experiment's ``settings``."""
    prof = PAPER.profile(profile)
    opts = prof.experiment(experiment)
    cells = []
    for key in opts.get("settings", ()):
        extra = {"num_clients": opts["num_clients"]} if "num_clients" in opts else {}
        for m in methods:
            cfg, note = _setting_config(prof, key, experiment, method=m, **extra)
            cells.append({"setting": skew_label(key), "method": m, "config": cfg, "note": note})
    return cells


# ----------------------------------------------------------------------------- calibration variants (§4)
#: FedLC's loss as the paper writes it in two places, and the ways to read it.
CALIBRATION_VARIANTS: dict[str, dict] = {
    "standard": {"fedlc_denominator": "full", "fedlc_margin": "quarter_power", "fedlc_missing": "clamp"},
    "eq7_printed": {"fedlc_denominator": "exclude_true", "fedlc_margin": "quarter_power", "fedlc_missing": "clamp"},
    "log_prior": {"fedlc_denominator": "full", "fedlc_margin": "log_prior", "fedlc_missing": "clamp"},
    "standard_mask": {"fedlc_denominator": "full", "fedlc_margin": "quarter_power", "fedlc_missing": "mask"},
    "log_prior_mask": {"fedlc_denominator": "full", "fedlc_margin": "log_prior", "fedlc_missing": "mask"},
    "eq7_printed_mask": {"fedlc_denominator": "exclude_true", "fedlc_margin": "quarter_power",
                         "fedlc_missing": "mask"},
}
CALIBRATION_LABELS = {
    "fedavg": "FedAvg (plain CE)",
    "fedrs": "FedRS",
    "standard": "Eq. 6 margin, full softmax (logit-adjusted CE)",
    "eq7_printed": "Eq. 7 as printed (denominator i≠y)",
    "log_prior": "Eq. 5 log-prior margin (logit adjustment)",
    "standard_mask": "Eq. 6 margin, missing classes masked",
    "log_prior_mask": "Eq. 5 log-prior margin, missing classes masked",
    "eq7_printed_mask": "Eq. 7 as printed, missing classes masked",
}


def calibration_cells(profile: Profile | str | None = None) -> list[dict]:
    """Baselines (FedAvg, FedRS) and every FedLC loss variant on each setting."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("calibration")
    variants = opts.get("variants", tuple(CALIBRATION_VARIANTS))
    cells = []
    for key in opts.get("settings", ()):
        for name in ("fedavg", "fedrs", *variants):
            params = {"method": name} if name in ("fedavg", "fedrs") else {"method": "fedlc",
                                                                          **CALIBRATION_VARIANTS[name]}
            cfg, note = _setting_config(prof, key, "calibration", **params)
            cells.append({"setting": skew_label(key), "column": key, "variant": name,
                          "label": CALIBRATION_LABELS[name], "config": cfg, "note": note})
    return cells


def tau_cells(profile: Profile | str | None = None, variants: Sequence[str] = ("standard", "log_prior")) -> list[dict]:
    """The τ sweep on the experiment's ``tau_setting`` for each variant."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("calibration")
    key = opts.get("tau_setting")
    cells = []
    for name in variants:
        for tau in opts.get("taus", ()):
            cfg, note = _setting_config(prof, key, "calibration", method="fedlc", tau=float(tau),
                                        **CALIBRATION_VARIANTS[name])
            cells.append({"variant": name, "label": CALIBRATION_LABELS[name], "tau": float(tau), "config": cfg,
                          "note": note})
    return cells


# ----------------------------------------------------------------------------- pretrained models (§3, §5.5)
def _experiment_cell(profile: Profile | str | None, experiment: str) -> tuple[dict | None, str]:
    """The profile's configuration of an analysis experiment's base cell and its note (why not run, if so)."""
    prof = PAPER.profile(profile)
    opts = prof.experiment(experiment)
    base = {**paper.SETUP, "dataset": opts.get("dataset", "cifar10"), "method": "fedavg"}
    for k in ("num_clients", "partition", "partition_beta", "partition_alpha"):
        if k in opts:
            base[k] = opts[k]
    return decide(prof, base, experiment)


def not_run_here(ctx, experiment: str, names: Sequence[str]) -> str | None:
    """Where ``ctx``'s profile does not run an analysis ``experiment`` (its dataset absent, or on a CPU the
    paper profile's "not run: needs a GPU" with the estimated cost): save a placeholder table under each of
    ``names`` stating why, print it and return it; None where the experiment runs."""
    cfg, note = _experiment_cell(ctx.profile, experiment)
    if cfg is not None:
        return None
    why = note or f"{experiment} is not run in profile {ctx.profile.name!r}"
    for name in names:
        ctx.save_table(pd.DataFrame([{"experiment": experiment, "status": "not run", "note": why}]), name,
                       experiment=experiment, placeholder=True, title=f"{PAPER.experiments.get(experiment, experiment)}: not run here",
                       caption=why)
    print(f"{experiment}: {why}")
    return why


def experiment_config(profile: Profile | str | None, experiment: str, **extra: Any) -> dict | None:
    """The configuration of an analysis experiment (fig2, fig6, fig7, deviation):
    its dataset (substituted by the profile), clients and skew, the profile's
    overrides, and ``rounds`` (``pretrain_rounds``) of the experiment.  None if
    its dataset is not run in this profile."""
    cfg, _ = _experiment_cell(profile, experiment)
    if cfg is None:
        return None
    prof = PAPER.profile(profile)
    opts = prof.experiment(experiment)
    rounds = opts.get("pretrain_rounds", opts.get("rounds"))
    if rounds is not None:
        cfg["rounds"] = int(rounds)
    cfg["seed"] = int(prof.seeds_for(experiment)[0])
    cfg.update(extra)
    return cfg


def pretrained(profile: Profile | str | None, experiment: str, *, store: Any = None, progress: bool = True,
               **extra: Any):
    """The trained global model of an analysis experiment: a FedAvg run of
    :func:`experiment_config` (store-backed).  Returns a :class:`fedlib.Result`."""
    from ...api import run
    from ...repro.report import default_store

    cfg = experiment_config(profile, experiment, **extra)
    if cfg is None:
        raise LookupError(f"experiment {experiment!r} is not run in this profile")
    return run(cfg, store=default_store() if store is None else store, progress=progress)


def class_roles(counts: np.ndarray, majority_fraction: float = 0.5) -> list[str]:
    """'majority' / 'minority' / 'missing' per class of one client (Definition 2)."""
    from .analysis import split_classes

    J, R, S = split_classes(np.asarray(counts), majority_fraction)
    roles = [""] * len(counts)
    for idx, name in ((J, "majority"), (R, "minority"), (S, "missing")):
        for c in idx:
            roles[c] = name
    return roles


def before_after(result, methods: Sequence[str] = ("fedavg",), *, clients: Sequence[int] | None = None,
                 epochs: int = 1, aggregate: bool = True, return_params: bool = False):
    """Per-class test accuracy (%) of the global model, each client's locally
    updated model and their aggregate, for each local-update ``method``, all
    from the same trained model ``result`` (:func:`fedlib.analysis.per_class_accuracy_before_after`).

    Returns a DataFrame (method, client, class, n_train, role, acc_before,
    acc_after, acc_aggregated); with ``return_params`` also
    ``{method: {client: params}}``."""
    from .analysis import per_class_accuracy_before_after
    from ...simulation import prepare

    exp = prepare(result.config)
    frames, params = [], {}
    for m in methods:
        out = per_class_accuracy_before_after(result.params, exp, clients, method=m, epochs=epochs,
                                              aggregate=aggregate, return_params=return_params)
        frame, local = out if return_params else (out, None)
        frame = frame.copy()
        frame.insert(0, "method", m)
        frames.append(frame)
        if return_params:
            params[m] = local
    df = pd.concat(frames, ignore_index=True)
    roles = {k: class_roles(exp.class_counts[k]) for k in df.client.unique()}
    df["role"] = [roles[k][c] for k, c in zip(df.client, df["class"])]
    for col in ("acc_before", "acc_after", "acc_aggregated"):
        if col in df:
            df[col] = 100.0 * df[col]
    return (df, params, exp) if return_params else df


def pick_tsne_client(class_counts: np.ndarray, min_ratio: float = 3.0) -> tuple[int, dict[str, int]]:
    """A client with a missing, a minority and a majority class, like the paper's
    example (0, 448 and 2608 samples): among clients whose largest class has at
    least ``min_ratio`` times the samples of their largest minority class (any
    client if none does), the one with the largest minority class.  Returns
    (client, {role: class})."""
    candidates = []
    for k, counts in enumerate(np.asarray(class_counts)):
        roles = class_roles(counts)
        if not {"majority", "minority", "missing"} <= set(roles):
            continue
        maj = max((c for c, r in enumerate(roles) if r == "majority"), key=lambda c: counts[c])
        mino = max((c for c, r in enumerate(roles) if r == "minority"), key=lambda c: counts[c])
        miss = next(c for c, r in enumerate(roles) if r == "missing")
        candidates.append((counts[maj] >= min_ratio * counts[mino], counts[mino], -k,
                           (k, {"missing": miss, "minority": mino, "majority": maj})))
    if not candidates:
        raise ValueError("no client has a missing, a minority and a majority class")
    return max(candidates, key=lambda c: c[:3])[3]


def tsne_embedding(result, methods: Sequence[str] = ("fedavg", "fedlc"), *, samples_per_class: int = 200,
                   seed: int = 0, client: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 7: after one local epoch from the trained model ``result`` with each
    method, the features h(x) of test samples of one client's missing, minority
    and majority class, embedded in 2-D by t-SNE (sklearn).

    Returns ``(points, scores)``: points (method, role, class, n_train, x, y) and
    per method the silhouette score of the three classes in feature space and
    the 5-NN accuracy in the embedding (higher = better separated)."""
    from sklearn.manifold import TSNE
    from sklearn.metrics import silhouette_score
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.model_selection import cross_val_score

    from .analysis import extract_features
    from ...simulation import prepare

    exp = prepare(result.config)
    if client is None:
        client, chosen = pick_tsne_client(exp.class_counts)
    else:
        roles = class_roles(exp.class_counts[client])
        chosen = {r: max((c for c, rr in enumerate(roles) if rr == r), key=lambda c: exp.class_counts[client][c])
                  for r in ("missing", "minority", "majority") if r in roles}
    _, params, _ = before_after(result, methods, clients=[client], aggregate=False, return_params=True)
    rng = np.random.default_rng(seed)
    ty = exp.data.test_y.numpy()
    rows = np.concatenate([rng.permutation(np.flatnonzero(ty == c))[:samples_per_class] for c in chosen.values()])
    x = exp.data.test_x[torch.as_tensor(rows)]
    labels = ty[rows]
    role_of = {c: r for r, c in chosen.items()}
    points, scores = [], []
    for m in methods:
        feats = extract_features(exp.model, params[m][client], x).double().numpy()
        emb = TSNE(n_components=2, init="pca", random_state=seed,
                   perplexity=min(30.0, max(2.0, (len(rows) - 1) / 3))).fit_transform(feats)
        knn = cross_val_score(KNeighborsClassifier(5), emb, labels, cv=3).mean() if len(rows) >= 9 else math.nan
        scores.append({"method": m, "client": client,
                       "silhouette_features": float(silhouette_score(feats, labels)),
                       "knn5_accuracy_tsne": float(knn)})
        for (px, py), c in zip(emb, labels):
            points.append({"method": m, "role": role_of[int(c)], "class": int(c),
                           "n_train": int(exp.class_counts[client][int(c)]), "x": float(px), "y": float(py)})
    return pd.DataFrame(points), pd.DataFrame(scores)


# ----------------------------------------------------------------------------- Fig. 3 toy
@dataclass
class ToyResult:
    data: pd.DataFrame  # x, y, label, client (train points)
    models: dict[str, dict]  # name -> {"W": [K, 2], "b": [K]}
    accuracy: pd.DataFrame  # model, class, accuracy (balanced test set), distance to the global optimum
    class_counts: np.ndarray  # 2 × K


def _toy_points(rng, means, counts, std):
    xs, ys = [], []
    for c, n in enumerate(counts):
        xs.append(rng.normal(means[c], std, size=(int(n), 2)))
        ys.append(np.full(int(n), c))
    return np.concatenate(xs), np.concatenate(ys)


def toy_two_clients(profile: Profile | str | None = None, *, seed: int = 0, std: float | None = None,
                    lr: float = 0.5, tau: float | None = None) -> ToyResult:
    """FedLC Fig. 3, measured: 4 Gaussian classes at the corners of a square, two
    clients with opposite label skew (client 1: classes 0,1 majority, 2 minority,
    3 missing; client 2: 2,3 majority, 1 minority, 0 missing), a linear softmax
    model trained with full-batch gradient descent.

    Models: the global optimum (pooled data), each client's local optimum from
    the global optimum (``local_steps`` steps), their average (one round), and
    FedAvg over ``rounds`` rounds of ``local_steps`` local steps; the same with
    FedLC's calibrated loss (τ).  Accuracy on a large balanced test set.
    Defaults (profile ``fig3`` settings): class std 1.5, τ = 3, learning rate 0.5."""
    from ...losses import fedlc_loss

    prof = PAPER.profile(profile)
    opts = prof.experiment("fig3")
    std = float(opts.get("std", 1.5) if std is None else std)
    tau = float(opts.get("tau", 3.0) if tau is None else tau)
    n_major = int(opts.get("points_per_class", 200))
    n_minor = max(2, n_major // 10)
    steps, rounds = int(opts.get("local_steps", 100)), int(opts.get("rounds", 50))
    rng = np.random.default_rng(seed)
    means = np.array([[-2.0, 2.0], [2.0, 2.0], [2.0, -2.0], [-2.0, -2.0]])
    counts = np.array([[n_major, n_major, n_minor, 0], [0, n_minor, n_major, n_major]])
    clients = [_toy_points(rng, means, c, std) for c in counts]
    test_x, test_y = _toy_points(rng, means, [2000] * 4, std)
    K = 4

    def tensors(x, y):
        return torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(y, dtype=torch.long)

    def train(W, b, x, y, n_steps, cal_counts=None):
        W, b = W.clone().requires_grad_(True), b.clone().requires_grad_(True)
        for _ in range(n_steps):
            logits = x @ W.T + b
            loss = (torch.nn.functional.cross_entropy(logits, y) if cal_counts is None
                    else fedlc_loss(logits, y, cal_counts, tau))
            gW, gb = torch.autograd.grad(loss, (W, b))
            with torch.no_grad():
                W -= lr * gW
                b -= lr * gb
        return W.detach(), b.detach()

    data = [tensors(*c) for c in clients]
    pooled = tensors(np.concatenate([c[0] for c in clients]), np.concatenate([c[1] for c in clients]))
    W0, b0 = torch.zeros(K, 2, dtype=torch.float64), torch.zeros(K, dtype=torch.float64)
    models = {}
    models["global optimum"] = train(W0, b0, *pooled, steps * rounds)
    Wg, bg = models["global optimum"]
    for name, calibrated in (("CE", False), ("FedLC", True)):
        locals_ = []
        for i, (x, y) in enumerate(data):
            cc = torch.as_tensor(counts[i], dtype=torch.float64) if calibrated else None
            locals_.append(train(Wg, bg, x, y, steps, cc))
            models[f"client {i + 1} local ({name})"] = locals_[-1]
        weights = counts.sum(1) / counts.sum()
        models[f"average of local models ({name})"] = (
            sum(w * m[0] for w, m in zip(weights, locals_)), sum(w * m[1] for w, m in zip(weights, locals_)))
        W, b = W0, b0
        for _ in range(rounds):
            outs = [train(W, b, x, y, steps, torch.as_tensor(counts[i], dtype=torch.float64) if calibrated else None)
                    for i, (x, y) in enumerate(data)]
            W = sum(w * o[0] for w, o in zip(weights, outs))
            b = sum(w * o[1] for w, o in zip(weights, outs))
        models[f"FedAvg, {rounds} rounds ({name})"] = (W, b)

    tx, ty = tensors(test_x, test_y)
    acc_rows = []
    for name, (W, b) in models.items():
        pred = (tx @ W.T + b).argmax(1)
        dist = float(torch.sqrt(((W - Wg) ** 2).sum() + ((b - bg) ** 2).sum()))
        for c in range(K):
            mask = ty == c
            acc_rows.append({"model": name, "class": c, "accuracy": 100.0 * float((pred[mask] == c).double().mean()),
                             "distance_to_global_optimum": dist})
    points = pd.DataFrame([{"x": x0, "y": x1, "label": int(lab), "client": i + 1}
                           for i, (x, y) in enumerate(clients) for (x0, x1), lab in zip(x, y)])
    return ToyResult(points, {k: {"W": v[0].numpy(), "b": v[1].numpy()} for k, v in models.items()},
                     pd.DataFrame(acc_rows), counts)


# ----------------------------------------------------------------------------- Synthetic(α, β)
def synthetic_alpha_effect(profile: Profile | str | None = None, *, seed: int = 0) -> pd.DataFrame:
    """For each (α, β): does the generated data change with α?

    Generates Synthetic(α, β) with the same seed for every α and compares with
    α = the first α: fraction of identical training labels, largest |x
    difference|, and the label skew (mean per-client entropy of the label
    distribution, in bits; lower = more skewed) and the number of samples."""
    from ...data import synthetic

    prof = PAPER.profile(profile)
    opts = prof.experiment("synthetic_alpha")
    m = int(opts.get("num_clients", 100))
    alphas, betas = opts.get("alphas", (0.0, 0.5, 1.0)), opts.get("betas", (0.0, 0.5, 1.0))
    rows = []
    for beta in betas:
        ref = synthetic(float(alphas[0]), float(beta), m, seed)
        for alpha in alphas:
            d = synthetic(float(alpha), float(beta), m, seed)
            ent = []
            for idx in d.client_indices:
                p = np.bincount(d.train_y.numpy()[idx], minlength=d.num_classes) / max(len(idx), 1)
                ent.append(-(p[p > 0] * np.log2(p[p > 0])).sum())
            rows.append({"alpha": float(alpha), "beta": float(beta), "reference_alpha": float(alphas[0]),
                         "train_samples": int(len(d.train_y)),
                         "labels_identical_to_reference": float((d.train_y == ref.train_y).double().mean()),
                         "max_abs_x_difference": float((d.train_x - ref.train_x).abs().max()),
                         "mean_client_label_entropy_bits": float(np.mean(ent))})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- stand-in check (§5.4 on CIFAR-10)
STAND_IN, ON_CIFAR10 = "stand-in", "CIFAR-10"


def stand_in_cells(profile: Profile | str | None = None) -> list[dict]:
    """Is the profile's stand-in for CIFAR-10 faithful?  Each of the experiment's
    ``settings`` (Tables 1-2's CIFAR-10 columns, ``"cifar10_iid"`` for Fig. 1's
    IID reference, FedAvg only) × ``methods`` is run twice: on the stand-in,
    with exactly the configuration of its Table 1/2 (or Fig. 1) cell so that the
    store shares the run, and on CIFAR-10 itself, the same configuration with
    the experiment's ``overrides`` (e.g. a smaller model).  Cells are labelled
    ``trained_on`` = :data:`STAND_IN` / :data:`ON_CIFAR10`.  Empty when the
    profile trains on CIFAR-10 itself (nothing to check)."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("stand_in")
    if not opts or prof.dataset("cifar10") in (None, "cifar10"):
        return []
    overrides = Profile._exp_overrides(opts, "image")
    cells = []
    for key in opts.get("settings", ()):
        skew = _skew_params(key)
        iid = skew["partition"] == "iid"
        source = "fig1" if iid else ("table1" if skew["partition"] == "dirichlet" else "table2")
        for method in ("fedavg",) if iid else opts.get("methods", ("fedavg", "fedlc")):
            base = ({**paper.SETUP, "dataset": "cifar10", **skew, "method": method} if iid
                    else paper.table(source).config(method, key))
            stand_in, _ = decide(prof, base, source)
            for trained_on, cfg in ((STAND_IN, stand_in), (ON_CIFAR10, {**stand_in, "dataset": "cifar10", **overrides})):
                cells.append({"setting": skew_label(key), "column": key, "source": source, "method": method,
                              "trained_on": trained_on, "config": cfg, "note": ""})
    return cells


def stand_in_comparison(grid) -> tuple[pd.DataFrame, pd.DataFrame]:
    """From the grid of :func:`stand_in_cells`: ``(accuracy, effects)``.

    ``accuracy``: one row per (setting, method) with the paper's value (Tables
    1-2; NaN for IID) and ours (mean, std over seeds) on the stand-in and on
    CIFAR-10.  ``effects``: per skewed setting and source, the paper's effects
    measured three ways -- FedLC − FedAvg, FedLC − FedRS (when run) and FedAvg's
    drop from IID (Fig. 1) -- for the paper, the stand-in and CIFAR-10."""
    agg = grid.aggregate(["setting", "column", "source", "method", "trained_on"])
    rows: dict[tuple, dict] = {}
    for r in agg.itertuples(index=False):
        rec = rows.setdefault((r.setting, r.column, r.source, r.method),
                              {"setting": r.setting, "column": r.column, "source": r.source, "method": r.method})
        rec[r.trained_on], rec[r.trained_on + " std"] = r.ours_mean, r.ours_std
    acc = pd.DataFrame(list(rows.values()),
                       columns=["setting", "column", "source", "method", STAND_IN, ON_CIFAR10,
                                STAND_IN + " std", ON_CIFAR10 + " std"])

    reported = {(s, r.column, r.row): r.paper_mean for s in set(acc.source) if s in paper.TABLES
                for r in paper.table(s).frame().itertuples(index=False)}
    acc.insert(4, "paper", [float(reported.get(key, math.nan)) for key in zip(acc.source, acc.column, acc.method)])
    acc["method"] = acc.method.map(lambda m: paper.METHOD_LABELS.get(m, m))

    def value(col, setting, method):
        hit = acc[(acc.setting == setting) & (acc.method == paper.METHOD_LABELS[method])]
        return float(hit[col].iloc[0]) if len(hit) else math.nan

    iid = acc[acc.column.str.endswith("iid")]
    iid_setting = iid.setting.iloc[0] if len(iid) else None
    fig1_drop = paper.FIGURE_CLAIMS["fig1"]["drop_vs_iid"]
    rows = []
    for setting, column, source in acc[["setting", "column", "source"]].drop_duplicates().itertuples(index=False):
        if column.endswith("iid"):
            continue
        effects = [("FedLC − FedAvg", "fedlc", "fedavg"), ("FedLC − FedRS", "fedlc", "fedrs")]
        for effect, a, b in effects:
            rec = {"setting": setting, "effect": effect}
            for col in ("paper", STAND_IN, ON_CIFAR10):
                rec[col] = value(col, setting, a) - value(col, setting, b)
            if not all(math.isnan(rec[c]) for c in (STAND_IN, ON_CIFAR10)):
                rows.append(rec)
        if iid_setting is not None:
            rec = {"setting": setting, "effect": "FedAvg drop from IID (Fig. 1)",
                   "paper": fig1_drop.get(column.split("_", 1)[1], math.nan)}
            for col in (STAND_IN, ON_CIFAR10):
                rec[col] = value(col, iid_setting, "fedavg") - value(col, setting, "fedavg")
            rows.append(rec)
    effects = pd.DataFrame(rows, columns=["setting", "effect", "paper", STAND_IN, ON_CIFAR10])
    if len(effects):
        both = effects[STAND_IN].notna() & effects[ON_CIFAR10].notna()
        effects["same sign"] = np.where(both, np.sign(effects[STAND_IN]) == np.sign(effects[ON_CIFAR10]), None)
    return acc, effects


def stand_in_findings(effects: pd.DataFrame, stand_in_label: str) -> list[str]:
    """Plain-language lines from :func:`stand_in_comparison`'s ``effects``."""
    out = []
    for effect, grp in effects.groupby("effect", sort=False):
        parts = ", ".join(f"{r.setting}: {r[ON_CIFAR10]:+.2f} (stand-in {r[STAND_IN]:+.2f}"
                          + ("" if pd.isna(r.paper) else f", paper {r.paper:+.2f}") + ")"
                          for _, r in grp.iterrows())
        agree = grp["same sign"].dropna()
        out.append(f"stand-in check, {effect} on CIFAR-10 itself (pp): {parts}; the sign agrees with the "
                   f"{stand_in_label} stand-in in {int(agree.astype(bool).sum())} of {len(agree)}")
    return out


# ------------------------------------------------------------------ the notebooks' tables
# Each function below computes one table of a notebook from its Context ``ctx`` (and the frames
# of earlier cells), saves it (``ctx.save_table``) and returns it; the figures are in :mod:`.plots`.

def fig1_frame(grid) -> pd.DataFrame:
    """Fig. 1: FedAvg's accuracy per setting (in the paper's order) and its drop from IID."""
    fig1 = grid.aggregate(["setting", "kind", "order"]).sort_values("order").reset_index(drop=True)
    iid = fig1.loc[fig1.kind == "IID", "ours_mean"]
    fig1["drop_vs_iid"] = (iid.iloc[0] - fig1.ours_mean) if len(iid) else np.nan
    return fig1


def fig1_claims(ctx, fig1: pd.DataFrame) -> pd.DataFrame:
    """Fig. 1: the two accuracy drops the paper quotes in §1, against ours."""
    claims = paper.FIGURE_CLAIMS["fig1"]["drop_vs_iid"]
    ours_drop = {r.setting: r.drop_vs_iid for r in fig1.itertuples()}
    table = pd.DataFrame([
        {"claim": "IID − Q(α=2)", "paper_pp": claims["alpha2"], "ours_pp": ours_drop.get("Q(α=2)", np.nan)},
        {"claim": "IID − D(β=0.2)", "paper_pp": claims["beta0.2"], "ours_pp": ours_drop.get("D(β=0.2)", np.nan)},
    ])
    table["delta"] = table.ours_pp - table.paper_pp
    ctx.save_table(table, "fig1_drop_vs_iid", experiment="fig1",
                   title="Fig. 1: accuracy drop of FedAvg vs IID (percentage points)",
                   caption="The paper quotes these two drops in §1; no std is given.",
                   findings=[f"FedAvg loses {r.ours_pp:.1f} pp vs IID at {r.claim.split('− ')[1]} "
                             f"(paper: {r.paper_pp:.2f})" for r in table.itertuples() if pd.notna(r.ours_pp)])
    return table


def fig2_by_role(ctx, result, ba: pd.DataFrame) -> pd.DataFrame:
    """Fig. 2: mean per-class accuracy before/after the local update by class role."""
    by_role = (ba.groupby("role")[["acc_before", "acc_after"]].mean().reindex(["majority", "minority", "missing"])
               .assign(change=lambda d: d.acc_after - d.acc_before).reset_index())
    by_role["classes"] = ba.groupby("role").size().reindex(by_role.role).values
    ctx.save_table(by_role, "fig2_accuracy_by_role", experiment="fig2",
                   title="Fig. 2: mean per-class test accuracy (%) before/after the local update, by class role",
                   caption="Averaged over (client, class) pairs of each role.", datasets=[result.config.dataset],
                   findings=[f"after one local epoch, {r.role} classes go from {r.acc_before:.1f}% to "
                             f"{r.acc_after:.1f}% (paper: majority up, minority near zero, missing zero)"
                             for r in by_role.itertuples() if pd.notna(r.acc_after)])
    return by_role


def toy_panels(toy: "ToyResult") -> list[list[str]]:
    """Fig. 3's panels: the two clients' local models and FedAvg, with CE (first row) and FedLC."""
    def fedavg(loss):
        return next(k for k in toy.models if k.startswith("FedAvg") and f"({loss})" in k)

    return [["client 1 local (CE)", "client 2 local (CE)", fedavg("CE")],
            ["client 1 local (FedLC)", "client 2 local (FedLC)", fedavg("FedLC")]]


def fig3_toy_table(ctx, toy: "ToyResult") -> pd.DataFrame:
    """Fig. 3: per-class accuracy of the toy models on a balanced test set."""
    panels = toy_panels(toy)
    toy_table = toy.accuracy.pivot_table(index="model", columns="class", values="accuracy").add_prefix("class ")
    toy_table["mean"] = toy_table.mean(axis=1)
    toy_table["distance to global optimum"] = toy.accuracy.groupby("model").distance_to_global_optimum.first()
    toy_table = toy_table.loc[list(toy.models)].reset_index()
    mean = toy_table.set_index("model")["mean"]
    ctx.save_table(toy_table, "fig3_toy_accuracy", experiment="fig3",
                   title="Fig. 3: per-class accuracy (%) of the toy models on a balanced test set",
                   caption="Per-class accuracy of each toy model on a balanced test set; client 1 has no class 3, "
                           "client 2 no class 0.",
                   findings=[f"toy: FedAvg reaches {mean[panels[0][2]]:.1f}% balanced accuracy with CE and "
                             f"{mean[panels[1][2]]:.1f}% with FedLC's loss (global optimum "
                             f"{mean['global optimum']:.1f}%)"])
    return toy_table


#: The two losses of the deviation-bound study.
LOSS_NAMES = {"ce": "softmax CE (Definition 3)", "fedlc": "FedLC calibrated loss (Theorem 3)"}


def _deviation_rates(d: pd.DataFrame) -> pd.Series:
    cond = d[d.condition]
    rest = d[~d.condition]
    return pd.Series({
        "pair-steps": len(d), "n_j/n_r > D_jr (%)": 100 * d.condition.mean(),
        "deviated (%)": 100 * d.deviated.mean(), "predicted by Eq. 17 (%)": 100 * d.predicted_deviation.mean(),
        "prediction = measurement (%)": 100 * (d.predicted_deviation == d.deviated).mean(),
        "deviated when n_j/n_r > D (%)": 100 * cond.deviated.mean() if len(cond) else np.nan,
        "deviated when n_j/n_r ≤ D (%)": 100 * rest.deviated.mean() if len(rest) else np.nan,
        "median D_jr": d.D.median(),
    })


def deviation_summary(ctx, start, dev: pd.DataFrame) -> pd.DataFrame:
    """§3-4: how often Theorem 1's condition holds, how often the update deviated, per loss."""
    summary = dev[dev.D_valid].groupby("loss").apply(_deviation_rates).rename(index=LOSS_NAMES).reset_index()
    summary["pair-steps"] = summary["pair-steps"].astype(int)
    ce = dev[(dev.loss == "ce") & dev.D_valid]
    ratio_cal = ce.D_cal / ce.D_plain
    trend = np.corrcoef(np.log(ce.n_r), np.log(ratio_cal))[0, 1] if len(ce) > 2 and ce.n_r.nunique() > 1 else np.nan
    findings = [f"with {r.loss.split(' (')[0]}, {r['deviated (%)']:.0f}% of the (pair, step) updates deviated; "
                f"{r['deviated when n_j/n_r > D (%)']:.0f}% when n_j/n_r > D_jr vs "
                f"{r['deviated when n_j/n_r ≤ D (%)']:.0f}% otherwise; "
                f"Eq. 17's sign prediction matched the measurement in {r['prediction = measurement (%)']:.0f}%"
                for _, r in summary.iterrows()]
    findings.append(f"calibration changes D_jr by a factor D_cal/D_plain of median {ratio_cal.median():.2f} "
                    f"(range {ratio_cal.min():.2f}–{ratio_cal.max():.2f}) on the same model; correlation of "
                    f"log(D_cal/D_plain) with log n_r: {trend:+.2f} (negative = calibration enlarges D_jr most for "
                    "the rarest classes, as Theorem 3 says)")
    ctx.save_table(summary, "deviation_summary", experiment="deviation",
                   title="§3–4: Theorem 1's condition n_j/n_r > D_jr and the measured deviation, CE vs FedLC",
                   caption="Rates over all (majority, minority) pairs and local steps of the client.",
                   datasets=[start.config.dataset], findings=findings)
    return summary


def deviation_by_minority_size(ctx, start, dev: pd.DataFrame) -> pd.DataFrame:
    """Theorem 3: D_jr before and after calibration by minority class size (medians)."""
    by_size = dev[dev.loss == "ce"].assign(D_cal_over_D_plain=lambda d: d.D_cal / d.D_plain)
    by_size = by_size.groupby("n_r")[["ratio", "D_plain", "D_cal", "D_cal_over_D_plain"]].median().reset_index()
    ctx.save_table(by_size, "deviation_by_minority_size", experiment="deviation",
                   title="Theorem 3: D_jr before (plain) and after calibration, by minority class size n_r (medians)",
                   caption="Same model and data; D_cal uses FedLC's offsets τ n_y^(-1/4).",
                   datasets=[start.config.dataset])
    return by_size


@dataclass
class Calibration:
    """§4's loss variants: the grid, its aggregate ``var``, the accuracy ``table`` (variant ×
    setting), ``variants`` (with the gains over FedAvg) and the τ values as text."""
    grid: Any
    var: pd.DataFrame
    table: pd.DataFrame
    variants: pd.DataFrame
    tau_text: str


def calibration_table(ctx, calib: Calibration) -> pd.DataFrame:
    """§4: saves the variants table with its findings (the best variant, Eq. 7 as printed, the
    diverged runs)."""
    from ...repro.grid import diverged_lines

    variants, table = calib.variants, calib.table
    best = variants[~variants.variant.isin(["fedavg", "fedrs"])].sort_values("mean gain over FedAvg", ascending=False)
    findings = []
    if len(best) and best["mean gain over FedAvg"].notna().any():
        b = best.iloc[0]
        findings.append(f"best FedLC variant: {b.label} ({b['mean gain over FedAvg']:+.2f} pp over FedAvg on average "
                        f"over {', '.join(table.columns)})")
        eq7 = variants.set_index("variant")["mean gain over FedAvg"].get("eq7_printed")
        std = variants.set_index("variant")["mean gain over FedAvg"].get("standard")
        if eq7 is not None and std is not None and pd.notna(eq7) and pd.notna(std):
            findings.append(f"Eq. 7 as printed: {eq7:+.2f} pp over FedAvg vs {std:+.2f} pp for the standard "
                            "(full softmax) form")
    findings += [f"{line} (a broken model's accuracy: left out of the table)"
                 for line in diverged_lines(calib.var, ["label", "setting"])]
    ctx.save_table(variants, "calibration_variants", experiment="calibration",
                   title="§4: FedLC loss variants vs FedAvg and FedRS (test accuracy %)",
                   caption=f"Same federated setting for every row; {calib.tau_text}.",
                   datasets=calib.grid.runs.dataset_used.dropna().unique(),
                   seeds=ctx.profile.seeds_for("calibration"), findings=findings)
    return variants


def fig4_counts_table(ctx, counts: dict, seed: int) -> pd.DataFrame:
    """Fig. 4: samples per class and client, saved as a table."""
    rows = [{"setting": name, "client": j, **{f"class {c}": int(v) for c, v in enumerate(row)}, "total": int(row.sum())}
            for name, m in counts.items() for j, row in enumerate(m)]
    table = pd.DataFrame(rows)
    ctx.save_table(table, "fig4_partitions_cifar10_counts", experiment="fig4",
                   title="Fig. 4: samples per class and client (CIFAR-10, 5 clients)", floatfmt=".0f",
                   datasets=["cifar10"] if counts else [], seeds=[seed], placeholder=not counts)
    return table


def fig6_per_class(ba: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6: per method and class, the accuracy before, after the local update (mean over the
    clients) and after aggregation."""
    return (ba.groupby(["method", "class"])
            .agg(before=("acc_before", "first"), after_local_update=("acc_after", "mean"),
                 after_aggregation=("acc_aggregated", "first"))
            .reset_index())


def fig6_summary(ctx, start, ba: pd.DataFrame, per_class: pd.DataFrame) -> pd.DataFrame:
    """Fig. 6: mean per-class accuracy before, after the local update (also by class role) and
    after aggregation."""
    fig6 = per_class.groupby("method")[["before", "after_local_update", "after_aggregation"]].mean().reset_index()
    role = ba.groupby(["method", "role"]).acc_after.mean().unstack().add_prefix("after local update, ").reset_index()
    fig6 = fig6.merge(role, on="method")
    f = fig6.set_index("method")
    ctx.save_table(fig6, "fig6_summary", experiment="fig6",
                   title="Fig. 6: mean per-class accuracy (%) before, after the local update, after aggregation",
                   caption="Local-update columns average over clients; the role columns split the clients' classes "
                           "into majority / minority / missing (Definition 2).", datasets=[start.config.dataset],
                   findings=[f"Fig. 6: after one local epoch the clients' models average "
                             f"{f.after_local_update['fedavg']:.1f}% (FedAvg) vs {f.after_local_update['fedlc']:.1f}% "
                             f"(FedLC); after aggregation {f.after_aggregation['fedavg']:.1f}% vs "
                             f"{f.after_aggregation['fedlc']:.1f}% (global model before: {f.before['fedavg']:.1f}%)"])
    return fig6


def fig7_separation(ctx, start, scores: pd.DataFrame) -> pd.DataFrame:
    """Fig. 7: how well the missing / minority / majority classes separate, saved as a table."""
    from ...repro.figures import _label

    ctx.save_table(scores, "fig7_separation", experiment="fig7",
                   title="Fig. 7: separation of the missing / minority / majority classes in feature space",
                   datasets=[start.config.dataset], floatfmt=".3f",
                   findings=[f"Fig. 7: silhouette of the three classes' features {r.silhouette_features:.3f} with "
                             f"{_label(r.method, PAPER)}" for r in scores.itertuples()])
    return scores
