"""Test-wide settings: data from ../shared/data unless FEDLIB_DATA says otherwise,
and a fresh results store and cache for every test."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("FEDLIB_DATA", str(REPO.parent / "shared" / "data"))


@pytest.fixture(autouse=True)
def _isolated_store(tmp_path, monkeypatch):
    monkeypatch.setenv("FEDLIB_STORE", str(tmp_path / "store"))


def have_dataset(name: str) -> bool:
    root = Path(os.environ["FEDLIB_DATA"])
    marker = {"mnist": "MNIST/raw", "fmnist": "FashionMNIST/raw", "cifar10": "cifar10/train"}[name]
    return (root / marker).exists()
