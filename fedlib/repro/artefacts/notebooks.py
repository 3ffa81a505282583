"""A paper's regeneration notebooks, found and selected: listed by :mod:`fedlib.repro.spec.notebooks` (pure file
listing, below the budget's plan), re-exported here."""

from __future__ import annotations

from ..spec.notebooks import notebooks, papers_with_notebooks, select

__all__ = ["papers_with_notebooks", "notebooks", "select"]
