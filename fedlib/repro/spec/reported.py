"""A paper's reported results as data: tables of cells, each ``mean`` or ``mean±std``.

A :class:`PaperTable` holds a paper table exactly as printed, with how each
cell maps to a fedlib configuration (the paper's common setup, the table's,
the column's and the row's parameters; :meth:`PaperTable.config`).  Every
paper companion (:mod:`fedlib.papers`) transcribes its tables with these
types; :mod:`fedlib.repro.artefacts.report` compares them with our runs.

A transcription is a text block, one line per row: the row's label, then one
cell per column (``69.51±1.45``, ``53.87`` or ``—`` for a cell missing in the
paper); ``|`` separators are ignored (:func:`parse_rows`).  A table printed the
other way round (one line per column) is read by :func:`parse_columns`.  ``suspect`` marks
printed values that look wrong (a probable typo), with the reason: they are
shown, never counted as a reproduction or a miss.

**What ± means.** A paper's ``mean±std`` is, unless declared otherwise, the
std over seeds (``std_over="seeds"``).  A table (or one column) whose ± is
something else declares it in words, e.g. ``std_over="the last 10 rounds"``:
the comparison then shows the Δ but never judges it against that std
(:data:`fedlib.repro.verdict.compare.STATUS` ``std_not_seeds``), since a spread over
rounds says nothing of the seed-to-seed noise of a reproduction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["Cell", "Column", "Row", "PaperTable", "SEEDS_STD", "parse_cell", "parse_rows", "parse_columns"]


@dataclass(frozen=True)
class Cell:
    mean: float
    std: float | None = None


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    dataset: str
    params: dict = field(default_factory=dict)  # config values of this column (skew, clients)
    group: str = ""  # spanning header, e.g. the dataset
    std_over: str | None = None  # what this column's ± is over (None: the table's std_over)


#: The ± of a paper cell is the std over seeds unless its table or column declares otherwise.
SEEDS_STD = "seeds"


@dataclass(frozen=True)
class Row:
    key: str
    label: str
    params: dict  # config values of this row (method, local epochs)
    group: str = ""


@dataclass(frozen=True)
class PaperTable:
    id: str
    number: int
    title: str
    section: str
    columns: tuple[Column, ...]
    rows: tuple[Row, ...]
    values: dict  # (row key, column key) -> Cell | None (missing in the paper)
    params: dict = field(default_factory=dict)  # setting shared by the table's cells
    notes: tuple[str, ...] = ()
    setup: dict = field(default_factory=dict)  # the paper's common setup, under the table's own params
    suspect: dict = field(default_factory=dict)  # (row key, column key) -> why the printed value is doubtful
    std_over: str = SEEDS_STD  # what the printed ± is over: "seeds", or e.g. "the last 10 rounds"

    @property
    def has_std(self) -> bool:
        return any(c is not None and c.std is not None for c in self.values.values())

    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)

    def row(self, key: str) -> Row:
        return next(r for r in self.rows if r.key == key)

    def value(self, row: str, column: str) -> Cell | None:
        return self.values[(row, column)]

    def config(self, row: str, column: str) -> dict:
        """The paper's configuration of one cell (without seed): the paper's common setup,
        then the table's, the column's and the row's parameters."""
        col = self.column(column)
        return {**self.setup, **self.params, "dataset": col.dataset, **col.params, **self.row(row).params}

    def frame(self):
        """Long DataFrame: table, row, column, row/column labels, paper_mean, paper_std, suspect and
        std_over (what the paper's ± is over)."""
        import pandas as pd

        recs = []
        for r in self.rows:
            for c in self.columns:
                cell = self.values[(r.key, c.key)]
                recs.append({"table": self.id, "row": r.key, "column": c.key, "row_label": r.label,
                             "column_label": c.label, "row_group": r.group, "column_group": c.group,
                             "dataset": c.dataset,
                             "paper_mean": None if cell is None else cell.mean,
                             "paper_std": None if cell is None else cell.std,
                             "suspect": self.suspect.get((r.key, c.key), ""),
                             "std_over": c.std_over or self.std_over})
        return pd.DataFrame(recs).astype({"paper_mean": float, "paper_std": float})


# ------------------------------------------------------------------------------ parsing
_CELL = re.compile(r"^(?P<mean>\d+(?:\.\d+)?)(?:±(?P<std>\d+(?:\.\d+)?))?$")


def parse_cell(text: str) -> Cell | None:
    """``"69.51±1.45"`` -> Cell(69.51, 1.45); ``"53.87"`` -> Cell(53.87); ``"—"`` -> None."""
    text = text.strip()
    if text in ("—", "-", ""):
        return None
    m = _CELL.match(text)
    if not m:
        raise ValueError(f"cannot parse table cell {text!r}")
    return Cell(float(m["mean"]), None if m["std"] is None else float(m["std"]))


def parse_rows(block: str, rows: list[Row], columns: list[Column]) -> dict:
    """One text line per row: label, then one cell per column (``|`` separators ignored)."""
    lines = [ln for ln in block.strip().splitlines() if ln.strip()]
    if len(lines) != len(rows):
        raise ValueError(f"expected {len(rows)} rows, got {len(lines)}")
    values = {}
    for row, line in zip(rows, lines):
        label, *cells = line.replace("|", " ").split()
        if label != row.label.split()[0].replace("(ours)", "").strip() and label != row.key:
            raise ValueError(f"row label {label!r} does not match {row.label!r}")
        if len(cells) != len(columns):
            raise ValueError(f"row {label}: expected {len(columns)} cells, got {len(cells)}")
        for col, text in zip(columns, cells):
            values[(row.key, col.key)] = parse_cell(text)
    return values


def parse_columns(block: str, rows: list[Row], columns: list[Column]) -> dict:
    """One text line per *column* (a table printed transposed): the column's key, then one cell
    per row (``|`` separators ignored)."""
    lines = [ln.replace("|", " ").split() for ln in block.strip().splitlines() if ln.strip()]
    if [ln[0] for ln in lines] != [c.key for c in columns]:
        raise ValueError(f"printed lines {[ln[0] for ln in lines]} do not match columns {[c.key for c in columns]}")
    values = {}
    for key, *cells in lines:
        if len(cells) != len(rows):
            raise ValueError(f"line {key}: expected {len(rows)} cells, got {len(cells)}")
        for row, text in zip(rows, cells):
            values[(row.key, key)] = parse_cell(text)
    return values
