"""fedlib.evaluation's chunking: rows per chunk from the model's largest layer output, the same accuracy."""

from __future__ import annotations

import torch

from fedlib.evaluation import EVAL_ACTIVATION_BYTES, EVAL_BATCH_RANGE, eval_batch_size, evaluate
from fedlib.models import build_model


def _model(name, shape):
    torch.manual_seed(0)
    model = build_model(name, 10, shape)
    return model, {k: v.detach() for k, v in model.named_parameters()}


def test_rows_per_chunk_follow_the_largest_layer_output():
    # FedLC's CIFAR CNN: conv1's output, 128 × 32 × 32 float32 = 512 KiB a row
    model, params = _model("cnn_cifar", (3, 32, 32))
    assert eval_batch_size(model, params, torch.zeros(3, 3, 32, 32)) == EVAL_ACTIVATION_BYTES // (128 * 32 * 32 * 4)
    # FedLC's MNIST CNN: conv1's 10 × 24 × 24 float32 = 23,040 B a row: 1,456 rows fit, the power of two below
    model, params = _model("cnn_mnist", (1, 28, 28))
    assert eval_batch_size(model, params, torch.zeros(3, 1, 28, 28)) == 1024
    # a logistic regression's rows are tiny: the upper bound
    model, params = _model("logreg", (60,))
    assert eval_batch_size(model, params, torch.zeros(3, 60)) == EVAL_BATCH_RANGE[1]


def test_chunked_accuracy_equals_one_batch():
    """Chunked, every row is counted once and the per-class counts equal those of one batch.  A row's logits
    do not depend on its chunk beyond float rounding (they are bit for bit equal where the kernels are
    batch-invariant, as on the x86 CPU this was written on, but the test asks only for rounding), so the
    predictions agree wherever a row's top-2 margin exceeds twice the logits' largest difference: asserted
    for every row here, which is what makes the accuracies' equality a consequence and not luck."""
    model, params = _model("cnn_cifar", (3, 32, 32))
    torch.manual_seed(1)
    x, y = torch.randn(300, 3, 32, 32), torch.randint(0, 10, (300,))
    chunk = eval_batch_size(model, params, x)
    assert chunk < len(y)  # more than one chunk
    acc, per_class = evaluate(model, params, x, y, 10)
    acc_one, per_class_one = evaluate(model, params, x, y, 10, batch_size=len(y))
    with torch.no_grad():
        one = torch.func.functional_call(model, params, (x,))
        chunked = torch.cat([torch.func.functional_call(model, params, (x[i:i + chunk],))
                             for i in range(0, len(y), chunk)])
    diff = (one - chunked).abs().max().item()
    assert diff <= 1e-5 * one.abs().max().item()
    top2 = one.topk(2, dim=1).values
    assert bool(((top2[:, 0] - top2[:, 1]) > 2 * diff).all())
    assert acc == acc_one and (per_class == per_class_one).all()


def test_small_test_sets_go_through_in_one_batch():
    model, params = _model("cnn_cifar", (3, 32, 32))
    x, y = torch.randn(EVAL_BATCH_RANGE[0], 3, 32, 32), torch.randint(0, 10, (EVAL_BATCH_RANGE[0],))
    seen = []
    handle = model.register_forward_hook(lambda m, i, o: seen.append(len(i[0])))
    try:
        evaluate(model, params, x, y, 10)
    finally:
        handle.remove()
    assert seen == [len(y)]  # one forward, no probe: a set this small is never chunked


def test_an_accelerator_evaluates_in_the_largest_chunks():
    """The cache-sized chunks are a CPU's: on a GPU the kernels want large batches (a tensor on the meta
    device stands in for one here; no forward is made)."""
    model, params = _model("cnn_cifar", (3, 32, 32))
    assert eval_batch_size(model, params, torch.empty(3, 3, 32, 32, device="meta")) == EVAL_BATCH_RANGE[1]
