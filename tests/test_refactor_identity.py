"""The final parameters of a fixed set of runs are those the code gave before the
round-state / part-kind / client-loop refactor (issue 18): every registered method
token × both engines × Synthetic and FMNIST, tiny configurations (a token that trains on
server-held data runs on FMNIST only: Synthetic(α, β)'s clients come with the data, and
no server share can be split off them).

**Bit identity only where the kernels are proven the same.**  The reference
(``tests/fixtures/refactor_identity.json``) holds, per case, the parameter count, a probe of
256 fixed entries of the flattened final parameters and the accuracies, computed by the
untouched base commit 0dc1e67, and, per recorded machine, its full fingerprint
(:func:`fedlib.repro.run.machine.fingerprint`: CPU vendor, model and family/model/stepping, ISA level,
torch, MKL and oneDNN builds) with the sha256 of every case's final parameters.  Where this
machine's fingerprint equals a recorded one field for field, the hashes must match: bit identity.
Torch and the ISA level alone prove nothing (an AMD EPYC and an Intel Xeon, both AVX512 with the
same torch, differ in the last bits), so anywhere else the probe is compared with a tolerance this
machine measures: the case is run twice more from initial parameters nudged by one ulp (a random
third of the entries up, a third down), and the tolerance is 16 × the largest probe change that
causes, plus 4 ulp.  A real kernel change (``ATEN_CPU_CAPABILITY=default``) stays inside it, and
the deliberate changes of :func:`test_a_deliberate_change_fails_the_identity_check` (a loss
constant off by 1e-3, one local step more, momentum 0.5 instead of 0) fall far outside it, on any
machine.  Two rounds keep rounding from growing into chaos; the cases where a one-ulp nudge still
grows (distillation on the server's pseudo-labels: FedDF, FedBE) get the loose tolerance their own
sensitivity measures.

Recording a machine (never needed for the suite to pass; it only turns the comparison there into
bit identity), from a checkout of the base commit::

    git worktree add /tmp/base0dc1e67 0dc1e67
    PYTHONPATH=/tmp/base0dc1e67 python tests/test_refactor_identity.py --add-machine

``--write`` instead rewrites the whole reference (probes included) from the machine it runs on.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

from conftest import NUDGE_FACTOR, NUDGE_SEEDS, nudged

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "refactor_identity.json"
BASE_COMMIT = "0dc1e67"
PROBE = 256  # entries of the flattened final parameters kept in the reference

_TINY = dict(num_clients=4, rounds=2, batch_size=32, seed=3, eval_every=1, balanced_test="full")
_DATASETS = {
    "synthetic": dict(dataset="synthetic"),
    "fmnist": dict(dataset="fmnist", max_train_samples=320, max_test_samples=64),
}
# what a token needs to run tiny (its server data, a few server steps, few clusters); server data come
# out of a partitioned training set (Synthetic's natural clients hold no server share)
_SERVER = dict(partition="dirichlet")
_TOKEN = {
    "fedic": dict(**_SERVER, server_aux_per_class=2, server_unlabeled="long_tail_dropped", long_tail_if=2.0,
                  fedic_finetune_steps=2, fedic_calibration_steps=2, fedic_distill_steps=2, fedic_aux_batch_size=8,
                  fedic_ulb_batch_size=8),
    "feddf": dict(**_SERVER, server_unlabeled="long_tail_dropped", long_tail_if=2.0, distill_steps=2,
                  distill_batch_size=8),
    "fedbe": dict(**_SERVER, server_unlabeled="long_tail_dropped", long_tail_if=2.0, distill_steps=2,
                  distill_batch_size=8, fedbe_samples=2),
    "crt": dict(**_SERVER, server_aux_per_class=2, posthoc_epochs=1, posthoc_batch_size=8),
    "lws": dict(**_SERVER, server_aux_per_class=2, posthoc_epochs=1, posthoc_batch_size=8),
    "tau_norm": dict(**_SERVER, server_aux_per_class=2),
    "ratio_loss": dict(**_SERVER, server_aux_per_class=2),
    "fedconcat": dict(num_clusters=2, encoder_rounds=1, classifier_rounds=2, fedconcat_kmeans_n_init=1),
    "fedconcat_id": dict(num_clusters=2, encoder_rounds=1, classifier_rounds=2, fedconcat_kmeans_n_init=1,
                         fedconcat_id_probe_size=32),
    "fedrep": dict(fedrep_body_epochs=1),
}
# compositions whose parts meet in one round (a correction with a personalization, two losses' parts)
_COMBOS = ("fedlc+scaffold", "fedprox+fedper", "moon+fedavgm", "fedrod+fednova")
# the client SGD's momentum and weight decay (off above), with phases (FedRep) and a correction (SCAFFOLD)
_SGD = dict(momentum=0.9, weight_decay=1e-3, local_epochs=2)
_SGD_METHODS = ("fedavg", "fedrep", "scaffold", "fednova")


def _library_tokens() -> list[str]:
    """fedlib's own method tokens: those registered by a module of the library (other test modules of the
    same session register toy tokens of their own)."""
    from fedlib.algorithms import METHODS

    return sorted(t for t, m in METHODS.items() if m.module.startswith("fedlib."))


def _methods() -> list[str]:
    return _library_tokens() + list(_COMBOS)


def cases() -> list[tuple[str, str, str, dict]]:
    out = []
    for method in _methods():
        extra = {}
        for token in method.split("+"):
            extra.update(_TOKEN.get(token, {}))
        for dataset, data in _DATASETS.items():
            if dataset == "synthetic" and extra.get("partition") == "dirichlet":
                continue  # Synthetic(α, β) comes with its clients: it holds no server data
            for engine in ("sequential", "vectorized"):
                out.append((method, dataset, engine, {**_TINY, **data, **extra, "method": method, "engine": engine}))
    for method in _SGD_METHODS:
        for engine in ("sequential", "vectorized"):
            out.append((f"{method}@sgd", "fmnist", engine, {**_TINY, **_DATASETS["fmnist"], **_TOKEN.get(method, {}),
                                                            **_SGD, "method": method, "engine": engine}))
    return out


def _machine_module():
    """:mod:`fedlib.repro.run.machine` of this checkout, loaded from its file (``--add-machine`` runs with the
    base commit's fedlib first on the path, which predates it)."""
    path = Path(__file__).resolve().parents[1] / "fedlib" / "repro" / "run" / "machine.py"
    spec = importlib.util.spec_from_file_location("_fedlib_machine", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_MACHINE = _machine_module()


def fingerprint() -> dict:
    return _MACHINE.fingerprint()


def _probe_rows(n: int) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(PROBE, n)).round().astype(np.int64))


def summarize(params: dict, summary: dict) -> dict:
    names = sorted(params)
    h = hashlib.sha256()
    for k in names:
        h.update(k.encode())
        h.update(params[k].detach().cpu().to(torch.float32).contiguous().numpy().tobytes())
    flat = np.concatenate([params[k].detach().cpu().double().numpy().ravel() for k in names])
    out = {"sha256": h.hexdigest(), "size": len(flat), "probe": [float(v) for v in flat[_probe_rows(len(flat))]]}
    for name in ("final_accuracy", "personalized_accuracy", "drift_accuracy"):
        if summary.get(name) is not None:
            out[name] = float(summary[name])
    return out


def compute(config: dict) -> dict:
    import fedlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = fedlib.run(config, store=False, progress=False)
    return summarize(result.params, result.summary)


def deviation(got: dict, ref: dict) -> float:
    """The largest difference between two probes."""
    return float(np.max(np.abs(np.asarray(got["probe"]) - np.asarray(ref["probe"]))))


def rounding_tolerance(config: dict, got: dict) -> float:
    """What float rounding alone can move the probe by on this machine (module docstring)."""
    spread = 0.0
    for seed in NUDGE_SEEDS:
        with nudged(seed):
            spread = max(spread, deviation(compute(config), got))
    scale = float(np.max(np.abs(got["probe"])))
    return NUDGE_FACTOR * spread + 4 * float(np.spacing(np.float32(max(scale, 1e-30))))


def _key(method: str, dataset: str, engine: str) -> str:
    return f"{method}|{dataset}|{engine}"


def _reference() -> dict:
    return json.loads(FIXTURE.read_text())


def recorded_machine(reference: dict) -> dict | None:
    """The recorded machine whose fingerprint equals this one's field for field, else None."""
    return next((m for m in reference["machines"] if _MACHINE.kernels_match(m["fingerprint"])), None)


@pytest.fixture(scope="module")
def reference():
    return _reference()


def _skip_absent(dataset: str) -> None:
    if dataset == "fmnist":
        from conftest import have_dataset

        if not have_dataset("fmnist"):
            pytest.skip("FMNIST files absent")


@pytest.mark.parametrize("method,dataset,engine,config", cases(), ids=[_key(*c[:3]) for c in cases()])
def test_final_parameters_unchanged(reference, method, dataset, engine, config):
    _skip_absent(dataset)
    key = _key(method, dataset, engine)
    ref = reference["cases"][key]
    got = compute(config)
    assert got["size"] == ref["size"], f"{key}: parameter count changed"
    machine = recorded_machine(reference)
    if machine is not None:
        assert got["sha256"] == machine["sha256"][key], (
            f"{key}: final parameters are not bit-identical to the reference recorded on this very machine kind "
            f"({fingerprint()}: same CPU, ISA, torch, MKL and oneDNN, so the hash is compared); probe deviation "
            f"{deviation(got, ref):.3g}")
        for name in ("final_accuracy", "personalized_accuracy", "drift_accuracy"):
            assert got.get(name) == ref.get(name), f"{key}: {name} changed"
    else:
        tol = rounding_tolerance(config, got)
        dev = deviation(got, ref)
        assert dev <= tol, (
            f"{key}: final parameters differ by {dev:.3g}, beyond what float rounding moves them here ({tol:.3g}: "
            f"{NUDGE_FACTOR:g} × the spread of one-ulp nudges + 4 ulp). No recorded machine has this fingerprint "
            f"{fingerprint()}, so the probe is compared, not the hash")
    for name in ("final_accuracy", "personalized_accuracy", "drift_accuracy"):
        assert (name in got) == (name in ref), f"{key}: {name} appears or disappears"


def _extra_step(original):
    def batches(*args, **kwargs):
        out = list(original(*args, **kwargs))
        return out + out[:1]  # one local step more: the first mini-batch again at the end

    return batches


#: Deliberate changes the check must catch on any machine: (case, change, what it stands for).
DELIBERATE = [
    ("fedlc|synthetic|sequential", {"tau": 1.001}, "FedLC's calibration constant τ (Eq. 7) off by 1e-3"),
    ("fedlc|synthetic|vectorized", {"tau": 1.001}, "the same on the vectorized engine"),
    ("fedavg|fmnist|sequential", "extra_step", "one local step more"),
    ("fedavg|synthetic|vectorized", "extra_step", "one local step more, vectorized engine"),
    ("fedavg|fmnist|sequential", {"momentum": 0.5}, "client momentum 0.5 instead of 0"),
    ("fedprox|synthetic|sequential", {"momentum": 0.5}, "client momentum 0.5 instead of 0 (FedProx)"),
]


@pytest.mark.parametrize("key,change,what", DELIBERATE, ids=[d[2] for d in DELIBERATE])
def test_a_deliberate_change_fails_the_identity_check(reference, monkeypatch, key, change, what):
    """The tolerance of the other-machine branch, measured here, is far below what each deliberate change
    moves the parameters by; and no recorded hash matches the changed run."""
    config = {_key(*c[:3]): c[3] for c in cases()}[key]
    _skip_absent(config["dataset"])
    ref = reference["cases"][key]
    tol = rounding_tolerance(config, compute(config))
    if change == "extra_step":
        import fedlib.client as client

        monkeypatch.setattr(client, "client_batches", _extra_step(client.client_batches))
        changed = compute(config)
    else:
        changed = compute({**config, **change})
    dev = deviation(changed, ref)
    assert dev > 4 * tol, f"{what}: moved the parameters by {dev:.3g}, not clearly beyond the tolerance {tol:.3g}"
    assert all(changed["sha256"] != m["sha256"][key] for m in reference["machines"])


_KERNEL_CASES = ("fedavg|fmnist|sequential", "fedlc|synthetic|sequential", "fedic|fmnist|sequential")


def test_another_kernel_path_stays_within_the_measured_tolerance(reference, tmp_path):
    """The same cases with torch's generic (non-vectorized) CPU kernels, ``ATEN_CPU_CAPABILITY=default``:
    a real change of kernels on this very machine.  Their results stay within the tolerance this machine
    measures, so the tolerance absorbs what another CPU's kernels do; where they differ bit for bit (as on
    AVX2 / AVX512 machines), the hash comparison would have failed."""
    if torch.backends.cpu.get_cpu_capability() == "DEFAULT":
        pytest.skip("this machine already runs torch's default kernels: no other path to compare")
    _skip_absent("fmnist")
    configs = {_key(*c[:3]): c[3] for c in cases()}
    out = tmp_path / "default.json"
    code = ("import json, sys; sys.path.insert(0, sys.argv[2]); import test_refactor_identity as T; "
            "cs = {T._key(*c[:3]): c[3] for c in T.cases()}; "
            "json.dump({k: T.compute(cs[k]) for k in sys.argv[3:]}, open(sys.argv[1], 'w'))")
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
    subprocess.run([sys.executable, "-c", code, str(out), str(Path(__file__).parent), *_KERNEL_CASES], env=env,
                   check=True, timeout=600)
    other = json.loads(out.read_text())
    differ = 0
    for key in _KERNEL_CASES:
        here = compute(configs[key])
        tol = rounding_tolerance(configs[key], here)
        assert deviation(other[key], here) <= tol, f"{key}: the default kernels moved it beyond {tol:.3g}"
        assert deviation(other[key], reference["cases"][key]) <= tol
        differ += other[key]["sha256"] != here["sha256"]
    assert differ, "the default kernels gave bit-identical results in every case: this test shows nothing here"


def test_bit_identity_is_claimed_only_for_a_full_fingerprint(reference):
    """Hashes are compared only on a machine whose every kernel-deciding field equals a recorded one: the
    old reference's fingerprint (torch and ISA level only) matched an AMD EPYC it did not come from."""
    here = _MACHINE.fingerprint()
    assert {"vendor", "model", "family_model_stepping", "isa", "torch", "mkl", "onednn"} <= set(here)
    assert _MACHINE.kernels_match(dict(here))
    assert not _MACHINE.kernels_match({"torch": here["torch"], "cpu_capability": here["isa"]})
    for field in here:
        assert not _MACHINE.kernels_match({**here, field: here[field] + " (another)"}), field
    for machine in reference["machines"]:
        assert set(machine["sha256"]) == set(reference["cases"]), "a recorded machine lacks some cases' hashes"


def test_every_registered_token_is_covered(reference):
    """A token registered after the reference was written has no case: say so."""
    covered = {k.split("|")[0].split("@")[0] for k in reference["cases"]}
    tokens = set(_library_tokens())
    assert len(tokens) >= 24 and tokens <= covered, f"tokens without a reference case: {sorted(tokens - covered)}"


def _record(cases_to_run) -> tuple[dict, dict]:
    import time

    summaries = {}
    for method, dataset, engine, config in cases_to_run:
        t = time.perf_counter()
        summaries[_key(method, dataset, engine)] = compute(config)
        print(f"{_key(method, dataset, engine)}: {time.perf_counter() - t:.2f} s", flush=True)
    return summaries, {"fingerprint": fingerprint(), "base_commit": os.environ.get("FEDLIB_BASE_COMMIT", BASE_COMMIT),
                       "sha256": {k: v["sha256"] for k, v in summaries.items()}}


if __name__ == "__main__":
    os.environ.setdefault("FEDLIB_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    if "--write" in sys.argv:  # the whole reference, from this machine
        summaries, machine = _record(cases())
        cases_out = {k: {f: v for f, v in s.items() if f != "sha256"} for k, s in summaries.items()}
        out = {"base_commit": machine["base_commit"], "probe_entries": PROBE, "cases": cases_out, "machines": [machine]}
    elif "--add-machine" in sys.argv:  # this machine's hashes beside the recorded ones
        out = _reference()
        if recorded_machine(out) is not None:
            sys.exit(f"this machine's fingerprint is recorded already: {fingerprint()}")
        summaries, machine = _record(cases())
        out["machines"].append(machine)
    else:
        sys.exit("usage: PYTHONPATH=<checkout of the base commit> python tests/test_refactor_identity.py "
                 "--add-machine | --write")
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
