"""FedConcat's claims (:class:`fedlib.repro.spec.claims.Claim`), quoted from ``fedconcat_aaai2024_slides.txt``:
the slides hold no results prose, so the tables' claims quote the captions that introduce them (the
quantity says what is claimed); evaluated at every scale that ran by :mod:`fedlib.repro.artefacts.claims`."""

from __future__ import annotations

from ...repro.spec.claims import Best, Claim, Gap

__all__ = ["CLAIMS"]

_PARTS = ("c2", "c3", "dir0.1", "dir0.5")
_T1 = tuple(f"{d}_{p}" for d in ("cifar10", "svhn", "fmnist") for p in _PARTS)
_CIFAR = tuple(f"cifar10_{p}" for p in _PARTS)
_RIVALS = ("fedavg", "fedprox", "moon", "fedrs", "fedlc")
_CONCAT = ("Intuitively, concatenating the features from different local extractors can provide a better "
           "feature representation for label skews.")  # §Method, the headline claim under both input scalings
_T1_CAPTION = "Experimental results of our methods compared with baselines with same communication cost."

CLAIMS = (
    Claim("headline", _CONCAT, "Method; Table 1",
          Gap("table1", "fmnist_c2", "fedconcat", "fedavg"), "sign", headline=True,
          notes=("The cell of the budget ladder: FMNIST #C=2, the paper's +5.40 pp.",)),
    Claim("headline-code-inputs", _CONCAT, "Method; Table 1",
          Gap("table1", "fmnist_c2", "unit/fedconcat", "unit/fedavg"), "sign",
          notes=("The headline cell with the authors' input scaling (input_normalization='unit_interval', pixels in "
                 "[0, 1]), the reading that faces the paper: its numbers come from that code.",)),
    Claim("table1-best", _T1_CAPTION, "Table 1", Best("table1", _T1, "fedconcat", rivals=_RIVALS), "best",
          notes=("The caption introduces the comparison; the claim read from it: FedConcat ≥ every baseline.",)),
    Claim("table1-cifar10", _T1_CAPTION, "Table 1", Gap("table1", _CIFAR, "fedconcat", "fedavg"), "sign"),
    Claim("table1-fedlc", _T1_CAPTION, "Table 1", Gap("table1", _CIFAR, "fedlc", "fedavg"), "sign",
          notes=("FedConcat's own FedLC − FedAvg on CIFAR-10 averages −0.25 pp: no FedLC gain "
                 "(beside FedLC's claimed +12.81 pp at D(β=0.5); figures/fedlc/claims.md).",)),
    Claim("table2-scalability", "Scalability of FedConcat and FedConcat-ID compared with baselines on CIFAR-10 "
          "dataset.", "Table 2", Gap("table2", tuple(f"n100_cifar10_{p}" for p in _PARTS), "fedconcat", "fedavg"),
          "sign"),
    Claim("table3-resnet", "Experimental results on CIFAR-100 and Tiny-ImageNet with ResNet-50.", "Table 3",
          Gap("table3", tuple(f"cifar100_{p}" for p in _PARTS), "fedconcat", "fedavg"), "sign"),
)
