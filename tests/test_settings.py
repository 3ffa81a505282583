"""A profile's settings are typed and checked when the companion is imported; the gate decides once.

* A misspelt settings key, a table column that does not exist, and a study option out of range each
  fail in :meth:`fedlib.repro.spec.paper.Paper.check` (every companion's ``__init__`` calls it), with a
  message naming them (issue 50).
* No module under ``fedlib/papers/`` edits a configuration the gate returned: read from the source.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from fedlib.params import ConfigError
from fedlib.repro.spec.paper import get_paper
from fedlib.repro.spec.profiles import Profile, changed
from fedlib.repro.spec.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def _with_quick(paper, experiments: dict):
    """``paper`` whose quick profile's experiments are changed as given."""
    quick = paper.profiles["quick"]
    new = dataclasses.replace(quick, experiments=changed(quick.experiments, experiments))
    return dataclasses.replace(paper, profiles={**paper.profiles, "quick": new})


def test_every_companion_is_checked_at_import():
    for init in sorted((ROOT / "fedlib" / "papers").glob("*/__init__.py")):
        calls = [n for n in ast.walk(ast.parse(init.read_text())) if isinstance(n, ast.Call)
                 and isinstance(n.func, ast.Attribute) and n.func.attr == "check"
                 and isinstance(n.func.value, ast.Name) and n.func.value.id == "PAPER"]
        assert calls, f"{init.relative_to(ROOT)} does not call PAPER.check()"


def test_a_misspelt_key_fails_naming_it_and_the_right_one():
    fedic = get_paper("fedic")
    with pytest.raises(ConfigError, match=r"fig4.*unknown setting 'lambda'.*did you mean 'lambdas'"):
        _with_quick(fedic, {"fig4": {"lambda": (0.0, 1.0)}}).check()
    with pytest.raises(ConfigError, match=r"unknown setting 'column'.*did you mean 'columns'"):
        _with_quick(fedic, {"table1": {"column": ("cifar10_if100",)}}).check()


def test_a_column_or_row_the_table_lacks_fails_naming_it():
    fedic = get_paper("fedic")
    with pytest.raises(ConfigError, match=r"columns \['cifar10_if1000'\] not in table1.*cifar10_if100"):
        _with_quick(fedic, {"table1": {"columns": ("cifar10_if1000",)}}).check()
    with pytest.raises(ConfigError, match=r"rows \['fedavgg'\] not in table1"):
        _with_quick(fedic, {"table1": {"rows": ("fedavgg",)}}).check()


def test_a_study_option_out_of_range_fails_naming_it():
    fedic = get_paper("fedic")
    option = next(o for o in fedic.study("fig4").options if o.name == "lambdas")
    with pytest.raises(ConfigError, match=r"study 'fig4'.*lambdas"):
        _with_quick(fedic, {"fig4": {"lambdas": 0.5}}).check()  # a grid is a tuple, not one value
    assert option.default and isinstance(option.default, tuple)


def test_an_unknown_experiment_and_a_mistyped_field_fail():
    fedic = get_paper("fedic")
    with pytest.raises(ConfigError, match=r"unknown experiment 'fig44'"):
        _with_quick(fedic, {"fig44": {}}).check()
    with pytest.raises(ConfigError, match=r"setting 'trains' must be a bool"):
        Profile(name="x", description="", seeds=(0,), paper="fedic", experiments={"fig4": {"trains": "no"}})


def test_a_profile_of_another_paper_or_under_another_name_fails():
    """A profile finds its companion by its ``paper`` field: FEDIC's quick profile declared with FedLC's
    name would read FedLC's tables; one filed under another key would not be the profile asked for."""
    fedic = get_paper("fedic")
    quick = fedic.profiles["quick"]
    with pytest.raises(ConfigError, match=r"fedic profile 'quick': declared as profile 'quick' of paper 'fedlc'"):
        dataclasses.replace(fedic, profiles={**fedic.profiles, "quick": dataclasses.replace(quick, paper="fedlc")}).check()
    with pytest.raises(ConfigError, match=r"fedic profile 'fast': declared as profile 'quick'"):
        dataclasses.replace(fedic, profiles={**fedic.profiles, "fast": quick}).check()


def test_settings_read_as_the_dict_they_were_written_as():
    s = Settings.parse({"columns": ["a", "b"], "trains": False, "lambdas": (0.5,)})
    assert s.columns == ("a", "b") and s.trains is False and s.rows is None
    assert dict(s) == {"columns": ("a", "b"), "trains": False, "lambdas": (0.5,)}
    assert {**s, "rows": ("r",)}["rows"] == ("r",) and s.get("seeds", (7,)) == (7,)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.columns = ("c",)


# ----------------------------------------------------------------------------- the gate decides once
#: Calls whose answer is the gate's (a configuration, or a (configuration, note) pair).
GATED = ("decide", "trained_cell")


def _gated_names(fn: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            called = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if called.endswith(GATED):
                for target in node.targets:
                    elts = target.elts if isinstance(target, ast.Tuple) else [target]
                    if elts and isinstance(elts[0], ast.Name):
                        names.add(elts[0].id)
    return names


def _edits(fn: ast.AST, names: set[str]) -> list[str]:
    found = []
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]):
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id in names:
                    found.append(f"line {node.lineno}: {t.value.id}[…] = …")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and isinstance(node.func.value, ast.Name) and node.func.value.id in names \
                and node.func.attr in ("update", "pop", "setdefault", "clear", "popitem"):
            found.append(f"line {node.lineno}: {node.func.value.id}.{node.func.attr}(…)")
        elif isinstance(node, ast.Dict) and len(node.keys) > 1 and any(
                k is None and isinstance(v, ast.Name) and v.id in names for k, v in zip(node.keys, node.values)):
            found.append(f"line {node.lineno}: {{**…, …}} on a gated configuration")
    return found


def test_no_companion_edits_a_configuration_the_gate_returned():
    problems = []
    for path in sorted((ROOT / "fedlib" / "papers").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = _gated_names(fn)
                problems += [f"{path.relative_to(ROOT)}:{fn.name} {e}" for e in _edits(fn, names)]
    assert not problems, "pass the values to the gate (decide(..., then=…)) instead:\n" + "\n".join(problems)


def _gate_wrappers(tree: ast.AST) -> list[str]:
    """Functions whose answer is the gate's own: they return ``decide(...)`` (or its first item)."""
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                value = getattr(node, "value", None) if isinstance(node, ast.Return) else None
                value = value.value if isinstance(value, ast.Subscript) else value
                if isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "decide":
                    found.append(fn.name)
    return found


def test_no_companion_wraps_the_gate_in_its_own_cell_config():
    """Issue 50: one ``Paper.base`` replaced the four ``cell_config`` s, each "the paper's base configuration
    plus parameters, then the gate" with its own signature.  A study builds its cell (``PAPER.base`` or a
    table's ``config``) and calls the gate itself; no companion function returns the gate's answer."""
    problems = [f"{path.relative_to(ROOT)}: {name}" for path in sorted((ROOT / "fedlib" / "papers").rglob("*.py"))
                for name in _gate_wrappers(ast.parse(path.read_text()))]
    assert not problems, "call decide(profile, PAPER.base(...) or TABLE.config(...), experiment, then=…):\n" + \
        "\n".join(problems)
    wrapper = "def cell_config(p, e, **k):\n    return decide(p, {**BASE, **k}, e)\n"
    assert _gate_wrappers(ast.parse(wrapper)) == ["cell_config"]  # the check can fail


def test_paper_base_is_the_papers_setting_on_a_dataset_with_the_studys_parameters():
    """``Paper.base``: the setup, then the dataset, then the parameters (which win); no dataset keeps the
    setup's; a parameter named twice is an error before any work."""
    fedic = get_paper("fedic")
    cfg = fedic.base("cifar10", long_tail_if=100.0, method="fedic", rounds=3)
    assert cfg == {**fedic.setup, "dataset": "cifar10", "long_tail_if": 100.0, "method": "fedic", "rounds": 3}
    assert cfg["rounds"] != fedic.setup["rounds"] and fedic.base() == fedic.setup and fedic.base() is not fedic.setup
    assert fedic.base(None, dataset="mnist")["dataset"] == "mnist"
    with pytest.raises(TypeError, match="multiple values"):
        fedic.base("cifar10", **{"method": "fedavg"}, **{"method": "fedic"})


def test_the_source_check_finds_an_edit():
    """The check above can fail: it finds each kind of edit in a function written for it."""
    code = ("def f(p):\n    cfg, note = decide(p, {}, 'x')\n    cfg['rounds'] = 1\n    cfg.update(seed=0)\n"
            "    return {**cfg, 'seed': 1}\n")
    fn = ast.parse(code).body[0]
    assert len(_edits(fn, _gated_names(fn))) == 3


def test_then_reaches_the_cost_gate(monkeypatch):
    """The values a cell fixes after the profile (``then``) are in the configuration the cost gate sees."""
    from fedlib.repro.budget import gate

    seen = []

    class Cost:
        def gate(self, cfg, device):
            seen.append(dict(cfg))
            return cfg, ""

    fedic = get_paper("fedic")
    prof = dataclasses.replace(fedic.profiles["quick"], cost=Cost())
    cfg, _ = gate.decide(prof, {**fedic.setup, "dataset": "cifar10", "method": "fedavg"}, "fig4",
                         then={"rounds": 3, "seed": 5})
    assert seen and seen[-1]["rounds"] == 3 and seen[-1]["seed"] == 5 and cfg["rounds"] == 3
