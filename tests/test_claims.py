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
from fedlib.repro.spec.claims import Best, Claim, Gap, Ranking
from fedlib.repro.spec.paper import get_paper
from fedlib.repro.verdict import claims as rules

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "figures"
PAPERS_TEXT = Path("/work/shared/papers")


# ----------------------------------------------------------------------------- the rules, closed cases
def test_difference_se_is_the_std_of_a_difference_of_two_means():
    assert rules.difference_se(3.0, 1, 4.0, 1) == pytest.approx(5.0)
    assert rules.difference_se(2.0, 4, 2.0, 4) == pytest.approx(math.sqrt(2.0))
    assert rules.difference_se(float("nan"), 2, 1.0, 2) is None
    assert rules.mean_se([3.0, 4.0]) == pytest.approx(2.5)
    with pytest.raises(ValueError, match="n_a"):
        rules.difference_se(1.0, 0, 1.0, 1)


@pytest.mark.parametrize("ours, noise, paper, word", [
    (6.0, 2.0, 10.0, "reproduced"),        # the sign, beyond the noise, ≥ half the size
    (-6.0, 2.0, -10.0, "reproduced"),      # a negative claim
    (1.5, 2.0, 10.0, "not reproduced"),    # no gain seen, and the paper's size ruled out (FedLC's GPU runs)
    (1.5, 9.0, 10.0, "partly"),            # no gain seen, but the paper's size is within the noise too
    (3.0, 2.0, 10.0, "partly"),            # beyond the noise but under half the size, which is ruled out
    (3.0, 8.0, 4.0, "partly"),             # within the noise of both zero and the paper
    (4.0, 3.0, 10.0, "partly"),            # beyond the noise, under half the size
    (4.5, 3.5, 7.5, "reproduced"),         # beyond the noise, under half the size of a paper value within noise
    (3.0, None, 10.0, "partly"),           # noise unknown: never decided
    (-3.0, 2.0, 10.0, "not reproduced"),   # the opposite sign beyond the noise
    (-1.0, 2.0, 10.0, "not reproduced"),   # the opposite sign within it, the paper's size ruled out
    (-0.15, 1.2, 0.83, "partly"),          # the opposite sign within a noise that holds the paper's size too:
    (0.12, 1.2, 0.83, "partly"),           # undecided, as its mirror of the paper's sign (FedLC's Table 7, quick)
])
def test_sign_rule_branches(ours, noise, paper, word):
    assert rules.sign_rule(ours, noise, paper).word == word


def test_sign_rule_refuses_a_paper_value_of_zero():
    with pytest.raises(ValueError, match="paper"):
        rules.sign_rule(1.0, 0.5, 0.0)


@pytest.mark.parametrize("ours, noise, paper, tol, word", [
    (10.5, 0.2, 10.0, 1.0, "reproduced"),   # within the tolerance
    (12.5, 3.0, 10.0, 1.0, "reproduced"),   # within the noise
    (49.5, 2.0, 11.0, 2.0, "partly"),       # the sign, far from the size
    (-5.0, 2.0, 11.0, 2.0, "not reproduced"),
])
def test_size_rule_branches(ours, noise, paper, tol, word):
    assert rules.size_rule(ours, noise, paper, tol).word == word


@pytest.mark.parametrize("wins, beaten, n, paper_wins, word", [
    (3, 0, 4, 3, "reproduced"), (2, 1, 4, 4, "partly"), (0, 0, 4, 4, "partly"), (0, 2, 4, 4, "not reproduced")])
def test_best_rule_branches(wins, beaten, n, paper_wins, word):
    assert rules.best_rule(wins, beaten, n, paper_wins).word == word


def test_ranking_rule_against_scipy():
    from scipy.stats import kendalltau

    paper = [1, 2, 3, 4, 5, 6, 7, 8]
    tau, v = rules.ranking_rule(paper, paper)
    assert tau == pytest.approx(1.0) and v.word == "reproduced"
    tau, v = rules.ranking_rule([2, 1, 3, 5, 4, 6, 8, 7][::-1], paper)
    assert tau == pytest.approx(kendalltau([2, 1, 3, 5, 4, 6, 8, 7][::-1], paper)[0]) and v.word == "not reproduced"
    assert rules.ranking_rule([1, 3, 2, 5, 4], [1, 2, 3, 4, 5])[1].word == "partly"  # τ = 0.6, p ≈ 0.23


@pytest.mark.parametrize("gaps, stds, word", [
    ([1.0, 9.0], [0.5, 0.5], "reproduced"),       # toward, on the paper's sign
    ([-9.0, -2.0], [0.5, 0.5], "partly"),         # toward, still the other sign
    ([5.0, 5.2], [0.5, 0.5], "partly"),           # no move, the paper's sign
    ([5.0, -1.0], [0.5, 0.5], "not reproduced"),  # away
    ([-1.0, -1.2], [None, None], "not reproduced"),  # no move (one-seed tolerance), the other sign
    ([5.0], [0.5], "not tested"),                 # one rung: no trend
])
def test_trend_rule_branches(gaps, stds, word):
    assert rules.trend_rule(gaps, stds, 10.0, 0.5).word == word


def test_verdict_and_claim_refuse_bad_input():
    with pytest.raises(ValueError, match="verdict"):
        rules.Verdict("maybe", "")
    with pytest.raises(ValueError, match="why"):
        rules.not_tested(" ")
    with pytest.raises(ValueError, match="rule"):
        Claim("x", "q", "Table 1", Gap("table1", "c", "a", "b"), "best")
    with pytest.raises(ValueError, match="rule must be"):
        Claim("x", "q", "Table 1", Gap("table1", "c", "a", "b"), "vibes")
    with pytest.raises(ValueError, match="3 distinct rows"):
        Ranking("table1", "c", ("a", "b"))
    with pytest.raises(ValueError, match="rivals"):
        Best("table1", "c", "a", rivals=("a",))


# ----------------------------------------------------------------------------- the declared claims
@pytest.mark.parametrize("paper", ledger.papers())
def test_each_paper_declares_four_to_eight_quoted_claims_on_its_tables(paper):
    claims = claims_of(paper)
    assert 4 <= len(claims) <= 8 and sum(c.headline for c in claims) == 1
    assert len({c.id for c in claims}) == len(claims)
    pp = get_paper(paper)
    for c in claims:
        table = pp.table(c.quantity.table)
        keys = {col.key for col in table.columns}
        assert set(c.quantity.columns) <= keys, c.id
    if PAPERS_TEXT.exists():
        text = re.sub(r"\s+", " ", (PAPERS_TEXT / pp.source).read_text())
        for c in claims:
            assert re.sub(r"\s+", " ", c.quote) in text, f"{paper} {c.id}: the quote is not the paper's text"


# ----------------------------------------------------------------------------- the committed ledgers
@pytest.mark.parametrize("paper", ledger.papers())
def test_committed_ledger_is_what_the_outputs_give_and_its_links_resolve(paper):
    committed = pd.read_csv(FIGURES / paper / "claims.csv")
    assert committed.claim.nunique() >= 4
    assert set(committed.verdict) <= set(rules.VERDICTS)
    fresh = evaluate(paper, FIGURES)
    assert list(fresh.verdict) == list(committed.verdict) and list(fresh.scale) == list(committed.scale)
    for ev in committed.evidence.dropna():
        for rel in ev.split(";"):
            assert (FIGURES / paper / rel).exists(), f"{paper}: evidence {rel} does not resolve"
    md = (FIGURES / paper / "claims.md").read_text()
    for rel in re.findall(r"\]\(([^)]+)\)", md):
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


def test_a_figures_root_without_any_scale_of_ours_gets_no_headline_figure(tmp_path):
    from fedlib.repro.artefacts.headline import headline_figure

    (tmp_path / "fedic" / "smoke").mkdir(parents=True)  # what a smoke regeneration leaves: no quick, paper or GPU
    assert headline_figure("fedic", tmp_path) is None
    assert not list((tmp_path / "fedic").glob("headline.*"))


def test_gpu_runs_are_compared_at_the_round_both_reached_with_the_papers_std_for_one_seed(tmp_path):
    """A finished FedAvg run and an interrupted FedLC run: the gap is taken at their paired round, never at their
    different last rounds; with one seed the noise is 2·√(s_a² + s_b²) over the paper's reported stds."""
    from fedlib.repro.artefacts.claims import _gpu_frame, gap_cells

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
    sa, sb = t.value("fedlc", "cifar10_beta0.5").std, t.value("fedavg", "cifar10_beta0.5").std
    assert cell["se"] == pytest.approx(math.sqrt(sa ** 2 + sb ** 2))
    word = rules.sign_rule(cell["ours"], 2 * cell["se"], cell["paper"]).word
    assert word == "not reproduced"  # +0.47 against +12.81 with noise ±4.2: the paper's size is ruled out


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
    assert rules.noise(0.2, None) == pytest.approx(0.4) and rules.noise(None, 3) is None
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
    assert rules.sign_rule(cell["ours"], noise, cell["paper"]).word == "not reproduced"

    (apart,) = gap_cells(_two_rows({0: 66.44, 1: 63.81, 2: 64.0}, {0: 65.85, 1: 62.82, 3: 61.0}), q)
    assert not apart["paired"]
    frame = _two_rows({0: 66.44, 1: 63.81, 2: 64.0}, {0: 65.85, 1: 62.82, 3: 61.0})
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
