"""Table 1's cells as FedConcat's studies use them, and the kind of study that reads its profile.

Every study of this companion trains Table 1's configurations (or one of them with one setting
changed), so the store shares the runs between notebooks: a study hands Table 1's cell
(``TABLE1.config(method, column)``) to the gate, :func:`fedlib.repro.budget.gate.decide`, with what it
changes as the gate's ``then`` (trained here, from a GPU's stored runs, or "not run" with its reason).
"""

from __future__ import annotations

from typing import Any, Sequence

from . import reported as paper
from ...repro.spec.profiles import Profile

__all__ = ["BASELINES", "FEDCONCAT", "partition_label", "table1_cells", "load_runs",
           "model_params"]

#: The baselines of Tables 1-2 (trained for the round budget; FedConcat and Centralized are not).
BASELINES = ("fedavg", "fedprox", "moon", "fedrs", "fedlc")
#: FedConcat and FedConcat-ID: their own communication is the budget's reference.
FEDCONCAT = ("fedconcat", "fedconcat_id")


def partition_label(column: str) -> str:
    """``"fmnist_dir0.1"`` -> ``"Dir(0.1)"``, ``"n100_cifar10_c2"`` -> ``"#C=2"``."""
    kind = column.rsplit("_", 1)[-1]
    return f"#C={kind[1:]}" if kind.startswith("c") else f"Dir({kind[3:]})"


def table1_cells(profile: Profile, columns: Sequence[str]) -> list[dict]:
    """Table 1's grid cells (labels row, column, method) in ``columns``, as the table runs them: the rows of
    fedlib's default reading only, one per method (the group run again with the code's [0, 1] inputs,
    :data:`.reported.CODE_INPUTS_GROUP`, would otherwise stand under the same (column, method))."""
    from ...repro.artefacts.tables import grid_cells

    default = {r.key for r in paper.TABLE1.rows if r.group != paper.CODE_INPUTS_GROUP}
    return [c for c in grid_cells(profile, "table1") if c["column"] in set(columns) and c["row"] in default]


def load_runs(cells: Sequence[dict], store: Any = None) -> dict:
    """The :class:`fedlib.Result` of each cell with a config (run if not in the store; default: the
    regeneration store, the notebooks' own), keyed by the cell's ``(column, method)``."""
    from ...api import run
    from ...repro.run.grid import default_store

    store = default_store() if store is None else store
    return {(c["column"], c["method"]): run(c["config"], store=store, progress=False)
            for c in cells if c.get("config") is not None}


def model_params(config: dict) -> int:
    """Parameters of the configuration's model on its dataset."""
    from ...data import DATASETS
    from .analysis import model_sizes

    spec = DATASETS[config["dataset"]]
    return model_sizes(config["model"], spec.num_classes, tuple(spec.input_shape))["model_params"]


