"""Command line: ``python -m fedlib run key=value ...`` and ``python -m fedlib params``.

Progress goes to stderr; the last line on stdout is a one-line JSON summary with
``final_accuracy`` (and the personalized metrics, group accuracy or clusters
when the run has them) and the full resolved configuration.  A bad parameter or
an absent dataset ends with one line on stderr and exit status 2.

    python -m fedlib run dataset=synthetic method=fedlc tau=1.0 num_clients=100 rounds=300
    python -m fedlib params              # every parameter: default, allowed values, meaning
    python -m fedlib params --markdown   # the same as the README's tables
    python -m fedlib flower-app method=fedlc dataset=synthetic num_clients=10 --out apps/fedlc   # a `flwr run` folder
"""

from __future__ import annotations

import argparse
import json
import sys

from .config import CORE_SECTIONS, Config, ConfigError, parse_value

__all__ = ["main", "parameter_tables"]


def _parse_assignments(items: list[str]) -> dict:
    values = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"expected key=value, got {item!r}")
        key, text = item.split("=", 1)
        values[key.strip()] = parse_value(key.strip(), text.strip())
    return values


def _row(p) -> tuple[str, str, str, str]:
    default = "None" if p.default is None else repr(p.default) if isinstance(p.default, str) else str(p.default)
    doc = p.doc + (f" ({p.source})" if p.source else "")
    return f"`{p.name}`", f"`{default}`", p.allowed or "", doc


def parameter_tables() -> str:
    """Markdown: the core parameters by section, then every method token with the parts it sets and
    its parameters (what the README's parameter section shows)."""
    from .algorithms import METHODS
    from .data import DATASETS
    from .models import MODELS

    out = []
    for section, params in CORE_SECTIONS:
        out += [f"**{section.capitalize()}**", "", "| parameter | default | allowed | meaning |",
                "| --- | --- | --- | --- |"]
        out += ["| " + " | ".join(_row(p)) + " |" for p in params]
        out.append("")
    out += ["**Methods** (`method`: tokens joined by `+`; each sets the parts named, the rest are FedAvg's)", "",
            "| token | sets | paper | parameters |", "| --- | --- | --- | --- |"]
    for token in METHODS.values():
        if token.name.startswith("toy_"):
            continue
        parts = ", ".join(token.parts) or "—"
        names = ", ".join(f"`{p.name}`" for p in token.params) or "—"
        out.append(f"| `{token.name}` | {parts} | {token.paper} | {names} |")
    out.append("")
    method_params = [p for t in METHODS.values() if not t.name.startswith("toy_") for p in t.params]
    if method_params:
        out += ["**Method parameters**", "", "| parameter | default | allowed | meaning |", "| --- | --- | --- | --- |"]
        seen = set()
        for p in method_params:
            if p.name not in seen:
                seen.add(p.name)
                out.append("| " + " | ".join(_row(p)) + " |")
        out.append("")
    out += ["**Datasets**: " + ", ".join(f"`{d}`" for d in DATASETS) + ".  **Models**: "
            + ", ".join(f"`{m}` ({spec.doc})" for m, spec in MODELS.items()) + ".", ""]
    return "\n".join(out)


def _params_text() -> str:
    from .algorithms import METHODS

    lines = []
    for section, params in CORE_SECTIONS:
        lines.append(f"# {section}")
        lines += [f"{p.name}={p.default}    # {p.allowed}: {p.doc}" for p in params]
    for token in METHODS.values():
        if token.params and not token.name.startswith("toy_"):
            lines.append(f"# method {token.name} ({token.paper})")
            lines += [f"{p.name}={p.default}    # {p.allowed}: {p.doc}" for p in token.params]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fedlib", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run one simulation")
    p_run.add_argument("params", nargs="*", help="key=value parameters (see `fedlib params`)")
    p_run.add_argument("--store", default=None, help="results store folder (default: $FEDLIB_STORE or ~/.cache/fedlib/store)")
    p_run.add_argument("--no-store", action="store_true", help="do not read or write the results store")
    p_run.add_argument("--quiet", action="store_true", help="no progress bar")
    p_params = sub.add_parser("params", help="list every parameter with its default, range and meaning")
    p_params.add_argument("--markdown", action="store_true", help="as Markdown tables (the README's)")
    p_app = sub.add_parser("flower-app", help="write a folder that `flwr run` starts")
    p_app.add_argument("params", nargs="*", help="key=value parameters (see `fedlib params`)")
    p_app.add_argument("--out", required=True, help="the folder to write (created)")
    args = parser.parse_args(argv)

    if args.command == "params":
        print(parameter_tables() if args.markdown else _params_text())
        return 0

    if args.command == "flower-app":
        return _flower_app(args)

    from .api import run  # imported late so `fedlib params` and errors stay fast
    from .data import DataError, DatasetNotFoundError

    try:
        values = _parse_assignments(args.params)
        config = Config.from_dict(values)
    except ConfigError as err:
        print(f"fedlib: error: {err}", file=sys.stderr)
        return 2
    store = False if args.no_store else (args.store if args.store else True)
    try:
        result = run(config, store=store, progress=not args.quiet)
    except DatasetNotFoundError as err:
        print(f"fedlib: error: {err}", file=sys.stderr)
        return 2
    except (DataError, ValueError) as err:  # data that cannot serve this configuration (said before training)
        print(f"fedlib: error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_json_summary(), sort_keys=True))
    return 0


def _flower_app(args) -> int:
    from .flower import write_app

    try:
        config = Config.from_dict(_parse_assignments(args.params))
        out = write_app(args.out, config)
    except (ConfigError, ValueError) as err:
        print(f"fedlib: error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {out}: cd {out} && FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION=1 flwr run . --stream "
          f'--federation-config "num-supernodes={config.num_clients} client-resources-num-cpus=1" (see its README.md)')
    return 0


if __name__ == "__main__":
    sys.exit(main())
