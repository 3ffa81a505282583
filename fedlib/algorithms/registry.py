"""Method tokens: each names the algorithm parts it sets and the parameters they take.

A method is written as tokens joined by ``+`` (``"fedlc+scaffold"``).  Every
token is registered once, in the module that implements it, with

* ``parts``: for each part kind it sets (see :data:`PART_KINDS`), the part's
  class (a dataclass of :mod:`fedlib.algorithms.kinds`, whose fields the
  configuration fills by name, :func:`build_part`) or a builder ``config -> part``;
* ``params``: the :class:`~fedlib.params.Param` objects its parts read;
* ``defaults`` (optional): core parameters whose ``None`` default this token
  resolves otherwise (FedAdam's ``server_lr`` of 0.01);
* ``check`` (optional): ``config -> None``, raising
  :class:`~fedlib.params.ConfigError` for values that are wrong only together
  (e.g. more clusters than clients); it runs when the configuration is built,
  before any work.

The parts a method does not set keep FedAvg's default
(:mod:`fedlib.algorithms.fedavg`).  Two tokens of one method may not set the
same part kind.  The run configuration (:mod:`fedlib.config`) collects every
token's parameters, so a new method is one new module and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ..params import ConfigError, Param

__all__ = ["PART_KINDS", "MethodToken", "METHODS", "register_method", "method_params", "all_method_params",
           "parse_method", "build_part", "token_default"]

#: The kinds of parts an algorithm is made of, in the order a round uses them.
PART_KINDS = {
    "loss": "client loss on the logits",
    "representation": "client loss term on the features, with reference models (e.g. MOON)",
    "correction": "client correction of the local gradient, with client/server state",
    "personalization": "which parameters stay on the client, how local training is phased, the personalized model",
    "aggregator": "how the sampled clients' updates become one update",
    "server_optimizer": "how the server applies the aggregated update",
    "server_training": "server-side training on server-held data (distillation, calibration, re-balancing)",
    "stages": "the stages of a multi-stage method (default: one stage of federated rounds)",
}


@dataclass(frozen=True)
class MethodToken:
    name: str
    parts: dict[str, Callable[[Any], Any]]
    params: tuple[Param, ...] = ()
    paper: str = ""
    doc: str = ""
    alone: bool = False  # a token that may not be combined with others (fedavg, the empty composition)
    module: str = ""  # the module that registered it (its code is part of its runs' code version)
    check: Callable[[Any], None] | None = None  # config -> None, raises ConfigError (joint checks)
    defaults: dict = field(default_factory=dict)  # core parameter -> the value its None default means for this token


METHODS: dict[str, MethodToken] = {}


def build_part(cls: type, config: Any, params: tuple[Param, ...] = ()) -> Any:
    """An instance of the part dataclass ``cls`` whose fields are filled by name: a field
    takes the value of the parameter among ``params`` that fills it (:attr:`Param.field_name`),
    else, when the class maps it in ``from_core`` (field → core parameter, e.g. FEDIC's
    ``{"seed": "seed"}``, FedAdam's ``{"lr": "server_lr"}``), of that core parameter; every other
    field keeps its default."""
    from dataclasses import fields as dataclass_fields

    by_field = {p.field_name: p.name for p in params}
    names = {f.name for f in dataclass_fields(cls) if f.init}
    unknown = set(cls.from_core) - names
    if unknown:
        raise TypeError(f"{cls.__name__}.from_core names {sorted(unknown)}, which are not fields of it")
    values = {name: getattr(config, by_field[name]) for name in names if name in by_field}
    values.update({name: getattr(config, core) for name, core in cls.from_core.items() if name not in values})
    return cls(**values)


def register_method(name: str, *, parts: dict[str, Callable[[Any], Any] | type] | None = None,
                    params: tuple[Param, ...] = (), paper: str = "", doc: str = "", alone: bool = False,
                    check: Callable[[Any], None] | None = None, defaults: dict | None = None) -> MethodToken:
    """Register the method token ``name`` (call it at import time of the module that implements it).
    A part given as a class is built by :func:`build_part` from the token's ``params``."""
    import functools

    params = tuple(params)
    parts = {kind: functools.partial(build_part, part, params=params) if isinstance(part, type) else part
             for kind, part in (parts or {}).items()}
    unknown = set(parts) - set(PART_KINDS)
    if unknown:
        raise ValueError(f"method {name!r}: unknown part kind(s) {sorted(unknown)}; known: {list(PART_KINDS)}")
    if "+" in name or not name:
        raise ValueError(f"method token {name!r} may not be empty or contain '+'")
    import sys

    module = sys._getframe(1).f_globals.get("__name__", "")
    token = MethodToken(name, parts, params, paper, doc, alone, module=module, check=check,
                        defaults=dict(defaults or {}))
    if name in METHODS and METHODS[name] != token:
        raise ValueError(f"method token {name!r} is registered twice")
    METHODS[name] = token
    all_method_params()  # fails now, not at run time, if a parameter name clashes
    return token


def all_method_params() -> dict[str, Param]:
    """Every registered token's parameters by name.  A name declared by two tokens
    must be the same declaration (a shared parameter), never two meanings."""
    out: dict[str, Param] = {}
    owner: dict[str, str] = {}
    for token in METHODS.values():
        for p in token.params:
            if p.name in out and out[p.name] != p:
                raise ValueError(f"parameter {p.name!r} is declared differently by methods {owner[p.name]!r} "
                                 f"and {token.name!r}; give one of them another name")
            out.setdefault(p.name, p)
            owner.setdefault(p.name, token.name)
    return out


def parse_method(method: str) -> tuple[MethodToken, ...]:
    """The tokens of ``method``, checked: known, distinct, at most one token per part kind."""
    names = method.split("+")
    known = ", ".join(sorted(METHODS))
    for n in names:
        if n not in METHODS:
            raise ConfigError(f"method must be one or more of {known} joined by '+' (e.g. 'fedlc+scaffold'), "
                              f"got {method!r}")
    if len(set(names)) != len(names):
        raise ConfigError(f"method must be made of distinct tokens, got {method!r}")
    tokens = tuple(METHODS[n] for n in names)
    for t in tokens:
        if t.alone and len(tokens) > 1:
            raise ConfigError(f"method must be {t.name!r} alone (it is the empty composition), got {method!r}")
    setter: dict[str, str] = {}
    for t in tokens:
        for kind in t.parts:
            if kind in setter:
                raise ConfigError(f"method {method!r}: {setter[kind]!r} and {t.name!r} both set the "
                                  f"{PART_KINDS[kind]}; at most one token per part")
            setter[kind] = t.name
    return tokens


def token_default(method: str, name: str, fallback: Any) -> Any:
    """The value a ``None`` core parameter ``name`` takes for ``method``: the one a token of it
    declares in ``defaults``, else ``fallback``."""
    for t in parse_method(method):
        if name in t.defaults:
            return t.defaults[name]
    return fallback


def method_params(method: str) -> tuple[Param, ...]:
    """The parameters the tokens of ``method`` read (no duplicates, token order)."""
    seen: dict[str, Param] = {}
    for t in parse_method(method):
        for p in t.params:
            seen.setdefault(p.name, p)
    return tuple(seen.values())
