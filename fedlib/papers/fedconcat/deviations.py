"""Where fedlib's FedConcat, MOON and models depart from the paper or from the public code.

Each entry: what, the paper, the code (notes/fedconcat.md), fedlib's default,
and the parameter that selects the other behaviour ("" when none).  :data:`NOTES` are the lines
every profile lists under the tables and figures (each profile adds its budget lines).
"""

from __future__ import annotations

__all__ = ["DEVIATIONS", "NOTES"]

DEVIATIONS: tuple[dict, ...] = (
    {"what": "stage-3 local training", "paper": "FedAvg (Algorithm 1 line 15): E local epochs",
     "code": "one epoch capped at 3 mini-batches (experiments.py:544-545, 574)",
     "fedlib": "E local epochs", "param": "fedconcat_classifier_steps=3 for the code"},
    {"what": "stage-3 averaging", "paper": "FedAvg: weighted by n_k", "code": "unweighted mean (l.1433)",
     "fedlib": "weighted by n_k", "param": "fedconcat_classifier_weighting='uniform' for the code"},
    {"what": "cluster initialisation", "paper": "'Initialize encoder E_i and classifier C_i for each cluster' (line 8)",
     "code": "one initialisation shared by all clusters (l.1310-1311)",
     "fedlib": "independent: cluster 0 the run's initial model, cluster i > 0 from a seed derived from (seed, i)",
     "param": "fedconcat_cluster_init='shared' for the code"},
    {"what": "FedConcat-ID round 1", "paper": "clusters initialised after clustering, then T_e rounds",
     "code": "round-1 local models averaged per cluster and reused; T_e − 1 more rounds (ID:1349-1394)",
     "fedlib": "discarded", "param": "fedconcat_id_reuse_round=True for the code"},
    {"what": "FedConcat-ID probe", "paper": "r random inputs (Eq. 3)",
     "code": "10,000 uniform [0,1) inputs per client, in train mode, on un-normalised images (ID:459-480)",
     "fedlib": "r = 10,000 uniform pixels through the dataset's normalisation, one probe set shared by all "
               "clients; no train mode (no dropout/BatchNorm)",
     "param": "fedconcat_id_probe_size, fedconcat_id_probe_inputs"},
    {"what": "K-means", "paper": "K-means (Lloyd 1982)",
     "code": "scikit-learn 0.22.1 KMeans defaults (n_init 10, global numpy seed); size-capped variant for "
             "CIFAR-100/Tiny-ImageNet",
     "fedlib": "KMeans(n_init=10, random_state from the run's seed), one thread; no size-capped variant",
     "param": "fedconcat_kmeans_n_init"},
    {"what": "encoders in train mode during post-training", "paper": "extractor fixed",
     "code": "train mode: VGG-9 dropout active, ResNet BN statistics drift (§5)",
     "fedlib": "frozen (fedlib's models have no dropout or BatchNorm)", "param": ""},
    {"what": "VGG-9 dropout", "paper": "—", "code": "Dropout2d 0.05, Dropout 0.1 (×2)",
     "fedlib": "left out: the functional, deterministic engines have no per-client dropout stream", "param": ""},
    {"what": "simple CNN fc3", "paper": "—", "code": "an unused fc3 (84→10) in the encoder's state_dict",
     "fedlib": "not part of the model (it changes no output)", "param": ""},
    {"what": "core 'rounds'", "paper": "—", "code": "—",
     "fedlib": "not read by fedconcat/fedconcat_id (T_e = encoder_rounds, T_c = classifier_rounds)", "param": ""},
    {"what": "empty clusters", "paper": "—", "code": "an empty cluster's model stays at its initialisation",
     "fedlib": "an error naming num_clusters", "param": ""},
    {"what": "MOON before a client's first participation", "paper": "—",
     "code": "no negative (empty model pool): ℓ_con = 0 (QinbinLi/MOON main.py:466-479)",
     "fedlib": "previous model := the received global model: ℓ_con = log 2, zero gradient (same updates)",
     "param": ""},
    {"what": "MOON model pool", "paper": "one previous model (Eq. 3)", "code": "model_buffer_size (default 1)",
     "fedlib": "one previous model", "param": ""},
    {"what": "Fig. 3 'without clustering'", "paper": "not described", "code": "absent (notes §6)",
     "fedlib": "a seeded random assignment into K groups of near-equal size; stages 2-3 unchanged",
     "param": "fedconcat_clustering='random'"},
    {"what": "Fig. 4 'baselines on the final global model'", "paper": "no setting given", "code": "absent",
     "fedlib": "the registered model concat5_simple_cnn (5 fresh encoders + one linear layer) trained by each baseline; "
               "rounds: Table 1's budget (paper profile) or FedConcat's communication in rounds of that model (quick)",
     "param": "the profile's fig4 'budget'"},
    {"what": "the baselines' rounds ('same communication cost')", "paper": "not stated", "code": "not encoded "
     "(comm_round default 50)", "fedlib": "R = T_e + K·|E|/(2M) + T_c·|C|/M from the model sizes (147 FMNIST, 120 "
     "CIFAR-10/SVHN)", "param": "communication.with_budget; other counts in notebook 03"},
    {"what": "Centralized", "paper": "not stated", "code": "alg=all_in: `epochs` (10 in run.sh) on the pooled data",
     "fedlib": "one client holding the whole training set, 10 epochs in one round", "param": ""},
    {"what": "FedProx μ", "paper": "not stated", "code": "mu default 1 (experiments.py:51)", "fedlib": "μ = 1",
     "param": "mu"},
    {"what": "Table 3 model", "paper": "ResNet-50 (BatchNorm)", "code": "ResNet-50, CIFAR stem",
     "fedlib": "ResNet-18 with GroupNorm (no buffers); the final round instead of the last 10 rounds' mean ± std",
     "param": "model"},
    {"what": "Tiny-ImageNet", "paper": "—", "code": "ImageFolder, resized to 32×32, crop/flip/rotation, Normalize(0.5)",
     "fedlib": "official archive or ImageFolder, resized to 32×32, per-channel normalisation, no augmentation",
     "param": ""},
    {"what": "data preprocessing", "paper": "—",
     "code": "ToTensor only, pixels in [0, 1] (FMNIST, SVHN, CIFAR-10; utils.py:832-868); CIFAR-10 random crop + "
             "flip; CIFAR-100 and Tiny-ImageNet standardised",
     "fedlib": "per-channel standardisation, no augmentation (fedlib's data layer); Table 1 also runs FedAvg and "
               "FedConcat with the code's [0, 1] inputs (the rows that face the paper): on FMNIST #C=2 the "
               "standardisation adds ≈ 6 pp to FedConcat (README, reproduction notes)",
     "param": "input_normalization='unit_interval' for the code"},
)

#: The deviation lines every profile lists (``"*"``: under every table and figure).
NOTES: dict[str, tuple[str, ...]] = {
    "*": ("the paper's setup section was not available: the setup is the public code's (run.sh and defaults), "
          "the model the simple CNN (inferred from the Centralized column; run.sh names VGG-9), data normalised per "
          "channel without augmentation (the code: pixels in [0, 1], not standardised, and random crop and flip on "
          "CIFAR-10; input_normalization='unit_interval' gives its inputs)",
          "not stated by FedConcat: MOON μ = 1, τ = 0.5, projection 256 (MOON's code defaults), FedProx μ = 1 (the "
          "FedConcat code's default), FedRS α = 0.5, FedLC τ = 1.0 (fedlib's defaults)"),
    "table1": ("the rows 'inputs in [0, 1]' (FedAvg and FedConcat with input_normalization='unit_interval', the "
               "code's ToTensor alone) face the paper, whose numbers come from that code; the other rows keep "
               "fedlib's per-channel standardisation, which on FMNIST #C=2 adds ≈ 6 pp to FedConcat and moves "
               "FedAvg inconsistently (README, reproduction notes: FedConcat)",),
    "fig1": ("Fig. 1 gives no numbers and no setting: measured on two clients of Table 1's CIFAR-10 #C=2 partition "
             "with disjoint classes, one local training of E epochs each from the same initial model",),
    "fig3": ("'without clustering' is not in the code: fedconcat_clustering='random' deals the clients at random "
             "into K groups of near-equal size; the figure's partition is not stated",),
    "fig4": ("Fig. 4 has no code: the baselines train the registered model concat5_simple_cnn (5 freshly "
             "initialised simple-CNN encoders + one linear layer, FedConcat's final architecture); the paper does "
             "not state their rounds",),
    "clusters": ("a view fedlib adds: the paper shows no cluster assignment",),
    "budget": ("the paper states no round budget: R is computed from the model sizes (see the deviations of "
               "Table 1); the other ways of counting are fedlib's",),
    "fedlc_third_party": ("FedLC's paper and FedConcat's Table 1 use different clients, rounds and skews: #C=2 is set "
                          "beside FedLC's Q(α=2), Dir(β) beside D(β)",),
    "table3": ("ResNet-50 (BatchNorm) is not in fedlib: fedlib's ResNet-18 with GroupNorm runs instead; the paper "
               "reports the last 10 rounds' mean ± std, fedlib the final round's accuracy",),
}
