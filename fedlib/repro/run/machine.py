"""What machine computed a number: the facts that decide whether two machines run the same kernels.

Two CPUs with the same torch and the same ISA level (``torch.backends.cpu.get_cpu_capability()``)
may still round differently: oneDNN and MKL pick code paths by CPU vendor and model.  Bit identity
between two machines is therefore claimed only when every field of :func:`fingerprint` is equal:
the CPU's vendor, model name and family/model/stepping, the ISA level torch uses, the torch build,
and the MKL and oneDNN builds linked into it.  Anywhere else, results agree to float rounding
(``tests/test_refactor_identity.py`` says how far).  The code that computed it: :func:`git_commit`, the
repository's commit (what a run record and a sidecar name).

``python fedlib/repro/run/machine.py`` prints the fingerprint (it needs only the standard library and, for the
kernel fields, torch: ``.ci/run`` prints it first; the test suite's header prints it too).
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
from functools import lru_cache
from pathlib import Path

__all__ = ["cpu", "fingerprint", "kernels_match", "git_commit"]


@lru_cache(maxsize=1)
def _cpuinfo() -> dict[str, str]:
    """The first processor's fields of ``/proc/cpuinfo`` (empty where there is none)."""
    out: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                out[key.strip()] = value.strip()
    except OSError:
        pass
    return out


def cpu() -> dict[str, str]:
    """The CPU's vendor and model: ``{"vendor": "AuthenticAMD", "model": "AMD EPYC", "family_model_stepping":
    "25/17/1"}`` (from ``/proc/cpuinfo``; ``platform.processor()`` elsewhere)."""
    info = _cpuinfo()
    vendor = info.get("vendor_id", "") or platform.processor() or "unknown"
    model = info.get("model name", "") or platform.machine() or "unknown"
    fms = "/".join(info.get(k, "?") for k in ("cpu family", "model", "stepping")) if info else "unknown"
    return {"vendor": vendor, "model": model, "family_model_stepping": fms}


def _linked_libraries() -> dict[str, str]:
    """The MKL and oneDNN builds torch was built with (from ``torch.__config__.show()``)."""
    import torch

    text = torch.__config__.show()
    out = {}
    for name, pattern in (("mkl", r"Math Kernel Library Version ([^\n]+)"),
                          ("onednn", r"MKL-DNN (v[^\n]+)")):
        m = re.search(pattern, text)
        out[name] = m.group(1).strip() if m else "none"
    return out


@lru_cache(maxsize=1)
def fingerprint() -> dict[str, str]:
    """Everything that decides which CPU kernels torch runs here (module docstring); before torch is
    installed, the CPU alone (``.ci/run`` prints it first, so a failing install still names the machine)."""
    try:
        import torch
    except ImportError:
        return {**cpu(), "torch": "not installed"}
    return {**cpu(), "isa": torch.backends.cpu.get_cpu_capability(), "torch": torch.__version__,
            **_linked_libraries()}


def kernels_match(recorded: dict) -> bool:
    """Whether ``recorded`` (a :func:`fingerprint` written elsewhere) names this machine's kernels exactly:
    every field present and equal.  A record with fewer fields (an older, partial fingerprint) never
    matches: it cannot prove that the kernels are the same."""
    here = fingerprint()
    return set(recorded) == set(here) and all(recorded[k] == here[k] for k in here)


@lru_cache(maxsize=8)
def _git_commit(root: str) -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        # generated artefacts (figures/) do not make the tree dirty; untracked sources do
        dirty = subprocess.run(["git", "status", "--porcelain", "--", ".", ":(exclude)figures"], cwd=root,
                               capture_output=True, text=True, timeout=30)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def git_commit(root: str | os.PathLike | None = None) -> str:
    """``git rev-parse HEAD`` of the repository, ``-dirty`` appended when the tree has
    uncommitted changes (modified or untracked, not ignored, files outside
    ``figures/``); ``"unknown"`` outside git (or without git)."""
    from ...data import repo_root

    return _git_commit(str(Path(root) if root is not None else repo_root()))

if __name__ == "__main__":  # printed by .ci/run
    print("machine fingerprint: " + json.dumps(fingerprint(), sort_keys=True))
