"""Packages whose modules register themselves: import every module, export its public names.

``fedlib.models``, ``fedlib.losses`` and ``fedlib.algorithms`` hold one concept per module;
a new model, loss or method is a new module and nothing else, because the package imports
all of its modules (in name order) when it is imported.
"""

from __future__ import annotations

import importlib
import pkgutil

__all__ = ["import_modules"]


def import_modules(package: str, path, namespace: dict | None = None, skip: tuple[str, ...] = ()) -> None:
    """Import every module of ``package`` (its ``__path__`` is ``path``) except private ones and
    ``skip``; with ``namespace`` (the package's ``globals()``), also export each module's
    ``__all__`` names there and append them to the package's ``__all__``."""
    for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.name.startswith("_") or info.name in skip:
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        if namespace is not None:
            for name in getattr(module, "__all__", ()):
                namespace[name] = getattr(module, name)
                namespace["__all__"].append(name)
