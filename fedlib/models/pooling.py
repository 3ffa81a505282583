"""ReLU then a 2×2 max-pool (kernel 2, stride 2, no padding) in evaluation, with the floats of
``F.relu(F.max_pool2d(x, 2, 2))``, faster on a CPU.

Every CNN of these papers ends a conv block with ReLU → 2×2 max-pool (:func:`fedlib.models._common.conv_relu_pool`).
On a CPU, torch's ``max_pool2d`` on an NCHW tensor walks each window element by element: for FedLC's Table 8 CNN it
costs as much as the convolution before it.  Without autograd the same maximum is three ``torch.maximum`` of the
window's four strided views, several times faster (``benchmarks/bench_pooling.py``).  On a channels-last tensor
(FedLC's CIFAR CNN) torch's kernel runs along the channels and is the faster: it is used there.

* **The same floats.**  ReLU is monotone, so ``max(relu(a), relu(b)) = relu(max(a, b))``: the window's maximum,
  then ReLU on a quarter of the elements.  A zero maximum keeps the sign of the window's first zero, as torch's
  scan does, and an input holding a NaN is pooled by torch.  The output is NCHW-contiguous, as torch's pool
  gives it for an NCHW input, so the convolution after it runs the same kernel.
* **Training keeps torch's ops.**  A pool by views needs its own backward, which must find each window's first
  maximum again: on this CPU that took longer than torch's forward and backward together
  (``benchmarks/README.md``, "The max-pool").  So with autograd recording this is torch's own
  ``pool(relu(x))``, and every gradient is torch's; under ``vmap`` or ``torch.compile``, torch's ops too.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["relu_max_pool"]

_WINDOW = ((0, 0), (0, 1), (1, 0), (1, 1))  # torch's scan order over a 2×2 window (row-major)


def _window_max(x: Tensor) -> Tensor | None:
    """Each 2×2 window's maximum, from its four strided views (a last odd row or column is dropped, as floor mode
    drops it); ``None`` where a window holds a NaN (``torch.maximum`` gives another NaN's bits than torch's pool,
    which keeps the input's).  ``torch.maximum`` ranks +0.0 above -0.0, where torch's pool keeps the first zero of
    its scan; so a window whose maximum is a zero takes its first zero (rare: a conv output of exactly 0)."""
    h, w = x.shape[-2] // 2 * 2, x.shape[-1] // 2 * 2
    v = [x[..., i:h:2, j:w:2] for i, j in _WINDOW]
    best = torch.maximum(torch.maximum(v[0], v[1]), torch.maximum(v[2], v[3]))
    if bool(torch.isnan(best).any()):
        return None
    zero = best == 0
    if bool(zero.any()):
        for k in reversed(range(4)):
            best = torch.where(zero & (v[k] == 0), v[k], best)
    return best


def _is_2x2(pool: nn.Module) -> bool:
    def pair(v):
        return (v, v) if isinstance(v, int) else tuple(v)

    return (type(pool) is nn.MaxPool2d and pair(pool.kernel_size) == (2, 2) and pair(pool.stride) == (2, 2)
            and pair(pool.padding) == (0, 0) and pair(pool.dilation) == (1, 1) and not pool.ceil_mode
            and not pool.return_indices)


def _batched(x: Tensor) -> bool:
    """Whether ``x`` is a tensor inside ``vmap``, where a tensor's memory format cannot be asked for."""
    return _is_batchedtensor is None or bool(_is_batchedtensor(x))  # a torch that cannot tell: torch's ops


try:  # torch's own test for a vmapped tensor
    from torch._C._functorch import is_batchedtensor as _is_batchedtensor
except ImportError:  # pragma: no cover -- every torch fedlib supports has it
    _is_batchedtensor = None


def relu_max_pool(pool: nn.Module, x: Tensor) -> Tensor:
    """``pool(relu(x))``.  Without autograd, where ``pool`` is a 2×2, stride-2 ``nn.MaxPool2d`` and ``x`` a 4-d
    NCHW-contiguous CPU tensor outside ``vmap`` and ``torch.compile``: ReLU of each window's maximum by strided
    views (the same floats, faster; on a channels-last tensor torch's own kernel is the faster).  Else torch's own: ``pool(relu(x))`` with autograd, ``relu(pool(x))`` without it (the same
    floats, a quarter of the elements)."""
    if torch.is_grad_enabled():
        return pool(F.relu(x))
    if x.device.type == "cpu" and x.dim() == 4 and _is_2x2(pool) and not torch.compiler.is_compiling() \
            and not _batched(x) and x.is_contiguous():
        best = _window_max(x)
        if best is not None:
            return F.relu(best).contiguous()
    return F.relu(pool(x))
