"""A paper's regeneration notebooks: ``notebooks/<paper>/NN_<section>.ipynb``, found and selected."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["papers_with_notebooks", "notebooks", "select"]


def _repo() -> Path:
    from ...data import repo_root

    return repo_root()


def papers_with_notebooks(folder: str | os.PathLike | None = None) -> list[str]:
    """The papers (``fedlib.papers``) that have a notebook folder, by name, except that a companion comes after
    the companions whose outputs it reads (:attr:`fedlib.repro.spec.paper.Paper.reads`)."""
    from ..spec.paper import all_papers

    root = Path(folder) if folder is not None else _repo() / "notebooks"
    papers = all_papers()
    found = [p for p in sorted(papers) if (root / p).is_dir() and any((root / p).glob("*.ipynb"))]
    ordered: list[str] = []

    def visit(name: str, path: tuple[str, ...] = ()) -> None:
        if name in path:
            raise ValueError(f"the companions' reads form a cycle: {' -> '.join(path + (name,))}")
        for dep in papers[name].reads:
            if dep in found:
                visit(dep, path + (name,))
        if name not in ordered:
            ordered.append(name)

    for name in found:
        visit(name)
    return ordered


def notebooks(paper: str, folder: str | os.PathLike | None = None) -> list[Path]:
    """A paper's regeneration notebooks, in order: ``notebooks/<paper>/*.ipynb``."""
    root = Path(folder) if folder is not None else _repo() / "notebooks"
    return sorted(p for p in (root / paper).glob("*.ipynb") if not p.name.startswith("."))


def select(paths: list[Path], only: list[str] | None) -> list[Path]:
    """Notebooks whose stem equals, ends with, or contains one of ``only``
    (e.g. ``04_label_skew``, ``04``)."""
    if not only:
        return list(paths)
    chosen = []
    for name in only:
        name = Path(name).stem
        hits = [p for p in paths if p.stem == name] or [p for p in paths if p.stem.endswith(name)] \
            or [p for p in paths if name in p.stem]
        chosen += [p for p in hits if p not in chosen]
    return [p for p in paths if p in chosen]
