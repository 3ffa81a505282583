"""Paper vs ours: per cell, per column, per table, verdicts that respect the noise (``compare``),
the run-to-run spreads they use (``spread``), and the extra seeds that measure one (``seeds``).
"""
