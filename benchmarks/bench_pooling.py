"""ReLU → 2×2 max-pool in evaluation (no autograd): torch's ``F.relu(F.max_pool2d(x, 2, 2))`` against
``fedlib.models.pooling.relu_max_pool`` (the same floats bit for bit, ``tests/test_pooling.py``), on the conv outputs
an evaluation chunk of FedLC's CNNs pools, 1 thread, alternating, median of 11 repetitions.  Prints a Markdown table
(ratio: fedlib ÷ torch).  The channels-last row is torch's own kernel in both columns: it is the faster there.

    python benchmarks/bench_pooling.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.models.pooling import relu_max_pool  # noqa: E402

#: (what, shape, memory format): the conv outputs of one evaluation chunk (fedlib.evaluation.eval_batch_size)
SHAPES = [("FedLC Table 8 conv1 (FMNIST), 1,024 rows", (1024, 10, 24, 24), torch.contiguous_format),
          ("FedLC Table 8 conv2 (FMNIST), 1,024 rows", (1024, 20, 8, 8), torch.contiguous_format),
          ("FedLC Table 9 conv1 (CIFAR-10, channels-last), 64 rows", (64, 128, 32, 32), torch.channels_last)]


def _time(fn, reps: int = 10) -> float:
    """Milliseconds of one call (the mean of ``reps``)."""
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - start) / reps * 1e3


@torch.no_grad()
def main() -> int:
    torch.set_num_threads(1)
    pool = nn.MaxPool2d(2, 2)
    lines = ["| conv output | shape | torch ms | fedlib ms | fedlib ÷ torch |", "|---|---|---|---|---|"]
    for what, shape, fmt in SHAPES:
        x = torch.randn(shape).contiguous(memory_format=fmt)
        ref, ours = [], []
        for _ in range(11):  # alternating, so that a load that comes and goes falls on both
            ref.append(_time(lambda: F.relu(pool(x))))
            ours.append(_time(lambda: relu_max_pool(pool, x)))
        a, b = statistics.median(ref), statistics.median(ours)
        lines.append(f"| {what} | {'×'.join(map(str, shape))} | {a:.2f} | {b:.2f} | {b / a:.2f} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
