"""Datasets of FedLC (Zhang et al., ICML 2022, §5.3) loaded once into tensors.

* ``synthetic``  -- the FedProx/LEAF generator Synthetic(α, β), generated offline;
  it has natural clients (``FederatedData.client_indices``).
* ``mnist``, ``fmnist``, ``cifar10``, ``cifar100``, ``svhn`` -- image sets read from
  the data root (``root`` argument, else env ``FEDLIB_DATA``, else ``./data``) with
  ``download=False``; they are partitioned later with :mod:`fedlib.partition`.

Images are decoded once, normalised per channel and kept as float32 tensors of shape
(N, C, H, W); nothing is done per sample afterwards.  Loads are memoised per
(name, root) inside the process, so the returned tensors are shared between calls:
do not modify them in place.
"""

from __future__ import annotations

import functools
import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

__all__ = [
    "FederatedData",
    "DATASETS",
    "DataError",
    "DatasetNotFoundError",
    "data_root",
    "cache_dir",
    "load_dataset",
    "synthetic",
]

DATASETS: dict[str, dict] = {
    "synthetic": {"num_classes": 10, "num_train": None, "input_shape": (60,)},  # size is random
    "mnist": {"num_classes": 10, "num_train": 60000, "input_shape": (1, 28, 28)},
    "fmnist": {"num_classes": 10, "num_train": 60000, "input_shape": (1, 28, 28)},
    "cifar10": {"num_classes": 10, "num_train": 50000, "input_shape": (3, 32, 32)},
    "cifar100": {"num_classes": 100, "num_train": 50000, "input_shape": (3, 32, 32)},
    "svhn": {"num_classes": 10, "num_train": 73257, "input_shape": (3, 32, 32)},
}

# Per-channel mean / std of the training images in [0, 1].
_NORM = {
    "mnist": ((0.1307,), (0.3081,)),
    "fmnist": ((0.2860,), (0.3530,)),
    "cifar10": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),
    "cifar100": ((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
    "svhn": ((0.4377, 0.4438, 0.4728), (0.1980, 0.2010, 0.1970)),
}

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer",
                   "dog", "frog", "horse", "ship", "truck")


class DataError(ValueError):
    """An invalid dataset name or generator parameter."""


class DatasetNotFoundError(FileNotFoundError):
    """The files of a dataset are not under the data root (nothing is downloaded)."""

    def __init__(self, name: str, expected: str, how: str = ""):
        how = how or (f"download it once on a machine with internet, e.g. with torchvision's "
                      f"loader and download=True into the same root, then copy it here")
        super().__init__(
            f"dataset {name!r} not found: expected {expected}. To get it, {how}; or point "
            f"the data root at a folder holding it (root=... or env FEDLIB_DATA)."
        )
        self.name, self.expected = name, expected


@dataclass
class FederatedData:
    """A dataset as tensors: train/test inputs and labels, plus natural clients if any."""

    name: str
    train_x: torch.Tensor  # float32, normalised, (N, *input_shape)
    train_y: torch.Tensor  # int64, (N,)
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int
    client_indices: list[np.ndarray] | None = None  # natural clients (Synthetic); None = partition later

    @property
    def input_shape(self) -> tuple:
        return tuple(self.train_x.shape[1:])


def data_root(root: str | os.PathLike | None = None) -> Path:
    """The data root: ``root`` if given, else env ``FEDLIB_DATA``, else ``./data``."""
    return Path(root or os.environ.get("FEDLIB_DATA") or "data").expanduser()


def cache_dir() -> Path:
    """Where decoded image trees are cached: env ``FEDLIB_CACHE``, else ``~/.cache/fedlib``."""
    return Path(os.environ.get("FEDLIB_CACHE") or "~/.cache/fedlib").expanduser()


# -------------------------------------------------------------------------- synthetic
def synthetic(alpha: float, beta: float, num_clients: int, seed: int, dim: int = 60,
              num_classes: int = 10, train_fraction: float = 0.9) -> FederatedData:
    """Synthetic(α, β) of FedProx (Li et al. 2018, ``generate_synthetic.py``; FedLC §5.3).

    Per client k (α, β are standard deviations, as in FedProx's code)::

        n_k = int(lognormal(4, 2)) + 50             client size (power law, not capped)
        u_k ~ N(0, α),  B_k ~ N(0, β)               α: model skew, β: input skew
        v_k ~ N(B_k, 1)^dim                         input mean
        W_k ~ N(u_k, 1)^(classes×dim), b_k ~ N(u_k, 1)^classes
        x ~ N(v_k, Σ), Σ = diag(j^-1.2), j = 1..dim
        y = argmax softmax(W_k x + b_k)

    Random stream of ``np.random.default_rng(seed)``, in this order: n (m draws),
    u (m), B (m), v (m×dim), then for each client k: W_k, b_k, and the (n_k×dim)
    standard normals z with x = v_k + Σ^½ z (same law as FedProx's
    ``multivariate_normal``).  Note that u_k shifts every logit of a sample by the same
    amount, so α does not change x or the labels (true of FedProx's code as well);
    only β changes the data.  Client sizes are not capped, as in FedProx: with 100
    clients the total is ~40k samples (median), under 0.6M in 2000 seeds tried.

    The first ``int(train_fraction·n_k)`` samples of each client are its train part,
    the rest its test part.  Train set = the clients' train parts concatenated
    (``client_indices`` gives each client's rows); test set = all test parts.  The
    features are not normalised.
    """
    for pname, val in (("alpha", alpha), ("beta", beta)):
        if isinstance(val, bool) or not isinstance(val, (int, float, np.integer, np.floating)) \
                or not 0 <= val < np.inf:
            raise DataError(f"{pname} must be a finite number >= 0, got {val!r}")
    for pname, val, low in (("num_clients", num_clients, 1), ("seed", seed, 0),
                            ("dim", dim, 1), ("num_classes", num_classes, 2)):
        if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < low:
            raise DataError(f"{pname} must be an integer >= {low}, got {val!r}")
    if not 0 < train_fraction < 1:
        raise DataError(f"train_fraction must be in (0, 1), got {train_fraction!r}")

    rng = np.random.default_rng(seed)
    sizes = rng.lognormal(4, 2, num_clients).astype(np.int64) + 50  # n_k (FedProx)
    u = rng.normal(0, alpha, num_clients)  # u_k ~ N(0, α)
    B = rng.normal(0, beta, num_clients)  # B_k ~ N(0, β)
    v = rng.normal(B[:, None], 1, (num_clients, dim))  # v_k ~ N(B_k, 1)
    sigma_sqrt = np.arange(1, dim + 1, dtype=np.float64) ** -0.6  # Σ^½, Σ = diag(j^-1.2)

    xs_tr, ys_tr, xs_te, ys_te, clients = [], [], [], [], []
    start = 0
    for k in range(num_clients):
        W = rng.normal(u[k], 1, (num_classes, dim))  # W_k ~ N(u_k, 1)
        b = rng.normal(u[k], 1, num_classes)  # b_k ~ N(u_k, 1)
        x = v[k] + sigma_sqrt * rng.standard_normal((sizes[k], dim))  # x ~ N(v_k, Σ)
        y = np.argmax(x @ W.T + b, axis=1)  # y = argmax softmax(W_k x + b_k)
        n_tr = int(train_fraction * sizes[k])
        xs_tr.append(x[:n_tr]), ys_tr.append(y[:n_tr])
        xs_te.append(x[n_tr:]), ys_te.append(y[n_tr:])
        clients.append(np.arange(start, start + n_tr, dtype=np.int64))
        start += n_tr

    def cat(parts, dtype):
        return torch.from_numpy(np.concatenate(parts).astype(dtype))

    return FederatedData(
        name="synthetic", train_x=cat(xs_tr, np.float32), train_y=cat(ys_tr, np.int64),
        test_x=cat(xs_te, np.float32), test_y=cat(ys_te, np.int64),
        num_classes=num_classes, client_indices=clients,
    )


# ----------------------------------------------------------------------------- images
def _normalize(x: np.ndarray, name: str) -> torch.Tensor:
    """uint8 (N, C, H, W) -> float32 (x/255 - mean) / std per channel, computed in place."""
    mean, std = (np.asarray(s, dtype=np.float64).reshape(1, -1, 1, 1) for s in _NORM[name])
    out = torch.from_numpy(np.ascontiguousarray(x)).to(torch.float32)
    return out.mul_(torch.from_numpy(1.0 / (255.0 * std)).float()).sub_(torch.from_numpy(mean / std).float())


def _torchvision(name: str, make, expected: str, how: str = ""):
    """Call a torchvision dataset constructor, turning 'not found' into DatasetNotFoundError."""
    try:
        return make()
    except RuntimeError as err:
        if "not found" in str(err).lower():
            raise DatasetNotFoundError(name, expected, how) from err
        raise


def _decode_tree(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    """Decode an ImageFolder tree of PNGs into uint8 (N, 3, 32, 32) and int64 labels, cached.

    The cache file lives in :func:`cache_dir`, keyed by the tree's resolved path and
    its file list, and is written atomically (temporary file + ``os.replace``).
    """
    from PIL import Image
    from torchvision.datasets import ImageFolder

    tree = ImageFolder(str(folder))  # lists files only; sorted class order = label order
    if tuple(tree.classes) != CIFAR10_CLASSES:
        raise DataError(f"{folder} has class folders {tree.classes}, expected {list(CIFAR10_CLASSES)}")
    listing = "\n".join(f"{os.path.relpath(p, folder)}:{c}" for p, c in tree.samples)
    key = hashlib.sha1(f"{folder.resolve()}|{len(tree.samples)}|{listing}".encode()).hexdigest()[:16]
    cached = cache_dir() / f"cifar10-{folder.name}-{key}.npz"
    if cached.exists():
        with np.load(cached) as z:
            return z["x"], z["y"]

    def read(path):
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))

    x = np.ascontiguousarray(np.stack([read(p) for p, _ in tree.samples]).transpose(0, 3, 1, 2))
    y = np.asarray(tree.targets, dtype=np.int64)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_name(f"{cached.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            np.savez(f, x=x, y=y)
        os.replace(tmp, cached)
    except OSError as err:
        warnings.warn(f"could not write the image cache {cached}: {err}")
    return x, y


def _cifar10(root: Path):
    tree = root / "cifar10"
    if (tree / "train").is_dir() and (tree / "test").is_dir():
        return [_decode_tree(tree / split) for split in ("train", "test")]
    from torchvision.datasets import CIFAR10

    expected = f"{tree}/{{train,test}}/<class>/*.png or {root / 'cifar-10-batches-py'}"
    return [(d.data.transpose(0, 3, 1, 2), np.asarray(d.targets)) for d in (
        _torchvision("cifar10", lambda t=t: CIFAR10(str(root), train=t, download=False), expected)
        for t in (True, False))]


def _cifar100(root: Path):
    from torchvision.datasets import CIFAR100

    expected = str(root / "cifar-100-python")
    return [(d.data.transpose(0, 3, 1, 2), np.asarray(d.targets)) for d in (
        _torchvision("cifar100", lambda t=t: CIFAR100(str(root), train=t, download=False), expected)
        for t in (True, False))]


def _svhn(root: Path):
    from torchvision.datasets import SVHN

    out = []
    for split in ("train", "test"):
        expected = str(root / f"{split}_32x32.mat")
        how = "download it with torchvision.datasets.SVHN(root, split=..., download=True) (needs scipy)"
        d = _torchvision("svhn", lambda s=split: SVHN(str(root), split=s, download=False), expected, how)
        out.append((d.data, np.asarray(d.labels)))  # already (N, 3, H, W)
    return out


def _mnist_like(name: str, root: Path):
    from torchvision.datasets import MNIST, FashionMNIST

    cls = MNIST if name == "mnist" else FashionMNIST
    expected = f"{root / cls.__name__ / 'raw'}/{{train,t10k}}-{{images-idx3,labels-idx1}}-ubyte"
    return [(d.data.numpy()[:, None], d.targets.numpy()) for d in (
        _torchvision(name, lambda t=t: cls(str(root), train=t, download=False), expected)
        for t in (True, False))]


_IMAGE_LOADERS = {"mnist": functools.partial(_mnist_like, "mnist"),
                  "fmnist": functools.partial(_mnist_like, "fmnist"),
                  "cifar10": _cifar10, "cifar100": _cifar100, "svhn": _svhn}


@functools.lru_cache(maxsize=4)
def _load_images(name: str, root: str) -> tuple[torch.Tensor, ...]:
    """(train_x, train_y, test_x, test_y): normalised float32 NCHW images, int64 labels."""
    (xtr, ytr), (xte, yte) = _IMAGE_LOADERS[name](Path(root))  # uint8 (N, C, H, W)

    def to_y(y):
        return torch.from_numpy(np.asarray(y, dtype=np.int64))

    return _normalize(xtr, name), to_y(ytr), _normalize(xte, name), to_y(yte)


def load_dataset(name: str, root: str | os.PathLike | None = None, *, synthetic_alpha: float = 1.0,
                 synthetic_beta: float = 1.0, num_clients: int = 100, seed: int = 0) -> FederatedData:
    """Load ``name`` (a key of :data:`DATASETS`) as a :class:`FederatedData`.

    ``synthetic_alpha``, ``synthetic_beta``, ``num_clients`` and ``seed`` are used by
    ``"synthetic"`` only; image sets are read from :func:`data_root` ``(root)`` with
    no download, raising :class:`DatasetNotFoundError` when absent.
    """
    if name not in DATASETS:
        raise DataError(f"name must be one of {sorted(DATASETS)}, got {name!r}")
    if name == "synthetic":
        return synthetic(synthetic_alpha, synthetic_beta, num_clients, seed)
    train_x, train_y, test_x, test_y = _load_images(name, str(data_root(root).resolve()))
    return FederatedData(name, train_x, train_y, test_x, test_y, DATASETS[name]["num_classes"])
