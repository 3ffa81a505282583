"""Many/medium/few group accuracy (fedlib.metrics) against hand computations, and Result.group_accuracy."""

import json

import numpy as np
import pytest

from fedlib import run
from fedlib.metrics import class_groups, group_accuracy

FEDIC_IF100 = [4900, 2937, 1760, 1055, 632, 379, 227, 136, 81, 49]  # notes §1.1


def test_ranks_split_fedic_cifar10_lt_3_4_3():
    g = class_groups(FEDIC_IF100)  # auto: < 100 classes -> ranks, fraction 0.3
    assert g["many"].tolist() == [0, 1, 2] and g["medium"].tolist() == [3, 4, 5, 6] and g["few"].tolist() == [7, 8, 9]
    shuffled = [81, 4900, 49, 632]  # ranks follow the counts, not the class index
    g = class_groups(shuffled, "ranks", 0.25)
    assert g == {**g, "many": np.array([1])} and g["few"].tolist() == [2] and g["medium"].tolist() == [0, 3]


def test_counts_split_uses_oltr_thresholds():
    counts = [500, 101, 100, 20, 19, 5, 0]
    g = class_groups(counts, "counts")
    assert g["many"].tolist() == [0, 1] and g["medium"].tolist() == [2, 3] and g["few"].tolist() == [4, 5, 6]
    assert class_groups(np.full(100, 50), "auto")["medium"].size == 100  # ≥ 100 classes: counts


def test_group_accuracy_is_the_mean_per_class_accuracy_of_each_group():
    acc = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, float("nan"), 0.0]
    got = group_accuracy(acc, class_groups(FEDIC_IF100))
    assert got["many"] == pytest.approx((0.9 + 0.8 + 0.7) / 3)
    assert got["medium"] == pytest.approx((0.6 + 0.5 + 0.4 + 0.3) / 4)
    assert got["few"] == pytest.approx((0.2 + 0.0) / 2)  # NaN: class absent from the test set
    assert group_accuracy(acc, {"many": np.array([8]), "medium": np.array([0]), "few": np.array([], int)}) == \
        {"many": None, "medium": 0.9, "few": None}


def test_result_group_accuracy_and_cli_json_match_a_hand_computation(capsys):
    from fedlib.__main__ import main

    kw = dict(dataset="synthetic", num_clients=6, rounds=2, batch_size=32, seed=0)
    r = run(store=False, progress=False, **kw)
    counts = np.asarray(r.summary["train_class_counts"])
    per_class = r.per_class_accuracy.to_numpy()
    order = np.argsort(-counts, kind="stable")
    def mean(classes):  # None when none of the classes is in the test set
        vals = [per_class[c] for c in classes if not np.isnan(per_class[c])]
        return sum(vals) / len(vals) if vals else None

    hand = {"many": mean(order[:3]), "medium": mean(order[3:7]), "few": mean(order[7:])}
    assert r.group_accuracy == pytest.approx(hand, abs=1e-12)
    assert main(["run", "--no-store", "--quiet"] + [f"{k}={v}" for k, v in kw.items()]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["group_accuracy"] == pytest.approx(r.group_accuracy)
