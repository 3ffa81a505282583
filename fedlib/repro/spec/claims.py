"""A paper's claims as data: what the paper says, where, about which quantities, and the rule that decides each.

A companion declares its claims in ``fedlib/papers/<paper>/claims.py`` as ``CLAIMS``, a tuple of
:class:`Claim`, and the central claims it leaves out, with why, as ``LEFT_OUT`` (:class:`LeftOut`).  One claim
per distinct statement of the paper: it quotes the sentence (copied exactly from the text under
``shared/papers/``), says where it stands (Table, Figure, §), and holds one :class:`Part` per quantity the
sentence speaks of, each with its rule and its own verdict (a claim of one quantity may give ``quantity`` and
``rule`` directly).  The quantity kinds read one paper table (its CSV under
``figures/<paper>/<profile>/<table>.csv``):

* :class:`Gap` -- the mean over the named columns of ``method − baseline`` (ours, and the paper's from
  the CSV's ``paper_mean``); decided by the gap rule, on its sign where the paper quotes a direction
  (``"sign"``: "outperforms") and on its size where it quotes a size (``"size"``: "by 10.16%");
* :class:`Best` -- the method ≥ every rival row, column by column; the ``"best"`` rule;
* :class:`Ranking` -- the rows' order (their mean over the columns), ours against the paper's, by
  Kendall's τ; the ``"ranking"`` rule;
* :class:`Contrast` -- a finding of a figure, inside a study's summary (``figures/<paper>/<profile>/<output>.csv``,
  one row per point of the figure, each with ``ours_mean`` and its seeds): one point minus another (a gap
  inside a study, or a trend along an axis as its end minus its start); decided by the gap rule, against the
  value the part gives (figures print no table to read it from).

A :class:`Gap` on the cell of the paper's budget ladder (``fedlib/papers/<paper>/budget.py``) is also
evaluated on the ladder's top rung where the baseline learns (by the same gap rule), its trend along the
budget said beside it.  The rules themselves are in
:mod:`fedlib.repro.verdict.claims`; evaluating every claim at every scale that ran is
:mod:`fedlib.repro.artefacts.claims`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Gap", "Best", "Ranking", "Contrast", "Part", "Claim", "LeftOut", "RULES"]


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


def _filters(x, name: str) -> tuple[tuple[str, object], ...]:
    items = tuple(x.items()) if isinstance(x, dict) else tuple(tuple(i) for i in x)
    if not items or not all(len(i) == 2 and isinstance(i[0], str) for i in items):
        raise ValueError(f"{name} must be a non-empty dict {{column: value}} of the summary's rows, got {x!r}")
    return items


@dataclass(frozen=True)
class Contrast:
    """``ours_mean`` of the summary row matching ``a`` minus that of the row matching ``b`` (each a dict
    ``{column: value}``) in a study's output ``output``; ``dataset``: the dataset the paper's finding is on;
    ``label``: the quantity in words ("FEDIC − FedAvg at α = 0.01"); ``figure``: the output that draws it (its
    PNG is the evidence beside the CSV); ``budget_of``: ``(table, row, column)``, the paper table's cell whose
    training the study's rows repeat for their own ``rounds``, which gives the ledger its budget share."""

    output: str
    a: tuple[tuple[str, object], ...]
    b: tuple[tuple[str, object], ...]
    dataset: str
    label: str = ""
    figure: str = ""
    budget_of: tuple = ()

    def __post_init__(self):
        if self.budget_of and (len(self.budget_of) != 3 or not all(isinstance(x, str) for x in self.budget_of)):
            raise ValueError(f"budget_of must be (table, row, column) or (), got {self.budget_of!r}")
        if not self.output.strip() or "/" in self.output:
            raise ValueError(f"output must name a study's summary CSV (no folder), got {self.output!r}")
        object.__setattr__(self, "a", _filters(self.a, "a"))
        object.__setattr__(self, "b", _filters(self.b, "b"))
        if self.a == self.b:
            raise ValueError(f"a and b must select different rows, got {dict(self.a)!r} twice")

    def describe(self, label=None) -> str:
        return self.label or f"{dict(self.a)} − {dict(self.b)} in {self.output}"


#: The rules a claim may name, and the quantity kinds each decides.
RULES = {"sign": (Gap, Contrast), "size": (Gap, Contrast), "best": (Best,), "ranking": (Ranking,)}


def _margin(margin, where: str):
    if margin is not None and not (isinstance(margin, (int, float)) and margin >= 0):
        raise ValueError(f"{where}: margin must be None (the paper's std of the cells) or a number ≥ 0 pp, "
                         f"got {margin!r}")


@dataclass(frozen=True)
class Part:
    """One quantity of a claim, with the rule that decides it.

    ``name``: what the part covers, in words ("MNIST", "CIFAR-10-LT"; empty for a claim of one part);
    ``paper_value``: the paper's value where the sentence gives it (None: from the paper's table);
    ``margin``: the half-width of the paper's band, pp (None: the paper's std of the cells where it gives one,
    else 0; :mod:`fedlib.repro.verdict.claims`); ``direction``: for a figure's finding that prints no value
    (a :class:`Contrast` without ``paper_value``), +1 where the paper says ``a`` lies above ``b``, −1 below."""

    quantity: Gap | Best | Ranking | Contrast
    rule: str
    name: str = ""
    paper_value: float | None = None
    margin: float | None = None
    direction: int = 0

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}, got {self.rule!r}")
        if not isinstance(self.quantity, RULES[self.rule]):
            raise ValueError(f"the {self.rule!r} rule decides a {' or '.join(k.__name__ for k in RULES[self.rule])}, "
                             f"got {type(self.quantity).__name__}")
        _margin(self.margin, f"part {self.name!r}")
        if self.direction not in (0, 1, -1):
            raise ValueError(f"part {self.name!r}: direction must be +1, -1 or 0, got {self.direction!r}")
        if isinstance(self.quantity, Contrast) and (self.paper_value is None) == (self.direction == 0):
            raise ValueError(f"part {self.name!r}: a Contrast needs either the paper's value (paper_value) or, "
                             "where its figure prints none, the direction it states (direction=+1 or -1)")
        if self.direction and (not isinstance(self.quantity, Contrast) or self.rule != "sign"):
            raise ValueError(f"part {self.name!r}: direction is for a figure's finding decided on its sign "
                             "(a Contrast with rule 'sign')")


@dataclass(frozen=True)
class LeftOut:
    """A central claim of the paper that the ledger does not decide, and why (no table of ours measures it, its
    data is absent here, its quantity is not one the rules read)."""

    what: str
    where: str
    why: str

    def __post_init__(self):
        if not (self.what.strip() and self.where.strip() and self.why.strip()):
            raise ValueError("a left-out claim must say what, where and why")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper.

    ``quote``: the paper's sentence, exactly; ``where``: "Table 1, §5.3"; ``parts``: one :class:`Part` per
    quantity the sentence speaks of -- or, for a claim of one quantity, ``quantity`` (a :class:`Gap`,
    :class:`Best` or :class:`Ranking`), ``rule`` (one of :data:`RULES`), ``paper_value`` and ``margin`` as in
    :class:`Part`; ``headline``: the abstract's claim (the one the README's status sentence and the headline
    figure are about; its first part is the headline quantity); ``notes`` and ``sources``: what else bears on
    it (another paper's or a public re-implementation's number, with where it stands)."""

    id: str
    quote: str
    where: str
    quantity: Gap | Best | Ranking | None = None
    rule: str | None = None
    paper_value: float | None = None
    margin: float | None = None
    headline: bool = False
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    parts: tuple[Part, ...] = ()

    def __post_init__(self):
        if not self.id or not self.id.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"id must be a non-empty slug (letters, digits, - and _), got {self.id!r}")
        if not self.quote.strip() or not self.where.strip():
            raise ValueError(f"claim {self.id}: quote and where must not be empty")
        if self.parts and (self.quantity is not None or self.rule is not None or self.paper_value is not None
                           or self.margin is not None):
            raise ValueError(f"claim {self.id}: give either parts or one quantity with its rule, not both")
        try:
            parts = tuple(self.parts) or (Part(self.quantity, self.rule, paper_value=self.paper_value,
                                               margin=self.margin),)
        except ValueError as e:
            raise ValueError(f"claim {self.id}: {e}") from None
        names = [p.name for p in parts]
        if len(parts) > 1 and (not all(n.strip() for n in names) or len(set(names)) < len(names)):
            raise ValueError(f"claim {self.id}: the parts of a claim of several quantities need distinct names, "
                             f"got {names!r}")
        object.__setattr__(self, "parts", parts)
        object.__setattr__(self, "quantity", parts[0].quantity)
        object.__setattr__(self, "rule", parts[0].rule)
        object.__setattr__(self, "notes", tuple(self.notes))
        object.__setattr__(self, "sources", tuple(self.sources))
