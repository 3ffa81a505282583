"""What a GPU run left in the store, read without training anything: where a precision's records go
(:func:`gpu_folder`), a run's checkpoint read on a CPU (:func:`read_checkpoint`), the round at which a seed's runs
are compared (:func:`paired`) and the runs a comparison counts (:func:`compared`).  The GPU cells command that
trains them is :mod:`fedlib.repro.gpu_cells`."""

from __future__ import annotations

from pathlib import Path

__all__ = ["gpu_folder", "read_checkpoint", "paired", "compared"]


def gpu_folder(precision: str = "float32") -> str:
    """The folder, under ``figures/<paper>/<profile>/``, of the records of GPU runs in ``precision``: ``gpu``
    for float32, ``gpu-<precision>`` for another (a record never mixes precisions)."""
    return "gpu" if precision == "float32" else f"gpu-{precision}"


def read_checkpoint(entry: Path) -> dict | None:
    """A run's checkpoint, read on this machine's CPU (a GPU's tensors mapped to it), or None where there
    is none or its checksum fails.  Read only: unlike the store's own reader, which a run resumes from,
    it never removes an entry (a GPU checkpoint is not corrupted because this machine has no GPU)."""
    import hashlib
    import io

    import torch

    path, sums = entry / "checkpoint.pt", entry / "checkpoint.sha256"
    if not (path.exists() and sums.exists()):
        return None
    blob = path.read_bytes()
    if hashlib.sha256(blob).hexdigest() != sums.read_text().strip():
        return None
    return torch.load(io.BytesIO(blob), map_location="cpu", weights_only=True)


def paired(runs, curves):
    """``runs`` with ``paired_round`` and ``paired_accuracy``: per column and seed, the last evaluated round
    that every row's run of that seed reached, and each run's accuracy there.  Runs stopped at different
    rounds (one finished, one interrupted) are compared there, never at their different last rounds;
    NaN where a run of the seed has no evaluation yet."""
    runs = runs.assign(paired_round=float("nan"), paired_accuracy=float("nan"))
    if runs.empty:
        return runs.astype({"paired_round": "Int64"})
    for (col, seed), group in runs.groupby(["column", "seed"]):
        mine = curves[(curves.column == col) & (curves.seed == seed)]
        reached = [set(mine[mine.row == r]["round"]) for r in group.row]
        common = set.intersection(*reached) if reached else set()
        if not common:
            continue
        at = max(common)
        for i, r in zip(group.index, group.row):
            hit = mine[(mine.row == r) & (mine["round"] == at)]
            runs.loc[i, ["paired_round", "paired_accuracy"]] = [at, float(hit.test_accuracy.iloc[-1])]
    return runs.astype({"paired_round": "Int64"})


def compared(runs):
    """The rows of ``runs`` that a comparison counts: per column, the seeds whose runs were paired at the
    furthest round any seed's were (``paired_round``).  A seed paired earlier (one of its runs still
    training) is left out, not averaged with seeds compared at the end: accuracy at round 60 and at round
    400 are not draws of one quantity."""
    runs = runs[runs.paired_accuracy.notna()]
    if runs.empty:
        return runs
    top = runs.groupby("column").paired_round.transform("max")
    return runs[runs.paired_round == top]
