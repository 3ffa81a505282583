"""Freed memory kept for the next step (:mod:`fedlib.allocator`, issue 52): it removes the page faults of
tensors allocated again and again, and it changes no number.  Both are measured in fresh processes, one with
``FEDLIB_KEEP_FREED_MEMORY=0`` (glibc's defaults) and one without: the thresholds are process-wide."""

import json
import os
import subprocess
import sys

import pytest

from fedlib.allocator import keep_freed_memory

pytestmark = pytest.mark.skipif(not keep_freed_memory(), reason="no glibc here: fedlib leaves the allocator as it is")

FAULTS = """
import json, resource, torch, fedlib
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(3):  # warm: the heap has grown to what the loop needs
    a = torch.ones(10 * 2**20); b = torch.ones(10 * 2**20); del a, b
before = faults()
for _ in range(20):  # two 40 MiB tensors a step (a large evaluation chunk's layer outputs come and go)
    a = torch.ones(10 * 2**20); b = torch.ones(10 * 2**20); del a, b
print(json.dumps(faults() - before))
"""

RUN = """
import hashlib, json, torch, fedlib
r = fedlib.run(dataset="synthetic", model="mlp", num_clients=4, rounds=2, batch_size=8, lr=0.05, seed=1,
               engine="sequential", store=False, progress=False)
flat = torch.cat([r.params[k].detach().flatten() for k in sorted(r.params)]).numpy()
print(json.dumps(hashlib.sha256(flat.tobytes()).hexdigest()))
"""


def _in_a_process(code: str, keep: bool):
    env = dict(os.environ, FEDLIB_KEEP_FREED_MEMORY="1" if keep else "0", OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_tensors_allocated_again_come_from_freed_memory_not_fresh_pages():
    """20 steps of two 40 MiB tensors: with glibc's defaults each is a fresh mapping (above the 32 MiB where
    glibc stops raising its threshold), 10,240 pages faulted in; kept, the freed blocks serve the next step.
    (Below 32 MiB glibc's defaults fault or not by where the heap's top happens to lie: not a test.)"""
    default, kept = _in_a_process(FAULTS, keep=False), _in_a_process(FAULTS, keep=True)
    assert default > 20 * 2 * 10240 * 0.9, default  # the defaults fault every page of every tensor in
    assert kept < default / 20, (kept, default)


def test_a_run_gives_the_same_bits_with_and_without_it():
    assert _in_a_process(RUN, keep=True) == _in_a_process(RUN, keep=False)
