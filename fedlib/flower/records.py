"""fedlib's values as Flower records, and back.

Parameters ``{name: tensor}`` and the nested dictionaries a part keeps or sends
(SCAFFOLD's ``{"delta_c": {name: tensor}}``, a client's ``{"correction": {"c": …},
"local": {…}}``) travel as one :class:`flwr.app.ArrayRecord` each, their keys the
paths joined by ``/`` (parameter names hold dots, never slashes).  Numbers at the
leaves travel as 0-d arrays.  Arrays keep their dtype and shape and cross the wire
exactly (NumPy's ``.npy`` bytes), so a float32 parameter arrives bit for bit.
"""

from __future__ import annotations

import numpy as np
import torch
from flwr.app import Array, ArrayRecord

__all__ = ["to_record", "from_record", "flatten", "unflatten"]

SEP = "/"


def flatten(tree: dict, prefix: str = "") -> dict[str, torch.Tensor]:
    """``{"a": {"b": t}}`` → ``{"a/b": t}``; numbers become 0-d tensors; empty dicts vanish."""
    out: dict[str, torch.Tensor] = {}
    for key, value in tree.items():
        if SEP in str(key):
            raise ValueError(f"a record key may not contain {SEP!r}: {key!r}")
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, path + SEP))
        elif isinstance(value, torch.Tensor):
            out[path] = value
        elif isinstance(value, (int, float, bool, np.number)):
            out[path] = torch.as_tensor(value)
        else:
            raise TypeError(f"{path}: only tensors, numbers and dicts of them can cross the wire, "
                            f"got {type(value).__name__}")
    return out


def unflatten(flat: dict[str, torch.Tensor]) -> dict:
    out: dict = {}
    for path, value in flat.items():
        *parents, leaf = path.split(SEP)
        node = out
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def to_record(tree: dict) -> ArrayRecord:
    """A (nested) dict of tensors as one ArrayRecord."""
    record = ArrayRecord()
    for path, tensor in flatten(tree).items():
        record[path] = Array(np.array(tensor.detach().cpu().numpy(), copy=True))
    return record


def from_record(record: ArrayRecord | None) -> dict:
    """The (nested) dict of tensors :func:`to_record` encoded; ``{}`` for None."""
    if record is None:
        return {}
    return unflatten({k: torch.from_numpy(np.array(v.numpy())) for k, v in record.items()})
