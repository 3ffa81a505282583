"""A client's classes by role: majority, minority and absent, under a named threshold rule.

The papers call a client's classes by the same three roles and draw the line between the first two
differently.  One definition, with each paper's threshold as a named rule:

* ``"mean"`` -- FedABC (§Method, "dominated" vs "minority" classes): a present class is majority
  when it holds at least the mean count of the client's present classes;
* ``"max_fraction"`` -- FedLC (Definition 2 asks only ``n_j ≫ n_r > 0 = n_s``; fedlib's reading): a
  present class is majority when it holds at least ``fraction`` × the client's largest count
  (``fraction`` in (0, 1]; 1 makes only the largest classes majority).

>>> roles([5, 1, 0, 4], rule="mean")
['majority', 'minority', 'absent', 'majority']
>>> roles([10, 4, 0, 6], rule="max_fraction", fraction=0.5)
['majority', 'minority', 'absent', 'majority']
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

__all__ = ["ROLES", "RULES", "roles", "split"]

#: The three roles, in the order figures show them.
ROLES = ("majority", "minority", "absent")
#: The threshold rules, by name -> what they call majority (the module docstring says which paper uses which).
RULES = {"mean": "majority: at least the mean count of the client's present classes",
         "max_fraction": "majority: at least `fraction` × the client's largest count"}


def _counts(counts) -> np.ndarray:
    if hasattr(counts, "detach"):  # a torch tensor
        counts = counts.detach().cpu().numpy()
    n = np.asarray(counts, dtype=np.float64)
    if n.ndim != 1 or (n < 0).any() or not np.isfinite(n).all():
        raise ValueError("counts must be a 1-D array of finite class counts ≥ 0")
    return n


def roles(counts: Sequence[float], rule: str = "mean", fraction: float = 0.5) -> list[str]:
    """The role of each class of one client, from its per-class sample ``counts``."""
    if rule not in RULES:
        raise ValueError(f"rule must be one of {', '.join(RULES)}, got {rule!r}")
    if rule == "max_fraction" and (isinstance(fraction, bool) or not isinstance(fraction, (int, float))
                                   or not 0 < fraction <= 1):
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    n = _counts(counts)
    present = n[n > 0]
    if not len(present):
        return ["absent"] * len(n)
    line = present.mean() if rule == "mean" else fraction * present.max()
    return ["absent" if v == 0 else ("majority" if v >= line else "minority") for v in n]


def split(counts: Sequence[float], rule: str = "mean", fraction: float = 0.5) -> tuple[list[int], list[int], list[int]]:
    """``(majority, minority, absent)`` class indices of one client (:func:`roles`)."""
    r = roles(counts, rule, fraction)
    return tuple([c for c, x in enumerate(r) if x == role] for role in ROLES)  # type: ignore[return-value]
