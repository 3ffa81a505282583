"""Fig. 2, measured: per-class accuracy of softmax + CE vs one-vs-all on one skewed client (§Introduction).

The paper's Fig. 2 is a schematic ("over-confident predictions for dominated classes, sub-optimal
performance for minority classes and extremely poor performance for classes that lack positive
samples"); here it is measured on the client :func:`skewed_client` picks from Table 1's partition,
its classes split by :func:`fedlib.repro.spec.class_roles.roles` (rule ``"mean"``: FedABC's).
"""

from __future__ import annotations

import pandas as pd

from ....algorithms.fedabc import FEDABC_WI
from ....repro.spec.class_roles import ROLES, roles
from ....repro.budget.gate import decide
from ..experiments import column_key
from ..reported import TABLE1

__all__ = ["FIG2_MODELS", "ROLES", "skewed_client", "role_summary"]

#: Fig. 2's models: label -> the method and its parameters (FedABC's: the profile's setting).
FIG2_MODELS = {
    "softmax + CE": {"method": "fedavg"},
    "one-vs-all BCE (FedABC_wi)": {"method": "fedabc", **FEDABC_WI},
    "FedABC loss": {"method": "fedabc"},
}
#: The panels: the client trained alone, and its personalized model in Table 1's runs (no FedABC_wi run there).
PANELS = ("local training", "personalized model")
_COLUMNS = ["panel", "model", "class", "role", "n_train", "accuracy"]


def skewed_client(class_counts) -> int:
    """A client with majority, minority and absent classes: among those with all three, the
    one with the most minority classes, then the most samples (lowest index on ties)."""
    best, key = None, None
    for k, counts in enumerate(class_counts):
        r = roles(counts, rule="mean")
        if not set(ROLES) <= set(r):
            continue
        score = (r.count("minority"), int(sum(counts)), -k)
        if key is None or score > key:
            best, key = k, score
    if best is None:
        raise ValueError("no client has a majority, a minority and an absent class")
    return best


def _models(panel: str) -> dict[str, dict]:
    return {label: params for label, params in FIG2_MODELS.items()
            if panel == "local training" or not label.startswith("one-vs-all")}


def _local_model(exp, params: dict, client: int, round_: int) -> dict:
    """``client``'s model after its local update from ``params`` (the run's personalized-model
    mini-batches: stream 3 of ``round_``)."""
    from ....simulation import train_locally

    return train_locally(exp, exp.initial_state(params), [client], round_, 3)[0].local


def build_cells(profile, opts) -> list[dict]:
    """The Table 1 runs whose personalized models Fig. 2 reads (FedAvg, FedABC) with the profile's
    first seed: the grid runs them (in parallel) and the summary finds them in the store."""
    seed = int(profile.seeds_for("fig2")[0])
    cells = []
    for label, params in _models("personalized model").items():
        cfg, note = decide(profile, TABLE1.config(params["method"], column_key(opts.dataset, opts.beta)), "table1",
                              then={"seed": seed})
        cells.append({"model": label, "config": cfg, "note": note})
    return cells


def build_summary(grid, opts) -> dict:
    """Fig. 2 on the client :func:`skewed_client` picks, per-class accuracy on the whole test set of

    * ``local training`` -- the client alone, ``local_epochs`` epochs from the initial model, with
      each loss of :data:`FIG2_MODELS` (softmax's competition between classes vs one-vs-all);
    * ``personalized model`` -- its personalized model (a local update from the final global model,
      exactly as Eq. 7 scores it) in Table 1's FedAvg and FedABC runs (read from the store).

    Returns ``per_class`` (panel, model, class, role, n_train, accuracy %), ``roles``
    (:func:`role_summary`) and ``client`` (client, dataset, beta, local_epochs, class_counts; empty
    when the cells are not run)."""
    from ....api import run
    from ....config import Config
    from ....repro.run.grid import as_store
    from ....simulation import evaluate, prepare

    profile = opts.profile
    seed = int(profile.seeds_for("fig2")[0])
    rows: list[dict] = []
    client: dict = {}
    for panel in PANELS:
        for label, params in _models(panel).items():
            own = {**{k: v for k, v in params.items() if k != "method"}, "seed": seed}
            if panel == "local training" and opts.local_epochs is not None:
                own["local_epochs"] = opts.local_epochs
            cfg, _ = decide(profile, TABLE1.config(params["method"], column_key(opts.dataset, opts.beta)), "table1",
                            then=own)
            if cfg is None:
                return {"per_class": pd.DataFrame(columns=_COLUMNS), "roles": pd.DataFrame(), "client": {}}
            exp = prepare(Config.from_dict(cfg))
            if not client:
                k = skewed_client(exp.class_counts)
                client = {"client": k, "dataset": opts.dataset, "beta": float(opts.beta),
                          "local_epochs": cfg.get("local_epochs"),
                          "class_counts": exp.class_counts[k].astype(int).tolist()}
            k = client["client"]
            if panel == "local training":
                local = _local_model(exp, exp.initial_params(), k, 0)
            else:  # the grid trained it: the store (the regeneration's, as the notebook's Context) holds it
                result = run(cfg, store=as_store(None), progress=False)
                local = _local_model(exp, result.params, k, result.config.rounds)
            _, per_class = evaluate(exp.model, local, exp.data.test_x, exp.data.test_y, exp.data.num_classes,
                                    logits=exp.algorithm.personalization.personal_logits)
            r = roles(exp.class_counts[k], rule="mean")
            rows += [{"panel": panel, "model": label, "class": c, "role": r[c],
                      "n_train": int(exp.class_counts[k][c]), "accuracy": 100.0 * float(a)}
                     for c, a in enumerate(per_class)]
    frame = pd.DataFrame(rows)
    return {"per_class": frame, "roles": role_summary(frame), "client": client}


def role_summary(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean per-class accuracy (%) of each model over the client's majority, minority and absent
    classes (columns), per panel."""
    if frame.empty:
        return pd.DataFrame()
    out = frame.pivot_table(index=["panel", "model"], columns="role", values="accuracy", aggfunc="mean", sort=False)
    return out.reindex(columns=[r for r in ROLES if r in out.columns]).reset_index()


def build_findings(summary: dict, opts) -> list[str]:
    """One line per panel: each model's mean accuracy over the majority, minority and absent classes."""
    out = []
    table = summary["roles"]
    for panel, grp in (table.groupby("panel", sort=False) if len(table) else ()):
        parts = []
        for role in [r for r in ROLES if r in grp]:
            vals = ", ".join(f"{m} {v:.1f}" for m, v in zip(grp.model, grp[role]) if not pd.isna(v))
            parts.append(f"{role} classes {vals}")
        out.append(f"Fig. 2 (measured, {panel}): mean per-class accuracy (%): " + "; ".join(parts))
    return out
