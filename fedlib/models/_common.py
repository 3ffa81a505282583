"""Argument checks shared by the model modules."""

from __future__ import annotations


def check_positive_int(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")


def hw(image_size) -> tuple[int, int]:
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    h, w = (int(v) for v in image_size)
    return h, w
