"""The model registry: a model is registered once, by name, where it is defined.

A registered builder takes ``(num_classes, input_shape)`` and returns an
``nn.Module`` that follows fedlib's model contract:

* ``features(x) -> h``, the input of the last layer (FedLC's ``h``, FedABC's
  shared body output, FedConcat's encoder output);
* a final ``nn.Linear`` named ``classifier`` (the head), with
  ``forward(x) == classifier(features(x))``;
* no buffers (no BatchNorm running statistics), so
  ``torch.func.functional_call(model, params, x)`` over the parameters alone
  is the whole model and it can be vmapped over a client dimension.

A registration may declare the model's **memory format**: ``"channels_last"`` (NHWC)
where one SGD step measures faster so (``benchmarks/bench_memory_format.py``, both
engines' paths, one thread) than the default ``"contiguous"`` (NCHW).  It is applied
to inputs of more than one channel (:func:`memory_format`): :func:`build_model` puts
the 4-D parameters in it, and a run puts its image tensors in it once
(:func:`to_memory_format`), so every batch cut from them has it.  The format changes
float rounding, not the mathematics; the registering module is part of the code
version of the runs that use the model (:func:`fedlib.store.code_version`).

Every module of :mod:`fedlib.models` is imported by discovery, so a new model
is a new module with a ``@register_model`` builder; no list elsewhere changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import torch
from torch import nn

__all__ = ["ModelSpec", "MODELS", "MEMORY_FORMATS", "LAYOUTS", "register_model", "build_model", "model_names",
           "head_keys", "body_keys", "body_params", "layer_keys", "memory_format", "to_memory_format"]

#: The memory formats a model may declare, and the torch format of each.
MEMORY_FORMATS = {"contiguous": torch.contiguous_format, "channels_last": torch.channels_last}
#: What a run may ask of a model's layout (the ``memory_format`` configuration field): ``model``, the format
#: the model registered (measured faster on a CPU), or ``contiguous`` (NCHW), whatever it registered -- a GPU's
#: stacked (grouped) convolutions may prefer it (``benchmarks/results_gpu.md``).
LAYOUTS = ("model", "contiguous")


@dataclass(frozen=True)
class ModelSpec:
    name: str
    doc: str
    build: Callable[[int, tuple], nn.Module]
    any_shape: bool = False  # False: input_shape must be (C, H, W)
    memory_format: str = "contiguous"  # a key of MEMORY_FORMATS: the layout of its 4-D tensors


MODELS: dict[str, ModelSpec] = {}


def register_model(name: str, doc: str, *, any_shape: bool = False, memory_format: str = "contiguous"):
    """Decorator: register ``build(num_classes, input_shape) -> nn.Module`` as ``name``,
    with the memory format its 4-D parameters and inputs take (a key of :data:`MEMORY_FORMATS`)."""
    if memory_format not in MEMORY_FORMATS:
        raise ValueError(f"memory_format must be one of {tuple(MEMORY_FORMATS)}, got {memory_format!r}")

    def deco(build):
        if name in MODELS and MODELS[name].build is not build:
            raise ValueError(f"model {name!r} is registered twice")
        MODELS[name] = ModelSpec(name, doc, build, any_shape, memory_format)
        return build

    return deco


def model_names() -> tuple[str, ...]:
    return tuple(MODELS)


def build_model(name: str, num_classes: int, input_shape: Sequence[int], *, layout: str = "model") -> nn.Module:
    """Build a registered model.

    Args:
        name: a name of :data:`MODELS` (``fedlib params`` lists them).
        num_classes: ``K >= 1``.
        input_shape: one example's shape without the batch dim: ``(C, H, W)``
            for image models, any shape for models registered with ``any_shape``.
        layout: one of :data:`LAYOUTS`: the 4-D parameters' memory format (:func:`memory_format`).
    """
    if name not in MODELS:
        raise ValueError(f"name must be one of {model_names()}, got {name!r}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise ValueError(f"num_classes must be an integer >= 1, got {num_classes!r}")
    shape = tuple(int(d) for d in input_shape)
    if not shape or any(d < 1 for d in shape):
        raise ValueError(f"input_shape must be non-empty with positive dims, got {tuple(input_shape)}")
    spec = MODELS[name]
    if not spec.any_shape and len(shape) != 3:
        raise ValueError(f"input_shape must be (C, H, W) for {name!r}, got {shape}")
    fmt = memory_format(name, shape, layout)  # (checks layout before any work)
    model = spec.build(num_classes, shape)
    # a model built of other registered models (FedConcat's concatenated encoders) takes the format asked of it
    return model.to(memory_format=fmt) if fmt != torch.contiguous_format or layout != "model" else model


def memory_format(name: str, input_shape: Sequence[int], layout: str = "model") -> torch.memory_format:
    """The torch memory format of model ``name`` on inputs of ``input_shape`` (one example's
    shape) under ``layout`` (:data:`LAYOUTS`): with ``model``, its declared format for (C, H, W)
    inputs with C > 1, else contiguous (with one channel NHWC and NCHW are the same layout and
    channels-last measured no faster); with ``contiguous``, contiguous."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    shape = tuple(input_shape)
    if layout == "contiguous" or MODELS[name].memory_format == "contiguous" or len(shape) != 3 or shape[0] < 2:
        return torch.contiguous_format
    return MEMORY_FORMATS[MODELS[name].memory_format]


def to_memory_format(x: torch.Tensor | None, fmt: torch.memory_format) -> torch.Tensor | None:
    """``x`` (a batch of images, N × C × H × W) in memory format ``fmt``; anything else unchanged."""
    if x is None or x.ndim != 4 or fmt == torch.contiguous_format:
        return x
    return x.contiguous(memory_format=fmt)


def head_keys(model: nn.Module) -> tuple[str, ...]:
    """Parameter names of the head (the final ``classifier``), in model order."""
    return tuple(k for k, _ in model.named_parameters() if k.split(".")[0] == "classifier")


def body_keys(model: nn.Module) -> tuple[str, ...]:
    """Parameter names of the body (everything but the ``classifier``), in model order."""
    heads = set(head_keys(model))
    return tuple(k for k, _ in model.named_parameters() if k not in heads)


def body_params(params: dict) -> dict:
    """The entries of a parameter dict that belong to the body (all but the ``classifier``)."""
    return {k: v for k, v in params.items() if k.split(".")[0] != "classifier"}


def layer_keys(model: nn.Module) -> tuple[tuple[str, ...], ...]:
    """Parameter names grouped by the module that owns them (a "layer": a conv or linear
    layer's weight and bias), in registration order -- bottom-up for fedlib's models."""
    layers: dict[str, list[str]] = {}
    for k, _ in model.named_parameters():
        layers.setdefault(k.rpartition(".")[0], []).append(k)
    return tuple(tuple(keys) for keys in layers.values())
