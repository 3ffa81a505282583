"""Where fedlib's FedABC and its baselines depart from the paper, fill its gaps, or choose between
public implementations.

Each entry: what, the paper, the public code (``shared/papers/notes/fedabc.md``; there is no public
FedABC code), fedlib's default, and the parameter that selects another behaviour ("" when none).
"""

from __future__ import annotations

__all__ = ["DEVIATIONS"]

DEVIATIONS: tuple[dict, ...] = (
    {"what": "FedABC's binary loss (Eqs. 2-6)", "paper": "equations lost in extraction; prose only",
     "code": "none public",
     "fedlib": "sigmoid per class; P/N from the client's class counts; N classes on the negative term only; "
               "positives kept while p < τ_pos, negatives while p > τ_neg^P / τ_neg^N, masks recomputed at every "
               "step; focal weights (1 − p)^γ, p^γ without α (fedlib.losses.binary_one_vs_all)",
     "param": "fedabc_tau_pos, fedabc_tau_neg_present, fedabc_tau_neg_absent, fedabc_gamma"},
    {"what": "FedABC's four hyperparameters", "paper": "blank for MNIST and CIFAR-10", "code": "none public",
     "fedlib": "τ_pos 0.9, τ_neg^P 0.1, τ_neg^N 0.1 (the middle of the notes' grids), γ 2 (focal-loss default), "
               "one setting for both datasets",
     "param": "fedabc_tau_pos, fedabc_tau_neg_present, fedabc_tau_neg_absent, fedabc_gamma"},
    {"what": "Eq. 6 normalisation", "paper": "lost", "code": "none public",
     "fedlib": "kept terms summed over classes and samples, divided by the batch size",
     "param": "fedabc_normalization='kept' divides by the number of kept terms"},
    {"what": "FedABC_wi (Fig. 5)", "paper": "without under-sampling and hard-sample mining", "code": "none public",
     "fedlib": "τ_pos = 1, τ_neg^P = τ_neg^N = 0, γ = 0: one-vs-all BCE (fedlib.algorithms.fedabc.FEDABC_WI)",
     "param": "fedabc_*"},
    {"what": "federation and optimiser", "paper": "batch 64, SGD with momentum and weight decay; every other value "
     "blank", "code": "FedRep code: 100 users, frac 0.1, lr 0.01, momentum 0.5, weight decay 1e-4 on weights only",
     "fedlib": "fedlib.papers.fedabc.reported.SETUP (100 clients, rate 0.1, E = 5, momentum 0.5, weight decay 1e-4 "
               "on every parameter) and its columns (lr 0.05 / 0.01 and 100 / 200 rounds on MNIST / CIFAR-10)",
     "param": "num_clients, participation, local_epochs, lr, momentum, weight_decay, rounds"},
    {"what": "personalized-model protocol (Eqs. 7-8)", "paper": "the locally trained model (after Chen & Chao)",
     "code": "FedRep code: each client's stored model, averaged over the last 10 rounds",
     "fedlib": "every client's model after a local update from the final server state, scored once",
     "param": "personalized_model='stored', personal_eval_every"},
    {"what": "local test sets", "paper": "'following the same distribution' as the client's training set",
     "code": "PFLlib / FL-bench: 75/25 split of merged data; FedRep: same shard assignment",
     "fedlib": "the official test set split with the training partition's per-class client proportions", "param": ""},
    {"what": "local IID test sets (Eq. 8)", "paper": "every class with the same number of samples",
     "code": "—", "fedlib": "disjoint equal per-class shards of the test set", "param": "balanced_test='full'"},
    {"what": "Local-only budget", "paper": "—", "code": "FedRep main_local.py: every client trains `rounds` "
     "epochs, one optimiser throughout", "fedlib": "a client trains E epochs whenever sampled (≈ participation · "
     "rounds · E epochs), a fresh optimiser each time", "param": "participation=1 trains every client every round"},
    {"what": "LG-FedAvg's global layers", "paper": "lower layers local, upper layers global",
     "code": "LG-FedAvg: its weight_keys order (conv layers global on CIFAR); FedRep: fc2, fc3 global; PFLlib: "
             "head only; FL-bench: first layers", "fedlib": "FedRep's split: the top 2 layers global",
     "param": "lg_global_layers"},
    {"what": "FedRep's epochs", "paper": "—", "code": "FedRep: 10 head epochs + 1 body epoch (local_ep 11)",
     "fedlib": "E − 1 head epochs, then 1 body epoch", "param": "fedrep_body_epochs"},
    {"what": "FedRoD linear mode", "paper": "'only G-Head is aggregated'",
     "code": "PFLlib: BSM on the G-head, P-head on detached features trained with CE on G.detach() + P, copy of "
             "the initial predictor; FL-bench: P-head alone at inference",
     "fedlib": "PFLlib's form (one SGD step on both losses, the same update)", "param": "fedrod_personal_init"},
    {"what": "FedProx μ and SCAFFOLD's global step", "paper": "not given", "code": "FedRep options: μ 0.1, "
     "SCAFFOLD lr_g 0.1", "fedlib": "μ 0.01, global step 1", "param": "mu, server_lr"},
    {"what": "models", "paper": "MLP 784-260-200-10; ConvNet 2 conv (64, 64) + FC 120, 64, 10",
     "code": "FedRep's CNNCifar (5×5 convs, 2×2 pools)", "fedlib": "as the paper and FedRep's CNNCifar", "param": ""},
)
