"""A run's arithmetic precision (the ``precision`` configuration field) and the scope that applies it.

* ``float32`` (default): every operation in float32.  On CUDA this turns off TF32 for matrix
  products and cuDNN convolutions (PyTorch lets cuDNN use TF32 by default), so a float32 run on a
  GPU computes what its name says.
* ``tf32``: float32 tensors, matrix products and convolutions on the tensor cores' TF32 mode
  (10-bit mantissa inputs, float32 accumulation).  CUDA only.
* ``bf16``: :func:`torch.autocast` to bfloat16 around the whole run (forward, loss, backward, server
  steps, evaluation); parameters, optimizer state and the server's aggregation stay float32.  CUDA only.

The scope sets process-wide flags (``torch.backends``) and restores them on exit: runs sharing a
process (:mod:`fedlib.repro.run.pack`) take turns inside one scope, or share one precision.
"""

from __future__ import annotations

import contextlib

import torch

__all__ = ["PRECISIONS", "CUDA_ONLY", "precision_scope"]

PRECISIONS = ("float32", "tf32", "bf16")
#: The precisions that need a CUDA device (a CPU has no TF32 mode; fedlib does not train in bf16 on a CPU).
CUDA_ONLY = ("tf32", "bf16")


@contextlib.contextmanager
def precision_scope(precision: str, device: str):
    """Run the block in ``precision`` on ``device`` (``cpu`` or ``cuda[:n]``).  The device's type picks
    the autocast backend: on ``cpu`` only the mechanism is exercised (tests); a configuration refuses
    ``tf32``/``bf16`` on a CPU before any work (:class:`fedlib.config.Config`)."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    device_type = torch.device(device).type
    before = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = tf32
    try:
        if precision == "bf16":
            with torch.autocast(device_type, dtype=torch.bfloat16):
                yield
        else:
            yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before
