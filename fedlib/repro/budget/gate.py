"""The one gate: whether a cell trains here, comes from the store, or is "not run", and why.

Tables and studies ask it the same question, so the answer to "why does this figure say
*not run*?" is in this module and nowhere else:

1. :meth:`fedlib.repro.spec.profiles.Profile.resolve` turns the paper's configuration into the
   profile's (datasets substituted, overrides applied); a profile that never runs the cell
   says so (a dataset it does not use, one the paper's companion does not support).
2. Where the profile declares a cost model (the ``paper`` profile), a cell this machine
   cannot afford is "not run: needs a GPU (est. …)" (:meth:`fedlib.repro.budget.costs.CostModel.gate`),
   unless a GPU already trained it into the store (:func:`fedlib.repro.budget.costs.stored_gpu_runs`) in
   the profile's ``gpu_precision``: then its seeds come from there, and the note names the precision.
3. A gated cell whose dataset is absent here says that first.

>>> cfg, note = decide(profile, table.config("fedlc", "cifar10_beta0.5"), "table1")  # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["decide", "table_cells", "data_view"]


def decide(profile: Any, base: dict, experiment: str | None = None, *, then: Mapping[str, Any] | None = None,
           substitute: bool = True) -> tuple[dict | None, str]:
    """``(config, note)`` of a cell under ``profile``: the configuration to run (``config["device"]
    == "cuda"`` where a GPU's stored runs stand in), or ``(None, why)`` when it is not run here.

    ``then``: the values the cell fixes after the profile's (a study's own setting, its rounds, a
    pinned ``seed``).  They are applied before the cost gate and the lookup of stored GPU runs, so
    both are made for the configuration that trains: the gate decides once, and no caller edits
    its answer (``tests/test_settings.py`` reads the companions' source for that)."""
    from ...data import DATASETS, dataset_present
    from .costs import gpu_config, gpu_note, stored_gpu_runs

    cfg, note = profile.resolve(base, experiment, substitute=substitute)
    if cfg is None:
        return None, note
    if then:
        cfg = {**cfg, **then}
    trains = experiment is None or profile.setting(experiment, "trains", True)
    if profile.cost is None or not trains:
        return cfg, note
    wanted = cfg
    cfg, gated = profile.cost.gate(cfg, profile.device)  # on a CPU, the runs it affords; on a GPU, every run
    if cfg is not None and cfg.get("device", "cpu") != "cpu" and profile.gpu_precision != "float32":
        cfg = {**cfg, "precision": profile.gpu_precision}  # on a GPU, it trains as its stored runs are read
    seeds = profile.seeds_for(experiment) if experiment is not None else profile.seeds
    if "seed" in wanted:  # a cell pinned to one seed
        seeds = (int(wanted["seed"]),)
    on_gpu = gpu_config(wanted, profile.gpu_precision)
    found = stored_gpu_runs(on_gpu, seeds) if gated else {}
    used = wanted.get("dataset")
    if found:  # a GPU trained it (python -m fedlib.repro.gpu_cells): its seeds come from the store
        cfg, gated = on_gpu, gpu_note(found, seeds, profile.gpu_precision)
    elif gated and used in DATASETS and not dataset_present(used):  # the first reason it does not run here
        label = profile.companion.dataset_label(used)
        gated = (f"not run: {label} is absent here (no files under the data root); where "
                 f"present, {gated.removeprefix('not run').lstrip(': ')}")
    return cfg, gated or note


def table_cells(profile: Any, table_id: str) -> list[dict]:
    """Every cell of a paper table under ``profile``: dicts with row, column, config (None if not
    run) and note, in the table's order; the profile's ``columns``/``rows`` restrictions apply."""
    t = profile.companion.table(table_id)
    opts = profile.experiment(t.id)
    cols, rows = opts.get("columns"), opts.get("rows")
    out = []
    for r in t.rows:
        for c in t.columns:
            cfg, note = decide(profile, t.config(r.key, c.key), t.id)
            if cfg is not None and ((cols is not None and c.key not in cols)
                                    or (rows is not None and r.key not in rows)):
                cfg, note = None, f"not run: grid reduced in the {profile.name!r} profile"
            out.append({"row": r.key, "column": c.key, "config": cfg, "note": note})
    return out


def data_view(config: dict, seed: int, **fixed: Any) -> dict:
    """A gated ``config`` made into one that is only *prepared*, never trained: its data, partition
    and initial model under ``seed`` (one round, ``fixed`` on top), for a study that looks at what a
    cell's clients hold.  A new dict: the gate's answer is never edited."""
    return {**config, "seed": int(seed), "rounds": 1, **fixed}
