"""The federated round loop and the staged driver, shared by every engine and every method.

One round t (FedAvg's structure; FedLC Algorithm 1 is the client part), :func:`run_round`:

1. sample clients S_t (participation rate, seeded by (seed, t));
2. each sampled client runs its local update from the global model w^t, with
   its own local parameters put in when the method keeps some on the client
   (:mod:`fedlib.client`, on the engine :mod:`fedlib.engine` or :mod:`fedlib.vectorized`);
3. the aggregator combines the Δ_k of the shared parameters into Δ, the server
   optimizer applies −Δ, the client correction updates its server state
   (e.g. SCAFFOLD's c) (:mod:`fedlib.server`), and the server-training part, if
   any, trains on the server-held data;
4. every ``eval_every`` rounds (and at the last) the global model is evaluated
   on the test set (accuracy, per-class accuracy); every
   ``personal_eval_every`` rounds every client's personalized model is
   evaluated on its own test sets (:mod:`fedlib.evaluation`).  With
   ``validation_fraction`` > 0 a held-out slice of every client's training data
   replaces the test set in both (validation runs, for tuning without the test set);
5. every ``checkpoint_every`` rounds the full state goes to the store, so an
   interrupted run resumes where it stopped and ends with the same model.

The state between rounds is a :class:`~fedlib.state.ServerState`;
:func:`run_round` returns the next one with the round's :class:`RoundReport`.
A method is a list of stages (:mod:`fedlib.algorithms.stages`); most have one.
:func:`simulate` prepares the experiment (:mod:`fedlib.experiment`) and runs the
stages in turn, checkpointing each.

Training runs with one intra-op thread by default (``threads=1``, :func:`intra_op_threads`), so a
run's numbers depend only on its configuration, seed and code version -- not on the machine's core
count, the number of parallel workers, or how it was launched.  ``threads=N`` trains on N threads:
faster on an idle machine, equal to the 1-thread run to float rounding (``tests/test_threads.py``),
and keyed apart from it in the store.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import torch
from tqdm.auto import tqdm

from .algorithms.server_training import ServerRound
from .client import (EngineFallbackWarning, client_optimizer, client_tasks, client_trainer, round_algorithm,
                     train_locally)
from .config import Config, ConfigError
from .engine import sample_clients
from .evaluation import evaluate, evaluate_predictor, evaluation_row, personalized_evaluation
from .experiment import Experiment, prepare
from .server import server_update
from .precision import precision_scope
from .state import ServerState, initial_state
from .store import Store

__all__ = ["RoundReport", "run_round", "simulate", "single_thread", "intra_op_threads", "StagedCheckpoint",
           # re-exported from the modules that define them (their earlier home)
           "Experiment", "prepare", "evaluate", "evaluate_predictor", "personalized_evaluation", "train_locally",
           "client_trainer", "round_algorithm", "EngineFallbackWarning", "ServerState", "initial_state"]


def single_thread():
    """:func:`intra_op_threads` at 1, the default of every run."""
    return intra_op_threads(1)


@contextlib.contextmanager
def intra_op_threads(threads: int = 1):
    """Run the block with ``threads`` torch intra-op threads (restored afterwards); a run's
    ``config.threads``, 1 unless set.

    CPU kernels split reductions (matrix products, convolutions, sums) by
    thread, so their float results depend on the thread count; with one thread
    a run gives the same numbers whatever the machine's cores, the number of
    grid workers, or the caller's thread setting.  Parallelism comes from
    running several runs at once (:func:`fedlib.repro.artefacts.report.run_grid`'s workers), or,
    for one run, from ``threads=N``.
    The cost in speed is measured in ``benchmarks/``."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@dataclass
class RoundReport:
    """What :func:`run_round` gives back: the next ``state``, the sampled clients' mean
    local loss, what the server-training part reported (numbers for the round's
    history row) and whether the global model stopped being finite in this state."""

    state: ServerState
    train_loss: float
    server_report: dict = field(default_factory=dict)
    diverged: bool = False


def run_round(exp: Experiment, state: ServerState, round_: int, trainer=None, *, evaluating: bool = False,
              final: bool = False) -> RoundReport:
    """One round from ``state`` (left unchanged): the clients' local updates, the server
    update, the server training.  ``evaluating``/``final`` (this round is evaluated / is
    the stage's last) are passed to the server-training part."""
    c, alg = exp.config, round_algorithm(exp.algorithm, state.server_training_state)
    train_clients = trainer or client_trainer(c, alg)
    sampled = sample_clients(exp.num_clients, c.participation, c.seed, round_)
    tasks = client_tasks(exp, state, sampled, round_, stream=1)
    outputs = train_clients(exp.model, alg, state.params, tasks, state.correction_state, exp.data.train_x,
                            exp.data.train_y, client_optimizer(c))
    new = server_update(exp.model, alg, state, outputs, client_optimizer(c), num_clients=exp.num_clients,
                        round_=round_)
    report = {}
    if alg.server_training.name != "none":
        ctx = _server_round(exp, round_, [o.local for o in outputs], [o.num_samples for o in outputs], sampled,
                            evaluating=evaluating, final=final)
        params, server_training_state = alg.server_training.after_round(ctx, new.params, new.server_training_state)
        new = new.replace(params=params, server_training_state=server_training_state)
        report = dict(ctx.report)
    train_loss = sum(o.loss_sum for o in outputs) / max(1, sum(o.loss_count for o in outputs))
    diverged = not all(bool(v.isfinite().all()) for v in new.params.values())
    return RoundReport(new, train_loss, report, diverged)


def _server_round(exp: Experiment, round_: int, client_params: list, weights: list, clients: list,
                  evaluating: bool = False, final: bool = False) -> ServerRound:
    counts = torch.as_tensor(exp.class_counts[clients] if len(clients) else exp.class_counts[:0], dtype=torch.float32)
    data = exp.data

    def on_test_set(predict):
        return evaluate_predictor(predict, data.test_x, data.test_y, data.num_classes)

    return ServerRound(round_, exp.model, client_params, weights, counts, exp.server_data, exp.config.seed,
                       exp.config.device, torch.as_tensor(exp.class_counts.sum(0), dtype=torch.float32),
                       evaluate=on_test_set, evaluating=evaluating, final=final)


def _progress_total(plan) -> int:
    return sum(s.rounds for s in plan) or 1


@dataclass
class _StageRun:
    """The rounds of one stage so far: its state, its first non-finite round, its last
    personalized evaluation."""

    state: ServerState
    diverged_round: int | None = None
    personal_final: dict | None = None


def _run_rounds(exp: Experiment, run: _StageRun, rounds: int, stage, *, on_round: Callable, trainer, bar,
                label: str | None) -> None:
    """The rounds of one federated stage, resuming at ``run.state.round``."""
    c = exp.config
    for round_ in range(run.state.round + 1, rounds + 1):
        last = round_ == rounds
        evaluating = stage.evaluate and (round_ % c.eval_every == 0 or last)
        report = run_round(exp, run.state, round_, trainer, evaluating=evaluating, final=last)
        run.state, train_loss = report.state, report.train_loss
        if run.diverged_round is None and report.diverged:
            run.diverged_round = round_
            warnings.warn(f"{c.method} diverged: the global model's parameters are not finite after round {round_}"
                          f"{'' if label is None else f' of stage {label!r}'} (mean local loss {train_loss}); "
                          "its accuracies from here on are those of a broken model, and grids report the run as "
                          "'diverged'", RuntimeWarning, stacklevel=2)
        row = {}
        if evaluating:
            row = evaluation_row(exp, run.state.params, round_)
            row["train_loss"] = train_loss
            bar.set_postfix(acc=f"{row['test_accuracy']:.4f}", loss=f"{train_loss:.4f}")
        if report.server_report:
            row = row or {"round": round_, "train_loss": train_loss}
            row.update(report.server_report)
        if c.personal_eval_every and exp.client_test_indices is not None and (
                round_ % c.personal_eval_every == 0 or last):
            pm = personalized_evaluation(exp, run.state, round_, trainer)
            row = row or {"round": round_, "train_loss": train_loss}
            row.update({k: v for k, v in pm.items() if not k.endswith("per_client")})
            if last:
                run.personal_final = pm
        if row:
            if label is not None:
                row["stage"] = label
            run.state.history.append(row)
        bar.update(1)
        on_round(round_, run.state)


def simulate(config: Config, *, store: Store | None = None, progress: bool = True,
             on_round_end: Callable[[int, ServerState], None] | None = None,
             experiment: Experiment | None = None) -> dict:
    """Run (or resume) the configured simulation; returns
    ``{config, summary, history, params}``.  With a store, a finished run is
    returned from it and an unfinished one resumes from its last checkpoint; while another
    process trains the same key (:meth:`~fedlib.store.Store.claim`) this one waits and
    returns its result, so a configuration is never trained twice at once.
    ``on_round_end(round, state)`` is called after every round with its
    :class:`~fedlib.state.ServerState`."""
    if store is None:
        with intra_op_threads(config.threads), precision_scope(config.precision, config.device):
            return _simulate(config, store, None, progress, on_round_end, experiment)
    key = store.key(config)
    stored = store.load_result(key)
    if stored is None:
        with store.claim(key):  # one trainer per key: a process training it now finishes first
            stored = store.load_result(key)
            if stored is None:
                with intra_op_threads(config.threads), precision_scope(config.precision, config.device):
                    return _simulate(config, store, key, progress, on_round_end, experiment)
    stored["from_store"] = True
    return stored


def require_device(config: Config) -> None:
    """A run on ``cuda`` needs CUDA here: a clear error before any work starts, else nothing.  (A
    configuration naming ``cuda`` is valid anywhere, so that its stored result can be read on a CPU.)"""
    if config.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ConfigError(f"device must be 'cpu' on this machine (CUDA is not available), got {config.device!r}")


def device_name(device: str) -> str:
    """The hardware a run trained on, for its summary: the GPU's name on ``cuda``, else the processor's."""
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    import platform

    return platform.processor() or platform.machine() or "cpu"


@dataclass(frozen=True)
class StagedCheckpoint:
    """Where a run stands between two rounds, as the store keeps it (:meth:`~fedlib.store.Store.save_checkpoint`,
    as :meth:`to_dict`): all an interrupted run needs to resume and end with the same model.

    ``stage``: the next stage of the plan to run; ``outputs``: the finished stages' outputs by stage name
    (what later stages are built from); ``stage_state``: the current stage's
    :meth:`ServerState.to_dict <fedlib.state.ServerState.to_dict>` (None at a stage's start);
    ``history``: the finished stages' history rows; ``elapsed_s``: training time so far;
    ``diverged_round``/``diverged_stage``: the first round (and its stage, None for a one-stage method)
    after which the global model was not finite; ``personal_final``: the last personalized evaluation."""

    stage: int = 0
    outputs: dict = field(default_factory=dict)
    stage_state: dict | None = None
    history: list = field(default_factory=list)
    elapsed_s: float = 0.0
    diverged_round: int | None = None
    diverged_stage: str | None = None
    personal_final: dict | None = None

    def to_dict(self) -> dict:
        """The stored form: tensors, numbers, strings, lists and dicts only (loaded with ``weights_only``)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, saved: dict) -> "StagedCheckpoint":
        """A stored checkpoint, of this layout or the earlier untyped one (``diverged`` as
        ``{"round", "stage"}``, ``personal_final`` among the outputs); ValueError for anything else."""
        if not isinstance(saved, dict) or not {"stage", "outputs", "history"} <= set(saved):
            raise ValueError(f"not a staged checkpoint: {sorted(saved) if isinstance(saved, dict) else saved!r}")
        saved = dict(saved)
        outputs = dict(saved.pop("outputs"))
        old_diverged = saved.pop("diverged", None)  # the earlier layout
        if old_diverged is not None:
            saved.update(diverged_round=old_diverged["round"], diverged_stage=old_diverged["stage"])
        if "personal_final" in outputs:
            saved["personal_final"] = outputs.pop("personal_final")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(saved) - names)
        if unknown:
            raise ValueError(f"not a staged checkpoint: unknown fields {unknown}")
        return cls(outputs=outputs, **saved)


def _resume_point(store, key) -> StagedCheckpoint:
    """The stored checkpoint of ``key``, or a fresh start (none stored, or one this code cannot read:
    said, then retrained)."""
    saved = store.load_checkpoint(key) if store is not None else None
    if saved is None:
        return StagedCheckpoint()
    try:
        return StagedCheckpoint.from_dict(saved)
    except (ValueError, KeyError, TypeError) as err:
        warnings.warn(f"store entry {key}: checkpoint ignored, the run starts over ({err})", RuntimeWarning,
                      stacklevel=3)
        return StagedCheckpoint()


def _simulate(config, store, key, progress, on_round_end, experiment) -> dict:
    require_device(config)
    exp = (experiment or prepare(config)).data_on(config.device)
    plan = exp.algorithm.stages.plan(exp)
    multi = len(plan) > 1
    run = _resume_point(store, key)
    trainer = client_trainer(config, exp.algorithm)
    start_time = time.perf_counter() - run.elapsed_s
    done_before = sum(s.rounds for s in plan[:run.stage]) + (run.stage_state or {}).get("round", 0)
    bar = tqdm(total=_progress_total(plan), initial=done_before, desc=f"{config.method} on {config.dataset}",
               disable=not progress, unit="round", dynamic_ncols=True)

    def checkpoint(**changes) -> None:
        nonlocal run
        run = dataclasses.replace(run, **changes, elapsed_s=time.perf_counter() - start_time)
        if store is not None:
            store.save_checkpoint(key, config, run.to_dict())

    try:
        for index in range(run.stage, len(plan)):
            stage = plan[index]
            if stage.rounds == 0:
                run = dataclasses.replace(run, outputs={**run.outputs, stage.name: stage.compute(exp, run.outputs)})
            else:
                sub = stage.build(exp, run.outputs) if stage.build is not None else exp
                if run.stage_state is None:
                    init = stage.initial(sub, run.outputs) if stage.initial is not None else None
                    state = sub.initial_state(init)
                else:
                    state = ServerState.from_dict(run.stage_state)
                label = stage.name if multi else None
                stage_run = _StageRun(state, run.diverged_round if run.diverged_stage == label else None)

                def on_round(round_: int, st: ServerState) -> None:
                    nonlocal run
                    if stage_run.diverged_round is not None and run.diverged_round is None:
                        run = dataclasses.replace(run, diverged_round=stage_run.diverged_round, diverged_stage=label)
                    if round_ % config.checkpoint_every == 0 and round_ < stage.rounds:
                        checkpoint(stage_state=st.to_dict())
                    if on_round_end is not None:
                        on_round_end(round_, st)

                _run_rounds(sub, stage_run, stage.rounds, stage, on_round=on_round, trainer=trainer, bar=bar,
                            label=label)
                state = stage_run.state
                final = state.params
                if sub.algorithm.server_training.name != "none":
                    final = sub.algorithm.server_training.after_training(
                        _server_round(sub, 0, [], [], []), final, state.server_training_state)
                    if stage.evaluate and any(not torch.equal(final[k], state.params[k]) for k in final):
                        row = {**evaluation_row(sub, final, stage.rounds), "after_training": True}
                        state.history.append({**row, "stage": label} if label is not None else row)
                output = stage.finish(sub, run.outputs, final) if stage.finish is not None else {"params": final}
                personal = run.personal_final if stage_run.personal_final is None else stage_run.personal_final
                run = dataclasses.replace(run, outputs={**run.outputs, stage.name: output}, stage_state=None,
                                          history=run.history + state.history, personal_final=personal)
            run = dataclasses.replace(run, stage=index + 1)
            if index + 1 < len(plan):
                checkpoint()
    finally:
        bar.close()

    history = run.history
    final = run.outputs[plan[-1].name]
    evaluated = [h for h in history if "test_accuracy" in h]
    summary = {
        "final_accuracy": evaluated[-1]["test_accuracy"] if evaluated else None,
        "wall_time_s": time.perf_counter() - start_time,
        "rounds": config.rounds,
        "device_name": device_name(config.device),
        "precision": config.precision,
        "key": key,
        "algorithm": exp.algorithm.describe(),
        "train_class_counts": exp.class_counts.sum(0).tolist(),  # n_y over all clients (many/medium/few)
    }
    if multi:
        summary["stage_rounds"] = {s.name: s.rounds for s in plan}
    if run.diverged_round is not None:  # the first round after which the parameters were not finite
        summary["diverged_round"] = run.diverged_round
        if multi:
            summary["diverged_stage"] = run.diverged_stage
    pm = run.personal_final
    if pm is not None:
        summary.update(pm)
    extra = {k: v for k, v in final.items() if k != "params"}
    if extra:
        summary["stage_outputs"] = _jsonable(extra)
    params = {k: v.detach().cpu() for k, v in final["params"].items()}
    if store is not None:
        store.save_result(key, config, summary, history, params)
    return {"config": config.to_dict(), "summary": summary, "history": history, "params": params}


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.integer, np.floating)):
        return value.item()
    return value
