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
    from_store: bool = False  # returned from the results store (trained earlier), not trained now

    @property
    def final_accuracy(self) -> float:
        """The global model's accuracy on the global test set at the last round."""
        return float(self.summary["final_accuracy"])

    @property
    def diverged_round(self) -> int | None:
        """The first round after which the global model's parameters were not finite (NaN or
        inf), None for a run that stayed finite.  A diverged run's accuracies are a broken
        model's; grids report it as ``diverged`` and leave it out of their means."""
        return self.summary.get("diverged_round")

    def _personal(self, name: str) -> float:
        if self.summary.get(name) is None:
            raise ValueError(
                f"{name} needs per-client test sets, and this run has none: method {self.config.method!r} ran with "
                f"personal_eval_every={self.config.personal_eval_every}. Run it again with personal_eval_every ≥ 1 "
                "(e.g. personal_eval_every=rounds) to evaluate every client's personalized model.")
        return float(self.summary[name])

    @property
    def personalized_accuracy(self) -> float:
        """FedABC Eq. 7: the pooled accuracy (Σ correct / Σ samples) of every client's
        personalized model on its own test set, which has the client's training label
        distribution.  Refused (ValueError) for a run without per-client test sets."""
        return self._personal("personalized_accuracy")

    @property
    def drift_accuracy(self) -> float:
        """FedABC Eq. 8: the same personalized models on class-balanced local test sets."""
        return self._personal("drift_accuracy")

    @property
    def personalized_per_client(self) -> list:
        """Each client's personalized-model accuracy on its own test set (None: empty test set)."""
        self._personal("personalized_accuracy")
        return list(self.summary["personalized_per_client"])

    @property
    def stage_outputs(self) -> dict:
        """What the stages of a multi-stage method report besides the final model
        (e.g. FedConcat's client → cluster assignment); empty for one-stage methods."""
        return dict(self.summary.get("stage_outputs", {}))

    def __getattr__(self, name: str):
        """A stage output by name, e.g. FedConcat's ``r.clusters`` (the client → cluster
        assignment); only names that are not attributes of :class:`Result` get here."""
        outputs = {} if name.startswith("_") else self.__dict__.get("summary", {}).get("stage_outputs", {})
        if name in outputs:
            return outputs[name]
        known = f"; this run's stage outputs are {sorted(outputs)}" if outputs else ""
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}{known}")

    @property
    def per_class_accuracy(self) -> pd.Series:
        """Final per-class test accuracy of the global model, indexed by class."""
        evaluated = self.history.dropna(subset=["test_accuracy"]) if "test_accuracy" in self.history else self.history
        last = evaluated.iloc[-1]
        cols = [c for c in self.history.columns if c.startswith("acc_class_")]
        return pd.Series([last[c] for c in cols], index=[int(c.rsplit("_", 1)[1]) for c in cols], dtype=float)

    @property
    def group_accuracy(self) -> dict:
        """Final test accuracy by class-frequency group, ``{"many", "medium", "few"}``: the
        mean per-class accuracy of the classes in each group, grouped by their training
        counts with the run's ``group_rule`` (:mod:`fedlib.metrics`)."""
        return self._group_accuracy_of(self.per_class_accuracy.to_numpy())

    def _group_accuracy_of(self, per_class) -> dict:
        from .metrics import class_groups, group_accuracy

        counts = self.summary.get("train_class_counts")
        if counts is None:
            raise ValueError("group_accuracy needs the training class counts, which this stored run predates; "
                             "run it again")
        c = self.config
        groups = class_groups(counts, c.group_rule, c.group_rank_fraction, c.group_many_above, c.group_few_below)
        return group_accuracy(per_class, groups)

    @property
    def reported(self) -> dict:
        """What the run's parts reported into the history besides the global model's
        evaluation (e.g. FEDIC's ``teacher_accuracy``, :mod:`fedlib.algorithms.fedic`):
        each reported ``<name>_accuracy`` at its last reported value and, for each
        reported per-class accuracy ``<name>_acc_class_<y>``, ``<name>_group_accuracy``
        (``{"many", "medium", "few"}``, as :attr:`group_accuracy`).  Empty when nothing
        was reported."""
        own = {"test_accuracy", "personalized_accuracy", "drift_accuracy"}
        out: dict = {}
        for col in self.history.columns:
            if col.endswith("_accuracy") and col not in own:
                values = pd.to_numeric(self.history[col], errors="coerce").dropna()
                if len(values):
                    out[col] = float(values.iloc[-1])
        prefixes = dict.fromkeys(c.split("_acc_class_")[0] for c in self.history.columns
                                 if "_acc_class_" in c and not c.startswith("acc_class_"))
        for prefix in prefixes:
            cols = sorted((c for c in self.history.columns if c.startswith(f"{prefix}_acc_class_")),
                          key=lambda c: int(c.rsplit("_", 1)[1]))
            rows = self.history[cols].apply(pd.to_numeric, errors="coerce").dropna(how="all")
            if len(rows) and self.summary.get("train_class_counts") is not None:
                per_class = rows.iloc[-1].to_numpy(dtype=float)
                if len(per_class) == len(self.summary["train_class_counts"]):
                    out[f"{prefix}_group_accuracy"] = self._group_accuracy_of(per_class)
        return out

    @property
    def wall_time_s(self) -> float:
        return float(self.summary["wall_time_s"])

    def model(self) -> torch.nn.Module:
        """The final model as an ``nn.Module`` (for a multi-stage method, the model its
        last stage produces, e.g. FedConcat's concatenated encoders and classifier)."""
        from .algorithms import build_algorithm
        from .data import DATASETS

        spec = DATASETS[self.config.dataset]
        alg = build_algorithm(self.config)
        net = alg.extend_model(build_model(self.config.model, spec.num_classes, spec.input_shape,
                                          layout=self.config.memory_format))
        net = alg.stages.final_model(net, self.config)
        net.load_state_dict(self.params)
        return net

    def to_json_summary(self) -> dict:
        out = {"final_accuracy": self.final_accuracy, "wall_time_s": self.wall_time_s,
               "key": self.summary.get("key"), "config": self.config.to_dict()}
        if self.summary.get("train_class_counts") is not None:
            out["group_accuracy"] = self.group_accuracy
        for name in ("personalized_accuracy", "drift_accuracy"):
            if self.summary.get(name) is not None:
                out[name] = self.summary[name]
        out.update(self.reported)
        if self.diverged_round is not None:
            out["diverged_round"] = self.diverged_round
        if self.summary.get("stage_outputs"):
            out["stage_outputs"] = self.summary["stage_outputs"]
        return out


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
    return Result(cfg, history_frame(out["history"]), out["summary"], out["params"], bool(out.get("from_store")))


def history_frame(rows: list[dict]) -> pd.DataFrame:
    """History rows as a DataFrame with a fixed column order (stage if any, round,
    test_accuracy, train_loss, personalized metrics if any, acc_class_0 …),
    whether they come fresh or from the store's JSON."""
    frame = pd.DataFrame(rows)
    per_class = sorted((c for c in frame.columns if c.startswith("acc_class_")), key=lambda c: int(c[10:]))
    first = [c for c in ("stage", "round", "test_accuracy", "train_loss", "personalized_accuracy", "drift_accuracy")
             if c in frame.columns]
    rest = [c for c in frame.columns if c not in first and c not in per_class]
    return frame[[*first, *rest, *per_class]].astype({c: float for c in per_class})
