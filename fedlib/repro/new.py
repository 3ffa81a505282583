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

__all__ = ["scaffold", "main"]

_INIT = '''"""The {name} companion: TODO the paper's full reference.

* :mod:`.reported` -- its tables as printed; :mod:`.profiles` -- ``smoke``, ``quick``, ``paper``;
* :mod:`.claims` -- its claims, each quoted; :mod:`.deviations` -- where fedlib departs from it.

Notebooks: ``notebooks/{name}/``; outputs: ``figures/{name}/<profile>/``.
"""

from ...repro.spec.paper import Paper, View
from . import profiles, reported

#: Its notebooks and what each reads.
VIEWS = (View("01_table1", tables=("table1",)),)

PAPER = Paper.from_modules(reported, profiles, views=VIEWS, name="{name}", title="{title}",
                           source="TODO.txt", headline=("fedprox", "fedavg"))

__all__ = ["PAPER"]

PAPER.check()  # every profile's settings against its tables and studies: a misspelt key fails at import
'''

_REPORTED = '''"""{title}: the reported results as data (TODO: transcribe the paper's tables as printed)."""

from __future__ import annotations

from ...repro.spec.reported import Column, PaperTable, Row, parse_rows

PAPER = "TODO: authors, title, venue year"

#: The paper's common setting (TODO: from its experimental section).
SETUP = {{"model": "mlp", "num_clients": 10, "participation": 1.0, "rounds": 50, "local_epochs": 1,
         "batch_size": 32, "lr": 0.05, "partition": "dirichlet"}}
SEEDS = (0, 1, 2)

COLUMNS = (Column("mnist_dir0.5", "MNIST Dir(0.5)", "mnist", {{"partition_beta": 0.5}}),)
ROWS = (Row("fedavg", "FedAvg", {{"method": "fedavg"}}), Row("fedprox", "FedProx", {{"method": "fedprox"}}))

#: Table 1, one line per row as printed (TODO: the paper's values).
TABLE1 = PaperTable("table1", 1, "Test accuracy (%)", "TODO: its section", COLUMNS, ROWS, parse_rows("""
FedAvg   97.00
FedProx  97.50
""", list(ROWS), list(COLUMNS)), setup=SETUP)

TABLES = {{"table1": TABLE1}}
METHOD_ORDER = ("fedavg", "fedprox")
METHOD_LABELS = {{"fedavg": "FedAvg", "fedprox": "FedProx"}}
'''

_PROFILES = '''"""{title}: its profiles, ``paper`` (its setup), ``quick`` (a 2-core CPU within the hour), ``smoke`` (CI)."""

from __future__ import annotations

from ...repro.spec.profiles import Profile, merge_notes
from .deviations import NOTES
from .reported import SEEDS

EXPERIMENTS = {{"table1": "Table 1: test accuracy"}}
MODEL_LABELS = {{"mnist": "MLP"}}

PAPER_PROFILE = Profile(name="paper", paper="{name}", description="The paper's setup.", seeds=SEEDS, notes=NOTES)
QUICK = Profile(name="quick", paper="{name}", description="A reduced setting for a 2-core CPU.", seeds=SEEDS,
                image={{"rounds": 10, "max_train_samples": 6000, "max_test_samples": 2000}}, notes=NOTES)
SMOKE = Profile(name="smoke", paper="{name}", description="Checks that every notebook runs; its numbers mean nothing.",
                seeds=(0, 1), image={{"rounds": 2, "max_train_samples": 600, "max_test_samples": 200, "eval_every": 1}},
                notes=merge_notes(NOTES, {{"*": ("smoke profile: a run-everything check; the numbers mean nothing",)}}))

PROFILES = {{p.name: p for p in (SMOKE, QUICK, PAPER_PROFILE)}}
'''

_CLAIMS = '''"""{title}: its claims, each quoted word for word, decided by fedlib.repro's one rule."""

from __future__ import annotations

from ...repro.spec.claims import Claim, Gap, Part

CLAIMS = (
    Claim("headline", "TODO: the sentence of the paper, word for word.", "TODO: where (Table 1)",
          parts=(Part(Gap("table1", ("mnist_dir0.5",), "fedprox", "fedavg"), "sign"),), headline=True),
)
LEFT_OUT = ()  # the central claims nothing of ours decides, and why (fedlib.repro.spec.claims.LeftOut)
WHY = ""  # why the headline does or does not reproduce, once it is decided
'''

_DEVIATIONS = '''"""{title}: where fedlib's reproduction departs from the paper (one dict each), and the lines every profile lists."""

DEVIATIONS = (
    {{"what": "TODO: a departure", "paper": "what the paper says", "code": "what its code does",
      "fedlib": "what fedlib does", "param": "the configuration key"}},
)
NOTES: dict[str, tuple[str, ...]] = {{}}
'''

_STUDIES = '''"""{title}: its studies (figures, ablations): none yet (fedlib.repro.spec.study.Study)."""

STUDIES = ()
'''

_BUDGET = '''"""{title}: the paper profile's cost model and budget ladder: none yet (fedlib.repro.budget)."""

COST = None
LADDER = None
'''


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
    files = {package / "__init__.py": _INIT, package / "reported.py": _REPORTED, package / "profiles.py": _PROFILES,
             package / "claims.py": _CLAIMS, package / "deviations.py": _DEVIATIONS,
             package / "studies.py": _STUDIES, package / "budget.py": _BUDGET}
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
