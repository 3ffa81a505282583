"""A parameter, declared once where it is used: name, default, allowed range, one line of doc.

Algorithm parts declare their hyperparameters as :class:`Param` objects (as
FedJAX's algorithms take their hyperparameters and Flower's strategies their
constructor arguments).  :mod:`fedlib.config` collects them into the run
configuration, validates them, and lists them in ``python -m fedlib params``
and the README's parameter table, so adding a method adds no line to the
configuration module.

>>> mu = Param("mu", 0.01, float, "FedProx proximal weight μ", check=lambda v: v >= 0, allowed="≥ 0")
>>> mu.validate(0.1)
>>> mu.validate(-1)  # doctest: +IGNORE_EXCEPTION_DETAIL
Traceback (most recent call last):
fedlib.params.ConfigError: mu must be ≥ 0 (FedProx proximal weight μ), got -1
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["ConfigError", "Param", "type_name", "check_type"]


class ConfigError(ValueError):
    """A configuration value is unknown, of the wrong type or out of range."""


def type_name(tp: type) -> str:
    return {int: "an integer", float: "a number", str: "a string", bool: "true or false"}.get(tp, str(tp))


def check_type(name: str, value: Any, base: type, optional: bool = False) -> None:
    """Raise :class:`ConfigError` unless ``value`` is of ``base`` (ints pass as floats; bools never pass
    as numbers); ``None`` passes only when ``optional``."""
    if value is None:
        if optional:
            return
        raise ConfigError(f"{name} must be {type_name(base)}, got None")
    if base is bool:
        ok = isinstance(value, bool)
    elif base is str:
        ok = isinstance(value, str)
    elif base is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        raise ConfigError(f"{name} must be {type_name(base)}, got {value!r} ({type(value).__name__})")
    if base is float and not math.isfinite(value):
        raise ConfigError(f"{name} must be a finite number, got {value!r}")


@dataclass(frozen=True)
class Param:
    """One hyperparameter.

    ``check`` is a predicate on a value of the right type (``None`` values of an
    ``optional`` parameter are not checked); ``allowed`` says in words what it
    accepts, and is what an error message and the README show.  ``choices``
    is the shortcut for a string parameter with a fixed set of values.
    ``source`` names where the default comes from (a paper and equation, a
    public implementation, or "not in paper").  ``field`` is the field of the
    algorithm part this parameter fills (default: a field of the parameter's own
    name; see :func:`fedlib.algorithms.registry.build_part`).
    """

    name: str
    default: Any
    type: type
    doc: str
    check: Callable[[Any], bool] | None = None
    allowed: str = ""
    choices: tuple | None = None
    optional: bool = False
    source: str = ""
    field: str = ""

    @property
    def field_name(self) -> str:
        """The part field this parameter fills."""
        return self.field or self.name

    def __post_init__(self) -> None:
        if self.choices is not None and not self.allowed:
            object.__setattr__(self, "allowed", "one of " + ", ".join(repr(c) for c in self.choices))
        if self.default is not None or not self.optional:
            self.validate(self.default)

    def validate(self, value: Any) -> None:
        """Raise :class:`ConfigError` naming this parameter and its allowed range."""
        check_type(self.name, value, self.type, self.optional)
        if value is None:
            return
        ok = (self.choices is None or value in self.choices) and (self.check is None or bool(self.check(value)))
        if not ok:
            raise ConfigError(f"{self.name} must be {self.allowed or 'valid'} ({self.doc}), got {value!r}")

    def parse(self, text: str) -> Any:
        """The value of a command-line string ``text``."""
        if self.optional and text.lower() in ("none", "null", ""):
            return None
        try:
            if self.type is bool:
                if text.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                return text.lower() in ("true", "1", "yes")
            if self.type is int:
                return int(text)
            if self.type is float:
                return float(text)
        except ValueError:
            raise ConfigError(f"{self.name} must be {type_name(self.type)}, got {text!r}") from None
        return text

    def describe(self) -> dict:
        return {"name": self.name, "default": self.default, "allowed": self.allowed or type_name(self.type),
                "doc": self.doc, "source": self.source}
