"""Command line: ``python -m fedlib run key=value ...``.

Progress goes to stderr; the last line on stdout is a one-line JSON summary with
``final_accuracy`` and the full resolved configuration.

    python -m fedlib run dataset=synthetic method=fedlc tau=1.0 num_clients=100 rounds=300
    python -m fedlib params            # every parameter with its default
"""

from __future__ import annotations

import argparse
import json
import sys

from .config import Config, ConfigError, parse_value


def _parse_assignments(items: list[str]) -> dict:
    values = {}
    for item in items:
        if "=" not in item:
            raise ConfigError(f"expected key=value, got {item!r}")
        key, text = item.split("=", 1)
        values[key.strip()] = parse_value(key.strip(), text.strip())
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="fedlib", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run one simulation")
    p_run.add_argument("params", nargs="*", help="key=value parameters (see `fedlib params`)")
    p_run.add_argument("--store", default=None, help="results store folder (default: $FEDLIB_STORE or ~/.cache/fedlib/store)")
    p_run.add_argument("--no-store", action="store_true", help="do not read or write the results store")
    p_run.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_parser("params", help="list every parameter and its default")
    args = parser.parse_args(argv)

    if args.command == "params":
        for key, value in Config().to_dict().items():
            print(f"{key}={value}")
        return 0

    from .api import run  # imported late so `fedlib params` and errors stay fast

    try:
        values = _parse_assignments(args.params)
        config = Config.from_dict(values)
    except ConfigError as err:
        print(f"fedlib: error: {err}", file=sys.stderr)
        return 2
    store = False if args.no_store else (args.store if args.store else True)
    result = run(config, store=store, progress=not args.quiet)
    print(json.dumps(result.to_json_summary(), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
