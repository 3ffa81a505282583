"""FEDIC's studies: everything the notebooks measure that is not one of the paper's tables, declared as
:class:`fedlib.repro.spec.study.Study` s and run by ``ctx.study(name)``.

* ``long_tail`` (notebook 01) -- §3.1: the long-tailed training set, D_aux, D_ulb and the groups;
* ``table3_groups`` (04) -- Table 3's runs by row and class group: do FT and LA lift the few-shot classes;
* ``fig3`` / ``fig4`` / ``fig5`` (05) -- §3.4: the size of D_aux, λ of Eq. 9, the non-IID degree α;
* ``learns`` (07) -- FEDIC − FedAvg at the budget where FedAvg learns (issue 49): :mod:`.learns`.

Every cell is the paper's CIFAR-10-LT (IF = 100) setting with the study's parameters, through
the gate (:func:`fedlib.repro.budget.gate.decide`), so runs shared with a table run once.  The paper gives the
figures' axis values only in its images: the options' defaults (the ``paper`` profile's values) are
fedlib's choices, each with its source.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...repro import Option, Study
from ...repro.artefacts.figure_checks_data import CHANCE_MARGIN_PP
from ...repro.budget.gate import data_view, decide, table_cells
from . import PAPER
from . import reported as paper
from .experiments import CIFAR10_LT, FIG3_CURVES, curve
from .learns import LEARNS

__all__ = ["STUDIES"]


def _positive(values) -> bool:
    return len(values) > 0 and all(isinstance(v, (int, float)) and v > 0 for v in values)


def _pp(value: float) -> str:
    return "not run" if value is None or math.isnan(value) else f"{value:+.2f} pp"


# ----------------------------------------------------------------------------- §3.1 the data
def _long_tail_summary(grid, opts) -> dict:
    """``{"counts": frame, "setting": dict}`` of the profile's CIFAR-10-LT (IF = 100) setting, drawn with
    ``opts.seed`` (None: the profile's first seed): per class, the training count after D_aux is taken
    out and the long tail applied, the class's group (many / medium / few by the run's ``group_rule``)
    and its D_aux count; the setting: |D_ulb|, the dataset used and the clients' sizes.  ``counts`` is
    None and the setting says why when the data are absent."""
    from ...config import Config
    from ...data import DatasetNotFoundError
    from ...metrics import class_groups
    from ...simulation import prepare

    profile = opts.profile
    cfg, note = decide(profile, PAPER.base("cifar10", **CIFAR10_LT, method="fedic"), "long_tail")
    if cfg is None:
        raise ValueError(note)
    seed = profile.seeds[0] if opts.seed is None else opts.seed
    c = Config.from_dict(data_view(cfg, seed))
    try:
        exp = prepare(c)
    except DatasetNotFoundError as err:
        return {"counts": None, "setting": {"not run": err.reason}}
    counts = np.asarray(exp.class_counts).sum(axis=0)
    groups = class_groups(counts, c.group_rule, c.group_rank_fraction, c.group_many_above, c.group_few_below)
    group_of = {int(k): g for g, ks in groups.items() for k in ks}
    server = exp.server_data
    aux_y = None if server is None else server.aux_y
    aux = np.zeros(len(counts), int) if aux_y is None else np.bincount(np.asarray(aux_y), minlength=len(counts))
    frame = pd.DataFrame({"class": range(len(counts)), "train_count": counts.astype(int),
                          "group": [group_of.get(k, "") for k in range(len(counts))], "aux_count": aux.astype(int)})
    sizes = np.asarray(exp.class_counts).sum(axis=1)
    setting = {"dataset": c.dataset, "long_tail_if": c.long_tail_if, "train": int(counts.sum()),
               "imbalance": float(counts.max() / max(counts.min(), 1)), "aux": int(aux.sum()),
               "unlabeled": c.server_unlabeled,
               "unlabeled_size": 0 if server is None or server.unlabeled_x is None else int(len(server.unlabeled_x)),
               "clients": int(len(sizes)), "client_size_min": int(sizes.min()), "client_size_max": int(sizes.max()),
               "group_rule": c.group_rule}
    return {"counts": frame, "setting": setting}


def _long_tail_findings(summary: dict, opts) -> list[str]:
    counts, s = summary["counts"], summary["setting"]
    if counts is None:
        return [f"not run: {s['not run']}"]
    groups = "; ".join(f"{g}: classes {', '.join(map(str, counts[counts.group == g]['class']))}"
                       for g in dict.fromkeys(counts.group))
    return [f"IF = {s['long_tail_if']:g}: {s['train']:,} training samples after D_aux ({s['aux']:,}) is taken out; "
            f"the largest class has {s['imbalance']:.0f}× the samples of the smallest "
            f"({counts.train_count.max():,} vs {counts.train_count.min():,})",
            f"groups ({s['group_rule']}): {groups}",
            f"D_ulb: {s['unlabeled']} ({s['unlabeled_size']:,} images); {s['clients']} clients of "
            + (f"{s['client_size_min']}" if s['client_size_min'] == s['client_size_max']
               else f"{s['client_size_min']}-{s['client_size_max']}") + " samples"]


LONG_TAIL = Study(
    "long_tail", "§3.1: the long-tailed training set, D_aux, D_ulb and the many / medium / few groups",
    build_cells=lambda profile, opts: [], build_summary=_long_tail_summary, build_findings=_long_tail_findings,
    trains=False,
    options=(Option("seed", None, int, "the seed of the partition shown (None: the profile's first seed)",
                    check=lambda v: v >= 0, allowed="an integer ≥ 0", optional=True, source="fedlib's choice"),))


# ----------------------------------------------------------------------------- Table 3 by group
_GROUPS = ("all", "many", "medium", "few")


def _table3_cells(profile, opts) -> list[dict]:
    """Table 3's cells (:func:`fedlib.repro.budget.gate.table_cells`), each with the run value it reads: the same
    runs as the table, read from the store."""
    t = paper.TABLES["table3"]
    return [{"row": c["row"], "column": c["column"], "row_label": t.row(c["row"]).label,
             "column_label": t.column(c["column"]).label, "metric": paper.table3_metric(c["row"], c["column"]),
             "config": c["config"], "note": c["note"]} for c in table_cells(profile, "table3")]


def _table3_summary(grid, opts) -> pd.DataFrame:
    """Ours, mean over seeds (%): one row per Table 3 row (label), one column per group (All / Many /
    Medium / Few), in the table's order."""
    long = curve(grid, ["row_label", "column_label"])
    t = paper.TABLES["table3"]
    wide = long.pivot(index="row_label", columns="column_label", values="ours_mean")
    wide = wide.reindex(index=[r.label for r in t.rows], columns=[t.column(g).label for g in _GROUPS])
    wide.index.name, wide.columns.name = "row", None
    return wide


def _table3_findings(wide: pd.DataFrame, opts) -> list[str]:
    """The paper's two readings of Table 3's teachers (under the inferred row mapping): FT and LA each
    lift the few-shot classes above the plain ensemble (a), and the gated teacher (d) is best overall."""
    t = paper.TABLES["table3"]
    few, all_ = t.column("few").label, t.column("all").label

    def ours(row: str, col: str) -> float:
        return float(wide.loc[t.row(row).label, col])

    def theirs(row: str, col: str) -> float:
        return t.value(row, {few: "few", all_: "all"}[col]).mean

    lift = [(f"{name} ({r})", ours(r, few) - ours("a", few), theirs(r, few) - theirs("a", few))
            for name, r in (("FT", "b"), ("LA", "c"))]
    lines = ["Table 3 (ours): few-shot accuracy of the teacher over the plain ensemble (a): "
             + ", ".join(f"{name} {_pp(o)} (paper {p:+.2f} pp)" for name, o, p in lift)]
    teachers = [r for r in "abcd" if not math.isnan(ours(r, all_))]
    if teachers:
        best = max(teachers, key=lambda r: ours(r, all_))
        top = max("abcd", key=lambda r: theirs(r, all_))
        lines.append(f"Table 3 (ours): best teacher overall of the {len(teachers)} that ran: {t.row(best).label} "
                     f"({ours(best, all_):.2f} %); the paper's: {t.row(top).label} ({theirs(top, all_):.2f} %)")
    return lines


TABLE3_GROUPS = Study(
    "table3", "Table 3 (ours) by row and group: the teachers (a)-(d) and the distilled students (e)-(h)",
    build_cells=_table3_cells, build_summary=_table3_summary, build_findings=_table3_findings, name="table3_groups")


# ----------------------------------------------------------------------------- §3.4 Figs. 3-5
def _fig3_cells(profile, opts) -> list[dict]:
    """Each D_aux size × each D_ulb size × curve.  FedAvg does not use D_ulb: it runs once per D_aux size
    (its D_aux is taken out of the training set all the same, as in the paper's code)."""
    cells = []
    for aux in opts.aux_per_class:
        for ulb in opts.ulb_sizes:
            for name, (params, metric) in FIG3_CURVES.items():
                if name == "FedAvg" and ulb != opts.ulb_sizes[0]:
                    continue
                extra = {} if name == "FedAvg" else {"server_unlabeled_size": int(ulb)}
                base = PAPER.base("cifar10", **CIFAR10_LT, server_aux_per_class=int(aux), **params, **extra)
                cfg, note = decide(profile, base, "fig3")
                cells.append({"curve": name, "aux_per_class": int(aux),
                              "ulb": "all" if not ulb or name == "FedAvg" else int(ulb), "metric": metric,
                              "config": cfg, "note": note})
    return cells


def _fig3_findings(frame: pd.DataFrame, opts) -> list[str]:
    """Fig. 3's claim: FEDIC above FedAvg and FT at every size of D_aux (per D_ulb)."""
    value = {(r.curve, r.ulb, r.aux_per_class): r.ours_mean for r in frame.itertuples()}
    lines = []
    for ulb in dict.fromkeys(frame.loc[frame.curve == "FEDIC", "ulb"]):
        ran = [a for a in opts.aux_per_class if not math.isnan(value.get(("FEDIC", ulb, a), math.nan))]
        above = {b: sum(value[("FEDIC", ulb, a)] > value.get((b, "all" if b == "FedAvg" else ulb, a), math.inf)
                        for a in ran) for b in ("FedAvg", "FT")}
        lines.append(f"Fig. 3 (D_ulb {ulb}): FEDIC above FedAvg at {above['FedAvg']} and above FT at {above['FT']} "
                     f"of the {len(ran)} D_aux sizes it ran (paper: above both at every size)")
    return lines


def _fig4_cells(profile, opts) -> list[dict]:
    """FEDIC at each λ of Eq. 9."""
    cells = []
    for lam in opts.lambdas:
        cfg, note = decide(profile, PAPER.base("cifar10", **CIFAR10_LT, method="fedic", fedic_lambda=float(lam)), "fig4")
        cells.append({"curve": "FEDIC", "lambda": float(lam), "metric": "accuracy", "config": cfg, "note": note})
    return cells


def _fig4_findings(frame: pd.DataFrame, opts) -> list[str]:
    """Fig. 4's claim: robust to most λ, a severe drop at λ = 1."""
    ran = frame.dropna(subset=["ours_mean"]).set_index("lambda").ours_mean
    others = ran.drop(1.0, errors="ignore")
    if 1.0 not in ran.index or others.empty:
        return ["Fig. 4: λ = 1 and another λ did not both run"]
    span = f"{others.min():.2f} %" if len(others) == 1 else f"{others.min():.2f}-{others.max():.2f} %"
    return [f"Fig. 4: FEDIC at λ = 1: {ran[1.0]:.2f} %, at the other λ {span} "
            f"(λ = 1 minus the lowest of them: {_pp(ran[1.0] - others.min())}; paper: robust to most λ, "
            f"a severe drop at λ = 1)"]


def _fig5_cells(profile, opts) -> list[dict]:
    """Each method at each Dirichlet concentration α (fedlib's ``partition_beta``)."""
    cells = []
    for m in opts.methods:
        for a in opts.alphas:
            cfg, note = decide(profile, PAPER.base("cifar10", **CIFAR10_LT, method=m, partition_beta=float(a)), "fig5")
            cells.append({"curve": paper.METHOD_LABELS.get(m, m), "method": m, "alpha": float(a),
                          "metric": "accuracy", "config": cfg, "note": note})
    return cells


def _classes(frame: pd.DataFrame) -> int:
    """The classes of the dataset ``frame``'s runs trained on (CIFAR-10-LT's 10 when it does not say)."""
    from ...data import DATASETS

    used = [d for d in frame.get("dataset_used", pd.Series(dtype=object)).dropna().unique() if d in DATASETS]
    return max((DATASETS[d].num_classes for d in used), default=10)


def _fig5_findings(frame: pd.DataFrame, opts) -> list[str]:
    """Fig. 5's claim: every method drops as α decreases, the compared methods more than FEDIC."""
    hi, lo = max(opts.alphas), min(opts.alphas)
    value = {(r.curve, r.alpha): r.ours_mean for r in frame.itertuples()}
    drops = {c: value.get((c, lo), math.nan) - value.get((c, hi), math.nan) for c in dict.fromkeys(frame.curve)}
    # a method at chance at the lowest α has dropped to the floor: its drop measures no method, and is said so
    floor = 100.0 / _classes(frame) + CHANCE_MARGIN_PP
    at_chance = {c for c in drops if value.get((c, lo), math.nan) <= floor}
    line = f"Fig. 5, α {hi:g} → {lo:g}: " + ", ".join(
        f"{c} {_pp(d)}" + (f" (at chance at α {lo:g})" if c in at_chance else "") for c, d in drops.items())
    fedic = drops.get("FEDIC", math.nan) if "FEDIC" not in at_chance else math.nan
    rest = [d for c, d in drops.items() if c != "FEDIC" and c not in at_chance and not math.isnan(d)]
    if not math.isnan(fedic) and rest:
        line += "; FEDIC drops the least" if fedic > max(rest) else "; FEDIC does not drop the least"
        line += " of the methods above chance" if at_chance else ""
    return [line + " (paper: every method drops, the compared methods more than FEDIC)"]


_FIGS_SOURCE = "fedlib's choice (the paper gives the values only in its image)"

FIG3 = Study(
    "fig3", "Fig. 3: FedAvg, FT and FEDIC against the size of D_aux (and of D_ulb)",
    build_cells=_fig3_cells, build_summary=lambda grid, opts: curve(grid, ["curve", "ulb", "aux_per_class"]),
    build_findings=_fig3_findings,
    options=(Option("aux_per_class", (20, 50, 100, 200, 500), tuple, "sizes of D_aux, samples per class",
                    check=lambda v: _positive(v) and all(isinstance(a, int) for a in v),
                    allowed="positive integers", source=_FIGS_SOURCE + "; 100 is the paper's setting (§3.1)"),
             Option("ulb_sizes", (5000, 25000, 0), tuple, "sizes of D_ulb for FT and FEDIC (0: all of it)",
                    check=lambda v: len(v) > 0 and all(isinstance(u, int) and u >= 0 for u in v),
                    allowed="integers ≥ 0", source=_FIGS_SOURCE + "; the curves are fractions of D_ulb")))

FIG4 = Study(
    "fig4", "Fig. 4: FEDIC against λ of Eq. 9",
    build_cells=_fig4_cells, build_summary=lambda grid, opts: curve(grid, ["curve", "lambda"]),
    build_findings=_fig4_findings,
    options=(Option("lambdas", (0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0), tuple, "values of λ (Eq. 9: the KL's weight)",
                    check=lambda v: len(v) > 0 and all(isinstance(x, (int, float)) and 0 <= x <= 1 for x in v),
                    allowed="numbers in [0, 1]", source=_FIGS_SOURCE + "; 0.5 is the paper's setting (§2.2)"),))

FIG5 = Study(
    "fig5", "Fig. 5: accuracy against the non-IID degree α of D(α)",
    build_cells=_fig5_cells, build_summary=lambda grid, opts: curve(grid, ["curve", "alpha"]),
    build_findings=_fig5_findings,
    options=(Option("alphas", (1.0, 0.5, 0.1, 0.05, 0.01), tuple, "Dirichlet concentrations α (smaller: more "
                    "non-IID)", check=_positive, allowed="positive numbers",
                    source="§3.4 (from 1.0 to 0.01); the values between: " + _FIGS_SOURCE),
             Option("methods", ("fedavg", "fedprox", "feddf", "fedic"), tuple, "the methods compared",
                    check=lambda v: len(v) > 0 and set(v) <= set(paper.METHODS),
                    allowed="Table 1's methods: " + ", ".join(paper.METHODS),
                    source="fedlib's choice (the paper compares 'four methods' without naming them)")))

STUDIES = (LONG_TAIL, TABLE3_GROUPS, FIG3, FIG4, FIG5, LEARNS)
