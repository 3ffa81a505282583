"""Tables and figures, and where they came from: a paper table run and saved (``tables``), what a
notebook needs (``context``), the shared style (``style``), the shared plots (``figures``) and
their rules (``figure_rules``), saving with sidecars (``saving``, ``provenance``), the index
across papers (``index``, ``scales``), the reporting imports in one place (``report``), how a
notebook shows a reproduced table (``views``) and the notebooks' list (``notebooks``).
"""
