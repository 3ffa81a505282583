"""Where an artefact came from, and where it goes: paths relative to the repository, the git
commit, and the body of the JSON sidecar written beside every table and figure.

* :func:`provenance` -- the sidecar's body: profile and its deviations from the paper,
  parameters, seeds, datasets, the fedlib version and the git commit (:func:`git_commit`:
  ``git rev-parse HEAD``, with ``-dirty`` when the tree has uncommitted changes, ``unknown``
  outside git);
* :func:`scrub_paths`, :func:`relative_to_repo` -- no machine paths in committed outputs;
* :func:`default_output_dir` -- ``figures/<paper>/<profile>``.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import subprocess
from pathlib import Path
from typing import Any, Iterable

from ...data import repo_root
from ..run.machine import git_commit

__all__ = ["repo_root", "default_output_dir", "relative_to_repo", "git_commit", "code_fingerprint", "commit_of_code",
           "provenance", "scrub_paths", "SOURCE_DIRS", "DirtyTree", "uncommitted_sources", "refuse_dirty"]

#: the folders whose uncommitted changes would make a committed output irreproducible
SOURCE_DIRS = ("fedlib", "notebooks")


class DirtyTree(RuntimeError):
    """A regeneration would write into the repository's ``figures/`` from uncommitted code."""


def default_output_dir(paper: str, profile: str) -> Path:
    """``<repo>/figures/<paper>/<profile>``: where a profile's tables and figures go.

    Each profile has its own folder, so a run of one profile never overwrites
    another's outputs (``smoke`` outputs are not committed: ``.gitignore``)."""
    return repo_root() / "figures" / paper / profile


def relative_to_repo(path: str | os.PathLike) -> str:
    """``path`` relative to the repository when it lies inside it (no machine paths in outputs),
    else its last two parts prefixed with ``…/``."""
    p = Path(path).resolve()
    try:
        return p.relative_to(repo_root()).as_posix() or "."
    except ValueError:
        return "…/" + "/".join(p.parts[-2:])


def store_label(path: str | os.PathLike) -> str:
    """What an output says of the results store it was computed with: its path inside the repository
    (``.fedlib-store``), else only that it lay outside it -- no machine path, not even part of one."""
    rel = relative_to_repo(path)
    return "a store outside the repository" if rel.startswith("…") else rel


def uncommitted_sources(root: str | os.PathLike | None = None, dirs: Iterable[str] = SOURCE_DIRS) -> list[str]:
    """The files under ``dirs`` (default ``fedlib/``, ``notebooks/``) that differ from ``HEAD``:
    modified, staged, deleted or untracked (not ignored); empty outside git."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--", *dirs],
                             cwd=str(Path(root) if root is not None else repo_root()), capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.SubprocessError):
        return []
    return [line[3:] for line in out.stdout.splitlines() if line.strip()] if out.returncode == 0 else []


def refuse_dirty(figures_root: str | os.PathLike, root: str | os.PathLike | None = None) -> None:
    """Raise :class:`DirtyTree` when ``figures_root`` is the repository's ``figures/`` and code under
    ``fedlib/`` or ``notebooks/`` is uncommitted: committed outputs come from committed code only
    (their sidecars' ``git_commit`` would end in ``-dirty``).  Render into another folder (``--figures``)
    or from a clean worktree (``git worktree add``)."""
    base = Path(root) if root is not None else repo_root()
    if Path(figures_root).resolve() != (base / "figures").resolve():
        return
    dirty = uncommitted_sources(base)
    if dirty:
        shown = ", ".join(dirty[:8]) + (f" and {len(dirty) - 8} more" if len(dirty) > 8 else "")
        raise DirtyTree(f"refused: writing into figures/ from uncommitted code ({shown}); commit it, render into "
                        "another folder (--figures), or from a clean worktree of a commit (git worktree add)")


def _blob_id(data: bytes) -> str:
    """git's object id of a file's content (``git hash-object``)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _fingerprint(entries: Iterable[tuple[str, str]]) -> str:
    import hashlib

    return hashlib.sha256("".join(f"{path} {blob}\n" for path, blob in sorted(entries)).encode()).hexdigest()[:16]


def code_fingerprint(root: str | os.PathLike | None = None, package: str = "fedlib") -> str:
    """A hash of the library's source files as they are on disk (each file's path and git blob id under
    ``package``, caches left out), computable without git: a GPU lease runs on a copy of the working tree
    that has no ``.git``.  :func:`commit_of_code` finds the commit whose tracked files give the same hash."""
    base = Path(root) if root is not None else repo_root()
    files = (p for p in (base / package).rglob("*") if p.is_file() and "__pycache__" not in p.parts
             and p.suffix not in (".pyc", ".pyo"))
    return _fingerprint((p.relative_to(base).as_posix(), _blob_id(p.read_bytes())) for p in files)


def commit_of_code(fingerprint: str, root: str | os.PathLike | None = None, package: str = "fedlib",
                   depth: int = 300) -> str | None:
    """The newest of the last ``depth`` commits whose ``package`` files give ``fingerprint``
    (:func:`code_fingerprint`); None when none does (or without git)."""
    cwd = str(Path(root) if root is not None else repo_root())
    try:
        log = subprocess.run(["git", "log", f"-{depth}", "--format=%H"], cwd=cwd, capture_output=True, text=True,
                             timeout=30)
        for commit in log.stdout.split():
            tree = subprocess.run(["git", "ls-tree", "-r", commit, "--", package], cwd=cwd, capture_output=True,
                                  text=True, timeout=30).stdout
            entries = [(line.split("\t", 1)[1], line.split()[2]) for line in tree.splitlines() if "\t" in line]
            if entries and _fingerprint(entries) == fingerprint:
                return commit
    except (OSError, subprocess.SubprocessError):
        return None
    return None


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", 1) == 0:
        obj = obj.item()  # numpy / torch scalars
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if hasattr(obj, "to_dict"):
        return _jsonable(obj.to_dict())
    return str(obj)


def provenance(*, profile: Any = None, experiment: str | None = None, parameters: dict | None = None,
               seeds: Iterable[int] | None = None, datasets: Iterable[str] | None = None,
               notebook: str | None = None, deviations: Iterable[str] | None = None, **extra: Any) -> dict:
    """The sidecar body: everything known about how an artefact was made, the CPU that made it included
    (vendor and model, :func:`fedlib.repro.run.machine.cpu`: in a regeneration, the one that trained its runs)."""
    from ... import __version__
    from ..run.machine import cpu

    prof_name = getattr(profile, "name", profile)
    if deviations is None and experiment is not None and hasattr(profile, "deviations"):
        deviations = profile.deviations(experiment)
    body = {
        "paper": getattr(profile, "paper", None),
        "profile": prof_name,
        "experiment": experiment,
        "notebook": notebook or os.environ.get("FEDLIB_NOTEBOOK"),
        "deviations": list(deviations or []),
        "parameters": parameters or {},
        "seeds": sorted(set(int(s) for s in seeds)) if seeds is not None else [],
        "datasets": sorted(set(datasets)) if datasets is not None else [],
        "fedlib_version": __version__,
        "git_commit": git_commit(),
        "cpu": {k: v for k, v in cpu().items() if k in ("vendor", "model")},  # the machine that made it
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    body.update(extra)
    return _jsonable(body)


def scrub_paths(text: str) -> str:
    """``text`` without this machine's paths: the results store becomes ``<store>``, the repository ``.``, the
    data root ``<data root>``, the home folder ``~`` (committed outputs name no machine)."""
    from ...data import data_root

    store = os.environ.get("FEDLIB_STORE")
    pairs = ((data_root().resolve(), "<data root>"), (repo_root(), "."), (Path.home(), "~"))
    if store:  # the results store, wherever it lies
        pairs = ((Path(store).resolve(), "<store>"),) + pairs
    for path, name in pairs:
        p = str(path)
        if len(p) > 1:
            text = text.replace(p, name)
    return text
