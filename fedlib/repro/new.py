"""Scaffold a new paper companion: ``python -m fedlib.repro.new NAME``.

It writes one folder in each of the three places a companion lives (``docs/architecture.md#adding-a-paper``):

* ``fedlib/papers/NAME/`` -- the declaration: ``reported`` (one table, as printed), ``profiles`` (``smoke``,
  ``quick``, ``paper``), ``claims`` (one claim), ``deviations``, ``studies`` (none yet), ``budget`` (no
  cost model, no ladder yet) and ``__init__`` (the ``Paper``, its notebook ``View`` and ``PAPER.check()``);
* ``notebooks/NAME/01_table1.ipynb`` -- a parameters cell, a call, the table (with its kernelspec, so
  papermill runs it as scaffolded);
* ``figures/NAME/`` -- filled by ``make figures PAPER=NAME``.

As scaffolded, the companion imports, checks and regenerates under ``smoke``, and its claim gets a verdict
(``tests/test_new_paper.py``).  Replace the placeholders (marked ``TODO``) with the paper's own table, setup and
quote.  ``--root`` writes under another folder (its ``fedlib/papers`` is found through ``$FEDLIB_PAPERS``).
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
from pathlib import Path

__all__ = ["scaffold", "main", "TEMPLATES"]

#: The companion's modules, as text with ``{name}`` and ``{title}`` to fill (``str.format``): one file each.
TEMPLATES = Path(__file__).with_name("companion_template")
MODULES = ("__init__.py", "reported.py", "profiles.py", "claims.py", "deviations.py", "studies.py", "budget.py")


def _notebook(name: str, title: str) -> dict:
    def cell(kind: str, text: str, **meta) -> dict:
        out = {"cell_type": kind, "id": f"cell-{len(cells)}", "metadata": meta,
               "source": text.splitlines(keepends=True)}
        cells.append(out)
        if kind == "code":
            out.update(execution_count=None, outputs=[])
        return out

    cells: list[dict] = []
    return {"cells": [
        cell("markdown", f"# {title}: Table 1\n\nThe paper's Table 1 against ours, cell by cell (paper → ours)."),
        cell("code", f'profile = "quick"  # smoke | quick | paper  (fedlib.papers.{name}.profiles)\n'
                     "seed = None  # None: the profile's seeds\nout_dir = None  # None: <repo>/figures/"
                     f"{name}/<profile>\nworkers = None  # None: the profile's number of parallel runs",
             tags=["parameters"]),
        cell("code", "from fedlib.repro.artefacts.context import Context\n\n"
                     f'ctx = Context(profile, notebook="{name}/01_table1", seed=seed, out_dir=out_dir, '
                     "workers=workers)\nctx"),
        cell("code", 'comp, grid = ctx.table("table1")\nctx.comparison_view(comp)'),
    ], "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                    "language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5}


def scaffold(name: str, root: str | Path | None = None, title: str | None = None) -> list[Path]:
    """Write the companion ``name`` under ``root`` (default: this repository); returns the files written.
    Refuses a name that is not a Python identifier in lower case, or a companion that exists."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name) or keyword.iskeyword(name):
        raise ValueError(f"name must be a lower-case Python identifier (a package name), got {name!r}")
    if root is None:
        from .artefacts.provenance import repo_root

        root = repo_root()
    root = Path(root)
    package, notebooks = root / "fedlib" / "papers" / name, root / "notebooks" / name
    for folder in (package, notebooks):
        if folder.exists():
            raise FileExistsError(f"{folder} exists: a companion {name!r} is there already")
    title = title or name
    files = {package / module: (TEMPLATES / f"{module}.txt").read_text() for module in MODULES}
    package.mkdir(parents=True)
    notebooks.mkdir(parents=True)
    for path, text in files.items():
        path.write_text(text.format(name=name, title=title))
    nb = notebooks / "01_table1.ipynb"
    nb.write_text(json.dumps(_notebook(name, title), indent=1) + "\n")
    return [*files, nb]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m fedlib.repro.new", description=__doc__.split("\n\n")[0])
    ap.add_argument("name", help="the companion's package name (lower case): fedlib/papers/NAME")
    ap.add_argument("--title", help='short title for the index, e.g. "FedXYZ (ICML 2025)"')
    ap.add_argument("--root", help="write under this folder instead of the repository (then set $FEDLIB_PAPERS "
                                   "to ROOT/fedlib/papers so that fedlib finds it)")
    args = ap.parse_args(argv)
    for path in scaffold(args.name, args.root, args.title):
        print(path)
    print(f"next: edit the TODOs, then `make figures PROFILE=smoke PAPER={args.name}`")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
