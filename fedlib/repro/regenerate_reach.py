"""What a change reaches: the graph from code to a notebook's outputs, so a render from the records redoes only
what changed.

A notebook's outputs (its tables, figures and study summaries) depend on three things: the notebook itself, the
paper's run records (``figures/<paper>/<profile>/_records.jsonl.gz``, with the spread measured beside them,
``_spread.json``, which the tables' verdicts read), and the code it reaches, that is the
``fedlib`` modules it imports, and theirs, read from the source (every ``import`` in a module, including those
inside functions, and every module named as text, as lazy exports name them: an over-approximation, never an
omission).  :func:`reach_fingerprint` hashes the three;
``_run.json`` keeps each rendered notebook's fingerprint (``rendered.reach``), and ``make figures
RENDER=records`` skips a notebook whose fingerprint is unchanged and whose outputs are there: editing one
companion's drawing function re-renders that companion's notebooks that import it, and nothing of another
paper.  A notebook rendered again rewrites only the outputs whose bytes changed, and its executed copy holds no
trace of the execution itself (:func:`fedlib.repro.regenerate_notebook.steady`), so what a change did not reach
stays byte for byte.  The claims, pages and index are then rebuilt for the papers that were re-rendered only.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

from .verdict.spread import SPREAD_FILE

__all__ = ["notebook_imports", "module_closure", "companion_modules", "reach_fingerprint"]

PACKAGE = "fedlib"
_MODULE = re.compile(rf"{PACKAGE}(\.[a-z_][a-z0-9_]*)+")


def _code(notebook: Path) -> str:
    cells = json.loads(Path(notebook).read_text()).get("cells", [])
    return "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code")


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The ``fedlib`` modules (and packages) a parsed module names in its imports."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == PACKAGE}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                base = parts[: len(parts) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != PACKAGE:
                continue
            out.add(target)
            out |= {f"{target}.{a.name}" for a in node.names}  # "from pkg import module" names a module
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _MODULE.fullmatch(node.value):
            out.add(node.value)  # a module named as text, imported by name (fedlib.repro's lazy exports)
    return out


def notebook_imports(notebook: Path) -> set[str]:
    """The ``fedlib`` modules a notebook's code imports (its cells parsed, magics left out)."""
    lines = [ln for ln in _code(notebook).splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return {PACKAGE}
    return _imports(tree, "__main__", False)


@lru_cache(maxsize=None)
def _source(root: str, module: str) -> tuple[str, bool] | None:
    """``(path, is_package)`` of a ``fedlib`` module under ``root`` (the folder holding ``fedlib/``), or None."""
    base = Path(root).joinpath(*module.split("."))
    if (base / "__init__.py").exists():
        return str(base / "__init__.py"), True
    if base.with_suffix(".py").exists():
        return str(base.with_suffix(".py")), False
    return None


def module_closure(start: set[str], root: Path) -> dict[str, str]:
    """Every ``fedlib`` module reached from ``start`` through imports (and the packages holding them, whose
    ``__init__`` runs first): ``{module: source path}``."""
    seen: dict[str, str] = {}
    todo = list(start)
    while todo:
        module = todo.pop()
        parts = module.split(".")
        for i in range(1, len(parts) + 1):  # the packages above it run their __init__ first
            name = ".".join(parts[:i])
            if name in seen:
                continue
            found = _source(str(root), name)
            if found is None:
                continue
            path, is_package = found
            seen[name] = path
            stat = Path(path).stat()
            todo += sorted(_module_imports(path, stat.st_mtime_ns, stat.st_size, name, is_package))
    return seen


@lru_cache(maxsize=None)
def _module_imports(path: str, mtime_ns: int, size: int, module: str, is_package: bool) -> frozenset[str]:
    """:func:`_imports` of one source file, parsed once per version of it (a render reaches the same
    hundred modules from every notebook; an edit changes the file's stamp, and so the key)."""
    return frozenset(_imports(ast.parse(Path(path).read_text()), module, is_package))


#: The modules of a companion the machinery imports by name (``importlib``), which no import statement shows.
BY_NAME = ("", ".studies", ".claims", ".budget")


def companion_modules(paper: str, root: Path) -> set[str]:
    """The modules of a companion (``fedlib/papers/<paper>/``) the machinery imports by name: its package, its
    studies, claims and budget (:data:`BY_NAME`); what they import follows from their source."""
    return {f"{PACKAGE}.papers.{paper}{suffix}" for suffix in BY_NAME
            if _source(str(root), f"{PACKAGE}.papers.{paper}{suffix}") is not None}


def reach_fingerprint(notebook: Path, records: Path | None, root: Path, companions: tuple[str, ...] = ()) -> str:
    """A hash of what a notebook's outputs depend on: its own file, the run records it renders from and the
    seed-to-seed spread measured beside them (``_spread.json``), and the source of every module it reaches
    (:func:`module_closure`) from its imports and from ``companions`` (its paper's, and those it reads:
    :func:`companion_modules`).  Equal fingerprints: equal outputs."""
    h = hashlib.sha256()
    h.update(Path(notebook).read_bytes())
    if records is not None:  # the run records, and the measured spread beside them (the tables' verdicts read it)
        for read in (Path(records), Path(records).with_name(SPREAD_FILE)):
            h.update(read.read_bytes() if read.exists() else b"\0")
    start = notebook_imports(notebook) | {m for c in companions for m in companion_modules(c, root)}
    for module, path in sorted(module_closure(start, root).items()):
        h.update(module.encode() + b"\0" + Path(path).read_bytes())
    return h.hexdigest()[:16]
