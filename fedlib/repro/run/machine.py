"""What machine computed a number: the facts that decide whether two machines run the same kernels.

Two CPUs with the same torch and the same ISA level (``torch.backends.cpu.get_cpu_capability()``)
may still round differently: oneDNN and MKL pick code paths by CPU vendor and model.  Bit identity
between two machines is therefore claimed only when every field of :func:`fingerprint` is equal:
the CPU's vendor, model name and family/model/stepping, the ISA level torch uses, the torch build,
and the MKL and oneDNN builds linked into it.  Anywhere else, results agree to float rounding
(``tests/test_refactor_identity.py`` says how far).

``python fedlib/repro/run/machine.py`` prints the fingerprint (it needs only the standard library and, for the
kernel fields, torch: ``.ci/run`` prints it first; the test suite's header prints it too).
"""

from __future__ import annotations

import json
import platform
import re
from functools import lru_cache

__all__ = ["cpu", "fingerprint", "kernels_match"]


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


if __name__ == "__main__":  # printed by .ci/run
    print("machine fingerprint: " + json.dumps(fingerprint(), sort_keys=True))
