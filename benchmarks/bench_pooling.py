"""ReLU → 2×2 max-pool, forward and backward: torch's ``F.max_pool2d(F.relu(x), 2, 2)`` against
``fedlib.models.pooling.relu_max_pool2x2`` (the same floats, ``tests/test_pooling.py``), on the conv outputs of
FedLC's CNNs, 1 thread, alternating, median of repetitions.  Prints a Markdown table (ratio: ours ÷ torch's).

    python benchmarks/bench_pooling.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from fedlib.models.pooling import relu_max_pool2x2  # noqa: E402

#: (what, shape, memory format) -- the conv outputs a training step pools, at B = 64 (Table 9's CNN at B = 10)
SHAPES = [("FedLC Table 8 conv1, B = 64", (64, 10, 24, 24), torch.contiguous_format),
          ("FedLC Table 8 conv2, B = 64", (64, 20, 8, 8), torch.contiguous_format),
          ("FedLC Table 9 conv1, B = 10", (10, 128, 32, 32), torch.channels_last)]


def _time(fn, x, g, reps: int = 50) -> float:
    """Milliseconds of one forward + backward (the mean of ``reps``)."""
    start = time.perf_counter()
    for _ in range(reps):
        torch.autograd.grad(fn(x), x, g)
    return (time.perf_counter() - start) / reps * 1e3


def main() -> int:
    torch.set_num_threads(1)
    lines = ["| conv output | shape | torch ms | fedlib ms | fedlib ÷ torch |", "|---|---|---|---|---|"]
    for what, shape, fmt in SHAPES:
        x = torch.randn(shape).contiguous(memory_format=fmt).requires_grad_()
        g = torch.randn(shape[0], shape[1], shape[2] // 2, shape[3] // 2)
        ref, ours = [], []
        for _ in range(11):  # alternating, so that a load that comes and goes falls on both
            ref.append(_time(lambda t: F.max_pool2d(F.relu(t), 2, 2), x, g))
            ours.append(_time(relu_max_pool2x2, x, g))
        a, b = statistics.median(ref), statistics.median(ours)
        lines.append(f"| {what} | {'×'.join(map(str, shape))} | {a:.3f} | {b:.3f} | {b / a:.2f} |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
