"""A GPU lease's data parts: the datasets its queue reads, packed here into checksummed parts small enough to
travel beside the working tree in one call (:func:`pack_data`), and checked, joined and unpacked on the device
(:func:`unpack_data`)."""

from __future__ import annotations

import hashlib
import io
import json
import math
import tarfile
from pathlib import Path

from .artefacts.provenance import git_commit
from .lease_queue import Job

__all__ = ["queue_datasets", "sha256_file", "pack_data", "unpack_data", "DATA_FOLDERS", "PART_MIB", "MIB"]

MIB = 2 ** 20
#: Folders (under the data root) a dataset's loader reads, the first one present is packed.
DATA_FOLDERS = {"cifar10": ("cifar10", "cifar-10-batches-py"), "cifar100": ("cifar-100-python",),
                "mnist": ("MNIST/raw",), "fmnist": ("FashionMNIST/raw",), "svhn": ("train_32x32.mat",)}


# ------------------------------------------------------------------------------------------ data parts
def queue_datasets(jobs: list[Job]) -> list[str]:
    """The datasets the queued runs read (their own and a named D_ulb), in queue order."""
    out = []
    for job in jobs:
        if job.config is None:
            continue
        for name in (job.config.get("dataset"), job.config.get("server_unlabeled")):
            if name in DATA_FOLDERS and name not in out:
                out.append(name)
    return out


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(MIB), b""):
            digest.update(block)
    return digest.hexdigest()

#: MiB a data part where the working tree's size is unknown: a call carries at most 64 MiB with the working tree
#: (≈ 31 MB on 2026-11-26, 39 MB with that day's second bring-back); 44 MiB parts were refused beside a 22 MB tree,
#: 33 MiB parts (CIFAR-10 in four) travelled.
PART_MIB = 33.0


def pack_data(datasets: list[str], dest, *, part_mib: float = PART_MIB, root=None) -> dict:
    """The files of ``datasets`` (under the data root) as one gzipped tar, cut into parts of ≤ ``part_mib`` MiB
    (``dest/parts/data-NN``) with ``dest/manifest.json`` (each part's and the whole's sha256, the commit).
    A dataset absent here is an error naming it.  Returns the manifest."""
    from ..data import data_root

    base, dest = data_root(root), Path(dest)
    if not part_mib > 0:
        raise ValueError(f"part_mib must be > 0, got {part_mib!r}")
    folders, missing = [], []
    for name in datasets:
        found = next((f for f in DATA_FOLDERS.get(name, ()) if (base / f).exists()), None)
        (folders.append(found) if found else missing.append(name))
    if missing:
        raise FileNotFoundError(f"datasets {', '.join(missing)} are absent under the data root {base}")
    (dest / "parts").mkdir(parents=True, exist_ok=True)
    for old in (dest / "parts").glob("data-*"):
        old.unlink()
    whole = dest / "data.tar.gz"
    with tarfile.open(whole, "w:gz", compresslevel=1) as tar:  # idx files shrink 4-5×, PNGs hardly
        for f in folders:
            tar.add(base / f, arcname=f)
    size, limit = whole.stat().st_size, int(part_mib * MIB)
    parts = []
    with open(whole, "rb") as fh:
        for i in range(math.ceil(size / limit)):
            part = dest / "parts" / f"data-{i:02d}"
            part.write_bytes(fh.read(limit))
            parts.append({"name": part.name, "bytes": part.stat().st_size, "sha256": sha256_file(part)})
    manifest = {"datasets": datasets, "folders": folders, "bytes": size, "sha256": sha256_file(whole),
                "parts": parts, "commit": git_commit(), "part_mib": part_mib}
    whole.unlink()
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def unpack_data(parts_dir, dest, manifest=None) -> dict:
    """Check every part of ``manifest`` (default ``parts_dir/manifest.json``) against its sha256, join them,
    check the whole, and unpack it into ``dest`` (a data root).  A part missing or wrong is an error
    naming it, before anything is unpacked.  Returns the manifest."""
    parts_dir, dest = Path(parts_dir), Path(dest)
    manifest = json.loads(Path(manifest or parts_dir / "manifest.json").read_text())
    bad = [p["name"] for p in manifest["parts"]
           if not (parts_dir / p["name"]).exists() or sha256_file(parts_dir / p["name"]) != p["sha256"]]
    if bad:
        raise ValueError(f"data parts missing or corrupt in {parts_dir}: {', '.join(bad)} (of "
                         f"{len(manifest['parts'])}; carry each with its own call: scripts/lease.sh stash)")
    digest, buffer = hashlib.sha256(), io.BytesIO()
    for p in manifest["parts"]:
        blob = (parts_dir / p["name"]).read_bytes()
        digest.update(blob)
        buffer.write(blob)
    if digest.hexdigest() != manifest["sha256"]:
        raise ValueError("the joined data parts fail their checksum")
    dest.mkdir(parents=True, exist_ok=True)
    buffer.seek(0)
    with tarfile.open(fileobj=buffer, mode="r") as tar:
        tar.extractall(dest, filter="data")
    return manifest
