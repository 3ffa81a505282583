"""A fifth paper in an afternoon: ``python -m fedlib.repro.new NAME`` scaffolds a companion that imports,
checks, regenerates under smoke, and whose claim gets a verdict (issue 50).

The companion is written under a temporary folder and found through ``$FEDLIB_PAPERS`` (the papermill
kernel inherits it); the repository's own companions, notebooks and figures are never touched.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

import fedlib.papers
from fedlib.params import ConfigError
from fedlib.repro.new import scaffold
from fedlib.repro.spec.paper import all_papers, get_paper

NAME = "scaffoldedpaper"


@pytest.fixture
def companion(tmp_path, monkeypatch):
    """The scaffolded companion under ``tmp_path``, found as ``fedlib.papers.scaffoldedpaper`` for this test
    only (and by the notebooks' kernels, through the environment)."""
    files = scaffold(NAME, tmp_path, title="Scaffolded (2026)")
    papers = str(tmp_path / "fedlib" / "papers")
    monkeypatch.setenv(fedlib.papers.PAPERS_ENV, papers)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(fedlib.__file__)),
                                                                   os.environ.get("PYTHONPATH", "")) if p))
    monkeypatch.setattr(fedlib.papers, "__path__", [*fedlib.papers.__path__, papers])
    yield tmp_path, files
    for module in [m for m in sys.modules if m == f"fedlib.papers.{NAME}" or m.startswith(f"fedlib.papers.{NAME}.")]:
        del sys.modules[module]


def _contents(folder):
    """Each file's bytes under ``folder`` (a sidecar's JSON but for its VOLATILE keys), the render's record aside."""
    from fedlib.repro.artefacts.saving import VOLATILE

    def content(p):
        if p.suffix == ".json" and (p.with_suffix(".png").exists() or p.with_suffix(".csv").exists()):
            return {k: v for k, v in json.loads(p.read_text()).items() if k not in VOLATILE}
        return p.read_bytes()
    return {p: content(p) for p in folder.rglob("*") if p.is_file() and p.name != "_run.json"}


def test_scaffold_writes_the_three_places_and_a_kernelspec(companion):
    root, files = companion
    assert {p.relative_to(root).parts[0] for p in files} == {"fedlib", "notebooks"}
    nb = json.loads((root / "notebooks" / NAME / "01_table1.ipynb").read_text())
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    assert any("parameters" in c["metadata"].get("tags", ()) for c in nb["cells"])
    with pytest.raises(FileExistsError):
        scaffold(NAME, root)
    with pytest.raises(ValueError, match="name must be"):
        scaffold("Not-A-Package", root)


def test_the_scaffold_imports_checks_and_a_typo_in_it_fails_at_import(companion):
    root, _ = companion
    paper = get_paper(NAME)
    assert NAME in all_papers() and set(paper.tables) == {"table1"} and paper.views[0].tables == ("table1",)
    profiles = root / "fedlib" / "papers" / NAME / "profiles.py"
    profiles.write_text(profiles.read_text().replace('notes=NOTES)\nQUICK', 'notes=NOTES,\n    experiments={"table1": '
                                                                         '{"colums": ("mnist_dir0.5",)}})\nQUICK'))
    for module in [m for m in sys.modules if m.startswith(f"fedlib.papers.{NAME}")]:
        del sys.modules[module]
    with pytest.raises(ConfigError, match=r"unknown setting 'colums'.*did you mean 'columns'"):
        get_paper(NAME)


def test_the_scaffold_regenerates_under_smoke_and_its_claim_gets_a_verdict(companion):
    from fedlib.repro.artefacts.claims import evaluate
    from fedlib.repro.regenerate import regenerate
    from fedlib.repro.verdict.claims import VERDICTS

    root, _ = companion
    out = regenerate("smoke", papers=[NAME], figures_root=root / "figures", store=str(root / "store"),
                     index=False, notebooks_dir=root / "notebooks", progress=False)
    assert not out.get("failed"), out.get("failed")
    table = root / "figures" / NAME / "smoke" / "table1.csv"
    assert table.exists()
    # the claims step of a regeneration of one paper writes its files and the index, never another paper's
    from fedlib.repro.regenerate import _claims_and_index

    other = root / "figures" / "fedlc" / "README.md"
    other.parent.mkdir(parents=True)
    other.write_text("another paper's page\n")
    _claims_and_index(root / "figures", [NAME])
    assert other.read_text() == "another paper's page\n" and not (other.parent / "claims.csv").exists()
    assert (root / "figures" / NAME / "claims.csv").exists() and (root / "figures" / "README.md").exists()
    # rendered again from its run records: the first time it renders; then nothing it reaches changed, so it
    # is left as it is; an edit of its notebook reaches it again
    kwargs = dict(papers=[NAME], figures_root=root / "figures", store=str(root / "store-render"), index=False,
                  notebooks_dir=root / "notebooks", progress=False, render="records")
    assert regenerate("smoke", **kwargs)[NAME]["rendered"]["notebooks"][0]["status"] == "rendered"
    reach = json.loads((root / "figures" / NAME / "smoke" / "_run.json").read_text())["rendered"]["reach"]
    assert list(reach) == ["01_table1"]
    stamp = table.stat().st_mtime_ns
    assert regenerate("smoke", **kwargs)[NAME]["rendered"]["reach"] == reach and table.stat().st_mtime_ns == stamp
    # forced to render again with nothing changed: every output and the executed copy keep their bytes, but for
    # a sidecar's VOLATILE keys (from a clean tree they keep theirs too: saving.unchanged; a "-dirty" sidecar is
    # always written again); only the render's own record (_run.json) is written
    folder = root / "figures" / NAME / "smoke"
    before = _contents(folder)
    assert regenerate("smoke", **kwargs, force=True)[NAME]["rendered"]["notebooks"][0]["status"] == "rendered"
    assert _contents(folder) == before
    notebook = root / "notebooks" / NAME / "01_table1.ipynb"
    notebook.write_text(notebook.read_text().replace("cell by cell", "cell by cell, again"))
    again = regenerate("smoke", **kwargs)[NAME]["rendered"]
    # rendered again (an unchanged table is then not written again: saving.unchanged, tested in test_reporting)
    assert again["reach"]["01_table1"] != reach["01_table1"] and again["notebooks"][0]["status"] == "rendered"
    smoke = evaluate(NAME, root / "figures", scales=("smoke",))
    assert list(smoke.claim) == ["headline"], smoke.to_dict("records")
    assert smoke.verdict.iloc[0] in VERDICTS and smoke.verdict.iloc[0] != "not tested", smoke.to_dict("records")
