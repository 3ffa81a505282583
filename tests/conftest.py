"""Test-wide settings: data from ../shared/data unless FEDLIB_DATA says otherwise,
and a fresh results store and cache for every test."""

import contextlib
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("FEDLIB_DATA", str(REPO.parent / "shared" / "data"))


def pytest_report_header(config):
    """The machine's fingerprint at the top of every test run: a bit-identity failure on a new machine
    names the CPU, ISA level, torch, MKL and oneDNN it ran with (tests/test_refactor_identity.py)."""
    from fedlib.repro.run.machine import fingerprint

    return "machine: " + ", ".join(f"{k}={v}" for k, v in sorted(fingerprint().items()))


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_STORE", str(tmp_path / "store"))


def have_cxx() -> bool:
    """Whether torch.compile can build CPU kernels here: inductor compiles them with $CXX, else g++ or clang++."""
    import shutil

    return any(shutil.which(c) for c in (os.environ.get("CXX"), "g++", "clang++") if c)


#: the compiled engine's tests train under torch.compile on the CPU, which needs a C++ compiler
needs_cxx = pytest.mark.skipif(not have_cxx(), reason="torch.compile on a CPU needs a C++ compiler ($CXX, g++ or "
                                                       "clang++): none on this machine")


def have_dataset(name: str) -> bool:
    root = Path(os.environ["FEDLIB_DATA"])
    marker = {"mnist": "MNIST/raw", "fmnist": "FashionMNIST/raw", "cifar10": "cifar10/train",
              "cifar100": "cifar-100-python"}[name]
    return (root / marker).exists()


class Interrupted(Exception):
    """Raised by :func:`interrupt_after` to stop a run mid-way (a resumption test's crash)."""


def interrupt_after(round_: int):
    """An ``on_round_end`` hook that stops the run after round ``round_`` (its checkpoint written)."""

    def hook(r, state):
        if r == round_:
            raise Interrupted

    return hook


#: What float rounding alone moves a run by, as a test measures it: the largest change the one-ulp nudges of
#: these seeds cause (:func:`nudged`); a tolerance is NUDGE_FACTOR × that.
NUDGE_SEEDS = (0, 1)
NUDGE_FACTOR = 16.0


@contextlib.contextmanager
def nudged(seed: int):
    """Every run's initial parameters with a random third of the entries one ulp up and a third one ulp
    down (float32): the rounding a different kernel would make, applied at the input."""
    import torch

    from fedlib.experiment import Experiment

    original = Experiment.initial_params

    def initial_params(self):
        params = original(self)
        gen = torch.Generator().manual_seed(seed)
        out = {}
        for k in sorted(params):
            v = params[k]
            if v.is_floating_point():
                pick = torch.randint(0, 3, v.shape, generator=gen)
                up = torch.nextafter(v, torch.full_like(v, float("inf")))
                down = torch.nextafter(v, torch.full_like(v, float("-inf")))
                v = torch.where(pick == 0, down, torch.where(pick == 1, v, up))
            out[k] = v
        return out

    Experiment.initial_params = initial_params
    try:
        yield
    finally:
        Experiment.initial_params = original
