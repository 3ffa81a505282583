"""A budget ladder's declaration: one paper's headline comparison and how its ladder climbs
(:class:`LadderSpec`), and where a companion declares it (:func:`spec_for`).  What a ladder is:
:mod:`fedlib.repro.budget.ladder`."""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["LadderSpec", "spec_for"]

_DEFAULT_KEYS = ("rounds", "local_epochs", "max_train_samples")


def _same(cfg: dict) -> dict:
    return cfg


@dataclass(frozen=True)
class LadderSpec:
    """One paper's headline comparison and how its ladder climbs."""

    paper: str
    table: str  # the paper table holding the headline cell
    column: str  # its column key
    method: str  # row key of the paper's method
    baseline: str  # row key of the baseline
    metric: str = "accuracy"  # the run metric the table reports (FedABC: personalized_accuracy)
    scale_keys: tuple[str, ...] = _DEFAULT_KEYS
    rungs: int = 4  # budgets from quick's to the paper's, both included (when all are affordable)
    quick_budget_minutes: float = 30.0  # wall time the quick profile's ladder may take (on its workers)
    # the paper profile on a CPU runs this many seeds: the table's first, then the next (None: the table's)
    cpu_seeds: int | None = None
    tolerance_pp: float = 0.5  # one seed (no std): a change of the distance to the paper's gap below this: "not at all"
    # The paper profile on a CPU: the lowest rung when quick's scale on the paper's dataset does not fit a run there
    # (scale key → value, below quick's; empty: none), and the run limit of the ladder's runs (None: the cost model's)
    cpu_floor: dict = field(default_factory=dict)
    cpu_run_limit_s: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    adjust: Callable[[dict], dict] = _same  # a rescaled cell's settings that follow from its scale keys
    # A rung whose baseline scores within this of chance (100 / classes, %) measures no gap: the finding names it
    # and leaves it out of the trend (FEDIC's FedAvg at 10.00 % on CIFAR-10-LT at the CPU rungs)
    chance_margin_pp: float = 1.0

    def __post_init__(self):
        if self.rungs < 2:
            raise ValueError(f"rungs must be ≥ 2 (quick's budget and the paper's), got {self.rungs}")
        if self.cpu_seeds is not None and (isinstance(self.cpu_seeds, bool) or not isinstance(self.cpu_seeds, int)
                                           or self.cpu_seeds < 1):
            raise ValueError(f"cpu_seeds must be an integer ≥ 1, or None (all of the table's seeds), "
                             f"got {self.cpu_seeds!r}")
        bad = {k: v for k, v in self.cpu_floor.items()
               if k not in self.scale_keys or isinstance(v, bool) or not isinstance(v, int) or v < 1}
        if bad:
            raise ValueError(f"cpu_floor must map scale keys ({', '.join(self.scale_keys)}) to integers ≥ 1, "
                             f"got {bad!r}")
        if not self.chance_margin_pp >= 0:
            raise ValueError(f"chance_margin_pp must be ≥ 0 pp, got {self.chance_margin_pp!r}")
        if self.cpu_run_limit_s is not None and not self.cpu_run_limit_s > 0:
            raise ValueError(f"cpu_run_limit_s must be > 0 seconds, or None (the cost model's), "
                             f"got {self.cpu_run_limit_s!r}")


def spec_for(paper: str) -> LadderSpec:
    """The ladder a companion declares (``fedlib.papers.<paper>.budget.LADDER``)."""
    from ..spec.paper import COMPANIONS, get_paper

    name = get_paper(paper).name
    try:
        module = importlib.import_module(f"{COMPANIONS}.{name}.budget")
    except ImportError as err:
        raise KeyError(f"{name} declares no budget ladder (fedlib/papers/{name}/budget.py: LADDER)") from err
    ladder = getattr(module, "LADDER", None)
    if ladder is None:  # optional: a companion without one shows no ladder, and every reader says so
        raise KeyError(f"{name} declares no budget ladder (fedlib/papers/{name}/budget.py: LADDER)")
    return ladder
