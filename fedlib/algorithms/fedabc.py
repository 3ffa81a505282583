"""FedABC (Wang et al., AAAI 2023, "FedABC: Targeting Fair Competition in Personalized
Federated Learning").

FedAvg with FedABC's personalized binary loss on the client
(:func:`fedlib.losses.fedabc_loss`: one sigmoid per class on the shared body, per-client
sets P and N of classes with and without local positives, under-sampling thresholds and
focal-style hard-sample mining).  Every parameter is shared and averaged ("based on the
vanilla federated by averaging framework"); the personalized model is the locally trained
model (§Problem formulation), so runs evaluate personalized models by default.

The paper's four hyperparameters (τ_pos, τ_neg^P, τ_neg^N, γ; "Configuration") were lost
in extraction and exist nowhere public (notes §0).  The defaults below are the notes'
defensible choices (§4): γ = 2, the focal-loss default (Lin et al. 2017), and the middle of
the notes' search grid for each threshold (τ_pos ∈ {0.8, 0.9, 0.95}, τ_neg^P ∈ {0.05, 0.1,
0.2}, τ_neg^N ∈ {0.05, 0.1, 0.3}).  :data:`FEDABC_WI` are the settings of the ablation
FedABC_wi (Fig. 5: without under-sampling and hard-sample mining), where the loss is plain
one-vs-all BCE.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..losses import NORMALIZATIONS, fedabc_loss
from ..params import Param
from .personalization import LocallyTrained
from .kinds import ClientLoss
from .registry import register_method

#: FedABC_wi (Fig. 5): every positive and negative kept, no focal weight: one-vs-all BCE.
FEDABC_WI = {"fedabc_tau_pos": 1.0, "fedabc_tau_neg_present": 0.0, "fedabc_tau_neg_absent": 0.0,
             "fedabc_gamma": 0.0}


@dataclass(frozen=True)
class BinaryLoss(ClientLoss):
    tau_pos: float = 0.9
    tau_neg_present: float = 0.1
    tau_neg_absent: float = 0.1
    gamma: float = 2.0
    normalization: str = "batch"
    name = "fedabc"

    def __call__(self, logits, targets, class_counts, sample_weight=None):
        return fedabc_loss(logits, targets, class_counts, self.tau_pos, self.tau_neg_present, self.tau_neg_absent,
                           self.gamma, normalization=self.normalization, sample_weight=sample_weight)


def _probability(name: str, default: float, doc: str, grid: str, field: str) -> Param:
    return Param(name, default, float, doc, check=lambda v: 0 <= v <= 1, allowed="in [0, 1]", field=field,
                 source=f"reconstructed: blank in FedABC's Configuration; middle of the notes' grid {grid} "
                        "(shared/papers/notes/fedabc.md §4)")


register_method(
    "fedabc",
    parts={"loss": BinaryLoss, "personalization": LocallyTrained},
    params=(
        _probability("fedabc_tau_pos", 0.9, "FedABC Eq. 4 τ_pos: a positive is kept while p < τ_pos (1 keeps all)",
                     "{0.8, 0.9, 0.95}", field="tau_pos"),
        _probability("fedabc_tau_neg_present", 0.1, "FedABC Eq. 4 τ_neg^P: a negative of a class with local "
                     "positives is kept while p > τ_neg^P (0 keeps all)", "{0.05, 0.1, 0.2}", field="tau_neg_present"),
        _probability("fedabc_tau_neg_absent", 0.1, "FedABC Eq. 4 τ_neg^N: a negative of a class without local "
                     "positives is kept while p > τ_neg^N (0 keeps all)", "{0.05, 0.1, 0.3}", field="tau_neg_absent"),
        Param("fedabc_gamma", 2.0, float, "FedABC Eq. 5 γ, the focal exponent of hard-sample mining (0: none)",
              check=lambda v: v >= 0, allowed="≥ 0",
              source="reconstructed: blank in FedABC; the focal-loss default (Lin et al. 2017; notes §4)",
              field="gamma"),
        Param("fedabc_normalization", "batch", str, "FedABC Eq. 6 normalisation: the kept terms summed over "
              "classes and samples, divided by the batch size ('batch') or by the number of kept terms ('kept')",
              choices=NORMALIZATIONS, source="reconstructed: the printed Eq. 6 is lost; 'batch' per notes §1",
              field="normalization"),
    ),
    paper="Wang et al., AAAI 2023",
    doc="loss: personalized one-vs-all binary loss (under-sampling, hard-sample mining); every parameter shared; "
        "personalized models evaluated by default")
