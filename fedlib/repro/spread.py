"""The spread between machines: the same outputs regenerated on two machines, compared.

    python -m fedlib.repro.spread figures/fedlc/quick OTHER/figures/fedlc/quick \\
        --machines "this machine (AMD EPYC, AVX2) vs the machine of commit 1c135e1" --write

On one machine a run's numbers depend only on its configuration, seed and code
version; on another machine other CPU kernels round differently and training
amplifies it.  This compares every table (CSV) that both folders hold, cell by
cell: for a paper table our value (``ours_mean``), for any other table every
numeric column except the paper's values.  Per table it reports the number of
cells, how many are identical, and the median and max |Δ|.

``--write`` adds the measurement to ``<first folder>/_spread.json``, which the
comparisons read (:func:`fedlib.repro.compare.load_spread`: a verdict that flips
within the spread is "undecided") and the index shows.  Several measurements
may be recorded (``--reported`` adds one reported by a person, per table, when
only its summary is known); each table's spread is the largest measured.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["table_spread", "folder_spread", "record", "main"]


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


def folder_spread(ours: str | Path, other: str | Path) -> dict[str, dict]:
    """{table name: spread} over the CSV tables both output folders hold."""
    ours, other = Path(ours), Path(other)
    out = {}
    for path in sorted(ours.glob("*.csv")):
        twin = other / path.name
        if twin.exists():
            s = table_spread(pd.read_csv(path), pd.read_csv(twin))
            if s is not None:
                out[path.stem] = s
    return out


def record(folder: str | Path, tables: dict[str, dict], machines: str, note: str = "") -> Path:
    """Add one measurement to ``<folder>/_spread.json``; each table's entry is the largest spread measured."""
    path = Path(folder) / "_spread.json"
    body = json.loads(path.read_text()) if path.exists() else {"measurements": []}
    body["measurements"] = [m for m in body.get("measurements", []) if m.get("machines") != machines]
    body["measurements"].append({"machines": machines, "note": note, "tables": tables})
    merged: dict[str, dict] = {}
    for m in body["measurements"]:
        for name, s in m["tables"].items():
            if name not in merged or (s.get("max_abs_delta") or 0) > (merged[name].get("max_abs_delta") or 0):
                merged[name] = {**s, "from": m["machines"]}
    body["tables"] = merged
    body["machines"] = "; ".join(m["machines"] for m in body["measurements"])
    body["note"] = " ".join(m["note"] for m in body["measurements"] if m.get("note"))
    path.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedlib.repro.spread", description=__doc__.splitlines()[0])
    parser.add_argument("ours", help="an output folder, figures/<paper>/<profile>")
    parser.add_argument("other", nargs="?", help="the same folder regenerated on another machine")
    parser.add_argument("--machines", required=True, help="which machines were compared, in words")
    parser.add_argument("--note", default="", help="a sentence for the index")
    parser.add_argument("--reported", action="append", default=[],
                        help="TABLE=MEDIAN,MAX: a spread reported by a person (no second folder); repeatable")
    parser.add_argument("--write", action="store_true", help="record it in <ours>/_spread.json")
    args = parser.parse_args(argv)
    tables = folder_spread(args.ours, args.other) if args.other else {}
    for item in args.reported:
        name, values = item.split("=", 1)
        med, mx = (float(v) if v else None for v in values.split(","))
        tables[name] = {"cells": None, "identical": None, "median_abs_delta": med, "max_abs_delta": mx}
    if not tables:
        print("fedlib.repro.spread: error: no table to compare", file=sys.stderr)
        return 2
    for name, s in tables.items():
        med = "—" if s["median_abs_delta"] is None else f"{s['median_abs_delta']:.3f}"
        print(f"{name}: {s['cells']} cells, {s['identical']} identical, median |Δ| {med}, "
              f"max |Δ| {s['max_abs_delta']:.3f}")
    if args.write:
        print(f"recorded in {record(args.ours, tables, args.machines, args.note)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
