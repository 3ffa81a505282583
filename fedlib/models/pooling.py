"""ReLU then a 2×2 max-pool (kernel 2, stride 2, no padding), with the floats of ``F.max_pool2d(F.relu(x), 2, 2)``,
faster on a CPU.

Every CNN of these papers ends a conv block with ReLU → 2×2 max-pool (:func:`fedlib.models._common.conv_relu_pool`).
On a CPU, torch's ``max_pool2d_with_indices`` on an NCHW tensor walks each window element by element and writes an
int64 index for every output: for FedLC's Table 8 CNN at B = 64 it costs as much as the convolution before it,
a third of a training step (fluke and pfl-research pay it too).  The same maximum is three ``torch.maximum`` of
four strided views of the input, several times faster (``benchmarks/README.md``, "the max-pool").

**The same floats, in both directions** (``tests/test_pooling.py`` compares them with torch's bit for bit):

* Forward: ReLU is monotone, so ``max(relu(a), relu(b)) = relu(max(a, b))``: the window's maximum, then ReLU on
  a quarter of the elements (as fedlib's evaluation has always computed it).  The maximum replays torch's scan
  over the window in its order (0,0), (0,1), (1,0), (1,1): a later element replaces the running one only where
  it is larger or NaN.  The one difference is a zero's sign, where a window's maximum is ``-0.0`` and it holds a
  negative before it (``-0.0`` here, ``+0.0`` in torch): equal as floats, so no product or sum after it changes,
  save a sum that is itself 0.
* Backward: torch sends the output's gradient to the window's first maximum of ``relu(x)`` (its index), adds it
  into zeros (``-0.0`` becomes ``+0.0``), and ReLU's backward keeps it where the output is positive.  Where the
  output is positive, the first maximum of ``relu(x)`` is the first maximum of ``x``; where it is not, every
  gradient of the window is zero.  So: ``g + 0.0`` at the first maximum of ``x`` where the output is positive,
  ``+0.0`` everywhere else; in a window holding a NaN, torch's scan names its last NaN, and ReLU passes NaN's
  gradient on.
* Layout: the output and the input's gradient come in the memory format torch's kernels give them (channels-last
  where the input is channels-last), so the convolutions around it run the same kernels.

Under ``vmap`` (the vectorized engine) :func:`relu_max_pool` keeps torch's ops: folding the clients into the
images' batch, as torch's rule for ``max_pool2d`` does, gives the same values, but hands the grouped convolution
its gradient in another layout, and the conv biases' gradients round otherwise (``_batched``).

Without autograd (evaluation) it is the same forward.  On another device, or for another pooling,
:func:`relu_max_pool` is torch's own pool and ReLU.
"""

from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = ["relu_max_pool", "relu_max_pool2x2", "torch_ops"]

_WINDOW = ((0, 0), (0, 1), (1, 0), (1, 1))  # torch's scan order over a 2×2 window (row-major)


def _layout(x: Tensor) -> torch.memory_format:
    """The memory format torch's pooling kernel gives its output for ``x`` (``suggest_memory_format``)."""
    if x.dim() == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last):
        return torch.channels_last
    return torch.contiguous_format


def _views(x: Tensor) -> list[Tensor]:
    """The four elements of every 2×2 window as strided views, in torch's scan order (a last odd row or column is
    dropped, as floor mode drops it)."""
    h, w = x.shape[-2] // 2 * 2, x.shape[-1] // 2 * 2
    return [x[..., i:h:2, j:w:2] for i, j in _WINDOW]


def _window_max(x: Tensor) -> Tensor:
    """Each window's maximum.  ``torch.maximum(later, running)`` returns ``running`` on a tie (``±0.0`` included)
    and propagates a NaN, as torch's scan does."""
    v = _views(x)
    best = torch.maximum(v[1], v[0])
    best = torch.maximum(v[2], best)
    return torch.maximum(v[3], best)


class _ReluMaxPool2x2(torch.autograd.Function):
    @staticmethod
    def forward(x: Tensor) -> tuple[Tensor, Tensor]:
        best = _window_max(x)
        return F.relu(best).contiguous(memory_format=_layout(x)), best

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_non_differentiable(output[1])
        ctx.save_for_backward(inputs[0], output[1])

    @staticmethod
    def backward(ctx, grad: Tensor, _unused: Tensor) -> Tensor:
        x, best = ctx.saved_tensors
        grad_x = torch.zeros_like(x, memory_format=_layout(x))
        views, live = _views(x), best > 0  # the gradient reaches x only where the output is positive ...
        hits, taken = [], None
        for v in views:  # ... at the window's first maximum
            hit = (v == best) & live
            hits.append(hit if taken is None else hit & ~taken)
            taken = hit if taken is None else taken | hit
        if bool(torch.isnan(best).any()):  # a NaN window: torch's scan takes its last NaN, and ReLU passes NaN on
            nan, later = [v.isnan() for v in views], torch.zeros_like(live)
            for k in reversed(range(4)):
                hits[k], later = hits[k] | (nan[k] & ~later), later | nan[k]
        g = grad + 0.0  # torch adds the gradient into zeros: -0.0 becomes +0.0
        zero = torch.zeros((), dtype=grad.dtype, device=grad.device)
        for hit, out in zip(hits, _views(grad_x)):
            out.copy_(torch.where(hit, g, zero))
        return grad_x

    @staticmethod
    def vmap(info, in_dims, x):
        """Fold the vmapped dimension into the images' batch, as torch's rule for ``max_pool2d`` does."""
        (bdim,) = in_dims
        if bdim is None:
            return _ReluMaxPool2x2.apply(x), (None, None)
        x = x.movedim(bdim, 0)
        out = _ReluMaxPool2x2.apply(x.reshape(x.shape[0] * x.shape[1], *x.shape[2:]))
        return tuple(o.reshape(x.shape[0], x.shape[1], *o.shape[1:]) for o in out), (0, 0)


def relu_max_pool2x2(x: Tensor) -> Tensor:
    """``F.max_pool2d(F.relu(x), 2, 2)`` of a ``[N, C, H, W]`` tensor on a CPU, with its floats (module docstring)."""
    if x.dim() != 4:
        raise ValueError(f"relu_max_pool2x2 takes a [N, C, H, W] tensor, got shape {tuple(x.shape)}")
    return _ReluMaxPool2x2.apply(x)[0]


def _is_2x2(pool: nn.Module) -> bool:
    def pair(v):
        return (v, v) if isinstance(v, int) else tuple(v)

    return (type(pool) is nn.MaxPool2d and pair(pool.kernel_size) == (2, 2) and pair(pool.stride) == (2, 2)
            and pair(pool.padding) == (0, 0) and pair(pool.dilation) == (1, 1) and not pool.ceil_mode
            and not pool.return_indices)


_TORCH_OPS = [False]  # set by torch_ops(): every call takes torch's own ops


@contextlib.contextmanager
def torch_ops():
    """Inside, :func:`relu_max_pool` is torch's own pool and ReLU everywhere.  The vectorized engine measures the
    bytes a pass saves for backward with it (``fedlib.vectorized.activation_bytes_per_sample``): its vmapped passes
    run torch's ops, and the estimate sets how many clients share a pass, which sets how its convolutions round."""
    _TORCH_OPS[0], before = True, _TORCH_OPS[0]
    try:
        yield
    finally:
        _TORCH_OPS[0] = before


def _batched(x: Tensor) -> bool:
    """Whether ``x`` is a tensor inside ``vmap`` (the vectorized engine's clients).  There, torch's ReLU and its
    backward run on the clients' stacked tensor, and the gradient they hand the grouped convolution comes in a
    layout this module's fold does not give: its bias gradient (a sum) rounds otherwise (FedLC's CIFAR CNN,
    FedConcat's SimpleCNN), so vmap keeps torch's ops."""
    return _is_batchedtensor is None or bool(_is_batchedtensor(x))  # a torch that cannot tell: torch's ops


try:  # torch's own test for a vmapped tensor
    from torch._C._functorch import is_batchedtensor as _is_batchedtensor
except ImportError:  # pragma: no cover -- every torch fedlib supports has it
    _is_batchedtensor = None


def relu_max_pool(pool: nn.Module, x: Tensor) -> Tensor:
    """``pool(relu(x))``: by :func:`relu_max_pool2x2` where ``pool`` is a 2×2, stride-2 ``nn.MaxPool2d`` and ``x``
    a 4-d CPU tensor (the same floats, faster); else, under ``vmap`` and under ``torch.compile`` (which fuses its
    own kernels), torch's own, as ``relu(pool(x))`` without autograd (the same floats: ReLU commutes with a window's maximum;
    a quarter of the elements)."""
    if x.device.type == "cpu" and x.dim() == 4 and _is_2x2(pool) and not torch.compiler.is_compiling() \
            and not _TORCH_OPS[0] and not _batched(x):
        return relu_max_pool2x2(x)
    return pool(F.relu(x)) if torch.is_grad_enabled() else F.relu(pool(x))
