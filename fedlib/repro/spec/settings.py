"""An experiment's settings in a profile: a frozen, typed record that refuses a typo.

A profile (:class:`fedlib.repro.spec.profiles.Profile`) holds, per experiment (a paper table or a
study), the few settings that steer its grid.  They were a free ``dict``: ``"lambda"`` for
``"lambdas"`` silently ran a study's defaults, ``"column"`` for ``"columns"`` the whole table.  Here
they are :class:`Settings`, in the way of pfl-research's params:

* the settings every experiment may take are typed fields (:data:`FIELDS`);
* everything else is a study's own option (:class:`fedlib.repro.spec.study.Option`) or a key the
  companion declares for an experiment without a study (``Paper.settings_keys``), kept in ``options``;
* :func:`check_paper` runs when a companion is imported: an unknown key, a table column or row that
  does not exist, and a study option out of its range each fail there, naming the profile, the
  experiment, the key and what is allowed.

A :class:`Settings` reads as the mapping it was written as (``settings.get("columns")``,
``{**settings, ...}``), so a profile is still written as plain data::

    QUICK = Profile(..., experiments={"table1": {"columns": ("cifar10_if100",)}, "fig4": {"lambdas": (0.0, 1.0)}})
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Iterator, Mapping

from ...params import ConfigError

__all__ = ["Settings", "FIELDS", "check_paper"]

#: The settings every experiment may take: name -> (accepted types, what it does).
FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "columns": ((tuple, list), "the table columns this profile runs (keys of the table)"),
    "rows": ((tuple, list), "the table rows this profile runs (keys of the table)"),
    "seeds": ((tuple, list), "the seeds of this experiment (default: the profile's)"),
    "overrides": ((dict,), "configuration overrides for its runs (or {'image': …, 'synthetic': …})"),
    "uses_seeds": ((bool,), "False: the experiment's result does not vary with the seed"),
    "trains": ((bool,), "False: the experiment trains nothing (no cost gate)"),
    "substitute": ((bool,), "False: run the paper's own datasets, never the profile's stand-ins"),
    "table": ((str,), "the paper table whose cells this experiment reuses"),
    "paper_datasets": ((tuple, list), "the paper datasets the experiment involves (deviation lines)"),
}


@dataclass(frozen=True)
class Settings(Mapping):
    """One experiment's settings in one profile.  A field left ``None`` is not set (its reader's
    default holds); ``options`` holds the study's (or the companion's declared) own keys."""

    columns: tuple | None = None
    rows: tuple | None = None
    seeds: tuple | None = None
    overrides: Mapping | None = None
    uses_seeds: bool | None = None
    trains: bool | None = None
    substitute: bool | None = None
    table: str | None = None
    paper_datasets: tuple | None = None
    options: Mapping = field(default_factory=dict)

    @classmethod
    def parse(cls, values: Mapping[str, Any], *, where: str = "") -> "Settings":
        """Settings from a profile's dict; a field of the wrong type fails here, naming it."""
        if isinstance(values, Settings):
            return values
        if not isinstance(values, Mapping):
            raise ConfigError(f"{where}: settings must be a mapping of setting -> value, got {values!r}")
        typed, options = {}, {}
        for key, value in values.items():
            if key not in FIELDS:
                options[key] = value
                continue
            types, doc = FIELDS[key]
            if not isinstance(value, types):
                names = " or ".join(t.__name__ for t in types)
                raise ConfigError(f"{where}: setting {key!r} must be a {names} ({doc}), got {value!r}")
            typed[key] = tuple(value) if isinstance(value, list) else value
        if "seeds" in typed and not all(isinstance(s, int) and not isinstance(s, bool) for s in typed["seeds"]):
            raise ConfigError(f"{where}: setting 'seeds' must hold integers, got {typed['seeds']!r}")
        return cls(**typed, options=dict(options))

    # ------------------------------------------------------------------ read as the dict it was written as
    @cached_property
    def _given(self) -> dict[str, Any]:
        """The settings given (fields left None are not), once: the record is frozen."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "options"}
        return {**{k: v for k, v in out.items() if v is not None}, **self.options}

    def __getitem__(self, key: str) -> Any:
        return self._given[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)

    def __repr__(self) -> str:
        return f"Settings({self._given!r})"


def _unknown(where: str, key: str, allowed: list[str]) -> ConfigError:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return ConfigError(f"{where}: unknown setting {key!r}{hint}; allowed: {', '.join(sorted(allowed))}")


def check_paper(paper: Any, studies: Mapping[str, Any] | None = None) -> None:
    """Check every profile of ``paper`` against what the companion declares: it names this paper and its own
    key in ``paper.profiles`` (a profile finds its companion by that name); each experiment is
    one of ``paper.experiments``; each key is a :data:`FIELDS` setting, an option of a study of that
    experiment, or one of ``paper.settings_keys[experiment]``; ``columns``/``rows`` exist in the
    table; each study's options, as the profile sets them, are in range.  Raises
    :class:`fedlib.params.ConfigError` naming the first problem."""
    studies = dict(paper.studies if studies is None else studies)
    by_experiment: dict[str, list] = {}
    for study in studies.values():
        by_experiment.setdefault(study.id, []).append(study)
    for pname, profile in paper.profiles.items():
        if profile.name != pname or profile.paper != paper.name:  # a profile finds its companion by this name
            raise ConfigError(f"{paper.name} profile {pname!r}: declared as profile {profile.name!r} of paper "
                              f"{profile.paper!r}; it must be profile {pname!r} of {paper.name!r}")
        for experiment, settings in profile.experiments.items():
            where = f"{paper.name} profile {pname!r}, experiment {experiment!r}"
            if experiment not in paper.experiments:
                raise ConfigError(f"{paper.name} profile {pname!r}: unknown experiment {experiment!r}; declared: "
                                  f"{', '.join(paper.experiments)}")
            own = {o.name for s in by_experiment.get(experiment, ()) for o in s.options}
            allowed = set(FIELDS) | own | set(paper.settings_keys.get(experiment, ()))
            for key in settings.options:
                if key not in allowed:
                    raise _unknown(where, key, list(allowed))
            table = experiment if experiment in paper.tables else settings.table
            if settings.table is not None and settings.table not in paper.tables:
                raise ConfigError(f"{where}: setting 'table' names no table: {settings.table!r}; "
                                  f"tables: {', '.join(paper.tables)}")
            for kind, keys in (("columns", settings.columns), ("rows", settings.rows)):
                if keys is None:
                    continue
                # an experiment that is no table reads one: the one it names, else the one holding these keys
                holders = [table] if table is not None else \
                    [t for t, tab in paper.tables.items() if set(keys) <= {x.key for x in getattr(tab, kind)}]
                known = sorted({x.key for t in (holders or paper.tables) for x in getattr(paper.tables[t], kind)})
                missing = [k for k in keys if k not in known]
                if missing or not holders:
                    raise ConfigError(f"{where}: {kind} {missing or list(keys)} not in "
                                      f"{table or 'any one table'}; known {kind}: {', '.join(known)}")
            for study in by_experiment.get(experiment, ()):
                try:
                    study.options_for(profile)
                except ConfigError as err:
                    raise ConfigError(f"{where}, study {study.name!r}: {err}") from None
