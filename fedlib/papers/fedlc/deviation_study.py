"""The deviation-bound study (§3-4): Theorem 1's condition and the measured deviation, CE vs FedLC.

From a FedAvg global model (:func:`.experiments.trained_cell`), the most skewed client runs real
local SGD with plain cross-entropy and with FedLC's loss (:func:`.local_update.deviation_experiment`);
the tables count how often ``n_j/n_r > D_jr`` held, how often the update deviated, and how often
Eq. 17 predicted it, and show ``D_jr`` before and after calibration by minority class size
(Theorem 3).  :mod:`.studies` declares the study.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .experiments import not_run_frame, trained_model
from .local_update import deviation_experiment

__all__ = ["LOSS_NAMES"]

#: The two losses of the deviation-bound study.
LOSS_NAMES = {"ce": "softmax CE (Definition 3)", "fedlc": "FedLC calibrated loss (Theorem 3)"}


def _rates(d: pd.DataFrame) -> pd.Series:
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


def deviation_summary(grid, opts) -> dict:
    """``measurements`` (one row per pair, step and loss), ``rates`` (per loss: the condition, the
    deviation, Eq. 17's prediction) and ``by_minority_size`` (medians of D_jr without and with
    calibration per n_r, on the CE run's models); ``not_run`` (why) where the model is not run here."""
    start = trained_model(grid, opts.store)
    if start is None:
        return {"not_run": not_run_frame("deviation", grid)}
    dev = deviation_experiment(start, epochs=opts.epochs, max_steps=opts.max_steps, record="step")
    rates = dev[dev.D_valid].groupby("loss").apply(_rates).rename(index=LOSS_NAMES).reset_index()
    rates["pair-steps"] = rates["pair-steps"].astype(int)
    by_size = dev[dev.loss == "ce"].assign(D_cal_over_D_plain=lambda d: d.D_cal / d.D_plain)
    by_size = by_size.groupby("n_r")[["ratio", "D_plain", "D_cal", "D_cal_over_D_plain"]].median().reset_index()
    return {"result": start, "measurements": dev, "rates": rates, "by_minority_size": by_size}


def deviation_findings(summary, opts) -> list[str]:
    if "not_run" in summary:
        return []
    dev = summary["measurements"]
    findings = [f"with {r.loss.split(' (')[0]}, {r['deviated (%)']:.0f}% of the (pair, step) updates deviated; "
                f"{r['deviated when n_j/n_r > D (%)']:.0f}% when n_j/n_r > D_jr vs "
                f"{r['deviated when n_j/n_r ≤ D (%)']:.0f}% otherwise; "
                f"Eq. 17's sign prediction matched the measurement in {r['prediction = measurement (%)']:.0f}%"
                for _, r in summary["rates"].iterrows()]
    ce = dev[(dev.loss == "ce") & dev.D_valid]
    ratio_cal = ce.D_cal / ce.D_plain
    trend = np.corrcoef(np.log(ce.n_r), np.log(ratio_cal))[0, 1] if len(ce) > 2 and ce.n_r.nunique() > 1 else np.nan
    findings.append(f"calibration changes D_jr by a factor D_cal/D_plain of median {ratio_cal.median():.2f} "
                    f"(range {ratio_cal.min():.2f}–{ratio_cal.max():.2f}) on the same model; correlation of "
                    f"log(D_cal/D_plain) with log n_r: {trend:+.2f} (negative = calibration enlarges D_jr most for "
                    "the rarest classes, as Theorem 3 says)")
    return findings
