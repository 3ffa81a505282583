"""A paper's claims as data: what the paper says, where, about which quantity, and the rule that decides it.

A companion declares its claims in ``fedlib/papers/<paper>/claims.py`` as ``CLAIMS``, a tuple of
:class:`Claim`.  A claim quotes one sentence of the paper (copied exactly from the text under
``/work/shared/papers/``), says where it stands (Table, Figure, §), names the quantity it is about
and the rule that decides it.  The quantity kinds read one paper table (its CSV under
``figures/<paper>/<profile>/<table>.csv``):

* :class:`Gap` -- the mean over the named columns of ``method − baseline`` (ours, and the paper's from
  the CSV's ``paper_mean``); decided by the ``"sign"`` or the ``"size"`` rule;
* :class:`Best` -- the method ≥ every rival row, column by column; the ``"best"`` rule;
* :class:`Ranking` -- the rows' order (their mean over the columns), ours against the paper's, by
  Kendall's τ; the ``"ranking"`` rule.

A :class:`Gap` on the cell of the paper's budget ladder (``fedlib/papers/<paper>/budget.py``) is also
evaluated on the ladder: its *trend*, whether the gap moves toward the paper's value as the budget grows
(:func:`fedlib.repro.verdict.claims.trend_rule`).  The rules themselves are in
:mod:`fedlib.repro.verdict.claims`; evaluating every claim at every scale that ran is
:mod:`fedlib.repro.artefacts.claims`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Gap", "Best", "Ranking", "Claim", "RULES"]


def _columns(columns) -> tuple[str, ...]:
    columns = (columns,) if isinstance(columns, str) else tuple(columns)
    if not columns:
        raise ValueError("columns must name at least one column of the table")
    return columns


@dataclass(frozen=True)
class Gap:
    """Mean over ``columns`` of ``method − baseline`` (percentage points)."""

    table: str
    columns: tuple[str, ...]
    method: str
    baseline: str

    def __post_init__(self):
        object.__setattr__(self, "columns", _columns(self.columns))
        if self.method == self.baseline:
            raise ValueError(f"method and baseline must differ, got {self.method!r} twice")

    def describe(self, label) -> str:
        """"FedLC − FedAvg at CIFAR-10 β=0.5" (``label(kind, key)`` names rows and columns)."""
        cols = ", ".join(label("column", c) for c in self.columns)
        mean = "mean over " if len(self.columns) > 1 else ""
        return f"{label('row', self.method)} − {label('row', self.baseline)}, {mean}{cols}"


@dataclass(frozen=True)
class Best:
    """``method`` ≥ every row of ``rivals`` (empty: every other row of the table), per column."""

    table: str
    columns: tuple[str, ...]
    method: str
    rivals: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "columns", _columns(self.columns))
        object.__setattr__(self, "rivals", tuple(self.rivals))
        if self.method in self.rivals:
            raise ValueError(f"rivals must not contain the method {self.method!r}")

    def describe(self, label) -> str:
        return f"{label('row', self.method)} ≥ every rival, per column ({len(self.columns)} columns)"


@dataclass(frozen=True)
class Ranking:
    """The order of ``rows`` by their mean over ``columns``: ours against the paper's (Kendall's τ)."""

    table: str
    columns: tuple[str, ...]
    rows: tuple[str, ...]

    def __post_init__(self):
        object.__setattr__(self, "columns", _columns(self.columns))
        object.__setattr__(self, "rows", tuple(self.rows))
        if len(set(self.rows)) < 3:
            raise ValueError(f"a ranking needs at least 3 distinct rows, got {self.rows!r}")

    def describe(self, label) -> str:
        return f"order of {len(self.rows)} rows ({', '.join(label('row', r) for r in self.rows)})"


#: The rules a claim may name, and the quantity kinds each decides.
RULES = {"sign": (Gap,), "size": (Gap,), "best": (Best,), "ranking": (Ranking,)}


@dataclass(frozen=True)
class Claim:
    """One claim of a paper.

    ``quote``: the paper's sentence, exactly; ``where``: "Table 1, §5.3"; ``quantity``: a
    :class:`Gap`, :class:`Best` or :class:`Ranking`; ``rule``: one of :data:`RULES`;
    ``paper_value``: the paper's value of a :class:`Gap` where the sentence gives it (None: from the
    paper's table, the CSV's ``paper_mean``); ``tolerance``: the ``size`` rule's band (pp) below which
    ours counts as the paper's size whatever the noise; ``headline``: the abstract's claim (the one the
    README's status sentence and the headline figure are about); ``notes`` and ``sources``: what else
    bears on it (another paper's or a public re-implementation's number, with where it stands)."""

    id: str
    quote: str
    where: str
    quantity: Gap | Best | Ranking
    rule: str
    paper_value: float | None = None
    tolerance: float = 1.0
    headline: bool = False
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def __post_init__(self):
        if not self.id or not self.id.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"id must be a non-empty slug (letters, digits, - and _), got {self.id!r}")
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}, got {self.rule!r}")
        if not isinstance(self.quantity, RULES[self.rule]):
            raise ValueError(f"claim {self.id}: the {self.rule!r} rule decides a "
                             f"{' or '.join(k.__name__ for k in RULES[self.rule])}, "
                             f"got {type(self.quantity).__name__}")
        if not self.quote.strip() or not self.where.strip():
            raise ValueError(f"claim {self.id}: quote and where must not be empty")
        if not self.tolerance >= 0:
            raise ValueError(f"claim {self.id}: tolerance must be ≥ 0 pp, got {self.tolerance!r}")
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "sources", tuple(self.sources))
