"""The reproduction machinery: everything between a paper companion and its tables and figures.

The layer above the training core: it runs grids of :func:`fedlib.run` (``grid``, ``executors``:
local processes or a Ray cluster), compares them with the papers' reported values (``reported``,
``compare``, ``spread``; a paper table run and saved: ``tables``), saves tables and figures with their
sidecars (``saving``, ``provenance``; drawn in one ``style`` by ``figures``; ``context``),
builds the index across papers (``index``) and regenerates every notebook
(``python -m fedlib.repro.regenerate``).  ``paper`` holds a companion's descriptor and the
registry that finds the companions in :mod:`fedlib.papers` by discovery; ``profiles`` the named
settings (smoke, quick, paper).  Nothing here names a paper, and the training core never
imports this package (``tests/test_import_graph.py``).
"""

from .reported import PaperTable
from .study import Option, Options, Study, StudyResult

__all__ = ["PaperTable", "Study", "Option", "Options", "StudyResult"]
