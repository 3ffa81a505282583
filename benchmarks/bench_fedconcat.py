"""Time per round of FedAvg and of FedConcat's stages at Table 1's settings (notes/fedconcat.md §1d):
40 clients, all participating, E = 10, batch 64, SGD lr 0.01, momentum 0.9, weight decay 1e-5, #C = 2,
K = 5, the vectorized engine on one thread (as ``fedlib.run`` trains).

    PYTHONPATH=. FEDLIB_DATA=../shared/data python benchmarks/bench_fedconcat.py fmnist simple_cnn

Prints one JSON object: seconds for one FedAvg round, one stage-2 round (all K clusters), the
feature extraction (once), one stage-3 round as Algorithm 1 (E epochs) and as the code (3 batches),
one evaluation, and the cost of recomputing the frozen encoders' features in every stage-3 round
(the encoder forward passes on the inputs a round touches, from the measured extraction time).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time


from fedlib.algorithms import build_algorithm
from fedlib.algorithms import fedconcat as fc
from fedlib.config import Config
from fedlib.simulation import evaluate, prepare, run_round, single_thread


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def main(dataset: str = "fmnist", model: str = "simple_cnn", code_rounds: int = 20) -> dict:
    base = dict(dataset=dataset, model=model, partition="classes_per_client", partition_k=2, num_clients=40,
                local_epochs=10, batch_size=64, lr=0.01, momentum=0.9, weight_decay=1e-5, seed=0,
                engine="vectorized")
    res = {"dataset": dataset, "model": model}
    with single_thread():
        exp = prepare(Config(method="fedavg", **base))
        state = exp.initial_state()
        res["fedavg_round_s"], state = timed(lambda: run_round(exp, state, 1).state)
        res["evaluate_images_s"] = timed(lambda: evaluate(exp.model, state.params, exp.data.test_x,
                                                          exp.data.test_y, 10))[0]

        cfg = Config(method="fedconcat", num_clusters=5, encoder_rounds=1, classifier_rounds=1, **base)
        exp = prepare(cfg)
        plan = exp.algorithm.stages.plan(exp)
        outputs = {}
        res["clustering_s"], outputs["clustering"] = timed(lambda: plan[0].compute(exp, outputs))
        res["stage2_round_s"] = 0.0
        for stage in plan[1:-1]:
            sub = stage.build(exp, outputs)
            st = sub.initial_state(stage.initial(sub, outputs))
            dt, st = timed(lambda: run_round(sub, st, 1).state)
            res["stage2_round_s"] += dt
            outputs[stage.name] = {"params": st.params}
        encoders = [outputs[f"cluster_{i}"]["params"] for i in range(5)]
        res["features_train_s"] = timed(lambda: fc.concatenated_features(exp.model, encoders, exp.data.train_x))[0]
        res["features_once_s"], sub3 = timed(lambda: plan[-1].build(exp, outputs))  # train + test
        st3 = sub3.initial_state()
        res["stage3_round_paper_s"], st3 = timed(lambda: run_round(sub3, st3, 1).state)
        res["evaluate_features_s"] = timed(lambda: evaluate(sub3.model, st3.params, sub3.data.test_x,
                                                            sub3.data.test_y, 10))[0]
        code = cfg.replace(fedconcat_classifier_steps=3, fedconcat_classifier_weighting="uniform")
        exp_code = dataclasses.replace(exp, config=code, algorithm=build_algorithm(code))
        sub3c = exp_code.algorithm.stages.plan(exp_code)[-1].build(exp_code, outputs)
        st3c = sub3c.initial_state()

        def code_rounds_from(state):
            for r in range(1, code_rounds + 1):
                state = run_round(sub3c, state, r).state
            return state

        dt, _ = timed(lambda: code_rounds_from(st3c))
        res["stage3_round_code_s"] = dt / code_rounds
    n_train = len(exp.data.train_y)
    touched_code = sum(min(3 * 64, len(ix)) for ix in exp.client_indices)
    res["recompute_per_round_paper_s"] = res["features_train_s"] * cfg.local_epochs  # every sample E times
    res["recompute_per_round_code_s"] = res["features_train_s"] * touched_code / n_train
    return res


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:3]), indent=1))
