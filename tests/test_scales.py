"""The index at two scales: one row per paper and profile, what the paper profile settled, the
headline at both scales, the budget ladder's finding (a tiny fake figures tree)."""

import json

from fedlib.repro.index import build_index
from fedlib.repro.paper import all_papers


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
    _table(paper, "paper", {"counts": {"within": 2, "outside": 1, "undecided": 1, "not_run": 36}, "run": 36,
                            "within": ["FedAvg @ MNIST Dir(0.1)", "FedAvg @ MNIST Dir(0.3)"],
                            "outside": ["FedABC @ MNIST Dir(1.0)"], "undecided": ["FedRoD @ MNIST Dir(0.5)"],
                            "ours_gain_mean": 0.21, "paper_gain_mean": 0.35})
    finding = ("Budget ladder, FedABC − FedAvg at MNIST Dir(0.3) (table1): +0.10 pp at rung 0, +0.30 pp at rung 3 "
               "(paper +0.40; 4 of 4 rungs ran): the gap moves toward the paper's value as the budget grows")
    _write(quick, "budget_ladder", {"kind": "table", "name": "budget_ladder", "title": "Budget ladder",
                                    "profile": "quick", "notebook": "fedabc/07_budget_ladder", "deviations": [],
                                    "files": {"md": "budget_ladder.md"}, "findings": [finding], "git_commit": "abc"})
    (quick / "budget_ladder.md").write_text("| rung |\n| --- |\n| 0 |\n")
    text = build_index(root).read_text()

    top = text[:text.index("## FedABC")]
    side = top[top.index("## Each paper at two scales"):]
    rows = [ln for ln in side.splitlines() if ln.startswith("| ") and "`" in ln]
    assert len(rows) == 2 * len(all_papers())  # one per paper and profile (quick, paper)
    assert "| FedABC (AAAI 2023) | `quick` | regenerated | 72 | 0 | 0 | 0 | Table 1 +0.26 / +0.78 | +0.10 pp" in side
    assert "| FedABC (AAAI 2023) | `paper` | regenerated | 36 | 2 | 1 | 1 | Table 1 +0.21 / +0.35 | — |" in side
    # a paper profile not regenerated says what this CPU would run, from its measured unit costs
    fedlc_paper = next(r for r in rows if r.startswith("| FedLC (ICML 2022) | `paper` |"))
    assert "not regenerated: on this 2-core CPU" in fedlc_paper and "need a GPU" in fedlc_paper

    section = text[text.index("## FedABC"):]
    section = section[:section.index('<a id="fedabc-')]
    assert "settled 2 cells within the paper's std, 1 outside it and left 1 undecided" in section
    assert "* within std (2): Table 1: FedAvg @ MNIST Dir(0.1); Table 1: FedAvg @ MNIST Dir(0.3)" in section
    assert "* outside std (1): Table 1: FedABC @ MNIST Dir(1.0)" in section
    assert "| Table 1 | +0.26 / +0.78 | +0.21 / +0.35 |" in section  # the headline at both scales
    assert f"* `quick`: {finding}" in section


def test_a_paper_without_a_paper_profile_output_says_nothing_is_settled(tmp_path):
    root = tmp_path / "figures"
    _table(root / "fedabc" / "quick", "quick", {"counts": {}, "run": 1, "ours_gain_mean": 0.1,
                                                "paper_gain_mean": 0.2})
    text = build_index(root).read_text()
    section = text[text.index("## FedABC"):]
    assert "The `paper` profile has not been regenerated here: no cell is settled at the paper's scale." in section
    assert "| Table 1 | " not in section[:section.index('<a id="fedabc-')]  # only one scale: no side-by-side row
