"""FedConcat and FedConcat-ID (Diao, Li, He, AAAI 2024, "Exploiting Label Skews in
Federated Learning with Model Concatenation"), Algorithm 1 of the paper/slides.

A multi-stage method (:mod:`fedlib.algorithms.stages`), every stage checkpointed:

1. ``clustering`` (a computation): K-means (scikit-learn, ``n_init`` stated) over
   the clients' label distributions P_i(y) = (N_i1/N_i, …, N_im/N_i) (Eq. 2;
   Algorithm 1 line 2), or, for ``fedconcat_id``, over the distributions inferred
   from each client's round-1 local model f_i trained from the shared initial
   model f_g: P_i^ID(y) = (1/r) Σ_j σ(f_i(X_j)) over r random inputs X_j (Eq. 3;
   lines 4-7);
2. ``cluster_0`` … ``cluster_{K-1}``: FedAvg inside each cluster S_i for T_e
   rounds (lines 8-11), the clusters one after another (they are independent;
   a client's mini-batches depend on (seed, round, client) only, so the order
   changes nothing);
3. ``classifier``: the K encoders E_i ("all layers but the last") frozen and
   concatenated in cluster order, one linear classifier C on the K·d features
   trained by FedAvg over all clients for T_c rounds (lines 12-15).  The
   encoders are frozen, so the features of every training and test input are
   computed **once**, when the stage starts (also on resume: they are a pure
   function of the checkpointed encoders), and the rounds train a linear model
   on them (a sub-experiment whose data are the features).

The final model (``Result.model()``, :class:`ConcatenatedModel`) is the K
encoders and C; ``Result.clusters`` is the client → cluster assignment,
``Result.label_distributions`` the rows that were clustered (Eq. 2 or Eq. 3).

Parameters: ``num_clusters`` (K), ``encoder_rounds`` (T_e), ``classifier_rounds``
(T_c) as Algorithm 1 names them; the core ``rounds`` parameter is **not read**
by FedConcat (its rounds are T_e and T_c; ``summary["stage_rounds"]`` lists
what ran).  Other tokens combined with it (``fedconcat+fedprox``) act inside
the clusters (stage 2); stage 3 is FedAvg on the classifier, as line 15.

Where the public code (``sjtudyq/FedConcat``, notes/fedconcat.md §7) differs
from the paper, the paper is the default and the code's choice is a value of a
parameter:

* stage-3 local training: E local epochs of FedAvg (Algorithm 1) by default;
  ``fedconcat_classifier_steps = 3`` is the code's one epoch capped at 3
  mini-batches (experiments.py:544-545, 574);
* stage-3 averaging: weighted by n_k (FedAvg, Algorithm 1) by default;
  ``fedconcat_classifier_weighting = "uniform"`` is the code's plain mean (l.1433);
* cluster initialisation: "Initialize encoder E_i and classifier C_i for each
  cluster" (line 8) is read as independent initialisations by default (cluster 0
  gets the run's initial model, cluster i > 0 a model initialised from a seed
  derived from (seed, i)); ``fedconcat_cluster_init = "shared"`` is the code's
  one initialisation for every cluster (l.1310-1311);
* FedConcat-ID's round 1: discarded by default (Algorithm 1 initialises the
  cluster models after clustering and then runs T_e rounds);
  ``fedconcat_id_reuse_round = True`` is the code's reuse (ID:1349-1394): each
  cluster starts from the n_k-weighted mean of its members' round-1 models and
  runs T_e − 1 more rounds;
* FedConcat-ID's probe: ``fedconcat_id_probe_size`` = r = 10,000 inputs as the
  code (100 batches of 100, ID:459-480), uniform pixels in [0, 1) pushed through
  the dataset's normalisation (the code draws ``torch.rand`` on un-normalised
  inputs: the same distribution) by default, ``"standard_normal"`` in the
  normalised input space otherwise; one probe set, drawn from the run's seed,
  is shared by all clients (the code draws one per client);
* K-means: ``n_init = 10`` (scikit-learn 0.22.1's default, the code's pin) and a
  ``random_state`` derived from the run's seed; the code's size-capped K-means
  for CIFAR-100/Tiny-ImageNet (kmeanslimited.py) is not implemented.

``fedconcat_clustering = "random"`` replaces stage 1 by a seeded random
assignment of the clients into K groups of near-equal size
(:func:`random_groups`): the slides' Fig. 3 "without clustering" ablation, which
the public code does not contain (notes §6); stages 2 and 3 are unchanged.

Not applicable in fedlib: "encoders left in train mode" during post-training
only matters for dropout/BatchNorm, which fedlib's models do not have (VGG-9's
dropout is left out, :mod:`fedlib.models.vgg9`), so frozen means frozen.
A cluster that K-means leaves empty (fewer distinct distributions than K) is an
error that names ``num_clusters``.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor, nn

from .. import tree
from ..models import body_params
from ..models.concatenated import ConcatenatedEncoders, encoder_of
from ..params import ConfigError, Param
from .kinds import Aggregator, Stages
from .registry import build_part, register_method
from .stages import SingleStage, Stage

__all__ = ["FedConcatStages", "ConcatenatedModel", "LinearClassifier", "initial_classifier", "UnweightedMean", "label_distributions",
           "inferred_distributions", "kmeans_clusters", "random_groups", "concatenated_features", "probe_inputs"]

#: FedConcat's training (not only its setup) draws from torch's process-wide generator: the classifier and
#: the clusters' initial models are seeded there between stages.  Runs that share a process concurrently
#: (fedlib.repro.run.pack's ``streams``) read this declaration and keep it apart.
SEEDS_GLOBAL_RNG = True

# Streams of the run's seed used by FedConcat (distinct from the engine's 0-3).
_KMEANS_STREAM, _CLUSTER_INIT_STREAM, _CLASSIFIER_INIT_STREAM, _PROBE_STREAM, _RANDOM_GROUPS_STREAM = 11, 12, 13, 14, 15


def _derived_seed(seed: int, *stream: int) -> int:
    return int(np.random.SeedSequence([int(seed), *stream]).generate_state(1)[0])


# ------------------------------------------------------------------------------ models
class LinearClassifier(nn.Module):
    """The stage-3 model on precomputed features: ``features(h) = h``, ``classifier`` Linear(K·d → classes)."""

    def __init__(self, in_features: int, num_classes: int):
        super().__init__()
        self.classifier = nn.Linear(in_features, num_classes)

    def features(self, x: Tensor) -> Tensor:
        return x

    def forward(self, x: Tensor) -> Tensor:
        return self.classifier(x)


def initial_classifier(in_features: int, num_classes: int, seed: int) -> LinearClassifier:
    """The global classifier C before stage 3 (Algorithm 1 line 13): PyTorch's default
    initialisation from a torch seed derived from the run's seed."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(_derived_seed(seed, _CLASSIFIER_INIT_STREAM))
        return LinearClassifier(in_features, num_classes)


class ConcatenatedModel(ConcatenatedEncoders):
    """FedConcat's final model w = {E, C}: ``features(x)`` = [E_1(x), …, E_K(x)] concatenated
    in cluster order (K·d), ``classifier`` = C, one Linear(K·d → classes)
    (:class:`fedlib.models.concatenated.ConcatenatedEncoders` with K copies of ``model``'s encoder)."""

    def __init__(self, model: nn.Module, num_clusters: int):
        parts = [encoder_of(copy.deepcopy(model)) for _ in range(num_clusters)]
        super().__init__([e for e, _ in parts], [d for _, d in parts], model.classifier.out_features)


@dataclass(frozen=True)
class UnweightedMean(Aggregator):
    """Δ = (1/|S|) Σ_k Δ_k: the code's stage-3 averaging (every client took the same 3 steps)."""

    name = "unweighted_mean"

    def combine(self, deltas, num_samples, steps):
        return tree.weighted_sum(deltas, [1.0 / len(deltas)] * len(deltas))


# ------------------------------------------------------------------------------ stage 1: clustering
def label_distributions(class_counts: np.ndarray) -> np.ndarray:
    """P_i(y) = N_ij / N_i for every client i (Eq. 2), float64 [clients, classes]."""
    counts = np.asarray(class_counts, dtype=np.float64)
    return counts / counts.sum(1, keepdims=True)


def kmeans_clusters(points: np.ndarray, num_clusters: int, n_init: int, seed: int) -> np.ndarray:
    """K-means (Lloyd 1982; scikit-learn, k-means++ seeding, ``n_init`` restarts) labels of the rows of
    ``points``, with a random state derived from ``seed`` and one thread (a run's numbers do not depend
    on the machine).  Raises ValueError when a cluster is left empty."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    points = np.asarray(points, dtype=np.float64)
    distinct = len(np.unique(points.round(12), axis=0))
    if distinct < num_clusters:
        raise ValueError(f"num_clusters must be ≤ the number of distinct label distributions ({distinct}) for "
                         f"K-means to fill every cluster, got {num_clusters}")
    with threadpool_limits(1):
        km = KMeans(n_clusters=num_clusters, n_init=n_init, random_state=_derived_seed(seed, _KMEANS_STREAM))
        labels = km.fit(points).labels_
    sizes = np.bincount(labels, minlength=num_clusters)
    if (sizes == 0).any():
        raise ValueError(f"K-means left cluster(s) {np.flatnonzero(sizes == 0).tolist()} empty; lower num_clusters "
                         f"(got {num_clusters})")
    return labels.astype(np.int64)


def random_groups(num_clients: int, num_clusters: int, seed: int) -> np.ndarray:
    """FedConcat "without clustering" (Fig. 3): the clients dealt at random into K groups of
    near-equal size (⌊N/K⌋ or ⌈N/K⌉ members: a seeded permutation, then client perm[j] → group
    j mod K), whatever their label distributions."""
    rng = np.random.default_rng(_derived_seed(seed, _RANDOM_GROUPS_STREAM))
    labels = np.empty(num_clients, dtype=np.int64)
    labels[rng.permutation(num_clients)] = np.arange(num_clients) % num_clusters
    return labels


def probe_inputs(kind: str, size: int, input_shape: tuple, norm: tuple | None, seed: int) -> Tensor:
    """The r random inputs X_1 … X_r of Eq. 3, from a generator seeded by the run's seed.
    ``"uniform_pixels"``: pixels uniform in [0, 1) (the code's ``torch.rand`` on un-normalised
    images), then the dataset's normalisation (x − mean)/std per channel; ``"standard_normal"``:
    N(0, 1) in the normalised input space."""
    g = torch.Generator().manual_seed(_derived_seed(seed, _PROBE_STREAM))
    if kind == "standard_normal":
        return torch.randn((size, *input_shape), generator=g)
    x = torch.rand((size, *input_shape), generator=g)
    if norm is not None:
        mean, std = (torch.tensor(v, dtype=torch.float32).view(-1, *([1] * (len(input_shape) - 1))) for v in norm)
        x = (x - mean) / std
    return x


@torch.no_grad()
def inferred_distributions(model: nn.Module, client_params: list[dict], x: Tensor, chunk: int = 1000) -> np.ndarray:
    """P_i^ID(y) = (1/r) Σ_j softmax(f_i(X_j)) for each client model f_i (Eq. 3), float64 [clients, classes]."""
    out = []
    for params in client_params:
        total = 0.0
        for i in range(0, len(x), chunk):
            logits = torch.func.functional_call(model, params, (x[i:i + chunk],))
            total = total + torch.softmax(logits.double(), dim=1).sum(0)
        out.append((total / len(x)).cpu().numpy())
    return np.stack(out)


# ------------------------------------------------------------------------------ stage 3: features
@torch.no_grad()
def concatenated_features(model: nn.Module, encoders: list[dict], x: Tensor, chunk: int = 2048) -> Tensor:
    """[E_1(x), …, E_K(x)] for every row of ``x`` (K·d columns), each E_i the ``features`` of
    ``model`` with the parameters ``encoders[i]``."""
    from ..engine import features

    return torch.cat([torch.cat([features(model, p, x[i:i + chunk]) for p in encoders], dim=1)
                      for i in range(0, len(x), chunk)])


# ------------------------------------------------------------------------------ the stages part
@dataclass(frozen=True)
class FedConcatStages(Stages):
    num_clusters: int = 5
    encoder_rounds: int = 50
    classifier_rounds: int = 1000
    n_init: int = 10
    cluster_init: str = "independent"
    classifier_steps: int = 0
    classifier_weighting: str = "samples"
    infer: bool = False  # FedConcat-ID: cluster on Eq. 3's inferred distributions
    probe_size: int = 10_000
    probe_kind: str = "uniform_pixels"
    reuse_round: bool = False
    clustering: str = "kmeans"  # "random": Fig. 3's "without clustering"

    @property
    def name(self) -> str:
        return "fedconcat_id" if self.infer else "fedconcat"

    def plan(self, exp) -> list[Stage]:
        cluster_rounds = self.encoder_rounds - (1 if self.infer and self.reuse_round else 0)
        stages = [Stage("clustering", compute=self._clustering)]
        for i in range(self.num_clusters):
            if cluster_rounds > 0:
                stages.append(Stage(f"cluster_{i}", rounds=cluster_rounds, evaluate=False,
                                    build=functools.partial(self._cluster_experiment, i),
                                    initial=functools.partial(self._cluster_initial, i),
                                    finish=lambda sub, outputs, params: {"params": params}))
            else:  # FedConcat-ID reusing round 1 with T_e = 1: the cluster model is the round-1 average
                stages.append(Stage(f"cluster_{i}", compute=lambda e, outputs, i=i: {
                    "params": outputs["clustering"]["initial_models"][i]}))
        stages.append(Stage("classifier", rounds=self.classifier_rounds, build=self._classifier_experiment,
                            finish=self._final))
        return stages

    def final_model(self, model, config):
        return ConcatenatedModel(model, self.num_clusters)

    # -- stage 1
    def _clustering(self, exp, outputs) -> dict:
        out = {}
        if self.infer:
            points, locals_ = self._probe_round(exp)
        else:
            points = label_distributions(exp.class_counts)  # Eq. 2
        if self.clustering == "random":  # Fig. 3 "without clustering"
            labels = random_groups(exp.num_clients, self.num_clusters, exp.config.seed)
        else:
            labels = kmeans_clusters(points, self.num_clusters, self.n_init, exp.config.seed)  # Algorithm 1 l. 2 / 7
        if self.infer and self.reuse_round:  # the code: each cluster starts from its members' round-1 average
            n = [len(ix) for ix in exp.client_indices]
            out["initial_models"] = [
                tree.weighted_sum([locals_[k] for k in np.flatnonzero(labels == i)],
                                  [n[k] / sum(n[k] for k in np.flatnonzero(labels == i))
                                   for k in np.flatnonzero(labels == i)])
                for i in range(self.num_clusters)]
        out["clusters"] = labels.tolist()
        out["label_distributions"] = torch.as_tensor(points)
        return out

    def _probe_round(self, exp) -> tuple[np.ndarray, list[dict]]:
        """Algorithm 1 lines 4-7: every client trains the initial model f_g locally (one round's local
        update, the round-0 mini-batches), then its model is probed with r random inputs (Eq. 3)."""
        from ..data import DATASETS
        from ..client import client_trainer, train_locally

        outputs = train_locally(exp, exp.initial_state(), list(range(exp.num_clients)), 0, 1,
                                client_trainer(exp.config, exp.algorithm))
        locals_ = [o.local for o in outputs]
        spec = DATASETS[exp.config.dataset]
        norm = spec.norm if exp.config.input_normalization == "per_channel" else None  # [0, 1] inputs: as drawn
        x = probe_inputs(self.probe_kind, self.probe_size, exp.data.input_shape, norm, exp.config.seed)
        return inferred_distributions(exp.model, locals_, x.to(exp.config.device)), locals_

    # -- stage 2
    def _members(self, outputs, i: int) -> list[int]:
        return [k for k, c in enumerate(outputs["clustering"]["clusters"]) if c == i]

    def _cluster_experiment(self, i: int, exp, outputs):
        members = self._members(outputs, i)
        ids = [exp.client_ids[k] for k in members] if exp.client_ids is not None else members
        return dataclasses.replace(
            exp, client_indices=[exp.client_indices[k] for k in members], class_counts=exp.class_counts[members],
            client_ids=ids, algorithm=dataclasses.replace(exp.algorithm, stages=SingleStage()),
            client_test_indices=None, balanced_test_indices=None)

    def _cluster_initial(self, i: int, sub, outputs) -> dict | None:
        if self.infer and self.reuse_round:
            return tree.clone(outputs["clustering"]["initial_models"][i])
        if self.cluster_init == "shared" or i == 0:
            return None  # the run's initial model
        from ..models import build_model

        c = sub.config
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(_derived_seed(c.seed, _CLUSTER_INIT_STREAM, i))
            model = sub.algorithm.extend_model(build_model(c.model, sub.data.num_classes, sub.data.input_shape,
                                                           layout=c.memory_format))
        return {k: v.detach().to(c.device) for k, v in model.named_parameters()}

    # -- stage 3
    def _classifier_experiment(self, exp, outputs):
        from ..data import FederatedData
        from .composition import Algorithm
        from .fedavg import default_parts

        encoders = [outputs[f"cluster_{i}"]["params"] for i in range(self.num_clusters)]
        d = exp.data
        data = FederatedData(f"{d.name}:fedconcat_features", concatenated_features(exp.model, encoders, d.train_x),
                             d.train_y, concatenated_features(exp.model, encoders, d.test_x), d.test_y, d.num_classes)
        head = initial_classifier(data.train_x.shape[1], d.num_classes, exp.config.seed).to(exp.config.device)
        parts = default_parts(exp.config.server_lr)  # FedAvg on C (Algorithm 1 line 15)
        if self.classifier_weighting == "uniform":
            parts["aggregator"] = UnweightedMean()
        config = exp.config.replace(local_epochs=1) if self.classifier_steps else exp.config
        return dataclasses.replace(exp, config=config, data=data, model=head, algorithm=Algorithm(**parts),
                                   client_test_indices=None, balanced_test_indices=None, init_params=None,
                                   max_local_steps=self.classifier_steps)

    def _final(self, sub, outputs, params) -> dict:
        concat = {f"encoders.{i}.{k}": v for i in range(self.num_clusters)
                  for k, v in body_params(outputs[f"cluster_{i}"]["params"]).items()}
        concat.update(params)
        clustering = outputs["clustering"]
        return {"params": concat, "clusters": list(clustering["clusters"]),
                "label_distributions": clustering["label_distributions"].tolist()}


# ------------------------------------------------------------------------------ registration
_SHARED = (
    Param("num_clusters", 5, int, "FedConcat K: number of clusters (and of concatenated encoders)",
          check=lambda v: v >= 1, allowed="an integer in [1, num_clients]", source="FedConcat code default / run.sh"),
    Param("encoder_rounds", 50, int, "FedConcat T_e: FedAvg rounds inside each cluster (Algorithm 1 line 9)",
          check=lambda v: v >= 1, allowed="an integer ≥ 1", source="FedConcat code default / run.sh"),
    Param("classifier_rounds", 1000, int, "FedConcat T_c: rounds training the classifier on the frozen, "
          "concatenated encoders (Algorithm 1 line 14)", check=lambda v: v >= 1, allowed="an integer ≥ 1",
          source="FedConcat code default / run.sh"),
    Param("fedconcat_kmeans_n_init", 10, int, "K-means restarts (scikit-learn n_init)", check=lambda v: v >= 1,
          allowed="an integer ≥ 1", source="scikit-learn 0.22.1 default, pinned by the FedConcat code", field="n_init"),
    Param("fedconcat_cluster_init", "independent", str, "initial cluster models: 'independent' (Algorithm 1 line 8, "
          "one initialisation per cluster) or 'shared' (the code: one initialisation for all)",
          choices=("independent", "shared"), source="paper (Algorithm 1); 'shared' = code l.1310-1311",
          field="cluster_init"),
    Param("fedconcat_classifier_steps", 0, int, "stage-3 local training: 0 = E local epochs (FedAvg, Algorithm 1); "
          "s > 0 = one epoch capped at s mini-batches (the code: 3)", check=lambda v: v >= 0,
          allowed="an integer ≥ 0", source="paper (Algorithm 1); 3 = code l.544-545, 574", field="classifier_steps"),
    Param("fedconcat_classifier_weighting", "samples", str, "stage-3 averaging: 'samples' (FedAvg's n_k weights, "
          "Algorithm 1) or 'uniform' (the code's plain mean)", choices=("samples", "uniform"),
          source="paper (Algorithm 1); 'uniform' = code l.1433", field="classifier_weighting"),
    Param("fedconcat_clustering", "kmeans", str, "stage-1 grouping: 'kmeans' (Algorithm 1: K-means on the label "
          "distributions) or 'random' (Fig. 3's 'without clustering': the clients dealt at random into K groups of "
          "near-equal size)", choices=("kmeans", "random"),
          source="paper (Algorithm 1); 'random' = Fig. 3's ablation, not in the code (notes §6)", field="clustering"),
)
_ID_ONLY = (
    Param("fedconcat_id_probe_size", 10_000, int, "FedConcat-ID r: random inputs probing each round-1 local model "
          "(Eq. 3)", check=lambda v: v >= 1, allowed="an integer ≥ 1",
          source="FedConcat code: 100 batches of 100 (ID:459-480)", field="probe_size"),
    Param("fedconcat_id_probe_inputs", "uniform_pixels", str, "FedConcat-ID probe distribution: 'uniform_pixels' "
          "(pixels uniform in [0, 1), then the dataset's normalisation; the code's torch.rand) or 'standard_normal' "
          "(in the normalised input space)", choices=("uniform_pixels", "standard_normal"),
          source="paper: 'random inputs'; code: torch.rand", field="probe_kind"),
    Param("fedconcat_id_reuse_round", False, bool, "FedConcat-ID: start each cluster from its members' round-1 "
          "models (weighted mean) and run T_e − 1 more rounds (the code), instead of discarding round 1 "
          "(Algorithm 1)", source="paper (Algorithm 1 line 8); True = code ID:1349-1394", field="reuse_round"),
)


def _check(config) -> None:
    if config.num_clusters > config.num_clients:
        raise ConfigError(f"num_clusters must be an integer in [1, num_clients = {config.num_clients}] "
                          f"(FedConcat K), got {config.num_clusters}")


def _id_stages(config) -> FedConcatStages:
    """FedConcat-ID's stages: its fields filled by name from its parameters, clustering Eq. 3's
    inferred distributions."""
    return dataclasses.replace(build_part(FedConcatStages, config, _SHARED + _ID_ONLY), infer=True)


register_method("fedconcat", parts={"stages": FedConcatStages}, params=_SHARED, check=_check,
                paper="Diao, Li, He, AAAI 2024",
                doc="stages: K-means on label distributions (Eq. 2), FedAvg per cluster, linear classifier on the "
                    "frozen concatenated encoders")
register_method("fedconcat_id", parts={"stages": _id_stages}, params=_SHARED + _ID_ONLY, check=_check,
                paper="Diao, Li, He, AAAI 2024",
                doc="FedConcat clustering on distributions inferred from round-1 local models (Eq. 3)")
