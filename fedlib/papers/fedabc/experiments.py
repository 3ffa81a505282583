"""The FedABC paper's experiments as functions the notebooks call.

Each function takes a :class:`fedlib.repro.profiles.Profile` (or its name) and returns data
(DataFrames); the notebooks plot and save.  Runs go through :func:`fedlib.run` and the
results store, so notebooks that need the same run share it: Tables 1 and 2 are the
same runs read through two metrics (Eq. 7 and Eq. 8), Fig. 5's FedABC bars and Fig. 2's
personalized models are Table 1's cells.

* :func:`cell_config` -- a Table 1/2 cell (method × dataset × Dir(β)) under a profile;
  :func:`fedabc_setting` -- the four reconstructed hyperparameters a profile uses.
* :func:`text_claims` -- the claims of "Results and analysis", checked on the paper's
  numbers and on ours.
* :func:`heterogeneity` -- Fig. 4: samples per class and client, per Dir(β).
* :func:`class_roles`, :func:`skewed_client`, :func:`fig2_per_class` -- Fig. 2 measured:
  per-class accuracy of softmax cross-entropy vs one-vs-all on a skewed client.
* :func:`fig5_cells`, :func:`fig5_summary` -- Fig. 5: FedABC vs FedABC_wi.
* :func:`sensitivity_cells`, :func:`sensitivity_summary` -- the four hyperparameters on
  held-out local training data (``validation_fraction``), never on the test sets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...algorithms.fedabc import FEDABC_WI
from ...repro.gate import decide
from ...repro.profiles import Profile
from . import PAPER
from . import reported as paper

__all__ = [
    "HYPERPARAMETERS", "column_key", "cell_config", "fedabc_setting", "text_claims",
    "heterogeneity", "class_roles", "skewed_client", "fig2_cells", "fig2_per_class", "FIG2_MODELS", "fig5_cells",
    "fig5_summary", "sensitivity_cells", "sensitivity_summary", "claim_findings", "gain_table",
    "heterogeneity_stats", "fig2_findings", "fig5_findings", "sensitivity_findings", "ROLES",
]

#: FedABC's four hyperparameters (blank in the paper): parameter -> symbol.
HYPERPARAMETERS = {"fedabc_tau_pos": "τ_pos", "fedabc_tau_neg_present": "τ_neg^P",
                   "fedabc_tau_neg_absent": "τ_neg^N", "fedabc_gamma": "γ"}



def column_key(dataset: str, beta: float) -> str:
    """``("mnist", 0.3)`` -> ``"mnist_dir0.3"``, the key of a Table 1/2 column."""
    return f"{dataset}_dir{float(beta)}"


def cell_config(profile: "Profile | str | None", method: str, dataset: str, beta: float, experiment: str,
                **extra: Any) -> tuple[dict | None, str]:
    """The configuration of Table 1's (= Table 2's) cell ``method`` × ``dataset`` Dir(β) under
    ``profile``, with ``experiment``'s overrides and then ``extra`` on top (``extra`` wins: a
    study's own values); ``(None, why)`` when it is not run.  An experiment with the table's
    overrides gets exactly the table's cell, so the store shares the run."""
    prof = PAPER.profile(profile)
    cfg, note = decide(prof, paper.TABLE1.config(method, column_key(dataset, beta)), experiment)
    return (None, note) if cfg is None else ({**cfg, **extra}, note)


def fedabc_setting(profile: "Profile | str | None", dataset: str = "mnist") -> dict[str, float]:
    """The four hyperparameters of the profile's FedABC cells on ``dataset`` (its Dir(0.1) column)."""
    from ...config import Config

    cfg, _ = cell_config(profile, "fedabc", dataset, paper.BETAS[0], "table1")
    if cfg is None:
        return {}
    full = Config.from_dict({**cfg, "seed": 0})
    return {k: float(getattr(full, k)) for k in HYPERPARAMETERS}


# ----------------------------------------------------------------------------- §Results and analysis
_GENERIC = ("fedavg", "fedprox", "scaffold")
_PFL = ("lg_fedavg", "fedper", "fedrep", "fedrod")
_BASELINES = ("local",) + _GENERIC + _PFL


def _wide(comparison: pd.DataFrame, value: str) -> pd.DataFrame:
    """rows: methods, columns: table columns; the paper's suspect cells are NaN for ``paper_mean``."""
    df = comparison.copy()
    if value == "paper_mean" and "suspect" in df:
        df.loc[df.suspect.astype(str) != "", "paper_mean"] = math.nan
    return df.pivot(index="row", columns="column", values=value)


def _holds(wide: pd.DataFrame, test) -> tuple[int, int]:
    """In how many columns (with every value needed present) ``test(column values)`` holds."""
    held = total = 0
    for col in wide.columns:
        v = wide[col]
        out = test(v)
        if out is None:
            continue
        total += 1
        held += bool(out)
    return held, total


def _best_is(v: pd.Series, method: str, among) -> bool | None:
    sub = v.reindex(list(among)).dropna()
    if method not in sub or len(sub) < 2:
        return None
    return bool(sub[method] >= sub.max() - 1e-9)


def _at_least(v: pd.Series, method: str, others) -> bool | None:
    sub = v.reindex(list(others)).dropna()
    if pd.isna(v.get(method)) or sub.empty:
        return None
    return bool(v[method] >= sub.max() - 1e-9)


def _decreasing(wide: pd.DataFrame) -> tuple[int, int]:
    """Series (method × dataset) whose values fall with every step to a larger β."""
    held = total = 0
    for method, row in wide.iterrows():
        for ds in paper.DATASETS:
            vals = [row.get(column_key(ds, b)) for b in paper.BETAS]
            if any(v is None or pd.isna(v) for v in vals):
                continue
            total += 1
            held += all(a >= b - 1e-9 for a, b in zip(vals, vals[1:]))
    return held, total


def text_claims(comparison: pd.DataFrame, table_id: str) -> pd.DataFrame:
    """The claims of "Results and analysis" about one table, each counted on the paper's
    printed numbers (suspect cells left out) and on ours: ``claim``, ``paper`` and ``ours``
    as "k of n" (columns, or method × dataset series, where it holds), and the counts."""
    if table_id == "table1":
        claims = [
            ("FedABC ≥ every baseline (per column)", lambda v: _at_least(v, "fedabc", _BASELINES)),
            ("FedRoD is the best baseline (per column)", lambda v: _best_is(v, "fedrod", _BASELINES)),
            ("a generic method's PM (FedAvg/FedProx/Scaffold) ≥ LG-FedAvg, FedPer, FedRep (per column)",
             lambda v: None if v.reindex(list(_GENERIC)).dropna().empty else
             _at_least(pd.concat([v, pd.Series({"generic": v.reindex(list(_GENERIC)).max()})]), "generic",
                       ("lg_fedavg", "fedper", "fedrep"))),
            ("accuracy falls as β grows (per method and dataset)", None),
        ]
    elif table_id == "table2":
        claims = [
            ("Scaffold is the best method (per column)", lambda v: _best_is(v, "scaffold", paper.METHODS)),
            ("FedABC ≥ the PFL baselines LG-FedAvg, FedPer, FedRep, FedRoD (per column)",
             lambda v: _at_least(v, "fedabc", _PFL)),
            ("FedABC − FedRoD > 0 (per column)",
             lambda v: None if pd.isna(v.get("fedabc")) or pd.isna(v.get("fedrod")) else
             bool(v["fedabc"] > v["fedrod"])),
        ]
    else:
        raise KeyError(f"no claims for {table_id!r}")
    wide = {"paper": _wide(comparison, "paper_mean"), "ours": _wide(comparison, "ours_mean")}
    recs = []
    for text, test in claims:
        rec = {"claim": text}
        for side, w in wide.items():
            held, total = _decreasing(w) if test is None else _holds(w, test)
            rec[side] = f"{held} of {total}" if total else "—"
            rec[f"{side}_held"], rec[f"{side}_total"] = held, total
        recs.append(rec)
    return pd.DataFrame(recs)


def claim_findings(claims: pd.DataFrame, table_id: str) -> list[str]:
    """Plain-language lines from :func:`text_claims`."""
    label = f"Table {table_id[-1]}"
    return [f"{label}: '{r.claim}' holds in {r.ours} here (paper: {r.paper})" for r in claims.itertuples(index=False)]


def gain_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """FedABC − FedAvg (the headline) and FedABC − FedRoD per column, paper vs ours
    (:func:`fedlib.repro.compare.gains`), one row per (column, baseline)."""
    from ...repro.compare import gains

    frames = []
    for base in ("fedavg", "fedrod"):
        g = gains(comparison, "fedabc", base)
        if len(g):
            frames.append(g.assign(difference=f"FedABC − {paper.METHOD_LABELS[base]}"))
    columns = ["difference", "column_label", "trained_on", "paper_gain", "ours_gain", "spread", "spread_source",
               "verdict", "face_value"]
    if not frames:
        return pd.DataFrame(columns=columns)
    out = pd.concat(frames, ignore_index=True)
    cols = comparison.drop_duplicates("column_label").set_index("column_label")
    out["trained_on"] = out.column_label.map(cols["dataset_used"] if "dataset_used" in cols else cols["dataset"])
    return out[[c for c in columns if c in out]]


# ----------------------------------------------------------------------------- Fig. 4
def heterogeneity(profile: "Profile | str | None", dataset: str, *, seed: int | None = None) -> pd.DataFrame:
    """Fig. 4: the training samples of every class on every client, for each of the
    experiment's Dir(β) (the partitions Table 1's runs train on under ``profile``).
    Columns: beta, client, class, count.  Empty if the dataset is not run."""
    from ...config import Config
    from ...simulation import prepare

    prof = PAPER.profile(profile)
    seed = prof.seeds_for("fig4")[0] if seed is None else int(seed)
    rows = []
    for beta in prof.setting("fig4", "betas", paper.BETAS):
        cfg, _ = cell_config(prof, "fedavg", dataset, beta, "fig4")
        if cfg is None:
            return pd.DataFrame(columns=["beta", "client", "class", "count"])
        counts = prepare(Config.from_dict({**cfg, "seed": seed, "personal_eval_every": 0})).class_counts
        rows += [{"beta": float(beta), "client": k, "class": y, "count": int(n)}
                 for k, row in enumerate(counts) for y, n in enumerate(row)]
    return pd.DataFrame(rows)


def heterogeneity_stats(counts: pd.DataFrame) -> pd.DataFrame:
    """Per Dir(β) of :func:`heterogeneity`: clients, mean classes held per client, mean share
    of a client's largest class, and the smallest / median / largest client."""
    recs = []
    for beta, grp in counts.groupby("beta", sort=False):
        m = grp.pivot_table(index="client", columns="class", values="count", aggfunc="sum").to_numpy(float)
        size = m.sum(1)
        recs.append({"beta": float(beta), "clients": len(m), "classes_per_client": float((m > 0).sum(1).mean()),
                     "largest_class_share": float((m.max(1) / np.maximum(size, 1)).mean()),
                     "min_size": int(size.min()), "median_size": float(np.median(size)), "max_size": int(size.max())})
    return pd.DataFrame(recs)


# ----------------------------------------------------------------------------- Fig. 2
#: Fig. 2's models: label -> (method parameters; None = the profile's FedABC setting).
FIG2_MODELS = {
    "softmax + CE": {"method": "fedavg"},
    "one-vs-all BCE (FedABC_wi)": {"method": "fedabc", **FEDABC_WI},
    "FedABC loss": {"method": "fedabc"},
}
ROLES = ("majority", "minority", "absent")


def class_roles(counts) -> list[str]:
    """FedABC's classes of one client: ``absent`` (no positive sample, the set N), and among
    the present ones (P) ``majority`` when it holds at least the mean count of the present
    classes, ``minority`` otherwise (the paper's "dominated" and "minority" classes)."""
    n = np.asarray(counts, dtype=np.float64)
    if n.ndim != 1 or (n < 0).any():
        raise ValueError("counts must be a 1-D array of class counts ≥ 0")
    present = n[n > 0]
    mean = present.mean() if len(present) else 0.0
    return ["absent" if v == 0 else ("majority" if v >= mean else "minority") for v in n]


def skewed_client(class_counts) -> int:
    """A client with majority, minority and absent classes: among those with all three, the
    one with the most minority classes, then the most samples (lowest index on ties)."""
    best, key = None, None
    for k, counts in enumerate(np.asarray(class_counts)):
        roles = class_roles(counts)
        if not set(ROLES) <= set(roles):
            continue
        score = (roles.count("minority"), int(np.sum(counts)), -k)
        if key is None or score > key:
            best, key = k, score
    if best is None:
        raise ValueError("no client has a majority, a minority and an absent class")
    return best


def _local_model(exp, params: dict, client: int, round_: int) -> dict:
    """``client``'s model after its local update from ``params`` (the run's personalized-model
    mini-batches: stream 3 of ``round_``)."""
    from ...simulation import train_locally

    return train_locally(exp, exp.initial_state(params), [client], round_, 3)[0].local


def _fig2_setting(prof: Profile) -> tuple[str, float, int]:
    opts = prof.experiment("fig2")
    return opts.get("dataset", "mnist"), float(opts.get("beta", 0.3)), int(prof.seeds_for("fig2")[0])


def fig2_cells(profile: "Profile | str | None" = None) -> list[dict]:
    """The Table 1 runs whose personalized models Fig. 2 reads (FedAvg, FedABC), with their seed:
    run them as a grid first (in parallel) and :func:`fig2_per_class` finds them in the store."""
    prof = PAPER.profile(profile)
    dataset, beta, seed = _fig2_setting(prof)
    cells = []
    for label, params in FIG2_MODELS.items():
        if not label.startswith("one-vs-all"):
            cfg, note = cell_config(prof, params["method"], dataset, beta, "table1")
            cells.append({"model": label, "config": None if cfg is None else {**cfg, "seed": seed}, "note": note})
    return cells


def fig2_per_class(profile: "Profile | str | None" = None, *, store: Any = None,
                   progress: bool = False) -> tuple[pd.DataFrame, dict]:
    """Fig. 2, measured on one skewed client (:func:`skewed_client`) of the experiment's
    dataset and Dir(β): per-class accuracy on the whole test set of

    * ``local training`` -- the client alone, ``local_epochs`` epochs from the initial model,
      with each loss of :data:`FIG2_MODELS` (the paper's question: softmax's competition
      between classes vs one-vs-all);
    * ``personalized model`` -- the client's personalized model (a local update from the
      final global model, exactly as Eq. 7 scores it) of Table 1's FedAvg and FedABC runs.

    Returns ``(frame, info)``: frame rows (panel, model, class, role, n_train, accuracy %),
    info {client, dataset, beta, class_counts, local_epochs}."""
    from ...api import run
    from ...config import Config
    from ...repro.grid import default_store
    from ...simulation import evaluate, prepare

    prof = PAPER.profile(profile)
    opts = prof.experiment("fig2")
    dataset, beta, seed = _fig2_setting(prof)
    rows = []
    info: dict = {}
    for panel in ("local training", "personalized model"):
        for label, params in FIG2_MODELS.items():
            if panel == "personalized model" and label.startswith("one-vs-all"):
                continue
            cfg, _ = cell_config(prof, params["method"], dataset, beta, "table1")
            if cfg is None:
                return pd.DataFrame(columns=["panel", "model", "class", "role", "n_train", "accuracy"]), info
            cfg = {**cfg, **params, "seed": seed}
            if panel == "local training":
                cfg["local_epochs"] = int(opts.get("local_epochs", cfg["local_epochs"]))
            exp = prepare(Config.from_dict(cfg))
            if not info:
                k = skewed_client(exp.class_counts)
                info = {"client": k, "dataset": dataset, "beta": beta, "local_epochs": cfg.get("local_epochs"),
                        "class_counts": exp.class_counts[k].astype(int).tolist()}
            k = info["client"]
            if panel == "local training":
                local = _local_model(exp, exp.initial_params(), k, 0)
            else:
                result = run(cfg, store=default_store() if store is None else store, progress=progress)
                local = _local_model(exp, result.params, k, result.config.rounds)
            _, per_class = evaluate(exp.model, local, exp.data.test_x, exp.data.test_y, exp.data.num_classes,
                                    logits=exp.algorithm.personalization.personal_logits)
            roles = class_roles(exp.class_counts[k])
            rows += [{"panel": panel, "model": label, "class": c, "role": roles[c],
                      "n_train": int(exp.class_counts[k][c]), "accuracy": 100.0 * float(a)}
                     for c, a in enumerate(per_class)]
    return pd.DataFrame(rows), info


def fig2_findings(roles: pd.DataFrame) -> list[str]:
    """Plain-language lines from :func:`fedlib.papers.fedabc.plots.role_summary`'s table."""
    out = []
    for panel, grp in roles.groupby("panel", sort=False):
        parts = []
        for role in [r for r in ROLES if r in grp]:
            vals = ", ".join(f"{m} {v:.1f}" for m, v in zip(grp.model, grp[role]) if not pd.isna(v))
            parts.append(f"{role} classes {vals}")
        out.append(f"Fig. 2 (measured, {panel}): mean per-class accuracy (%): " + "; ".join(parts))
    return out


# ----------------------------------------------------------------------------- Fig. 5
def fig5_cells(profile: "Profile | str | None" = None) -> list[dict]:
    """FedABC and FedABC_wi (no under-sampling, no hard-sample mining: :data:`FEDABC_WI`) on
    each of the experiment's datasets (the paper: CIFAR-10) and Dir(β); FedABC's cells are
    Table 1's."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("fig5")
    cells = []
    for ds in opts.get("datasets", ("cifar10",)):
        for beta in opts.get("betas", paper.BETAS):
            for variant in ("fedabc", "fedabc_wi"):
                extra = FEDABC_WI if variant == "fedabc_wi" else {}
                cfg, note = cell_config(prof, "fedabc", ds, beta, "fig5", **extra)
                cells.append({"dataset": ds, "beta": float(beta), "variant": variant, "config": cfg, "note": note})
    return cells


def fig5_summary(grid) -> pd.DataFrame:
    """Per dataset (and the dataset it was run on) and Dir(β): FedABC's and FedABC_wi's
    personalized accuracy (mean over seeds, %), the gain FedABC − FedABC_wi, and where the
    gain is smallest (the paper's claim 2: at Dir(0.1))."""
    agg = grid.aggregate(["dataset", "beta", "variant"], value="personalized_accuracy")
    wide = agg.pivot_table(index=["dataset", "beta"], columns="variant", values="ours_mean").reset_index()
    used = agg.dropna(subset=["dataset_used"]).drop_duplicates("dataset").set_index("dataset").dataset_used
    wide["dataset_used"] = wide.dataset.map(used)
    for col in ("fedabc", "fedabc_wi"):
        if col not in wide:
            wide[col] = math.nan
    wide["gain"] = wide["fedabc"] - wide["fedabc_wi"]
    wide["smallest_gain"] = False
    for ds, grp in wide.groupby("dataset"):
        if grp.gain.notna().any():
            wide.loc[grp.gain.idxmin(), "smallest_gain"] = True
    return wide[["dataset", "dataset_used", "beta", "fedabc", "fedabc_wi", "gain", "smallest_gain"]]


def fig5_findings(summary: pd.DataFrame) -> list[str]:
    """The paper's two claims of Fig. 5, counted on :func:`fig5_summary`."""
    out = []
    for ds, grp in summary.groupby("dataset", sort=False):
        grp = grp.dropna(subset=["gain"]).sort_values("beta")
        if grp.empty:
            continue
        pos = int((grp.gain > 0).sum())
        smallest = grp.loc[grp.gain.idxmin(), "beta"]
        gains_txt = ", ".join(f"Dir({b:g}) {g:+.2f}" for b, g in zip(grp.beta, grp.gain))
        out.append(f"Fig. 5 ({ds}): FedABC − FedABC_wi = {gains_txt} pp; FedABC ahead in {pos} of {len(grp)} "
                   f"(paper: ahead at every α); the smallest gain is at Dir({smallest:g}) (paper: Dir(0.1))")
    return out


# ----------------------------------------------------------------------------- sensitivity
def sensitivity_cells(profile: "Profile | str | None" = None) -> list[dict]:
    """The four hyperparameters on held-out local training data: FedABC on the experiment's
    ``dataset`` and Dir(``beta``) with ``validation_fraction`` of every client's training set
    held out, varying one hyperparameter at a time around ``center`` over ``grid``; plus the
    profile's own setting, FedABC_wi and FedAvg (the references).  Labels: factor (a
    parameter, ``"setting"`` or ``"reference"``), value, label."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("sensitivity")
    dataset, beta = opts.get("dataset", "mnist"), float(opts.get("beta", 0.3))
    center = dict(opts.get("center", {}))
    held = {"validation_fraction": float(opts.get("validation_fraction", 0.2))}
    cells = []

    def add(factor, value, label, **params):
        method = params.pop("method", "fedabc")
        cfg, note = cell_config(prof, method, dataset, beta, "sensitivity", **held, **params)
        cells.append({"factor": factor, "value": value, "label": label, "config": cfg, "note": note})

    add("setting", math.nan, "center " + _describe(center), **center)
    for name, values in opts.get("grid", {}).items():
        for v in values:
            if float(v) != float(center.get(name, math.nan)):
                add(name, float(v), f"{HYPERPARAMETERS[name]} = {v:g}", **{**center, name: float(v)})
    chosen = fedabc_setting(prof, dataset)
    if chosen and chosen != {k: float(v) for k, v in center.items()}:
        add("setting", math.nan, "profile's setting " + _describe(chosen), **chosen)
    add("reference", math.nan, "FedABC_wi (one-vs-all BCE)", **FEDABC_WI)
    add("reference", math.nan, "FedAvg (softmax + CE)", method="fedavg")
    return cells


def _describe(setting: dict) -> str:
    return "(" + ", ".join(f"{HYPERPARAMETERS[k]} {float(v):g}" for k, v in setting.items()) + ")"


#: Values that switch one of FedABC's two imbalance strategies off (FedABC_wi's values).
_OFF = {"fedabc_tau_pos": 1.0, "fedabc_tau_neg_present": 0.0, "fedabc_tau_neg_absent": 0.0, "fedabc_gamma": 0.0}


def sensitivity_summary(grid, profile: "Profile | str | None" = None) -> tuple[pd.DataFrame, dict]:
    """``(frame, choice)`` from :func:`sensitivity_cells`' grid: per cell the validation
    personalized accuracy (%) and its difference to the center.  ``choice``: ``best``, the best
    value of each hyperparameter one factor at a time (the center's value unless another beats
    it); ``chosen``, the same among the values that keep both of FedABC's strategies on (γ > 0,
    τ_pos < 1, τ_neg > 0: the paper's FedABC uses under-sampling and hard-sample mining; the
    values that switch one off are shown, not chosen); the profile's setting and whether it is
    ``chosen`` (``agree``)."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("sensitivity")
    center = {k: float(v) for k, v in opts.get("center", {}).items()}
    agg = grid.aggregate(["factor", "value", "label"], value="personalized_accuracy")
    frame = agg[["factor", "value", "label", "ours_mean", "ours_std", "n_seeds"]].rename(
        columns={"ours_mean": "validation_accuracy", "ours_std": "validation_std"})
    base = frame.loc[frame.label.str.startswith("center"), "validation_accuracy"]
    base = float(base.iloc[0]) if len(base) else math.nan
    frame["delta_vs_center"] = frame.validation_accuracy - base

    def best(strategies_on: bool) -> dict:
        out = {}
        for name in HYPERPARAMETERS:
            value, acc = center.get(name), base
            for r in frame[frame.factor == name].dropna(subset=["validation_accuracy"]).itertuples(index=False):
                if strategies_on and float(r.value) == _OFF[name]:
                    continue
                if r.validation_accuracy > acc + 1e-12:
                    value, acc = float(r.value), r.validation_accuracy
            if value is not None:
                out[name] = value
        return out

    chosen, profile_setting = best(True), fedabc_setting(prof, opts.get("dataset", "mnist"))
    return frame, {"best": best(False), "chosen": chosen, "profile": profile_setting,
                   "agree": bool(chosen) and chosen == profile_setting, "center": center, "center_accuracy": base}


def sensitivity_findings(frame: pd.DataFrame, choice: dict) -> list[str]:
    """Plain-language lines from :func:`sensitivity_summary`."""
    out = []
    center = choice.get("center_accuracy", math.nan)
    spread = {k: float(np.nanmax(np.r_[v, center]) - np.nanmin(np.r_[v, center]))
              for k, v in frame.groupby("factor").validation_accuracy if k in HYPERPARAMETERS}
    if spread:
        out.append("sensitivity: range of validation PFL accuracy over each hyperparameter's values (others at the "
                   "center): " + ", ".join(f"{HYPERPARAMETERS[k]} {v:.2f} pp" for k, v in spread.items()))
    refs = {r.label: r.validation_accuracy for r in frame.itertuples(index=False)
            if r.factor in ("setting", "reference")}
    if refs:
        out.append("sensitivity: validation PFL accuracy (%): " + ", ".join(f"{k} {v:.2f}" for k, v in refs.items()))
    if choice.get("chosen"):
        out.append("sensitivity: one-factor-at-a-time best " + _describe(choice["best"]) + "; with both "
                   "strategies on " + _describe(choice["chosen"]) + "; the profile uses " + _describe(choice["profile"])
                   + (" (the same)" if choice["agree"] else " (different)"))
    return out
