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

**A drawing module, per function.**  A notebook binds its companion's drawing module to a name
(``from fedlib.papers.fedic import plots as P``) and calls functions of it (``P.fig4_lambda(ctx, fig4)``).
Where that is the module's only way in (no module the notebook reaches imports it), the notebook uses the name
only as ``P.<attribute>``, and the module looks up none of its own functions by name (no ``globals()``), the
fingerprint holds the module's top-level statements other than definitions (imports, constants, ``__all__``)
and only the definitions the notebook's attributes reach, through the names each one's source mentions
(:func:`used_source`).  Editing ``fig4_lambda`` then re-renders the notebook that draws Fig. 4 and not the
other FEDIC notebooks that import ``plots``.  Anything else (the name passed on, a module reached another way)
hashes the whole file, as before: an over-approximation, never an omission.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from functools import lru_cache
from pathlib import Path

from .artefacts.tables import DECIDED_FILE
from .verdict.spread import SPREAD_FILE

__all__ = ["notebook_imports", "notebook_bindings", "used_source", "module_closure", "companion_modules",
           "reach_fingerprint"]

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


def _notebook_tree(notebook: Path) -> ast.AST | None:
    lines = [ln for ln in _code(notebook).splitlines() if not ln.lstrip().startswith(("%", "!"))]
    try:
        return ast.parse("\n".join(lines))
    except SyntaxError:
        return None


def notebook_imports(notebook: Path) -> set[str]:
    """The ``fedlib`` modules a notebook's code imports (its cells parsed, magics left out)."""
    tree = _notebook_tree(notebook)
    return {PACKAGE} if tree is None else _imports(tree, "__main__", False)


def notebook_bindings(notebook: Path, root: Path) -> dict[str, frozenset[str] | None]:
    """``{module: attributes}`` for every ``fedlib`` module (a file, not a package) that the notebook binds to a
    name (``from fedlib.papers.fedic import plots as P``, ``import fedlib.x.y as Y``): the attributes it takes of
    that name (``P.fig4_lambda`` gives ``fig4_lambda``), or None where it uses the name otherwise (passes it on,
    binds it twice, rebinds it), which makes the whole module part of the reach."""
    tree = _notebook_tree(notebook)
    if tree is None:
        return {}
    bound: dict[str, str] = {}  # name -> module
    twice: set[str] = set()
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == PACKAGE:
            targets = [(a.asname or a.name, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [(a.asname, a.name) for a in node.names if a.asname and a.name.split(".")[0] == PACKAGE]
        for name, module in targets:
            found = _source(str(root), module)
            if found is None or found[1]:  # not a module of its own (a function, a class) or a package
                continue
            if name in bound:
                twice.add(name)
            bound[name] = module
    attrs: dict[str, set[str] | None] = {name: set() for name in bound}
    taken = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in bound:
            if attrs[node.value.id] is not None:
                attrs[node.value.id].add(node.attr)
        elif isinstance(node, ast.Name) and node.id in bound and id(node) not in taken:
            attrs[node.id] = None  # the name itself is used (passed on, rebound): the whole module
    out: dict[str, frozenset[str] | None] = {}
    for name, module in bound.items():
        used = None if name in twice or attrs[name] is None else frozenset(attrs[name])
        if module in out and out[module] != used:  # bound under two names: keep what both take, or the whole
            used = None if used is None or out[module] is None else out[module] | used
        out[module] = used
    return out


def _defined(node: ast.stmt) -> str | None:
    return node.name if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else None


def used_source(path: Path, attributes: frozenset[str]) -> str | None:
    """The part of a module's source that ``attributes`` reach: every top-level statement that defines no function
    or class (imports, constants, ``__all__``: they run at import, whatever is called), and the definitions named
    by ``attributes`` or mentioned, as a name, in the source of a statement already taken, to a fixed point.  Each
    statement's text as written, decorators included, in file order.  None where the module looks up its own
    functions by name (``globals()``, ``vars()``, ``sys.modules``), which no name in its source shows."""
    text = Path(path).read_text()
    if re.search(r"\bglobals\(\)|\bsys\.modules\b|\bvars\(\)", text):
        return None
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    defs = {_defined(n): n for n in tree.body if _defined(n)}
    mentioned = {n: {m.id for m in ast.walk(n) if isinstance(m, ast.Name)} |
                    {m.attr for m in ast.walk(n) if isinstance(m, ast.Attribute)} for n in tree.body}
    todo = set(attributes) | {m for n in tree.body if not _defined(n) for m in mentioned[n]}
    taken: set[str] = set()
    while todo:
        name = todo.pop()
        if name in defs and name not in taken:
            taken.add(name)
            todo |= mentioned[defs[name]]
    parts = []
    for n in tree.body:
        if _defined(n) is None or _defined(n) in taken:
            first = min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", ())])
            parts.append("".join(lines[first - 1:n.end_lineno]))
    return "\n".join(parts)


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
    seed-to-seed spread measured beside them (``_spread.json``), the seeds ``decide`` added (``_decided.jsonl``),
    and the source of every module it reaches (:func:`module_closure`) from its imports and from ``companions``
    (its paper's, and those it reads: :func:`companion_modules`).  Equal fingerprints: equal outputs."""
    h = hashlib.sha256()
    h.update(Path(notebook).read_bytes())
    if records is not None:  # the run records, the measured spread beside them (the tables' verdicts read it) and
        # the seeds decide added to some cells (the tables read those seeds from the records)
        for read in (Path(records), Path(records).with_name(SPREAD_FILE), Path(records).with_name(DECIDED_FILE)):
            h.update(read.read_bytes() if read.exists() else b"\0")
    start = notebook_imports(notebook) | {m for c in companions for m in companion_modules(c, root)}
    closure = module_closure(start, root)
    narrowed = {}  # module -> the source of it the notebook's attributes reach (module docstring)
    for module, used in notebook_bindings(notebook, root).items():
        if used is None or module not in closure:
            continue
        path = closure[module]
        stat = Path(path).stat()
        own = set(_module_imports(path, stat.st_mtime_ns, stat.st_size, module, False))
        if module in module_closure((start - {module}) | own, root):  # another way in than the notebook's name
            continue
        source = used_source(Path(path), used)
        if source is not None:
            narrowed[module] = source
    for module, path in sorted(closure.items()):
        body = narrowed[module].encode() if module in narrowed else Path(path).read_bytes()
        h.update(module.encode() + (b"\1" if module in narrowed else b"\0") + body)
    return h.hexdigest()[:16]
