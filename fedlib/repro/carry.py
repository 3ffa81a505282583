"""Carry stored runs over a change of the training code that leaves their numbers bit for bit the same.

A run's store key holds the version of the training code it used (:func:`fedlib.store.code_version`: a hash
of the core's source and of its method's and model's modules).  Any edit to those files moves the version, and
every stored run falls under a stale key.  On a CPU that costs a retraining.  A GPU run costs a GPU lease,
which this machine does not have.  So an edit that changes no number (a new engine beside the old one, a
comment, a refactor) would still throw away the GPU's work.

A **carry** is the evidence that it changes no number, kept as data in ``benchmarks/carries/<from>-<to>.json``:

1. :func:`check` takes the configurations to carry (the store's stale runs, or the lease queue's) and groups
   them by the code they run: method, model and engine.  For each group it trains one tiny configuration
   (:func:`fedlib.repro.run.tiny.tiny_config`, two rounds, this CPU, float32) twice, in two fresh processes: once with
   the old commit's ``fedlib`` (``git archive``) and once with the current one.  It compares every parameter
   and every evaluated number, bit for bit.  Both runs use this CPU's kernels, so equal code gives equal bits.
   It records each group's old and new code version and whether the two runs were identical.
2. :func:`carry_store` copies each stale entry of a store whose old version the record maps (identical groups
   only) to the key the current code gives it.  It writes ``carried.json`` beside the copy, naming the record.
   The lease (``--resume``, ``--import``) and ``python -m fedlib.repro.carry --apply`` call it.
3. :func:`carry_records` does the same for the run records a checkout carries (``--records
   figures/<paper>/<profile>``, with ``--from`` to check their groups and with ``--apply`` to carry them): a
   record's ``code_version`` moves to the current one and ``carried`` names the record, so a regeneration that
   stopped goes on from its finished runs after a change that moves no number (:mod:`fedlib.repro.run.records`).

What a carry does not prove: that a code path the tiny CPU run never takes (CUDA-only branches, another
precision, a stage the tiny configuration skips) is unchanged.  The record lists the paths it trained, and a
reviewer reads the diff between the two commits beside it.  Nor does it say on which machine a carried run or
record was computed: the same code rounds otherwise on other CPU kernels, so a record trained elsewhere keeps that
machine's numbers (``docs/regenerating.md``, "One code, several machines"; records name their machine since
2026-11-29).

    python -m fedlib.repro.carry --from ed092fa --store .fedlib-store     # check the stale runs, write the record
    python -m fedlib.repro.carry --apply --store .fedlib-store            # copy them under their current keys
    python -m fedlib.repro.carry --apply --records figures/fedabc/paper   # and carry a paper's run records
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

__all__ = ["CARRIES", "stale_entries", "stale_records", "check", "carry_store", "carry_records", "load_carries", "main"]

#: the tiny configurations of a group tried before it is reported "not checked" (a tiny run that fails: a
#: Dirichlet draw at α = 0.01 that no tiny subset allows)
TINY_TRIES = 3
#: where carry records are committed (they travel with the tree to a lease's device)
CARRIES = Path(__file__).resolve().parents[2] / "benchmarks" / "carries"

# Run in a fresh process whose ``fedlib`` is the copy under test (PYTHONPATH): it uses only what every version
# has (Config, code_version, simulate), and prints one JSON line.
_RUNNER = r"""
import json, sys, torch
import fedlib
from fedlib.config import Config
from fedlib.simulation import simulate
from fedlib.store import code_version
spec = json.loads(sys.stdin.read())
out = {"fedlib": fedlib.__file__, "versions": [code_version(Config.from_dict(c)) for c in spec["configs"]]}
if spec.get("tiny"):
    run = simulate(Config.from_dict(spec["tiny"]), store=None, progress=False)
    torch.save({k: v.detach().cpu() for k, v in run["params"].items()}, spec["params_out"])
    out["history"] = [{k: v for k, v in row.items() if "time" not in k} for row in run["history"]]
print("CARRY " + json.dumps(out, default=str))
"""


def _key_for(config, version: str) -> str:
    """The store key of ``config`` under the code version ``version`` (:meth:`fedlib.store.Store.key`'s rule)."""
    payload = {"config": config.key_dict(), "code": version}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:20]


def _entry_config(entry: Path) -> dict | None:
    for name in ("result.json", "config.json"):
        path = entry / name
        if path.exists():
            body = json.loads(path.read_text())
            return body.get("config", body) if name == "result.json" else body
    return None


def stale_entries(store) -> list[tuple[str, dict]]:
    """``(key, config)`` of every entry of ``store`` whose key is not the one the current code gives its
    configuration (trained at another code version)."""
    from ..config import Config

    out = []
    for entry in sorted(p for p in Path(store.root).iterdir() if p.is_dir()) if Path(store.root).is_dir() else []:
        cfg = _entry_config(entry)
        if cfg is None:
            continue
        try:
            if store.key(Config.from_dict(cfg)) != entry.name:
                out.append((entry.name, cfg))
        except Exception:  # noqa: BLE001 -- a configuration this code cannot read is not carried
            continue
    return out


def stale_records(folder) -> list[dict]:
    """The run records of ``figures/<paper>/<profile>`` (``folder``) trained at another code version than the one
    the current code gives their configuration (:mod:`fedlib.repro.run.records`).  A "not run" record (its
    dataset absent, or a GPU's) holds no number, so there is nothing to carry: its run is tried again as it is."""
    from ..config import Config
    from ..store import code_version
    from .run.records import RECORDS_FILE, read, trained

    out = []
    for rec in trained(read(Path(folder) / RECORDS_FILE)):
        try:
            if rec.get("code_version") and rec["code_version"] != code_version(Config.from_dict(rec["config"])):
                out.append(rec)
        except Exception:  # noqa: BLE001 -- a configuration this code cannot read is not carried
            continue
    return out


def _group(cfg: dict) -> str:
    """The code a configuration runs: ``"<method> <model> <engine>"`` (the model resolved where it is "auto")."""
    from ..config import Config, default_model

    c = Config.from_dict(cfg)
    return f"{c.method} {default_model(c.dataset) if c.model in (None, 'auto') else c.model} {c.engine}"


def _run(root: Path, configs: list[dict], tiny: dict | None, params_out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONHASHSEED": "0"}
    spec = {"configs": configs, "tiny": tiny, "params_out": str(params_out)}
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(spec), capture_output=True, text=True,
                          cwd=root, env=env, timeout=1800)  # on stdin: a group of thousands of runs outgrows argv
    line = next((x for x in proc.stdout.splitlines() if x.startswith("CARRY ")), None)
    if proc.returncode != 0 or line is None:
        raise RuntimeError(f"the tiny run under {root} failed: {proc.stderr[-2000:]}")
    out = json.loads(line[len("CARRY "):])
    if not Path(out["fedlib"]).resolve().is_relative_to(root.resolve()):
        raise RuntimeError(f"the run under {root} imported another fedlib ({out['fedlib']})")
    return out


def _identical(a: Path, b: Path, ha: list, hb: list) -> bool:
    import torch

    pa, pb = torch.load(a, weights_only=True), torch.load(b, weights_only=True)
    return (ha == hb and pa.keys() == pb.keys()
            and all(pa[k].dtype == pb[k].dtype and torch.equal(pa[k], pb[k]) for k in pa))


def _export(commit: str, dest: Path, repo: Path) -> None:
    """``fedlib/`` as it is at ``commit``, into ``dest`` (``git archive``)."""
    archive = subprocess.run(["git", "archive", "--format=tar", commit, "fedlib"], cwd=repo, capture_output=True,
                             timeout=120)
    if archive.returncode != 0:
        raise ValueError(f"from must name a commit of this repository, got {commit!r}: "
                         f"{archive.stderr.decode()[-300:]}")
    with tarfile.open(fileobj=__import__("io").BytesIO(archive.stdout)) as tar:
        tar.extractall(dest, filter="data")


def check(configs: list[dict], *, from_commit: str | None = None, from_root=None, root=None, log=print) -> dict:
    """Whether the code at ``from_commit`` (or the copy of ``fedlib/`` under ``from_root``) and the current code
    (under ``root``: the repository) give every group of ``configs`` the same numbers: the record described in
    the module docstring (``paths``: one row a group; ``versions``: a group's old and new code version, for the
    identical groups only)."""
    from ..config import Config
    from .artefacts.provenance import git_commit, repo_root
    from .run.tiny import tiny_config

    if (from_commit is None) == (from_root is None):
        raise ValueError("give one of from_commit (a commit) and from_root (a folder holding an old fedlib/)")
    root = Path(root) if root is not None else repo_root()
    groups: dict[str, list[dict]] = {}
    for cfg in configs:
        groups.setdefault(_group(cfg), []).append(cfg)
    record = {"from_commit": from_commit, "to_commit": git_commit(), "paths": [], "versions": [],
              "how": "each group's tiny configuration (fedlib.repro.run.tiny.tiny_config, 2 rounds) trained on this CPU "
                     "in float32 by each code, in a fresh process; parameters and evaluated numbers compared bit "
                     "for bit"}
    with tempfile.TemporaryDirectory(prefix="fedlib-carry-") as tmp:
        old_root = Path(from_root) if from_root is not None else Path(tmp) / "old"
        if from_commit is not None:
            _export(from_commit, old_root, root)
        for name, members in sorted(groups.items()):
            tried, failed, old = [], None, None
            for member in members:  # the first member whose tiny run trains (Dir(0.01) may find no tiny draw)
                tiny = {**tiny_config(member), "rounds": 2}
                if member.get("dataset", "synthetic") == "synthetic":  # its size is its clients': no subset
                    tiny.pop("max_train_samples"), tiny.pop("max_test_samples")
                if tiny in tried:
                    continue
                Config.from_dict(tiny)  # a configuration this code cannot build is an error here, before any run
                tried.append(tiny)
                try:
                    old = _run(old_root, members, tiny, Path(tmp) / "old.pt")
                    new = _run(root, members, tiny, Path(tmp) / "new.pt")
                    break
                except RuntimeError as e:
                    old, failed = None, str(e).strip().splitlines()[-1]
                    if len(tried) == TINY_TRIES:
                        break
            if old is None:  # no tiny run trained: the group is not checked, and so not carried
                record["paths"].append({"path": name, "runs": len(members), "identical": False, "tiny": tiny,
                                        "failed": failed})
                log(f"{name}: NOT CHECKED ({len(members)} runs): {failed}")
                continue
            same = _identical(Path(tmp) / "old.pt", Path(tmp) / "new.pt", old["history"], new["history"])
            row = {"path": name, "runs": len(members), "identical": same, "tiny": tiny,
                   "from_versions": sorted(set(old["versions"])), "to_versions": sorted(set(new["versions"]))}
            record["paths"].append(row)
            if same:  # per group: another engine of the same method and model has the same versions
                pairs = sorted(set(zip(old["versions"], new["versions"])))
                record["versions"] += [{"path": name, "from": o, "to": n} for o, n in pairs]
            log(f"{name}: {'identical' if same else 'DIFFERENT'} ({len(members)} runs)")
    return record


def load_carries(folder=None) -> list[dict]:
    """Every committed carry record (``benchmarks/carries/*.json``), each with its ``name``."""
    folder = Path(folder) if folder is not None else CARRIES
    return [{**json.loads(p.read_text()), "name": p.name} for p in sorted(folder.glob("*.json"))] \
        if folder.is_dir() else []


def _newest(entry: Path, skip: str = "") -> float:
    """The latest modification time of ``entry``'s files (but ``skip``)."""
    return max((p.stat().st_mtime for p in entry.iterdir() if p.is_file() and p.name != skip), default=0.0)


def _refresh(source: Path, target: Path) -> bool:
    """Whether the carried copy ``target`` should be copied again from ``source``: nothing has written to it
    since its carry (its files are no newer than its ``carried.json``: no run resumed under the new key) and its
    source has changed since (a run still training under the old code when it was carried, a checkpoint then)."""
    note = target / "carried.json"
    if not note.exists():
        return False
    carried_at = note.stat().st_mtime
    return _newest(target, skip=note.name) <= carried_at < _newest(source)


def carry_store(store, records=None, *, log=print) -> list[tuple[str, str]]:
    """Copy each stale entry of ``store`` that a record's ``versions`` map to its current key (with
    ``carried.json``: the record, the old key and both versions); an entry already under its current key, or
    whose group (method, model, engine) and old version no record maps, is left as it is.  A copy carried
    earlier is carried again where its source has moved on since and the copy has not (:func:`_refresh`: a run
    that was still training under the old code).  Returns ``(old key, new key)`` pairs."""
    from ..config import Config
    from ..store import code_version

    records = load_carries() if records is None else records
    done = []
    for key, cfg in stale_entries(store):
        config = Config.from_dict(cfg)
        now = code_version(config)
        for rec in records:
            old = next((v["from"] for v in rec.get("versions", []) if v["path"] == _group(cfg) and v["to"] == now
                        and _key_for(config, v["from"]) == key), None)
            if old is None:
                continue
            new_key = store.key(config)
            target = store.entry(new_key)
            if target.exists() and _refresh(store.entry(key), target):
                shutil.rmtree(target)
            if not target.exists():
                shutil.copytree(store.entry(key), target)
                (target / "carried.json").write_text(json.dumps(
                    {"record": rec.get("name"), "from_key": key, "from_version": old, "to_version": now,
                     "from_commit": rec.get("from_commit"), "to_commit": rec.get("to_commit")}, indent=1))
                done.append((key, new_key))
                log(f"carried {key} -> {new_key} ({rec.get('name')})")
            break
    return done


def carry_records(folder, carries=None, *, log=print) -> int:
    """Carry the stale run records of ``folder`` (:func:`stale_records`) that a carry record maps, group and old
    version, to the current code version: their ``code_version`` becomes the current one and ``carried`` names
    the record and the old version, so a regeneration goes on from them (:func:`fedlib.repro.run.records.resumable`)
    as from a carried store entry.  Returns how many were carried."""
    from ..config import Config
    from ..store import code_version
    from .run.records import RECORDS_FILE, read, write_compressed

    carries = load_carries() if carries is None else carries
    path = Path(folder) / RECORDS_FILE
    records, done = read(path), 0
    for rec in stale_records(folder):
        now = code_version(Config.from_dict(rec["config"]))
        for carry in carries:
            if any(v["path"] == _group(rec["config"]) and v["from"] == rec["code_version"] and v["to"] == now
                   for v in carry.get("versions", [])):
                records[rec["id"]] = {**rec, "code_version": now,
                                      "carried": {"record": carry.get("name"), "from_version": rec["code_version"]}}
                done += 1
                break
    if done:
        write_compressed(path, records.values())
        log(f"{path}: {done} records carried")
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedlib.repro.carry", description=__doc__.split("\n\n")[0])
    ap.add_argument("--from", dest="from_commit", help="the commit the stale runs trained at: check them, write "
                                                       "the record into --out")
    ap.add_argument("--store", help="the store (default: $FEDLIB_STORE or the regeneration store)")
    ap.add_argument("--out", help=f"folder of the records: written by --from, read by --apply (default "
                                  f"{CARRIES.relative_to(CARRIES.parents[1])})")
    ap.add_argument("--apply", action="store_true", help="copy the store's stale runs that a record carries")
    ap.add_argument("--records", action="append", default=[], metavar="FOLDER",
                    help="figures/<paper>/<profile> whose run records to check (--from) or carry (--apply) as well")
    a = ap.parse_args(argv)
    from .run.grid import as_store

    store = as_store(a.store)
    if a.from_commit:
        from .artefacts.provenance import git_commit

        here = git_commit()
        if here.endswith("-dirty") or here == "unknown":
            ap.error("commit the code change first: a carry record names the commit whose code it checked, "
                     f"and this tree is {here}")
        stale = [cfg for _, cfg in stale_entries(store)] + [r["config"] for f in a.records for r in stale_records(f)]
        if not stale:
            print("no stale run in the store or the records: nothing to check")
            return 0
        record = check(stale, from_commit=a.from_commit)
        out = Path(a.out) if a.out else CARRIES
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"{record['from_commit'][:7]}-{record['to_commit'][:7]}.json"
        path.write_text(json.dumps(record, indent=1))
        print(f"{path}: {sum(r['identical'] for r in record['paths'])} of {len(record['paths'])} paths identical")
        return 0 if all(r["identical"] for r in record["paths"]) else 1
    if a.apply:
        print(f"{len(carry_store(store, load_carries(a.out)))} runs carried")
        for folder in a.records:
            carry_records(folder, load_carries(a.out))
        return 0
    ap.error("give --from COMMIT (check and record) or --apply")


if __name__ == "__main__":
    sys.exit(main())
