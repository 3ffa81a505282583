"""The generated pages (``figures/README.md`` and ``figures/<paper>/README.md``) stay readable: the index
within 400 lines, no line over 400 characters, every relative link resolving, each deviation stated once
per page, no machine path; and the committed pages are what the generator writes from the committed outputs."""

import json
import re
import shutil
from pathlib import Path

import pytest

from fedlib.repro.artefacts.index import build_index
from fedlib.repro.artefacts.page_text import MAX_LINE, fold, narrow_tables

FIGURES = Path(__file__).resolve().parents[1] / "figures"
PAGES = [FIGURES / "README.md", *sorted(FIGURES.glob("*/README.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
MACHINE_PATH = re.compile(r"…/|/work/|/tmp/|/home/|/Users/|[A-Z]:\\\\")


def _broken_links(page: Path) -> list[str]:
    """The relative links (files and #anchors) of a page that lead nowhere."""
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # http:, mailto:: not ours to check
            continue
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif fragment and f'<a id="{fragment}"></a>' not in dest.read_text():
            broken.append(target)
    return broken


def _deviations(paper_dir: Path) -> set[str]:
    out = set()
    for sidecar in paper_dir.glob("*/*.json"):
        meta = json.loads(sidecar.read_text())
        if isinstance(meta, dict):
            out.update(d for d in meta.get("deviations") or [] if isinstance(d, str))
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(FIGURES)))
def test_a_committed_page_is_short_linked_and_states_each_deviation_once(page):
    text = page.read_text()
    lines = text.splitlines()
    if page == FIGURES / "README.md":
        assert len(lines) <= 400
    assert [ln[:80] for ln in lines if len(ln) > MAX_LINE] == []
    assert _broken_links(page) == []
    assert MACHINE_PATH.search(text) is None
    if page != FIGURES / "README.md":
        repeated = [d[:80] for d in _deviations(page.parent) if text.count(d) > 1]
        assert repeated == []
        assert text.count("Deviations from the paper") == 1


def test_the_committed_pages_are_those_the_committed_outputs_give(tmp_path):
    """Regenerate the pages from a copy of the committed outputs (sidecars, tables, CSVs): the same text."""
    copy = tmp_path / "figures"
    shutil.copytree(FIGURES, copy, ignore=shutil.ignore_patterns("*.png", "*.pdf", "README.md"))
    build_index(copy)
    for page in PAGES:
        fresh = copy / page.relative_to(FIGURES)
        assert fresh.read_text() == page.read_text(), (
            f"{page.relative_to(FIGURES.parent)} is stale: python -c 'from fedlib.repro.artefacts.index import "
            "build_index; build_index()'")
    assert sorted(copy.glob("*/README.md")) == [copy / p.relative_to(FIGURES) for p in PAGES[1:]]


def _sidecar(folder, name, deviations, caption="c"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps({
        "kind": "figure", "name": name, "title": name, "caption": caption, "profile": folder.name,
        "notebook": "fedlc/01_motivation", "deviations": deviations, "files": {"png": f"{name}.png"},
        "git_commit": "abc"}))
    for ext in ("png", "pdf"):
        (folder / f"{name}.{ext}").write_bytes(b"")


def test_a_deviation_shared_by_tables_and_profiles_is_stated_once_and_referred_to_by_number(tmp_path):
    root = tmp_path / "figures"
    long = "a deviation described at length " * 20  # 640 characters: folded, still stated once
    _sidecar(root / "fedlc" / "quick", "fig1", ["15 rounds (paper: 400)", long.strip()])
    _sidecar(root / "fedlc" / "quick", "fig2", [long.strip()])
    _sidecar(root / "fedlc" / "paper", "fig1", [long.strip(), "1 seed"])
    build_index(root)
    page = (root / "fedlc" / "README.md").read_text()
    flat = re.sub(r"\s+", " ", page)  # as rendered: a folded line is one paragraph
    assert flat.count("15 rounds (paper: 400)") == 1 and flat.count("a deviation described at length") == 20
    assert "1. a deviation described at length" in flat and "length (`paper`, `quick`)" in flat
    refs = re.findall(r"\*Deviations\* \(\[listed once\]\(#deviations\)\): ([^.]+)\.", page)
    assert sorted(refs) == ["1", "1, 2", "1, 3"]  # quick fig2; paper fig1; quick fig1 (two numbers listed, three a range)
    assert all(len(ln) <= MAX_LINE for ln in page.splitlines())
    assert _broken_links(root / "README.md") == [] and _broken_links(root / "fedlc" / "README.md") == []


def test_the_index_prints_no_store_path(tmp_path):
    root = tmp_path / "figures"
    for paper in ("fedlc", "fedabc"):
        _sidecar(root / paper / "quick", "fig1", [])
        (root / paper / "quick" / "_run.json").write_text(json.dumps({
            "git_commit": "c" * 40, "store": "/work/somewhere/store_quick", "total_wall_time_s": 60.0,
            "started": "t1", "finished": "t2", "notebooks": []}))
    text = build_index(root).read_text()
    assert "One regeneration, `quick`, 2 papers" in text and "fresh store" in text
    assert "somewhere" not in text and "store_quick" not in text
    assert all("somewhere" not in p.read_text() for p in root.glob("*/README.md"))


def test_fold_breaks_prose_and_keeps_tables_whole():
    item = "* " + "word " * 200
    folded = fold([item, "| " + "x | " * 150, "#" + "h" * 500])
    assert folded[0].startswith("* word") and all(ln.startswith("  word") for ln in folded[1:-2])
    assert " ".join(ln.strip() for ln in folded[:-2]) == item.strip()  # the same words, in order
    assert all(len(ln) <= MAX_LINE for ln in folded[:-2]) and len(folded[-2]) > MAX_LINE  # a table row stays whole


def test_a_wide_table_loses_its_columns_that_ran_nowhere_and_names_them():
    cols = [f"C{i}" for i in range(16)]
    head = "| method | " + " | ".join(cols) + " |"
    row = "| FedAvg | 1.00 → 2.00 (+1.00) | " + " | ".join(["60.00±1.00 → not run[^1]"] * 15) + " |"
    assert len(row) > MAX_LINE
    out = narrow_tables([head, "| " + "--- | " * 17, row, "", "[^1]: needs a GPU"], "quick/table1.md")
    assert out[:3] == ["| method | C0 |", "| --- | --- |", "| FedAvg | 1.00 → 2.00 (+1.00) |"]
    assert "15 columns not run here" in out[4] and "C1, C2" in out[4] and "(quick/table1.md)" in out[4]
    assert out[-1] == "[^1]: needs a GPU"
    # every column ran and it is still too wide: a link to the full table instead
    ran = "| FedAvg | " + " | ".join(["60.00±1.00 → 61.00±1.00 (+1.00) ✓"] * 16) + " |"
    assert narrow_tables([head, "| " + "--- | " * 17, ran], "t.md") == [
        "*A table too wide to print here* (1 rows, 17 columns): [t.md](t.md)."]


def test_no_committed_output_names_a_machine_path():
    """Every committed text output (tables, sidecars, run records of the regenerations, executed notebooks) names
    no path of the machine it was made on, not even an elided one that keeps its folder names."""
    found = []
    for path in FIGURES.rglob("*"):
        if path.is_file() and path.suffix in (".csv", ".md", ".json", ".ipynb"):
            hit = MACHINE_PATH.search(path.read_text(errors="replace"))
            if hit:
                found.append(f"{path.relative_to(FIGURES)}: {hit.group(0)!r}")
    assert not found, found[:10]
