"""``python -m fedlib.repro.claims``: the claims ledgers, headline figures and README block, from the
committed outputs alone (no training).

Per paper: ``figures/<paper>/claims.csv`` and ``claims.md`` (one row per claim × scale,
:func:`fedlib.repro.artefacts.claims.evaluate`) and ``figures/<paper>/headline.{png,pdf,json}``
(:func:`fedlib.repro.artefacts.headline.headline_figure`); then the "What reproduces" block of
``README.md`` between ``<!-- claims:begin -->`` and ``<!-- claims:end -->`` (:func:`readme_block`):
per paper a status line that counts the verdicts on the paper's own data apart from those on stand-ins and
names the budget share, the paragraph that says why its headline does or does not reproduce (``WHY`` in
``fedlib/papers/<paper>/claims.py``), and one row per claim part at its best scale (:func:`best_rows`).  Each
paper's page, ``figures/<paper>/README.md``, opens with the same (:func:`paper_block`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from .artefacts.claims_text import BEGIN, END, best_rows, paper_block, papers, readme_block, status, write_paper

__all__ = ["papers", "BEGIN", "END", "write_paper", "best_rows", "status", "readme_block", "paper_block",
           "update_readme", "regenerate", "main"]


def update_readme(block: str, readme: Path) -> bool:
    """Replace the block between the markers of ``readme``; False if it was already equal."""
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        raise ValueError(f"{readme} lacks the markers {BEGIN} … {END}")
    head, rest = text.split(BEGIN, 1)
    new = head + block.rstrip("\n") + rest.split(END, 1)[1]
    if new == text:
        return False
    readme.write_text(new)
    return True


def _update_page(page: Path, block: str) -> None:
    """Put the claims block at the top of a paper's page (after its title and links), or replace it."""
    text = page.read_text()
    if BEGIN in text and END in text:
        update_readme(block, page)
        return
    head, sep, rest = text.partition("\n## ")
    page.write_text(head.rstrip("\n") + "\n\n" + block + ("\n## " + rest if sep else ""))


def regenerate(root: Path | None = None, readme: Path | None = None, figures: bool = True,
               only: list[str] | None = None) -> dict[str, pd.DataFrame]:
    """Claims files, headline figures and the README block, from the outputs under ``root``.  ``only``: the
    papers whose files are written (a regeneration of some papers never rewrites another's); the README
    block still counts every paper, the others read from their outputs as they are."""
    from .artefacts.claims import evaluate
    from .artefacts.provenance import repo_root

    root = Path(root) if root is not None else repo_root() / "figures"
    frames = {}
    for paper in papers():
        if not (root / paper).is_dir():  # a figures root holding some companions only (a partial regeneration)
            continue
        if only is not None and paper not in only:
            frames[paper] = evaluate(paper, root)  # read, never written
            continue
        frames[paper] = write_paper(paper, root)
        page = root / paper / "README.md"
        if page.exists():
            _update_page(page, paper_block(paper, frames[paper]))
        if figures:
            from .artefacts.headline import headline_figure

            headline_figure(paper, root, frames[paper])
    readme = Path(readme) if readme is not None else root.parent / "README.md"
    if readme.exists() and set(frames) == set(papers()):  # a figures root outside a checkout has no README beside it
        update_readme(readme_block(frames), readme)
    return frames


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fedlib.repro.claims", description=__doc__.splitlines()[0])
    parser.add_argument("--no-figures", action="store_true", help="claims files and README block only")
    args = parser.parse_args(argv)
    frames = regenerate(figures=not args.no_figures)
    for paper, frame in frames.items():
        print(status(paper, best_rows(frame)).replace("**", ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
