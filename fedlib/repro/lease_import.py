"""A GPU lease brought back here: its store parts unpacked into a store (:func:`unpack_store_parts`), earlier
leases' parts that a later one supersedes pruned (:func:`prune_superseded`), the commit it ran at
(:func:`lease_commit`), and its runs imported into the store and the figures (:func:`import_lease`)."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

from .artefacts.provenance import commit_of_code, repo_root
from .lease_data import sha256_file

__all__ = ["unpack_store_parts", "prune_superseded", "lease_commit", "import_lease"]


def unpack_store_parts(lease_dir, store) -> list[str]:
    """The store entries of a lease's tar parts (checked against ``lease.json``'s sha256) into ``store``;
    returns their keys.  Entries are written whole or not at all (a key already finished here is kept)."""
    lease_dir = Path(lease_dir)
    record = json.loads((lease_dir / "lease.json").read_text())
    keys = []
    for part in record.get("parts", []):
        path = lease_dir / part["name"]
        if part.get("pruned") and not path.exists():  # a later lease holds every entry (prune_superseded)
            continue
        if not path.exists() or sha256_file(path) != part["sha256"]:
            raise ValueError(f"{path} is missing or fails its sha256 (lease.json)")
        with tarfile.open(path) as tar:
            for key in part["keys"]:
                if (store.entry(key) / "result.json").exists():
                    continue
                members = [m for m in tar.getmembers() if m.name.startswith(f"{key}/")]
                tar.extractall(store.root, members=members, filter="data")
                keys.append(key)
    return keys


def _reached(record: dict) -> dict[str, int]:
    """Each store key of a lease's record: how far its run got (a finished run counts as past any round)."""
    return {r["key"]: (10**9 if r.get("state") == "finished" else int(r.get("round") or 0))
            for r in record.get("runs", []) if r.get("key")}


def prune_superseded(leases_dir) -> list[str]:
    """Delete the store parts of earlier leases (folders of ``leases_dir``, oldest first by name) whose every
    entry a later lease's parts hold at least as far on; the part stays listed in the earlier ``lease.json``,
    marked ``"pruned": <the later folder>``, and resuming skips it.  The committed bring-backs then stay
    small enough to travel beside a data part.  Returns the deleted parts' paths."""
    folders = sorted(p for p in Path(leases_dir).iterdir() if (p / "lease.json").is_file())
    records = {f: json.loads((f / "lease.json").read_text()) for f in folders}
    removed = []
    for i, folder in enumerate(folders):
        rec, changed = records[folder], False
        reached = _reached(rec)
        for part in rec.get("parts", []):
            if part.get("pruned"):
                continue
            for later in reversed(folders[i + 1:]):
                held = {k for p in records[later].get("parts", []) if not p.get("pruned") for k in p["keys"]}
                got = _reached(records[later])
                if all(k in held and got.get(k, -1) >= reached.get(k, 0) for k in part["keys"]):
                    (folder / part["name"]).unlink(missing_ok=True)
                    part["pruned"] = later.name
                    removed.append(str(folder / part["name"]))
                    changed = True
                    break
        if changed:
            (folder / "lease.json").write_text(json.dumps(rec, indent=1, default=str))
    return removed


def lease_commit(rec: dict, root=None) -> str:
    """The commit a lease ran at: the record's, where git knew it on the device; else the commit whose
    ``fedlib`` files match the record's code fingerprint (the device's copy of the tree has no ``.git``);
    else ``"unknown"``."""
    commit = rec.get("commit") or "unknown"
    if commit == "unknown" and rec.get("code"):
        return commit_of_code(rec["code"], root) or "unknown"
    return commit


def import_lease(lease_dir, *, store=None, figures=None, log=print) -> dict:
    """On a developer machine: a lease's runs into ``store`` (None: the regeneration store), then, per
    paper table of the queue with runs in it, the table and curves of :func:`fedlib.repro.gpu_cells.record`
    into ``figures/<paper>/<profile>/gpu`` (``figures``: the repository's figures folder); ``lease.json``
    beside them.  Runs in another precision than float32 are recorded apart, into ``gpu-<precision>``
    (:func:`fedlib.repro.run.gpu_runs.gpu_folder`), with :func:`fedlib.repro.gpu_cells.precision_check` against
    the same runs in float32 where the store holds them; runs trained at another engine than the vectorized
    one are stored and listed in lease.json, not recorded (the profile's tables do not read them)."""
    from .gpu_cells import gpu_folder, precision_check
    from .gpu_cells import record as record_cells
    from .run.grid import as_store

    lease_dir, store = Path(lease_dir), as_store(store)
    rec = json.loads((lease_dir / "lease.json").read_text())
    rec["commit"] = lease_commit(rec)
    keys = unpack_store_parts(lease_dir, store)
    log(f"{len(keys)} store entries unpacked into {store.root}")
    from .carry import carry_store

    carry_store(store, log=log)  # a lease of an earlier code version: its runs under this code's keys, if carried
    figures = Path(figures) if figures is not None else repo_root() / "figures"
    chosen = rec.get("training", {})
    written = {}
    from .budget.costs import GPU_ENGINES

    if chosen.get("engine", "vectorized") not in GPU_ENGINES:
        log(f"trained at {chosen}: stored, not recorded into the profile's figures")
        return {"keys": keys, "written": written}
    trained_in = chosen.get("precision", "float32")  # a run whose queue entry named its own: that one
    tables: dict[tuple, dict] = {}
    for row in rec["runs"]:  # a run this lease trained, or one an earlier lease left in the store
        held = row.get("key") and store.entry(row["key"]).exists()
        if row.get("kind") != "cell" or not (row["state"] in ("finished", "stopped") or held):
            continue
        t = tables.setdefault((row["paper"], row["source"], row.get("precision") or trained_in),
                              {"rows": [], "columns": [], "seeds": []})
        for k, v in (("rows", row["row"]), ("columns", row["column"]), ("seeds", row["seed"])):
            if v not in t[k]:
                t[k].append(v)
    profile = rec.get("profile", "paper")
    for (paper, table, precision), sel in tables.items():
        out = figures / paper / profile / gpu_folder(precision)
        record_cells(paper, table, out, seeds=sel["seeds"], profile=profile, rows=sel["rows"], columns=sel["columns"],
                     device=rec.get("device", "cuda"), store=store,
                     device_name=(rec.get("device_name") or "").split(" (torch")[0] or None,  # as a result's summary
                     trained_at=rec.get("commit"), precision=precision)
        if precision != "float32":
            check = precision_check(paper, table, out, seeds=sel["seeds"], precision=precision, profile=profile,
                                    rows=sel["rows"], columns=sel["columns"], device=rec.get("device", "cuda"),
                                    store=store, trained_at=rec.get("commit"))
            log(f"{paper} {table}: {precision} against float32: {check['verdict']}")
        (out / "lease.json").write_text(json.dumps({k: v for k, v in rec.items() if k != "runs"} |
                                                   {"runs": [r for r in rec["runs"] if r["paper"] == paper]},
                                                   indent=1, default=str))
        written[f"{paper} {table}" + ("" if precision == "float32" else f" {precision}")] = str(out)
        log(f"{paper} {table}: {out}")
    return {"keys": keys, "written": written}
