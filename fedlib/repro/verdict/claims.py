"""A claim's verdict at one scale, from numbers: five words, one decision rule.

Pure: numbers in, a :class:`Verdict` out (no files, no runs).  The quantities are declared in
:mod:`fedlib.repro.spec.claims`; :mod:`fedlib.repro.artefacts.claims` reads them from the committed CSVs.

**The verdicts** (:data:`VERDICTS`): *reproduced*, *partly*, *not reproduced*, *inconclusive* and *not tested*.
"Inconclusive" is a verdict of its own: the evidence ran, and it cannot tell.  The table of cases is in
``docs/reproducibility.md`` ("The decision rule"); ``tests/test_claims.py`` exercises every row of it.

**The interval.** A quantity of ours is a difference of two means over seeds, ``x = m_a − m_b``.  It is decided
by its 95 % interval ``[x − z, x + z]``, ``z = t(0.975, df)·se`` (:func:`noise`), with a spread **measured on
the cell itself**: over the ``n ≥ 2`` seeds both cells hold a value of, the gap is *paired* (their mean difference)
(a seed fixes the partition, data subsets and initialization of every method): ``se = s_d/√n``, ``s_d`` the std
of the per-seed differences (:func:`paired_se`), ``df = n − 1``; otherwise, both cells over ≥ 2 seeds,
``se = √(s_a²/n_a + s_b²/n_b)`` (:func:`difference_se`) with Welch's ``df`` (:func:`welch_df`).  A cell of one
seed has no interval: no spread borrowed from another cell, table or machine ever stands in for it, so a
one-seed quantity is inconclusive.  Since ``t(0.975, n − 1)/√n`` falls with ``n``, the same mean and spread
over more seeds give a narrower interval: more seeds never turn a decided verdict into an undecided one.

**Against what.** The interval is set against ``0`` ("no effect") and against the paper's band
``[p − m, p + m]``: the paper's value ``p`` with a margin ``m`` declared per claim (the paper's std of the cell
where it gives one, else 0).  The interval *excludes 0* when ``|x| > z``; it *reaches the paper's band* when
``|x − p| ≤ z + m``.

**Gap rule** (:func:`gap_rule`).  A claim quoted as a *direction* ("outperforms") is decided on its sign; one
quoted as a *size* ("by 10.16 %") on its size:

======================================  ====================  ====================
the interval                            direction claim       size claim
======================================  ====================  ====================
not measured (one seed)                 inconclusive          inconclusive
excludes 0, on the paper's side,        reproduced            reproduced
reaches the paper's band
excludes 0, on the paper's side,        reproduced            partly
does not reach the paper's band
excludes 0, on the other side           not reproduced        not reproduced
holds 0, does not reach the band        not reproduced        not reproduced
holds 0 and reaches the band            inconclusive          inconclusive
======================================  ====================  ====================

**Best rule** (:func:`best_column` per column, :func:`best_rule` over columns): in a column the method is
*best* where every rival's interval of ``method − rival`` excludes 0 above, *beaten* where some rival's excludes
0 below, and the column is *undecided* otherwise (the noise cannot rank them; one seed: no interval).  With
``b`` best, ``u`` undecided of ``n`` columns and the paper's ``w`` best: reproduced if ``b ≥ w``; if even
every undecided column could not reach ``w`` (``b + u < w``), partly where ``b ≥ 1`` (best beyond the noise
somewhere, the paper's count ruled out) and not reproduced where ``b = 0``; inconclusive otherwise.

A figure's finding that states a direction and prints no value is decided on its sign alone: reproduced or not
reproduced where the interval excludes 0, inconclusive where it holds 0 (no size was given to rule out).

**Ranking rule** (:func:`ranking_rule`): Kendall's τ of the rows' means, ours against the paper's
(:func:`scipy.stats.kendalltau`), over rows measured on ≥ 2 seeds: reproduced if τ > 0 with ``p < 0.05``,
not reproduced if τ < 0 with ``p < 0.05``, inconclusive otherwise (one seed, or a τ the rows cannot decide).

**What would decide it** (:func:`seeds_to_decide`): the fewest seeds at which, with the same mean and paired
std, the interval would exclude 0 or stop reaching the paper's band.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

__all__ = ["VERDICTS", "DECIDED", "Verdict", "Interval", "difference_se", "paired_se", "welch_df", "noise",
           "mean_se", "gap_rule", "best_column", "best_rule", "ranking_rule", "seeds_to_decide", "not_tested",
           "inconclusive"]

#: The five words, in the order of the claims tables' counts.
VERDICTS = ("reproduced", "partly", "not reproduced", "inconclusive", "not tested")
#: The verdicts that decide a claim (the evidence could tell).
DECIDED = ("reproduced", "partly", "not reproduced")


@dataclass(frozen=True)
class Verdict:
    word: str  # one of VERDICTS
    why: str  # the numbers that decided it, in words

    def __post_init__(self):
        if self.word not in VERDICTS:
            raise ValueError(f"a verdict is one of {', '.join(VERDICTS)}, got {self.word!r}")


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def difference_se(std_a: float | None, n_a: int, std_b: float | None, n_b: int) -> float | None:
    """Standard error of ``mean_a − mean_b``: √(s_a²/n_a + s_b²/n_b); None if a std is unknown."""
    for name, n in (("n_a", n_a), ("n_b", n_b)):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"{name} must be an integer ≥ 1 (seeds), got {n!r}")
    if not (_finite(std_a) and _finite(std_b)):
        return None
    if std_a < 0 or std_b < 0:
        raise ValueError(f"stds must be ≥ 0, got {std_a!r} and {std_b!r}")
    return math.sqrt(std_a ** 2 / n_a + std_b ** 2 / n_b)


def paired_se(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """``(s_d, se)`` of ``mean(a) − mean(b)`` over paired draws (``a[i]``, ``b[i]`` at one seed): the sample std
    of the differences and ``s_d/√n``."""
    if len(a) != len(b) or len(a) < 2:
        raise ValueError(f"a and b must hold the same ≥ 2 paired values, got {len(a)} and {len(b)}")
    d = [float(x) - float(y) for x, y in zip(a, b)]
    if not all(math.isfinite(x) for x in d):
        raise ValueError(f"paired values must be finite, got differences {d!r}")
    sd = statistics.stdev(d)
    return sd, sd / math.sqrt(len(d))


def welch_df(std_a: float | None, n_a: int, std_b: float | None, n_b: int) -> float | None:
    """Welch–Satterthwaite degrees of freedom of ``mean_a − mean_b``; None unless both sides have ≥ 2 seeds and
    a finite std (both stds 0: ``n_a + n_b − 2``)."""
    if n_a < 2 or n_b < 2 or not (_finite(std_a) and _finite(std_b)):
        return None
    va, vb = std_a ** 2 / n_a, std_b ** 2 / n_b
    if va + vb == 0:
        return float(n_a + n_b - 2)
    return (va + vb) ** 2 / (va ** 2 / (n_a - 1) + vb ** 2 / (n_b - 1))


def noise(se: float | None, df: float | None) -> float | None:
    """The half-width of the 95 % interval of a quantity with standard error ``se`` and ``df`` degrees of
    freedom, ``t(0.975, df)·se``; None where either is unknown: no interval without a measured spread."""
    if not _finite(se) or df is None:
        return None
    if se < 0:
        raise ValueError(f"se must be ≥ 0, got {se!r}")
    if not (_finite(df) and df > 0):
        raise ValueError(f"df must be a number > 0 (degrees of freedom) or None, got {df!r}")
    from scipy.stats import t

    return float(t.ppf(0.975, df)) * se


def mean_se(ses: Sequence[float | None]) -> float | None:
    """Standard error of the mean of independent quantities with standard errors ``ses``."""
    if not ses:
        raise ValueError("ses must hold at least one standard error")
    if any(not _finite(s) for s in ses):
        return None
    return math.sqrt(sum(s ** 2 for s in ses)) / len(ses)


@dataclass(frozen=True)
class Interval:
    """Ours, ``x ± z`` (the 95 % interval), set against 0 and the paper's band ``[p − m, p + m]``."""

    x: float
    z: float
    paper: float
    margin: float = 0.0

    def __post_init__(self):
        for name in ("x", "z", "paper", "margin"):
            if not _finite(getattr(self, name)):
                raise ValueError(f"{name} must be a finite number, got {getattr(self, name)!r}")
        if self.z < 0 or self.margin < 0:
            raise ValueError(f"z and margin must be ≥ 0, got z={self.z!r}, margin={self.margin!r}")

    @property
    def excludes_zero(self) -> bool:
        return abs(self.x) > self.z

    @property
    def reaches_paper(self) -> bool:
        return abs(self.x - self.paper) <= self.z + self.margin

    @property
    def paper_side(self) -> bool:
        """Ours on the paper's side of 0 (its sign)."""
        return self.x * self.paper > 0

    def text(self) -> str:
        band = f" ± {self.margin:.2f}" if self.margin else ""
        return (f"{self.x:+.2f}, 95 % interval [{self.x - self.z:+.2f}, {self.x + self.z:+.2f}]; "
                f"paper {self.paper:+.2f}{band}")


def inconclusive(why: str) -> Verdict:
    """"inconclusive", saying why (one seed: no interval; an interval that holds both 0 and the paper)."""
    if not why.strip():
        raise ValueError("an 'inconclusive' verdict must say why")
    return Verdict("inconclusive", why)


def _direction_rule(ours: float, z: float | None, direction: int, n_seeds: int) -> Verdict:
    """A direction the paper states without printing a size (a figure's finding): decided on the sign alone;
    an interval that holds 0 cannot rule out a size that was never given, so it stays inconclusive."""
    side = "above" if direction > 0 else "below"
    if not _finite(z):
        return inconclusive(f"{ours:+.2f} (the paper: {side} 0, no value printed): no interval ({n_seeds} seed"
                            f"{'s' if n_seeds != 1 else ''})")
    head = f"{ours:+.2f}, 95 % interval [{ours - z:+.2f}, {ours + z:+.2f}]; the paper: {side} 0, no value printed"
    if abs(ours) > z:
        return Verdict("reproduced" if ours * direction > 0 else "not reproduced",
                       head + (": the paper's direction beyond the noise" if ours * direction > 0
                               else ": the opposite direction beyond the noise"))
    return inconclusive(head + ": the interval holds 0")


def gap_rule(ours: float, z: float | None, paper: float | None, margin: float = 0.0, *, quoted: str = "direction",
             n_seeds: int = 0, direction: int = 0) -> Verdict:
    """The gap rule (module docstring): ``ours`` with its interval's half-width ``z`` (None: not measured),
    the paper's value and band margin; ``quoted`` is "direction" or "size".  ``paper`` None with ``direction``
    ±1: the paper states a direction and prints no value (decided on the sign alone)."""
    if quoted not in ("direction", "size"):
        raise ValueError(f"quoted must be 'direction' or 'size', got {quoted!r}")
    if paper is None:
        if direction not in (1, -1) or quoted != "direction" or not _finite(ours):
            raise ValueError(f"without the paper's value, a direction (+1 or -1) is decided on its sign alone; got "
                             f"direction={direction!r}, quoted={quoted!r}, ours={ours!r}")
        return _direction_rule(ours, z, direction, n_seeds)
    if not (_finite(ours) and _finite(paper)) or paper == 0:
        raise ValueError(f"ours and paper must be finite and paper ≠ 0, got ours={ours!r}, paper={paper!r}")
    if not (_finite(margin) and margin >= 0):
        raise ValueError(f"margin must be a finite number ≥ 0 (pp), got {margin!r}")
    if not _finite(z):
        seeds = f"{n_seeds} seed{'s' if n_seeds != 1 else ''}" if n_seeds else "no seeds"
        return inconclusive(f"{ours:+.2f} vs paper {paper:+.2f}: no interval ({seeds}; a spread is measured on the "
                            "cell itself, over ≥ 2 seeds)")
    iv = Interval(ours, z, paper, margin)
    head = iv.text()
    if iv.excludes_zero and not iv.paper_side:
        return Verdict("not reproduced", f"{head}: the opposite sign beyond the noise")
    if iv.excludes_zero:
        if iv.reaches_paper:
            return Verdict("reproduced", f"{head}: the paper's sign beyond the noise, its size within reach")
        if quoted == "direction":
            size = "is exceeded" if abs(ours) > abs(paper) else "is not reached"  # beyond the paper's, or short
            return Verdict("reproduced", f"{head}: the paper's sign beyond the noise (a direction; its size {size})")
        return Verdict("partly", f"{head}: the paper's sign beyond the noise, its size ruled out")
    if not iv.reaches_paper:
        return Verdict("not reproduced", f"{head}: no effect beyond the noise, and the paper's value ruled out")
    return inconclusive(f"{head}: the interval holds both no effect and the paper's value")


def best_column(gaps: Sequence[tuple[float, float | None]]) -> str:
    """One column of a "best" claim: ``gaps`` = (``method − rival``, its interval half-width or None) per
    rival.  "best" (every interval above 0), "beaten" (some interval below 0) or "undecided"."""
    if not gaps:
        raise ValueError("gaps must hold one (gap, z) per rival")
    if any(_finite(z) and -g > z for g, z in gaps):
        return "beaten"
    if all(_finite(z) and g > z for g, z in gaps):
        return "best"
    return "undecided"


def best_rule(columns: Sequence[str], paper_best: int) -> Verdict:
    """The best rule (module docstring) over the columns' states (:func:`best_column`)."""
    bad = [c for c in columns if c not in ("best", "beaten", "undecided")]
    if not columns or bad:
        raise ValueError(f"columns must be ≥ 1 of 'best', 'beaten', 'undecided', got {list(columns)!r}")
    n = len(columns)
    if isinstance(paper_best, bool) or not isinstance(paper_best, int) or not 0 <= paper_best <= n:
        raise ValueError(f"paper_best must be an integer in [0, {n}], got {paper_best!r}")
    b, u, l = (sum(c == s for c in columns) for s in ("best", "undecided", "beaten"))
    head = (f"best beyond the noise in {b} of {n} columns, beaten in {l}, undecided in {u} "
            f"(paper: best in {paper_best} of {n})")
    if b >= paper_best:
        return Verdict("reproduced", head)
    if b + u < paper_best:
        return Verdict("partly" if b else "not reproduced", head + ": the paper's count is ruled out")
    return inconclusive(head + ": the undecided columns could still give the paper's count")


def ranking_rule(ours: Sequence[float], paper: Sequence[float], n_seeds: int, alpha: float = 0.05
                 ) -> tuple[float, Verdict]:
    """Kendall's τ of ``ours`` against ``paper`` (the same rows, in the same order) and its verdict; rows over
    fewer than 2 seeds (``n_seeds``) are inconclusive whatever τ."""
    from scipy.stats import kendalltau

    if len(ours) != len(paper) or len(ours) < 3:
        raise ValueError(f"ours and paper must hold the same ≥ 3 rows, got {len(ours)} and {len(paper)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    tau, p = kendalltau(ours, paper)
    if not math.isfinite(tau):
        return float("nan"), inconclusive("τ undefined (every value of one side equal)")
    head = f"Kendall's τ = {tau:+.2f} (p = {p:.2f}) over {len(ours)} rows"
    if n_seeds < 2:
        return float(tau), inconclusive(head + f", {n_seeds} seed: no spread measured, so no order is decided")
    if p < alpha:
        return float(tau), Verdict("reproduced" if tau > 0 else "not reproduced",
                                   head + (": the paper's order" if tau > 0 else ": against the paper's order")
                                   + f", p < {alpha:g}")
    return float(tau), inconclusive(head + f": p ≥ {alpha:g}, the rows cannot decide the order")


def seeds_to_decide(ours: float, sd: float, paper: float, margin: float = 0.0, max_seeds: int = 50) -> int | None:
    """The fewest seeds ``n ≥ 2`` at which a paired gap of mean ``ours`` and per-seed std ``sd`` would have an
    interval that excludes 0 or no longer reaches the paper's band (:func:`gap_rule` decided); None beyond
    ``max_seeds``."""
    for name, v in (("ours", ours), ("sd", sd), ("paper", paper), ("margin", margin)):
        if not _finite(v):
            raise ValueError(f"{name} must be a finite number, got {v!r}")
    if sd < 0 or margin < 0:
        raise ValueError(f"sd and margin must be ≥ 0, got sd={sd!r}, margin={margin!r}")
    if isinstance(max_seeds, bool) or not isinstance(max_seeds, int) or max_seeds < 2:
        raise ValueError(f"max_seeds must be an integer ≥ 2, got {max_seeds!r}")
    from scipy.stats import t

    for n in range(2, max_seeds + 1):
        iv = Interval(ours, float(t.ppf(0.975, n - 1)) * sd / math.sqrt(n), paper, margin)
        if iv.excludes_zero or not iv.reaches_paper:
            return n
    return None


def not_tested(why: str) -> Verdict:
    """"not tested", saying why (the data absent here, or a GPU needed, with the estimated cost)."""
    if not why.strip():
        raise ValueError("a 'not tested' verdict must say why")
    return Verdict("not tested", why)
