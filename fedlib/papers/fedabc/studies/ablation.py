"""Fig. 5 (§Ablation study): FedABC vs FedABC_wi, FedABC "without adopting our imbalanced training
technique (under-sampling and hard sample mining)" (:data:`fedlib.algorithms.fedabc.FEDABC_WI`).
FedABC's bars are Table 1's cells (the same runs)."""

from __future__ import annotations

import math

import pandas as pd

from ....algorithms.fedabc import FEDABC_WI
from .. import PAPER
from ....repro.budget.gate import decide
from ..experiments import column_key
from ..reported import TABLE1

__all__ = ["VARIANTS", "values"]

#: The two bars of each pair: variant -> what it changes in FedABC's cell.
VARIANTS = {"fedabc": {}, "fedabc_wi": FEDABC_WI}


def build_cells(profile, opts) -> list[dict]:
    """FedABC and FedABC_wi on each of ``opts.datasets`` and ``opts.betas``; FedABC's cells are Table 1's."""
    cells = []
    for ds in opts.datasets:
        for beta in opts.betas:
            for variant, extra in VARIANTS.items():
                table1 = TABLE1.config("fedabc", column_key(ds, beta))
                cfg, note = decide(profile, table1, "fig5", then=extra)
                rounds = (cfg or table1)["rounds"]
                cells.append({"dataset": ds, "beta": float(beta), "variant": variant, "rounds": int(rounds),
                              "config": cfg, "note": note})
    return cells


def values(grid) -> pd.DataFrame:
    """Each bar of Fig. 5 as a row (dataset, Dir(β), variant, the rounds it trained), with its mean, std and
    per-seed values of the PFL accuracy (:func:`fedlib.repro.run.grid.aggregate`): the points the claim on the
    imbalance training (``fig5-ablation``, :mod:`..claims`) reads, paired by seed."""
    return grid.aggregate(["dataset", "beta", "variant", "rounds"], value="personalized_accuracy")


def build_summary(grid, opts) -> pd.DataFrame:
    """Per dataset and Dir(β): FedABC's and FedABC_wi's personalized accuracy (mean over seeds, %),
    the gain FedABC − FedABC_wi, and where the gain is smallest (the paper's claim 2: at Dir(0.1)).
    ``dataset`` is the paper's dataset's label, with "(run on …)" where a stand-in ran."""
    agg = grid.aggregate(["dataset", "beta", "variant"], value="personalized_accuracy")
    wide = agg.pivot_table(index=["dataset", "beta"], columns="variant", values="ours_mean").reset_index()
    used = agg.dropna(subset=["dataset_used"]).drop_duplicates("dataset").set_index("dataset").dataset_used
    wide["dataset_used"] = wide.dataset.map(used)
    for col in VARIANTS:
        if col not in wide:
            wide[col] = math.nan
    wide["gain"] = wide["fedabc"] - wide["fedabc_wi"]
    wide["smallest_gain"] = False
    for ds, grp in wide.groupby("dataset"):
        if grp.gain.notna().any():
            wide.loc[grp.gain.idxmin(), "smallest_gain"] = True
    wide["dataset"] = [PAPER.dataset_label(p) + ("" if u in (p, None) or pd.isna(u) else
                                                 f" (run on {PAPER.dataset_label(u)})")
                       for p, u in zip(wide.dataset, wide.dataset_used)]
    return wide[["dataset", "beta", "fedabc", "fedabc_wi", "gain", "smallest_gain"]]


def build_findings(summary: pd.DataFrame, opts) -> list[str]:
    """The paper's two claims of Fig. 5, counted on the summary: FedABC ahead at every α, the
    smallest gain at Dir(0.1)."""
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
