"""The results store: every run saved under a key derived from its configuration.

Layout of one entry, ``<root>/<key>/``::

    config.json        the resolved configuration (informational)
    checkpoint.pt      the latest round's full state, while the run is unfinished
    checkpoint.sha256  its checksum, written after it
    params.pt          the final global model
    result.json        history and summary, with a checksum over its own content
                       and the sha256 of params.pt; written last

The key is a hash of the configuration (without paths and bookkeeping, see
:data:`fedlib.config.KEY_EXCLUDED`) and of the code version: the source of
every fedlib module that can change the run's result -- the core, and the
modules of its own method and model (:func:`code_version`), so adding or
editing one method keeps every other method's stored runs.  Every file is written to a
temporary name and renamed into place, and every read verifies its checksum,
so a half-written or corrupted entry is never returned: it is reported and
recomputed.  A run being trained holds its entry's lock (:meth:`Store.claim`): another
process asking for the same key meanwhile (a parallel grid worker, a second notebook or
regeneration) waits for it and takes its result instead of training it again.  Everything is loaded with ``torch.load(weights_only=True)``: a
shared or downloaded store cannot run code, and an entry that would need more
than tensors, numbers, strings, lists and dicts is refused the same way.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import shutil
import warnings
from pathlib import Path
from typing import Any

import torch

from .config import Config

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: no cross-process lock, the store still works
    fcntl = None

__all__ = ["Store", "code_version", "default_store_root", "CorruptEntryWarning"]

# What never changes what fedlib.run computes for a configuration: the reproduction layer
# (repro/: grids, comparison, figures, index, regeneration), the paper companions (papers/), the
# Flower adapter (flower/), and the two modules that only read and write results (the CLI and
# this store).  Everything else is the training core: editing it gives new keys.
_NOT_TRAINING_PACKAGES = {"repro", "papers", "flower"}
_NOT_TRAINING_MODULES = {"__main__.py", "store.py"}


# Packages whose modules each implement one method, model or loss: a run's code version holds
# only the ones it uses, so adding or editing a method keeps every other method's stored runs.
_PER_RUN_PACKAGES = ("algorithms", "models", "losses")
# ... except these, which every run uses (the part kinds and FedAvg's defaults, the registries).
_SHARED = {"algorithms/__init__.py", "algorithms/registry.py", "algorithms/kinds.py", "algorithms/composition.py",
           "algorithms/fedavg.py", "algorithms/personalization.py", "algorithms/representation.py",
           "algorithms/server_training.py", "algorithms/stages.py", "models/__init__.py", "models/registry.py",
           "models/_common.py",
           "losses/__init__.py", "losses/_common.py", "losses/cross_entropy.py"}


class CorruptEntryWarning(UserWarning):
    """A store entry failed its checksum and was ignored."""


def _package() -> Path:
    return Path(__file__).resolve().parent


def _is_core(rel: Path) -> bool:
    if (len(rel.parts) == 1 and rel.name in _NOT_TRAINING_MODULES) or rel.parts[0] in _NOT_TRAINING_PACKAGES:
        return False
    return rel.parts[0] not in _PER_RUN_PACKAGES or rel.as_posix() in _SHARED


def _code_digest(package: Path, extra: tuple[str, ...] = ()) -> str:
    """sha256 (16 hex digits) over the core training modules of ``package`` and the ``extra``
    modules (paths relative to the package)."""
    digest = hashlib.sha256()
    files = sorted({p.relative_to(package) for p in package.rglob("*.py") if _is_core(p.relative_to(package))}
                   | {Path(e) for e in extra})
    for rel in files:
        path = package / rel
        if path.exists():
            digest.update(rel.as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _module_file(name: str) -> str | None:
    """``fedlib.algorithms.fedprox`` -> ``algorithms/fedprox.py`` (None outside the per-run packages)."""
    parts = name.split(".")
    if len(parts) < 3 or parts[0] != "fedlib" or parts[1] not in _PER_RUN_PACKAGES:
        return None
    return "/".join(parts[1:]) + ".py"


def _closure(module_name: str, seen: set[str]) -> None:
    """The file of ``module_name`` and of every per-run module whose objects it holds (a method's
    module imports its loss function, say), recursively."""
    import sys

    path = _module_file(module_name)
    if path is None or path in seen:
        return
    seen.add(path)
    module = sys.modules.get(module_name)
    for value in vars(module).values() if module is not None else ():
        owner = getattr(value, "__module__", None) if not hasattr(value, "__path__") else None
        if isinstance(owner, str) and owner != module_name:
            _closure(owner, seen)
        elif getattr(value, "__name__", "").startswith("fedlib.") and hasattr(value, "__file__"):
            _closure(value.__name__, seen)


def run_modules(config: Config) -> tuple[str, ...]:
    """The per-run modules a configuration's result depends on: its method tokens' modules, its
    model's module, and the losses and models they use."""
    from .algorithms import METHODS
    from .models import MODELS

    seen: set[str] = set()
    for token in config.method.split("+"):
        _closure(METHODS[token].module, seen)
    _closure(MODELS[config.model].build.__module__, seen)
    return tuple(sorted(seen - _SHARED))


@functools.lru_cache(maxsize=256)
def _version(extra: tuple[str, ...]) -> str:
    return _code_digest(_package(), extra)


def code_version(config: Config | None = None) -> str:
    """sha256 (first 16 hex digits) over the source of the training code a run uses: the core
    (engines, simulation, data, partitions, the part kinds, FedAvg) and, with ``config``, the
    modules of its method and model (:func:`run_modules`).  Read once per process (the code that
    was imported is the code that runs)."""
    return _version(run_modules(config) if config is not None else ())


def default_store_root() -> Path:
    """``$FEDLIB_STORE``, else ``~/.cache/fedlib/store``."""
    env = os.environ.get("FEDLIB_STORE")
    return Path(env) if env else Path.home() / ".cache" / "fedlib" / "store"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _torch_bytes(obj: Any) -> bytes:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


class Store:
    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_store_root()

    # -- keys ------------------------------------------------------------------
    def key(self, config: Config) -> str:
        payload = {"config": config.key_dict(), "code": code_version(config)}
        return _sha256(_canonical(payload))[:20]

    def entry(self, key: str) -> Path:
        return self.root / key

    def _warn(self, key: str, what: str) -> None:
        warnings.warn(f"fedlib store: {what} in entry {self.entry(key)} is corrupted or incomplete; "
                      "it is ignored and the run is recomputed.", CorruptEntryWarning, stacklevel=3)

    # -- results ---------------------------------------------------------------
    def save_result(self, key: str, config: Config, summary: dict, history: list[dict], params: dict) -> None:
        entry = self.entry(key)
        entry.mkdir(parents=True, exist_ok=True)
        blob = _torch_bytes({k: v.detach().cpu() for k, v in params.items()})
        _atomic_write(entry / "params.pt", blob)
        body = {"config": config.to_dict(), "summary": summary, "history": history, "params_sha256": _sha256(blob)}
        body["checksum"] = _sha256(_canonical(body))
        _atomic_write(entry / "result.json", json.dumps(body, indent=1, sort_keys=True).encode())
        for name in ("checkpoint.pt", "checkpoint.sha256"):
            (entry / name).unlink(missing_ok=True)

    def has_result(self, config: Config) -> bool:
        """Whether a finished run of ``config`` is stored, without reading it: :meth:`save_result` writes
        ``result.json`` last, so its presence means the run finished (its checksums are checked when
        :meth:`load_result` reads it; a corrupt entry is then recomputed)."""
        return (self.entry(self.key(config)) / "result.json").exists()

    def load_result(self, key: str) -> dict | None:
        """The stored result as ``{config, summary, history, params}``, or None.
        An entry that fails any check is reported and treated as absent."""
        entry = self.entry(key)
        path = entry / "result.json"
        if not path.exists():
            return None
        try:
            body = json.loads(path.read_text())
            checksum = body.pop("checksum")
            if _sha256(_canonical(body)) != checksum:
                raise ValueError("checksum mismatch")
            blob = (entry / "params.pt").read_bytes()
            if _sha256(blob) != body["params_sha256"]:
                raise ValueError("params checksum mismatch")
            body["params"] = torch.load(io.BytesIO(blob), weights_only=True)
        except Exception:  # noqa: BLE001 - any failure means "not a trustworthy result"
            self._warn(key, "result.json/params.pt")
            path.unlink(missing_ok=True)
            return None
        return body

    # -- checkpoints -------------------------------------------------------------
    def save_checkpoint(self, key: str, config: Config, state: dict) -> None:
        entry = self.entry(key)
        entry.mkdir(parents=True, exist_ok=True)
        if not (entry / "config.json").exists():
            _atomic_write(entry / "config.json", json.dumps(config.to_dict(), indent=1, sort_keys=True).encode())
        blob = _torch_bytes(state)
        (entry / "checkpoint.sha256").unlink(missing_ok=True)  # the old checksum no longer applies
        _atomic_write(entry / "checkpoint.pt", blob)
        _atomic_write(entry / "checkpoint.sha256", _sha256(blob).encode())

    def load_checkpoint(self, key: str) -> dict | None:
        entry = self.entry(key)
        path, sum_path = entry / "checkpoint.pt", entry / "checkpoint.sha256"
        if not path.exists():
            return None
        try:
            blob = path.read_bytes()
            if not sum_path.exists() or sum_path.read_text().strip() != _sha256(blob):
                raise ValueError("checksum mismatch")
            # tensors, numbers, strings, lists and dicts only: an entry that needs more (pickled
            # objects, which could run code) is refused like a corrupted one
            return torch.load(io.BytesIO(blob), weights_only=True)
        except Exception:  # noqa: BLE001
            self._warn(key, "checkpoint.pt")
            path.unlink(missing_ok=True)
            return None

    # -- one trainer per key ---------------------------------------------------------
    @contextlib.contextmanager
    def claim(self, key: str):
        """Hold the entry's lock for the block (an exclusive ``flock`` on ``<entry>/.lock``,
        released by the kernel if the process dies): a second process claiming the same key
        waits until the first is done, then finds its result with :meth:`load_result`."""
        if fcntl is None:  # pragma: no cover
            yield
            return
        entry = self.entry(key)
        entry.mkdir(parents=True, exist_ok=True)
        with open(entry / ".lock", "a") as fh:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)

    def clear(self, key: str) -> None:
        shutil.rmtree(self.entry(key), ignore_errors=True)
