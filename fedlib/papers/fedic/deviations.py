"""Where fedlib's FEDIC and its baselines depart from the paper, follow its released code where the
paper is silent, or fill gaps (the released code covers FEDIC on CIFAR-10 only).

Each entry: what, the paper, the public code (``shared/papers/notes/fedic.md``), fedlib's default,
and the parameter that selects another behaviour ("" when none).  :data:`NOTES` are the lines every
profile lists under the tables and figures.
"""

from __future__ import annotations

__all__ = ["DEVIATIONS", "NOTES"]

DEVIATIONS: tuple[dict, ...] = (
    {"what": "normalisation in ResNet-8", "paper": "ResNet-8 (no detail)",
     "code": "BatchNorm; running statistics averaged with the weights and updated during distillation",
     "fedlib": "GroupNorm(2): the engines carry no buffers, so running statistics cannot be kept or averaged "
               "(fedlib.models.resnet8)", "param": "model"},
    {"what": "data augmentation", "paper": "not stated", "code": "random crop + flip for clients, D_aux and D_ulb",
     "fedlib": "none (images are decoded once into tensors)", "param": ""},
    {"what": "D_ulb for CIFAR-10-LT", "paper": "CIFAR-100", "code": "CIFAR-100 train split (50,000)",
     "fedlib": "CIFAR-100 when its files are there; otherwise the CIFAR-10 training samples the long tail drops "
               "(36,844 at IF = 100): in-distribution, which makes distillation easier than on CIFAR-100",
     "param": "server_unlabeled, server_unlabeled_size"},
    {"what": "D_ulb for CIFAR-100-LT", "paper": "downsampled ImageNet (32×32)", "code": "none",
     "fedlib": "the CIFAR-100 samples the long tail drops (no loader for downsampled ImageNet)",
     "param": "server_unlabeled"},
    {"what": "D_aux for CIFAR-100-LT", "paper": "not given", "code": "none (CIFAR-10 only)",
     "fedlib": "10 per class in Table 1's transcription (|D_aux| = 1,000 as for CIFAR-10; an inference)",
     "param": "server_aux_per_class"},
    {"what": "ImageNet-LT", "paper": "ResNet-50, 224×224 crops", "code": "broken loader",
     "fedlib": "OLTR split files, images at 64×64, ResNet-18 (GroupNorm); D_aux from the val split (20 per class), "
               "D_ulb CIFAR-100 resized", "param": "model"},
    {"what": "Dirichlet partition", "paper": "'following [8]' (FedDF)",
     "code": "two halves of 10 'auxiliary workers', then all lists re-cut into 20 equal chunks",
     "fedlib": "fedlib's D(β) (NIID-Bench balancing; the companion's setting redraws only for empty workers, "
               "min_client_size = 1, since D(0.01) cannot give 20 workers 10 samples each) re-cut into equal chunks "
               "of the class-sorted lists", "param": "partition_equal_sizes, min_client_size"},
    {"what": "the gate of Eq. 6", "paper": "σ = sigmoid(uᵀv), v averaged over the |S| sampled clients",
     "code": "Linear(256→1) with a bias; v divided by a hard-coded 8",
     "fedlib": "the paper's: no bias, 1/|S|", "param": "fedic_gate_bias"},
    {"what": "FEDIC's hidden server settings", "paper": "I = J = 100, Adam lr 0.001, λ = 0.5",
     "code": "T = 2 without T²; batches 20 (D_aux) / 128 (D_ulb); FT stage of 100 Adam steps (lr 1e-3, wd 2e-4) "
             "before and separate from the calibration; calibration Adam lr 1e-3, no wd; distillation Adam wd 2e-4; "
             "the three Adam states and the calibration kept across rounds; a_e initialised to ones",
     "fedlib": "the code's values, each a parameter",
     "param": "fedic_temperature, fedic_kd_t_squared, fedic_aux_batch_size, fedic_ulb_batch_size, fedic_finetune_*, "
              "fedic_calibration_*, fedic_distill_*, fedic_persist_optimizers, fedic_client_weight_init"},
    {"what": "FEDIC's server randomness", "paper": "not stated", "code": "RandomState(7) batches; client outputs "
     "recomputed per augmented batch",
     "fedlib": "batches from the run's seeded server generator; client outputs on D_aux computed once per round "
               "(no augmentation, so the same values)", "param": ""},
    {"what": "Table 3 protocol", "paper": "all FT/LA/KD combinations evaluated on one FEDIC run's round-200 models",
     "code": "removed", "fedlib": "one run per KD row (e)-(h); rows (a)-(d) are those runs' teacher accuracies at "
     "the last round; the row → switches mapping is inferred (check marks lost)",
     "param": "fedic_ft, fedic_la, fedic_kd, fedic_teacher_eval"},
    {"what": "many / medium / few", "paper": "not defined", "code": "none",
     "fedlib": "CIFAR-10-LT: 3/4/3 classes by training count (fits Table 3 best); ImageNet-LT: OLTR's thresholds "
               "(> 100, < 20)", "param": "group_rule, group_rank_fraction, group_many_above, group_few_below"},
    {"what": "FedDF", "paper": "Lin et al. 2020", "code": "the author's prototype (FDFT): uniform logit average, "
     "Adam 1e-3, T = 1, 100 steps × 128, from the FedAvg model",
     "fedlib": "the prototype's settings, no early stopping", "param": "distill_*"},
    {"what": "FedBE", "paper": "Chen & Chao 2021", "code": "none",
     "fedlib": "diagonal Gaussian over the sampled clients (M = 10 samples), ensemble of mean + clients + samples "
               "averaged in probability, distilled with FedDF's Adam budget instead of SGD + SWA",
     "param": "fedbe_samples, fedbe_posterior, distill_*"},
    {"what": "FedAvgM and Fed-Focal Loss", "paper": "no settings",
     "code": "unused options: init_belta = 0.2 ('FedAvgM'), gamma = 0.1 (meaning unknown)",
     "fedlib": "β = 0.2; γ = 2 (Lin et al.'s default), no client-sampling scheme", "param": "fedavgm_beta, "
     "fed_focal_gamma"},
    {"what": "Ratio Loss", "paper": "Wang et al. 2021", "code": "authors' code: Ra from a few local epochs of SGD "
     "per class on auxiliary data; weights 1 + 0.1·Ra",
     "fedlib": "Ra from one full-batch classifier gradient per class on D_aux, on the new global model; weights "
               "α + β·Ra with the code's 1 and 0.1; the batch loss divided by the sum of the class weights (torch's "
               "weighted CE), not by the batch size as in the code: Ra is unbounded and the code's plain mean "
               "diverged at lr 0.1 (NaN from round 9 on FashionMNIST-LT IF = 100)",
     "param": "ratio_loss_alpha, ratio_loss_beta, ratio_loss_share, ratio_loss_normalization"},
    {"what": "cRT / τ-norm / LWS", "paper": "which balanced data is not said", "code": "none",
     "fedlib": "D_aux; SGD momentum 0.9, wd 5e-4, cosine, 30 epochs, batch 128, lr 0.1; τ chosen on D_aux",
     "param": "posthoc_*, tau_norm_tau"},
)

#: The deviation lines every profile lists (``"*"``: under every table and figure): a summary of
#: :data:`DEVIATIONS` (notebooks/fedic/README.md gives the reasons).
NOTES: dict[str, tuple[str, ...]] = {
    "*": ("ResNet-8 with GroupNorm(2) instead of the code's BatchNorm (fedlib's models carry no buffers); no data "
          "augmentation (the code crops and flips)",),
    "table1": ("D_ulb for CIFAR-10-LT: CIFAR-100 when present, else a stand-in (see the run's server_unlabeled); "
               "CIFAR-100-LT's D_aux size (10 per class) is inferred",),
    "table3": ("the FT/LA/KD check marks were lost in the text: the row → switches mapping is inferred; rows (a)-(d) "
               "are the teacher accuracies of the KD runs (e)-(h) with the same teacher, at the last round; groups "
               "3/4/3 classes by training count (inferred)",),
    "fig3": ("the paper's D_aux sizes and D_ulb fractions are only in the image: the values here are chosen; "
             "FT = the global model fine-tuned on D_aux, read as the teacher of FEDIC with LA off (Table 3 (b))",),
    "fig4": ("the paper's λ values are only in the image: the values here are chosen; IF = 100 assumed (the caption "
             "gives none)",),
    "fig5": ("the paper compares 'four methods' without naming them: FedAvg, FedProx, FedDF and FEDIC are chosen; "
             "the α values between 1.0 and 0.01 are chosen",),
}
