"""FedLC's loss (§4) as the paper writes it in two places, the ways to read it, and τ.

Eq. 5 uses the log-prior margin with the sum over i ≠ y; Eq. 7 Eq. 6's margin τ n_y^(−1/4), also
over i ≠ y as printed (the true class's term is missing, so both are unbounded below); the
standard logit-adjusted form sums over every class.  :data:`CALIBRATION_VARIANTS` names each
reading (``fedlc_denominator``, ``fedlc_margin``, ``fedlc_missing``: a missing class clamped to
n = 1 or masked out of the softmax).  Two studies: ``calibration`` (every variant beside FedAvg
and FedRS in each setting) and ``calibration_tau`` (τ, which the paper does not give).
"""

from __future__ import annotations

import pandas as pd

from ...config import Config
from ...repro.run.grid import diverged_lines
from . import PAPER
from .experiments import setting_params, skew_label
from ...repro.budget.gate import decide

__all__ = ["CALIBRATION_VARIANTS", "CALIBRATION_LABELS"]

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
BASELINES = ("fedavg", "fedrs")


def _params(name: str, variants: dict = CALIBRATION_VARIANTS) -> dict:
    return {"method": "fedlc", **variants[name]} if name in variants else {"method": name}


# ----------------------------------------------------------------------------- the variants
def variant_cells(profile, opts, *, variants: dict | None = None, labels: dict = CALIBRATION_LABELS,
                  baselines: tuple = BASELINES) -> list[dict]:
    """The ``baselines`` (FedAvg, FedRS) and every FedLC loss variant of ``variants`` (default: those of
    ``opts.variants``; a name -> FedLC parameters mapping) in each setting of ``settings``."""
    variants = {v: CALIBRATION_VARIANTS[v] for v in opts.variants} if variants is None else variants
    cells = []
    for key in opts.settings:
        for name in (*baselines, *variants):
            cfg, note = decide(profile, PAPER.base(**setting_params(key), **_params(name, variants)), "calibration")
            tau = cfg.get("tau", Config.tau) if cfg and cfg["method"] == "fedlc" else float("nan")
            cells.append({"setting": skew_label(key), "column": key, "variant": name,
                          "label": labels[name], "tau": tau, "config": cfg, "note": note})
    return cells


def variant_summary(grid, opts) -> dict:
    """``var``: accuracy per (variant, setting) (mean, std over seeds); ``variants``: the accuracy
    table (variant × setting), each row minus FedAvg and the mean gain over FedAvg; ``tau_text``:
    the τ values the FedLC variants ran with."""
    if grid.ok().empty:
        raise RuntimeError("no calibration run finished: " + "; ".join(grid.runs.note.dropna().unique()))
    taus = sorted(set(grid.runs.tau.dropna()))
    var = grid.aggregate(["variant", "label", "setting"])
    table = var.pivot_table(index=["variant", "label"], columns="setting", values="ours_mean", sort=False)
    fedavg = table.xs("fedavg", level="variant").iloc[0]
    gain = table.sub(fedavg, axis=1).add_suffix(" − FedAvg")
    variants = pd.concat([table, gain], axis=1).reset_index()
    variants["mean gain over FedAvg"] = gain.mean(axis=1).values
    return {"var": var, "table": table, "variants": variants,
            "tau_text": "τ = " + ", ".join(f"{t:g}" for t in taus) + " for every FedLC variant",
            "datasets": grid.runs.dataset_used.dropna().unique()}


def variant_findings(summary, opts) -> list[str]:
    """The best variant, Eq. 7 as printed against the standard form, and the diverged runs."""
    variants, table = summary["variants"], summary["table"]
    best = variants[~variants.variant.isin(BASELINES)].sort_values("mean gain over FedAvg", ascending=False)
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
    return findings + [f"{line} (a broken model's accuracy: left out of the table)"
                       for line in diverged_lines(summary["var"], ["label", "setting"])]


# ----------------------------------------------------------------------------- τ
def tau_cells(profile, opts) -> list[dict]:
    """Each variant of ``tau_variants`` at each τ of ``taus`` in ``tau_setting``, and FedAvg and FedRS
    there (the sweep's reference lines; the same runs as the variants study's)."""
    cells = []
    for name in opts.tau_variants:
        for tau in opts.taus:
            cfg, note = decide(profile, PAPER.base(**setting_params(opts.tau_setting), tau=float(tau), **_params(name)),
                               "calibration")
            cells.append({"variant": name, "label": CALIBRATION_LABELS[name], "tau": float(tau), "config": cfg,
                          "note": note})
    for name in BASELINES:
        cfg, note = decide(profile, PAPER.base(**setting_params(opts.tau_setting), **_params(name)), "calibration")
        cells.append({"variant": name, "label": CALIBRATION_LABELS[name], "tau": float("nan"), "config": cfg,
                      "note": note})
    return cells


def tau_summary(grid, opts) -> dict:
    """``tau``: accuracy per (variant, τ); ``baselines``: FedAvg and FedRS in the same setting."""
    runs = grid.runs
    sweep = runs[~runs.variant.isin(BASELINES)]
    tau = grid.aggregate(["variant", "label", "tau"]).pipe(lambda d: d[~d.variant.isin(BASELINES)])
    base = grid.aggregate(["variant", "label"]).pipe(lambda d: d[d.variant.isin(BASELINES)])
    base = base.assign(setting=skew_label(opts.tau_setting)).reset_index(drop=True)
    return {"tau": tau.reset_index(drop=True), "baselines": base,
            "datasets": sweep.dataset_used.dropna().unique()}


def tau_findings(summary, opts) -> list[str]:
    tau = summary["tau"].dropna(subset=["ours_mean"])  # a variant not run at any τ has no best τ
    best = tau.loc[tau.groupby("variant").ours_mean.idxmax()]
    return [f"{r.label}: best τ = {r.tau:g} ({r.ours_mean:.2f}%)" for r in best.itertuples()]

