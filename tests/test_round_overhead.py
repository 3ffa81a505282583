"""The per-round bookkeeping cut for speed (issue 24) gives the same bits as the plain loops it
replaces (the end-to-end check is tests/test_refactor_identity.py)."""

import torch

from fedlib import tree


def _loop_reference(trees, weights):
    """Σ_i w_i · tree_i as the plain float64 loop: zeros, then += w_i · t_i in order."""
    out = {k: torch.zeros_like(v, dtype=torch.float64) for k, v in trees[0].items()}
    for t, w in zip(trees, weights):
        for k, v in t.items():
            out[k] += float(w) * v.to(torch.float64)
    return {k: v.to(trees[0][k].dtype) for k, v in out.items()}


def _bits(t: torch.Tensor) -> bytes:
    return t.contiguous().numpy().tobytes()


def test_weighted_sum_stacked_and_looped_give_the_loops_bits(monkeypatch):
    gen = torch.Generator().manual_seed(0)
    for n in (1, 2, 7, 100):
        trees = [{"w": torch.randn(5, 7, generator=gen) * 10.0 ** torch.randint(-4, 4, (1,), generator=gen),
                  "b": torch.randn(3, generator=gen)} for _ in range(n)]
        trees[0]["b"][0] = -0.0  # a negative zero: the loop's 0 + (−0.0) is +0.0
        for t in trees[1:]:
            t["b"][0] = -0.0
        weights = (torch.rand(n, generator=gen, dtype=torch.float64) + 0.1).tolist()
        ref = _loop_reference(trees, weights)
        stacked = tree.weighted_sum(trees, weights)
        monkeypatch.setattr(tree, "_STACKED_NUMEL", 0)
        looped = tree.weighted_sum(trees, weights)
        monkeypatch.undo()
        for k in ref:
            assert _bits(stacked[k]) == _bits(ref[k]) and _bits(looped[k]) == _bits(ref[k]), (n, k)
            assert stacked[k].dtype == torch.float32
