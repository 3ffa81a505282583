"""Independent pieces of one run on several threads, with the floats of one thread.

A round's sampled clients train independently of each other, and a test set's rows are scored
independently of each other.  With ``client_threads=N`` (sequential engine) the clients of a round
train on N Python threads, and the chunks of an evaluation are scored on them; torch's kernels
release the GIL, so the threads run at once.  Each thread keeps one intra-op thread, so each
client's arithmetic is the 1-thread run's, kernel for kernel; the results are gathered in the
clients' order and aggregated as before, and the evaluation's counts are whole numbers.  The run's
numbers are therefore those of ``client_threads=1`` bit for bit (``tests/test_client_threads.py`` trains
both and compares every parameter), and the setting stays out of the store key.

This is how one run uses every core without changing its numbers.  ``threads=N`` (torch's intra-op
threads) splits each kernel's reductions instead, which rounds otherwise and so enters the key.
"""

from __future__ import annotations

import copy
import functools
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, TypeVar

import torch

__all__ = ["thread_map", "own_copy"]

T = TypeVar("T")
R = TypeVar("R")


def _one_intra_op_thread() -> None:
    # a new thread starts with OpenMP's default team size (every core); one thread per piece keeps the
    # kernels the 1-thread run calls
    torch.set_num_threads(1)


_local = threading.local()


def own_copy(module: torch.nn.Module) -> torch.nn.Module:
    """This thread's copy of ``module`` (``module`` itself on the calling thread of a 1-thread map).
    ``torch.func.functional_call`` swaps a module's parameters in and out while it runs, so two threads
    calling it on one module would read each other's weights; the models hold no buffers, so a copy made
    once per thread serves every later call."""
    if threading.current_thread() is threading.main_thread():
        return module
    copies = getattr(_local, "copies", None)
    if copies is None:
        copies = _local.copies = weakref.WeakKeyDictionary()  # a finished run's model is not kept alive
    if module not in copies:
        copies[module] = copy.deepcopy(module)
    return copies[module]


@functools.lru_cache(maxsize=None)
def _pool(threads: int) -> ThreadPoolExecutor:
    return ThreadPoolExecutor(threads, thread_name_prefix="fedlib", initializer=_one_intra_op_thread)


def thread_map(fn: Callable[[T], R], items: Iterable[T], threads: int = 1) -> list[R]:
    """``[fn(item) for item in items]``, on ``threads`` threads when there is more than one of each;
    the results in the items' order."""
    items = list(items)
    if threads <= 1 or len(items) <= 1:
        return [fn(item) for item in items]
    if torch.get_num_threads() != 1:
        raise ValueError(f"client_threads={threads} needs one intra-op thread (threads=1), "
                         f"got {torch.get_num_threads()}")
    return list(_pool(threads).map(fn, items))
