"""Where fedlib's FedABC and its baselines depart from the paper, fill its gaps, or choose between
public implementations.

Each entry of :data:`DEVIATIONS`: what, the paper, the public code (``shared/papers/notes/fedabc.md``;
there is no public FedABC code), fedlib's default, and the parameter that selects another behaviour
("" when none).  :data:`NOTES` are the lines every profile lists (the reconstructed setup, the tuned
hyperparameters and every entry of :data:`DEVIATIONS`); the blanks fedlib fills are here too
(:data:`SEEDS`, :data:`DEFAULTS`, :data:`TUNED`).
"""

from __future__ import annotations

from .reported import LR, RECONSTRUCTED, ROUNDS

__all__ = ["DEVIATIONS", "NOTES", "SEEDS", "DEFAULTS", "TUNED", "TUNED_WHY"]

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
    {"what": "which classes a generic method's PM predicts (Table 2)", "paper": "not stated; its FedAvg, FedProx, "
     "LG-FedAvg and FedPer values (43.7 / 68.2 / 78.7 / 87.6 for FedAvg) sit at the ceiling of a PM that never "
     "predicts a class its client has no data of (42.4 / 70.5 / 81.5 / 89.6 on fedlib's MNIST partitions)",
     "code": "FedRep code: the stored local models, and a final 10-epoch head fine-tune for FedAvg/FedProx "
             "(measured: 87.7 at Dir(0.1), far above that ceiling)",
     "fedlib": "every class (the PM after its local update keeps absent classes: FedAvg 83.0 at Dir(0.1))",
     "param": "personalized_classes='held' masks the classes the client holds no sample of"},
    {"what": "SCAFFOLD's control variate under client momentum", "paper": "not stated (option II assumes plain SGD)",
     "code": "FedRep code: option II with the local step count, momentum 0.5, gradient clipping at 10, global "
             "step 0.1", "fedlib": "option II as printed: (x − y_k)/(K η)",
     "param": "scaffold_steps='effective' divides by the effective steps a_k ≈ K/(1 − μ)"},
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

#: Seeds: the paper does not say how many runs a cell averages; 3 (notes §4).
SEEDS = (0, 1, 2)

#: FedABC's hyperparameters as fedlib's defaults (the middle of the notes' grids, γ = 2).
DEFAULTS = {"fedabc_tau_pos": 0.9, "fedabc_tau_neg_present": 0.1, "fedabc_tau_neg_absent": 0.1,
            "fedabc_gamma": 2.0}
#: The setting the profiles use: the sensitivity study's choice (see TUNED_WHY).
TUNED = {"fedabc_tau_pos": 0.9, "fedabc_tau_neg_present": 0.2, "fedabc_tau_neg_absent": 0.1, "fedabc_gamma": 1.0}
TUNED_WHY = ("chosen by the sensitivity study, notebook 06: PFL accuracy on a held-out 20 % of every client's "
             "training data, MNIST Dir(0.3) at the quick scale, one factor at a time around fedlib's defaults "
             "(0.9, 0.1, 0.1, 2) among the values that keep under-sampling and hard-sample mining on: γ = 1 scored "
             "+0.22 pp over γ = 2 (γ = 0, mining off, +0.32), τ_neg^P = 0.2 +0.06 pp, τ_pos and τ_neg^N moved it by "
             "less than 0.05 pp; one seed, so differences this small are within run-to-run noise and the choice is "
             "weakly determined (re-run at commit a3afab7: the same numbers); one setting for every dataset and α, as in "
             "the paper")

def _setup_line() -> str:
    r = RECONSTRUCTED
    return (f"setup blank in the paper, reconstructed (notes §2, §4): {r['num_clients']} clients, participation "
            f"{r['participation']}, E = {r['local_epochs']} local epochs, SGD with momentum {r['momentum']} and "
            f"weight decay {r['weight_decay']} (on every parameter); MNIST: lr {LR['mnist']}, {ROUNDS['mnist']} "
            f"rounds; CIFAR-10: lr {LR['cifar10']}, {ROUNDS['cifar10']} rounds; {len(SEEDS)} seeds; batch 64 as "
            "stated")


def _hyper_line(setting: dict) -> str:
    return ("FedABC's four hyperparameters are blank in the paper: τ_pos = {fedabc_tau_pos:g}, τ_neg^P = "
            "{fedabc_tau_neg_present:g}, τ_neg^N = {fedabc_tau_neg_absent:g}, γ = {fedabc_gamma:g}, "
            .format(**setting) + TUNED_WHY)


# Every reconstructed choice, listed under every table and figure.
_RECONSTRUCTED = (_setup_line(), _hyper_line(TUNED)) + tuple(
    f"{d['what']}: {d['fedlib']}" + (f" (parameter {d['param']})" if d["param"] else "")
    for d in DEVIATIONS if d["what"] not in ("FedABC's four hyperparameters", "federation and optimiser"))

#: The deviation lines every profile lists (``"*"``: under every table and figure).
NOTES: dict[str, tuple[str, ...]] = {
    "*": _RECONSTRUCTED,
    "fig2": ("Fig. 2 is a schematic in the paper; here it is measured on one skewed client of MNIST.",),
    "fig4": ("Fig. 4: drawn with the partition code every run uses (same seeds and clients).",),
    "sensitivity": ("not in the paper, which gives no values; tuned on a held-out 20 % of every client's "
                    "training data (validation_fraction), never on a test set",),
}
