"""A folder that ``flwr run`` starts as it is: one fedlib configuration as a Flower app.

The layout follows Flower's baselines (``baselines/fedprox`` …): a ``pyproject.toml`` naming
the components (``[tool.flwr.app.components]``) and holding the run's configuration
(``[tool.flwr.app.config]``, every fedlib parameter the configuration sets, overridable with
``flwr run --run-config``), a package with ``server_app.py`` and ``client_app.py``, and a
README with the exact commands.  Writing it needs no Flower; running it needs ``fedlib[flower]``
installed where the SuperLink and the SuperNodes run (fedlib is not on PyPI, so the app does
not list it as a dependency for Flower to install).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import fields
from pathlib import Path

from ..config import Config

__all__ = ["write_app", "app_config", "PACKAGE", "FLOWER_REQUIREMENT"]

PACKAGE = "fedlib_app"
FLOWER_REQUIREMENT = "flwr[simulation]>=1.41,<1.43"
ALWAYS = ("method", "dataset", "num_clients", "rounds", "seed")  # written even at their defaults
NEVER = ("data_root", "device", "engine")  # a node's own business; a node always trains sequentially


def app_config(config: Config) -> dict:
    """The fedlib parameters an app's ``[tool.flwr.app.config]`` holds: those of ``ALWAYS`` and every
    one ``config`` sets to other than its default (None cannot be written in TOML: None is a default)."""
    default = Config(**{k: getattr(config, k) for k in ("dataset", "method")})
    out = {}
    for f in fields(Config):
        value = getattr(config, f.name)
        if f.name in NEVER or value is None:
            continue
        if f.name in ALWAYS or value != getattr(default, f.name):
            out[f.name] = value
    return out


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value} cannot be written in an app's configuration")
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"a {type(value).__name__} cannot be written in an app's configuration")


def _project_name(method: str) -> str:
    return "fedlib-" + re.sub(r"[^a-z0-9]+", "-", method.lower()).strip("-")


def _pyproject(config: Config, values: dict) -> str:
    lines = [
        f"# A fedlib configuration as a Flower app: `{config.method}` on `{config.dataset}`.",
        "# Written by `python -m fedlib flower-app`; see README.md for the command that runs it.",
        "",
        "[build-system]",
        'requires = ["hatchling"]',
        'build-backend = "hatchling.build"',
        "",
        "[project]",
        f'name = "{_project_name(config.method)}"',
        'version = "1.0.0"',
        f'description = "fedlib method {config.method} as a Flower app"',
        'license = "MIT"',
        "# fedlib is not on PyPI: install fedlib[flower] where the SuperLink and the SuperNodes run.",
        f'dependencies = ["{FLOWER_REQUIREMENT}"]',
        "",
        "[tool.hatch.build.targets.wheel]",
        'packages = ["."]',
        "",
        "[tool.flwr.app]",
        'publisher = "fedlib"',
        "",
        "[tool.flwr.app.components]",
        f'serverapp = "{PACKAGE}.server_app:app"',
        f'clientapp = "{PACKAGE}.client_app:app"',
        "",
        "# fedlib's parameters (`python -m fedlib params`); `flwr run --run-config \"rounds=10\"` overrides any.",
        "[tool.flwr.app.config]",
    ]
    lines += [f"{k} = {_toml_value(v)}" for k, v in values.items()]
    return "\n".join(lines) + "\n"


def _readme(config: Config, out: Path) -> str:
    n = config.num_clients
    return f"""# fedlib `{config.method}` as a Flower app

The fedlib configuration in `pyproject.toml` (`[tool.flwr.app.config]`): method `{config.method}` on
`{config.dataset}`, {n} clients, {config.rounds} rounds, seed {config.seed}.  The ServerApp
(`{PACKAGE}/server_app.py`) runs fedlib's server (sampling, aggregation, server optimizer, server
training); the ClientApp (`{PACKAGE}/client_app.py`) runs fedlib's local update of the client its
node's `partition-id` names; fedlib's own simulation (`fedlib.run`) gives the same final model.

## Run it in Flower's simulation

Where fedlib is installed with its Flower extra (`pip install -e "<fedlib checkout>[flower]"`), in this folder:

```bash
export FEDLIB_DATA=<data root>
FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION=1 flwr run . --stream --federation-config "num-supernodes={n} client-resources-num-cpus=1"
```

`num-supernodes` must be {n}, one node per fedlib client (node `partition-id` i holds client i).
`FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION=1` keeps the SuperLink that `flwr run` starts from
installing the app's dependencies into a fresh environment: the app runs where fedlib is installed.
Any parameter can be changed for one run:
`flwr run . --run-config "rounds=5 lr=0.05" …`. The last log line of the ServerApp is the run's
final accuracy (`fedlib: {{"final_accuracy": …}}`).

## Run it across machines (Flower's Deployment Engine)

```bash
flower-superlink --insecure                                   # on the server
flower-supernode --insecure --superlink <server>:9092 \\
    --node-config "partition-id=<i> num-partitions={n}"        # on each of the {n} nodes, i = 0 … {n - 1}
flwr run . <superlink connection> --stream                     # from here
```

Each node needs fedlib and `FEDLIB_DATA` (it derives its client's samples from the configuration, as
fedlib's partition does).
"""


def write_app(out, config: Config | dict | None = None, **params) -> Path:
    """Write the app folder for the configuration (a :class:`Config`, a dict and/or keywords) into
    ``out`` (created; existing files of the same names are replaced).  Returns the folder.  A
    multi-stage method is refused, before anything is written."""
    from .bridge import refuse_stages

    base = config.to_dict() if isinstance(config, Config) else dict(config or {})
    cfg = Config.from_dict({**base, **params})
    refuse_stages(cfg)
    out = Path(out)
    pkg = out / PACKAGE
    pkg.mkdir(parents=True, exist_ok=True)
    (out / "pyproject.toml").write_text(_pyproject(cfg, app_config(cfg)))
    (out / "README.md").write_text(_readme(cfg, out))
    (pkg / "__init__.py").write_text(f'"""fedlib method {cfg.method} as a Flower app."""\n')
    (pkg / "server_app.py").write_text(
        '"""The ServerApp: fedlib\'s server, configured by [tool.flwr.app.config] (Flower\'s run config)."""\n\n'
        "from fedlib.flower import server_app\n\napp = server_app()\n")
    (pkg / "client_app.py").write_text(
        '"""The ClientApp: fedlib\'s local update of the client this node\'s partition-id names."""\n\n'
        "from fedlib.flower import client_app\n\napp = client_app()\n")
    return out
