"""The committed outputs under figures/ come from committed code and went through every current figure
rule: no sidecar's git_commit ends in -dirty, and every PNG's sidecar records each rule of
figure_rules.RULES and figure_checks_data.DATA_RULES in its figure_checks.  Every committed output now
renders again from what is committed (the run records, and the GPU bring-backs of benchmarks/leases/), so no
output is exempt."""

import json
import subprocess
from pathlib import Path

import pytest

from fedlib.repro.artefacts.figure_checks_data import DATA_RULES
from fedlib.repro.artefacts.figure_rules import RULES

REPO = Path(__file__).resolve().parents[1]


def _committed(suffix: str) -> list[Path]:
    out = subprocess.run(["git", "ls-files", "figures"], cwd=REPO, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [REPO / p for p in out.stdout.splitlines() if p.endswith(suffix) and (REPO / p).exists()]


def _committed_sidecars() -> list[Path]:
    return _committed(".json")


def _commits(body) -> list[str]:
    if isinstance(body, dict):
        return [v for k, v in body.items() if k == "git_commit" and isinstance(v, str)] + \
            [c for v in body.values() for c in _commits(v)]
    if isinstance(body, list):
        return [c for v in body for c in _commits(v)]
    return []


def _dirty(p: Path) -> list[str]:
    return [c for c in _commits(json.loads(p.read_text())) if c.endswith("-dirty")]


def _lacks(p: Path) -> list[str]:
    body = json.loads(p.read_text())
    if body.get("kind") != "figure" or "png" not in body.get("files", {}):
        return []
    return [r for r in RULES + DATA_RULES if r not in body.get("figure_checks", {})]


def test_no_committed_sidecar_comes_from_uncommitted_code():
    dirty = [f"{p.relative_to(REPO)}: {c}" for p in _committed_sidecars() for c in _dirty(p)]
    assert not dirty, "outputs saved from uncommitted code:\n" + "\n".join(dirty)


def test_every_committed_png_records_every_current_figure_check():
    missing = [f"{p.relative_to(REPO)}: {', '.join(_lacks(p))}" for p in _committed_sidecars() if _lacks(p)]
    assert not missing, f"{len(missing)} PNG sidecars lack current checks:\n" + "\n".join(missing)


def _header(p: Path) -> set[str]:
    import csv

    with open(p, newline="") as fh:
        return set(next(csv.reader(fh), []))


def test_every_committed_table_of_ours_keeps_each_seeds_value():
    """A mean over seeds (``ours_mean``) comes with the seeds' own values (``ours_seeds``), at every scale, so
    that every gap between two cells trained at the same seeds is paired (issue 49)."""
    headers = {p: _header(p) for p in _committed(".csv")}
    assert any("ours_seeds" in h for h in headers.values())  # the check reads the tables it means to
    lacking = [str(p.relative_to(REPO)) for p, h in headers.items() if "ours_mean" in h and "ours_seeds" not in h]
    assert not lacking, "tables of ours without each seed's value:\n" + "\n".join(lacking)
