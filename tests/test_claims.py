"""The claims ledgers (issue 34): claims as data, the verdict rules on closed cases (each branch), and the
committed ledgers and README block equal to what the committed outputs give."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pandas as pd
import pytest

from fedlib.repro import claims as ledger
from fedlib.repro.artefacts.claims import claims_of, evaluate
from fedlib.repro.spec.claims import Best, Claim, Contrast, Gap, Part, Ranking
from fedlib.repro.spec.paper import get_paper
from fedlib.repro.verdict import claims as rules

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "figures"
# the paper texts, in the shared folder beside the checkout (CI: a fresh clone with ../shared beside it)
PAPERS_TEXT = next((p for p in (ROOT.parent / "shared" / "papers", Path("/work/shared/papers")) if p.is_dir()),
                   ROOT.parent / "shared" / "papers")


# ----------------------------------------------------------------------------- the rules, closed cases
def test_difference_se_is_the_std_of_a_difference_of_two_means():
    assert rules.difference_se(3.0, 1, 4.0, 1) == pytest.approx(5.0)
    assert rules.difference_se(2.0, 4, 2.0, 4) == pytest.approx(math.sqrt(2.0))
    assert rules.difference_se(float("nan"), 2, 1.0, 2) is None
    assert rules.mean_se([3.0, 4.0]) == pytest.approx(2.5)
    with pytest.raises(ValueError, match="n_a"):
        rules.difference_se(1.0, 0, 1.0, 1)


# The table of cases of docs/reproducibility.md ("The decision rule"), one row each: (ours, z, paper, margin,
# the verdict of a direction claim, that of a size claim).
CASES = [
    ("not measured (one seed)", 5.0, None, 10.0, 0.0, "inconclusive", "inconclusive"),
    ("excludes 0 on the paper's side, reaches its band", 9.0, 2.0, 10.0, 0.0, "reproduced", "reproduced"),
    ("... reaches it through the margin", 7.0, 2.0, 10.0, 1.5, "reproduced", "reproduced"),
    ("excludes 0 on the paper's side, short of its band", 2.50, 1.87, 9.07, 1.5, "reproduced", "partly"),
    ("... beyond its band", 49.5, 2.0, 11.0, 1.0, "reproduced", "partly"),
    ("excludes 0 on the other side", -3.0, 2.0, 10.0, 0.0, "not reproduced", "not reproduced"),
    ("holds 0, short of the band (FedABC's headline)", 0.127, 0.165, 0.40, 0.0, "not reproduced", "not reproduced"),
    ("holds 0, the other sign, short of the band", -1.0, 2.0, 10.0, 0.0, "not reproduced", "not reproduced"),
    ("holds 0 and reaches the band", 3.67, 7.95, 10.16, 2.36, "inconclusive", "inconclusive"),
    ("holds 0 and the band, the other sign", -0.15, 1.2, 0.83, 0.0, "inconclusive", "inconclusive"),
]


@pytest.mark.parametrize("case, ours, z, paper, margin, direction, size", CASES, ids=[c[0] for c in CASES])
def test_gap_rule_every_case_of_the_table(case, ours, z, paper, margin, direction, size):
    assert rules.gap_rule(ours, z, paper, margin, quoted="direction", n_seeds=1).word == direction
    assert rules.gap_rule(ours, z, paper, margin, quoted="size", n_seeds=1).word == size
    assert rules.gap_rule(-ours, z, -paper, margin, quoted="size").word == size  # the rule has no preferred sign


def test_the_table_of_cases_in_the_docs_is_the_one_tested():
    """Every verdict of the docs' table appears in it, and the docs name each case this test runs."""
    doc = (ROOT / "docs" / "reproducibility.md").read_text()
    section = doc.split("## The decision rule", 1)[1].split("\n## ", 1)[0]
    for word in rules.VERDICTS:
        assert word in section, word
    for phrase in ("excludes 0, on the paper's side", "excludes 0, on the other side", "holds 0 and reaches",
                   "holds 0, does not reach", "one seed"):
        assert phrase in section, phrase


@pytest.mark.parametrize("ours, sd, paper, margin", [
    (0.79, 0.28, 12.81, 2.10), (3.67, 0.88, 10.16, 2.36), (0.127, 0.067, 0.40, 0.0), (2.5, 1.51, 9.07, 1.5),
    (-0.15, 0.6, 0.83, 0.0), (5.0, 4.0, 6.0, 0.5), (0.3, 2.0, 12.0, 0.0)])
def test_more_seeds_with_the_same_mean_and_spread_never_undecide_a_verdict(ours, sd, paper, margin):
    """t(0.975, n − 1)/√n falls with n: the interval only narrows, so once decided a gap stays decided; and
    seeds_to_decide is the first n at which it is."""
    from scipy.stats import t

    decided_at = None
    for n in range(2, 40):
        z = float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n)
        words = {q: rules.gap_rule(ours, z, paper, margin, quoted=q).word for q in ("direction", "size")}
        if decided_at is not None:
            assert all(w != "inconclusive" for w in words.values()), (n, words)
        elif words["direction"] != "inconclusive":
            decided_at = n
    assert rules.seeds_to_decide(ours, sd, paper, margin, max_seeds=39) == decided_at
    assert rules.gap_rule(ours, None, paper, margin, n_seeds=1).word == "inconclusive"  # one seed: never decided


def test_seeds_to_decide_closed_form():
    """A paired gap of +1.0 with per-seed std 1.0 against a paper +10: at n seeds the interval is
    ±t(0.975, n − 1)/√n, which first falls below 1.0 at n = 7 (t(0.975, 6)/√7 = 0.925; n = 6: 1.049)."""
    assert rules.seeds_to_decide(1.0, 1.0, 1.2, 0.0) == 7
    assert rules.seeds_to_decide(0.0, 1.0, 0.01, 0.0) is None  # no effect at all, the paper's as small: never
    with pytest.raises(ValueError, match="sd"):
        rules.seeds_to_decide(1.0, -1.0, 2.0)


@pytest.mark.parametrize("states, paper_best, word", [
    (["best"] * 4, 4, "reproduced"),
    (["best", "best", "best", "beaten"], 3, "reproduced"),
    (["best", "beaten", "beaten", "undecided"], 4, "partly"),        # best somewhere, the paper's 4 ruled out
    (["beaten", "beaten", "undecided", "undecided"], 3, "not reproduced"),
    (["undecided"] * 4, 4, "inconclusive"),                          # the noise cannot rank them (FedLC quick)
    (["best", "undecided", "undecided", "beaten"], 3, "inconclusive"),
])
def test_best_rule_every_case(states, paper_best, word):
    assert rules.best_rule(states, paper_best).word == word


def test_best_column_is_undecided_where_the_noise_cannot_rank():
    assert rules.best_column([(3.0, 1.0), (2.0, 1.5)]) == "best"
    assert rules.best_column([(3.0, 1.0), (-2.0, 1.5)]) == "beaten"
    assert rules.best_column([(3.0, 1.0), (1.0, 1.5)]) == "undecided"
    assert rules.best_column([(3.0, None)]) == "undecided"  # one seed: no interval
    # FedLC quick Table 1, 2 seeds: behind FedOpt by 3.1 pp with every seed agreeing; t(1) = 12.7 cannot rank
    assert rules.best_column([(-3.1, rules.noise(0.5 / math.sqrt(2), 1))]) == "undecided"


def test_ranking_rule_against_scipy():
    from scipy.stats import kendalltau

    paper = [1, 2, 3, 4, 5, 6, 7, 8]
    tau, v = rules.ranking_rule(paper, paper, n_seeds=3)
    assert tau == pytest.approx(1.0) and v.word == "reproduced"
    rev = [2, 1, 3, 5, 4, 6, 8, 7][::-1]
    tau, v = rules.ranking_rule(rev, paper, n_seeds=3)
    assert tau == pytest.approx(kendalltau(rev, paper)[0]) and v.word == "not reproduced"
    assert rules.ranking_rule([1, 3, 2, 5, 4], [1, 2, 3, 4, 5], n_seeds=3)[1].word == "inconclusive"  # p ≈ 0.23
    assert rules.ranking_rule(paper, paper, n_seeds=1)[1].word == "inconclusive"  # no spread of its own


def test_verdict_and_claim_refuse_bad_input():
    with pytest.raises(ValueError, match="verdict"):
        rules.Verdict("maybe", "")
    with pytest.raises(ValueError, match="why"):
        rules.not_tested(" ")
    with pytest.raises(ValueError, match="inconclusive.*why"):
        rules.inconclusive("")
    with pytest.raises(ValueError, match="margin"):
        rules.gap_rule(1.0, 0.5, 2.0, -1.0)
    with pytest.raises(ValueError, match="quoted"):
        rules.gap_rule(1.0, 0.5, 2.0, quoted="vibes")
    with pytest.raises(ValueError, match="rule"):
        Claim("x", "q", "Table 1", Gap("table1", "c", "a", "b"), "best")
    with pytest.raises(ValueError, match="distinct names"):
        Claim("x", "q", "Table 1", parts=(Part(Gap("t", "c", "a", "b"), "sign"), Part(Gap("t", "d", "a", "b"), "sign")))
    with pytest.raises(ValueError, match="not both"):
        Claim("x", "q", "Table 1", Gap("t", "c", "a", "b"), "sign", parts=(Part(Gap("t", "c", "a", "b"), "sign"),))
    with pytest.raises(ValueError, match="margin"):
        Part(Gap("t", "c", "a", "b"), "size", margin=-1)
    with pytest.raises(ValueError, match="rule must be"):
        Claim("x", "q", "Table 1", Gap("table1", "c", "a", "b"), "vibes")
    with pytest.raises(ValueError, match="3 distinct rows"):
        Ranking("table1", "c", ("a", "b"))
    with pytest.raises(ValueError, match="rivals"):
        Best("table1", "c", "a", rivals=("a",))


# ----------------------------------------------------------------------------- the declared claims
def _paper_text(pp) -> str | None:
    path = PAPERS_TEXT / pp.source
    return re.sub(r"\s+", " ", path.read_text()) if path.exists() else None


@pytest.mark.parametrize("paper", ledger.papers())
def test_each_declared_claim_is_the_papers_own(paper):
    """The declaration itself: one headline; distinct ids and one claim per sentence (a sentence of several
    quantities is one claim with parts); every quote found word for word in the paper; every part on its
    table's declared rows and columns, with a rule for its quantity; a value the sentence gives equal to the
    paper table's where the table has it; every central claim left out says why."""
    from fedlib.repro.artefacts.claims import left_out, paper_value
    from fedlib.repro.spec.claims import RULES

    claims, pp = claims_of(paper), get_paper(paper)
    assert sum(c.headline for c in claims) == 1 and claims[[c.headline for c in claims].index(True)].id == "headline"
    assert len({c.id for c in claims}) == len(claims)
    quotes = [re.sub(r"\s+", " ", c.quote) for c in claims]
    assert len(set(quotes)) == len(quotes), f"{paper}: a sentence declared twice (make it one claim with parts)"
    text = _paper_text(pp)
    for c in claims:
        if text is not None:
            assert re.sub(r"\s+", " ", c.quote) in text, f"{paper} {c.id}: the quote is not the paper's text"
        for part in c.parts:
            if isinstance(part.quantity, Contrast):  # a figure's finding: its value given, its summary declared
                assert (part.paper_value is not None or part.direction) and part.quantity.dataset, (c.id, part.name)
                continue
            q, table = part.quantity, pp.table(part.quantity.table)
            assert isinstance(q, RULES[part.rule]), (c.id, part.name)
            assert set(q.columns) <= {col.key for col in table.columns}, (c.id, part.name)
            rows = {r.key for r in table.rows}
            named = [getattr(q, "method", None), getattr(q, "baseline", None), *getattr(q, "rivals", ()),
                     *getattr(q, "rows", ())]
            assert {r for r in named if r} <= rows | {"held/fedavg", "effective/scaffold"}, (c.id, part.name)
            if part.paper_value is not None and text is not None:
                assert f"{abs(part.paper_value):g}" in text, f"{paper} {c.id}: {part.paper_value} is not in the paper"
            if part.paper_value is not None and isinstance(q, Gap) and part.rule != "size":
                tabled = paper_value(pp, Part(q, part.rule))
                assert tabled is None or abs(tabled - part.paper_value) < 0.06, (c.id, part.name, tabled)
    for gone in left_out(paper):
        assert gone.why.strip() and gone.where.strip()


# ----------------------------------------------------------------------------- the committed ledgers
@pytest.mark.parametrize("paper", ledger.papers())
def test_committed_ledger_is_what_the_outputs_give_and_its_links_resolve(paper):
    committed = pd.read_csv(FIGURES / paper / "claims.csv")
    assert set(committed.verdict) <= set(rules.VERDICTS)
    fresh = evaluate(paper, FIGURES)
    assert list(fresh.verdict) == list(committed.verdict) and list(fresh.scale) == list(committed.scale)
    for ev in committed.evidence.dropna():
        for rel in ev.split(";"):
            assert (FIGURES / paper / rel).exists(), f"{paper}: evidence {rel} does not resolve"
    md = (FIGURES / paper / "claims.md").read_text()
    for rel in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", md):  # a link's anchor is not part of its file
        assert (FIGURES / paper / rel).exists(), f"{paper}/claims.md: link {rel} does not resolve"
    assert (FIGURES / paper / "headline.png").exists() and (FIGURES / paper / "headline.json").exists()
    caption = json.loads((FIGURES / paper / "headline.json").read_text())["caption"]
    sentences = [s for s in caption.split(". ") if s]
    assert len(sentences) == len(set(sentences)) and "()" not in caption, f"{paper}: headline caption {caption!r}"


def test_not_tested_says_why():
    for paper in ledger.papers():
        frame = pd.read_csv(FIGURES / paper / "claims.csv")
        why = frame[frame.verdict == "not tested"].why
        assert why.str.contains("not run|no trend|absent|GPU").all(), paper


def test_readme_block_equals_the_generated_one():
    frames = {p: pd.read_csv(FIGURES / p / "claims.csv") for p in ledger.papers()}
    block = ledger.readme_block(frames)
    readme = (ROOT / "README.md").read_text()
    assert ledger.BEGIN in readme and ledger.END in readme
    inside = readme.split(ledger.BEGIN, 1)[1].split(ledger.END, 1)[0]
    assert ledger.BEGIN + inside + ledger.END + "\n" == block, "README's claims block is stale: python -m fedlib.repro.claims"
    for rel in re.findall(r"\]\((figures/[^)]+)\)", block):
        assert (ROOT / rel).exists(), rel


def test_the_best_scale_is_the_paper_data_then_an_interval_then_the_largest_budget():
    """FedConcat's headline (2026-11-29): 4 seeds at 0.16 % of the budget read "reproduced" and 3 seeds at 16 %
    "inconclusive"; the scale nearer the paper's training speaks for the claim.  A one-seed row, though larger,
    has no interval of its own, and a stand-in never outranks the paper's data."""
    def row(scale, n, share, verdict, own=True, part="p"):
        return {"claim": "c", "part": part, "scale": scale, "n_seeds": n, "budget_share": share,
                "verdict": verdict, "on_paper_data": own}
    frame = pd.DataFrame([row("quick", 4, 0.0016, "reproduced"), row("ladder paper", 3, 0.16, "inconclusive"),
                          row("paper", 1, 1.0, "inconclusive"), row("gpu", 5, 1.0, "reproduced", own=False),
                          row("quick", 1, 0.01, "partly", part="q"), row("paper", 1, 0.5, "inconclusive", part="q"),
                          row("paper", None, None, "not tested", part="r")])
    best = ledger.best_rows(frame).set_index("part")
    assert best.loc["p", "scale"] == "ladder paper" and best.loc["p", "verdict"] == "inconclusive"
    assert best.loc["q", "scale"] == "paper"  # no row with an interval: the largest budget
    assert best.loc["r", "verdict"] == "not tested" and len(best) == 3


def test_a_figures_root_without_any_scale_of_ours_gets_no_headline_figure(tmp_path):
    from fedlib.repro.artefacts.headline import headline_figure

    (tmp_path / "fedic" / "smoke").mkdir(parents=True)  # what a smoke regeneration leaves: no quick, paper or GPU
    assert headline_figure("fedic", tmp_path) is None
    assert not list((tmp_path / "fedic").glob("headline.*"))


def test_gpu_runs_are_compared_at_the_round_both_reached_and_one_seed_borrows_no_spread(tmp_path):
    """A finished FedAvg run and an interrupted FedLC run: the gap is taken at their paired round, never at their
    different last rounds; with one seed there is no interval (the paper's std never stands in): inconclusive."""
    from fedlib.repro.artefacts.claim_evidence import _gpu_frame, gap_cells

    pp = get_paper("fedlc")
    t = pp.table("table1")
    path = tmp_path / "table1_gpu_runs.csv"
    pd.DataFrame([
        {"row": "fedavg", "column": "cifar10_beta0.5", "seed": 0, "round": 400, "rounds": 400, "accuracy": 65.85,
         "paired_round": 220, "paired_accuracy": 58.91},
        {"row": "fedlc", "column": "cifar10_beta0.5", "seed": 0, "round": 225, "rounds": 400, "accuracy": 59.38,
         "paired_round": 220, "paired_accuracy": 59.38},
    ]).to_csv(path, index=False)
    frame = _gpu_frame(path, pp, "table1")
    q = Gap(table="table1", method="fedlc", baseline="fedavg", columns=("cifar10_beta0.5",))
    (cell,) = gap_cells(frame, q)
    assert cell["ours"] == pytest.approx(59.38 - 58.91)  # not 59.38 − 65.85
    assert cell["share"] == pytest.approx(220 / 400) and cell["n"] == 1
    assert cell["se"] is None and rules.noise(cell["se"], cell["df"]) is None
    assert rules.gap_rule(cell["ours"], None, cell["paper"], n_seeds=1).word == "inconclusive"


def test_a_gap_between_gpu_cells_over_different_seeds_is_not_taken_from_their_means():
    """The paper profile's Table 1 reads GPU runs per cell: FedAvg over seeds 0 and 1, FedLC over seed 0.
    FedLC's mean minus FedAvg's (+2.11) would set seed 0 against seeds 0-1; the gap is left to the GPU
    records, which pair seed by seed.  Cells over the same seeds, or trained here, give their gap."""
    from fedlib.repro.artefacts.claims import gap_cells

    q = Gap(table="table1", method="fedlc", baseline="fedavg", columns=("c",))

    def frame(n_fedlc, note):
        return pd.DataFrame({"row": ["fedavg", "fedlc"], "column": ["c", "c"], "ours_mean": [64.335, 66.44],
                             "ours_std": [2.14, float("nan")], "n_seeds": [2, n_fedlc], "paper_mean": [60.18, 72.99],
                             "dataset": "cifar10", "dataset_used": "cifar10", "spread": [2.14, 1.12],
                             "note": [note, note]})

    gpu = "3 of 5 seeds without a result (seed 2: not run: needs a GPU): the mean is over the others"
    cell = gap_cells(frame(1, gpu), q)[0]
    assert not cell["ran"] and "different seeds (1 and 2)" in cell["note"]
    assert cell["paper"] == pytest.approx(12.81)
    same = gap_cells(frame(2, gpu), q)[0]
    assert same["ran"] and same["ours"] == pytest.approx(2.105)
    here = gap_cells(frame(1, ""), q)[0]  # trained here, a seed missing: the table's means, as before
    assert here["ran"] and here["n"] == 1


# ----------------------------------------------------------------------------- the noise of a gap, paired or not
def test_paired_se_welch_df_and_noise_against_scipy():
    """The paired se is the one behind scipy's paired t statistic (mean difference / se); Welch's degrees of
    freedom are scipy's; the noise is the 95 % interval's half-width t(0.975, df)·se, 2·se where df is unknown."""
    import numpy as np
    from scipy import stats

    a, b = [66.44, 63.81, 61.20, 64.05], [65.85, 62.82, 60.91, 62.40]
    sd, se = rules.paired_se(a, b)
    d = np.subtract(a, b, dtype=np.float64)
    assert sd == pytest.approx(d.std(ddof=1), rel=1e-12)
    assert se == pytest.approx(d.mean() / stats.ttest_rel(a, b).statistic, rel=1e-12)
    welch = stats.ttest_ind(a, b[:3], equal_var=False)
    df = rules.welch_df(float(np.std(a, ddof=1)), 4, float(np.std(b[:3], ddof=1)), 3)
    assert df == pytest.approx(welch.df, rel=1e-12)
    assert rules.welch_df(1.0, 1, 1.0, 3) is None and rules.welch_df(0.0, 2, 0.0, 3) == 3.0
    assert rules.noise(0.2, 1) == pytest.approx(12.7062 * 0.2, rel=1e-5)  # t(0.975, 1) = 12.706
    assert rules.noise(0.2, None) is None and rules.noise(None, 3) is None  # no df, no interval
    with pytest.raises(ValueError, match="df"):
        rules.noise(0.2, 0)
    with pytest.raises(ValueError, match="paired"):
        rules.paired_se([1.0], [2.0])


def _two_rows(seeds_a: dict, seeds_b: dict) -> pd.DataFrame:
    import statistics

    rows = []
    for row, vals in (("fedlc", seeds_a), ("fedavg", seeds_b)):
        v = list(vals.values())
        rows.append({"row": row, "column": "c", "ours_mean": statistics.fmean(v), "ours_std": statistics.stdev(v),
                     "n_seeds": len(v), "ours_seeds": json.dumps({str(k): x for k, x in vals.items()}),
                     "paper_mean": 72.99 if row == "fedlc" else 60.18, "dataset": "cifar10",
                     "dataset_used": "cifar10", "spread": float("nan"), "note": ""})
    return pd.DataFrame(rows)


def test_a_gap_over_the_same_seeds_is_taken_seed_by_seed():
    """FedLC's GPU runs (seeds 0 and 1): the two methods differ by +0.59 and +0.99 pp at one seed each, while
    the seeds themselves differ by 3 pp.  The gap's std is that of the per-seed differences (0.28), not
    √(s_a² + s_b²) (2.84); with one degree of freedom its noise is 12.7·se, so the gain is not beyond it and the
    paper's +12.81 lies outside: not reproduced, as before, for the right reason.  Seeds that differ between
    the rows are not paired: the unpaired se with Welch's degrees of freedom."""
    from fedlib.repro.artefacts.claims import gap_cells

    q = Gap(table="table1", method="fedlc", baseline="fedavg", columns=("c",))
    (cell,) = gap_cells(_two_rows({0: 66.44, 1: 63.81}, {0: 65.85, 1: 62.82}), q)
    assert cell["paired"] and cell["df"] == 1 and cell["n"] == 2
    assert cell["ours"] == pytest.approx(0.79)
    assert cell["std"] == pytest.approx(math.sqrt(2) * 0.2, rel=1e-9)  # the differences 0.59, 0.99
    assert cell["se"] == pytest.approx(0.2, rel=1e-9)
    noise = rules.noise(cell["se"], cell["df"])
    assert rules.gap_rule(cell["ours"], noise, cell["paper"]).word == "not reproduced"

    # seeds 0 and 1 held by both, 2 and 3 by one each: paired over the two shared seeds, the gap their mean
    (shared,) = gap_cells(_two_rows({0: 66.44, 1: 63.81, 2: 64.0}, {0: 65.85, 1: 62.82, 3: 61.0}), q)
    assert shared["paired"] and shared["n"] == 2 and shared["df"] == 1
    assert shared["ours"] == pytest.approx(0.79) and shared["std"] == pytest.approx(math.sqrt(2) * 0.2, rel=1e-9)

    frame = _two_rows({0: 66.44, 1: 63.81, 2: 64.0}, {0: 65.85, 3: 62.82, 4: 61.0})  # one seed shared
    (apart,) = gap_cells(frame, q)
    assert not apart["paired"]
    sa, sb = float(frame.ours_std[0]), float(frame.ours_std[1])
    assert apart["se"] == pytest.approx(rules.difference_se(sa, 3, sb, 3))
    assert apart["df"] == pytest.approx(rules.welch_df(sa, 3, sb, 3))


def test_a_cell_keeps_each_seeds_value_and_reads_it_back():
    """``ours_seeds``: the finished seeds' values (a diverged seed is out, as it is out of the mean), JSON in
    seed order; their mean is the cell's mean; the window means of the paper's "last k rounds" statistic too."""
    from fedlib.repro.artefacts.tables import over_last_rounds, parse_seeds, seeds_text

    runs = pd.DataFrame({"row": ["a"] * 3, "column": ["c"] * 3, "seed": [2, 0, 1], "status": ["ok", "ok", "diverged"],
                         "value": [70.5, 68.25, 10.0]})
    text = seeds_text(runs, "value")[("a", "c")]
    assert text == '{"0": 68.25, "2": 70.5}' and parse_seeds(text) == {0: 68.25, 2: 70.5}
    assert parse_seeds(float("nan")) == {} and parse_seeds("") == {}
    hist = pd.DataFrame({"row": "a", "column": "c", "seed": [0] * 4 + [1] * 4, "round": [1, 2, 3, 4] * 2,
                         "test_accuracy": [10.0, 20.0, 30.0, 50.0, 11.0, 21.0, 31.0, 41.0]})
    cell = over_last_rounds(hist, 2).iloc[0]
    assert parse_seeds(cell.ours_seeds) == {0: 40.0, 1: 36.0}
    assert cell.ours_mean == pytest.approx(38.0)


def test_a_figure_finding_is_read_from_its_studys_summary_seed_by_seed(tmp_path):
    """A Contrast (one point of a study minus another) is decided by the same gap rule: paired over the seeds
    the summary keeps, its interval the one scipy's paired t-test gives; a filter that selects no row or two
    is an error, never a silent 'not run'."""
    from scipy import stats

    from fedlib.repro.artefacts.claims import _contrast_row

    a, b = {0: 30.0, 1: 33.0, 2: 31.5}, {0: 20.0, 1: 24.5, 2: 21.0}
    folder = tmp_path / "fedic" / "quick"
    folder.mkdir(parents=True)
    pd.DataFrame([{"curve": name, "alpha": 0.01, "ours_mean": sum(v.values()) / 3,
                   "ours_std": pd.Series(list(v.values())).std(), "n_seeds": 3, "dataset_used": "fmnist_lt",
                   "ours_seeds": json.dumps({str(k): x for k, x in v.items()})} for name, v in (("FEDIC", a), ("FedAvg", b))]
                 ).to_csv(folder / "fig5.csv", index=False)
    part = Part(Contrast("fig5", {"curve": "FEDIC", "alpha": 0.01}, {"curve": "FedAvg", "alpha": 0.01}, "cifar10_lt"),
                "sign", paper_value=5.0)
    claim = Claim("fig5-alpha", "q", "Fig. 5", parts=(part,))
    row = _contrast_row(get_paper("fedic"), claim, part, "quick", tmp_path / "fedic")
    d = [a[k] - b[k] for k in a]
    ci = stats.ttest_rel(list(a.values()), list(b.values())).confidence_interval(0.95)
    assert row["paired"] and row["n_seeds"] == 3 and row["ours"] == pytest.approx(sum(d) / 3)
    assert f"[{ci.low:+.2f}, {ci.high:+.2f}]" in row["why"] and row["verdict"] == "reproduced"
    assert row["on_paper_data"] is False  # FMNIST-LT stands in for CIFAR-10-LT
    bad = Part(Contrast("fig5", {"curve": "FEDIC"}, {"alpha": 0.01}, "cifar10_lt"), "sign", paper_value=5.0)
    with pytest.raises(ValueError, match="exactly one"):
        _contrast_row(get_paper("fedic"), Claim("x", "q", "Fig. 5", parts=(bad,)), bad, "quick", tmp_path / "fedic")
    with pytest.raises(ValueError, match="paper_value"):
        Part(Contrast("fig5", {"curve": "FEDIC"}, {"curve": "FedAvg"}, "cifar10_lt"), "sign")


@pytest.mark.parametrize("ours, z, direction, word", [
    (4.0, 1.0, 1, "reproduced"), (-4.0, 1.0, 1, "not reproduced"), (0.5, 1.0, 1, "inconclusive"),
    (-4.0, 1.0, -1, "reproduced"), (4.0, None, 1, "inconclusive")])
def test_a_direction_without_a_printed_value_is_decided_on_its_sign(ours, z, direction, word):
    """A figure's finding ("FEDIC drops the least") prints no value: the interval against 0 alone, and an
    interval that holds 0 stays inconclusive (no size was given that it could rule out)."""
    assert rules.gap_rule(ours, z, None, direction=direction, n_seeds=3).word == word
    with pytest.raises(ValueError, match="direction"):
        rules.gap_rule(ours, z, None, direction=0)
    with pytest.raises(ValueError, match="direction"):
        Part(Gap("t", "c", "a", "b"), "sign", direction=1)


def test_a_tables_figures_are_the_ones_their_sidecars_declare(tmp_path):
    """The claims ledger links the figures a notebook saved for a table (``experiment`` in their sidecars),
    and nothing found by a file name: a PNG without a sidecar, a table's own sidecar, another experiment's
    figure and a sidecar whose PNG is gone are not evidence."""
    import json

    from fedlib.repro.artefacts.claim_evidence import figures_of

    def sidecar(name, kind, experiment, png=True):
        files = {"png": f"{name}.png"} if kind == "figure" else {"csv": f"{name}.csv"}
        (tmp_path / f"{name}.json").write_text(json.dumps({"kind": kind, "experiment": experiment, "files": files}))
        if png and kind == "figure":
            (tmp_path / f"{name}.png").write_bytes(b"png")

    sidecar("table1_curve", "figure", "table1")
    sidecar("partitions", "figure", "table1")
    sidecar("table1", "table", "table1")
    sidecar("table2_bars", "figure", "table2")
    sidecar("table1_gone", "figure", "table1", png=False)
    (tmp_path / "table1_bars.png").write_bytes(b"png")  # no sidecar: not declared
    assert figures_of(tmp_path, "table1") == ["partitions.png", "table1_curve.png"]
    assert figures_of(tmp_path, "table2") == ["table2_bars.png"]
    assert figures_of(tmp_path / "absent", "table1") == []


def test_the_headline_draws_each_columns_own_seeds(tmp_path, monkeypatch):
    """FedConcat's quick Table 1: FMNIST #C=2 holds 4 seeds (decide added 3), the other columns 1.  The figure
    draws an error bar for that column alone (the std of its 4 per-seed gaps, paired), none on a one-seed
    column, names each value's seeds, and never calls the panel "1 seed"."""
    import matplotlib.pyplot as plt
    import numpy as np

    from fedlib.repro.artefacts import saving
    from fedlib.repro.artefacts.headline import headline_figure

    (tmp_path / "fedconcat" / "quick").mkdir(parents=True)
    # the committed table, cut to that case: 4 seeds of FMNIST #C=2, 1 of the other columns
    table = pd.read_csv(FIGURES / "fedconcat" / "quick" / "table1.csv")
    for i in table.index[table.ours_seeds.notna()]:
        keep = 4 if table.at[i, "column"] == "fmnist_c2" else 1
        kept_seeds = dict(list(json.loads(table.at[i, "ours_seeds"]).items())[:keep])
        values = list(kept_seeds.values())
        table.loc[i, ["ours_seeds", "ours_mean", "ours_std", "n_seeds"]] = [
            json.dumps(kept_seeds), np.mean(values), np.std(values, ddof=1) if len(values) > 1 else np.nan, len(values)]
    table.to_csv(tmp_path / "fedconcat" / "quick" / "table1.csv", index=False)
    kept, save = [], saving.save_figure
    monkeypatch.setattr(saving, "save_figure", lambda fig, *a, **kw: kept.append((fig, kw)) or save(
        fig, *a, **{**kw, "close": False}))
    assert headline_figure("fedconcat", tmp_path) is not None
    [(fig, kw)] = kept
    ax = fig.axes[0]
    frame = pd.read_csv(tmp_path / "fedconcat" / "quick" / "table1.csv").set_index(["row", "column"])
    seeds = {r: json.loads(frame.at[(r, "fmnist_c2"), "ours_seeds"]) for r in ("fedconcat", "fedavg")}
    gaps = [seeds["fedconcat"][s] - seeds["fedavg"][s] for s in seeds["fedavg"]]
    caps = [seg for coll in ax.collections for seg in coll.get_segments()
            if len(seg) == 2 and np.isfinite(seg).all()]  # a one-seed column's NaN draws no segment
    heights = sorted(round(float(abs(seg[1][1] - seg[0][1])) / 2, 6) for seg in caps)
    assert heights == [round(float(np.std(gaps, ddof=1)), 6)]  # one error bar: the 4-seed column's
    texts = [t.get_text() for t in ax.texts]
    assert any(t.endswith("n=4") for t in texts) and sum(t.endswith("n=1") for t in texts) == 4
    [label] = [t.get_text() for t in ax.get_legend().get_texts() if t.get_text().startswith("ours")]
    assert label == "ours, quick (1–4 seeds: n under each value)"
    assert "std over 4 seeds" in kw["caption"] and "1 seed" not in label
    # the title says how well the baseline learns there: the range of FedAvg's means over the columns that ran
    ran = frame.xs("fedavg", level="row").ours_mean.dropna()
    assert ax.get_title(loc="left").endswith(f"; FedAvg at {ran.min():.1f}–{ran.max():.1f} %")
    plt.close(fig)


def test_a_headline_decided_at_a_scale_the_figure_has_no_panel_for_is_named_under_it():
    """FedConcat's headline is decided at its budget ladder's top rung, which the headline figure (one panel a
    table scale) does not draw: the figure names it, with ours and the verdict; a drawn scale is not repeated."""
    from fedlib.repro.artefacts.headline import _decided_elsewhere

    frame = pd.DataFrame([
        {"claim": "headline", "part": "FMNIST #C=2", "scale": "quick", "verdict": "reproduced", "ours": 7.99,
         "ours_std": 1.75, "n_seeds": 4, "paired": True, "budget_share": 0.0016, "dataset_used": "FMNIST",
         "on_paper_data": True},
        {"claim": "headline", "part": "FMNIST #C=2", "scale": "ladder paper", "verdict": "inconclusive",
         "ours": -2.02, "ours_std": 1.93, "n_seeds": 3, "paired": True, "budget_share": 0.156,
         "dataset_used": "FMNIST", "on_paper_data": True}])
    said = _decided_elsewhere(frame, ["quick", "paper"], {"FMNIST #C=2"})
    assert said == ["FMNIST #C=2: the ledger decides it at ladder paper scale (FMNIST, 15.6 % of the paper's "
                    "budget): -2.02 ± 1.93 (3 seeds, paired), inconclusive"]
    assert _decided_elsewhere(frame, ["quick", "ladder paper"], {"FMNIST #C=2"}) == []
    assert _decided_elsewhere(None, [], set()) == []


def test_a_headline_part_the_figure_draws_no_bar_for_is_named_under_it_at_a_drawn_scale():
    """FEDIC's headline has a second part, FEDIC − FedAvg where FedAvg learns (a study's contrast), decided at
    quick: a scale the figure draws, but with the table's gap (+52.9 over a FedAvg at 27.8 %), not that part's
    +30.55.  Before 2026-12-07 the figure named neither it nor FedLC's masked reading; now every part whose
    quantity is not the panels' gap is named under them."""
    from fedlib.repro.artefacts.claims import claims_of
    from fedlib.repro.artefacts.headline import _decided_elsewhere, _shown

    claim = next(c for c in claims_of("fedic") if c.headline)
    assert _shown(claim) == {"CIFAR-10-LT, IF = 100"}
    fedlc = next(c for c in claims_of("fedlc") if c.headline)
    assert "absent classes masked" not in _shown(fedlc) and len(_shown(fedlc)) == 1
    frame = pd.DataFrame([
        {"claim": "headline", "part": "where FedAvg learns", "scale": "quick", "verdict": "reproduced",
         "ours": 30.55, "ours_std": 3.63, "n_seeds": 3, "paired": True, "budget_share": 0.0193,
         "dataset_used": "FashionMNIST-LT", "on_paper_data": False}])
    said = _decided_elsewhere(frame, ["quick"], _shown(claim))
    assert said == ["where FedAvg learns: the ledger decides it at quick scale (FashionMNIST-LT, 1.93 % of the "
                    "paper's budget): +30.55 ± 3.63 (3 seeds, paired), reproduced"], said


def test_a_direction_reproduced_says_whether_its_size_falls_short_or_is_exceeded():
    """FedABC paper Table 2 (2026-11-29): +23.79 ± 1.25 against the paper's +20.42 read "its size is not reached"."""
    from fedlib.repro.verdict.claims import gap_rule

    beyond, short = gap_rule(23.79, 1.25, 20.42, n_seeds=3), gap_rule(0.76, 0.16, 20.42, n_seeds=3)
    assert beyond.word == short.word == "reproduced"
    assert beyond.why.endswith("its size is exceeded)") and short.why.endswith("its size is not reached)")
