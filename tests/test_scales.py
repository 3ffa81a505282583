"""The index at two scales: one row per paper and profile, what the paper profile settled, the
headline at both scales, the budget ladder's finding (a tiny fake figures tree)."""

import json

from fedlib.repro.artefacts.index import build_index
from fedlib.repro.spec.paper import all_papers
from fedlib.repro.verdict.compare import ONE_SEED


def _page(root, paper="fedabc"):
    """The paper's own page, up to its first profile's section: what the two scales settled."""
    text = (root / paper / "README.md").read_text()
    return text[:text.index(f'<a id="{paper}-')]


def _write(folder, name, body):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.json").write_text(json.dumps(body))


def _table(folder, profile, summary):
    _write(folder, "table1", {"kind": "table", "name": "table1", "title": "Table 1: PFL accuracy", "profile": profile,
                              "paper_table": "table1", "notebook": "fedabc/03_pfl_accuracy", "deviations": [],
                              "files": {"md": "table1.md"}, "summary": summary, "git_commit": "abc"})
    (folder / "table1.md").write_text("| method | x |\n| --- | --- |\n| FedAvg | 1 → 2 |\n")


def test_the_index_sets_quick_and_paper_side_by_side(tmp_path):
    root = tmp_path / "figures"
    quick, paper = root / "fedabc" / "quick", root / "fedabc" / "paper"
    _table(quick, "quick", {"counts": {"within": 0, "outside": 0, "undecided": 0, "no_std": 36, "stand_in": 35},
                            "run": 72, "ours_gain_mean": 0.26, "paper_gain_mean": 0.78})
    _table(paper, "paper", {"counts": {"within": 2, "outside": 1, "undecided": 1, "no_std": 1, "not_run": 36},
                            "run": 36,
                            "within": ["FedAvg @ MNIST Dir(0.1)", "FedAvg @ MNIST Dir(0.3)"],
                            "outside": ["FedABC @ MNIST Dir(1.0)"], "undecided": ["FedRoD @ MNIST Dir(0.5)"],
                            "no_std_close": ["Local @ MNIST Dir(0.1)"], "no_std_far": [],
                            "spread_sources": {"std over 3 seeds": 35, ONE_SEED: 1},
                            "ours_gain_mean": 0.21, "paper_gain_mean": 0.35})
    finding = ("Budget ladder, FedABC − FedAvg at MNIST Dir(0.3) (table1): +0.10 pp at rung 0, +0.30 pp at rung 3 "
               "(paper +0.40; 4 of 4 rungs ran): the gap moves toward the paper's value as the budget grows")
    _write(quick, "budget_ladder", {"kind": "table", "name": "budget_ladder", "title": "Budget ladder",
                                    "profile": "quick", "notebook": "fedabc/07_budget_ladder", "deviations": [],
                                    "files": {"md": "budget_ladder.md"}, "findings": [finding], "git_commit": "abc"})
    (quick / "budget_ladder.md").write_text("| rung |\n| --- |\n| 0 |\n")
    (paper / "_run.json").write_text(json.dumps({"paper": "fedabc", "profile": "paper", "only": ["03", "04"],
                                                 "notebooks": [], "total_wall_time_s": 60.0}))
    text = build_index(root).read_text()

    side = text[text.index("## Each paper at two scales"):]
    rows = [ln for ln in side.splitlines() if ln.startswith("| ") and "`" in ln]
    assert len(rows) == 2 * len(all_papers())  # one per paper and profile (quick, paper)
    assert "| FedABC (AAAI 2023) | `quick` | regenerated | 72 | 0 | 0 | 0 | Table 1 +0.26 / +0.78 | +0.10 pp" in side
    assert ("| FedABC (AAAI 2023) | `paper` | regenerated: notebooks 03, 04 only | 36 | 2 | 1 | 1 | "
            "Table 1 +0.21 / +0.35 | — |") in side
    # partial regenerations at two commits, side by side: each notebook named with its commit
    (paper / "_run.json").write_text(json.dumps({
        "paper": "fedabc", "profile": "paper", "only": ["07"], "git_commit": "bbbbbbb1234",
        "notebooks": [{"name": "07_budget_ladder", "status": "ok", "wall_time_s": 5.0}], "total_wall_time_s": 5.0,
        "previous": [{"name": "04_client_drift", "status": "ok", "wall_time_s": 1.0, "git_commit": "aaaaaaa9876"},
                     {"name": "03_pfl_accuracy", "status": "ok", "wall_time_s": 1.0, "git_commit": "aaaaaaa9876"}]}))
    again = build_index(root).read_text()
    assert "| `paper` | regenerated in parts: notebooks 03, 04 at aaaaaaa, 07 at bbbbbbb | 36 |" in again
    page = (root / "fedabc" / "README.md").read_text()
    assert "  * `03_pfl_accuracy`: ok, 1 s (earlier regeneration at aaaaaaa)" in page
    # an earlier record from before commits were kept says so, whole
    record = json.loads((paper / "_run.json").read_text())
    record["previous"][0].pop("git_commit")
    (paper / "_run.json").write_text(json.dumps(record))
    assert "notebooks 03 at aaaaaaa, 04 at an unrecorded commit, 07 at bbbbbbb |" in build_index(root).read_text()
    assert "  * `03_pfl_accuracy`: ok, 1 s" in (root / "fedabc" / "README.md").read_text()
    # a paper profile not regenerated says what this CPU would run, from its measured unit costs
    fedlc_paper = next(r for r in rows if r.startswith("| FedLC (ICML 2022) | `paper` |"))
    assert "not regenerated: on this 2-core CPU" in fedlc_paper and "need a GPU" in fedlc_paper

    section = _page(root)
    assert "settled 2 cells within the paper's std, 1 outside it and left 1 undecided" in section
    # cells by count, with the CSV that names them (a link from the paper's page), never a list of names
    assert "* within std (2): Table 1 2 ([table1.csv](paper/table1.csv))" in section
    assert "* outside std (1): Table 1 1 ([table1.csv](paper/table1.csv))" in section
    assert "FedAvg @ MNIST Dir(0.1)" not in section
    assert "| Table 1 | +0.26 / +0.78 | +0.21 / +0.35 |" in section  # the headline at both scales
    # where the paper gives no std: within our own spread of its printed value, or farther
    assert "1 of the 1 with a measured spread of ours lie within it" in section
    assert "* no std in the paper, within our spread (1): Table 1 1 ([table1.csv](paper/table1.csv))" in section
    page = (root / "fedabc" / "README.md").read_text()
    assert "| 1 (1 within our spread, 0 farther) |" in page
    # one cell without a spread (its other seeds diverged, say) is named as one cell, not the whole table
    assert "One seed, so no spread of the cell's own, in Table 1 (1 of 36 cells run)" in page
    assert f"* `quick`: {finding}" in section


def test_a_paper_without_a_paper_profile_output_says_nothing_is_settled(tmp_path):
    root = tmp_path / "figures"
    _table(root / "fedabc" / "quick", "quick", {"counts": {}, "run": 1, "ours_gain_mean": 0.1,
                                                "paper_gain_mean": 0.2})
    build_index(root)
    section = _page(root)
    assert "The `paper` profile has not been regenerated here: no cell is settled at the paper's scale." in section
    assert "| Table 1 | " not in section  # only one scale: no side-by-side row
    # a paper profile whose outputs hold only its ladder settles no cell either, and says why
    paper = root / "fedabc" / "paper"
    _write(paper, "budget_ladder", {"kind": "table", "name": "budget_ladder", "title": "Budget ladder",
                                    "profile": "paper", "notebook": "fedabc/07_budget_ladder", "deviations": [],
                                    "files": {"md": "budget_ladder.md"}, "git_commit": "abc",
                                    "findings": ["Budget ladder, FedABC − FedAvg: the gap moves not at all"]})
    (paper / "budget_ladder.md").write_text("| rung |\n| --- |\n| 0 |\n")
    build_index(root)
    section = _page(root)
    assert "The `paper` profile has regenerated none of the paper's tables here: no cell is settled" in section
    assert "has settled 0 cells" not in section


def _csv(folder, cells):
    """A saved Table 1 CSV (as reproduce_table writes it) with our mean per (row, column, dataset used)."""
    import pandas as pd

    pd.DataFrame([{"row": r, "column": c, "ours_mean": v, "ours_std": 0.1, "n_seeds": 3, "dataset_used": used}
                  for r, c, used, v in cells]).to_csv(folder / "table1.csv", index=False)


def test_the_headline_gain_is_compared_column_by_column_over_the_columns_both_scales_ran(tmp_path):
    # quick ran MNIST Dir(0.3) and a CIFAR-10 column on its FashionMNIST stand-in; the paper profile
    # ran MNIST Dir(0.3) and Dir(0.1): only Dir(0.3) is comparable, and the other two are named
    root = tmp_path / "figures"
    quick, paper = root / "fedabc" / "quick", root / "fedabc" / "paper"
    for folder, profile in ((quick, "quick"), (paper, "paper")):
        _table(folder, profile, {"counts": {}, "run": 4})
        (folder / "table1.json").write_text((folder / "table1.json").read_text().replace(
            '"md": "table1.md"', '"md": "table1.md", "csv": "table1.csv"'))
    _csv(quick, [("fedavg", "mnist_dir0.3", "mnist", 97.0), ("fedabc", "mnist_dir0.3", "mnist", 97.25),
                 ("fedavg", "cifar10_dir0.3", "fmnist", 90.0), ("fedabc", "cifar10_dir0.3", "fmnist", 93.0)])
    _csv(paper, [("fedavg", "mnist_dir0.3", "mnist", 98.3), ("fedabc", "mnist_dir0.3", "mnist", 98.45),
                 ("fedavg", "mnist_dir0.1", "mnist", 99.0), ("fedabc", "mnist_dir0.1", "mnist", 99.5)])
    build_index(root)
    section = _page(root)
    paper_gain = all_papers()["fedabc"].tables["table1"].frame().set_index(["row", "column"]).paper_mean
    expected = paper_gain["fedabc", "mnist_dir0.3"] - paper_gain["fedavg", "mnist_dir0.3"]
    assert f"| Table 1 | MNIST Dir(0.3) | +0.25 | +0.15 | {expected:+.2f} |" in section
    assert f"| Table 1 | **mean of these 1** | +0.25 | +0.15 | {expected:+.2f} |" in section
    # the means over each profile's own columns differ from the like-for-like ones: +1.62 (quick) vs +0.33
    assert "| Table 1 | +1.62 / " in section and "| +0.33 / " in section
    assert "* Table 1: 1 column(s) run only at `quick` (CIFAR-10 Dir(0.3))" in section
    assert "* Table 1: 1 column(s) run only at `paper` (MNIST Dir(0.1))" in section
    assert "CIFAR-10 Dir(0.3) | +3.00" not in section  # a column not run at both scales has no row
