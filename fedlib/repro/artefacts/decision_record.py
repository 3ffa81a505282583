"""One decision of the plan (:mod:`fedlib.repro.artefacts.decision`): the runs that would decide one inconclusive
row (:class:`Decision`), said in one line (:func:`describe`), and decisions cheapest first (:func:`order`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Decision", "describe", "order"]


@dataclass(frozen=True)
class Decision:
    """The runs that would decide one inconclusive row (claim × part × scale)."""
    paper: str
    claim: str
    part: str
    scale: str
    profile: str
    table: str
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    have: int  # seeds every cell holds now (paired)
    target: int | None  # seeds to reach (None: not within the cap at this spread)
    seeds: tuple[int, ...]  # the seeds to add
    runs: int  # runs to train: the cells × the seeds each lacks
    cpu_hours: float | None  # estimated, one core per run (None: a cost not known)
    gpu_hours: float | None  # estimated GPU time of the runs that need a GPU
    device: str  # "cpu" or "cuda"
    sd: float | None  # the paired std the seeds are sized at
    estimate: bool  # sd is a planning estimate (one seed: no spread of the cell itself)
    why: str  # in words: the spread used and where each number comes from
    recorded: int | None = None  # a table regenerating with records: its runs of these cells already recorded
    planned: int | None = None  # ... of this many (the cells at the profile's seeds); None: not such a table
    held: int = 0  # runs of the seeds to add that the committed records hold already (a decide that stopped)

    @property
    def hours(self) -> float:
        """The hours it costs on its device (unknown: infinite, so it sorts last)."""
        h = self.gpu_hours if self.device == "cuda" else self.cpu_hours
        return math.inf if h is None else h

    @property
    def cells(self) -> list[tuple[str, str]]:  # (row, column), column by column
        return [(r, c) for c in self.columns for r in self.rows]


def _hours(h: float | None, unit: str) -> str:
    return f"{unit} time not measured" if h is None else f"≈ {h * 60:.0f} {unit}-min" if h < 1 else \
        f"≈ {h:.1f} {unit}-h"


def describe(d: Decision) -> str:
    """One line: "3 more seeds (2 → 5) of 2 cells at paper scale: 6 runs, ≈ 1.4 CPU-h"."""
    cells = len(d.rows) * len(d.columns)
    where = f"{cells} cell{'s' if cells != 1 else ''} of {d.table} at {d.scale} scale"
    if d.target is None:
        return f"not decidable within 50 seeds at the measured spread ({d.have} seeds of {where})"
    if not d.runs and d.planned is not None:  # a table regenerating: its records hold every run the decision needs
        return (f"{d.target} seeds of {where}: every run is in the committed records ({d.recorded}); render the "
                "table from them (regenerate --render records), then the claims")
    if not d.runs and d.held:
        return (f"{d.target - d.have} more seeds ({d.have} → {d.target}) of {where}: all {d.held} runs in the committed "
                "records (a decide that stopped); decide takes them in seconds and renders the table")
    if not d.runs:
        return f"{d.have} seeds of {where} already, enough to decide it: render the claims again"
    cost = _hours(d.gpu_hours, "GPU") if d.device == "cuda" else _hours(d.cpu_hours, "CPU")
    more = d.target - d.have
    est = " (spread: a planning estimate)" if d.estimate else ""
    runs = (f"{d.runs} runs" + (f" to train, {d.held} more in the committed records (a decide that stopped: "
                                f"{d.held} of {d.runs + d.held} done)" if d.held else "")) if d.planned is None else \
        f"{d.runs} run{'s' if d.runs != 1 else ''} left of its regeneration's {d.planned} ({d.recorded} in the " \
        "committed records)"
    return f"{more} more seed{'s' if more != 1 else ''} ({d.have} → {d.target}) of {where}: {runs}, {cost}{est}"


def order(decisions: list[Decision]) -> list[Decision]:
    """Cheapest decision first: those that decide within the cap, CPU before GPU, then by hours, then name."""
    return sorted(decisions, key=lambda d: (d.target is None, d.device != "cpu", d.hours, d.runs, d.paper, d.claim,
                                            d.part, d.scale))
