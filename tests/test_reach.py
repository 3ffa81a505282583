"""What a change reaches (fedlib.repro.regenerate_reach): a render from the records redoes a notebook only when
its file, its records or the code it reaches changed.  Checked on a copy of the real tree: editing FEDIC's
drawing module at its top level changes the fingerprint of exactly the FEDIC notebooks that import it, and of no
FedLC one; editing one of its drawing functions, of the notebooks that call it only."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from fedlib.repro.regenerate_reach import (companion_modules, module_closure, notebook_bindings, notebook_imports,
                                          reach_fingerprint, used_source)

ROOT = Path(__file__).resolve().parents[1]


def _fingerprints(root: Path) -> dict[str, str]:
    return {f"{nb.parent.name}/{nb.stem}": reach_fingerprint(nb, None, root, (nb.parent.name,))
            for paper in ("fedic", "fedlc") for nb in sorted((root / "notebooks" / paper).glob("*.ipynb"))}


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "fedlib", tmp_path / "fedlib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    return tmp_path


def _importers(root: Path, module: str) -> set[str]:
    """The notebooks whose import closure holds ``module`` (read from the import statements alone)."""
    return {f"{nb.parent.name}/{nb.stem}" for paper in ("fedic", "fedlc")
            for nb in sorted((root / "notebooks" / paper).glob("*.ipynb"))
            if module in module_closure(notebook_imports(nb) | companion_modules(paper, root), root)}


def _callers(root: Path, paper: str, function: str) -> set[str]:
    """The notebooks whose cells call ``<alias>.<function>`` of the paper's ``plots`` module, read as text."""
    return {f"{paper}/{nb.stem}" for nb in sorted((root / "notebooks" / paper).glob("*.ipynb"))
            if re.search(rf"\b\w+\.{function}\(", nb.read_text())}


def test_editing_a_drawing_modules_top_level_reaches_every_notebook_that_imports_it_and_no_other(tmp_path):
    root = _copy(tmp_path)
    before = _fingerprints(root)
    assert before == _fingerprints(root)  # a fingerprint depends on the files only
    plots = root / "fedlib" / "papers" / "fedic" / "plots.py"
    plots.write_text(plots.read_text() + "\nAN_EDIT = 1\n")  # a statement that runs at import
    after = _fingerprints(root)
    changed = {k for k in before if before[k] != after[k]}
    assert changed == _importers(root, "fedlib.papers.fedic.plots") and changed
    assert not any(k.startswith("fedlc/") for k in changed)
    assert len(changed) < len([k for k in before if k.startswith("fedic/")])  # not every FEDIC notebook


def test_editing_one_drawing_function_reaches_only_the_notebooks_that_draw_with_it(tmp_path):
    """Fig. 4's drawing function is called by one FEDIC notebook, which alone renders again; a comment reaches
    none, and a helper reaches the notebooks whose functions name it."""
    root = _copy(tmp_path)
    before = _fingerprints(root)
    plots = root / "fedlib" / "papers" / "fedic" / "plots.py"
    source = plots.read_text()
    assert source.count("def fig4_lambda(ctx, study):\n") == 1
    edited = "def fig4_lambda(ctx, study):\n    study = study\n"
    plots.write_text(source.replace("def fig4_lambda(ctx, study):\n", edited))
    changed = {k for k, v in _fingerprints(root).items() if before[k] != v}
    assert changed == _callers(root, "fedic", "fig4_lambda") == {"fedic/05_sensitivity"}
    assert changed < _importers(root, "fedlib.papers.fedic.plots")
    plots.write_text(source + "\n# a comment\n")
    assert _fingerprints(root) == before
    helper = "def _seeds_label(counts: pd.Series) -> str:\n"
    assert source.count(helper) == 1
    plots.write_text(source.replace(helper, helper + "    counts = counts\n"))
    changed = {k for k, v in _fingerprints(root).items() if before[k] != v}
    assert changed == _callers(root, "fedic", "table3_groups") and changed  # the helper of Table 3's figure


def test_a_module_name_used_otherwise_than_through_its_attributes_reaches_the_whole_module(tmp_path):
    nb = tmp_path / "n.ipynb"
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    nb.write_text(json.dumps({"cells": [{**cell, "source": "from fedlib.papers.fedic import plots as P\n"
                                                             "P.fig4_lambda(1, 2)\n"}]}))
    assert notebook_bindings(nb, ROOT) == {"fedlib.papers.fedic.plots": frozenset({"fig4_lambda"})}
    nb.write_text(json.dumps({"cells": [{**cell, "source": "from fedlib.papers.fedic import plots as P\n"
                                                             "P.fig4_lambda(1, 2)\nprint(P)\n"}]}))
    assert notebook_bindings(nb, ROOT) == {"fedlib.papers.fedic.plots": None}
    used = used_source(ROOT / "fedlib" / "papers" / "fedic" / "plots.py", frozenset({"fig4_lambda"})) or ""
    assert "def fig4_lambda(" in used and "def fig5_alpha(" not in used and "GROUP_COLORS =" in used


def test_the_closure_follows_imports_inside_functions_and_the_packages_above():
    closure = module_closure({"fedlib.repro.budget.gate"}, ROOT)
    assert {"fedlib", "fedlib.repro", "fedlib.repro.budget", "fedlib.repro.budget.costs", "fedlib.data"} <= set(closure)
    assert "fedlib.papers.fedic.plots" not in closure


def test_a_records_file_is_part_of_the_reach(tmp_path):
    nb = ROOT / "notebooks" / "fedic" / "02_cifar_lt.ipynb"
    records = tmp_path / "_records.jsonl.gz"
    records.write_bytes(b"a")
    first = reach_fingerprint(nb, records, ROOT, ("fedic",))
    records.write_bytes(b"b")
    assert reach_fingerprint(nb, records, ROOT, ("fedic",)) != first


def test_the_measured_spread_beside_the_records_is_part_of_the_reach(tmp_path):
    """A new seed-to-seed spread changes the tables' verdicts (their 1-seed cells are judged against it), so the
    notebooks of that profile render again."""
    nb = ROOT / "notebooks" / "fedic" / "02_cifar_lt.ipynb"
    records = tmp_path / "_records.jsonl.gz"
    records.write_bytes(b"a")
    absent = reach_fingerprint(nb, records, ROOT, ("fedic",))
    (tmp_path / "_spread.json").write_text("{}")
    first = reach_fingerprint(nb, records, ROOT, ("fedic",))
    (tmp_path / "_spread.json").write_text('{"seed_to_seed": {}}')
    assert len({absent, first, reach_fingerprint(nb, records, ROOT, ("fedic",))}) == 3


def test_the_seeds_decide_added_beside_the_records_are_part_of_the_reach(tmp_path):
    """FedABC quick, 2026-12-07: decide declared seeds 1-2 of Table 2's SCAFFOLD row, whose runs the records held
    already; the records did not change, so a render from the records kept the table at 1 seed."""
    from fedlib.repro.artefacts.tables import DECIDED_FILE

    nb = ROOT / "notebooks" / "fedic" / "02_cifar_lt.ipynb"
    records = tmp_path / "_records.jsonl.gz"
    records.write_bytes(b"a")
    absent = reach_fingerprint(nb, records, ROOT, ("fedic",))
    (tmp_path / DECIDED_FILE).write_text('{"table": "table1", "row": "fedic", "column": "c", "seeds": [1]}\n')
    assert reach_fingerprint(nb, records, ROOT, ("fedic",)) != absent
