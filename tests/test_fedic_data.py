"""FEDIC's data: D_aux out first, then the long tail, then the partition (order and sizes of notes §1);
equal-sized clients; D_ulb choices and resizing; ImageNet-LT's loader on tiny files; the user contract."""

import warnings

import numpy as np
import pytest
import torch

from fedlib.config import Config, ConfigError
from fedlib.data import DatasetNotFoundError, load_dataset
from fedlib.partition import equal_sizes
from fedlib.experiment import _as_inputs_of, prepare

from conftest import have_dataset

FEDIC_COUNTS = {100: [4900, 2937, 1760, 1055, 632, 379, 227, 136, 81, 49],
                50: [4900, 3172, 2054, 1330, 861, 557, 361, 233, 151, 98],
                10: [4900, 3793, 2937, 2274, 1760, 1363, 1055, 817, 632, 490]}  # notes §1.1


@pytest.mark.skipif(not have_dataset("cifar10"), reason="CIFAR-10 not under the data root")
@pytest.mark.parametrize("imbalance", [100, 50, 10])
def test_cifar10_lt_has_fedics_class_counts_after_taking_d_aux_out_first(imbalance):
    cfg = Config(dataset="cifar10", long_tail_if=imbalance, server_aux_per_class=100,
                 server_unlabeled="long_tail_dropped", partition="dirichlet", partition_beta=0.1, num_clients=20,
                 partition_equal_sizes=True, method="fedavg")
    exp = prepare(cfg)
    assert exp.class_counts.sum(0).tolist() == FEDIC_COUNTS[imbalance]
    sizes = sorted(len(ix) for ix in exp.client_indices)  # the code's equal-size re-cut
    total = sum(FEDIC_COUNTS[imbalance])
    assert sizes[0] == total // 20 and sizes[-1] == -(-total // 20)
    aux_y = exp.server_data.aux_y.numpy()
    assert np.bincount(aux_y).tolist() == [100] * 10
    clients = np.concatenate(exp.client_indices)
    train = exp.data.train_x
    # D_aux, the clients' samples and D_ulb (what the long tail drops) are disjoint and cover the training set
    assert len(exp.server_data.unlabeled_x) == 50_000 - 1_000 - total
    assert len(np.unique(clients)) == total
    aux_rows = [int(np.flatnonzero((train == x).flatten(1).all(1))[0]) for x in exp.server_data.aux_x[:5]]
    assert not set(aux_rows) & set(clients.tolist())


def test_equal_sizes_recuts_class_sorted_clients_into_equal_contiguous_chunks():
    labels = np.array([0, 1, 2, 0, 1, 2, 0, 0, 1, 2, 2, 2, 1])
    parts = [np.array([0, 1, 2, 3, 4, 5, 6]), np.array([7, 8]), np.array([9, 10, 11, 12])]
    out = equal_sizes(labels, parts)
    assert [len(p) for p in out] == [5, 4, 4]
    assert sorted(np.concatenate(out).tolist()) == list(range(13))
    # client order, each client's samples by class: 0,3,6 | 1,4 | 2,5 | 7 | 8 | 12 | 9,10,11
    ordered = [0, 3, 6, 1, 4, 2, 5, 7, 8, 12, 9, 10, 11]
    assert [sorted(p.tolist()) for p in out] == [sorted(ordered[:5]), sorted(ordered[5:9]), sorted(ordered[9:])]


def test_unlabelled_images_are_resized_to_the_training_inputs():
    x = torch.rand(3, 3, 32, 32)
    out = _as_inputs_of(x, torch.zeros(1, 3, 64, 64), "cifar100")
    assert out.shape == (3, 3, 64, 64)
    assert torch.allclose(out.mean((2, 3)), x.mean((2, 3)), atol=1e-2)
    assert _as_inputs_of(x, torch.zeros(1, 3, 32, 32), "x") is x
    with pytest.raises(ValueError, match="cannot serve"):
        _as_inputs_of(x, torch.zeros(1, 1, 28, 28), "cifar100")


def test_server_data_defaults_follow_what_the_method_needs():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        c = Config(dataset="cifar10", long_tail_if=100, partition="dirichlet", partition_beta=0.1, num_clients=20,
                   participation=0.4, method="fedic", seed=0)  # the user contract
    assert c.server_aux_per_class == 100
    if not have_dataset("cifar100"):
        assert c.server_unlabeled == "long_tail_dropped"
        assert any("stand-in" in str(w.message) for w in caught)
    assert (Config(dataset="cifar10", long_tail_if=100, method="fedavg").server_aux_per_class,
            Config(dataset="cifar10", long_tail_if=100, method="fedavg").server_unlabeled) == (0, "none")
    assert Config(dataset="cifar10", method="crt").server_unlabeled == "none"
    explicit = Config(dataset="cifar10", long_tail_if=10, method="feddf", server_unlabeled="svhn",
                      server_aux_per_class=7)
    assert (explicit.server_unlabeled, explicit.server_aux_per_class) == ("svhn", 7)
    if not have_dataset("cifar100"):
        with pytest.raises(ConfigError, match="server_unlabeled"):
            Config(dataset="cifar10", method="fedic")  # no long tail, no CIFAR-100: nothing to distil on
    with pytest.raises(ConfigError, match="server_aux_per_class"):
        Config(dataset="cifar10", method="fedic", server_aux_per_class=5000, server_unlabeled="long_tail_dropped",
               long_tail_if=10)


# ------------------------------------------------------------------------------ ImageNet-LT on tiny files
def _write_imagenet_lt(root, per_split):
    from PIL import Image

    tree = root / "imagenet_lt"
    rng = np.random.default_rng(0)
    for split, counts in per_split.items():
        lines = []
        for label, n in enumerate(counts):
            folder = tree / ("train" if split == "train" else "val") / f"n{label:08d}"
            folder.mkdir(parents=True, exist_ok=True)
            for i in range(n):
                path = folder / f"{split}_{label}_{i}.png"
                Image.fromarray(rng.integers(0, 255, (24, 20, 3), dtype=np.uint8)).save(path)
                lines.append(f"{path.relative_to(tree).as_posix()} {label}")
        (tree / f"ImageNet_LT_{split}.txt").write_text("\n".join(lines) + "\n")


def test_imagenet_lt_loads_oltr_split_files_and_serves_d_aux_from_val(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(DatasetNotFoundError, match="imagenet_lt"):
        load_dataset("imagenet_lt", tmp_path)
    _write_imagenet_lt(tmp_path, {"train": [6, 3, 1], "val": [2, 2, 2], "test": [2, 2, 2]})
    data = load_dataset("imagenet_lt", tmp_path)
    assert data.train_x.shape == (10, 3, 64, 64) and data.test_x.shape == (6, 3, 64, 64)
    assert np.bincount(data.train_y.numpy()).tolist() == [6, 3, 1]
    assert np.bincount(data.aux_y.numpy()).tolist() == [2, 2, 2]
    cfg = Config(dataset="imagenet_lt", data_root=str(tmp_path), model="resnet8", partition="iid", num_clients=2,
                 server_aux_per_class=1, method="fedavg")
    exp = prepare(cfg)
    assert exp.server_data.aux_y.tolist() == [0, 1, 2]  # one per class, from the val split
    assert sum(len(ix) for ix in exp.client_indices) == 10  # the training set stays whole
    assert "held-out" in exp.server_data.description["aux"]


def test_imagenet_lt_reports_missing_images_and_bad_lines(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    _write_imagenet_lt(tmp_path, {"train": [1, 1], "val": [1, 1], "test": [1, 1]})
    txt = tmp_path / "imagenet_lt" / "ImageNet_LT_test.txt"
    txt.write_text(txt.read_text() + "val/nowhere.png 1\n")
    with pytest.raises(DatasetNotFoundError, match="nowhere.png"):
        load_dataset("imagenet_lt", tmp_path)
    txt.write_text("just-a-path\n")
    from fedlib.data import DataError

    with pytest.raises(DataError, match="expected '<image path> <label>'"):
        load_dataset("imagenet_lt", tmp_path / ".")
