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


def weighted_sum(trees: Sequence[Params], weights: Iterable[float]) -> Params:
    """Σ_i w_i · tree_i, accumulated in float64 so that the order of clients
    changes nothing beyond float32 rounding of the final result."""
    weights = list(weights)
    out = {k: torch.zeros_like(v, dtype=torch.float64) for k, v in trees[0].items()}
    for tree, w in zip(trees, weights):
        for k, v in tree.items():
            out[k] += float(w) * v.to(torch.float64)
    return {k: v.to(trees[0][k].dtype) for k, v in out.items()}
