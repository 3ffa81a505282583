"""The FEDIC paper's experiments as functions the notebooks call.

Each function takes a :class:`fedlib.repro.profiles.Profile` (or its name) and returns grid cells or
data; the notebooks run the grids (``ctx.grid``) and plot.  Every cell's configuration is the
paper's setting (:data:`.reported.SETUP`, CIFAR-10-LT at IF = 100) turned into the profile's by
:meth:`fedlib.repro.profiles.Profile.config`, so runs shared between a table and a figure run once.

* :func:`table_value` -- the run value each cell of Tables 2-3 reads (groups, teachers);
* :func:`long_tail_summary` -- the long-tailed training set, D_aux, D_ulb and the groups (§3.1);
* :func:`fig3_cells` -- size of D_aux (and of D_ulb): FedAvg, FT, FEDIC (Fig. 3);
* :func:`fig4_cells` -- λ of Eq. 9 (Fig. 4);
* :func:`fig5_cells` -- the non-IID degree α of D(α) (Fig. 5);
* :func:`curve` -- a figure grid's runs, each read at its cell's ``metric``, averaged over seeds.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...repro.grid import GridResult, aggregate
from ...repro.gate import decide
from ...repro.profiles import Profile
from . import PAPER
from . import reported as paper

__all__ = ["table_value", "setting_config", "long_tail_summary", "FIG3_CURVES", "fig3_cells",
           "fig4_cells", "fig5_cells", "curve", "datasets_used",
           "gain_lines"]



def table_value(table_id: str) -> Any:
    """What a table's cells read (``value`` of :func:`fedlib.repro.tables.reproduce_table`): Table 1 the
    global model's accuracy; Table 2 one metric per column (All / Many / Medium / Few); Table 3 one
    per cell (teacher rows read the teacher's values, :func:`.reported.table3_metric`)."""
    return {"table1": "accuracy", "table2": dict(paper.GROUP_COLUMNS), "table3": paper.table3_metric}[table_id]


def setting_config(profile: Profile, experiment: str, **params) -> tuple[dict | None, str]:
    """The paper's CIFAR-10-LT (IF = 100) setting with ``params``, as ``profile`` runs it."""
    base = {**paper.SETUP, "dataset": "cifar10", "long_tail_if": 100.0, **params}
    return decide(profile, base, experiment)


# ----------------------------------------------------------------------------- §3.1 the data
def long_tail_summary(profile: Profile | str | None = None, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """The data of the profile's CIFAR-10-LT (IF = 100) runs: per class, the training count after
    D_aux is taken out and the long tail applied, the class's group (many / medium / few by the run's
    ``group_rule``) and its D_aux count; plus a dict with |D_ulb|, the dataset used and the clients'
    sizes.  Raises :class:`fedlib.data.DatasetNotFoundError` when the data are absent."""
    from ...config import Config
    from ...metrics import class_groups
    from ...simulation import prepare

    prof = PAPER.profile(profile)
    cfg, note = setting_config(prof, "long_tail", method="fedic")
    if cfg is None:
        raise ValueError(note)
    c = Config.from_dict({**cfg, "seed": seed, "rounds": 1})
    exp = prepare(c)
    counts = np.asarray(exp.class_counts).sum(axis=0)
    groups = class_groups(counts, c.group_rule, c.group_rank_fraction, c.group_many_above, c.group_few_below)
    group_of = {int(k): g for g, ks in groups.items() for k in ks}
    server = exp.server_data
    aux_y = None if server is None else server.aux_y
    aux = np.zeros(len(counts), int) if aux_y is None else np.bincount(np.asarray(aux_y), minlength=len(counts))
    frame = pd.DataFrame({"class": range(len(counts)), "train_count": counts.astype(int),
                          "group": [group_of.get(k, "") for k in range(len(counts))], "aux_count": aux.astype(int)})
    sizes = np.asarray(exp.class_counts).sum(axis=1)
    info = {"dataset": c.dataset, "long_tail_if": c.long_tail_if, "train": int(counts.sum()),
            "imbalance": float(counts.max() / max(counts.min(), 1)), "aux": int(aux.sum()),
            "unlabeled": c.server_unlabeled,
            "unlabeled_size": 0 if server is None or server.unlabeled_x is None else int(len(server.unlabeled_x)),
            "clients": int(len(sizes)), "client_size_min": int(sizes.min()), "client_size_max": int(sizes.max()),
            "group_rule": c.group_rule}
    return frame, info


# ----------------------------------------------------------------------------- Figs. 3-5
#: Fig. 3's curves: FedAvg; FT, the global model fine-tuned on D_aux (the teacher of FEDIC with LA off:
#: Table 3 (b), notes §6); FEDIC.  (method parameters, the run value the curve reads)
FIG3_CURVES: dict[str, tuple[dict, str]] = {
    "FedAvg": ({"method": "fedavg"}, "accuracy"),
    "FT": ({"method": "fedic", "fedic_la": False}, "teacher_accuracy"),
    "FEDIC": ({"method": "fedic"}, "accuracy"),
}


def fig3_cells(profile: Profile | str | None = None) -> list[dict]:
    """Fig. 3: each D_aux size (``aux_per_class``) × each D_ulb size (``ulb_sizes``, 0 = all) × curve.
    FedAvg does not use D_ulb: it runs once per D_aux size (its D_aux is taken out of the training set
    all the same, as in the paper's code)."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("fig3")
    cells = []
    for aux in opts.get("aux_per_class", (100,)):
        for ulb in opts.get("ulb_sizes", (0,)):
            for name, (params, metric) in FIG3_CURVES.items():
                if name == "FedAvg" and ulb != opts.get("ulb_sizes", (0,))[0]:
                    continue
                extra = {} if name == "FedAvg" else {"server_unlabeled_size": int(ulb)}
                cfg, note = setting_config(prof, "fig3", server_aux_per_class=int(aux), **params, **extra)
                cells.append({"curve": name, "aux_per_class": int(aux),
                              "ulb": "all" if not ulb or name == "FedAvg" else int(ulb), "metric": metric,
                              "config": cfg, "note": note})
    return cells


def fig4_cells(profile: Profile | str | None = None) -> list[dict]:
    """Fig. 4: FEDIC at each λ (``lambdas``) of Eq. 9."""
    prof = PAPER.profile(profile)
    cells = []
    for lam in prof.setting("fig4", "lambdas", (0.5,)):
        cfg, note = setting_config(prof, "fig4", method="fedic", fedic_lambda=float(lam))
        cells.append({"curve": "FEDIC", "lambda": float(lam), "metric": "accuracy", "config": cfg, "note": note})
    return cells


def fig5_cells(profile: Profile | str | None = None) -> list[dict]:
    """Fig. 5: each method (``methods``) at each Dirichlet concentration α (``alphas``; fedlib's
    ``partition_beta``)."""
    prof = PAPER.profile(profile)
    opts = prof.experiment("fig5")
    cells = []
    for m in opts.get("methods", ("fedavg", "fedic")):
        for a in opts.get("alphas", (0.1,)):
            cfg, note = setting_config(prof, "fig5", method=m, partition_beta=float(a))
            cells.append({"curve": paper.METHOD_LABELS.get(m, m), "method": m, "alpha": float(a),
                          "metric": "accuracy", "config": cfg, "note": note})
    return cells


def curve(grid: GridResult, by: list[str]) -> pd.DataFrame:
    """Mean and std over seeds of each run's value of its cell's ``metric`` (a figure grid), per ``by``."""
    runs = grid.runs.copy()
    runs["value"] = [float(rec[m]) if m in rec and rec[m] is not None and not pd.isna(rec[m]) else math.nan
                     for rec, m in zip(runs.to_dict("records"), runs["metric"])]
    return aggregate(runs, by, "value")


def datasets_used(grid: GridResult) -> list[str]:
    """The datasets a grid's finished runs trained on (empty: nothing ran)."""
    ok = grid.ok()
    return sorted(set(ok.dataset_used.dropna())) if len(ok) and "dataset_used" in ok else []


def gain_lines(comparison: pd.DataFrame, method: str, baselines: tuple[str, ...], label=str) -> list[str]:
    """Plain lines "FEDIC − FedAvg: +x (paper +y)" per column of a paper-vs-ours comparison, for the
    columns where both rows ran."""
    lines = []
    comp = comparison.set_index(["row", "column"])
    for col in dict.fromkeys(comparison.column):
        for b in baselines:
            if (method, col) not in comp.index or (b, col) not in comp.index:
                continue
            ours = comp.loc[(method, col), "ours_mean"] - comp.loc[(b, col), "ours_mean"]
            theirs = comp.loc[(method, col), "paper_mean"] - comp.loc[(b, col), "paper_mean"]
            if not math.isnan(ours):
                lines.append(f"{comp.loc[(method, col), 'column_label']}: {label(method)} − {label(b)} = "
                             f"{ours:+.2f} (paper {theirs:+.2f})")
    return lines
