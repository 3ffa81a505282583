"""Tests of fedlib.data: Synthetic(α, β), the image loaders, caching and errors.

Image tests read the offline copies under ``FEDLIB_DATA`` (default: the shared
``data`` folder next to the repository) and are skipped when it is absent.
"""

import os
from pathlib import Path

import numpy as np
import pytest
import torch

from fedlib import data as D

ROOT = Path(os.environ.get("FEDLIB_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")


def needs(folder: str):
    return pytest.mark.skipif(not (ROOT / folder).is_dir(),
                              reason=f"offline dataset not found at {ROOT / folder} (set FEDLIB_DATA)")


@pytest.fixture(autouse=True)
def _fresh_memo():
    """Each test sees an empty in-process memo (tests change the cache dir)."""
    D._load_images.cache_clear()
    yield
    D._load_images.cache_clear()


# -------------------------------------------------------------------------- synthetic
def label_dists(d):
    y = d.train_y.numpy()
    return np.stack([np.bincount(y[i], minlength=d.num_classes) / len(i) for i in d.client_indices])


def test_synthetic_shapes_and_clients():
    d = D.synthetic(0.5, 0.5, 30, seed=1)
    assert d.name == "synthetic" and d.num_classes == 10 and d.input_shape == (60,)
    assert d.train_x.dtype == torch.float32 and d.train_y.dtype == torch.int64
    assert d.train_x.shape == (len(d.train_y), 60) and d.test_x.shape == (len(d.test_y), 60)
    assert d.train_y.min() >= 0 and d.train_y.max() < 10 and d.test_y.max() < 10
    parts = d.client_indices
    assert len(parts) == 30
    assert np.array_equal(np.concatenate(parts), np.arange(len(d.train_y)))  # contiguous blocks
    sizes = np.array([len(p) for p in parts])
    assert sizes.min() >= int(0.9 * 50)  # n_k >= 50
    # per-client split: test part is n_k - int(0.9 n_k) for n_k = size of the client
    assert len(d.test_y) >= 30 * 5 and len(d.test_y) < 0.2 * len(d.train_y) + 30


def test_synthetic_matches_documented_generator():
    """Re-derive the data from the documented random stream (FedProx generate_synthetic.py)."""
    alpha, beta, m, seed, dim, C = 0.7, 1.3, 6, 11, 60, 10
    d = D.synthetic(alpha, beta, m, seed)
    rng = np.random.default_rng(seed)
    n = rng.lognormal(4, 2, m).astype(int) + 50
    u, B = rng.normal(0, alpha, m), rng.normal(0, beta, m)
    v = B[:, None] + rng.standard_normal((m, dim))
    cov = np.diag(np.arange(1, dim + 1) ** -1.2)
    xs, ys = [], []
    for k in range(m):
        W = u[k] + rng.standard_normal((C, dim))
        b = u[k] + rng.standard_normal(C)
        z = rng.standard_normal((n[k], dim))
        x = v[k] + z @ np.linalg.cholesky(cov).T
        logits = x @ W.T + b
        p = np.exp(logits - logits.max(1, keepdims=True))
        ys.append(np.argmax(p / p.sum(1, keepdims=True), axis=1))
        xs.append(x)
    n_tr = [int(0.9 * nk) for nk in n]
    assert [len(p) for p in d.client_indices] == n_tr
    assert len(d.test_y) == sum(n) - sum(n_tr)
    for k in range(m):
        rows = d.client_indices[k]
        np.testing.assert_allclose(d.train_x[rows].numpy(), xs[k][:n_tr[k]], rtol=1e-5, atol=1e-6)
        assert np.array_equal(d.train_y[rows].numpy(), ys[k][:n_tr[k]])
    np.testing.assert_allclose(d.test_x.numpy(), np.concatenate([x[t:] for x, t in zip(xs, n_tr)]),
                               rtol=1e-5, atol=1e-6)
    assert np.array_equal(d.test_y.numpy(), np.concatenate([y[t:] for y, t in zip(ys, n_tr)]))


def test_synthetic_input_covariance():
    """Within a client x ~ N(v_k, Σ), Σ = diag(j^-1.2): pooled within-client variance ≈ j^-1.2."""
    d = D.synthetic(0, 1, 100, seed=0)
    x = d.train_x.numpy().astype(np.float64)
    centred = np.concatenate([x[i] - x[i].mean(0) for i in d.client_indices])
    var = (centred ** 2).sum(0) / (len(x) - len(d.client_indices))
    np.testing.assert_allclose(var, np.arange(1, 61) ** -1.2, rtol=0.1)


def test_synthetic_determinism():
    a, b, c = D.synthetic(1, 1, 20, 5), D.synthetic(1, 1, 20, 5), D.synthetic(1, 1, 20, 6)
    assert torch.equal(a.train_x, b.train_x) and torch.equal(a.train_y, b.train_y)
    assert torch.equal(a.test_x, b.test_x)
    assert len(a.train_y) != len(c.train_y) or not torch.equal(a.train_x, c.train_x)


def test_synthetic_zero_zero_is_valid():
    d = D.synthetic(0, 0, 10, 0)
    assert len(d.client_indices) == 10 and torch.isfinite(d.train_x).all()


def test_synthetic_heterogeneity_grows_with_alpha_beta():
    """Larger (α, β) -> more skewed per-client label distributions (lower entropy)."""
    def mean_entropy(a, b):
        hs = []
        for s in range(5):
            q = label_dists(D.synthetic(a, b, 100, s))
            hs.append(np.mean([-(r[r > 0] * np.log(r[r > 0])).sum() for r in q]))
        return np.mean(hs)

    h = [mean_entropy(a, a) for a in (0.0, 0.5, 1.0)]
    assert h[0] > h[1] > h[2]


def test_synthetic_alpha_only_shifts_logits_uniformly():
    """u_k ~ N(0, α) is added to every row of W_k and to b_k, so labels do not depend on α."""
    a, b = D.synthetic(0, 1, 20, 4), D.synthetic(2, 1, 20, 4)
    assert torch.equal(a.train_x, b.train_x)
    assert (a.train_y == b.train_y).float().mean() > 0.999


def test_load_dataset_synthetic_passes_parameters():
    a = D.load_dataset("synthetic", synthetic_alpha=0.5, synthetic_beta=0.5, num_clients=12, seed=3)
    b = D.synthetic(0.5, 0.5, 12, 3)
    assert torch.equal(a.train_x, b.train_x) and len(a.client_indices) == 12


@pytest.mark.parametrize("kwargs,param", [
    ({"alpha": -0.1}, "alpha"), ({"beta": float("nan")}, "beta"), ({"num_clients": 0}, "num_clients"),
    ({"seed": -1}, "seed"), ({"train_fraction": 1.0}, "train_fraction"), ({"dim": 0}, "dim"),
])
def test_synthetic_validation(kwargs, param):
    args = {"alpha": 1.0, "beta": 1.0, "num_clients": 5, "seed": 0, **kwargs}
    with pytest.raises(D.DataError, match=param):
        D.synthetic(**args)


def test_unknown_dataset_name():
    with pytest.raises(ValueError, match="name must be one of"):
        D.load_dataset("imagenet")


def test_static_info():
    assert {"synthetic", "mnist", "fmnist", "cifar10", "cifar100", "svhn", "femnist",
            "imagenet_subset"} <= set(D.DATASETS)
    mnist = D.DATASETS["mnist"]
    assert (mnist.num_classes, mnist.num_train, mnist.input_shape) == (10, 60000, (1, 28, 28))
    assert D.DATASETS["cifar100"].num_classes == 100 and D.DATASETS["femnist"].num_classes == 62
    assert D.DATASETS["femnist"].natural_clients and not D.DATASETS["cifar10"].natural_clients


def test_data_root_precedence(monkeypatch, tmp_path):
    monkeypatch.delenv("FEDLIB_DATA", raising=False)
    assert D.data_root() == Path("data")
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    assert D.data_root() == tmp_path
    assert D.data_root("/x/y") == Path("/x/y")


# ----------------------------------------------------------------------- missing data
@pytest.mark.parametrize("name,expected", [
    ("cifar100", "cifar-100-python"), ("svhn", "train_32x32.mat"),
    ("mnist", "MNIST/raw"), ("fmnist", "FashionMNIST/raw"), ("cifar10", "cifar10/{train,test}"),
    ("femnist", "femnist/{train,test}/*.json"), ("imagenet_subset", "imagenet_subset/{train,val}/<class>"),
])
def test_missing_dataset_raises_with_path(tmp_path, name, expected):
    with pytest.raises(D.DatasetNotFoundError) as err:
        D.load_dataset(name, tmp_path, num_clients=3)
    assert isinstance(err.value, FileNotFoundError)
    msg = str(err.value)
    assert str(tmp_path.resolve()) in msg and f"<data root>/{expected}" in msg and name in msg and "To get it" in msg
    # the reason written into committed outputs names no machine path
    assert str(tmp_path) not in err.value.reason and expected in err.value.reason


def test_missing_dataset_uses_env_root(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_DATA", str(tmp_path))
    with pytest.raises(D.DatasetNotFoundError, match="cifar-100-python") as err:
        D.load_dataset("cifar100")
    assert err.value.root == str(tmp_path.resolve())


def test_a_relative_data_root_is_also_read_from_the_repository(tmp_path, monkeypatch):
    """JupyterLab runs kernels in notebooks/<paper>/: the README's FEDLIB_DATA=../shared/data must still work."""
    from conftest import REPO

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("FEDLIB_DATA", "../shared/data")
    assert D.data_root().resolve() == (REPO / "../shared/data").resolve()
    monkeypatch.setenv("FEDLIB_DATA", "no/such/folder")
    assert D.data_root() == Path("no/such/folder")  # nothing there either: the path as given, for the error


# ------------------------------------------------------------------ FEMNIST (LEAF JSON, tiny)
def _write_leaf(root, users, per_user, seed=0):
    import json

    rng = np.random.default_rng(seed)
    truth = {}
    for split, n in (("train", per_user), ("test", max(1, per_user // 2))):
        folder = root / "femnist" / split
        folder.mkdir(parents=True)
        for part in range(2):  # LEAF writes several files; users are spread over them
            names = [u for i, u in enumerate(users) if i % 2 == part]
            body = {"users": names, "num_samples": [n] * len(names), "user_data": {}}
            for u in names:
                x = rng.random((n, 784)).round(3).tolist()
                y = rng.integers(0, 62, n).tolist()
                body["user_data"][u] = {"x": x, "y": y}
                truth[(split, u)] = (np.asarray(x, np.float32), np.asarray(y))
            (folder / f"all_data_{part}.json").write_text(json.dumps(body))
    return truth


def test_femnist_leaf_json_gives_natural_clients(tmp_path):
    users = [f"f{i:04d}_{i}" for i in range(5)]
    truth = _write_leaf(tmp_path, users, per_user=6)
    d = D.load_dataset("femnist", tmp_path, num_clients=4)
    assert d.num_classes == 62 and d.input_shape == (1, 28, 28)
    chosen = [u for part in range(2) for i, u in enumerate(users) if i % 2 == part][:4]  # file order, then user
    assert len(d.client_indices) == 4 and [len(ix) for ix in d.client_indices] == [6] * 4
    assert [len(ix) for ix in d.client_test_indices] == [3] * 4
    x_all = np.concatenate([truth[("train", u)][0] for u in chosen])
    mean, std = x_all.mean(), x_all.std()
    second = d.client_indices[1]
    np.testing.assert_allclose(d.train_x[second].reshape(6, -1).numpy(), (truth[("train", chosen[1])][0] - mean) / std,
                               rtol=1e-5, atol=1e-5)
    assert d.train_y[second].tolist() == truth[("train", chosen[1])][1].tolist()
    with pytest.raises(D.DataError, match="num_clients must be ≤ 5"):
        D.load_dataset("femnist", tmp_path, num_clients=6)


def test_femnist_runs_through_fedlib_run(tmp_path):
    from fedlib import run

    _write_leaf(tmp_path, [f"u{i}" for i in range(4)], per_user=8)
    r = run(dataset="femnist", data_root=str(tmp_path), num_clients=3, rounds=1, batch_size=4, store=False,
            progress=False)
    assert r.config.partition == "natural" and r.config.model == "cnn_mnist" and 0 <= r.final_accuracy <= 1


# ------------------------------------------------------------------ ImageNet subset (ImageFolder, tiny)
def test_imagenet_subset_image_folder_is_resized_and_cached(tmp_path, monkeypatch):
    from PIL import Image

    rng = np.random.default_rng(0)
    classes = [f"n{i:08d}" for i in range(12)]
    for split, per in (("train", 2), ("val", 1)):
        for c in classes:
            (tmp_path / "imagenet_subset" / split / c).mkdir(parents=True)
            for i in range(per):
                Image.fromarray(rng.integers(0, 256, (80, 96, 3), dtype=np.uint8)).save(
                    tmp_path / "imagenet_subset" / split / c / f"{i}.JPEG", quality=95)
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    d = D.load_dataset("imagenet_subset", tmp_path)
    assert d.train_x.shape == (24, 3, 64, 64) and d.test_x.shape == (12, 3, 64, 64)
    assert d.train_y.tolist() == [c for c in range(12) for _ in range(2)]
    assert len(list((tmp_path / "cache").glob("*.npz"))) == 2
    (tmp_path / "imagenet_subset" / "train" / classes[0] / "0.JPEG").write_bytes(b"")  # cache must be used
    D._load_images.cache_clear()
    assert torch.equal(D.load_dataset("imagenet_subset", tmp_path).train_x, d.train_x)


def test_imagenet_subset_needs_twelve_classes(tmp_path, monkeypatch):
    from PIL import Image

    for split in ("train", "val"):
        for c in ("a", "b"):
            (tmp_path / "imagenet_subset" / split / c).mkdir(parents=True)
            Image.new("RGB", (64, 64)).save(tmp_path / "imagenet_subset" / split / c / "0.png")
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(D.DataError, match="2 class folders, expected 12"):
        D.load_dataset("imagenet_subset", tmp_path)


# ------------------------------------------------------------------ image tree (tiny)
def test_image_tree_decode_and_cache(tmp_path, monkeypatch):
    """A tiny fake cifar10/ tree: pixels and labels round-trip, cache is reused."""
    from PIL import Image

    rng = np.random.default_rng(0)
    pixels = {}
    for split, per in (("train", 3), ("test", 1)):
        for c, cls in enumerate(D.CIFAR10_CLASSES):
            (tmp_path / "cifar10" / split / cls).mkdir(parents=True)
            for i in range(per):
                img = rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)
                Image.fromarray(img).save(tmp_path / "cifar10" / split / cls / f"{i}.png")
                pixels[(split, c, i)] = img
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    d = D.load_dataset("cifar10", tmp_path)
    assert d.train_x.shape == (30, 3, 32, 32) and d.test_x.shape == (10, 3, 32, 32)
    assert d.train_y.tolist() == [c for c in range(10) for _ in range(3)]  # sorted class order
    mean = torch.tensor([0.4914, 0.4822, 0.4465]).view(3, 1, 1)
    std = torch.tensor([0.2470, 0.2435, 0.2616]).view(3, 1, 1)
    want = (torch.from_numpy(pixels[("train", 4, 2)]).permute(2, 0, 1) / 255 - mean) / std
    torch.testing.assert_close(d.train_x[4 * 3 + 2], want, rtol=1e-5, atol=1e-5)
    files = sorted(p.name for p in (tmp_path / "cache").iterdir())
    assert len(files) == 2 and all(f.endswith(".npz") for f in files)  # no temp files left
    D._load_images.cache_clear()
    for p in (tmp_path / "cifar10").rglob("*.png"):  # cache must be used: break the PNGs
        p.write_bytes(b"")
    again = D.load_dataset("cifar10", tmp_path)
    assert torch.equal(again.train_x, d.train_x) and torch.equal(again.test_y, d.test_y)


def test_image_tree_with_wrong_classes(tmp_path, monkeypatch):
    from PIL import Image

    for split in ("train", "test"):
        (tmp_path / "cifar10" / split / "cat").mkdir(parents=True)
        Image.new("RGB", (32, 32)).save(tmp_path / "cifar10" / split / "cat" / "0.png")
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ValueError, match="class folders"):
        D.load_dataset("cifar10", tmp_path)


# --------------------------------------------------------------- real offline images
def check_images(d, n_train, n_test, shape, per_class=None):
    assert d.train_x.shape == (n_train, *shape) and d.test_x.shape == (n_test, *shape)
    assert d.input_shape == shape and d.num_classes == 10
    assert d.train_x.dtype == torch.float32 and d.train_y.dtype == torch.int64
    assert d.train_y.min() == 0 and d.train_y.max() == 9 and d.test_y.max() == 9
    assert d.client_indices is None
    if per_class:
        assert d.train_y.bincount().tolist() == [per_class] * 10
    mean, std = d.train_x.mean(dim=(0, 2, 3)), d.train_x.std(dim=(0, 2, 3))
    assert mean.abs().max() < 0.01 and (std - 1).abs().max() < 0.01  # normalised train set
    assert d.test_x.mean().abs() < 0.1 and (d.test_x.std() - 1).abs() < 0.1


@needs("MNIST/raw")
@pytest.mark.data
def test_mnist():
    d = D.load_dataset("mnist", ROOT)
    check_images(d, 60000, 10000, (1, 28, 28))
    assert d.train_y[:5].tolist() == [5, 0, 4, 1, 9]  # the well-known first MNIST labels
    assert D.load_dataset("mnist", ROOT).train_x is d.train_x  # memoised per (name, root)


@needs("FashionMNIST/raw")
@pytest.mark.data
def test_fmnist():
    check_images(D.load_dataset("fmnist", ROOT), 60000, 10000, (1, 28, 28), per_class=6000)


@needs("FashionMNIST/raw")
@pytest.mark.data
def test_unit_interval_inputs_are_torchvisions_to_tensor_and_the_default_is_standardised():
    """input_normalization='unit_interval' (FedConcat's code: ToTensor alone) against torchvision's own
    ToTensor on the same images; the default stays the per-channel standardisation, in its own memo entry."""
    from torchvision.datasets import FashionMNIST
    from torchvision.transforms.functional import to_tensor

    unit = D.load_dataset("fmnist", ROOT, normalization="unit_interval")
    ref = FashionMNIST(str(ROOT), train=True, download=False)
    for i in (0, 1, 59999):
        assert torch.equal(unit.train_x[i], to_tensor(ref[i][0]))
    assert unit.train_x.min() == 0 and unit.train_x.max() == 1
    std = D.load_dataset("fmnist", ROOT)
    assert std.train_x is not unit.train_x and abs(float(std.train_x.mean())) < 0.01
    mean, sd = D.DATASETS["fmnist"].norm
    assert torch.allclose(std.train_x[:100], (unit.train_x[:100] - mean[0]) / sd[0], atol=1e-5)


def test_unit_interval_is_refused_for_inputs_that_are_not_images():
    from fedlib.config import Config, ConfigError

    with pytest.raises(D.DataError, match="normalization must be 'per_channel' for dataset 'synthetic'"):
        D.load_dataset("synthetic", normalization="unit_interval")
    with pytest.raises(ConfigError, match="input_normalization must be 'per_channel' for dataset='synthetic'"):
        Config(dataset="synthetic", input_normalization="unit_interval")
    with pytest.raises(ConfigError, match="input_normalization must be one of 'per_channel', 'unit_interval'"):
        Config(dataset="fmnist", input_normalization="standard")
    # a parameter added after runs were stored: at its default it stays out of the key's content
    assert "input_normalization" not in Config(dataset="fmnist").key_dict()
    assert Config(dataset="fmnist", input_normalization="unit_interval").key_dict()["input_normalization"] == \
        "unit_interval"


@needs("cifar10/train")
@pytest.mark.data
def test_cifar10_offline_tree_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_CACHE", str(tmp_path))
    d = D.load_dataset("cifar10", ROOT)
    check_images(d, 50000, 10000, (3, 32, 32), per_class=5000)
    assert d.test_y.bincount().tolist() == [1000] * 10
    assert len(list(tmp_path.glob("*.npz"))) == 2
    D._load_images.cache_clear()
    from PIL import Image

    opened = []
    monkeypatch.setattr(Image, "open", lambda *a, **k: opened.append(a) or (_ for _ in ()).throw(OSError("read")))
    again = D.load_dataset("cifar10", ROOT)  # from the cache: no image is opened
    assert not opened
    assert torch.equal(again.train_x, d.train_x) and torch.equal(again.test_y, d.test_y)
