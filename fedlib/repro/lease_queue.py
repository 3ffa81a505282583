"""A GPU lease's queue (data: ``fedlib/papers/lease_queue.toml``, read by ``python -m fedlib.repro.lease``): its
``[lease]`` settings and ``[[run]]`` entries, the runs they queue (:class:`Job`), and a queued run's configuration
as the lease trains it (:func:`with_lease`, :func:`as_trained`)."""

from __future__ import annotations

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Job", "load_queue", "queue_jobs", "with_lease", "held_variant", "as_trained", "DEFAULT_QUEUE",
           "ENGINES"]

#: The queue a lease trains unless ``--queue`` names another.
DEFAULT_QUEUE = Path(__file__).resolve().parents[1] / "papers" / "lease_queue.toml"
ENGINES = ("vectorized", "compiled", "sequential")


# ----------------------------------------------------------------------------------------- the queue
@dataclass
class Job:
    """One queued run: where it comes from (``label``: paper, table or ladder, row, column, seed) and its
    configuration (a dict, on the lease's device; None: the profile does not run it, ``note`` says why)."""

    label: dict
    config: dict | None
    note: str = ""

    @property
    def name(self) -> str:
        lab = self.label
        return (f"{lab['paper']} {lab['source']} {lab['row']}/{lab['column']} seed {lab['seed']}"
                + (f" in {lab['precision']}" if lab.get("precision") else "")
                + (f" ({lab['engine']} engine)" if lab.get("engine") else ""))


def load_queue(path=None) -> tuple[dict, list[dict]]:
    """``([lease] settings, [[run]] entries)`` of a queue file; an unknown kind or key is an error naming it."""
    path = Path(path or DEFAULT_QUEUE)
    data = tomllib.loads(path.read_text())
    from .budget.costs import GPU_MEMORY_BUDGETS, GPU_MEMORY_FORMATS

    settings = {"profile": "paper", "engines": ["vectorized"], "precisions": ["float32"], "checkpoint_every": 5,
                "pack": "streams", "memory_budget_gb": GPU_MEMORY_BUDGETS[0],
                "memory_formats": [GPU_MEMORY_FORMATS[0]], "order": "file", **data.get("lease", {})}
    from ..precision import PRECISIONS

    bad = [e for e in settings["engines"] if e not in ENGINES] + \
          [p for p in settings["precisions"] if p not in PRECISIONS]
    if bad or not settings["engines"] or not settings["precisions"]:
        raise ValueError(f"{path}: [lease] engines must be among {ENGINES} and precisions among {PRECISIONS}, "
                         f"each non-empty, got {settings['engines']} / {settings['precisions']}")
    if settings["memory_budget_gb"] not in GPU_MEMORY_BUDGETS:
        raise ValueError(f"{path}: [lease] memory_budget_gb must be one of {GPU_MEMORY_BUDGETS} (the budgets whose GPU "
                         f"runs the tables read: fedlib.repro.budget.costs.GPU_MEMORY_BUDGETS), got "
                         f"{settings['memory_budget_gb']!r}")
    settings["memory_budget_gb"] = float(settings["memory_budget_gb"])
    formats = settings["memory_formats"]
    if not isinstance(formats, list) or not formats or any(f not in GPU_MEMORY_FORMATS for f in formats):
        raise ValueError(f"{path}: [lease] memory_formats must be a non-empty list among {GPU_MEMORY_FORMATS} (the "
                         f"layouts whose GPU runs the tables read: fedlib.repro.budget.costs.GPU_MEMORY_FORMATS), got "
                         f"{formats!r}")
    if settings["order"] not in ("file", "plan"):
        raise ValueError(f"{path}: [lease] order must be 'file' or 'plan' (the GPU decisions of "
                         f"fedlib.repro.artefacts.decision first, cheapest first), got {settings['order']!r}")
    if settings["pack"] not in ("streams", "processes"):
        raise ValueError(f"{path}: [lease] pack must be 'streams' or 'processes', got {settings['pack']!r}")
    entries = data.get("run", [])
    known = {"cell": {"kind", "paper", "table", "rows", "columns", "seeds", "precision", "engine"},
             "ladder": {"kind", "paper", "seeds"}}
    for i, e in enumerate(entries):
        kind = e.get("kind")
        if kind not in known:
            raise ValueError(f"{path}: run {i}: kind must be 'cell' or 'ladder', got {kind!r}")
        extra = set(e) - known[kind]
        if extra or "paper" not in e or (kind == "cell" and "table" not in e):
            raise ValueError(f"{path}: run {i} ({kind}) takes {sorted(known[kind])} (paper required"
                             f"{', table too' if kind == 'cell' else ''}), got {sorted(e)}")
        if e.get("precision", "float32") not in PRECISIONS:
            raise ValueError(f"{path}: run {i}: precision must be one of {', '.join(PRECISIONS)}, "
                             f"got {e['precision']!r}")
        if e.get("engine", "vectorized") not in ENGINES:
            raise ValueError(f"{path}: run {i}: engine must be one of {', '.join(ENGINES)}, got {e['engine']!r}")
    return settings, entries


def _profile(paper: str, name: str, device: str):
    from .spec.paper import get_paper

    return dataclasses.replace(get_paper(paper).profile(name), device=device)


def _entry_jobs(entry: dict, profile: str, device: str) -> list[Job]:
    from .budget.cell_jobs import cell_jobs

    paper = entry["paper"]
    prof = _profile(paper, profile, device)
    if entry["kind"] == "cell":
        cells = cell_jobs(paper, entry["table"], profile=profile, rows=entry.get("rows"),
                          columns=entry.get("columns"), device=device, precision=entry.get("precision"))
        source = entry["table"]
        seeds = entry.get("seeds") or prof.seeds_for(entry["table"])
        cells = [{"row": c["row"], "column": c["column"], "config": c["config"], "note": c["note"]} for c in cells]
    else:
        from .budget.ladder import ladder_cells, ladder_seeds, spec_for

        spec = spec_for(paper)
        all_cells, _ = ladder_cells(spec, prof)
        top = max(c["rung"] for c in all_cells)
        cells = [{"row": c["method"], "column": f"{spec.column} rung {top}", "config": c["config"], "note": c["note"]}
                 for c in all_cells if c["rung"] == top]
        source, seeds = "budget_ladder", entry.get("seeds") or ladder_seeds(spec, prof)
    jobs = []
    # an entry's own precision and engine hold whatever the lease trains the others in (the lease's: the run's
    # "precision" and "engine" absent, as the tables configure a cell)
    own = {k: entry[k] for k in ("precision", "engine") if k in entry}
    for seed in seeds:  # seed by seed, the rows of each seed together: a cut-short lease leaves pairs
        for c in cells:
            cfg = None if c["config"] is None else {**c["config"], "device": device, "seed": int(seed), **own}
            jobs.append(Job({"paper": paper, "source": source, "kind": entry["kind"], "row": c["row"],
                             "column": c["column"], "seed": int(seed), **own}, cfg, c["note"]))
    return jobs


def queue_jobs(entries: list[dict], *, profile: str = "paper", device: str = "cuda") -> list[Job]:
    """The queue's runs in priority order, on ``device``; a run an earlier entry queues already (equal store
    key content) keeps its first place (its later duplicates get a note and no config)."""
    from .run.grid import identity

    seen: dict[str, str] = {}
    out = []
    for entry in entries:
        for job in _entry_jobs(entry, profile, device):
            if job.config is not None:
                ident = identity(job.config)
                if ident in seen:
                    job = dataclasses.replace(job, config=None, note=f"the same run as {seen[ident]}")
                else:
                    seen[ident] = job.name
            out.append(job)
    return out


def with_lease(cfg: dict, engine: str, precision: str, checkpoint_every: int,
               memory_budget_gb: float | None = None, memory_format: str | None = None) -> dict:
    """A queued run as the lease trains it: its checkpoints, ``engine`` and ``precision`` unless its queue
    entry names its own, and the lease's ``memory_budget_gb`` and ``memory_format`` (None: the configuration's)."""
    budget = {} if memory_budget_gb is None or "memory_budget_gb" in cfg else {"memory_budget_gb": memory_budget_gb}
    layout = {} if memory_format is None or "memory_format" in cfg else {"memory_format": memory_format}
    return {**cfg, "engine": cfg.get("engine") or engine, "precision": cfg.get("precision") or precision,
            "checkpoint_every": int(checkpoint_every), **budget, **layout}


def held_variant(store, cfg: dict) -> dict:
    """The engine, memory budget and layout a queued run (``cfg``: as the lease trains it) trains under: those an
    earlier lease finished (else checkpointed) it under (:func:`fedlib.repro.budget.costs.gpu_variant`), so that
    it is skipped or resumed, not started again under another key; else ``cfg``'s."""
    from .budget.costs import GPU_ENGINES, gpu_variant

    return gpu_variant(store, cfg)[0] if cfg["engine"] in GPU_ENGINES else {}


def as_trained(job: Job, store, engine: str, precision: str, checkpoint_every: int,
               memory_budget_gb: float | None = None, memory_format: str | None = None) -> dict:
    """``job``'s configuration as the lease trains it: :func:`with_lease`, under the engine, memory budget and
    layout that hold it in ``store`` (:func:`held_variant`) where ``store`` is given."""
    cfg = with_lease(job.config, engine, precision, checkpoint_every, memory_budget_gb, memory_format)
    return cfg if store is None else {**cfg, **held_variant(store, cfg)}
