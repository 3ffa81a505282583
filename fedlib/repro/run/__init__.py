"""From cells to finished runs: whether a cell trains here, comes from the store or is not run
(``gate``), grids of runs (``grid``) on local processes or a Ray cluster (``executors``),
several runs in one process (``pack``), what a GPU run left in the store (``gpu_runs``; the command that
trains chosen cells on a GPU is :mod:`fedlib.repro.gpu_cells`) and the machine a number was computed on
(``machine``).
"""
