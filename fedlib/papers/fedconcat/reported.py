"""FedConcat (Diao, Li, He, AAAI 2024): the reported results as data.

Tables 1-3 are transcribed from the AAAI 2024 slides
(``shared/papers/fedconcat_aaai2024_slides.txt``; the paper's own text was not
available, ``notes/fedconcat.md``), values in %, ``mean±std`` where given.
The slides print one row per (dataset, partition) and one column per method;
fedlib's :class:`~fedlib.repro.spec.reported.PaperTable` has methods as rows and settings
as columns, so each block below is written **as printed** (one line per printed
row, starting with the column key it becomes) and transposed by
:func:`_transposed`.  ``tests/test_fedconcat_reported.py`` checks every cell
against the slides' text.

Table 1 includes FedAvg, FedProx, MOON, FedRS and FedLC on CIFAR-10, SVHN and
FMNIST: a third-party measurement of FedLC (Zhang et al., ICML 2022) to set
beside the FedLC paper's own claims.

The "Centralized" column is printed once per dataset (a cell spanning the
dataset's four partitions; a centralized model sees no partition): it is stored
in the dataset's #C=2 column and is "—" in the other three.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...repro.spec.reported import Cell, Column, PaperTable, Row, parse_cell

__all__ = ["Cell", "Column", "Row", "PaperTable", "TABLES", "SETUP", "SEEDS", "METHODS", "METHOD_ORDER", "METHOD_LABELS",
           "FIGURE_CLAIMS", "NOTES", "UNSUPPORTED_DATASETS", "table", "PAPER", "CODE_INPUTS", "CODE_INPUTS_GROUP",
           "CODE_INPUTS_ROWS"]

PAPER = ("Diao, Li, He, Exploiting Label Skews in Federated Learning with Model Concatenation, AAAI 2024")

#: The methods of Tables 1-3 in the slides' column order.
METHODS = ("fedavg", "fedprox", "moon", "fedrs", "fedlc", "fedconcat", "fedconcat_id", "centralized")
#: The methods in the paper's row order (Table 1):
#: their order and colours in every figure.
METHOD_ORDER = METHODS
METHOD_LABELS = {"fedavg": "FedAvg", "fedprox": "FedProx", "moon": "MOON", "fedrs": "FedRS", "fedlc": "FedLC",
                 "fedconcat": "FedConcat", "fedconcat_id": "FedConcat-ID", "centralized": "Centralized"}
DATASET_LABELS = {"cifar10": "CIFAR-10", "svhn": "SVHN", "fmnist": "FMNIST", "cifar100": "CIFAR-100",
                  "tinyimagenet": "Tiny-ImageNet"}

#: Datasets of the paper that fedlib does not implement; their cells are never run.  (Tiny-ImageNet and
#: CIFAR-100 have loaders: their cells run where the files are and are "not run" elsewhere.)
UNSUPPORTED_DATASETS: dict[str, str] = {}

#: The common setup, from the public code's run.sh and defaults (notes/fedconcat.md §0, §1d): 40 clients,
#: all participating, E = 10, batch 64, SGD lr 0.01 with momentum 0.9 (reset every round) and weight decay
#: 1e-5; K = 5, T_e = 50, T_c = 1000.  The model is the simple CNN (inferred from the Centralized column,
#: notes §1a; run.sh names VGG-9).  FedProx μ = 1 is the code's default (its FedProx baseline; notes §2).  Not
#: stated: the baselines' rounds ("same communication cost", see fedlib.papers.fedconcat.analysis),
#: MOON's μ/τ/out_dim, FedRS α, FedLC τ.
SETUP: dict[str, Any] = {"num_clients": 40, "participation": 1.0, "local_epochs": 10, "batch_size": 64,
                         "lr": 0.01, "momentum": 0.9, "weight_decay": 1e-5, "model": "simple_cnn",
                         "num_clusters": 5, "encoder_rounds": 50, "classifier_rounds": 1000,
                         "mu": 1.0}  # FedProx μ: the code's default (experiments.py:51; the paper does not state it)
SEEDS = (0, 1, 2)  # "three different random seeds" (Table 1 caption); the values are not stated

# The centralized baseline: one client holding the whole training set (the code's alg=all_in; its epochs
# are not stated: fedlib.papers.fedconcat.analysis.with_budget trains CENTRALIZED_EPOCHS = 10 epochs).
_CENTRALIZED = {"method": "fedavg", "num_clients": 1, "partition": "iid"}


def _rows(methods) -> list[Row]:
    """One row per method; Centralized in its own row group ("reference"), so that the comparisons of
    methods (the best method per column, FedConcat − FedAvg) are among the federated methods only."""
    return [Row(m, METHOD_LABELS[m], dict(_CENTRALIZED), "reference") if m == "centralized"
            else Row(m, METHOD_LABELS[m], {"method": m}) for m in methods]


def _partition_cols(dataset: str, extra: dict | None = None, prefix: str = "", group: str = "") -> list[Column]:
    ds = DATASET_LABELS[dataset]
    extra = extra or {}
    cols = [Column(f"{prefix}{dataset}_c{k}", f"{group or ds} #C={k}", dataset,
                   {"partition": "classes_per_client", "partition_k": k, **extra}, group or ds) for k in (2, 3)]
    cols += [Column(f"{prefix}{dataset}_dir{b}", f"{group or ds} Dir({b})", dataset,
                    {"partition": "dirichlet", "partition_beta": b, **extra}, group or ds) for b in (0.1, 0.5)]
    return cols


def _transposed(block: str, rows: list[Row], columns: list[Column]) -> dict:
    """A block printed with one line per column (its key, then one cell per row) as
    ``{(row key, column key): Cell | None}``."""
    lines = [ln.split() for ln in block.strip().splitlines() if ln.strip()]
    if [ln[0] for ln in lines] != [c.key for c in columns]:
        raise ValueError(f"printed lines {[ln[0] for ln in lines]} do not match columns {[c.key for c in columns]}")
    values = {}
    for line in lines:
        if len(line) - 1 != len(rows):
            raise ValueError(f"line {line[0]}: expected {len(rows)} cells, got {len(line) - 1}")
        for row, text in zip(rows, line[1:]):
            values[(row.key, line[0])] = parse_cell(text)
    return values


# ------------------------------------------------------------------------------ Table 1
_T1_ROWS = _rows(METHODS)
_T1_COLS = [c for d in ("cifar10", "svhn", "fmnist") for c in _partition_cols(d)]
# printed:      FedAvg   FedProx  MOON     FedRS    FedLC    FedConcat FedConcat-ID Centralized
_T1 = """
cifar10_c2      53.6±0.8 53.1±0.6 53.4±1.3 53.8±0.8 49.8±0.6 56.9±0.2 56.5±2.6 70.2±0.9
cifar10_c3      57.6±0.6 57.4±0.8 58.6±1.8 59.1±1.4 58.1±1.4 62.0±0.6 61.8±0.8 —
cifar10_dir0.1  53.0±1.0 52.8±1.0 53.1±3.5 54.8±0.3 53.7±0.8 57.7±0.4 56.9±1.4 —
cifar10_dir0.5  59.9±0.5 59.9±0.6 61.2±1.8 61.5±0.8 61.5±1.1 64.2±0.7 63.7±0.8 —
svhn_c2         82.8±0.5 82.6±0.6 83.0±0.1 79.5±1.2 75.7±2.3 83.4±1.4 83.2±1.9 86.2±0.9
svhn_c3         85.2±0.4 85.2±0.6 84.7±0.4 85.7±0.4 84.8±0.4 86.0±0.9 86.1±0.5 —
svhn_dir0.1     84.0±1.3 83.9±1.2 83.7±1.1 80.9±0.9 78.8±0.8 83.2±0.9 82.9±0.3 —
svhn_dir0.5     87.2±0.2 87.2±0.2 87.2±0.2 87.1±0.1 87.1±0.5 87.5±0.1 87.9±0.3 —
fmnist_c2       79.0±4.7 81.8±2.8 81.4±1.4 78.3±1.8 77.7±2.9 84.4±0.6 83.0±2.0 88.4±0.2
fmnist_c3       84.7±1.4 85.7±0.3 84.6±1.9 85.8±0.8 86.0±0.3 87.1±0.2 86.6±0.1 —
fmnist_dir0.1   85.1±0.5 85.2±0.8 85.0±0.1 82.5±0.5 82.1±1.6 84.5±0.1 85.0±0.4 —
fmnist_dir0.5   87.5±0.3 87.4±0.4 87.4±0.5 87.5±0.5 87.5±0.4 87.7±0.1 87.5±0.2 —
"""
TABLE1 = PaperTable(
    "table1", 1, "Experimental results compared with baselines with same communication cost", "Effectiveness",
    tuple(_T1_COLS), tuple(_T1_ROWS), _transposed(_T1, _T1_ROWS, _T1_COLS), {},
    ("Caption: 'The model of baseline algorithms is the model of one cluster in FedConcat. We repeat experiments "
     "with three different random seeds.'",
     "The baselines' number of rounds ('same communication cost') is not stated; "
     "fedlib.papers.fedconcat.analysis computes it from the model sizes.",
     "Centralized is printed once per dataset; it is stored in the #C=2 column.",
     "40 clients: run.sh and Figs. 3-4 (CIFAR-10); unconfirmed for SVHN and FMNIST."))

# ------------------------------------------------------------------------------ Table 2
_T2_ROWS = _rows(METHODS[:-1])
_T2_COLS = [c for n in (100, 200) for c in _partition_cols("cifar10", {"num_clients": n}, f"n{n}_",
                                                             f"{n} clients")]
# printed:          FedAvg FedProx MOON FedRS FedLC FedConcat FedConcat-ID
_T2 = """
n100_cifar10_c2     44.4 43.7 44.4 54.4 52.6 51.0 53.2
n100_cifar10_c3     55.4 54.6 55.2 56.5 54.8 59.0 59.3
n100_cifar10_dir0.1 45.0 44.8 45.3 50.5 50.0 49.1 50.7
n100_cifar10_dir0.5 58.1 58.3 57.7 59.0 58.1 63.3 62.2
n200_cifar10_c2     39.7 40.9 40.3 46.2 48.6 48.9 44.6
n200_cifar10_c3     47.7 48.2 47.8 51.5 51.0 53.1 51.8
n200_cifar10_dir0.1 40.5 41.2 40.9 43.6 43.7 47.6 46.7
n200_cifar10_dir0.5 53.9 53.5 53.9 54.4 53.7 56.7 56.8
"""
TABLE2 = PaperTable(
    "table2", 2, "Scalability of FedConcat and FedConcat-ID compared with baselines on CIFAR-10", "Scalability",
    tuple(_T2_COLS), tuple(_T2_ROWS), _transposed(_T2, _T2_ROWS, _T2_COLS), {},
    ("A single run per cell: no standard deviations.",
     "K, T_e and T_c are not stated; the code's defaults (5, 50, 1000) are assumed."))

# ------------------------------------------------------------------------------ Table 3
_T3_ROWS = _rows(METHODS)
_T3_COLS = [c for d in ("cifar100", "tinyimagenet") for c in _partition_cols(d)]
# printed:          FedAvg   FedProx  MOON     FedRS    FedLC    FedConcat FedConcat-ID Centralized
_T3 = """
cifar100_c2         8.4±1.2  8.1±1.3  8.0±1.0  7.0±1.5  3.8±0.4  18.5±0.7 16.4±0.8 70.5±0.1
cifar100_c3         21.6±2.8 18.7±6.0 19.0±2.4 19.2±1.7 12.6±0.7 34.4±1.1 32.9±0.6 —
cifar100_dir0.1     52.4±4.9 51.5±8.1 55.2±3.3 51.8±2.8 50.5±2.9 61.2±0.4 62.1±0.5 —
cifar100_dir0.5     62.0±1.2 61.2±1.3 61.9±0.9 61.9±1.2 61.4±1.3 66.3±0.1 65.6±0.1 —
tinyimagenet_c2     3.1±0.4  2.7±0.3  3.0±0.4  3.1±0.1  2.0±0.1  4.3±0.1  4.3±0.2  49.9±0.2
tinyimagenet_c3     4.9±2.4  5.1±1.0  6.3±1.7  3.3±0.4  1.7±0.1  11.7±0.3 9.6±0.2  —
tinyimagenet_dir0.1 40.8±0.5 40.8±0.6 40.6±0.8 39.7±0.7 39.9±0.8 43.1±0.2 42.6±0.2 —
tinyimagenet_dir0.5 44.0±0.6 44.2±0.7 44.1±0.5 43.6±0.9 43.9±0.5 44.3±0.1 43.8±0.2 —
"""
TABLE3 = PaperTable(
    "table3", 3, "Experimental results on CIFAR-100 and Tiny-ImageNet with ResNet-50", "Larger models",
    tuple(_T3_COLS), tuple(_T3_ROWS), _transposed(_T3, _T3_ROWS, _T3_COLS), {},
    ("Caption: weight decay tuned among {1e-5, 1e-3, 2e-3, 5e-3} for all algorithms; mean ± std over the last 10 "
     "rounds (not over seeds).",
     "ResNet-50 (BatchNorm) is not in fedlib (its models have no buffers): the cells run fedlib's ResNet-18 with "
     "GroupNorm; N, K, T_e, T_c, E and lr are not stated.",
     "Tiny-ImageNet is read from the official archive (tiny-imagenet-200/) or an ImageFolder tree and resized to "
     "32×32, as the code does; CIFAR-100 from torchvision's files.",
     "The code runs a size-capped K-means and initialises the concatenated head from the cluster heads for these "
     "datasets (notes §4, §5); fedlib implements neither."))

# ------------------------------------------------------------------------------ the code's input scaling
#: The authors' code feeds FMNIST, SVHN and CIFAR-10 as ToTensor gives them, pixels in [0, 1] with no
#: standardisation (utils.py:832-868; notes §1b); fedlib standardises per channel by default.
CODE_INPUTS = {"input_normalization": "unit_interval"}
CODE_INPUTS_GROUP = "inputs in [0, 1] (the code's; faces the paper)"
#: The headline pair run a second time with the code's inputs, beside the default rows: the paper's numbers
#: come from that code, so these rows face them (notebooks/fedconcat/README.md, "Input scaling").
CODE_INPUTS_ROWS = ("fedavg", "fedconcat")


def _with_code_inputs(t: PaperTable) -> PaperTable:
    """``t`` with the rows :data:`CODE_INPUTS_ROWS` again in the group :data:`CODE_INPUTS_GROUP` (keys
    ``unit/<method>``), with the code's input scaling and the paper's values of the same methods."""
    rows = tuple(Row(f"unit/{m}", f"{METHOD_LABELS[m]}, [0, 1] inputs", {"method": m, **CODE_INPUTS}, CODE_INPUTS_GROUP)
                 for m in CODE_INPUTS_ROWS)
    values = {**t.values, **{(r.key, c.key): t.values[(r.key.split("/")[-1], c.key)] for r in rows for c in t.columns}}
    return replace(t, rows=t.rows + rows, values=values,
                   notes=t.notes + ("The group 'inputs in [0, 1]' runs FedAvg and FedConcat again with the code's "
                                    "input scaling (input_normalization='unit_interval': ToTensor alone); it faces "
                                    "the paper, whose numbers come from that code. The other rows keep fedlib's "
                                    "per-channel standardisation.",))


TABLE1 = _with_code_inputs(TABLE1)
TABLE1, TABLE2 = (replace(t, setup=SETUP) for t in (TABLE1, TABLE2))
# ResNet-50 (BatchNorm) is not in fedlib; the caption's ± is over the last 10 rounds, not over seeds
TABLE3 = replace(TABLE3, setup={**SETUP, "model": "resnet18"}, std_over="the last 10 rounds")
TABLES: dict[str, PaperTable] = {t.id: t for t in (TABLE1, TABLE2, TABLE3)}


def table(table_id) -> PaperTable:
    """A table by id (``"table1"`` … ``"table3"``) or number (``1`` … ``3``)."""
    key = f"table{table_id}" if isinstance(table_id, int) or str(table_id).isdigit() else str(table_id)
    if key not in TABLES:
        raise KeyError(f"unknown table {table_id!r}; known: {', '.join(TABLES)}")
    return TABLES[key]


#: What the slides say of their figures (the figures give no values).
FIGURE_CLAIMS = {
    "fig1": {"text": "Accuracy of local models and averaged model on two clients under label skews: each local "
                     "model fits its own classes, their average does worse."},
    "fig3": {"text": "Training curves with clustering versus without clustering on CIFAR-10 (40 clients)."},
    "fig4": {"text": "Baselines compared on the final global model of FedConcat (CIFAR-10, 40 clients, #C=2)."},
}

NOTES = (
    "The paper's experimental-setup section was not available; the setup comes from the public code "
    "(notes/fedconcat.md).",
    "Table 1's model is inferred to be the simple CNN (the Centralized column matches it; run.sh names VGG-9).",
    "The baselines' round budget ('same communication cost') is not stated and not in the code.",
    "MOON, FedRS and FedLC are not in FedConcat's code; their hyperparameters are unknown.",
)
