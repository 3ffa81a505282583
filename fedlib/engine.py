"""The sequential reference engine: sampled clients train one after another.

This is the plain loop every faster engine is tested against, so it is kept
obviously right: for each client, copy the model it starts from, run its local
SGD steps (FedLC Algorithm 1, with momentum and weight decay as
``torch.optim.SGD`` does them) on its own mini-batches with ordinary autograd,
and report Δ_k = w_k − w together with what the aggregator, the correction and
the personalization need.

Which mini-batches a client sees is fixed by :func:`client_batches` from
(seed, round, client) alone, so any engine, and a run resumed from a
checkpoint, replays exactly the same batches.

A client's local training is defined once, here, and both engines use it:
the mini-batches (:func:`client_batches`), the phase a step belongs to
(:meth:`ClientTask.trainable_at`), the loss (:func:`objective`), the step
(:func:`local_step`: the correction's gradient, then :func:`sgd_step` on the
parameters the phase trains) and what is reported at the end
(:func:`finish_client`).  What remains per engine is the loop: here one client
after another with ordinary autograd; in :mod:`fedlib.vectorized` all clients
of a group in lockstep, their parameters stacked and their gradients taken
under ``vmap``.  The two loops are not merged into one because they cannot
compute the same floats: the stacked loop pads batches and takes the loss as a
sample-weighted mean (Σ wℓ / Σ w), the plain loop the plain mean; a shared loop
would change one engine's numbers, and the sequential engine would no longer be
an independent reference for the vectorized one (``tests/test_vectorized.py``).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.func import functional_call

from . import tree
from .threads import own_copy, thread_map
from .tree import Params

__all__ = ["ClientOptimizer", "ClientTask", "ClientOutput", "client_batches", "sample_clients", "local_update",
           "train_clients_sequential", "objective", "features_and_output", "sgd_step", "sgd_step_",
           "local_step", "finish_client"]


@dataclass(frozen=True)
class ClientOptimizer:
    """The client's SGD: η, momentum μ (buffer zero at the start of every local update,
    as a fresh ``torch.optim.SGD`` per round) and weight decay λ on every parameter."""

    lr: float
    momentum: float = 0.0
    weight_decay: float = 0.0


@dataclass
class ClientTask:
    """One client's work in a round.

    ``client_state`` is the client's per-client state, one entry per part that
    keeps any (``"correction"``: SCAFFOLD's c_k; ``"local"``: its personal
    parameters; ``"representation"``: MOON's previous model).  ``start`` is the
    model it starts from (None: the global model).  ``phases`` lists
    (number of steps, trainable parameter names or None) and covers every batch
    (None: one phase training everything)."""

    client: int
    indices: torch.Tensor  # its training samples (rows of the data tensors)
    class_counts: torch.Tensor  # n_y, float32 [K], over its whole local set
    batches: list[torch.Tensor]  # rows of the data tensors, one tensor per local step
    client_state: dict = field(default_factory=dict)
    start: Params | None = None
    phases: list[tuple[int, tuple | None]] | None = None

    def phase_list(self) -> list[tuple[int, tuple | None]]:
        return self.phases if self.phases is not None else [(len(self.batches), None)]

    def trainable_at(self, step: int) -> tuple | None:
        """The parameter names local step ``step`` (0-based) trains (None: all)."""
        done = 0
        for n, trainable in self.phase_list():
            if step < done + n:
                return trainable
            done += n
        return None


@dataclass
class ClientOutput:
    client: int
    delta: Params  # Δ_k = w_k − (the model it started from)
    num_samples: int  # n_k
    num_steps: int  # τ_k
    loss_sum: float  # Σ over local steps of (batch mean loss · batch size)
    loss_count: int  # Σ batch sizes
    client_state: dict  # the new per-client state (same layout as ClientTask.client_state)
    message: dict  # what the correction sends the server
    local: Params | None = None  # w_k, the client's model after its local update


def sample_clients(num_clients: int, participation: float, seed: int, round_: int) -> list[int]:
    """The clients sampled in round ``round_``: ⌈participation · m⌉ without replacement
    (at least one), drawn from a stream that depends on (seed, round) only."""
    if participation >= 1.0:
        return list(range(num_clients))
    count = max(1, int(round(participation * num_clients)))
    rng = np.random.default_rng([seed, 0, round_])
    return sorted(rng.choice(num_clients, size=count, replace=False).tolist())


def client_batches(indices: np.ndarray, epochs: int, batch_size: int, seed: int, round_: int,
                   client: int, stream: int = 1) -> list[np.ndarray]:
    """A client's local mini-batches for one round: E epochs, each a fresh random
    permutation of its samples cut into batches of ``batch_size`` (the last one
    smaller).  τ_k = E · ⌈n_k / B⌉ local steps.  ``stream`` separates uses of the
    same (round, client), e.g. training (1) and personalized evaluation (3)."""
    rng = np.random.default_rng([seed, stream, round_, client])
    indices = np.asarray(indices)
    out = []
    for _ in range(epochs):
        perm = indices[rng.permutation(len(indices))]
        out.extend(perm[i:i + batch_size] for i in range(0, len(perm), batch_size))
    return out


# ------------------------------------------------------------------------------ the client objective
class _FeaturesAndOutput(nn.Module):
    """``x -> (h, output)`` of a fedlib model: ``h = features(x)``, ``output = output(h)``
    (a model's own ``output`` method if it has one, else ``classifier(h)``)."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, x):
        h = self.net.features(x)
        out = self.net.output(h) if hasattr(self.net, "output") else self.net.classifier(h)
        return h, out


class _Features(_FeaturesAndOutput):
    def forward(self, x):
        return self.net.features(x)


_WRAPPERS: "weakref.WeakKeyDictionary[nn.Module, tuple]" = weakref.WeakKeyDictionary()


def _wrappers(model: nn.Module):
    if model not in _WRAPPERS:
        _WRAPPERS[model] = (_FeaturesAndOutput(model), _Features(model))
    return _WRAPPERS[model]


def _prefixed(params: Params) -> Params:
    return {f"net.{k}": v for k, v in params.items()}


def features_and_output(model: nn.Module, params: Params, x: torch.Tensor):
    """``(h, output)`` of ``model`` with ``params`` on ``x`` (functional, vmap-safe)."""
    return functional_call(_wrappers(model)[0], _prefixed(params), (x,))


def features(model: nn.Module, params: Params, x: torch.Tensor) -> torch.Tensor:
    return functional_call(_wrappers(model)[1], _prefixed(params), (x,))


def objective(model: nn.Module, algorithm, params: Params, xb, yb, counts, refs: dict, sample_weight=None):
    """The client's loss on one batch: the client loss on the model's output, plus the
    representation loss on its features when the method has one (with the
    reference models' features on the same batch, without gradient)."""
    rep = algorithm.representation
    if not rep.active:
        return algorithm.loss(functional_call(model, params, (xb,)), yb, counts, sample_weight)
    h, out = features_and_output(model, params, xb)
    ref_h = {name: features(model, p, xb).detach() for name, p in refs.items()}
    return algorithm.loss(out, yb, counts, sample_weight) + rep(h, ref_h, yb, sample_weight)


def sgd_step(w: torch.Tensor, g: torch.Tensor, buf: torch.Tensor | None, opt: ClientOptimizer):
    """One SGD step as ``torch.optim.SGD`` (dampening 0, no Nesterov):
    d = g + λw;  buf ← μ·buf + d (buf = d at the first step);  w ← w − η·buf.
    Returns (new w, new buf); with μ = 0 no buffer is kept."""
    d = g + opt.weight_decay * w if opt.weight_decay else g
    if opt.momentum:
        d = d if buf is None else opt.momentum * buf + d
        buf = d
    return w - opt.lr * d, buf


def sgd_step_(w: torch.Tensor, g: torch.Tensor, buf: torch.Tensor | None,
              opt: ClientOptimizer) -> torch.Tensor | None:
    """:func:`sgd_step` in place, the step of both engines where every parameter trains: ``w`` updated,
    ``g`` (the corrected gradient, which the caller owns) overwritten, and the momentum buffer updated in place
    and returned (``buf`` None at a client's first step: buf = d, as :func:`sgd_step` takes it; the vectorized
    engine's stacked buffers start at zeros, where μ·0 + d = d).  The same operations on the same operands in
    the same order, each rounded once, so the same floats as :func:`sgd_step`
    (``tests/test_client_optimizer.py``), without the fresh tensors and the copy back."""
    d = g.add_(w * opt.weight_decay) if opt.weight_decay else g
    if opt.momentum:
        buf = d if buf is None else buf.mul_(opt.momentum).add_(d)
        w.sub_(buf * opt.lr)
        return buf
    w.sub_(d.mul_(opt.lr))
    return None


def local_step(correction, opt: ClientOptimizer, params: Params, grads: Params, anchor: Params, context: dict,
               buffers: dict, trains) -> tuple[Params, dict]:
    """One local step of a client's training, the one definition both engines use: the
    correction's gradient ĝ = ``correction.adjust(g, w, anchor, context)`` (FedProx's
    μ(w − w^t), SCAFFOLD's c − c_k), then :func:`sgd_step` on every parameter the
    client's current phase trains.  ``trains(name)`` says which: True (train), False
    (keep, buffer untouched) or, for stacked clients, a bool tensor [clients] (a
    ``torch.where`` keeps the others' parameters and buffers).  ``buffers[name]`` is the
    momentum buffer (None: none yet).  Works on one client's tensors and on tensors
    with a leading client dimension alike.  Returns (new parameters, new buffers)."""
    adjusted = correction.adjust(grads, params, anchor, context)
    new, new_buffers = {}, {}
    for k, w in params.items():
        train = trains(k)
        if train is False:
            new[k], new_buffers[k] = w, buffers[k]
            continue
        w_new, b_new = sgd_step(w, adjusted[k], buffers[k], opt)
        if train is not True:
            mask = train.view(-1, *([1] * (w.ndim - 1)))
            w_new = torch.where(mask, w_new, w)
            if b_new is not None:
                b_new = torch.where(mask, b_new, buffers[k])
        new[k], new_buffers[k] = w_new, b_new
    return new, new_buffers


# ------------------------------------------------------------------------------ one client
def local_update(model, algorithm, received: Params, task: ClientTask, server_correction_state: dict,
                 x: torch.Tensor, y: torch.Tensor, opt: ClientOptimizer) -> ClientOutput:
    """One client's local update from ``task.start`` (else the received global model)."""
    correction, rep = algorithm.correction, algorithm.representation
    state = task.client_state
    start = task.start if task.start is not None else received
    correction_state = state.get("correction") or correction.init_client_state(received)
    context = correction.client_context(server_correction_state, correction_state)
    refs = rep.references(start, state.get("representation", {})) if rep.active else {}
    params = {k: v.detach().clone().requires_grad_(True) for k, v in start.items()}
    buffers: dict[str, torch.Tensor | None] = {k: None for k in params}
    loss_sum, count = 0.0, 0
    for step, rows in enumerate(task.batches):
        loss = objective(model, algorithm, params, x[rows], y[rows], task.class_counts, refs)
        grads = dict(zip(params, torch.autograd.grad(loss, list(params.values()), allow_unused=True)))
        grads = {k: torch.zeros_like(params[k]) if g is None else g for k, g in grads.items()}
        trainable = task.trainable_at(step)
        with torch.no_grad():
            current = {k: v.detach() for k, v in params.items()}  # views of the client's own parameters
            if trainable is None:  # every parameter trains: local_step's arithmetic, in place
                adjusted = correction.adjust(grads, current, start, context)
                buffers = {k: sgd_step_(w, adjusted[k], buffers[k], opt) for k, w in current.items()}
            else:
                new, buffers = local_step(correction, opt, current, grads, start, context, buffers,
                                          lambda k: k in trainable)
                params = {k: w.requires_grad_(True) for k, w in new.items()}
        loss_sum += float(loss.detach()) * len(rows)
        count += len(rows)
    local = {k: v.detach() for k, v in params.items()}
    return finish_client(algorithm, task, received, start, local, correction_state, server_correction_state, opt,
                         loss_sum, count)


def finish_client(algorithm, task: ClientTask, received: Params, start: Params, local: Params,
                  correction_state: dict, server_correction_state: dict, opt: ClientOptimizer, loss_sum: float,
                  count: int) -> ClientOutput:
    """What every engine reports for a client once its local parameters are known."""
    steps = len(task.batches)
    new_correction, message = algorithm.correction.client_final(start, local, steps, opt.lr, server_correction_state,
                                                                 correction_state)
    state = dict(task.client_state)
    if new_correction:
        state["correction"] = new_correction
    if algorithm.representation.active:
        state["representation"] = algorithm.representation.state_after(local, task.client_state.get(
            "representation", {}))
    return ClientOutput(task.client, tree.sub(local, start), len(task.indices), steps, loss_sum, count, state,
                        message, local)


def train_clients_sequential(model, algorithm, global_params: Params, tasks: list[ClientTask],
                             server_correction_state: dict, x: torch.Tensor, y: torch.Tensor,
                             opt: ClientOptimizer, *, client_threads: int = 1) -> list[ClientOutput]:
    """Train each sampled client in turn; ``client_threads`` > 1: that many at once, each on a thread of its
    own with one intra-op thread, the outputs in the clients' order (the same floats: :mod:`fedlib.threads`)."""
    def train(task: ClientTask) -> ClientOutput:
        return local_update(own_copy(model), algorithm, global_params, task, server_correction_state, x, y, opt)

    return thread_map(train, tasks, client_threads)
