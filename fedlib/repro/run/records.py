"""Run records: what a profile's outputs were computed from, kept beside them, so that they render again
without training.

A regeneration writes one record per distinct run its grids asked for (:func:`fedlib.repro.run.grid.run_grid`)
into ``figures/<paper>/<profile>/_records.jsonl.gz``: the run's resolved configuration (its store-key content),
seed, the code version and commit it trained at, the device, its final metrics and its history, but no
parameters.  ``python -m fedlib.repro.regenerate --render records`` (``make figures RENDER=records``) then
answers every grid from those records and trains nothing: a figure or table fix is a render of minutes, not
hours of training.

Two environment variables carry the mode into the notebooks' kernels:

* :data:`RECORDS_ENV` names the records file;
* :data:`MODE_ENV` is ``write`` (append the record of every run a grid asks for, each as soon as it finishes;
  the regeneration merges them into the compressed file when the paper is done) or ``read`` (answer from the
  records: a run without a record is an error, :class:`MissingRecords`, never a silent "not run").

A regeneration in ``write`` mode goes on from where one stopped (:func:`resumable`), and with ``--resume``
(:data:`RESUME_ENV`) from the committed records, on any machine: a run whose record holds the code version
that the current code gives its configuration is not trained again.
That is the store's own rule (its key is the configuration and the code version), applied to the records a
checkout carries, so hours of training survive a machine that is handed back: ``python -m
fedlib.repro.run.records fold figures/<paper>/<profile>`` folds the finished runs of a regeneration still
under way into the committed file, to be committed as they finish.

In ``read`` mode the regeneration's store refuses to train (:class:`ReadOnlyStore`): a study that needs
trained models (FedLC's t-SNE, FedConcat's clusters) renders from the store when the store holds them, and
otherwise says so (:class:`NeedsTraining`); the regeneration then keeps that notebook's committed outputs.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
from pathlib import Path
from typing import Iterable

from ...store import Store

__all__ = ["RECORDS_ENV", "MODE_ENV", "RESUME_ENV", "RECORDS_FILE", "PLAIN_RECORDS", "STOPPED_RECORDS", "FINISHED", "MissingRecords",
           "NeedsTraining", "ReadOnlyStore", "RecordsConflict", "conflicts", "code_versions", "trained", "machines", "mode", "record_id", "make_record", "append", "read", "lookup", "resumable", "resumed_result", "stands_for", "set_aside_stopped", "merge", "fold",
           "write_plain", "write_compressed"]

RECORDS_ENV = "FEDLIB_RECORDS"
MODE_ENV = "FEDLIB_RECORDS_MODE"
#: Set (``1``: ``regenerate --resume``, and every ``decide``): a regeneration also goes on from the committed
#: records; unset, it trains what the store lacks, as ever, and resumes only a stopped regeneration's own.
RESUME_ENV = "FEDLIB_RECORDS_RESUME"
#: The records of one paper under one profile, beside its outputs.
RECORDS_FILE = "_records.jsonl.gz"
#: Where a regeneration's grids append their run records until the paper is done (then merged, compressed, into
#: :data:`RECORDS_FILE` and removed), and where a stopped regeneration's records wait for the next one.
PLAIN_RECORDS = ".records.jsonl"
STOPPED_RECORDS = ".records-stopped.jsonl"
#: What a record keeps of a grid run's result (:func:`fedlib.repro.run.grid._run_one`): everything a table
#: or figure reads; not the wall time of reading it back.
_DROPPED = ("elapsed_s", "from_store")
#: The statuses of a run that ended under its own code (a "not run" or "failed" result may be the machine's
#: doing: an absent dataset, no GPU, a killed worker), so that its record stands for training it again.
FINISHED = ("ok", "diverged")
#: What a record's result holds besides the run's numbers: how long it took, where, and its store key (which
#: holds the code version).  Two records whose results differ only here are the same run's numbers.
_CIRCUMSTANCES = ("wall_time_s", "key", "device_name")


class MissingRecords(RuntimeError):
    """A grid asked, in ``read`` mode, for runs that have no record: the outputs cannot render without
    training them."""


class RecordsConflict(RuntimeError):
    """A partial regeneration's records would replace committed ones trained under another code version whose
    numbers they do not equal: the outputs that read the committed records would no longer render from them."""


class NeedsTraining(RuntimeError):
    """A study asked the read-only store for a run it does not hold: it needs trained models."""


def mode() -> str | None:
    """``"write"``, ``"read"`` or None (no records: train and store as usual)."""
    value = os.environ.get(MODE_ENV) if os.environ.get(RECORDS_ENV) else None
    if value not in (None, "", "write", "read"):
        raise ValueError(f"{MODE_ENV} must be 'write' or 'read', got {value!r}")
    return value or None


def record_id(identity: str) -> str:
    """The record's id: sha256 (20 hex digits) of what decides the run's result (the grid's identity of a
    configuration: its resolved store-key content with the seed)."""
    return hashlib.sha256(identity.encode()).hexdigest()[:20]


def make_record(identity: str, config: dict, result: dict) -> dict:
    """One run's record: ``id``, ``config`` (the resolved key content), ``code_version``, ``commit``, ``machine``
    (:func:`fedlib.repro.run.machine.fingerprint`: the same code on other CPU kernels rounds otherwise) and the
    grid's ``result`` without parameters."""
    from ...config import Config
    from ...store import code_version
    from .machine import fingerprint, git_commit

    try:
        cfg = Config.from_dict(config)
        resolved, version = cfg.key_dict(), code_version(cfg)
    except Exception:  # noqa: BLE001 -- an invalid configuration: its result is the failure itself
        resolved, version = config, None
    return {"id": record_id(identity), "config": resolved, "code_version": version, "commit": git_commit(),
            "machine": fingerprint(), "result": {k: v for k, v in result.items() if k not in _DROPPED}}


def append(path: str | os.PathLike, records: Iterable[dict]) -> None:
    """Append ``records`` to the plain JSON-lines file ``path`` (one grid at a time: notebooks run in turn)."""
    with open(path, "a") as fh:
        for rec in records:
            fh.write(json.dumps(rec, allow_nan=True) + "\n")


def read(path: str | os.PathLike) -> dict[str, dict]:
    """The records of ``path`` (plain or gzip JSON lines) by id; the last of equal ids wins.  A missing file
    has none."""
    path = Path(path)
    if not path.exists():
        return {}
    raw = path.read_bytes()
    text = gzip.decompress(raw).decode() if raw[:2] == b"\x1f\x8b" else raw.decode()
    out: dict[str, dict] = {}
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            if i == len(lines) - 1:  # the last line of a plain file whose writer was killed mid-line: not a record
                break
            raise
        out[rec["id"]] = rec
    return out


_CACHE: dict[tuple[str, float], dict[str, dict]] = {}


def _current() -> tuple[Path, dict[str, dict]]:
    """The records file :data:`RECORDS_ENV` names and its records by id (read once while it is unchanged)."""
    path = Path(os.environ[RECORDS_ENV])
    stamp = (str(path), path.stat().st_mtime if path.exists() else 0.0)
    if stamp not in _CACHE:
        _CACHE.clear()
        _CACHE[stamp] = read(path)
    return path, _CACHE[stamp]


def find(identity: str) -> dict | None:
    """The recorded grid result of ``identity`` (``read`` mode), or None where the records have none: what
    stands in for the store when a render asks whether a run exists (a GPU's runs, which a CPU's store may
    lack: :func:`fedlib.repro.budget.costs.stored_gpu_runs`)."""
    rec = _current()[1].get(record_id(identity))
    return None if rec is None else rec["result"]


def lookup(identities: Iterable[str], desc: str = "grid") -> dict[str, dict]:
    """The grid results of ``identities`` from the records file :data:`RECORDS_ENV` names (``read`` mode),
    each marked as not trained here.  Raises :class:`MissingRecords`, naming how many and one of them, when
    any has no record."""
    path, records = _current()
    out, missing = {}, []
    for ident in identities:
        rec = records.get(record_id(ident))
        if rec is None:
            missing.append(ident)
        else:
            out[ident] = {**rec["result"], "from_store": True, "elapsed_s": 0.0}
    if missing:
        raise MissingRecords(f"{desc}: {len(missing)} of {len(out) + len(missing)} runs have no record in "
                             f"{path.name} (rendering from records trains nothing; regenerate without "
                             f"--render records to train them); the first: {missing[0][:300]}")
    return out


def resumable(configs: dict[str, dict]) -> dict[str, dict]:
    """``write`` mode: of ``configs`` (grid identity -> configuration), the results that a finished run
    (:data:`FINISHED`) already recorded under the code that runs now, from this regeneration's records file
    (:data:`RECORDS_ENV`), a stopped regeneration's complete lines (:data:`STOPPED_RECORDS`) or, with
    :data:`RESUME_ENV` set, the committed file beside it (a regeneration otherwise trains cold, or from its
    store, as its outputs claim), each marked
    as not trained here (:func:`resumed_result`).  A record counts only where it stands for the run
    (:func:`stands_for`).  Returns grid identity -> that record, unchanged: its commit and machine are those of
    the training, not of the regeneration that reads it."""
    plain = Path(os.environ[RECORDS_ENV])
    committed = read(plain.with_name(RECORDS_FILE)) if os.environ.get(RESUME_ENV) else {}
    known = {**committed, **read(plain.with_name(STOPPED_RECORDS)), **read(plain)}
    return {ident: known[record_id(ident)] for ident, cfg in configs.items()
            if stands_for(known.get(record_id(ident)), cfg)}


def resumed_result(rec: dict) -> dict:
    """The grid's result of a run answered by its record ``rec`` (:func:`resumable`), marked as not trained here."""
    return {**rec["result"], "from_store": True, "elapsed_s": 0.0}


def stands_for(rec: dict | None, cfg: dict) -> bool:
    """Whether ``rec`` is a finished run (:data:`FINISHED`) of ``cfg`` whose ``code_version`` is the one the
    current code gives the configuration: what a store key holds, so it stands for the run exactly as a store
    entry would (an invalid configuration: no record stands for it; it is run, and fails with its reason)."""
    from ...config import Config
    from ...store import code_version

    if rec is None or rec["result"].get("status") not in FINISHED:
        return False
    try:
        return rec.get("code_version") == code_version(Config.from_dict(cfg))
    except Exception:  # noqa: BLE001
        return False


def set_aside_stopped(out: Path) -> int:
    """Before a paper regenerates: the records a stopped regeneration left in ``out`` (its plain file) move to
    :data:`STOPPED_RECORDS`, where the grids go on from their finished runs
    (:func:`resumable`) and which the merge at the end removes; the plain file starts
    empty, for this regeneration's records only.  Returns how many records are set aside."""
    if not (out / PLAIN_RECORDS).exists():
        return len(read(out / STOPPED_RECORDS))
    stopped = {**read(out / STOPPED_RECORDS), **read(out / PLAIN_RECORDS)}
    write_plain(out / STOPPED_RECORDS, stopped.values())
    (out / PLAIN_RECORDS).unlink()
    return len(stopped)


def conflicts(old: dict[str, dict], new: dict[str, dict]) -> list[str]:
    """The ids of ``new`` records that ``old`` holds under another code version with other numbers (a retrain
    that gives the same numbers, a carry in effect, is no conflict)."""
    def numbers(rec):
        return {k: v for k, v in (rec.get("result") or {}).items() if k not in _CIRCUMSTANCES}

    return sorted(i for i, rec in new.items() if i in old and old[i].get("code_version") != rec.get("code_version")
                  and numbers(old[i]) != numbers(rec))


def _refuse(old: dict, new: dict, source: Path, target: Path) -> None:
    clash = conflicts(old, new)
    if clash:
        raise RecordsConflict(
            f"{len(clash)} record(s) of {source.name} (ids {', '.join(clash[:3])}{' …' if len(clash) > 3 else ''}) "
            f"were trained under another code version than the committed ones in {target.name} and give other "
            "numbers; replacing them would leave the outputs that read them at one code version and these at "
            "another. Regenerate the whole paper under this profile (no --only), or carry the committed records "
            f"over the change (python -m fedlib.repro.carry). {source.name} is kept.")


def fold(folder: str | os.PathLike) -> int:
    """Fold the records of a regeneration under way in ``folder`` (its plain file, kept) into the committed
    :data:`RECORDS_FILE` beside the records already there; the number of records it then holds.  Refuses
    (:class:`RecordsConflict`) a record that would replace a committed one of other code and other numbers."""
    folder = Path(folder)
    committed = read(folder / RECORDS_FILE)
    new = {**read(folder / STOPPED_RECORDS), **read(folder / PLAIN_RECORDS)}
    _refuse(committed, new, folder / PLAIN_RECORDS, folder / RECORDS_FILE)
    records = {**committed, **new}
    write_compressed(folder / RECORDS_FILE, records.values())
    return len(records)


def merge(plain: str | os.PathLike, compressed: str | os.PathLike, *, replace: bool, retrain: bool = False) -> int:
    """Fold the plain records file ``plain`` (removed afterwards) into ``compressed``: ``replace`` (a full
    regeneration of the paper) keeps only the new records, else the old ones stay beside them (a partial one,
    ``--only``).  A partial merge refuses (:class:`RecordsConflict`, ``plain`` kept) a record that would replace
    a committed one of other code and other numbers, unless ``retrain``: the caller trained it because the
    committed one no longer counts (``decide``).  Returns the number of records written."""
    new = read(plain)
    if replace:
        records = new
    else:
        old = read(compressed)
        if not retrain:
            _refuse(old, new, Path(plain), Path(compressed))
        records = {**old, **new}
    write_compressed(compressed, records.values())
    Path(plain).unlink(missing_ok=True)
    return len(records)


def write_plain(path: str | os.PathLike, records: Iterable[dict]) -> None:
    """``records`` as plain JSON lines, written to a temporary name and renamed into place."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in records))
    os.replace(tmp, path)


def write_compressed(path: str | os.PathLike, records: Iterable[dict]) -> None:
    """gzip JSON lines sorted by id (each record's keys in the order the grid gave them: a table's columns follow
    it), with no timestamp or file name in the header: the same records give the
    same bytes.  Written to a temporary name and renamed into place (never half-written)."""
    body = "".join(json.dumps(r, allow_nan=True) + "\n" for r in sorted(records, key=lambda r: r["id"]))
    buf = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buf, mtime=0, compresslevel=9) as gz:
        gz.write(body.encode())
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(buf.getvalue())
    os.replace(tmp, path)


def trained(records: dict[str, dict]) -> list[dict]:
    """The records of runs that trained: a "not run" record (its dataset absent, or a GPU's) holds no number."""
    return [rec for rec in records.values() if (rec.get("result") or {}).get("status") != "not run"]


def code_versions(records: dict[str, dict]) -> dict[tuple[str, ...], dict[str, int]]:
    """The code versions ``records`` hold per set of per-run modules (:func:`fedlib.store.run_modules`: a method
    and its model), each with its count.  A set with two versions mixes runs of two training codes in one folder,
    unless a carry proved them equal (``python -m fedlib.repro.carry``); one version a set is one code.  A record
    of a run that never trained ("not run": its dataset absent, or a GPU's) holds no number, so no code."""
    from ...config import Config
    from ...store import run_modules

    out: dict[tuple[str, ...], dict[str, int]] = {}
    for rec in trained(records):
        held = out.setdefault(run_modules(Config.from_dict(rec["config"])), {})
        held[rec.get("code_version")] = held.get(rec.get("code_version"), 0) + 1
    return out


def machines(records: dict[str, dict]) -> dict[str, int]:
    """How many of ``records``' trained runs each machine computed, by its CPU model, ISA and torch build (their
    ``machine`` fingerprint); "not recorded" for records older than the field.  The same code rounds otherwise on
    other kernels (:mod:`fedlib.repro.run.machine`), and over hundreds of steps that moves accuracies by tenths of
    a point: a folder of several machines agrees with itself to that rounding, not bit for bit."""
    out: dict[str, int] = {}
    for rec in trained(records):
        m = rec.get("machine") or {}
        name = f"{m.get('model', '?')}, {m.get('isa', '?')}, torch {m.get('torch', '?')}" if m else "not recorded"
        out[name] = out.get(name, 0) + 1
    return out


class ReadOnlyStore(Store):
    """A store that answers what it holds and refuses to train (``read`` mode): :meth:`claim`, the step before
    training a key it lacks, raises :class:`NeedsTraining`."""

    def claim(self, key: str):
        raise NeedsTraining("this study needs trained models (parameters), which run records do not keep: render "
                            "it with the store that holds them, or regenerate without --render records")


def main(argv=None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m fedlib.repro.run.records", description="Run records.")
    sub = ap.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fold", help="fold a regeneration's finished runs into the committed records file")
    f.add_argument("folder", help="figures/<paper>/<profile>")
    v = sub.add_parser("versions", help="the training-code versions a folder's records hold, per method and model")
    v.add_argument("folder", help="figures/<paper>/<profile>")
    a = ap.parse_args(argv)
    if a.command == "versions":
        held_records = read(Path(a.folder) / RECORDS_FILE)
        found = code_versions(held_records)
        for modules, held in sorted(found.items()):
            name = ", ".join(Path(m).stem for m in modules) or "the core"
            print(f"{name}: " + ", ".join(f"{v} ({k} runs)" for v, k in held.items())
                  + (f"  <- {len(held)} codes: retrain, or carry" if len(held) > 1 else ""))
        mixed = sum(len(h) > 1 for h in found.values())
        print(f"{mixed} of {len(found)} method/model sets mix code versions")
        print("machines: " + "; ".join(f"{m} ({k} runs)" for m, k in machines(held_records).items()))
        return 1 if mixed else 0
    n = fold(a.folder)
    print(f"{Path(a.folder) / RECORDS_FILE}: {n} records")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
