"""The layers inside ``fedlib/repro/``: spec → run → budget → verdict → artefacts → the entry modules
(``regenerate``, ``decide``, ``lease``, ``claims``, …) at the top.  A module imports only from its own layer
or below, never a private (underscore) name of another module, and is at most 400 lines (issue 50).

Read from the source with :mod:`ast`.  The imports that still go up a layer are listed below by name, as a
debt that only shrinks: a new one fails, and a listed one that is gone fails too, until its line is removed.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPRO = Path(__file__).resolve().parents[1] / "fedlib" / "repro"
#: The layers, lowest first; modules directly in fedlib/repro/ are the top.
LAYERS = ("spec", "run", "budget", "verdict", "artefacts")
TOP = "top"
MAX_LINES = 400

#: Imports that still go up a layer: (importing module, imported sub-package) -> why it is not fixed yet.
KNOWN_UP: dict = {}


def _layer(parts: tuple[str, ...]) -> str:
    return parts[0] if len(parts) > 1 and parts[0] in LAYERS else TOP


def _imports():
    """(module path, imported fedlib.repro module, line, imported names) for every import in fedlib/repro."""
    for path in sorted(REPRO.rglob("*.py")):
        rel = path.relative_to(REPRO)
        package = ["fedlib", "repro", *rel.parts[:-1]]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("fedlib.repro"):
                yield rel, target, node.lineno, [a.name for a in node.names]


def _target_layer(target: str, names: list[str]) -> str:
    parts = target.split(".")[2:]
    if not parts:  # "from fedlib.repro import x": x is a layer or an entry module
        return names[0] if names and names[0] in LAYERS else TOP
    return parts[0] if parts[0] in LAYERS else TOP


def test_no_import_goes_up_a_layer():
    order = {name: i for i, name in enumerate((*LAYERS, TOP))}
    found = {}
    for rel, target, line, names in _imports():
        mine, theirs = _layer(rel.parts), _target_layer(target, names)
        if order[theirs] > order[mine]:
            found[(rel.as_posix(), theirs)] = f"{rel}:{line} imports {target}"
    new = {k: v for k, v in found.items() if k not in KNOWN_UP}
    assert not new, "imports that go up a layer (move the code to its layer):\n" + "\n".join(new.values())
    gone = set(KNOWN_UP) - set(found)
    assert not gone, f"fixed, so remove from KNOWN_UP: {sorted(gone)}"


def test_no_private_name_is_imported_across_modules():
    found = {f"{rel.as_posix()}: {target}.{name}" for rel, target, _, names in _imports()
             for name in names if name.startswith("_") and not name.startswith("__")}
    assert not found, f"private names imported across modules (make them public where they live): {sorted(found)}"


def test_no_module_over_400_lines():
    long = {p.relative_to(REPRO).as_posix(): n for p in REPRO.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): {long}"


def test_the_layer_check_sees_an_upward_import():
    """The check can fail: an import of artefacts from spec is found as going up."""
    assert _target_layer("fedlib.repro.artefacts.style", ["method_colors"]) == "artefacts"
    assert _layer(("spec", "paper.py")) == "spec" and _layer(("decide.py",)) == TOP
    assert _target_layer("fedlib.repro", ["run"]) == "run" and _target_layer("fedlib.repro.claims", ["x"]) == TOP


#: What training imports: a module that imports one of these trains (or can).
TRAINS = ("fedlib.api", "fedlib.simulation", "fedlib.engine", "fedlib.experiment", "fedlib.repro.run")


def _verdict_training_imports(root: Path) -> list[str]:
    found = []
    for path in sorted((root / "verdict").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                target = ("fedlib.repro.verdict." if node.level == 1 else "fedlib.repro." if node.level == 2
                          else "fedlib." if node.level == 3 else "") + (node.module or "")
            elif isinstance(node, ast.Import):
                target = node.names[0].name
            else:
                continue
            if target.startswith(TRAINS):
                found.append(f"{path.relative_to(root)}:{node.lineno} imports {target}")
    return found


def test_verdicts_are_pure_no_module_under_verdict_trains(tmp_path):
    """Issue 50: a verdict reads runs, it never makes them.  The command that trains seeds to measure a spread
    is the entry module ``fedlib.repro.measure_spread``; ``verdict/seeds.py`` keeps the pure reading."""
    found = _verdict_training_imports(REPRO)
    assert not found, "verdict/ imports what trains (move the training to an entry module):\n" + "\n".join(found)
    (tmp_path / "verdict").mkdir()
    (tmp_path / "verdict" / "bad.py").write_text("from ..run.grid import run_grid\n")
    assert _verdict_training_imports(tmp_path) == ["verdict/bad.py:1 imports fedlib.repro.run.grid"]
