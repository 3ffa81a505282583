"""A claim's verdict at one scale, from numbers: reproduced / partly / not reproduced / not tested.

Pure: numbers in, a :class:`Verdict` out (no files, no runs).  The quantities are declared in
:mod:`fedlib.repro.spec.claims`; :mod:`fedlib.repro.artefacts.claims` reads them from the committed CSVs.

**Noise.** A gap of ours is a difference of two means over seeds, ``m_a − m_b``.  A seed fixes the
partition, the data subsets and the model's initialization for every method, so where both cells hold each
seed's value over the same ``n ≥ 2`` seeds the gap is *paired*: its standard error is ``se = s_d/√n``,
``s_d`` the std over seeds of the per-seed differences (:func:`paired_se`), with ``n − 1`` degrees of freedom.
Otherwise, with stds ``s_a``, ``s_b`` over ``n_a``, ``n_b`` seeds, ``se = √(s_a²/n_a + s_b²/n_b)``
(:func:`difference_se`) with Welch's degrees of freedom (:func:`welch_df`).  The *noise* is the half-width of
the 95 % interval, ``t(0.975, df)·se`` (:func:`noise`): with 2 seeds that is 12.7·se, since one difference of
two draws says little about the spread.  A mean over ``k`` columns has ``se = √(Σ se_i²) / k`` (the columns
are independent runs) and the fewest degrees of freedom of its columns.  Where a cell has one seed, its ``s``
is the table's measured seed-to-seed spread (the CSV's ``spread``; for runs on a GPU, where no spread of ours
is measured, the paper's reported std of the same cell), whose degrees of freedom are not kept: the noise is
then ``2·se``.  Where nothing is measured the noise is unknown (None), and no verdict may then say "beyond
the noise".

**Sign rule** (:func:`sign_rule`; the paper's gap ``p ≠ 0``, ours ``x``, noise ``z``).  Two questions:
is a gain of the paper's sign seen (``|x| > z``), and is the paper's size ruled out (``|x − p| > z``)?
Not reproduced if ``x`` has the opposite sign (unless the noise holds both zero and the paper's size:
then partly, as for the paper's sign), or if no gain is seen while the paper's size is ruled out
(our gain is indistinguishable from zero and clearly not the paper's); partly if no gain is seen but the
paper's size is not ruled out either (the noise is too large to decide, or unknown), or if a gain is
seen but under half the paper's size, which is ruled out; reproduced otherwise (the paper's sign beyond
the noise, at least half its size or within the noise of it).

**Size rule** (:func:`size_rule`, tolerance ``t`` pp): reproduced if ``|x − p| ≤ max(z, t)``; else the
sign rule, with "reproduced" lowered to "partly" (the sign holds, the size does not).

**Best rule** (:func:`best_rule`): in each column the method *wins* if its mean ≥ every rival's, and is
*beaten* if a rival exceeds it by more than their difference's noise.  With ``w`` wins of ``n``
columns and the paper's ``w_p`` of ``n``: reproduced if ``w ≥ w_p``; partly if ``w ≥ w_p / 2`` or it is
beaten in no column; not reproduced otherwise.

**Ranking rule** (:func:`ranking_rule`): Kendall's τ of the rows' means, ours against the paper's
(:func:`scipy.stats.kendalltau`): reproduced if τ > 0 and its p-value < ``alpha`` (0.05); partly if
τ > 0; not reproduced if τ ≤ 0.

**Trend rule** (:func:`trend_rule`, the budget ladder; the rule of
:func:`fedlib.repro.budget.ladder.finding`): the distances ``d_lo``, ``d_hi`` of the gap to the paper's
at the lowest and the highest rung where the baseline learns (a baseline at chance measures no gap),
against ``tol`` = twice the larger std of the gap over seeds at those rungs (one seed: the ladder's
tolerance).  Toward (``d_hi < d_lo − tol``) with the top rung on the paper's sign: reproduced; toward
on the other sign, or no move with the top rung on the paper's sign: partly; away
(``d_hi > d_lo + tol``), or no move on the other sign: not reproduced.  Fewer than two rungs: not tested.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

__all__ = ["VERDICTS", "Verdict", "difference_se", "paired_se", "welch_df", "noise", "mean_se", "sign_rule",
           "size_rule", "best_rule", "ranking_rule", "trend_rule", "not_tested"]

#: The four words, in the order of the claims tables' counts.
VERDICTS = ("reproduced", "partly", "not reproduced", "not tested")


@dataclass(frozen=True)
class Verdict:
    word: str  # one of VERDICTS
    why: str  # the numbers that decided it, in words

    def __post_init__(self):
        if self.word not in VERDICTS:
            raise ValueError(f"a verdict is one of {', '.join(VERDICTS)}, got {self.word!r}")


def _finite(x) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


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
    """The half-width of the 95 % interval of a quantity with standard error ``se`` (module docstring):
    ``t(0.975, df)·se``, or ``2·se`` where the degrees of freedom are not known (None); None if ``se`` is."""
    if not _finite(se):
        return None
    if se < 0:
        raise ValueError(f"se must be ≥ 0, got {se!r}")
    if df is None:
        return 2.0 * se
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


def _noise_text(noise) -> str:
    return f"noise ±{noise:.2f}" if _finite(noise) else "noise not measured"


def sign_rule(ours: float, noise: float | None, paper: float) -> Verdict:
    """The sign rule (module docstring); ``noise`` of ``ours`` (:func:`noise`; None: unknown)."""
    if not (_finite(ours) and _finite(paper)) or paper == 0:
        raise ValueError(f"ours and paper must be finite and paper ≠ 0, got ours={ours!r}, paper={paper!r}")
    if _finite(noise) and noise < 0:
        raise ValueError(f"noise must be ≥ 0, got {noise!r}")
    head = f"{ours:+.2f} vs paper {paper:+.2f} ({_noise_text(noise)})"
    known = _finite(noise)
    beyond = known and abs(ours) > noise  # a gain (or loss) is seen
    ruled_out = known and abs(ours - paper) > noise  # the paper's size lies outside our noise band
    if ours * paper <= 0:
        if known and not beyond and not ruled_out:  # zero and the paper's size both within the noise
            return Verdict("partly", f"{head}: the opposite sign within the noise, which holds the paper's size too")
        return Verdict("not reproduced", f"{head}: the opposite sign{' beyond the noise' if beyond else ''}")
    if not known:
        return Verdict("partly", f"{head}: the paper's sign; the noise is not measured, so neither a gain nor "
                                 "the paper's size is decided")
    if not beyond:
        if ruled_out:
            return Verdict("not reproduced", f"{head}: no gain beyond the noise, and the paper's size lies "
                                             "outside it")
        return Verdict("partly", f"{head}: the paper's sign within the noise; its size is not ruled out")
    if abs(ours) < abs(paper) / 2 and ruled_out:
        return Verdict("partly", f"{head}: the paper's sign beyond the noise, under half its size")
    return Verdict("reproduced", f"{head}: the paper's sign beyond the noise, at least half its size or within "
                                 "the noise of it")


def size_rule(ours: float, noise: float | None, paper: float, tolerance: float) -> Verdict:
    """The size rule (module docstring): ours within max(noise, tolerance) of the paper's value."""
    if not (_finite(tolerance) and tolerance >= 0):
        raise ValueError(f"tolerance must be a finite number ≥ 0 (pp), got {tolerance!r}")
    band = max(noise if _finite(noise) else 0.0, tolerance)
    if _finite(ours) and _finite(paper) and abs(ours - paper) <= band:
        return Verdict("reproduced", f"{ours:+.2f} vs paper {paper:+.2f}: within ±{band:.2f} of the paper's size")
    found = sign_rule(ours, noise, paper)
    if found.word == "reproduced":
        return Verdict("partly", found.why.replace("at least half its size", f"but not within ±{band:.2f} of it"))
    return found


def best_rule(wins: int, beaten: int, columns: int, paper_wins: int) -> Verdict:
    """The best rule (module docstring): ``wins`` and ``beaten`` columns of ours out of ``columns``."""
    for name, v in (("wins", wins), ("beaten", beaten), ("paper_wins", paper_wins)):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= columns:
            raise ValueError(f"{name} must be an integer in [0, columns={columns}], got {v!r}")
    if columns < 1:
        raise ValueError(f"columns must be ≥ 1, got {columns!r}")
    head = f"best in {wins} of {columns} columns (paper: {paper_wins} of {columns}); beaten beyond noise in {beaten}"
    if wins >= paper_wins:
        return Verdict("reproduced", head)
    if wins >= paper_wins / 2 or beaten == 0:
        return Verdict("partly", head)
    return Verdict("not reproduced", head)


def ranking_rule(ours: Sequence[float], paper: Sequence[float], alpha: float = 0.05) -> tuple[float, Verdict]:
    """Kendall's τ of ``ours`` against ``paper`` (the same rows, in the same order) and its verdict."""
    from scipy.stats import kendalltau

    if len(ours) != len(paper) or len(ours) < 3:
        raise ValueError(f"ours and paper must hold the same ≥ 3 rows, got {len(ours)} and {len(paper)}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    tau, p = kendalltau(ours, paper)
    if not math.isfinite(tau):
        return float("nan"), Verdict("not tested", "τ undefined (every value of one side equal)")
    head = f"Kendall's τ = {tau:+.2f} (p = {p:.2f}) over {len(ours)} rows"
    if tau > 0 and p < alpha:
        return float(tau), Verdict("reproduced", head + f": the paper's order, p < {alpha:g}")
    if tau > 0:
        return float(tau), Verdict("partly", head + ": the paper's order in tendency, not significant")
    return float(tau), Verdict("not reproduced", head + ": not the paper's order")


def trend_rule(gaps: Sequence[float], stds: Sequence[float | None], paper: float, tolerance: float) -> Verdict:
    """The trend rule (module docstring): ``gaps`` and their ``stds`` over seeds at the rungs where the
    baseline learns, from the lowest budget to the highest; ``tolerance``: the one-seed band (pp)."""
    if len(gaps) != len(stds):
        raise ValueError(f"gaps and stds must have the same length, got {len(gaps)} and {len(stds)}")
    if not (_finite(paper) and paper != 0):
        raise ValueError(f"paper must be finite and ≠ 0, got {paper!r}")
    if len(gaps) < 2:
        return not_tested(f"{len(gaps)} rung(s) where the baseline learns: no trend")
    lo, hi = gaps[0], gaps[-1]
    measured = [s for s in (stds[0], stds[-1]) if _finite(s)]
    tol = 2 * max(measured) if measured and max(measured) > 0 else tolerance
    d_lo, d_hi = abs(lo - paper), abs(hi - paper)
    head = (f"gap {lo:+.2f} → {hi:+.2f} over {len(gaps)} budgets (paper {paper:+.2f}; "
            f"distance {d_lo:.2f} → {d_hi:.2f}, ±{tol:.2f})")
    same_sign = hi * paper > 0
    if d_hi < d_lo - tol:
        return Verdict("reproduced" if same_sign else "partly", head + ": toward the paper's value")
    if d_hi > d_lo + tol:
        return Verdict("not reproduced", head + ": away from the paper's value")
    return Verdict("partly" if same_sign else "not reproduced", head + ": no move beyond the noise")


def not_tested(why: str) -> Verdict:
    """"not tested", saying why (the data absent here, or a GPU needed, with the estimated cost)."""
    if not why.strip():
        raise ValueError("a 'not tested' verdict must say why")
    return Verdict("not tested", why)
