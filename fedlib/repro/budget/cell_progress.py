"""How far the chosen GPU runs of a table have got in the store (:func:`progress`: finished, interrupted or not
started, with their learning curves, each seed's runs paired at one round: :func:`fedlib.repro.run.gpu_runs.paired`)."""

from __future__ import annotations

from ..run.gpu_runs import paired, read_checkpoint
from .cell_jobs import cell_jobs

__all__ = ["progress"]


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
    where the runs of a seed are compared (:func:`fedlib.repro.run.gpu_runs.paired`).  ``curves``: every evaluated
    round of every run (row, column, seed, round, test_accuracy %).
    An interrupted run resumes from its checkpoint when the same command trains it again with this store."""
    import pandas as pd

    from ...config import Config
    from ...store import code_version
    from .costs import gpu_variant
    from ..run.grid import as_store

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
    return paired(runs, curves), curves
