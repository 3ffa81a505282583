"""Unit costs of each paper's `paper`-profile runs on this machine's CPU, from short timed runs.

    python benchmarks/unit_costs.py            # minutes; prints a table, writes benchmarks/results_unit_costs.md
    python benchmarks/unit_costs.py --only fedabc_mnist_mlp

For each case, the paper profile's own configuration of one headline cell (a table cell of
``fedlib.papers.<paper>`` under its ``paper`` profile), trained twice for a few rounds
(``r1`` and ``r2``, everything else equal, one torch thread, no store): the CPU time of one
more round is ``(t(r2) − t(r1)) / (r2 − r1)``, and, divided by the client samples a round
trains (``participation · N_train · E``), the seconds per client sample-epoch; what is left
of ``t(r1)`` is the fixed cost (loading, evaluation, personalized evaluation).  Heavy cases
train a seeded subset of the data and fewer local epochs (``shrink``): the cost per sample-epoch
does not depend on either.  CPU time (``time.process_time``) stands for quiet-machine wall
time on a loaded machine.  :mod:`fedlib.repro.budget.costs` turns these numbers into estimates.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("FEDLIB_DATA", str(Path(__file__).resolve().parents[2] / "shared" / "data"))

import fedlib  # noqa: E402
from fedlib.repro.budget.costs import client_samples_per_round, ungated  # noqa: E402
from fedlib.repro.spec.paper import get_paper  # noqa: E402

# name: (paper, table, row, column, shrink overrides, (r1, r2), round key (or keys set together))
CASES = {
    "fedabc_mnist_mlp": ("fedabc", "table1", "fedavg", "mnist_dir0.3", {}, (2, 6), "rounds"),
    "fedabc_cifar10_convnet": ("fedabc", "table1", "fedavg", "cifar10_dir0.3",
                               {"max_train_samples": 20000, "local_epochs": 1}, (1, 5), "rounds"),
    "fedlc_synthetic_logreg": ("fedlc", "table4", "fedavg", "synthetic_1_1", {}, (5, 25), "rounds"),
    "fedlc_cifar10_cnn": ("fedlc", "table1", "fedavg", "cifar10_beta0.5", {"max_train_samples": 4000}, (1, 3),
                          "rounds"),
    "fedic_cifar10lt_resnet8": ("fedic", "table1", "fedavg", "cifar10_if100", {"local_epochs": 1}, (1, 2), "rounds"),
    "fedic_cifar10lt_resnet8_fedic": ("fedic", "table1", "fedic", "cifar10_if100", {"local_epochs": 1}, (1, 2),
                                      "rounds"),
    # FEDIC's server steps: one round, 10 and 30 steps of each of FT, calibration and distillation (the three keys
    # set together); its s_per_round is the seconds per step of the three (× 100 for a round at the paper's I = J)
    "fedic_cifar10lt_resnet8_server_steps": (
        "fedic", "table1", "fedic", "cifar10_if100", {"local_epochs": 1, "rounds": 1, "fedic_teacher_eval": "never"},
        (10, 30), ("fedic_finetune_steps", "fedic_calibration_steps", "fedic_distill_steps")),
    "fedconcat_fmnist_cnn": ("fedconcat", "table1", "fedavg", "fmnist_c2", {"max_train_samples": 6000,
                                                                            "local_epochs": 1}, (1, 3), "rounds"),
    "fedconcat_cifar10_cnn": ("fedconcat", "table1", "fedavg", "cifar10_c2", {"max_train_samples": 6000,
                                                                              "local_epochs": 1}, (1, 3), "rounds"),
    "fedconcat_fmnist_stage3": ("fedconcat", "table1", "fedconcat", "fmnist_c2",
                                {"max_train_samples": 6000, "local_epochs": 1, "encoder_rounds": 1}, (1, 41),
                                "classifier_rounds"),
}


def paper_config(paper: str, table: str, row: str, column: str) -> dict:
    prof = ungated(get_paper(paper).profile("paper"))  # the cell as the paper sets it, whatever this CPU affords
    for cell in prof.table_cells(table):
        if cell["row"] == row and cell["column"] == column:
            if cell["config"] is None:
                raise SystemExit(f"{paper} {table} {row}/{column}: {cell['note']}")
            return {k: v for k, v in cell["config"].items() if k != "device"}
    raise SystemExit(f"{paper} {table}: no cell {row}/{column}")


def timed(cfg: dict) -> float:
    t0 = time.process_time()
    fedlib.run(cfg, store=False, progress=False)
    return time.process_time() - t0


def measure(name: str) -> dict:
    paper, table, row, column, shrink, (r1, r2), key = CASES[name]
    base = {**paper_config(paper, table, row, column), **shrink, "seed": 0}
    base["eval_every"] = 10_000  # one evaluation, at the end, in both runs
    keys = (key,) if isinstance(key, str) else tuple(key)  # several keys: set together
    t1 = timed({**base, **dict.fromkeys(keys, r1)})
    t2 = timed({**base, **dict.fromkeys(keys, r2)})
    per_round = max(t2 - t1, 0.0) / (r2 - r1)
    samples = client_samples_per_round(base) if isinstance(key, str) else None  # server steps: no client samples
    return {"case": name, "paper": paper, "cell": f"{table} {row} {column}", "shrink": shrink, "rounds": [r1, r2],
            "round_key": key, "cpu_s": [round(t1, 2), round(t2, 2)], "s_per_round": round(per_round, 3),
            "client_samples_per_round": samples, "s_per_sample_epoch": per_round / samples if samples else None,
            "fixed_s": round(max(t1 - r1 * per_round, 0.0), 2)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], help="a case name (repeatable)")
    parser.add_argument("--out", default=str(Path(__file__).with_name("results_unit_costs.jsonl")))
    args = parser.parse_args(argv)
    names = args.only or list(CASES)
    for name in names:
        rec = measure(name)
        rec["load_average"] = round(os.getloadavg()[0], 1)
        rec["measured"] = time.strftime("%Y-%m-%d %H:%M")
        print(json.dumps(rec), flush=True)
        with open(args.out, "a") as fh:
            fh.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
