"""Datasets, loaded once into tensors, each registered by name.

* ``synthetic`` -- the FedProx/LEAF generator Synthetic(α, β), generated
  offline, with natural clients (``FederatedData.client_indices``);
* ``femnist`` -- LEAF's FEMNIST JSON files, natural clients (the writers);
* ``mnist``, ``fmnist``, ``cifar10``, ``cifar100``, ``svhn`` -- image sets read
  from the data root with ``download=False``;
* ``imagenet_subset`` -- FedLC's 12-class 64×64 ImageNet subset, an ImageFolder
  tree;
* ``tinyimagenet`` -- Tiny-ImageNet (200 classes) resized to 32×32 as FedConcat's
  code, from the official archive's layout or an ImageFolder tree.
* ``imagenet_lt`` -- ImageNet-LT (Liu et al. 2019, OLTR's split files), 64×64, with
  its balanced val split as the server's D_aux (FEDIC Table 2).

Image sets are partitioned later with :mod:`fedlib.partition`.  Files are read
from the data root (:func:`data_root`: ``root`` argument, else env
``FEDLIB_DATA``, else ``./data``) and never downloaded; a missing dataset
raises :class:`DatasetNotFoundError`, which says what was expected where,
relative to the data root.

Images are decoded once, scaled (:data:`INPUT_NORMALIZATIONS`: standardised per
channel by default, or only to [0, 1]) and kept as float32 tensors of shape
(N, C, H, W); nothing is done per sample afterwards.  Loads are memoised per
(name, root, normalisation) inside the process, so the returned tensors are shared between
calls: do not modify them in place.

A new dataset is a :class:`DatasetSpec` passed to :func:`register_dataset` (in
this module or in any module imported before the run); the run configuration
validates ``dataset`` against the registry.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch

__all__ = [
    "FederatedData",
    "DatasetSpec",
    "DATASETS",
    "register_dataset",
    "DataError",
    "DatasetNotFoundError",
    "data_root",
    "cache_dir",
    "resolve_env_path",
    "load_dataset",
    "dataset_present",
    "synthetic",
    "decode_image_folder",
    "decode_images",
    "CIFAR10_CLASSES",
    "INPUT_NORMALIZATIONS",
]

#: How image pixels become inputs: ``"per_channel"`` standardises each channel with the training images'
#: mean and std, (x/255 − μ)/σ (the dataset's ``norm``); ``"unit_interval"`` only scales to [0, 1], x/255
#: (torchvision's ``ToTensor`` alone, as FedConcat's code feeds FMNIST, SVHN and CIFAR-10).
INPUT_NORMALIZATIONS = ("per_channel", "unit_interval")

CIFAR10_CLASSES = ("airplane", "automobile", "bird", "cat", "deer",
                   "dog", "frog", "horse", "ship", "truck")


class DataError(ValueError):
    """An invalid dataset name or generator parameter, or files of the wrong shape."""


class DatasetNotFoundError(FileNotFoundError):
    """The files of a dataset are not under the data root (nothing is downloaded).

    ``expected`` names the files relative to the data root (no machine path, so
    it can go into committed outputs); the message also gives the root itself.
    """

    def __init__(self, name: str, expected: str, root: str | os.PathLike = "", how: str = ""):
        how = how or ("download it once on a machine with internet, e.g. with torchvision's "
                      "loader and download=True into the same root, then copy it here")
        where = f" under the data root {Path(root)}" if str(root) else ""
        super().__init__(
            f"dataset {name!r} not found{where}: expected <data root>/{expected}. To get it, {how}; or point "
            f"the data root at a folder holding it (root=... or env FEDLIB_DATA)."
        )
        self.name, self.expected, self.root = name, expected, str(root)

    @property
    def reason(self) -> str:
        """One line without machine paths: which dataset is absent and what was expected."""
        return f"dataset {self.name!r} is absent (expected <data root>/{self.expected})"


@dataclass
class FederatedData:
    """A dataset as tensors: train/test inputs and labels, plus natural clients if any."""

    name: str
    train_x: torch.Tensor  # float32, normalised, (N, *input_shape)
    train_y: torch.Tensor  # int64, (N,)
    test_x: torch.Tensor
    test_y: torch.Tensor
    num_classes: int
    client_indices: list[np.ndarray] | None = None  # natural clients (Synthetic, FEMNIST); None = partition later
    client_test_indices: list[np.ndarray] | None = None  # natural clients' own test samples (rows of test_x)
    aux_x: torch.Tensor | None = None  # a balanced labelled set of the dataset's own, for the server's D_aux
    aux_y: torch.Tensor | None = None

    @property
    def input_shape(self) -> tuple:
        return tuple(self.train_x.shape[1:])


@dataclass(frozen=True)
class DatasetSpec:
    """What fedlib knows about a dataset before reading any file.

    ``load(root, **kw)`` returns ``(train_x, train_y, test_x, test_y)`` as numpy
    arrays (uint8 images (N, C, H, W) when ``norm`` is given, else float features),
    optionally followed by ``(aux_x, aux_y)``, a balanced held-out set the server's
    D_aux is taken from instead of the training set, or a :class:`FederatedData`
    (datasets with natural clients).  ``num_train`` is None when it depends on
    parameters (generated or natural-client data).  ``unlabeled`` names the
    dataset a paper distils on for this one (``server_unlabeled='auto'``).
    """

    name: str
    label: str
    num_classes: int
    input_shape: tuple
    num_train: int | None
    default_model: str
    load: Callable
    norm: tuple | None = None  # per-channel (mean, std) of the training images in [0, 1]
    natural_clients: bool = False  # clients come with the data; partition must be "natural"
    memoize: bool = True
    unlabeled: str | None = None  # the paper's D_ulb for this dataset (FEDIC §3.1), if fedlib has it
    files: tuple[str, ...] = ()  # paths under the data root whose presence means the dataset is there


DATASETS: dict[str, DatasetSpec] = {}


def register_dataset(spec: DatasetSpec) -> DatasetSpec:
    if spec.name in DATASETS and DATASETS[spec.name] != spec:
        raise ValueError(f"dataset {spec.name!r} is registered twice")
    DATASETS[spec.name] = spec
    return spec


def repo_root() -> Path:
    """The repository holding this fedlib (the folder with pyproject.toml), else the cwd: the one
    definition, used for relative data paths here and for outputs by :mod:`fedlib.repro`."""
    here = Path(__file__).resolve().parent.parent
    return here if (here / "pyproject.toml").exists() else Path.cwd()


def resolve_env_path(value: str | os.PathLike) -> Path:
    """A folder named in an environment variable.  A relative path is read from the
    current folder and, when nothing is there, from the repository root: a
    JupyterLab started in the repository with ``FEDLIB_DATA=../shared/data`` runs
    its kernels in ``notebooks/<paper>/``, where the same relative path would miss."""
    path = Path(value).expanduser()
    if path.is_absolute() or path.exists():
        return path
    from_repo = repo_root() / path
    return from_repo if from_repo.exists() else path


def data_root(root: str | os.PathLike | None = None) -> Path:
    """The data root: ``root`` if given, else env ``FEDLIB_DATA`` (see
    :func:`resolve_env_path`), else ``./data``."""
    if root:
        return Path(root).expanduser()
    env = os.environ.get("FEDLIB_DATA")
    return resolve_env_path(env) if env else Path("data")


def cache_dir() -> Path:
    """Where decoded image trees are cached: env ``FEDLIB_CACHE``, else ``~/.cache/fedlib``."""
    env = os.environ.get("FEDLIB_CACHE")
    return resolve_env_path(env) if env else Path("~/.cache/fedlib").expanduser()


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

    xs_tr, ys_tr, xs_te, ys_te, clients, client_tests = [], [], [], [], [], []
    start = test_start = 0
    for k in range(num_clients):
        W = rng.normal(u[k], 1, (num_classes, dim))  # W_k ~ N(u_k, 1)
        b = rng.normal(u[k], 1, num_classes)  # b_k ~ N(u_k, 1)
        x = v[k] + sigma_sqrt * rng.standard_normal((sizes[k], dim))  # x ~ N(v_k, Σ)
        y = np.argmax(x @ W.T + b, axis=1)  # y = argmax softmax(W_k x + b_k)
        n_tr = int(train_fraction * sizes[k])
        xs_tr.append(x[:n_tr]), ys_tr.append(y[:n_tr])
        xs_te.append(x[n_tr:]), ys_te.append(y[n_tr:])
        clients.append(np.arange(start, start + n_tr, dtype=np.int64))
        client_tests.append(np.arange(test_start, test_start + sizes[k] - n_tr, dtype=np.int64))
        start += n_tr
        test_start += sizes[k] - n_tr

    def cat(parts, dtype):
        return torch.from_numpy(np.concatenate(parts).astype(dtype))

    return FederatedData(
        name="synthetic", train_x=cat(xs_tr, np.float32), train_y=cat(ys_tr, np.int64),
        test_x=cat(xs_te, np.float32), test_y=cat(ys_te, np.int64),
        num_classes=num_classes, client_indices=clients, client_test_indices=client_tests,
    )


# ----------------------------------------------------------------------------- images
def _normalize(x: np.ndarray, norm: tuple) -> torch.Tensor:
    """uint8 (N, C, H, W) -> float32 (x/255 - mean) / std per channel, computed in place."""
    mean, std = (np.asarray(s, dtype=np.float64).reshape(1, -1, 1, 1) for s in norm)
    out = torch.from_numpy(np.ascontiguousarray(x)).to(torch.float32)
    return out.mul_(torch.from_numpy(1.0 / (255.0 * std)).float()).sub_(torch.from_numpy(mean / std).float())


def _torchvision(name: str, make, expected: str, root: Path, how: str = ""):
    """Call a torchvision dataset constructor, turning 'not found' into DatasetNotFoundError."""
    try:
        return make()
    except RuntimeError as err:
        if "not found" in str(err).lower():
            raise DatasetNotFoundError(name, expected, root, how) from err
        raise


def decode_image_folder(folder: Path, *, classes: tuple[str, ...] | None = None, size: int | None = None,
                        prefix: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Decode an ImageFolder tree (``<folder>/<class>/<image>``, images found at any depth
    below their class folder) into uint8 (N, 3, H, W) and int64 labels in sorted class
    order, cached.

    ``classes``: the class folders it must have (in order); ``size``: resize every
    image to size×size (bilinear) first, else all images must share one size.
    The cache file lives in :func:`cache_dir`, keyed by the tree's resolved path
    and file list, and is written atomically (temporary file + ``os.replace``).
    """
    from torchvision.datasets import ImageFolder

    tree = ImageFolder(str(folder))  # lists files only; sorted class order = label order
    if classes is not None and tuple(tree.classes) != tuple(classes):
        raise DataError(f"{folder} has class folders {tree.classes}, expected {list(classes)}")
    return decode_images(folder, [p for p, _ in tree.samples], tree.targets, size=size,
                         name=f"{prefix or folder.parent.name}-{folder.name}")


def decode_images(folder: Path, paths: list, labels: list, *, size: int | None = None,
                  name: str = "images") -> tuple[np.ndarray, np.ndarray]:
    """Decode the image files ``paths`` (with ``labels``) into uint8 (N, 3, H, W) and int64
    labels, cached as :func:`decode_image_folder` says; ``folder`` anchors the cache key."""
    from PIL import Image

    listing = "\n".join(f"{os.path.relpath(p, folder)}:{c}" for p, c in zip(paths, labels))
    key = hashlib.sha1(f"{folder.resolve()}|{len(paths)}|{size}|{listing}".encode()).hexdigest()[:16]
    cached = cache_dir() / f"{name}-{key}.npz"
    if cached.exists():
        with np.load(cached) as z:
            return z["x"], z["y"]

    def read(path):
        with Image.open(path) as im:
            im = im.convert("RGB")
            if size is not None and im.size != (size, size):
                im = im.resize((size, size), Image.BILINEAR)
            return np.asarray(im)

    images = [read(p) for p in paths]
    shapes = {im.shape for im in images}
    if len(shapes) != 1:
        raise DataError(f"images under {folder} have different sizes {sorted(shapes)[:3]}…; give a size")
    x = np.ascontiguousarray(np.stack(images).transpose(0, 3, 1, 2))
    y = np.asarray(labels, dtype=np.int64)
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
        out = [decode_image_folder(tree / split, classes=CIFAR10_CLASSES, prefix="cifar10")
               for split in ("train", "test")]
        if out[0][0].shape[1:] != (3, 32, 32):
            raise DataError(f"{tree} holds images of shape {out[0][0].shape[1:]}, expected 3×32×32")
        return (*out[0], *out[1])
    from torchvision.datasets import CIFAR10

    expected = "cifar10/{train,test}/<class>/*.png or cifar-10-batches-py/"
    tr, te = (_torchvision("cifar10", lambda t=t: CIFAR10(str(root), train=t, download=False), expected, root)
              for t in (True, False))
    return tr.data.transpose(0, 3, 1, 2), np.asarray(tr.targets), te.data.transpose(0, 3, 1, 2), np.asarray(te.targets)


def _cifar100(root: Path):
    from torchvision.datasets import CIFAR100

    tr, te = (_torchvision("cifar100", lambda t=t: CIFAR100(str(root), train=t, download=False),
                           "cifar-100-python/", root) for t in (True, False))
    return tr.data.transpose(0, 3, 1, 2), np.asarray(tr.targets), te.data.transpose(0, 3, 1, 2), np.asarray(te.targets)


def _svhn(root: Path):
    from torchvision.datasets import SVHN

    out = []
    how = "download it with torchvision.datasets.SVHN(root, split=..., download=True) (needs scipy)"
    for split in ("train", "test"):
        d = _torchvision("svhn", lambda s=split: SVHN(str(root), split=s, download=False), f"{split}_32x32.mat",
                         root, how)
        out += [d.data, np.asarray(d.labels)]  # already (N, 3, H, W)
    return tuple(out)


def _mnist_like(name: str, root: Path):
    from torchvision.datasets import MNIST, FashionMNIST

    cls = MNIST if name == "mnist" else FashionMNIST
    expected = f"{cls.__name__}/raw/{{train,t10k}}-{{images-idx3,labels-idx1}}-ubyte"
    tr, te = (_torchvision(name, lambda t=t: cls(str(root), train=t, download=False), expected, root)
              for t in (True, False))
    return tr.data.numpy()[:, None], tr.targets.numpy(), te.data.numpy()[:, None], te.targets.numpy()


# ----------------------------------------------------------------------------- ImageNet subset (FedLC Table 3)
IMAGENET_NORM = ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))


def _imagenet_subset(root: Path):
    """FedLC §5.1: a 12-class ImageNet subset at 64×64×3 (following Li et al. 2021).
    Read from ``<root>/imagenet_subset/{train,val}/<class>/<image>`` (any size; resized
    to 64×64), classes in sorted folder order."""
    tree = root / "imagenet_subset"
    expected = "imagenet_subset/{train,val}/<class>/<image> (12 class folders)"
    if not ((tree / "train").is_dir() and (tree / "val").is_dir()):
        raise DatasetNotFoundError("imagenet_subset", expected, root,
                                   "build the 12-class subset of Li et al. 2021 as an ImageFolder tree")
    xtr, ytr = decode_image_folder(tree / "train", size=64, prefix="imagenet_subset")
    xte, yte = decode_image_folder(tree / "val", size=64, prefix="imagenet_subset")
    classes = len(np.unique(ytr))
    if classes != DATASETS["imagenet_subset"].num_classes:
        raise DataError(f"{tree / 'train'} has {classes} class folders, expected 12")
    return xtr, ytr, xte, yte


# ----------------------------------------------------------------------------- Tiny-ImageNet (FedConcat Table 3)
TINYIMAGENET_NORM = ((0.4802, 0.4481, 0.3975), (0.2302, 0.2265, 0.2262))
TINYIMAGENET_SIZE = 32  # FedConcat's code resizes the 64×64 images to 32×32 (notes/fedconcat.md §1b)


def _tinyimagenet(root: Path):
    """Tiny-ImageNet (200 classes, 500 training and 50 validation images each, 64×64), resized
    to 32×32 as FedConcat's code does; the validation set is the test set.  Read from either

    * the official archive unpacked under the data root, ``tiny-imagenet-200/``:
      ``train/<wnid>/images/*.JPEG`` and ``val/images/*.JPEG`` labelled by
      ``val/val_annotations.txt`` (file, wnid, box; tab-separated); or
    * an ImageFolder tree ``tinyimagenet/{train,val}/<wnid>/<image>`` (the layout FedConcat's
      code reads, its validation images sorted into class folders).

    Classes are the 200 training folders in sorted order."""
    expected = ("tiny-imagenet-200/{train/<wnid>/images, val/images, val/val_annotations.txt} or "
                "tinyimagenet/{train,val}/<wnid>/<image>")
    tree = next((t for t in (root / "tiny-imagenet-200", root / "tinyimagenet")
                 if (t / "train").is_dir() and (t / "val").is_dir()), None)
    if tree is None:
        raise DatasetNotFoundError("tinyimagenet", expected, root,
                                   "unpack http://cs231n.stanford.edu/tiny-imagenet-200.zip there")
    size = TINYIMAGENET_SIZE
    xtr, ytr = decode_image_folder(tree / "train", size=size, prefix="tinyimagenet")
    classes = sorted(d.name for d in (tree / "train").iterdir() if d.is_dir())
    if len(classes) != DATASETS["tinyimagenet"].num_classes:
        raise DataError(f"{tree / 'train'} has {len(classes)} class folders, expected 200")
    annotations = tree / "val" / "val_annotations.txt"
    if annotations.exists():  # the archive: val/images/<file>, its class in the annotations
        rows = [line.split("\t") for line in annotations.read_text().splitlines() if line.strip()]
        files, wnids = [tree / "val" / "images" / r[0] for r in rows], [r[1] for r in rows]
    else:  # an ImageFolder tree: val/<wnid>/<image>, any subset of the classes
        from torchvision.datasets import ImageFolder

        listing = ImageFolder(str(tree / "val"))
        files, wnids = [p for p, _ in listing.samples], [listing.classes[c] for _, c in listing.samples]
    unknown = sorted(set(wnids) - set(classes))
    if unknown:
        raise DataError(f"{tree / 'val'} names classes without training folders: {unknown[:3]}")
    index = {c: i for i, c in enumerate(classes)}
    xte, yte = decode_images(tree / "val", files, [index[w] for w in wnids], size=size, name="tinyimagenet-val")
    return xtr, ytr, xte, yte


# ----------------------------------------------------------------------------- ImageNet-LT (FEDIC Table 2)
IMAGENET_LT_SIZE = 64  # images are decoded at 64×64 (FEDIC: 224 crops of ResNet-50; memory, see the docstring)
IMAGENET_LT_SPLITS = ("train", "val", "test")


def _read_split_file(path: Path) -> tuple[list[str], list[int]]:
    """OLTR's split file: one ``<relative image path> <label>`` per line."""
    paths, labels = [], []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].lstrip("-").isdigit():
            raise DataError(f"{path}:{number}: expected '<image path> <label>', got {line!r}")
        paths.append(parts[0])
        labels.append(int(parts[1]))
    return paths, labels


def _imagenet_lt(root: Path):
    """ImageNet-LT (Liu et al., CVPR 2019) as FEDIC uses it (§3.1, Table 2).

    Reads OLTR's split files ``<root>/imagenet_lt/ImageNet_LT_{train,val,test}.txt``
    (``<path> <label>`` per line; 115,846 / 20,000 / 50,000 images, 1,000 classes)
    and the images at those paths under ``<root>/imagenet_lt/`` (an ImageNet
    ``train/`` and ``val/`` tree).  Train is the long-tailed training set, test the
    balanced test set (50 per class), and the balanced val split (20 per class) is
    returned as the set the server's D_aux is drawn from ("we obtain D_aux from
    the balanced evaluation data", FEDIC §3.1).

    Deviation: images are resized to 64×64 (bilinear, no crop).  FEDIC trains
    ResNet-50 on 224×224 crops; 115,846 decoded 224×224 images would take 17 GiB as
    uint8 and 70 GiB as fedlib's float32 tensors, beyond a CPU machine's memory.
    """
    tree = root / "imagenet_lt"
    files = {s: tree / f"ImageNet_LT_{s}.txt" for s in IMAGENET_LT_SPLITS}
    expected = "imagenet_lt/ImageNet_LT_{train,val,test}.txt and the images they list under imagenet_lt/"
    if not all(f.is_file() for f in files.values()):
        raise DatasetNotFoundError("imagenet_lt", expected, root,
                                   "get ImageNet (ILSVRC-2012) and OLTR's ImageNet_LT_*.txt split files "
                                   "(github.com/zhmiao/OpenLongTailRecognition-OLTR)")
    out = []
    for split in ("train", "test", "val"):
        paths, labels = _read_split_file(files[split])
        missing = next((p for p in paths if not (tree / p).is_file()), None)
        if missing is not None:
            raise DatasetNotFoundError("imagenet_lt", expected, root,
                                       f"the images listed in ImageNet_LT_{split}.txt are absent (first: {missing})")
        out += decode_images(tree, [tree / p for p in paths], labels, size=IMAGENET_LT_SIZE,
                             name=f"imagenet_lt-{split}")
    ys = [out[1], out[3], out[5]]
    if min(y.min() for y in ys) < 0 or max(y.max() for y in ys) >= DATASETS["imagenet_lt"].num_classes:
        raise DataError(f"imagenet_lt labels must be in [0, {DATASETS['imagenet_lt'].num_classes})")
    return tuple(out)


# ----------------------------------------------------------------------------- FEMNIST (LEAF)
def _leaf_files(root: Path, split: str) -> list[Path]:
    for folder in (root / "femnist" / split, root / "femnist" / "data" / split):
        if folder.is_dir():
            return sorted(folder.glob("*.json"))
    return []


def femnist(root: Path, num_clients: int) -> FederatedData:
    """FEMNIST in LEAF's JSON format (Caldas et al. 2019; FedLC Table 4).

    Reads ``<root>/femnist/{train,test}/*.json`` (or ``femnist/data/{train,test}``,
    LEAF's own layout): each file holds ``users``, ``num_samples`` and
    ``user_data[user] = {"x": [[784 floats]], "y": [labels]}``.  The first
    ``num_clients`` users (file order, then user order: LEAF's own sampling decides
    who is there) are the clients, with their own training samples; the test set is
    those users' test samples.  62 classes, 28×28 grey images, standardised with
    the training set's mean and std.
    """
    train_files, test_files = _leaf_files(root, "train"), _leaf_files(root, "test")
    if not train_files or not test_files:
        raise DatasetNotFoundError("femnist", "femnist/{train,test}/*.json (LEAF's preprocessed output)", root,
                                   "run LEAF's femnist preprocess.sh on a machine with internet and copy "
                                   "data/train and data/test here")

    def read(files):
        users: dict[str, dict] = {}
        for path in files:
            body = json.loads(path.read_text())
            for user in body["users"]:
                users[user] = body["user_data"][user]
        return users

    train, test = read(train_files), read(test_files)
    order = [u for u in train if u in test]
    if len(order) < num_clients:
        raise DataError(f"femnist: the LEAF files hold {len(order)} users with train and test data; "
                        f"num_clients must be ≤ {len(order)}, got {num_clients}")
    chosen = order[:num_clients]

    def stack(users):
        x = np.concatenate([np.asarray(users[u]["x"], dtype=np.float32).reshape(-1, 1, 28, 28) for u in chosen])
        y = np.concatenate([np.asarray(users[u]["y"], dtype=np.int64) for u in chosen])
        return x, y

    xtr, ytr = stack(train)
    xte, yte = stack(test)
    if ytr.min() < 0 or max(ytr.max(), yte.max()) >= 62:
        raise DataError("femnist labels must be in [0, 62)")
    mean, std = float(xtr.mean()), float(xtr.std()) or 1.0
    def ranges(users):
        sizes = np.cumsum([0] + [len(users[u]["y"]) for u in chosen])
        return [np.arange(a, b, dtype=np.int64) for a, b in zip(sizes[:-1], sizes[1:])]

    return FederatedData("femnist", torch.from_numpy((xtr - mean) / std), torch.from_numpy(ytr),
                         torch.from_numpy((xte - mean) / std), torch.from_numpy(yte), 62, ranges(train), ranges(test))


# ----------------------------------------------------------------------------- registry
register_dataset(DatasetSpec("synthetic", "Synthetic", 10, (60,), None, "logreg", load=None, natural_clients=True,
                             memoize=False))
register_dataset(DatasetSpec("mnist", "MNIST", 10, (1, 28, 28), 60_000, "cnn_mnist",
                             functools.partial(_mnist_like, "mnist"), ((0.1307,), (0.3081,))))
register_dataset(DatasetSpec("fmnist", "FMNIST", 10, (1, 28, 28), 60_000, "cnn_mnist",
                             functools.partial(_mnist_like, "fmnist"), ((0.2860,), (0.3530,))))
register_dataset(DatasetSpec("cifar10", "CIFAR-10", 10, (3, 32, 32), 50_000, "cnn_cifar", _cifar10,
                             ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)), unlabeled="cifar100"))
register_dataset(DatasetSpec("cifar100", "CIFAR-100", 100, (3, 32, 32), 50_000, "cnn_cifar", _cifar100,
                             ((0.5071, 0.4865, 0.4409), (0.2673, 0.2564, 0.2762)),
                             files=("cifar-100-python/train", "cifar-100-python/test")))
register_dataset(DatasetSpec("svhn", "SVHN", 10, (3, 32, 32), 73_257, "cnn_cifar", _svhn,
                             ((0.4377, 0.4438, 0.4728), (0.1980, 0.2010, 0.1970))))
register_dataset(DatasetSpec("femnist", "FEMNIST", 62, (1, 28, 28), None, "cnn_mnist", femnist,
                             natural_clients=True))
register_dataset(DatasetSpec("tinyimagenet", "Tiny-ImageNet", 200, (3, TINYIMAGENET_SIZE, TINYIMAGENET_SIZE),
                             100_000, "resnet18", _tinyimagenet, TINYIMAGENET_NORM))
register_dataset(DatasetSpec("imagenet_subset", "ImageNet-subset", 12, (3, 64, 64), None, "resnet18",
                             _imagenet_subset, IMAGENET_NORM))
register_dataset(DatasetSpec("imagenet_lt", "ImageNet-LT", 1000, (3, IMAGENET_LT_SIZE, IMAGENET_LT_SIZE), 115_846,
                             "resnet18", _imagenet_lt, IMAGENET_NORM, unlabeled="cifar100"))


def _unit_interval(x: np.ndarray) -> torch.Tensor:
    """uint8 (N, C, H, W) -> float32 x/255 in [0, 1] (torchvision's ``ToTensor``: a division by 255)."""
    return torch.from_numpy(np.ascontiguousarray(x)).to(torch.float32).div_(255.0)


@functools.lru_cache(maxsize=4)
def _load_images(name: str, root: str, normalization: str = "per_channel") -> tuple[torch.Tensor, ...]:
    """(train_x, train_y, test_x, test_y[, aux_x, aux_y]): float32 images scaled by ``normalization``
    (:data:`INPUT_NORMALIZATIONS`), int64 labels."""
    spec = DATASETS[name]
    arrays = spec.load(Path(root))

    def to_x(x):
        if spec.norm is None:
            return torch.from_numpy(np.asarray(x, np.float32))
        return _unit_interval(x) if normalization == "unit_interval" else _normalize(x, spec.norm)

    def to_y(y):
        return torch.from_numpy(np.asarray(y, dtype=np.int64))

    return tuple(to_y(a) if i % 2 else to_x(a) for i, a in enumerate(arrays))


def dataset_present(name: str, root: str | os.PathLike | None = None) -> bool:
    """Whether ``name``'s files are under the data root: the presence of the files its spec
    declares (nothing is read); a dataset that declares none is loaded to find out (memoised)."""
    spec = DATASETS[name]
    if spec.files:
        base = data_root(root)
        return all((base / f).exists() for f in spec.files)
    try:
        load_dataset(name, root)
    except DatasetNotFoundError:
        return False
    return True


def load_dataset(name: str, root: str | os.PathLike | None = None, *, synthetic_alpha: float = 1.0,
                 synthetic_beta: float = 1.0, num_clients: int = 100, seed: int = 0,
                 normalization: str = "per_channel") -> FederatedData:
    """Load ``name`` (a key of :data:`DATASETS`) as a :class:`FederatedData`.

    ``synthetic_alpha``, ``synthetic_beta``, ``num_clients`` and ``seed`` are used
    by the generated / natural-client sets only; ``normalization``
    (:data:`INPUT_NORMALIZATIONS`) by the image sets only (a set that is not images,
    ``norm`` None, is used as stored and takes ``"per_channel"`` only); files are read from
    :func:`data_root` ``(root)`` with no download, raising
    :class:`DatasetNotFoundError` when absent.
    """
    if name not in DATASETS:
        raise DataError(f"name must be one of {sorted(DATASETS)}, got {name!r}")
    spec = DATASETS[name]
    if normalization not in INPUT_NORMALIZATIONS:
        raise DataError(f"normalization must be one of {list(INPUT_NORMALIZATIONS)}, got {normalization!r}")
    if normalization != "per_channel" and spec.norm is None:
        raise DataError(f"normalization must be 'per_channel' for dataset {name!r} (not images: its inputs are "
                        f"used as stored), got {normalization!r}")
    if name == "synthetic":
        return synthetic(synthetic_alpha, synthetic_beta, num_clients, seed)
    root_path = data_root(root).resolve()
    if spec.natural_clients:
        return spec.load(root_path, num_clients)
    train_x, train_y, test_x, test_y, *aux = _load_images(name, str(root_path), normalization)
    return FederatedData(name, train_x, train_y, test_x, test_y, spec.num_classes, aux_x=aux[0] if aux else None,
                         aux_y=aux[1] if aux else None)
