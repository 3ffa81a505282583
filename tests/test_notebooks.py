"""The notebooks: one folder per paper, committed stripped, parameterised for papermill, named in
their Context after their path, and (marked ``notebooks``) every one executed under the smoke profile."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from fedlib.papers import all_papers

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*/*.ipynb"))


def _load(path):
    return json.loads(path.read_text())


def test_notebooks_live_in_one_folder_per_paper():
    assert not list((REPO / "notebooks").glob("*.ipynb")), "notebooks go in notebooks/<paper>/"
    papers = {p.parent.name for p in NOTEBOOKS}
    assert papers <= set(all_papers()), papers - set(all_papers())
    assert len([p for p in NOTEBOOKS if p.parent.name == "fedlc"]) >= 8
    for p in NOTEBOOKS:
        assert re.fullmatch(r"\d\d_[a-z0-9_]+", p.stem), p


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_notebook_is_stripped(path):
    nb = _load(path)
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name} cell {i} has outputs: run `make strip-notebooks`"
            assert cell.get("execution_count") is None, f"{path.name} cell {i} has an execution count"
        assert "execution" not in cell.get("metadata", {}), f"{path.name} cell {i} has execution metadata"
    assert "papermill" not in nb.get("metadata", {}), f"{path.name} was saved from a papermill run"
    # nbformat 4.5 with an id a cell: papermill gives a cell without one a random id at every execution, and the
    # executed copy would then change at every render (fedlib.repro.regenerate_notebook.steady)
    version = (nb["nbformat"], nb["nbformat_minor"])
    assert version >= (4, 5), f"{path.name}: nbformat {version}, which gives cells no id"
    assert all(c.get("id") for c in nb["cells"]), f"{path.name} has a cell without an id"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_parameters_cell_and_context_name(path):
    nb = _load(path)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = code[0]
    assert "parameters" in first.get("metadata", {}).get("tags", []), path.name
    source = "".join(first["source"])
    assert 'profile = "quick"' in source and "seed = " in source and "out_dir = " in source
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    text = "".join("".join(c["source"]) for c in code)
    assert f'notebook="{path.parent.name}/{path.stem}"' in text, "Context(notebook=...) must name this notebook"


@pytest.mark.notebooks
@pytest.mark.slow
def test_every_notebook_runs_under_smoke(tmp_path):
    """Executes every paper's notebooks with papermill under the smoke profile (a few minutes)."""
    pytest.importorskip("papermill")
    env = {**os.environ, "FEDLIB_STORE": str(tmp_path / "store"), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-m", "fedlib.repro.regenerate", "--profile", "smoke", "--figures",
                           str(tmp_path / "figures")], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    index = (tmp_path / "figures" / "README.md").read_text()
    for paper in {p.parent.name for p in NOTEBOOKS}:
        assert list((tmp_path / "figures" / paper / "smoke" / "executed").glob("*.ipynb")), paper
        assert f"#{paper}-smoke" in index
    # the committed outputs were not touched, and nothing names this machine's paths
    assert not list((REPO / "figures").glob("*/smoke"))
    assert str(REPO) not in index and str(tmp_path) not in index
    # every paper's runs are recorded beside its outputs, and rendering from the records alone (an empty store:
    # nothing trains) gives every table again, byte for byte
    trained = {p: p.read_bytes() for p in (tmp_path / "figures").glob("*/smoke/*") if p.suffix in (".csv", ".md")}
    for paper in {p.parent.name for p in NOTEBOOKS}:
        assert (tmp_path / "figures" / paper / "smoke" / "_records.jsonl.gz").exists(), paper
    proc = subprocess.run([sys.executable, "-m", "fedlib.repro.regenerate", "--profile", "smoke", "--figures",
                           str(tmp_path / "figures"), "--render", "records", "--force", "--quiet"], cwd=REPO,
                          env={**env, "FEDLIB_STORE": str(tmp_path / "empty")}, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert not (tmp_path / "empty").exists() or not any((tmp_path / "empty").rglob("result.json"))
    assert [p.name for p, body in trained.items() if p.read_bytes() != body] == []


@pytest.mark.notebooks
@pytest.mark.slow
@pytest.mark.skipif(not (REPO.parent / "shared" / "data" / "cifar10").is_dir(), reason="../shared/data absent")
def test_a_notebook_runs_as_jupyterlab_runs_it(tmp_path):
    """As `FEDLIB_DATA=../shared/data jupyter lab notebooks/` runs it: the kernel's working folder is
    notebooks/<paper>/ and the data root is relative to the repository.  The cells show only their
    tables and figures: no warning boxes, no dicts of saved paths; progress bars are widgets."""
    pytest.importorskip("papermill")
    import papermill as pm

    nb = REPO / "notebooks" / "fedlc" / "04_label_skew.ipynb"
    env = {"FEDLIB_DATA": "../shared/data", "FEDLIB_STORE": str(tmp_path / "store"), "MPLBACKEND": "Agg"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        pm.execute_notebook(str(nb), str(tmp_path / "out.ipynb"), cwd=str(nb.parent), kernel_name="python3",
                            parameters={"profile": "smoke", "out_dir": str(tmp_path / "figures")},
                            progress_bar=False)
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None) if v is None else os.environ.__setitem__(k, v)
    done = _load(tmp_path / "out.ipynb")
    for cell in done["cells"]:
        for out in cell.get("outputs", []):
            text = json.dumps(out)
            assert "Warning" not in text and "Traceback" not in text, text[:300]
            assert "PosixPath" not in text and "'json':" not in text, text[:300]
    sidecar = json.loads((tmp_path / "figures" / "fig4_partitions_cifar10.json").read_text())
    assert sidecar["placeholder"] is False and sidecar["datasets"] == ["cifar10"]  # the data were found


def test_a_companion_is_regenerated_after_the_companions_whose_outputs_it_reads():
    from fedlib.repro.artefacts.notebooks import papers_with_notebooks
    from fedlib.repro.spec.paper import all_papers

    order = papers_with_notebooks()
    assert sorted(order) == sorted({p.parent.name for p in NOTEBOOKS})
    for name in order:
        for dep in all_papers()[name].reads:
            assert order.index(dep) < order.index(name), (dep, name)
    assert all_papers()["fedconcat"].reads == ("fedlc",)  # its notebook 04 reads FedLC's stand-in check
