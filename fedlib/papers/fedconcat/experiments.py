"""FedConcat's experiments as functions the notebooks call.

Each function takes a profile (or its name) and returns data; the notebooks
only plot and save.  Runs go through :func:`fedlib.run` and the results
store, so the notebooks that read Table 1's runs (the budget, the FedLC
comparison, the clusters, Figs. 3-4) share them: their cells are exactly
Table 1's configurations (:func:`table1_config`).

* :func:`fig1_two_clients` -- Fig. 1 measured: two clients' local models and their average.
* :func:`budget_table`, :func:`budget_variants`, :func:`accuracy_at_rounds`,
  :func:`budget_sensitivity`, :func:`ranking_summary` -- the baselines' round
  budget ("same communication cost") and how the ranking changes with it.
* :func:`fedlc_gaps`, :func:`fedlc_companion_gaps`, :func:`fedlc_findings` --
  FedLC − FedAvg as the FedLC paper claims it, as FedConcat's Table 1 measures
  it, as measured here, and as the FedLC companion measured it.
* :func:`load_runs`, :func:`cluster_view`, :func:`cluster_agreement` -- the
  clients' label distributions ordered by cluster.
* :func:`fig3_cells` -- with vs without clustering; :func:`fig4_cells`,
  :func:`communication_curves` -- the baselines on FedConcat's final architecture.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from . import PAPER
from . import reported as paper
from .analysis import budget_of, model_sizes, rounds_for_model
from ...repro.gate import decide
from ...repro.profiles import Profile

__all__ = [
    "table1_config", "FIG1_MODELS", "FIG1_TESTS", "fig1_two_clients", "disjoint_pair", "budget_table", "budget_variants",
    "accuracy_at_rounds", "budget_sensitivity", "ranking_summary", "BASELINES", "FEDLC_EQUIVALENTS", "fedlc_gaps",
    "fedlc_companion_gaps", "fedlc_findings", "load_runs", "cluster_view", "cluster_agreement", "fig3_cells",
    "fig4_cells", "fig4_rounds", "communication_curves", "partition_label",
    "budget_rounds_table", "budget_sensitivity_table", "third_party_gaps", "clusters_summary", "fig3_table",
    "fig4_table",
]

#: The baselines of Tables 1-2 (trained for the round budget; FedConcat and Centralized are not).
BASELINES = ("fedavg", "fedprox", "moon", "fedrs", "fedlc")
_FEDCONCAT = ("fedconcat", "fedconcat_id")


def partition_label(column: str) -> str:
    """``"fmnist_dir0.1"`` -> ``"Dir(0.1)"``, ``"n100_cifar10_c2"`` -> ``"#C=2"``."""
    kind = column.rsplit("_", 1)[-1]
    return f"#C={kind[1:]}" if kind.startswith("c") else f"Dir({kind[3:]})"


def table1_config(profile: Profile | str | None, column: str, method: str, **extra: Any) -> dict | None:
    """Table 1's configuration of the row ``method`` in ``column`` under the profile (None: not run in
    it), with ``extra`` on top; without ``extra`` it is exactly the table's cell, so the store shares
    the run."""
    cfg, _ = decide(PAPER.profile(profile), paper.TABLE1.config(method, column), "table1")
    return None if cfg is None else {**cfg, **extra}


# ----------------------------------------------------------------------------- Fig. 1
#: The models and test sets of Fig. 1, in plot order.
FIG1_MODELS = ("initial model", "client A's local model", "client B's local model", "average of the two (FedAvg)")
FIG1_TESTS = ("client A's classes", "client B's classes", "all classes")


def disjoint_pair(class_counts: np.ndarray) -> tuple[int, int]:
    """The two clients whose label distributions overlap least (Σ_c min(P_a(c), P_b(c)); 0 = disjoint
    classes), the lowest indices first among ties."""
    p = np.asarray(class_counts, dtype=np.float64)
    p = p / p.sum(1, keepdims=True)
    best = None
    for a in range(len(p)):
        for b in range(a + 1, len(p)):
            overlap = float(np.minimum(p[a], p[b]).sum())
            if best is None or overlap < best[0] - 1e-12:
                best = (overlap, a, b)
    if best is None:
        raise ValueError("Fig. 1 needs at least two clients")
    return best[1], best[2]


def fig1_two_clients(profile: Profile | str | None = None, *, seed: int | None = None) -> tuple[pd.DataFrame, dict]:
    """Fig. 1 measured: from the shared initial model, two clients of Table 1's partition (the
    experiment's ``column``) with the least overlapping classes each train E local epochs (the
    experiment's ``local_epochs``, default the paper's 10; the first round of FedAvg), and their
    n_k-weighted average is formed.  Each model's test accuracy (%) on client A's classes, client B's
    classes and all classes.

    Returns ``(accuracy, info)``: accuracy (model, test set, accuracy) and info (clients, their
    classes and sample counts, the configuration)."""
    from ... import tree
    from ...config import Config
    from ...simulation import evaluate, prepare, single_thread, train_locally

    prof = PAPER.profile(profile)
    opts = prof.experiment("fig1")
    column = opts.get("column", "cifar10_c2")
    cfg = table1_config(prof, column, "fedavg")
    if cfg is None and not opts.get("trains", True):  # the table's cell needs a GPU; one round of two clients does not
        cfg, _ = decide(prof, paper.TABLE1.config("fedavg", column), "fig1")
    if cfg is None:
        raise LookupError("Fig. 1's dataset is not run in this profile")
    cfg.update(local_epochs=int(opts.get("local_epochs", paper.SETUP["local_epochs"])),
               seed=int(prof.seeds[0] if seed is None else seed), rounds=1)
    config = Config.from_dict(cfg)
    with single_thread():
        exp = prepare(config)
        a, b = disjoint_pair(exp.class_counts)
        state = exp.initial_state()
        params = state.params
        outs = train_locally(exp, state, [a, b], 1, 1)  # FedAvg's first round, its mini-batches
        n = [o.num_samples for o in outs]
        average = tree.weighted_sum([o.local for o in outs], [k / sum(n) for k in n])  # FedAvg's aggregation
        models = dict(zip(FIG1_MODELS, (params, outs[0].local, outs[1].local, average)))
        ty = exp.data.test_y
        classes = {k: np.flatnonzero(exp.class_counts[k]).tolist() for k in (a, b)}
        tests = dict(zip(FIG1_TESTS, (classes[a], classes[b], list(range(exp.data.num_classes)))))
        rows = []
        for name, p in models.items():
            _, per_class = evaluate(exp.model, p, exp.data.test_x, ty, exp.data.num_classes)
            counts = np.bincount(ty.numpy(), minlength=exp.data.num_classes)
            for test, cls in tests.items():
                acc = float(np.nansum(per_class[cls] * counts[cls]) / counts[cls].sum())
                rows.append({"model": name, "test set": test, "accuracy": 100.0 * acc})
    info = {"clients": [a, b], "classes": {"A": classes[a], "B": classes[b]},
            "samples": {"A": int(exp.class_counts[a].sum()), "B": int(exp.class_counts[b].sum())},
            "config": config.to_dict()}
    return pd.DataFrame(rows), info


# ----------------------------------------------------------------------------- the round budget
def budget_table(profile: Profile | str | None = None,
                 datasets: Sequence[str] = ("fmnist", "cifar10", "svhn")) -> pd.DataFrame:
    """FedConcat's communication per client in rounds of one cluster model, by stage, at the paper's
    K, T_e, T_c and at the profile's, for each dataset's model (notes §2)."""
    from ...data import DATASETS

    prof = PAPER.profile(profile)
    scales = [("paper", {})] + ([(prof.name, prof.image)] if prof.name != "paper" else [])
    rows = []
    for scale, image in scales:
        for ds in datasets:
            cfg = {"dataset": ds, "model": paper.SETUP["model"],
                   **{k: image.get(k, paper.SETUP[k]) for k in ("num_clusters", "encoder_rounds", "classifier_rounds")}}
            spec = DATASETS[ds]
            sizes = model_sizes(cfg["model"], spec.num_classes, tuple(spec.input_shape))
            b = budget_of(cfg)
            head = cfg["num_clusters"] * sizes["feature_dim"] * spec.num_classes + spec.num_classes
            rows.append({"scale": scale, "dataset": paper.DATASET_LABELS[ds], "model": cfg["model"],
                         "M (one model)": sizes["model_params"], "|E| (encoder)": sizes["encoder_params"],
                         "|C| (classifier)": head, "K": cfg["num_clusters"], "T_e": cfg["encoder_rounds"],
                         "T_c": cfg["classifier_rounds"], "stage 2": b.encoder_rounds, "broadcast": b.broadcast,
                         "stage 3": b.classifier, "total": b.total, "R (baseline rounds)": b.rounds})
    return pd.DataFrame(rows)


def budget_variants(config: dict, variants: dict) -> pd.DataFrame:
    """The baselines' round budget of a configuration under each way of counting
    (``variants``: name -> :func:`.analysis.budget_of` keywords)."""
    rows = []
    for name, kw in variants.items():
        b = budget_of(config, **kw)
        rows.append({"variant": name, "total": b.total, "rounds": b.rounds})
    return pd.DataFrame(rows)


def accuracy_at_rounds(histories: pd.DataFrame, rounds: int, by: Sequence[str] = ("column", "method")) -> pd.DataFrame:
    """Test accuracy (%) at round ``rounds`` of every run in ``histories`` (grid histories of
    one-stage runs), averaged over seeds per ``by``; NaN where a run was not evaluated at that round
    (it stopped earlier)."""
    by = list(by)
    hit = histories[histories["round"] == rounds]
    out = hit.groupby(by, sort=False).test_accuracy.mean().rename("accuracy").reset_index()
    keys = histories[by].drop_duplicates()
    return keys.merge(out, on=by, how="left")


def budget_sensitivity(grid, variants: dict, configs: dict[str, dict]) -> pd.DataFrame:
    """How Table 1's comparison reads under other round budgets.

    ``grid``: Table 1's grid (labels row, column, method); ``configs``: column -> a configuration of
    that column (its K, T_e, T_c and model set the budget).  For each column and variant: the
    variant's R, each baseline's accuracy at round R of its run (NaN beyond the run), FedConcat's and
    FedConcat-ID's final accuracy (their communication is the reference), and each method's rank
    (1 = best) among those with a value.  One row per (column, variant, method)."""
    runs = grid.ok()
    hist = grid.histories
    if "stage" in hist:
        hist = hist[hist["stage"].isna()]
    rows = []
    for column, cfg in configs.items():
        for name, kw in variants.items():
            r = budget_of(cfg, **kw).rounds
            acc = {}
            base = hist[(hist.column == column) & hist.method.isin(BASELINES)]
            for rec in accuracy_at_rounds(base, r).itertuples(index=False):
                acc[rec.method] = rec.accuracy
            for m in _FEDCONCAT:
                final = runs[(runs.column == column) & (runs.method == m)].accuracy
                if len(final):
                    acc[m] = float(final.mean())
            ranked = pd.Series(acc, dtype=float).dropna().rank(ascending=False, method="min")
            for m, a in acc.items():
                rows.append({"column": column, "variant": name, "rounds": r, "method": m, "accuracy": a,
                             "rank": float(ranked.get(m, math.nan))})
    return pd.DataFrame(rows, columns=["column", "variant", "rounds", "method", "accuracy", "rank"])


def ranking_summary(sensitivity: pd.DataFrame) -> pd.DataFrame:
    """Per column and variant: R, FedConcat's rank among the methods measured at that budget, the best
    baseline and FedConcat − best baseline (pp), and how many baselines reached round R."""
    rows = []
    for (column, variant), g in sensitivity.groupby(["column", "variant"], sort=False):
        base = g[g.method.isin(BASELINES)].dropna(subset=["accuracy"])
        fc = g[g.method == "fedconcat"]
        best = base.loc[base.accuracy.idxmax()] if len(base) else None
        fc_acc = float(fc.accuracy.iloc[0]) if len(fc) else math.nan
        rows.append({"column": column, "variant": variant, "rounds": int(g.rounds.iloc[0]),
                     "baselines measured": f"{len(base)}/{len(BASELINES)}",
                     "FedConcat rank": fc["rank"].iloc[0] if len(fc) else math.nan,
                     "best baseline": paper.METHOD_LABELS[best.method] if best is not None else "—",
                     "best baseline accuracy": float(best.accuracy) if best is not None else math.nan,
                     "FedConcat − best baseline": fc_acc - float(best.accuracy) if best is not None else math.nan})
    return pd.DataFrame(rows, columns=["column", "variant", "rounds", "baselines measured", "FedConcat rank",
                                       "best baseline", "best baseline accuracy", "FedConcat − best baseline"])


def budget_configs(profile, grid1) -> dict[str, dict]:
    """The budget study's columns (the experiment's ``columns`` where Table 1 ran) whose FedAvg cell this
    profile configures, each with that configuration (its K, T_e, T_c and model set the budget).  On a CPU the
    paper profile's Table 1 baselines need a GPU: then none."""
    prof = PAPER.profile(profile)
    ran = set(grid1.ok().column)
    configs = {c: table1_config(prof, c, "fedavg") for c in prof.setting("budget", "columns", ()) if c in ran}
    return {c: cfg for c, cfg in configs.items() if cfg is not None}


def budget_rounds(configs: dict[str, dict], variants: dict) -> pd.DataFrame:
    """R of every way of counting (:func:`budget_variants`) per column of ``configs``; empty without one."""
    frames = [budget_variants(cfg, variants).assign(column=c) for c, cfg in configs.items()]
    return (pd.concat(frames, ignore_index=True) if frames
            else pd.DataFrame(columns=["variant", "total", "rounds", "column"]))


# ----------------------------------------------------------------------------- FedLC by a third party
#: FedConcat's partitions beside the FedLC paper's: (FedLC table, FedLC column suffix).  #C=2 is set beside
#: Q(α=2) (two shards per client: two labels, FedLC §5.1); #C=3 has no counterpart (α ∈ {2, 4, 6, 8}).
FEDLC_EQUIVALENTS = {"c2": ("table2", "alpha2"), "dir0.1": ("table1", "beta0.1"), "dir0.5": ("table1", "beta0.5")}
CLAIM, THIRD_PARTY, OURS, COMPANION = ("FedLC paper (claim)", "FedConcat Table 1 (third party)",
                                       "ours, FedConcat's setting", "ours, FedLC's setting (FedLC companion)")


def _gap(table, row_a: str, row_b: str, column: str) -> float:
    a, b = table.value(row_a, column), table.value(row_b, column)
    return math.nan if a is None or b is None else a.mean - b.mean


def fedlc_gaps(comparison: pd.DataFrame | None = None) -> pd.DataFrame:
    """FedLC − FedAvg (pp) per Table 1 setting (dataset, partition): as the FedLC paper claims it
    (its Tables 1-2, at the equivalent skew, :data:`FEDLC_EQUIVALENTS`), as FedConcat's Table 1
    measures it, and, given Table 1's ``comparison`` (:func:`fedlib.repro.compare.reproduce_table`), as
    measured here (NaN where not run).  The FedLC paper's own setting is in ``fedlc_setting``."""
    from ..fedlc import reported as fedlc

    ours = {}
    if comparison is not None:
        pivot = comparison.pivot_table(index="column", columns="row", values="ours_mean")
        for column in pivot.index:
            if {"fedlc", "fedavg"} <= set(pivot.columns):
                ours[column] = float(pivot.loc[column, "fedlc"] - pivot.loc[column, "fedavg"])
    rows = []
    for col in paper.TABLE1.columns:
        kind = col.key.split("_", 1)[1]
        equivalent = FEDLC_EQUIVALENTS.get(kind)
        claim, setting = math.nan, "—"
        if equivalent is not None and col.dataset in {c.dataset for t in fedlc.TABLES.values() for c in t.columns}:
            tid, suffix = equivalent
            key = f"{col.dataset}_{suffix}"
            t = fedlc.table(tid)
            if key in {c.key for c in t.columns}:
                claim, setting = _gap(t, "fedlc", "fedavg", key), f"{t.column(key).label} (FedLC Table {t.number})"
        rows.append({"column": col.key, "dataset": paper.DATASET_LABELS[col.dataset],
                     "partition": partition_label(col.key), "fedlc_setting": setting, CLAIM: claim,
                     THIRD_PARTY: _gap(paper.TABLE1, "fedlc", "fedavg", col.key), OURS: ours.get(col.key, math.nan)})
    return pd.DataFrame(rows)


def fedlc_companion_gaps(folder: str | Path | None) -> pd.DataFrame | None:
    """FedLC − FedAvg as the FedLC companion measured it in FedLC's own setting (its stand-in check,
    ``stand_in_effects.csv`` in its output folder ``folder``): rows (dataset, partition, value) for
    its FMNIST stand-in and for CIFAR-10; None when that output is absent."""
    path = Path(folder) / "stand_in_effects.csv" if folder is not None else None
    if path is None or not path.exists():
        return None
    eff = pd.read_csv(path)
    eff = eff[eff.effect == "FedLC − FedAvg"]
    to_partition = {"Q(α=2)": "#C=2", "D(β=0.1)": "Dir(0.1)", "D(β=0.5)": "Dir(0.5)"}
    rows = []
    for _, r in eff.iterrows():
        if r["setting"] in to_partition:  # its stand-in is FMNIST (the FedLC quick profile), then CIFAR-10 itself
            rows += [{"dataset": "FMNIST", "partition": to_partition[r["setting"]], COMPANION: r["stand-in"]},
                     {"dataset": "CIFAR-10", "partition": to_partition[r["setting"]], COMPANION: r["CIFAR-10"]}]
    return pd.DataFrame(rows)


def fedlc_findings(gaps: pd.DataFrame) -> list[str]:
    """Plain-language lines from :func:`fedlc_gaps` (with the companion's column when present)."""
    out = []
    sources = [s for s in (CLAIM, THIRD_PARTY, OURS, COMPANION) if s in gaps and gaps[s].notna().any()]
    for ds, g in gaps.groupby("dataset", sort=False):
        parts = []
        for s in sources:
            v = g[s].dropna()
            if len(v):
                parts.append(f"{s}: {v.mean():+.1f} pp on average over {len(v)} setting{'s' * (len(v) != 1)} "
                             f"({v.min():+.1f} to {v.max():+.1f})")
        if parts:
            out.append(f"FedLC − FedAvg on {ds}: " + "; ".join(parts))
    both = gaps.dropna(subset=[CLAIM, THIRD_PARTY])
    if len(both):
        out.append(f"where both exist ({len(both)} settings), the FedLC paper claims {both[CLAIM].mean():+.1f} pp and "
                   f"FedConcat's Table 1 measures {both[THIRD_PARTY].mean():+.1f} pp: the third party finds "
                   f"{'no' if both[THIRD_PARTY].mean() <= 0 else 'a smaller'} gain")
    for s in (OURS, COMPANION):
        if s in gaps and gaps[s].notna().any():
            v = gaps[s].dropna()
            out.append(f"{s}: FedLC beats FedAvg in {int((v > 0).sum())} of {len(v)} settings measured, by "
                       f"{v.mean():+.1f} pp on average")
    return out


# ----------------------------------------------------------------------------- the clusters
def load_runs(cells: Sequence[dict], store: Any = None) -> dict:
    """The :class:`fedlib.Result` of each cell with a config (run if not in the store), keyed by the
    cell's ``(column, method)``."""
    from ...api import run
    from ...repro.grid import default_store

    store = default_store() if store is None else store
    return {(c["column"], c["method"]): run(c["config"], store=store, progress=False)
            for c in cells if c.get("config") is not None}


def cluster_view(result, class_counts: np.ndarray | None = None) -> pd.DataFrame:
    """A FedConcat(-ID) run's clustered label distributions (``result.label_distributions``: Eq. 2, or
    Eq. 3 for FedConcat-ID) and, given the clients' ``class_counts``, the true ones (Eq. 2), one row per
    client ordered by (cluster, client): columns client, cluster, ``p_<c>`` (clustered) and
    ``true_<c>``."""
    points = np.asarray(result.label_distributions, dtype=np.float64)
    clusters = np.asarray(result.clusters)
    frame = pd.DataFrame(points, columns=[f"p_{c}" for c in range(points.shape[1])])
    if class_counts is not None:
        from ...algorithms.fedconcat import label_distributions

        true = label_distributions(class_counts)
        frame = pd.concat([frame, pd.DataFrame(true, columns=[f"true_{c}" for c in range(true.shape[1])])], axis=1)
    frame.insert(0, "cluster", clusters)
    frame.insert(0, "client", np.arange(len(clusters)))
    return frame.sort_values(["cluster", "client"], kind="stable").reset_index(drop=True)


def cluster_agreement(view: pd.DataFrame, reference_clusters: Sequence[int] | None = None) -> dict:
    """Summary numbers of a :func:`cluster_view`: cluster sizes; with true distributions, the mean
    per-client Pearson correlation between the clustered and the true distribution (1 for Eq. 2) and the
    mean within-cluster spread of the true distributions (mean L1 distance to the cluster's mean); with
    ``reference_clusters`` (per client id), the adjusted Rand index against them."""
    from sklearn.metrics import adjusted_rand_score

    p = view[[c for c in view.columns if c.startswith("p_")]].to_numpy()
    out = {"sizes": view.cluster.value_counts().sort_index().tolist()}
    true_cols = [c for c in view.columns if c.startswith("true_")]
    if true_cols:
        t = view[true_cols].to_numpy()
        r = [np.corrcoef(a, b)[0, 1] if a.std() > 0 and b.std() > 0 else math.nan for a, b in zip(p, t)]
        out["mean_correlation"] = float(np.nanmean(r))
        spread = [np.abs(t[view.cluster.to_numpy() == k] - t[view.cluster.to_numpy() == k].mean(0)).sum(1).mean()
                  for k in sorted(view.cluster.unique())]
        out["within_cluster_l1"] = float(np.mean(spread))
    if reference_clusters is not None:
        ordered = view.sort_values("client")
        out["ari_vs_reference"] = float(adjusted_rand_score(np.asarray(reference_clusters), ordered.cluster))
    return out


# ----------------------------------------------------------------------------- Figs. 3 and 4
def fig3_cells(profile: Profile | str | None = None) -> list[dict]:
    """FedConcat with K-means (Table 1's run) and with random groups
    (``fedconcat_clustering="random"``) in each of the experiment's columns."""
    prof = PAPER.profile(profile)
    cells = []
    for column in prof.setting("fig3", "columns", ()):
        for clustering, label in (("kmeans", "with clustering (K-means)"), ("random", "without (random groups)")):
            cfg = table1_config(prof, column, "fedconcat",
                                **({} if clustering == "kmeans" else {"fedconcat_clustering": "random"}))
            cells.append({"column": column, "partition": partition_label(column), "clustering": label,
                          "method": "fedconcat", "config": cfg, "note": "" if cfg else "not run in this profile"})
    return cells


def fig4_rounds(config: dict, model: str, budget: str) -> int:
    """Rounds of a baseline trained on ``model`` (FedConcat's final architecture) in Fig. 4:
    ``"rounds"``: as many as Table 1's baselines (R); ``"communication"``: FedConcat's
    communication per client in rounds of ``model`` (R·M/M_model, at least 1)."""
    b = budget_of(config)
    if budget == "rounds":
        return b.rounds
    if budget != "communication":
        raise ValueError(f"budget must be 'rounds' or 'communication', got {budget!r}")
    return max(1, int(round(rounds_for_model(b, _model_params(config), _model_params({**config, "model": model})))))


def fig4_cells(profile: Profile | str | None = None) -> list[dict]:
    """Fig. 4: each baseline on FedConcat's final architecture (the experiment's ``model``) for the
    experiment's ``budget``, beside the same baseline on one cluster model (Table 1's run) and FedConcat
    (Table 1's run), in the experiment's ``column``."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("fig4")
    column, model = opts.get("column", "cifar10_c2"), opts.get("model", "concat5_simple_cnn")
    cells = []
    for method in opts.get("methods", BASELINES):
        one = table1_config(prof, column, method)
        big = None if one is None else table1_config(
            prof, column, method, model=model, rounds=fig4_rounds(one, model, opts.get("budget", "rounds")))
        cells.append({"method": method, "architecture": "one cluster model (Table 1)", "config": one})
        cells.append({"method": method, "architecture": "FedConcat's final architecture", "config": big})
    cells.append({"method": "fedconcat", "architecture": "FedConcat", "config": table1_config(prof, column, "fedconcat")})
    return [{**c, "column": column, "note": "" if c["config"] else "not run in this profile"} for c in cells]


def communication_curves(grid, cells: Sequence[dict]) -> pd.DataFrame:
    """Fig. 4 as curves: each run's test accuracy against the parameters one client has sent and
    received so far (millions), from the grid of :func:`fig4_cells` (``cells``): a baseline round
    costs 2·M of its model; FedConcat's whole run costs its budget (one point, its final accuracy)."""
    configs = {(c["method"], c["architecture"]): c["config"] for c in cells if c.get("config")}
    rows = []
    hist = grid.histories
    if len(hist):
        hist = hist[hist.method != "fedconcat"]
        for (method, arch), g in hist.groupby(["method", "architecture"], sort=False):
            m = _model_params(configs[(method, arch)])
            for rnd, acc in g.groupby("round").test_accuracy.mean().items():
                rows.append({"method": method, "architecture": arch, "round": int(rnd),
                             "communication_M": 2.0 * m * rnd / 1e6, "accuracy": float(acc)})
    runs = grid.ok()
    fc = runs[runs.method == "fedconcat"]
    if len(fc):
        cfg = configs[("fedconcat", "FedConcat")]
        rows.append({"method": "fedconcat", "architecture": "FedConcat", "round": math.nan,
                     "communication_M": 2.0 * _model_params(cfg) * budget_of(cfg).total / 1e6,
                     "accuracy": float(fc.accuracy.mean())})
    return pd.DataFrame(rows, columns=["method", "architecture", "round", "communication_M", "accuracy"])


def _model_params(config: dict) -> int:
    from ...data import DATASETS

    spec = DATASETS[config["dataset"]]
    return model_sizes(config["model"], spec.num_classes, tuple(spec.input_shape))["model_params"]


# ------------------------------------------------------------------ the notebooks' tables
# Each function below computes one table of a notebook from its Context ``ctx`` (and the frames
# of earlier cells), saves it (``ctx.save_table``) and returns it; the figures are in :mod:`.plots`.

def budget_rounds_table(ctx) -> pd.DataFrame:
    """The baselines' round budget (:func:`budget_table`), saved."""
    budget = budget_table(ctx.profile)
    ctx.save_table(budget, "budget_rounds", experiment="budget",
                   title="The baselines' round budget: FedConcat's communication per client in rounds of one cluster "
                         "model",
                   caption="stage 2 = T_e; broadcast = K·|E|/(2M); stage 3 = T_c·|C|/M; R = the total, rounded. "
                           "Parameter counts of fedlib's simple CNN (notes/fedconcat.md §1a).",
                   floatfmt=".2f", findings=[f"same communication cost at the paper's K, T_e, T_c: "
                                             f"{r['R (baseline rounds)']} baseline rounds on {r.dataset}"
                                             for _, r in budget[budget.scale == "paper"].iterrows()])
    return budget


def budget_sensitivity_table(ctx, grid1, variants: dict, configs: dict, rounds: pd.DataFrame) -> pd.DataFrame:
    """Table 1 under other round budgets: FedConcat's rank and margin per (column, way of counting),
    saved with its findings."""
    summary = ranking_summary(budget_sensitivity(grid1, variants, configs))
    default = next(iter(variants))
    ranks = summary.dropna(subset=["FedConcat rank"])
    findings = []
    if len(ranks):
        first = ranks[ranks["FedConcat rank"] == 1]
        findings.append(f"FedConcat is the best method in {len(first)} of {len(ranks)} (column, budget) pairs "
                        f"measured ({int((first.variant == default).sum())} of "
                        f"{int((ranks.variant == default).sum())} columns at the default budget)")
        changed = [c for c, g in ranks.groupby("column") if g["FedConcat rank"].nunique() > 1]
        findings.append(f"FedConcat's rank changes with the way of counting in {len(changed)} of "
                        f"{ranks.column.nunique()} columns" + (f" ({', '.join(changed)})" if changed else ""))
    ctx.save_table(summary, "budget_sensitivity", experiment="budget",
                   title="Table 1 under other round budgets: FedConcat's rank and its margin over the best baseline",
                   caption="R per way of counting; baselines read at round R of their run (not measured beyond it); "
                           "FedConcat and FedConcat-ID at their end. Rank 1 = best of the methods measured.",
                   datasets=grid1.runs.dataset_used.dropna().unique(), findings=findings,
                   parameters={"variants": variants, "rounds": rounds.to_dict("records")})
    return summary


def third_party_gaps(ctx, comp1: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """FedLC − FedAvg from the FedLC paper, FedConcat's Table 1, ours and (when its outputs for
    this profile exist, beside ours or committed) the FedLC companion's stand-in check; and a note
    naming that last source."""
    from ...repro.figures import repo_root

    gaps = fedlc_gaps(comp1[comp1.column.isin(ctx.profile.setting("fedlc_third_party", "columns", ()))])
    candidates = [ctx.out_dir.parent.parent / "fedlc" / ctx.profile.name,
                  repo_root() / "figures" / "fedlc" / ctx.profile.name]
    companion_dir = next((p for p in candidates if (p / "stand_in_effects.csv").exists()), None)
    companion = fedlc_companion_gaps(companion_dir)
    if companion is not None:
        gaps = gaps.merge(companion, on=["dataset", "partition"], how="left")
        source_note = (f"the FedLC companion's stand-in check "
                       f"({companion_dir.relative_to(companion_dir.parents[2])}/stand_in_effects.csv)")
    else:
        source_note = ("the FedLC companion's stand-in check is not in this figures folder (run notebooks/fedlc/06 "
                       "under this profile)")
    return gaps, source_note


def clusters_summary(ctx, cluster_stats: pd.DataFrame, grid) -> pd.DataFrame:
    """The clusters' sizes, spread and FedConcat-ID's agreement with K-means, saved."""
    col = "ARI vs K-means on Eq. 2"  # absent when no FedConcat run was trained (the paper profile on a CPU)
    ari = cluster_stats.dropna(subset=[col]) if col in cluster_stats else pd.DataFrame(columns=[col, "method"])
    ari = ari[ari.method == "FedConcat-ID"]
    ctx.save_table(cluster_stats, "clusters_summary", experiment="clusters",
                   title="The clusters: sizes, spread, and FedConcat-ID against K-means on the true distributions",
                   caption="within-cluster L1: mean over clusters of the mean L1 distance of a member's true label "
                           "distribution to its cluster's mean; ARI: adjusted Rand index against FedConcat's clusters.",
                   floatfmt=".3f", datasets=grid.runs.dataset_used.dropna().unique(),
                   findings=[f"FedConcat-ID's clusters agree with K-means on the true distributions with ARI "
                             f"{r['ARI vs K-means on Eq. 2']:.2f} at {r.column} (its inferred rows correlate "
                             f"{r['correlation with the true distributions']:.2f} with the true ones)"
                             for _, r in ari.iterrows()])
    return cluster_stats


def fig3_table(ctx, f3) -> pd.DataFrame:
    """Fig. 3: final accuracy with and without clustering, and the random groups' spread, saved."""
    from ...simulation import prepare

    final3 = f3.aggregate(["partition", "clustering"])
    rand = [c for c in fig3_cells(ctx.profile) if c["config"] and c["clustering"].startswith("without")]
    spread = []
    for c in rand:
        res = load_runs([{**c, "method": "random"}], ctx.store).get((c["column"], "random"))
        if res is not None:
            spread.append({"partition": c["partition"], "within-cluster L1, random groups":
                           cluster_agreement(cluster_view(res, prepare(res.config).class_counts))["within_cluster_l1"]})
    pivot = final3.pivot(index="partition", columns="clustering", values="ours_mean")
    findings = [f"Fig. 3 at {p}: FedConcat ends at {r.iloc[0]:.2f}% with K-means and {r.iloc[1]:.2f}% with random "
                f"groups ({r.iloc[0] - r.iloc[1]:+.2f} pp for clustering; the paper shows clustering ahead)"
                for p, r in pivot.iterrows() if r.notna().all()]
    table3f = final3[["partition", "clustering", "ours_mean", "ours_std", "n_seeds", "dataset_used"]]
    if spread:
        table3f = table3f.merge(pd.DataFrame(spread), on="partition", how="left")
    ctx.save_table(table3f, "fig3_final_accuracy", experiment="fig3",
                   title="Fig. 3: final accuracy (%) with and without clustering",
                   caption="The within-cluster L1 spread of the random groups' true label distributions is in the "
                           "last column (compare with the K-means clusters' in the clusters table).",
                   datasets=f3.runs.dataset_used.dropna().unique(), findings=findings)
    return table3f


def fig4_table(ctx, final4: pd.DataFrame, grid4, cells4: Sequence[dict]) -> pd.DataFrame:
    """Fig. 4: the baselines on one cluster model and on FedConcat's final architecture, saved."""
    fc = final4[final4.method == "fedconcat"].ours_mean
    base = final4[final4.method != "fedconcat"]
    archs = list(dict.fromkeys(base.architecture))
    rounds4 = {(c["method"], c["architecture"]): (c["config"] or {}).get("rounds") for c in cells4}
    findings = []
    for m in dict.fromkeys(base.method):
        d = base[base.method == m].set_index("architecture").ours_mean
        if d.notna().all() and len(fc) and pd.notna(fc.iloc[0]):
            r = rounds4[(m, archs[1])]
            findings.append(f"Fig. 4: {paper.METHOD_LABELS[m]} reaches {d.iloc[1]:.2f}% on FedConcat's final "
                            f"architecture ({r} round{'s' * (r != 1)}) and {d.iloc[0]:.2f}% on one cluster model; "
                            f"FedConcat {fc.iloc[0]:.2f}%")
    table4 = final4[["label", "architecture", "rounds", "ours_mean", "ours_std", "n_seeds", "status", "note"]]
    ctx.save_table(table4, "fig4_final_accuracy", experiment="fig4",
                   title="Fig. 4: final accuracy (%) of the baselines on one cluster model and on FedConcat's final "
                         "architecture", datasets=grid4.runs.dataset_used.dropna().unique(), findings=findings)
    return table4
