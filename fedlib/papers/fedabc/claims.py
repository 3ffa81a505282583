"""FedABC's claims (:class:`fedlib.repro.spec.claims.Claim`): one per distinct statement of the abstract, the
contributions and the results that a paper table measures, each quoted from ``fedabc_aaai2023.txt``; evaluated at
every scale that ran by :mod:`fedlib.repro.artefacts.claims`.  ``LEFT_OUT``: the central claims no table or study
summary of ours decides, and why; ``WHY``: why the headline does not reproduce."""

from __future__ import annotations

from ...repro.spec.claims import Best, Claim, Contrast, Gap, LeftOut, Part

__all__ = ["CLAIMS", "LEFT_OUT", "WHY"]

_DIRS = ("0.1", "0.3", "0.5", "1.0")
_ALL = tuple(f"{d}_dir{b}" for d in ("mnist", "cifar10") for b in _DIRS)
_CIFAR = tuple(f"cifar10_dir{b}" for b in _DIRS)
_MNIST = tuple(f"mnist_dir{b}" for b in _DIRS)
_ROWS = ("local", "fedavg", "fedprox", "scaffold", "lg_fedavg", "fedper", "fedrep", "fedrod", "fedabc")
_PFL = ("lg_fedavg", "fedper", "fedrep", "fedrod")
_BASELINES = tuple(r for r in _ROWS if r != "fedabc")
_NOT_SCAFFOLD = tuple(r for r in _ROWS if r != "scaffold")



def _ablation(beta: str) -> Part:
    """FedABC − FedABC_wi on CIFAR-10 Dir(β): a pair of Fig. 5's bars (the study ``fig5``, its
    ``fig5_ablation_values``); FedABC's bar is Table 1's cell, whose budget the pair shares."""
    return Part(Contrast("fig5_ablation_values", {"dataset": "cifar10", "beta": float(beta), "variant": "fedabc"},
                         {"dataset": "cifar10", "beta": float(beta), "variant": "fedabc_wi"}, "cifar10",
                         label=f"FedABC − FedABC_wi, CIFAR-10 Dir({beta})", figure="fig5_ablation",
                         budget_of=("table1", "fedabc", f"cifar10_dir{beta}")),
                "sign", name=f"Dir({beta})", direction=+1)


CLAIMS = (
    Claim("headline", "Extensive experiments are conducted on two popular datasets under different settings, and "
          "the results demonstrate that our FedABC can significantly outperform the existing counterparts.",
          "Abstract; Table 1",
          parts=(Part(Gap("table1", "mnist_dir0.3", "fedabc", "fedavg"), "sign", name="MNIST Dir(0.3)"),
                 Part(Gap("table1", _MNIST, "fedabc", "fedavg"), "sign", name="MNIST, every Dir(β)"),
                 Part(Gap("table1", _CIFAR, "fedabc", "fedavg"), "sign", name="CIFAR-10, every Dir(β)")),
          headline=True,
          notes=("The first part is the cell of the budget ladder: MNIST Dir(0.3), the paper's +0.40 pp (PFL "
                 "accuracy).",
                 "The conclusion says the same (\"Extensive experiments are conducted on two popular datasets, and "
                 "the results show that our FedABC can significantly improve the PFL performance in diverse "
                 "heterogeneity settings.\"): one claim, with a part per dataset.")),
    Claim("table1-best", "4) Regard to the PFL accuracy, our FedABC achieves promising performance and outperforms "
          "other baselines.", "Table 1, Results", Best("table1", _ALL, "fedabc", rivals=_BASELINES), "best"),
    Claim("table1-fedrod", "3) FedRod achieves the best performance in baselines.", "Table 1, Results",
          Best("table1", _ALL, "fedrod", rivals=tuple(r for r in _BASELINES if r != "fedrod")), "best",
          notes=("Read on Table 1 (PFL accuracy); on Table 2 (client drift) the next observation names Scaffold "
                 "the best instead (table2-scaffold).",)),
    Claim("table2-scaffold", "4) Regard to the client drift, Scaffold uses control variates to correct for the "
          "‘client-drift’ in its local updates and thus achieves the best performance.", "Table 2, Results",
          parts=(Part(Best("table2", _ALL, "scaffold", rivals=_NOT_SCAFFOLD), "best", name="as printed"),
                 Part(Best("table2", _ALL, "effective/scaffold", rivals=_NOT_SCAFFOLD), "best",
                      name="effective steps")),
          notes=("'as printed': fedlib's default SCAFFOLD, option II as its paper prints it; 'effective steps': "
                 "over its effective local steps (scaffold_steps='effective', the reading that faces the "
                 "paper), since option II as printed overshoots by 1/(1 − μ) under momentum and diverges at "
                 "Dir(0.1).",)),
    Claim("table2-drift", "Our FedABC also achieves nice performance compared with other methods, especially in "
          "PFL baselines.", "Table 2, Results",
          parts=(Part(Gap("table2", _MNIST, "fedabc", "fedavg"), "sign", name="vs FedAvg, every class"),
                 Part(Gap("table2", _MNIST, "fedabc", "held/fedavg"), "sign", name="vs FedAvg, held classes"),
                 Part(Best("table2", _ALL, "fedabc", rivals=_PFL), "best", name="vs the PFL baselines")),
          notes=("'every class': fedlib's default personalized model of a generic method, whose local update "
                 "predicts every class; 'held classes': the reading that faces the paper, where a generic "
                 "method's personalized model predicts only the classes its client holds "
                 "(personalized_classes='held'); the paper's FedAvg values sit at that reading's ceiling "
                 "(notebooks/fedabc/README.md).",)),
    Claim("fig5-ablation", "1) Adopting our imbalanced training technique can effectively improve PFL performance.",
          "Figure 5, Ablation study", parts=tuple(_ablation(b) for b in _DIRS),
          notes=("FedABC against FedABC_wi, FedABC without under-sampling and hard-sample mining "
                 "(fedlib.algorithms.fedabc.FEDABC_WI), on CIFAR-10 as the paper's ablation; the figure prints no "
                 "values and the text's numbers are lost, so each Dir(β) is decided on its sign.",
                 "Contribution 2 (the loss design) rests on this figure.")),
)

LEFT_OUT = (
    LeftOut("The improvement of the imbalance training decreases as heterogeneity increases (Fig. 5's second "
            "finding)", "Figure 5, Ablation study",
            "a difference of two gains (four bars: the gain at Dir(1.0) minus the gain at Dir(0.1)), where a "
            "Contrast is one bar minus another; the paper prints no value for either gain (\"The specific accuracy "
            "improvement is , , , \" lost its numbers). The gains are in fig5_ablation_gains.csv."),
    LeftOut("Generic FL methods with personalized models outperform the existing PFL algorithms, especially at "
            "Dir(0.1) (observation 1)", "Tables 1 & 2, Results",
            "names no pair or order of rows: 'generic FL' and 'PFL algorithms' are families of 3 and 4 rows, and "
            "'especially at 0.1' is a trend; no gap, best or ranking rule states it without choosing for the paper"),
    LeftOut("PFL accuracy decreases as heterogeneity decreases (observation 2)", "Tables 1 & 2, Results",
            "a trend along the columns, which the claim rules (gap, best, ranking) do not decide"),
    LeftOut("The one-vs-all binary classification liberates classes from unfair competition (contribution 1)",
            "Introduction, Figures 1-2",
            "a design claim whose evidence is the headline comparison (declared); Fig. 2's per-class picture "
            "prints no values, and our summary of it (fig2_roles.csv) is a row per loss with the class roles "
            "(majority, minority, absent) as columns and no ours_mean, n_seeds or seeds, so a Contrast "
            "cannot select a point of it"),
)

WHY = (
    "FedABC's headline gain is not seen: at the paper's own cell (MNIST Dir(0.3), 100 rounds, 3 seeds) "
    "FedABC − FedAvg is +0.13 pp, paired 95 % interval [−0.04, +0.29], against the paper's +0.40 "
    "([the budget ladder](figures/fedabc/paper/budget_ladder.md)). "
    "The interval excludes the paper's gain and holds 0, so the paper's size is ruled out and no gain is shown. "
    "A small gain is there: at quick's 20 rounds, over 7 to 9 paired seeds, FedABC − FedAvg is +0.16 pp at "
    "Dir(0.3) (95 % [+0.10, +0.22]) and +0.14 over every MNIST Dir(β) (95 % [+0.08, +0.20]), the paper's "
    "direction at about a third of its +0.40 and +0.43 ([claims.md](figures/fedabc/claims.md)); the ledger "
    "decides the headline at the paper's 100 rounds, where 3 seeds cannot separate such a gain from 0. "
    "Along the ladder, from 20 to 100 rounds, the gap stays at +0.09 to +0.16 pp and does not move toward the "
    "paper's value ([paper_scale.md](docs/paper_scale.md#fedabc)). "
    "The CIFAR-10 half of the claim, where the paper's gains are larger, needs a GPU and has not run at the "
    "paper's scale."
)
