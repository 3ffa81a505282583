"""Run-to-run spread: what a verdict may be decided against.

A verdict ("within the paper's std", "the best method agrees", "the gain has the
paper's sign") is decided only against a spread that was **measured**; where none
was, it says "spread not measured".  Three spreads are measured:

* **std over seeds** of a cell, where the cell ran with several seeds (by
  :func:`fedlib.repro.run.grid.aggregate`);
* **seed-to-seed** spread of a table, measured on its headline comparison
  (the paper's method and baseline in every column, 3 seeds by default)::

      python -m fedlib.repro.measure_spread fedabc --profile quick --seeds 0,1,2 --write

  which runs those cells (store-backed: a cell already in the store is not
  trained again) and records, per table, the std over seeds of every headline
  cell and of the headline gain (:func:`fedlib.repro.verdict.seeds.seed_spread`);
* **cross-machine** spread of a table: the same outputs regenerated on two
  machines, compared cell by cell::

      python -m fedlib.repro.verdict.spread figures/fedlc/quick OTHER/figures/fedlc/quick \\
          --machines "this machine (AMD EPYC, AVX2) vs the machine of commit 1c135e1" --write

  On one machine a run's numbers depend only on its configuration, seed and
  code version; on another, other CPU kernels round differently and training
  amplifies it.  Per table: the number of cells, how many are identical, the
  median and max |Δ| (:func:`table_spread`).

``--write`` adds the measurement to ``<folder>/_spread.json``, which the
comparisons read (:func:`spread_for`: it widens a cell's own std over seeds, and
never stands in for a cell of one seed, :mod:`fedlib.repro.verdict.compare`) and
the index shows.  Several
cross-machine measurements may be recorded (``--reported`` adds one reported by
a person, per table, when only its summary is known); each table's spread is the
largest measured.  A table without a cross-machine measurement of its own takes
the largest measured on the tables of the same profile **that report the same
metric** (a table of D ratios never lends its spread to a table of accuracies);
its verdicts name that source.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["Spread", "table_spread", "folder_spread", "record", "record_seed_spread", "load_spread", "spread_for",
           "table_metric", "main", "SEED_COMMAND", "SPREAD_FILE"]

#: The file beside a profile's outputs (``figures/<paper>/<profile>/``) that holds its measured spreads.
SPREAD_FILE = "_spread.json"
#: The command that measures a paper's seed-to-seed spread (:mod:`fedlib.repro.measure_spread`).
SEED_COMMAND = "python -m fedlib.repro.measure_spread {paper} --profile {profile} --seeds 0,1,2 --write"


@dataclass(frozen=True)
class Spread:
    """A measured run-to-run spread (pp) and where it comes from, in words."""
    value: float
    source: str


# ------------------------------------------------------------------------------ cross-machine
def _numeric(frame: pd.DataFrame) -> list[str]:
    if "ours_mean" in frame:
        return ["ours_mean"]
    skip = {"seed", "round", "client", "class", "n_seeds", "order"}
    return [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c]) and not c.startswith("paper")
            and c not in skip and not c.endswith("std")]


def table_spread(a: pd.DataFrame, b: pd.DataFrame) -> dict | None:
    """Cells, identical cells, median and max |Δ| between two versions of one table (None when their
    shapes differ)."""
    if len(a) != len(b):
        return None
    cols = [c for c in _numeric(a) if c in b]
    if not cols:
        return None
    x = a[cols].to_numpy(dtype=float).ravel()
    y = b[cols].to_numpy(dtype=float).ravel()
    both = ~(np.isnan(x) | np.isnan(y))
    if not both.any():
        return None
    d = np.abs(x[both] - y[both])
    return {"cells": int(both.sum()), "identical": int((d == 0).sum()), "median_abs_delta": float(np.median(d)),
            "max_abs_delta": float(d.max())}


def table_metric(folder: str | Path, name: str) -> str | None:
    """The metric a table of ``folder`` reports, from its sidecar: a paper table's ``parameters.value``
    when it is one metric for every cell; None for any other table (its unit is its own)."""
    path = Path(folder) / f"{name}.json"
    try:
        meta = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    value = (meta.get("parameters") or {}).get("value")
    return value if meta.get("paper_table") and isinstance(value, str) else None


def folder_spread(ours: str | Path, other: str | Path) -> dict[str, dict]:
    """{table name: spread} over the CSV tables both output folders hold (with the metric each reports,
    :func:`table_metric`)."""
    ours, other = Path(ours), Path(other)
    out = {}
    for path in sorted(ours.glob("*.csv")):
        twin = other / path.name
        if twin.exists():
            s = table_spread(pd.read_csv(path), pd.read_csv(twin))
            if s is not None:
                out[path.stem] = {**s, "metric": table_metric(ours, path.stem)}
    return out


def _read(folder: str | Path) -> dict:
    path = Path(folder) / SPREAD_FILE
    return json.loads(path.read_text()) if path.exists() else {"measurements": []}


def _write(folder: str | Path, body: dict) -> Path:
    path = Path(folder) / SPREAD_FILE
    path.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    return path


def record(folder: str | Path, tables: dict[str, dict], machines: str, note: str = "", cpus: str = "") -> Path:
    """Add one cross-machine measurement to ``<folder>/_spread.json``; each table's entry is the largest
    spread measured.  ``cpus``: the two CPUs compared, vendor and model (``fedlib.repro.run.machine.cpu``), or
    "not recorded" for outputs made before sidecars named their CPU."""
    body = _read(folder)
    body["measurements"] = [m for m in body.get("measurements", []) if m.get("machines") != machines]
    body["measurements"].append({"machines": machines, "note": note, "tables": tables,
                                 **({"cpus": cpus} if cpus else {})})
    merged: dict[str, dict] = {}
    for m in body["measurements"]:
        for name, s in m["tables"].items():
            if name not in merged or (s.get("max_abs_delta") or 0) > (merged[name].get("max_abs_delta") or 0):
                merged[name] = {**s, "from": m["machines"], "cpus": m.get("cpus", "not recorded")}
    body["tables"] = merged
    body["machines"] = "; ".join(m["machines"] for m in body["measurements"])
    body["note"] = " ".join(m["note"] for m in body["measurements"] if m.get("note"))
    return _write(folder, body)


# ------------------------------------------------------------------------------ seed-to-seed
def record_seed_spread(folder: str | Path, tables: dict[str, dict], command: str, commit: str = "") -> Path:
    """Record seed-to-seed spreads per table in ``<folder>/_spread.json`` (``seed_to_seed``), replacing earlier
    ones of the same tables."""
    body = _read(folder)
    seeds = body.setdefault("seed_to_seed", {"tables": {}})
    for name, s in tables.items():
        seeds["tables"][name] = {**s, "command": command, "git_commit": commit}
    return _write(folder, body)


# ------------------------------------------------------------------------------ reading
def load_spread(out_dir: str | Path | None) -> dict[str, float]:
    """The cross-machine spread each table of a profile's outputs has measured for itself
    (``_spread.json``), as {table: max |Δ|}; {} if none."""
    if out_dir is None or not (Path(out_dir) / SPREAD_FILE).exists():
        return {}
    body = _read(out_dir)
    return {t: float(v["max_abs_delta"]) for t, v in body.get("tables", {}).items()
            if v.get("max_abs_delta") is not None}


def spread_for(out_dir: str | Path | None, table: str, metric: str | None = "accuracy") -> list[Spread]:
    """The measured spreads a table's verdicts may use (empty: none measured): its seed-to-seed spread,
    and its cross-machine spread -- its own, else the largest measured on a table of the same profile that
    reports the same ``metric`` (never one of another metric or unit)."""
    if out_dir is None or not (Path(out_dir) / SPREAD_FILE).exists():
        return []
    body = _read(out_dir)
    out = []
    seeds = body.get("seed_to_seed", {}).get("tables", {}).get(table)
    if seeds and seeds.get("max_std") is not None:
        out.append(Spread(float(seeds["max_std"]), f"seed-to-seed (max std over seeds {seeds.get('seeds')} of "
                                                   f"the headline cells)"))
    own = load_spread(out_dir)
    if table in own:
        out.append(Spread(own[table], "cross-machine (this table)"))
    elif metric is not None:
        entries = body.get("tables", {})
        donors = {t: v for t, v in own.items()
                  if (entries[t].get("metric") if "metric" in entries[t] else table_metric(out_dir, t)) == metric}
        if donors:
            name = max(donors, key=donors.get)
            out.append(Spread(donors[name], f"cross-machine (largest measured on a {metric} table: {name})"))
    return out


# ------------------------------------------------------------------------------ command line
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m fedlib.repro.verdict.spread", description=__doc__.splitlines()[0])
    parser.add_argument("ours", help="an output folder, figures/<paper>/<profile>")
    parser.add_argument("other", nargs="?", help="the same folder regenerated on another machine")
    parser.add_argument("--machines", required=True, help="which machines were compared, in words")
    parser.add_argument("--note", default="", help="a sentence for the index")
    parser.add_argument("--cpus", default="", help="the two CPUs compared, vendor and model (python fedlib/repro/run/machine.py)")
    parser.add_argument("--reported", action="append", default=[],
                        help="TABLE=MEDIAN,MAX: a spread reported by a person (no second folder); repeatable")
    parser.add_argument("--write", action="store_true", help="record it in <ours>/_spread.json")
    args = parser.parse_args(argv)
    tables = folder_spread(args.ours, args.other) if args.other else {}
    for item in args.reported:
        name, values = item.split("=", 1)
        med, mx = (float(v) if v else None for v in values.split(","))
        tables[name] = {"cells": None, "identical": None, "median_abs_delta": med, "max_abs_delta": mx,
                        "metric": table_metric(args.ours, name)}
    if not tables:
        print("fedlib.repro.verdict.spread: error: no table to compare", file=sys.stderr)
        return 2
    for name, s in tables.items():
        med = "—" if s["median_abs_delta"] is None else f"{s['median_abs_delta']:.3f}"
        print(f"{name}: {s['cells']} cells, {s['identical']} identical, median |Δ| {med}, "
              f"max |Δ| {s['max_abs_delta']:.3f}")
    if args.write:
        print(f"recorded in {record(args.ours, tables, args.machines, args.note, args.cpus)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
