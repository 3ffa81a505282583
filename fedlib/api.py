"""``fedlib.run``: one call from a configuration to a stored, reproducible result."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pandas as pd
import torch

from .config import Config
from .models import build_model
from .simulation import simulate
from .store import Store

__all__ = ["Result", "run"]


@dataclass
class Result:
    """A finished run: its resolved configuration, per-round history and final model."""

    config: Config
    history: pd.DataFrame  # one row per evaluated round: round, test_accuracy, train_loss, acc_class_<y>
    summary: dict
    params: dict[str, torch.Tensor]

    @property
    def final_accuracy(self) -> float:
        return float(self.summary["final_accuracy"])

    @property
    def per_class_accuracy(self) -> pd.Series:
        """Final per-class test accuracy, indexed by class."""
        last = self.history.iloc[-1]
        cols = [c for c in self.history.columns if c.startswith("acc_class_")]
        return pd.Series([last[c] for c in cols], index=[int(c.rsplit("_", 1)[1]) for c in cols], dtype=float)

    @property
    def wall_time_s(self) -> float:
        return float(self.summary["wall_time_s"])

    def model(self) -> torch.nn.Module:
        """The final global model as an ``nn.Module``."""
        from .config import DATASET_FACTS
        from .data import DATASETS

        info = DATASETS[self.config.dataset]
        net = build_model(self.config.model, DATASET_FACTS[self.config.dataset]["num_classes"],
                          tuple(info["input_shape"]))
        net.load_state_dict(self.params)
        return net

    def to_json_summary(self) -> dict:
        return {"final_accuracy": self.final_accuracy, "wall_time_s": self.wall_time_s,
                "key": self.summary.get("key"), "config": self.config.to_dict()}


def _resolve_store(store: Any) -> Store | None:
    if store is None or store is False:
        return None
    if store is True:
        return Store()
    if isinstance(store, Store):
        return store
    return Store(os.fspath(store))


def run(config: Config | dict | None = None, *, store: Any = True, progress: bool = True, **params: Any) -> Result:
    """Run one federated simulation and return its :class:`Result`.

    ``config`` (a :class:`Config` or a dict) and keyword ``params`` are merged,
    keywords winning; every value is validated before any work starts.
    ``store=True`` uses the default results store (``$FEDLIB_STORE`` or
    ``~/.cache/fedlib/store``), a path uses that folder, ``False`` stores nothing.
    A run already in the store is returned at once; an interrupted one resumes.

    >>> result = run(dataset="synthetic", method="fedlc", tau=1.0, rounds=300, num_clients=100)  # doctest: +SKIP
    >>> result.final_accuracy, result.history.tail()  # doctest: +SKIP
    """
    base = config.to_dict() if isinstance(config, Config) else dict(config or {})
    cfg = Config.from_dict({**base, **params})
    out = simulate(cfg, store=_resolve_store(store), progress=progress)
    return Result(cfg, history_frame(out["history"]), out["summary"], out["params"])


def history_frame(rows: list[dict]) -> pd.DataFrame:
    """History rows as a DataFrame with a fixed column order (round, test_accuracy,
    train_loss, acc_class_0 …), whether they come fresh or from the store's JSON."""
    frame = pd.DataFrame(rows)
    per_class = sorted((c for c in frame.columns if c.startswith("acc_class_")), key=lambda c: int(c[10:]))
    return frame[["round", "test_accuracy", "train_loss", *per_class]].astype({c: float for c in per_class})
