"""How far the chosen GPU runs of a table have got in the store (:func:`progress`: finished, interrupted or not
started, with their learning curves), the round at which a seed's runs are compared (``paired_round``) and the
runs a comparison counts (:func:`compared`)."""

from __future__ import annotations

from pathlib import Path

from .cell_jobs import cell_jobs

__all__ = ["progress", "compared", "read_checkpoint"]


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


def progress(paper: str, table: str, *, seeds, profile: str = "paper", rows=None, columns=None,
             device: str = "cuda", store=None, device_name: str | None = None, precision: str | None = None):
    """How far each chosen run has got in ``store``: ``(runs, curves)``.

    ``runs``: one row per cell and seed with ``state`` (``finished``, ``interrupted`` -- a checkpoint,
    no result -- or ``not started``), the ``round`` reached of ``rounds`` (of a method with several
    stages: the round within ``stage``, the index of the stage it stopped in), the last evaluated test
    ``accuracy`` (%), the training seconds so far (``elapsed_s``), the ``device_name`` (from the result's
    summary; ``device_name`` for runs whose summary is not written yet), the ``precision``, the ``engine``,
    ``memory_budget_gb`` and ``memory_format`` (:func:`~fedlib.repro.budget.costs.gpu_variant`: those whose entry
    the store holds) and the training code version of the store key; ``paired_round`` and ``paired_accuracy``,
    where the runs of a seed are compared (:func:`_paired`).  ``curves``: every evaluated round of every run (row,
    column, seed, round, test_accuracy %).
    An interrupted run resumes from its checkpoint when the same command trains it again with this store."""
    import pandas as pd

    from ...config import Config
    from ...store import code_version
    from ..budget.costs import gpu_variant
    from .grid import as_store

    store = as_store(store)
    runs, curves = [], []
    for job in cell_jobs(paper, table, profile=profile, rows=rows, columns=columns, device=device,
                         precision=precision):
        if job["config"] is None:
            continue
        for seed in seeds:
            cfg = Config.from_dict({**job["config"], "seed": int(seed)})
            variant, key = gpu_variant(store, cfg.to_dict())  # the engine and memory budget it trained under
            result = store.load_result(key)
            row = {"row": job["row"], "column": job["column"], "seed": int(seed), "rounds": cfg.rounds,
                   "device_name": device_name, "precision": cfg.precision, **variant,
                   "code_version": code_version(cfg), "key": key}
            if result is not None:
                history, summary = result["history"], result["summary"]
                row.update(state="finished", round=cfg.rounds, elapsed_s=summary.get("wall_time_s"),
                           device_name=summary.get("device_name") or device_name)
            else:
                ckpt = read_checkpoint(store.entry(key))
                stage = (ckpt or {}).get("stage_state") or {}
                history = list((ckpt or {}).get("history") or []) + list(stage.get("history") or [])
                row.update(state="interrupted" if ckpt else "not started", round=stage.get("round", 0),
                           elapsed_s=(ckpt or {}).get("elapsed_s"), stage=(ckpt or {}).get("stage", 0),
                           device_name=device_name if ckpt else None)  # not started: on no device yet
            evaluated = [h for h in history if h.get("test_accuracy") is not None]
            row["accuracy"] = 100.0 * evaluated[-1]["test_accuracy"] if evaluated else None
            runs.append(row)
            curves += [{"row": job["row"], "column": job["column"], "seed": int(seed), "round": h["round"],
                        "test_accuracy": 100.0 * h["test_accuracy"]} for h in evaluated]
    runs = pd.DataFrame(runs)
    curves = pd.DataFrame(curves, columns=["row", "column", "seed", "round", "test_accuracy"])
    return _paired(runs, curves), curves


def _paired(runs, curves):
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
