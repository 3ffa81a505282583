"""Classes a client lacks (n_y = 0) in FedLC's loss: each way to read them, beside FedAvg.

Eq. 7 subtracts τ·n_y^(−1/4) from logit y.  A missing class has n_s = 0 (Definition 2), so read
literally its offset is −∞ and the class leaves the softmax.  What the public re-implementations
do (FedLC has no official code; issue 35):

* Flower's FedLC baseline, fluke and FedDecorr leave the class out of the softmax: the literal
  reading, fedlib's ``fedlc_missing="mask"``;
* FL-bench sets n_s = 1e-8, an offset of −100τ: ``fedlc_min_count=1e-8``.  In float32 it is the
  mask: e^(−100) ≈ 4e-44 vanishes beside the present classes' terms (the loss is the same number,
  the absent logits' gradient ~1e-44 instead of 0);
* PFLlib counts over all clients, not the client's own (Algorithm 1 uses the client's): on a
  balanced training set every offset is the same and cancels in the softmax, so it is FedAvg, the
  reference row here.

fedlib's default (``"clamp"``: n_s := 1, an offset of −τ) is done by none of them; it keeps the
absent classes in the softmax at nearly plain cross-entropy's weight.  The mask faces the paper
(Eq. 7 with Definition 2's n_s = 0, and three public implementations of four that use local counts);
the tables keep fedlib's default, which is kinder to FedLC here.  One study, ``absent_classes``.
"""

from __future__ import annotations

import math

import pandas as pd

from .calibration import variant_cells

__all__ = ["READINGS", "LABELS", "FACES_PAPER", "PUBLIC_RESULTS", "absent_cells", "absent_findings"]

_STANDARD = {"fedlc_denominator": "full", "fedlc_margin": "quarter_power"}
#: The readings of n_s = 0, as FedLC parameters (the full softmax of the tables' FedLC).
READINGS: dict[str, dict] = {
    "clamp": {**_STANDARD, "fedlc_missing": "clamp"},
    "fl_bench": {**_STANDARD, "fedlc_missing": "clamp", "fedlc_min_count": 1e-8},
    "mask": {**_STANDARD, "fedlc_missing": "mask"},
}
LABELS = {
    "fedavg": "FedAvg (= PFLlib's FedLC, balanced data)",
    "clamp": "n_s := 1, −τ (fedlib's default)",
    "fl_bench": "n_s := 1e-8, −100τ (FL-bench)",
    "mask": "n_s = 0, masked (faces the paper)",
}
#: The reading that faces the paper: Eq. 7 with Definition 2's n_s = 0.
FACES_PAPER = "mask"

#: FedLC − FedAvg as a public re-implementation reports it (test accuracy %, as issue 35 quotes it).
PUBLIC_RESULTS = (
    {"source": "Flower's FedLC baseline (README)", "reading": "mask", "setting": "CIFAR-10 Dir(0.05)",
     "fedavg": 68.11, "fedlc": 62.51},
)


def absent_cells(profile, opts) -> list[dict]:
    """FedAvg and FedLC under each reading of ``readings`` in each setting of ``settings``
    (the ``calibration`` experiment's: its FedAvg, clamp and mask runs are the ``calibration`` study's)."""
    return variant_cells(profile, opts, variants={k: READINGS[k] for k in opts.readings}, labels=LABELS,
                         baselines=("fedavg",))


def absent_findings(summary, opts) -> list[str]:
    """Each reading's gain over FedAvg, the reading that faces the paper, FL-bench's against the mask,
    and the public re-implementations' own results."""
    variants = summary["variants"].set_index("variant")
    gains = variants["mean gain over FedAvg"]
    settings = ", ".join(summary["table"].columns)
    out = [f"{LABELS[v]}: {gains[v]:+.2f} pp over FedAvg (mean over {settings})"
           for v in opts.readings if v in gains and pd.notna(gains[v])]
    if FACES_PAPER in gains and "clamp" in gains and pd.notna(gains[FACES_PAPER]) and pd.notna(gains["clamp"]):
        best = gains.drop("fedavg", errors="ignore").max()
        out.append(f"the reading that faces the paper (the mask) against fedlib's default: "
                   f"{gains[FACES_PAPER] - gains['clamp']:+.2f} pp; "
                   + ("no reading beats FedAvg" if best <= 0 else f"the best reading beats FedAvg by {best:+.2f} pp"))
    if {"fl_bench", "mask"} <= set(gains.index):
        acc = summary["table"]
        diff = (acc.xs("fl_bench", level="variant").iloc[0] - acc.xs("mask", level="variant").iloc[0]).abs().max()
        if not math.isnan(diff):
            out.append(f"FL-bench's n_s = 1e-8 against the mask: largest accuracy difference {diff:.2f} pp")
    out += [f"{r['source']}, {r['setting']} ({r['reading']}): FedAvg {r['fedavg']:.2f}, FedLC {r['fedlc']:.2f} "
            f"({r['fedlc'] - r['fedavg']:+.2f} pp)" for r in PUBLIC_RESULTS]
    return out
