"""fedlib — a reproducible companion to FedLC (Zhang et al., ICML 2022) and
related label-skew federated-learning papers.

>>> import fedlib
>>> r = fedlib.run(dataset="synthetic", method="fedlc", tau=1.0, rounds=300, num_clients=100)  # doctest: +SKIP
"""

from .allocator import keep_freed_memory
from .api import Result, run
from .config import Config, ConfigError

__version__ = "0.1.0"
__all__ = ["Config", "ConfigError", "Result", "run", "__version__"]

keep_freed_memory()  # once per process, before a run's data and models take the heap (fedlib/allocator.py)
