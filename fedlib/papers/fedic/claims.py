"""FEDIC's claims (:class:`fedlib.repro.spec.claims.Claim`): the conclusion's headline and each main table's,
each quoted from ``fedic_icme2022.txt`` (its abstract states no result); evaluated at every scale that ran by
:mod:`fedlib.repro.artefacts.claims`."""

from __future__ import annotations

from ...repro.spec.claims import Best, Claim, Gap, Ranking

__all__ = ["CLAIMS"]

_T1 = tuple(f"{d}_if{f}" for d in ("cifar10", "cifar100") for f in (100, 50, 10))

CLAIMS = (
    Claim("headline", "Experiments have shown that FEDIC outperforms the state-of-the-art FL methods on datasets "
          "with the non-IID and long-tailed setting.", "Conclusion; Table 1",
          Gap("table1", "cifar10_if100", "fedic", "fedavg"), "sign", headline=True,
          notes=("The cell of the budget ladder: CIFAR-10-LT, IF = 100, the paper's +10.99 pp.",)),
    Claim("table1-size", "Compared with the baseline FedAvg, the performance gain of FEDIC is the highest when "
          "IF=100 (around 11% for CIFAR-10-LT and 7.8% for CIFAR-100-LT).", "Table 1, §4.2",
          Gap("table1", "cifar10_if100", "fedic", "fedavg"), "size", margin=1.0),
    Claim("table1-best", "FEDIC achieves the highest test accuracy on both datasets with different IFs.",
          "Table 1, §4.2", Best("table1", _T1, "fedic"), "best"),
    Claim("table1-distillation", "For the distillation-based methods, FedDF and FedBE perform even worse than "
          "FedAvg.", "Table 1, §4.2", Gap("table1", _T1, "feddf", "fedavg"), "sign"),
    Claim("table2-best", "Compared with the other methods, FEDIC achieves the best results on all cases we have "
          "tried thus far.", "Table 2, §4.2", Best("table2", ("all", "many", "medium", "few"), "fedic"), "best"),
    Claim("table3-calibration", "Compared with the baseline (a), the overall accuracy of the calibrated ensemble "
          "model (d) is improved by 11.2%.", "Table 3, §4.3", Gap("table3", "all", "d", "a"), "sign"),
    Claim("table3-order", "Also, the effectiveness of each component in FEDIC has been validated empirically.",
          "Conclusion; Table 3", Ranking("table3", "all", tuple("abcdefgh")), "ranking"),
)
