"""A study: every figure, ablation, sensitivity study or analysis that is not one of the paper's tables.

A paper's tables are :class:`fedlib.repro.spec.reported.PaperTable` s, run by
:func:`fedlib.repro.artefacts.tables.reproduce_table`.  Everything else a companion measures is a
:class:`Study`, declared as data in ``fedlib/papers/<paper>/studies.py`` (``STUDIES``) and run by
one driver, :meth:`fedlib.repro.artefacts.context.Context.study`:

1. :meth:`Study.options_for` -- the study's typed options (:class:`Option`: default, allowed
   range, source), read from the profile's settings of the study's experiment and then from the
   notebook's keyword arguments; an unknown or out-of-range option is refused, naming it, before
   any work;
2. :meth:`Study.cells` -- the configurations it needs (each through :func:`fedlib.repro.budget.gate.decide`:
   trained here, read from the store, or "not run" with its reason);
3. the grid of those cells, trained or read through the results store;
4. :meth:`Study.summarize` -- its table(s); :meth:`Study.findings` -- its sentences.

>>> FIG5 = Study("fig5", "Fig. 5: FedABC vs FedABC_wi", build_cells=fig5_cells,
...              build_summary=fig5_summary, build_findings=fig5_findings,
...              options=(Option("betas", (0.1, 0.3), tuple, "Dir(β) values", source="paper §Ablation"),))
...                                                                               # doctest: +SKIP
>>> result = ctx.study("fig5")                                                    # doctest: +SKIP
>>> result.summary, result.findings                                               # doctest: +SKIP

A study whose functions take no options declares none; the functions always receive the resolved
:class:`Options` (a read-only mapping with attribute access) as their last argument.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping

from ...params import ConfigError, Param

__all__ = ["Study", "Option", "Options", "StudyResult"]

_CONTAINERS = {tuple: (tuple, list), list: (tuple, list), dict: (dict,)}


@dataclass(frozen=True)
class Option(Param):
    """One typed option of a study: a :class:`fedlib.params.Param` whose type may also be ``tuple``,
    ``list`` or ``dict`` (a grid of values, a centre point).  ``check`` then receives the container."""

    def validate(self, value: Any) -> None:
        if self.type not in _CONTAINERS:
            return super().validate(value)
        if value is None:
            if self.optional:
                return
            raise ConfigError(f"{self.name} must be a {self.type.__name__}, got None")
        if not isinstance(value, _CONTAINERS[self.type]):
            raise ConfigError(f"{self.name} must be a {self.type.__name__} ({self.doc}), got {value!r}")
        if self.check is not None and not self.check(value):
            raise ConfigError(f"{self.name} must be {self.allowed or 'valid'} ({self.doc}), got {value!r}")


class Options(Mapping):
    """A study's resolved options: read-only, by key (``opts["betas"]``) or attribute (``opts.betas``).
    Beside them, what they were resolved for: :attr:`profile` (None outside a profile) and :attr:`store`
    (where the study's runs are, for a study that reads trained models back; None: the regeneration store)."""

    def __init__(self, values: Mapping[str, Any], profile: Any = None, store: Any = None):
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_profile", profile)
        object.__setattr__(self, "_store", store)

    @property
    def profile(self) -> Any:
        return self._profile

    @property
    def store(self) -> Any:
        return self._store

    def bound(self, store: Any) -> "Options":
        """The same options, for runs kept in ``store``."""
        return Options(self._values, self._profile, store)

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __getattr__(self, key: str) -> Any:
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"no option {key!r}; declared: {', '.join(self._values) or 'none'}") from None

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("Options are read-only")

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Options({self._values!r})"


def _no_findings(summary: Any, opts: Options) -> list[str]:
    return []


@dataclass(frozen=True)
class Study:
    """A figure, ablation, sensitivity study or analysis of a paper, declared as data.

    ``id``: the experiment it belongs to (a key of the companion's ``EXPERIMENTS``; its seeds,
    overrides and options come from the profile's settings of that experiment).
    ``build_cells(profile, opts)``: the configurations it needs (dicts of labels + ``config``,
    ``None`` when not run, and ``note``); ``build_summary(grid, opts)``: its table(s) from the grid
    (``grid`` is ``None`` for a study that ``trains`` nothing); ``build_findings(summary, opts)``: its
    sentences.  ``options``: its typed options.  ``name``: the study's own name when one experiment
    holds several studies (default: ``id``)."""

    id: str
    title: str
    build_cells: Callable[..., list[dict]]
    build_summary: Callable[..., Any]
    build_findings: Callable[..., list[str]] = _no_findings
    options: tuple[Option, ...] = ()
    trains: bool = True
    name: str = ""
    doc: str = ""

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", self.id)
        names = [o.name for o in self.options]
        if len(set(names)) != len(names):
            raise ValueError(f"study {self.name!r}: an option is declared twice: {names}")
        reserved = {"profile", "store", "bound"} & set(names)
        if reserved:
            raise ValueError(f"study {self.name!r}: {sorted(reserved)} name what options are resolved for, not options")

    # ------------------------------------------------------------------ options
    def options_for(self, profile: Any = None, /, **given: Any) -> Options:
        """The options of this study under ``profile``: each declared option's default, then the
        profile's setting of the same name for :attr:`id`, then ``given``; validated."""
        declared = {o.name: o for o in self.options}
        unknown = sorted(set(given) - set(declared))
        if unknown:
            raise ConfigError(f"study {self.name!r} has no option {', '.join(map(repr, unknown))}; "
                              f"declared: {', '.join(declared) or 'none'}")
        settings = profile.experiment(self.id) if profile is not None else {}
        values = {}
        for name, option in declared.items():
            value = given.get(name, settings.get(name, option.default))
            option.validate(value)
            values[name] = value
        return Options(values, profile)

    def describe(self) -> list[dict]:
        """The declared options (name, default, allowed, doc, source), for a notebook or the README."""
        return [o.describe() for o in self.options]

    # ------------------------------------------------------------------ the three steps
    def cells(self, profile: Any, opts: Options | None = None, **given: Any) -> list[dict]:
        """The configurations this study needs under ``profile``."""
        opts = self.options_for(profile, **given) if opts is None else opts
        return list(self.build_cells(profile, opts)) if self.trains else []

    def summarize(self, grid: Any, opts: Options | None = None, profile: Any = None, **given: Any) -> Any:
        opts = self.options_for(profile, **given) if opts is None else opts
        return self.build_summary(grid, opts)

    def findings(self, summary: Any, opts: Options | None = None, profile: Any = None, **given: Any) -> list[str]:
        opts = self.options_for(profile, **given) if opts is None else opts
        return list(self.build_findings(summary, opts))


@dataclass
class StudyResult:
    """What :meth:`fedlib.repro.artefacts.context.Context.study` returns: the summary (a DataFrame, or a dict
    of them), the findings, the grid it came from (None for a study that trains nothing) and the
    options it ran with."""

    study: Study
    options: Options
    summary: Any
    findings: list[str] = field(default_factory=list)
    grid: Any = None

    @property
    def runs(self):
        return None if self.grid is None else self.grid.runs
