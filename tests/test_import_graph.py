"""The package's import graph, read from the source with ``ast``: the training core never
imports the reproduction layer (``fedlib.repro``) or a paper (``fedlib.papers``), and the
graph has no circle.

Every import counts, at module level or inside a function (a lazy import is still a
dependency).  A package that imports its modules by discovery
(:mod:`fedlib.discovery`: ``algorithms``, ``models``, ``losses``) depends on all of
them; importing a module of a package from outside it runs the package's
``__init__`` first, so it depends on the package too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "fedlib"
# the reproduction layer (fedlib/repro/ once moved there; the same modules while they sit at the top)
REPRODUCTION = ("fedlib.repro", "fedlib.papers")
# the entry points and adapters above the core: the CLI (its subcommands reach the layers above
# lazily) and the Flower adapter
ABOVE_CORE = ("fedlib.__main__", "fedlib.flower")


def _name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _resolve(importer: str, is_package: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    base = importer.split(".")
    base = base if is_package else base[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def import_graph() -> dict[str, set[str]]:
    """module -> the fedlib modules it imports (module level and inside functions)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(name, _is_package(name, modules), node.level, node.module)
                submodules = {f"{base}.{a.name}" for a in node.names} & set(modules)  # `from pkg import module`
                if len(submodules) < len(node.names) or not name.startswith(base + "."):
                    targets.add(base)  # a name defined in the package (a module of its own package that
                    # imports a sibling, `from . import reported`, runs inside the package's __init__ already)
                targets.update(f"{base}.{a.name}" for a in node.names)
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "import_modules"):
                targets.update(m for m in modules if m.rsplit(".", 1)[0] == name)  # discovery: every module
        for target in targets:
            while target and target not in modules:  # `from module import function`
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if not target or target in (name, "fedlib"):  # the root package is initialised before any module
                continue
            graph[name].add(target)
            parent = target.rsplit(".", 1)[0]
            while "." in parent and not name.startswith(parent + "."):  # entering a package runs its __init__
                graph[name].add(parent)
                parent = parent.rsplit(".", 1)[0]
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _within(name: str, roots) -> bool:
    return any(name == r or name.startswith(r + ".") for r in roots)


def _core(name: str) -> bool:
    return name != "fedlib" and not _within(name, REPRODUCTION + ABOVE_CORE)


def _layer(name: str) -> int:
    """0: the training core; 1: the entry points and adapters, and the reproduction machinery;
    2: the paper companions."""
    return 2 if _within(name, ("fedlib.papers",)) else 0 if _core(name) else 1


def test_the_training_core_never_imports_the_reproduction_layer():
    graph = import_graph()
    bad = sorted((m, t) for m, ts in graph.items() if _core(m) for t in ts if not _core(t) and t != "fedlib")
    assert not bad, f"training modules importing the reproduction layer or a paper: {bad}"


def test_the_core_import_graph_has_no_circle():
    graph = import_graph()
    core = {m: {t for t in ts if _core(t)} for m, ts in graph.items() if _core(m)}
    assert not _cycles(core), f"import circles among training modules: {_cycles(core)}"


def test_the_cycle_finder_finds_a_circle():
    """The checker itself: a → b → c → a is one circle, d hangs off it."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_whole_package_has_no_circle_and_no_import_runs_back_up():
    """Issue 18's acceptance: no circle anywhere, and at most one import that runs from a lower layer to a
    higher one (there is none: the registry finds the companions by discovery, by package name)."""
    graph = import_graph()
    assert not _cycles(graph), f"import circles: {_cycles(graph)}"
    up = sorted((m, t) for m, ts in graph.items() for t in ts if _layer(t) > _layer(m))
    assert len(up) <= 1, f"imports that run back up: {up}"



def _reach(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for t in graph[todo.pop()] - seen:
            seen.add(t)
            todo.append(t)
    return seen


def test_the_comparison_takes_results_and_returns_verdicts():
    """fedlib.repro.verdict.compare neither runs grids nor reads or writes files: it reaches none of the grid, the
    executors, the saving or plotting modules, nor the table runner above it (fedlib.repro.artefacts.tables, which does)."""
    graph = import_graph()
    runs_or_saves = {"fedlib.repro.run.grid", "fedlib.repro.run.executors", "fedlib.repro.artefacts.saving", "fedlib.repro.artefacts.figures",
                     "fedlib.repro.artefacts.provenance", "fedlib.repro.artefacts.tables", "fedlib.simulation", "fedlib.store"}
    assert not _reach(graph, "fedlib.repro.verdict.compare") & runs_or_saves
    assert {"fedlib.repro.verdict.compare", "fedlib.repro.run.grid", "fedlib.repro.artefacts.saving"} <= graph["fedlib.repro.artefacts.tables"]
    from fedlib.repro.verdict import compare

    for name in ("reproduce_table", "table_cells", "metric_of", "recount", "load_spread"):  # moved up, not shimmed
        assert not hasattr(compare, name), name


def test_style_provenance_and_saving_draw_nothing():
    """The split of the old figures module: the style, the provenance and the saving reach no plotting
    helper (fedlib.repro.artefacts.figures sits above them)."""
    graph = import_graph()
    for module in ("fedlib.repro.artefacts.style", "fedlib.repro.artefacts.provenance", "fedlib.repro.artefacts.saving"):
        assert "fedlib.repro.artefacts.figures" not in _reach(graph, module), module
    assert "fedlib.repro.artefacts.style" not in _reach(graph, "fedlib.repro.artefacts.provenance")
