"""The notebooks: committed stripped, parameterised for papermill, and (marked
``notebooks``) executed under the smoke profile."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))


def _load(path):
    return json.loads(path.read_text())


def test_there_is_a_notebook_per_paper_section():
    names = [p.stem for p in NOTEBOOKS]
    assert len([n for n in names if n.startswith("fedlc_")]) >= 8, names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_stripped(path):
    nb = _load(path)
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [], f"{path.name} cell {i} has outputs: run `make strip-notebooks`"
            assert cell.get("execution_count") is None, f"{path.name} cell {i} has an execution count"
        assert "execution" not in cell.get("metadata", {}), f"{path.name} cell {i} has execution metadata"
    assert "papermill" not in nb.get("metadata", {}), f"{path.name} was saved from a papermill run"


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem.startswith("fedlc_")], ids=lambda p: p.stem)
def test_first_code_cell_is_the_papermill_parameters_cell(path):
    nb = _load(path)
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    first = code[0]
    assert "parameters" in first.get("metadata", {}).get("tags", []), path.name
    source = "".join(first["source"])
    assert 'profile = "quick"' in source and "seed = " in source and "out_dir = " in source
    assert nb["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.notebooks
@pytest.mark.slow
def test_every_notebook_runs_under_smoke(tmp_path):
    """Executes all notebooks with papermill under the smoke profile (a few minutes)."""
    pytest.importorskip("papermill")
    env = {**os.environ, "FEDLIB_STORE": str(tmp_path / "store"), "MPLBACKEND": "Agg"}
    proc = subprocess.run([sys.executable, "-m", "fedlib.regenerate", "--profile", "smoke", "--out",
                           str(tmp_path / "figures" / "fedlc")], cwd=REPO, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert (tmp_path / "figures" / "README.md").exists()
    assert list((tmp_path / "figures" / "fedlc" / "executed").glob("*.ipynb"))
