"""A part registered as a class has its fields filled by name from its token's parameters
(``Param.field``, :func:`fedlib.algorithms.registry.build_part`): every such parameter
fills a field of one of its token's parts, and a non-default value set in the
configuration arrives in that field."""

from __future__ import annotations

import dataclasses
import functools

import pytest

from fedlib.algorithms import METHODS, build_algorithm
from fedlib.algorithms.registry import build_part
from fedlib.config import Config
from fedlib.params import ConfigError


def _classes(token) -> dict[str, type]:
    """kind -> part class, for the parts a token registered as a class."""
    return {kind: b.args[0] for kind, b in token.parts.items()
            if isinstance(b, functools.partial) and b.func is build_part}


def _other_value(p):
    """A valid value of parameter ``p`` other than its default."""
    if p.type is bool:
        return not p.default
    if p.choices:
        return next(c for c in p.choices if c != p.default)
    base = p.default if p.default is not None else 1
    for v in (base + 1, base / 2, base * 2, 1, 0.5, 0, 3):
        v = p.type(v) if p.type is int else float(v)
        if v == p.default:
            continue
        try:
            p.validate(v)
        except ConfigError:
            continue
        return v
    raise AssertionError(f"no other valid value for {p.name}")


TOKENS = sorted(n for n, t in METHODS.items() if _classes(t))


def test_most_tokens_build_their_parts_by_name():
    assert {"fedic", "fedlc", "fedabc", "moon", "feddf", "fedbe", "crt", "ratio_loss", "fedopt"} <= set(TOKENS)
    assert build_algorithm(Config(method="fedopt", server_lr=0.3)).server_optimizer.lr == 0.3


@pytest.mark.parametrize("name", TOKENS)
def test_every_parameter_fills_a_field_and_its_value_arrives(name):
    token = METHODS[name]
    classes = _classes(token)
    fields = {kind: {f.name for f in dataclasses.fields(cls)} for kind, cls in classes.items()}
    owned = [p for p in token.params if any(p.field_name in fs for fs in fields.values())]
    if len(classes) == len(token.parts):  # every part built by name: every parameter must land somewhere
        assert len(owned) == len(token.params), (
            f"{name}: parameters filling no field: {[p.name for p in token.params if p not in owned]}")
    base = {"dataset": "synthetic", "method": name}
    if any(k in ("server_training",) for k in classes):
        base = {"dataset": "fmnist", "method": name, "long_tail_if": 2.0, "server_unlabeled": "long_tail_dropped"}
    for p in owned:
        value = _other_value(p)
        try:
            config = Config(**base, **{p.name: value})
        except ConfigError:  # a value valid alone but not with the others (a joint check)
            continue
        alg = build_algorithm(config)
        for kind, fs in fields.items():
            if p.field_name in fs:
                assert getattr(getattr(alg, kind), p.field_name) == value, (name, p.name, kind)


def test_a_core_field_is_filled_only_when_the_part_asks_for_it():
    from fedlib.algorithms.fedic import FedicServer
    from fedlib.algorithms.posthoc import ClassifierRetraining

    config = Config(dataset="fmnist", method="crt", seed=7, lr=0.3)
    assert build_part(ClassifierRetraining, config).lr == ClassifierRetraining().lr  # not the client's lr
    assert build_part(FedicServer, config).seed == 7  # FedicServer.from_core = {"seed": "seed"}
