"""What FEDIC's tables and studies read, and the one configuration of a cell outside the tables.

* :func:`table_value` -- the run value each cell of Tables 1-3 reads (groups, teachers);
* :data:`CIFAR10_LT` -- the paper's CIFAR-10-LT (IF = 100): a study's cell is
  ``PAPER.base("cifar10", **CIFAR10_LT, **params)``, handed to the gate
  (:func:`fedlib.repro.budget.gate.decide`), so runs shared between a table and a figure run once;
* :data:`FIG3_CURVES` -- Fig. 3's curves: FedAvg, FT and FEDIC;
* :func:`curve` -- a study's runs, each read at its cell's ``metric``, averaged over seeds;
* :func:`datasets_used`, :func:`gain_lines` -- what a grid trained on; FEDIC's gains in Table 1.

The studies themselves (their cells, summaries and findings) are declared in :mod:`.studies`.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from ...repro.run.grid import GridResult, aggregate
from . import reported as paper

__all__ = ["table_value", "CIFAR10_LT", "FIG3_CURVES", "curve", "datasets_used", "gain_lines"]


def table_value(table_id: str) -> Any:
    """What a table's cells read (``value`` of :func:`fedlib.repro.artefacts.tables.reproduce_table`): Table 1 the
    global model's accuracy; Table 2 one metric per column (All / Many / Medium / Few); Table 3 one
    per cell (teacher rows read the teacher's values, :func:`.reported.table3_metric`)."""
    return {"table1": "accuracy", "table2": dict(paper.GROUP_COLUMNS), "table3": paper.table3_metric}[table_id]


#: The long tail of the paper's studies, CIFAR-10-LT with imbalance factor 100 (on CIFAR-10).
CIFAR10_LT: dict[str, Any] = {"long_tail_if": 100.0}


#: Fig. 3's curves: FedAvg; FT, the global model fine-tuned on D_aux (the teacher of FEDIC with LA off:
#: Table 3 (b), notes §6); FEDIC.  (method parameters, the run value the curve reads)
FIG3_CURVES: dict[str, tuple[dict, str]] = {
    "FedAvg": ({"method": "fedavg"}, "accuracy"),
    "FT": ({"method": "fedic", "fedic_la": False}, "teacher_accuracy"),
    "FEDIC": ({"method": "fedic"}, "accuracy"),
}


def curve(grid: GridResult, by: list[str]) -> pd.DataFrame:
    """Mean and std over seeds of each run's value of its cell's ``metric`` (a study's grid), per ``by``."""
    runs = grid.runs.copy()
    runs["value"] = [float(rec[m]) if m in rec and rec[m] is not None and not pd.isna(rec[m]) else math.nan
                     for rec, m in zip(runs.to_dict("records"), runs["metric"])]
    return aggregate(runs, by, "value")


def datasets_used(grid: GridResult) -> list[str]:
    """The datasets a grid's finished runs trained on (empty: nothing ran)."""
    ok = grid.ok()
    return sorted(set(ok.dataset_used.dropna())) if len(ok) and "dataset_used" in ok else []


def gain_lines(comparison: pd.DataFrame, method: str, baselines: tuple[str, ...], label=str,
               head: dict | None = None) -> list[str]:
    """Plain lines "FEDIC − FedAvg: +x (paper +y)" per column of a paper-vs-ours comparison, for the
    columns where both rows ran.  ``head`` (:func:`.plots.head_share`): a baseline of ours within its
    ``margin_pp`` of the head classes' share is said to be there, so the gain reads as one over a model that
    learned little beyond them (FashionMNIST-LT at quick: FedAvg 23.9 %, the head classes 20.8 %)."""
    lines = []
    comp = comparison.set_index(["row", "column"])
    for col in dict.fromkeys(comparison.column):
        for b in baselines:
            if (method, col) not in comp.index or (b, col) not in comp.index:
                continue
            ours = comp.loc[(method, col), "ours_mean"] - comp.loc[(b, col), "ours_mean"]
            theirs = comp.loc[(method, col), "paper_mean"] - comp.loc[(b, col), "paper_mean"]
            if not math.isnan(ours):
                base = comp.loc[(b, col), "ours_mean"]
                near = "" if head is None or base > head["share"] + head["margin_pp"] else (
                    f"; our {label(b)} is at {base:.1f} %, not {head['margin_pp']:g} pp above the {head['share']:.1f} % "
                    f"that the head classes {head['classes']} alone give: it learned little beyond them")
                lines.append(f"{comp.loc[(method, col), 'column_label']}: {label(method)} − {label(b)} = "
                             f"{ours:+.2f} (paper {theirs:+.2f}){near}")
    return lines
