"""The settings of FedLC's experiments, and the trained global model its analysis studies start from.

Every cell a study of this companion runs (:mod:`.studies`) is the paper's setup (§5.2) on a skew
setting (``"cifar10_beta0.1"`` = D(β=0.1) on CIFAR-10, ``"cifar10_alpha2"`` = Q(α=2),
``"cifar10_iid"``), ``PAPER.base(**setting_params(key), **study_params)``, or a table's own cell, handed
to :func:`fedlib.repro.budget.gate.decide` -- the one place that says whether the profile trains it
here, reads it from a GPU's stored runs, or does not run it (and why).

* :func:`setting_params` / :func:`skew_params` -- a skew setting's dataset and partition;
* :func:`trained_cell` / :func:`trained_model` -- the "well-trained" FedAvg global model the
  analysis studies start from (Figs. 2, 6, 7 and the deviation bound);
* :func:`skew_label` -- ``"cifar10_beta0.1"`` -> ``"D(β=0.1)"``;
"""

from __future__ import annotations


import pandas as pd

from . import PAPER
from ...repro.budget.gate import decide
from ...repro.spec.profiles import Profile

__all__ = ["setting_params", "trained_cell", "trained_model", "skew_label", "skew_text", "skew_params",
           "not_run_frame", "save_not_run"]


def skew_params(key: str) -> dict:
    """``"cifar10_beta0.1"`` / ``"cifar10_alpha2"`` / ``"…_iid"`` -> partition parameters (§5.1)."""
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
    return skew_text(skew_params(key))


def skew_text(p: dict) -> str:
    """Partition parameters (as :func:`skew_params` gives them, or a config's ``to_dict()``) as the paper writes
    them."""
    if p["partition"] == "iid":
        return "IID"
    return f"D(β={p['partition_beta']:g})" if p["partition"] == "dirichlet" else f"Q(α={p['partition_alpha']})"


def setting_params(key: str) -> dict:
    """``"cifar10_beta0.1"`` -> its dataset and skew, ``{"dataset": "cifar10", "partition": "dirichlet",
    "partition_beta": 0.1}``: the cell's parameters for ``PAPER.base``."""
    return {"dataset": key.split("_", 1)[0], **skew_params(key)}


def trained_cell(profile: Profile | str | None, experiment: str, opts) -> dict:
    """The cell of an analysis study's global model: FedAvg on the study's ``dataset`` with its
    ``num_clients`` and D(``partition_beta``) skew, trained for ``rounds`` (or ``pretrain_rounds``),
    with the experiment's first seed.  ``config`` is None where the profile does not run it."""
    prof = PAPER.profile(profile)
    base = PAPER.base(opts.dataset, method="fedavg", num_clients=opts.num_clients, partition="dirichlet",
                      partition_beta=opts.partition_beta)
    cfg, note = decide(prof, base, experiment, then={"rounds": int(opts.get("pretrain_rounds", opts.get("rounds"))),
                                                     "seed": int(prof.seeds_for(experiment)[0])})
    return {"model": "FedAvg global model", "config": cfg, "note": note}


def trained_model(grid, store=None):
    """The trained global model of an analysis study (the one run of :func:`trained_cell`) as a
    :class:`fedlib.Result`, read from ``store`` (the study's ``opts.store``: the notebook's; None, the
    regeneration store); None when it did not run."""
    from ...api import run
    from ...repro.run.grid import as_store

    ok = grid.ok()
    if ok.empty:
        return None
    from ...repro.run.records import NeedsTraining, ReadOnlyStore

    store = as_store(store)
    body = store.load_result(ok.key.iloc[0])
    if body is None and isinstance(store, ReadOnlyStore):  # rendering from run records: they keep no parameters
        raise NeedsTraining(f"the global model's parameters (run {ok.key.iloc[0]}): run records keep none; render "
                            "with the store that holds it")
    if body is None:
        raise LookupError(f"the global model's run {ok.key.iloc[0]} is not in the results store")
    return run(body["config"], store=store, progress=False)


def not_run_frame(experiment: str, grid) -> pd.DataFrame:
    """The one-row table an analysis study shows where its global model is not run here (why)."""
    runs = grid.runs if grid is not None else pd.DataFrame()
    note = str(runs.note.iloc[0]) if len(runs) and "note" in runs else ""
    return pd.DataFrame([{"experiment": experiment, "status": "not run",
                          "note": note or f"{experiment} is not run in this profile"}])


def save_not_run(ctx, result, names) -> str | None:
    """Where an analysis study's global model is not run here (its dataset absent, or on a CPU the
    paper profile's "not run: needs a GPU" with the estimated cost): save a placeholder table under
    each of ``names`` stating why, print it and return it; None where the study ran."""
    frame = result.summary.get("not_run") if isinstance(result.summary, dict) else None
    if frame is None:
        return None
    experiment, why = result.study.id, str(frame.note.iloc[0])
    for name in names:
        ctx.save_table(frame, name, experiment=experiment, placeholder=True, caption=why,
                       title=f"{PAPER.experiments.get(experiment, experiment)}: not run here")
    print(f"{experiment}: {why}")
    return why
