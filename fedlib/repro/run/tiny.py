"""A queued configuration at a tiny scale, on the CPU: what ``python -m fedlib.repro.lease --check`` trains one
round of before a lease, and what a carry's check (:mod:`fedlib.repro.carry`) trains under two codes."""

from __future__ import annotations

__all__ = ["tiny_config"]

_TINY_SUFFIXES = ("_steps", "_rounds", "_epochs", "rounds", "epochs")


def tiny_config(cfg: dict, samples: int = 600) -> dict:
    """``cfg`` on the CPU at a tiny scale: one round, a training subset of ``samples`` or 30 a client, whichever
    is more (Dir(0.1) over 100 clients finds no draw that gives each client a sample of 600), 3 test samples a class and client (class-balanced
    shards for every client; FEDIC's teacher is evaluated on them),
    every method parameter counting steps, rounds or epochs cut to 1 (0 keeps its meaning) and D_aux to 5 a class."""
    from ...algorithms.registry import method_params
    from ...data import DATASETS

    classes = DATASETS[cfg.get("dataset", "synthetic")].num_classes
    tests = min(10_000, max(64, 3 * classes * int(cfg.get("num_clients", 20))))
    samples = max(samples, 30 * int(cfg.get("num_clients", 20)))
    small = {**cfg, "device": "cpu", "precision": "float32", "rounds": 1, "local_epochs": 1, "max_train_samples":
             samples, "max_test_samples": tests, "min_client_size": 1, "server_unlabeled_size": 64}
    for p in method_params(cfg.get("method", "fedavg")):
        if p.type is int and p.name.endswith(_TINY_SUFFIXES) and isinstance(cfg.get(p.name, p.default), int):
            value = cfg.get(p.name, p.default)
            small[p.name] = min(value, 1) if value else value
    if cfg.get("server_aux_per_class"):
        small["server_aux_per_class"] = 5
    return small
