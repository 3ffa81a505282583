"""What a change reaches (fedlib.repro.regenerate_reach): a render from the records redoes a notebook only when
its file, its records or the code it reaches changed.  Checked on a copy of the real tree: editing FEDIC's
drawing module changes the fingerprint of exactly the FEDIC notebooks that import it, and of no FedLC one."""

from __future__ import annotations

import shutil
from pathlib import Path

from fedlib.repro.regenerate_reach import companion_modules, module_closure, notebook_imports, reach_fingerprint

ROOT = Path(__file__).resolve().parents[1]


def _fingerprints(root: Path) -> dict[str, str]:
    return {f"{nb.parent.name}/{nb.stem}": reach_fingerprint(nb, None, root, (nb.parent.name,))
            for paper in ("fedic", "fedlc") for nb in sorted((root / "notebooks" / paper).glob("*.ipynb"))}


def test_editing_one_drawing_module_reaches_the_notebooks_that_import_it_and_no_other(tmp_path):
    shutil.copytree(ROOT / "fedlib", tmp_path / "fedlib", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    before = _fingerprints(tmp_path)
    assert before == _fingerprints(tmp_path)  # a fingerprint depends on the files only
    plots = tmp_path / "fedlib" / "papers" / "fedic" / "plots.py"
    plots.write_text(plots.read_text() + "\n# an edit\n")
    after = _fingerprints(tmp_path)
    changed = {k for k in before if before[k] != after[k]}
    importers = {k for k in before if "fedlib.papers.fedic.plots" in module_closure(
        notebook_imports(tmp_path / "notebooks" / f"{k}.ipynb") | companion_modules(k.split("/")[0], tmp_path),
        tmp_path)}
    assert changed == importers and changed, (changed, importers)
    assert not any(k.startswith("fedlc/") for k in changed)
    assert len(changed) < len([k for k in before if k.startswith("fedic/")])  # not every FEDIC notebook


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
