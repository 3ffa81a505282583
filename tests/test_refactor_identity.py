"""The final parameters of a fixed set of runs are those the code gave before the
round-state / part-kind / client-loop refactor (issue 18): every registered method
token × both engines × Synthetic and FMNIST, tiny configurations (a token that trains on
server-held data runs on FMNIST only: Synthetic(α, β)'s clients come with the data, and
no server share can be split off them).

The reference (``tests/fixtures/refactor_identity.json``) was written by this module
run as a script against the untouched base commit 0dc1e67::

    FEDLIB_BASE_COMMIT=0dc1e67 PYTHONPATH=<checkout of 0dc1e67> python tests/test_refactor_identity.py --write

It holds, per case, the sha256 of the final parameters (float32 bytes, sorted names)
and float64 summaries (sum, L2 norm, four fixed entries of the flattened parameters),
with the torch version and CPU capability it was computed on.  On the same
fingerprint the hash must match (bit identity); on another machine the kernels may
round differently, so the summaries must agree to float32 rounding.
"""

from __future__ import annotations

import hashlib
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "refactor_identity.json"

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


def fingerprint() -> dict:
    return {"torch": torch.__version__, "cpu_capability": torch.backends.cpu.get_cpu_capability()}


def summarize(params: dict, summary: dict) -> dict:
    names = sorted(params)
    h = hashlib.sha256()
    for k in names:
        h.update(k.encode())
        h.update(params[k].detach().cpu().to(torch.float32).contiguous().numpy().tobytes())
    flat = np.concatenate([params[k].detach().cpu().double().numpy().ravel() for k in names])
    n = len(flat)
    out = {"sha256": h.hexdigest(), "size": n, "sum": float(flat.sum()), "l2": float(np.sqrt((flat ** 2).sum())),
           "entries": [float(flat[i]) for i in (0, n // 3, (2 * n) // 3, n - 1)]}
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


def _key(method: str, dataset: str, engine: str) -> str:
    return f"{method}|{dataset}|{engine}"


def _reference() -> dict:
    return json.loads(FIXTURE.read_text())


@pytest.fixture(scope="module")
def reference():
    return _reference()


@pytest.mark.parametrize("method,dataset,engine,config", cases(), ids=[_key(*c[:3]) for c in cases()])
def test_final_parameters_unchanged(reference, method, dataset, engine, config):
    if dataset == "fmnist":
        from conftest import have_dataset

        if not have_dataset("fmnist"):
            pytest.skip("FMNIST files absent")
    ref = reference["cases"][_key(method, dataset, engine)]
    got = compute(config)
    assert got["size"] == ref["size"], f"{method}/{dataset}/{engine}: parameter count changed"
    same_machine = reference["fingerprint"] == fingerprint()
    if same_machine:
        assert got["sha256"] == ref["sha256"], (
            f"{method}/{dataset}/{engine}: final parameters are not bit-identical to the reference "
            f"(same torch and CPU capability {fingerprint()}: hash compared); sum {got['sum']!r} vs {ref['sum']!r}")
    else:
        for name in ("sum", "l2"):
            assert got[name] == pytest.approx(ref[name], rel=1e-5, abs=1e-5 * max(1.0, ref["l2"])), (
                f"{method}/{dataset}/{engine}: {name} differs beyond float32 rounding (other machine "
                f"{fingerprint()} vs reference {reference['fingerprint']}: summaries compared, not the hash)")
        np.testing.assert_allclose(got["entries"], ref["entries"], rtol=1e-4, atol=1e-6,
                                   err_msg=f"{method}/{dataset}/{engine}: fixed entries differ (other machine: "
                                           "summaries compared, not the hash)")
    for name in ("final_accuracy", "personalized_accuracy", "drift_accuracy"):
        assert (name in got) == (name in ref), f"{method}/{dataset}/{engine}: {name} appears or disappears"
        if name in ref and same_machine:
            assert got[name] == ref[name], f"{method}/{dataset}/{engine}: {name} changed"


def test_every_registered_token_is_covered(reference):
    """A token registered after the reference was written has no case: say so."""
    covered = {k.split("|")[0].split("@")[0] for k in reference["cases"]}
    tokens = set(_library_tokens())
    assert len(tokens) >= 24 and tokens <= covered, f"tokens without a reference case: {sorted(tokens - covered)}"


if __name__ == "__main__":
    import os
    import time

    if "--write" not in sys.argv:
        sys.exit("usage: PYTHONPATH=<base checkout> python tests/test_refactor_identity.py --write")
    os.environ.setdefault("FEDLIB_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))
    out = {"fingerprint": fingerprint(), "base_commit": os.environ.get("FEDLIB_BASE_COMMIT", "unknown"), "cases": {}}
    for method, dataset, engine, config in cases():
        t = time.perf_counter()
        out["cases"][_key(method, dataset, engine)] = compute(config)
        print(f"{_key(method, dataset, engine)}: {time.perf_counter() - t:.2f} s", flush=True)
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
