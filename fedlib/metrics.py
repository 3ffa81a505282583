"""Accuracy by class-frequency group: many-shot, medium-shot and few-shot classes.

Classes are grouped by their number of training samples n_y (over all clients,
after the long tail; D_aux excluded), by one of two documented rules
(``group_rule``):

* ``"counts"`` -- fixed thresholds on n_y, OLTR's rule for ImageNet-LT (Liu et
  al. 2019), used by FEDIC's Table 2: many n_y > 100, few n_y < 20, medium the
  rest (``group_many_above``, ``group_few_below``);
* ``"ranks"`` -- by rank of n_y: the ``group_rank_fraction`` · K most frequent
  classes are many, as many of the least frequent are few, the rest medium
  (ties by class index).  FEDIC does not define its Table 3 groups (CIFAR-10-LT,
  IF = 100); a 3/4/3 split of the 10 classes reproduces its "All" column from
  the group columns best (notes §1.6), hence the default 0.3;
* ``"auto"`` -- ``"counts"`` for datasets of ≥ 100 classes (ImageNet-LT,
  CIFAR-100-LT), ``"ranks"`` otherwise (CIFAR-10-LT, where thresholds 100/20
  would leave the few group empty).

A group's accuracy is the mean of its classes' test accuracies (OLTR's
``shot_acc``); on a class-balanced test set this equals the accuracy over the
group's test samples.  Classes absent from the test set are left out.
"""

from __future__ import annotations

import numpy as np

from .params import Param

__all__ = ["GROUP_RULES", "GROUPS", "GROUP_PARAMS", "class_groups", "group_accuracy"]

GROUP_RULES = ("auto", "ranks", "counts")
GROUPS = ("many", "medium", "few")

#: Evaluation parameters (core; they do not change a run's result, only how it is summarised).
GROUP_PARAMS = (
    Param("group_rule", "auto", str, "many/medium/few classes: by training-count thresholds ('counts'), by rank "
          "('ranks'), or 'auto' (counts for ≥ 100 classes, ranks otherwise); see fedlib.metrics",
          choices=GROUP_RULES, source="OLTR (ImageNet-LT thresholds); FEDIC Table 3 fits 3/4/3 ranks (notes §1.6)"),
    Param("group_rank_fraction", 0.3, float, "'ranks': the fraction of classes in the many group and in the few "
          "group each (0.3 of 10 classes: 3/4/3)", check=lambda v: 0 <= v <= 0.5, allowed="in [0, 0.5]",
          source="inferred from FEDIC Table 3 (notes §1.6)"),
    Param("group_many_above", 100, int, "'counts': many-shot classes have more training samples than this",
          check=lambda v: v >= 0, allowed="an integer ≥ 0", source="OLTR (Liu et al. 2019)"),
    Param("group_few_below", 20, int, "'counts': few-shot classes have fewer training samples than this",
          check=lambda v: v >= 0, allowed="an integer ≥ 0", source="OLTR (Liu et al. 2019)"),
)


def class_groups(train_counts, rule: str = "auto", rank_fraction: float = 0.3, many_above: int = 100,
                 few_below: int = 20) -> dict[str, np.ndarray]:
    """The classes (sorted indices) of each group, from the training counts n_y [K]."""
    counts = np.asarray(train_counts, dtype=np.float64)
    if counts.ndim != 1 or counts.size == 0 or (counts < 0).any():
        raise ValueError(f"train_counts must be a non-empty vector of counts ≥ 0, got shape {counts.shape}")
    if rule not in GROUP_RULES:
        raise ValueError(f"rule must be one of {GROUP_RULES}, got {rule!r}")
    K = counts.size
    if rule == "auto":
        rule = "counts" if K >= 100 else "ranks"
    if rule == "ranks":
        if not 0 <= rank_fraction <= 0.5:
            raise ValueError(f"rank_fraction must be in [0, 0.5], got {rank_fraction!r}")
        order = np.argsort(-counts, kind="stable")  # most frequent first, ties by class index
        n = int(round(rank_fraction * K))
        groups = {"many": order[:n], "medium": order[n:K - n], "few": order[K - n:]}
    else:
        if few_below > many_above + 1:
            raise ValueError(f"few_below ({few_below}) must be ≤ many_above + 1 ({many_above + 1})")
        classes = np.arange(K)
        groups = {"many": classes[counts > many_above], "few": classes[counts < few_below],
                  "medium": classes[(counts <= many_above) & (counts >= few_below)]}
    return {g: np.sort(groups[g]).astype(np.int64) for g in GROUPS}


def group_accuracy(per_class_accuracy, groups: dict[str, np.ndarray]) -> dict[str, float | None]:
    """Mean per-class accuracy of each group (None for a group with no class in the test set)."""
    acc = np.asarray(per_class_accuracy, dtype=np.float64)
    out: dict[str, float | None] = {}
    for g in GROUPS:
        vals = acc[groups[g]]
        vals = vals[~np.isnan(vals)]
        out[g] = float(vals.mean()) if vals.size else None
    return out
