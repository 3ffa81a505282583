"""From cells to finished runs: whether a cell trains here, comes from the store or is not run
(``gate``), grids of runs (``grid``) on local processes or a Ray cluster (``executors``),
several runs in one process (``pack``), chosen cells trained on a GPU into the store
(``cells``) and the machine a number was computed on
(``machine``).
"""
