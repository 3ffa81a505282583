"""Tiny helpers on parameter dictionaries ``{name: tensor}`` (a model's "pytree")."""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import torch

Params = dict[str, torch.Tensor]


def tree_map(fn: Callable[..., torch.Tensor], tree: Params, *rest: Params) -> Params:
    return {k: fn(v, *(r[k] for r in rest)) for k, v in tree.items()}


def zeros_like(tree: Params) -> Params:
    return tree_map(torch.zeros_like, tree)


def clone(tree: Params) -> Params:
    return tree_map(lambda v: v.detach().clone(), tree)


def sub(a: Params, b: Params) -> Params:
    return tree_map(torch.sub, a, b)


def add(a: Params, b: Params) -> Params:
    return tree_map(torch.add, a, b)


def scale(tree: Params, s: float) -> Params:
    return tree_map(lambda v: v * s, tree)


# Parameters of at most this many elements are summed over the stacked trees, larger ones in a loop
# over the trees: where the per-tree operations' overhead outweighs the stacked copy and the scan
# (measured, one thread: 100 trees × 600 elements 0.23 vs 0.44 ms; 20 × 4,000: 0.21 vs 0.13 ms).
_STACKED_NUMEL = 1024


def weighted_sum(trees: Sequence[Params], weights: Iterable[float]) -> Params:
    """Σ_i w_i · tree_i, accumulated in float64 so that the order of clients
    changes nothing beyond float32 rounding of the final result.

    The sum is the left-to-right one, ((0 + w_0·t_0) + w_1·t_1) + …, whether it is taken
    over the stacked trees (one ``cumsum`` along the client dimension, which adds in
    that order; a few operations instead of three per tree, for small parameters) or in a
    loop over the trees (large ones): the two give the same bits."""
    weights = [float(w) for w in weights]
    out = {}
    for k, first in trees[0].items():
        if first.numel() <= _STACKED_NUMEL and len(trees) > 1:
            w = torch.tensor(weights, dtype=torch.float64, device=first.device).view(-1, *([1] * first.ndim))
            terms = torch.stack([t[k] for t in trees]).to(torch.float64) * w
            terms[0].add_(0.0)  # 0 + w_0·t_0, as the loop starts (-0.0 becomes +0.0)
            total = terms.cumsum(0)[-1]
        else:  # total += w_i · float64(t_i), each term in one scratch tensor: the same floats, no fresh pages
            total = torch.zeros_like(first, dtype=torch.float64)
            term = torch.empty_like(total)
            for tree, wi in zip(trees, weights):
                total += term.copy_(tree[k]).mul_(wi)
        out[k] = total.to(first.dtype)
    return out
