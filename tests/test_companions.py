"""Every paper companion has the same shape (fedlib/papers/__init__.py): the same modules, its
deviation notes read by its profiles the same way, its figures' method order and colours on its
Paper, notebooks of 20 to 40 code lines, and no paper constant left outside fedlib/papers/."""

import ast
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import fedlib.papers
from fedlib.repro.artefacts import figures, style
from fedlib.repro.spec.paper import all_papers

ROOT = Path(__file__).resolve().parents[1]
PAPERS = all_papers()
#: Every companion has these modules: its descriptor, the paper's reported values, its profiles, its studies
#: (fedlib.repro.spec.study), its deviations and its budget ladder; the rest are its own, named after concepts.
SHAPE = {"__init__", "reported", "profiles", "studies", "deviations", "budget", "claims"}
#: No companion module is longer than this (split by concept instead).
MAX_LINES = 400


def code_lines(notebook: Path) -> int:
    """Non-blank, non-comment lines of a notebook's code cells."""
    cells = json.loads(notebook.read_text())["cells"]
    return sum(1 for c in cells if c["cell_type"] == "code"
               for line in "".join(c["source"]).splitlines() if line.strip() and not line.strip().startswith("#"))


def test_code_lines_counts_code_only(tmp_path):
    nb = {"cells": [{"cell_type": "markdown", "source": ["# a title\n", "text\n"]},
                    {"cell_type": "code", "source": ["# a comment\n", "\n", "x = 1  # counted\n", "    y = 2"]}]}
    (tmp_path / "a.ipynb").write_text(json.dumps(nb))
    assert code_lines(tmp_path / "a.ipynb") == 2


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*/*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_notebook_is_a_view_of_at_most_40_code_lines(notebook):
    """A ceiling, never a quota: a notebook is parameters, calls into fedlib and what it shows; its logic
    lives in its companion (``fedlib/papers/<paper>/``), where the tests reach it."""
    assert code_lines(notebook) <= 40, (f"{notebook.relative_to(ROOT)} has {code_lines(notebook)} code lines: "
                                        "move its logic into its companion, fedlib/papers/<paper>/")


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_notebook_shows_tables_as_dataframes_never_printed_markdown(notebook):
    """A table printed as markdown text wraps into pipe-text in JupyterLab: notebooks show DataFrames
    (``ctx.comparison_view`` for a paper table) and never print a saved ``.md`` or a rendered comparison."""
    code = "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code")
    printed = re.findall(r"print\((?:[^()]|\([^()]*\))*(?:open\(|\.md\b|read_text\(|render_comparison|to_markdown)", code)
    assert not printed, f"{notebook.relative_to(ROOT)} prints a table as text: {printed}"


def test_every_notebook_folder_is_a_companion():
    assert {p.parent.name for p in NOTEBOOKS} == set(PAPERS)


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_companion_has_the_shared_module_set(name):
    package = importlib.import_module(f"{fedlib.papers.__name__}.{name}")
    modules = {m.name for m in pkgutil.iter_modules(package.__path__)} | {"__init__"}
    assert SHAPE <= modules, f"{name} lacks {sorted(SHAPE - modules)}"
    for module in modules - {"__init__"}:
        importlib.import_module(f"{package.__name__}.{module}")
    long = {p.name: n for p in Path(package.__path__[0]).rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"{name}: modules over {MAX_LINES} lines (split them by concept): {long}"


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_every_study_is_run_by_a_notebook(name):
    """A declared study no notebook runs is dead code; a notebook's ``ctx.study("x")`` of an undeclared study
    fails at run time, so it is checked here.  The companion declares what each notebook reads
    (``PAPER.views``); the cost plan reads those declarations, so they must say what the notebook calls."""
    paper = PAPERS[name]
    views = {v.notebook: v for v in paper.views}
    on_disk = {nb.stem: nb for nb in NOTEBOOKS if nb.parent.name == name}
    assert set(views) == set(on_disk), f"{name}: notebooks without a View {sorted(set(on_disk) - set(views))}, " \
                                       f"Views without a notebook {sorted(set(views) - set(on_disk))}"
    for stem, nb in on_disk.items():
        code = "\n".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code")
        called = set(re.findall(r"ctx\.study\(\s*[\"']([^\"']+)[\"']", code))
        tables = {t for t in paper.tables if re.search(rf"ctx\.table\(\s*[\"']{t}[\"']", code)}
        view = views[stem]
        assert called == set(view.studies), (stem, sorted(called), view.studies)
        assert tables == set(view.tables), (stem, sorted(tables), view.tables)
        assert ("spec_for" in code) == view.ladder, stem
    declared = {s for v in paper.views for s in v.studies}
    assert declared <= set(paper.studies), f"{name}: views run undeclared studies {sorted(declared - set(paper.studies))}"
    assert set(paper.studies) <= declared, f"{name}: studies no notebook runs: {sorted(set(paper.studies) - declared)}"
    assert {t for v in paper.views for t in v.tables} <= set(paper.tables)


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_profiles_list_the_deviation_notes(name):
    """Every profile of every paper lists each line of its ``deviations.NOTES`` under the
    experiment it names, after the profile's own (``merge_notes(NOTES, ...)``), and so in every
    table's and figure's deviations."""
    deviations = importlib.import_module(f"{fedlib.papers.__name__}.{name}.deviations")
    assert isinstance(deviations.DEVIATIONS, tuple) and deviations.DEVIATIONS
    for entry in deviations.DEVIATIONS:
        assert set(entry) == {"what", "paper", "code", "fedlib", "param"}, entry
    paper = PAPERS[name]
    for profile in paper.profiles.values():
        for experiment, lines in deviations.NOTES.items():
            assert tuple(profile.notes.get(experiment, ()))[:len(lines)] == tuple(lines), (profile.name, experiment)
        for experiment in paper.experiments:
            listed = profile.deviations(experiment)
            for line in tuple(deviations.NOTES.get("*", ())) + tuple(deviations.NOTES.get(experiment, ())):
                assert line in listed, (profile.name, experiment, line)


@pytest.mark.parametrize("name", sorted(PAPERS))
def test_method_order_and_colours_come_from_the_paper(name):
    paper = PAPERS[name]
    reported = importlib.import_module(f"{fedlib.papers.__name__}.{name}.reported")
    assert paper.method_order == tuple(reported.METHOD_ORDER)
    assert set(reported.METHODS) <= set(paper.method_order)
    colors = paper.method_colors
    # the paper's methods take the palette's first colours, in its order
    import seaborn as sns

    base = sns.color_palette(style.PALETTE, 10)
    for i, m in enumerate(paper.method_order[:10]):
        assert colors[m] == base[i], (name, m)


def test_method_colors_is_a_palette_given_an_order():
    import seaborn as sns

    base = sns.color_palette(style.PALETTE, 10)
    table = style.method_colors(("fedrs", "fedavg"), extra=["not_a_method"])
    assert table["fedrs"] == base[0] and table["fedavg"] == base[1]
    assert list(table)[-1] == "not_a_method"
    assert style.method_colors(("fedavg",))["fedavg"] == style.method_colors(("fedavg", "fedrs"))["fedavg"]


def test_one_way_to_a_profile():
    """No companion wraps get_profile: profiles are resolved by ``PAPER.profile``."""
    for path in (ROOT / "fedlib" / "papers").rglob("*.py"):
        assert "def get_profile" not in path.read_text(), path


def _string_constants(path: Path):
    """The string constants of a module, docstrings left out."""
    tree = ast.parse(path.read_text())
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


def test_no_paper_constant_outside_the_papers():
    """The reproduction machinery names no paper outside its docstrings, and no module outside
    fedlib/papers/ defines a paper's method order (figures.METHOD_ORDER was FedLC's rows)."""
    names = re.compile(r"\b(" + "|".join(map(re.escape, PAPERS)) + r")\b", re.IGNORECASE)
    found = [f"{path.relative_to(ROOT)}:{line}: {text!r}" for path in sorted((ROOT / "fedlib" / "repro").rglob("*.py"))
             for line, text in _string_constants(path) if names.search(text)]
    assert not found, found
    assert not hasattr(figures, "METHOD_ORDER")
    for path in (ROOT / "fedlib").rglob("*.py"):
        if "papers" not in path.relative_to(ROOT / "fedlib").parts:
            assert not re.search(r"^METHOD_ORDER\s*=", path.read_text(), re.MULTILINE), path


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_notebook_imports_from_fedlib_repro_and_its_own_companion_only(notebook):
    """``fedlib.repro`` exports what a notebook uses (issue 50): no deep module of the machinery, no other
    paper's companion."""
    import ast

    code = "\n".join("".join(c["source"]) for c in json.loads(notebook.read_text())["cells"] if c["cell_type"] == "code")
    own = f"fedlib.papers.{notebook.parent.name}"
    found = {node.module for node in ast.walk(ast.parse(code)) if isinstance(node, ast.ImportFrom) and node.module}
    found |= {a.name for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Import) for a in node.names}
    wrong = {m for m in found if m.split(".")[0] == "fedlib" and m != "fedlib.repro" and not m.startswith(own)}
    assert not wrong, f"{notebook.relative_to(ROOT)} imports {sorted(wrong)}: export it from fedlib.repro"
