"""The vectorized engine: the sampled clients of a round train together.

Same mathematics as :func:`fedlib.engine.train_clients_sequential` (the
reference it is tested against in ``tests/test_vectorized.py``), from the same
definition of a client's local training (:mod:`fedlib.engine`: batches, phases,
:func:`~fedlib.engine.objective`, :func:`~fedlib.engine.local_step`,
:func:`~fedlib.engine.finish_client`), looped differently (why the two loops stay
two: :mod:`fedlib.engine`'s docstring):

* **stacked parameters.**  Every parameter gets a leading client dimension.
  A local step computes all clients' gradients with ``torch.func.vmap`` over
  ``torch.func.functional_call`` (a linear layer with per-client weights
  becomes one bmm, a conv one grouped conv) and one ordinary backward pass of
  Σ_k loss_k: loss_k depends on client k's parameters only, so
  ∂(Σ_j loss_j)/∂w_k = ∂loss_k/∂w_k exactly.  The step
  (:func:`~fedlib.engine.local_step`: the correction's ``adjust``, then
  w ← w − η(ĝ + λw)) then runs once on the stacked tensors (the anchor, i.e.
  the global model, broadcasts; SCAFFOLD's c − c_k is stacked).
* **per-client starting models.**  A client of a personalized method starts
  from the global model with its own local parameters put in; the group's
  stacked parameters are then its clients' starting models, and the
  correction's anchor is stacked too.
* **phases and momentum.**  A step updates, for each client, only the
  parameters its current phase trains (a ``torch.where`` on a per-client
  mask, in :func:`~fedlib.engine.local_step`), and keeps a stacked momentum
  buffer when μ > 0 (zeros at the start: μ·0 + d is d).
* **reference models.**  A representation loss (MOON) sees the reference
  models' parameters stacked per client, under the same ``vmap``.
* **each client its own steps.**  Client k does exactly its τ_k steps on
  exactly ``task.batches``.  Clients are sorted by τ_k (descending), so at
  step s the clients still training are a prefix of the group; only that
  prefix is computed and updated — the finished clients are frozen, as a
  ``torch.where`` on an ``active`` mask would do, without paying for them.
  A step's batches are padded to the largest one with sample weight 0; every
  loss is Σwℓ / Σw, so padding changes neither loss nor gradient.
* **passes.**  A step's forward+backward runs over the active clients in
  passes whose saved activations stay under :data:`CPU_PASS_BYTES` on a CPU:
  there, a grouped conv over many clients' large batches is slower per sample
  than separate convs (the working set leaves the cache; measured in
  ``benchmarks/README.md``), while small models and small batches gain from
  batching many clients per pass.  On a GPU a pass is the whole group.
* **bounded memory.**  Clients are trained in groups whose estimated memory
  (:func:`group_size`) fits ``memory_budget_gb``; a group has ≥ 1 client.
* **compiled** (``engine="compiled"``).  The stacked loss -- ``vmap`` over the client objective, forward
  only; autograd differentiates the compiled graph -- runs under ``torch.compile`` (one compiled function
  a model and method, with dynamic shapes for the batch width).  vmap's client count is a constant of a
  compiled graph: a pass computes its active clients rounded up to a multiple of :data:`BUCKET` (finished
  clients computed on one row of their own data and dropped, their parameters untouched), so at most
  ⌈group / 4⌉ graphs are compiled instead of one for every count of active clients.  The same mathematics: the fused kernels round differently, so it equals the vectorized
  engine to float rounding (``tests/test_vectorized.py``).  Worth it on a GPU in TF32, where a FedLC
  CIFAR-10 step measured 11.4 ms compiled against 20.0 eager (``benchmarks/results_gpu.md``).
* data stay tensors on ``x.device``; the same code runs on CPU and CUDA.  A model's
  memory format (:func:`fedlib.models.memory_format`) carries over: the stacked
  parameters keep each client's layout and the batches their images' layout.
"""

from __future__ import annotations

import weakref

import numpy as np
import torch
from torch.func import functional_call, vmap

from .engine import ClientOptimizer, ClientOutput, ClientTask, finish_client, local_step, objective, sgd_step_
from .tree import Params

__all__ = ["train_clients_vectorized", "activation_bytes_per_sample", "group_size", "vectorization_blocker",
           "CPU_PASS_BYTES"]

CPU_PASS_BYTES = 16 * 2**20  # saved activations per forward/backward pass on a CPU (cache-sized)
_ACTIVATIONS: "weakref.WeakKeyDictionary[torch.nn.Module, dict]" = weakref.WeakKeyDictionary()
_COMPILED: "weakref.WeakKeyDictionary[torch.nn.Module, tuple]" = weakref.WeakKeyDictionary()


#: compiled engine: a pass computes its clients in buckets of this many (the last bucket: the whole group),
#: so that at most ⌈group / BUCKET⌉ graphs are compiled a model
BUCKET = 4


def _bucket(n: int, cap: int) -> int:
    """The clients a compiled pass computes for ``n`` active ones: ``n`` rounded up to a multiple of
    :data:`BUCKET`, at most ``cap`` (the clients left in the group)."""
    return min(cap, -(-n // BUCKET) * BUCKET)


def _batched_loss(model, algorithm, compiled: bool):
    """Every client's objective on its own batch: ``vmap`` over :func:`~fedlib.engine.objective`; with
    ``compiled``, under ``torch.compile``, built once a model and method (a new closure each round would
    make dynamo compile again, and past its cache limit fall back to eager without a word)."""
    def client_loss(p, xb, yb, wb, nb, rb):
        return objective(model, algorithm, p, xb, yb, nb, rb, sample_weight=wb)

    if not compiled:
        return vmap(client_loss)
    # dynamo counts the graphs of one code object over every model it meets (each run builds its own): past
    # its limit it runs the function eagerly, without a word.  A process trains several runs (a lease's pack).
    torch._dynamo.config.cache_size_limit = max(torch._dynamo.config.cache_size_limit, 256)
    torch._dynamo.config.accumulated_cache_size_limit = max(torch._dynamo.config.accumulated_cache_size_limit, 1024)
    held = _COMPILED.get(model)
    if held is None or held[0] is not algorithm:  # one a model: a method whose loss changes each round recompiles
        held = _COMPILED[model] = (algorithm, torch.compile(vmap(client_loss), dynamic=True))
    return held[1]


def _saved_bytes(model: torch.nn.Module, params: Params, xb: torch.Tensor) -> int:
    """Bytes autograd saves for the backward of one forward pass on ``xb``."""
    total = 0

    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    with torch.enable_grad(), torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        functional_call(model, {k: v.detach().requires_grad_(True) for k, v in params.items()}, (xb,))
    return total


def activation_bytes_per_sample(model: torch.nn.Module, params: Params, x: torch.Tensor) -> int:
    """Saved-for-backward bytes per sample, measured once per model and input shape
    (a forward on 2 samples minus one on 1, so that saved weights cancel)."""
    cache = _ACTIVATIONS.setdefault(model, {})
    key = (tuple(x.shape[1:]), x.dtype, str(x.device))
    if key not in cache:
        xb = x[:1].repeat(2, *([1] * (x.ndim - 1)))
        cache[key] = max(0, _saved_bytes(model, params, xb) - _saved_bytes(model, params, xb[:1]))
    return cache[key]


def group_size(model, params: Params, x: torch.Tensor, batch: int, steps: int, budget_gb: float) -> tuple[int, int]:
    """(clients per group, clients per pass) for a memory budget.

    Per client in a group: 6 parameter-sized tensors (stacked parameters, grads,
    corrected grads, the step's result, a stacked control variate, slack) and its
    padded batch indices and weights (12 bytes per slot).  Per client in a pass:
    its padded input batch and 3× the activations saved for backward (the saved
    tensors, their gradients during backward, temporaries)."""
    param_bytes = sum(p.numel() * p.element_size() for p in params.values())
    act = activation_bytes_per_sample(model, params, x)
    static = 6 * param_bytes + 12 * steps * batch
    dynamic = batch * (x[:1].numel() * x.element_size() + 3 * act)
    per_pass = max(1, CPU_PASS_BYTES // max(1, batch * act)) if x.device.type == "cpu" else None
    budget = int(budget_gb * 2**30)
    size = budget // (static + dynamic)
    if per_pass is not None and size > per_pass:  # only per_pass clients hold activations at once
        size = (budget - per_pass * dynamic) // static
    size = max(1, size)
    return size, min(per_pass or size, size)


def _stack(values: list):
    """Stack equally shaped trees (dicts of tensors) along a new leading dim."""
    if isinstance(values[0], dict):
        return {k: _stack([v[k] for v in values]) for k in values[0]}
    return torch.stack(values)


def _slice(value, lo: int, hi: int | None, index: bool = False):
    """``value[lo:hi]`` of every tensor in a nested dict (``value[lo]`` with ``index``)."""
    if isinstance(value, dict):
        return {k: _slice(v, lo, hi, index) for k, v in value.items()}
    return value[lo] if index else value[lo:hi]


def _padded_batches(tasks: list[ClientTask], device) -> tuple[torch.Tensor, torch.Tensor]:
    """rows[k, s, :] = client k's batch s, padded with row 0; weight 1 for real rows, 0 for padding.
    Built with numpy on the host (one copy each way) and moved to ``device``."""
    lengths = np.array([len(b) for t in tasks for b in t.batches])
    steps, width = max(len(t.batches) for t in tasks), int(lengths.max())
    slots = np.array([k * steps + s for k, t in enumerate(tasks) for s in range(len(t.batches))])
    position = np.repeat(slots * width - (np.cumsum(lengths) - lengths), lengths) + np.arange(lengths.sum())
    rows = np.zeros(len(tasks) * steps * width, dtype=np.int64)
    weight = np.zeros(rows.shape, dtype=np.float32)
    rows[position] = torch.cat([b for t in tasks for b in t.batches]).cpu().numpy()
    weight[position] = 1
    shape = (len(tasks), steps, width)
    return torch.from_numpy(rows).view(shape).to(device), torch.from_numpy(weight).view(shape).to(device)


def _trainable_masks(tasks: list[ClientTask], step: int, active: int, keys, device) -> dict | None:
    """Per parameter, a bool [active] mask of the clients whose phase at ``step`` trains it
    (None when every active client trains every parameter)."""
    phases = [t.trainable_at(step) for t in tasks[:active]]
    if all(p is None for p in phases):
        return None
    return {k: torch.tensor([p is None or k in p for p in phases], device=device) for k in keys}


def _train_group(model, algorithm, start: Params, anchor: Params, tasks: list[ClientTask], context: dict,
                 refs: dict, x: torch.Tensor, y: torch.Tensor, opt: ClientOptimizer, per_pass: int,
                 compiled: bool = False):
    """Local SGD of clients sorted by τ_k (descending, all τ_k ≥ 1) from the stacked
    starting models ``start``.  Returns the stacked final parameters and each
    client's Σ batch-mean loss × batch size."""
    rows, weight = _padded_batches(tasks, x.device)
    lengths = np.zeros((len(tasks), rows.shape[1]), dtype=np.int64)  # real batch sizes, 0 after τ_k
    for k, t in enumerate(tasks):
        lengths[k, :len(t.batches)] = [len(b) for b in t.batches]
    actives = (lengths > 0).sum(0).tolist()  # per step, a prefix: the clients with τ_k > s
    phased = any(t.phases is not None for t in tasks)
    sizes = weight.sum(2).double()  # real batch sizes [clients, steps]
    counts = torch.stack([t.class_counts for t in tasks]).to(x.device)
    params = {k: v.detach().clone() for k, v in start.items()}
    buffers = {k: torch.zeros_like(v) for k, v in params.items()} if opt.momentum else None
    buffer = {k: torch.empty_like(v) for k, v in params.items()} if per_pass < len(tasks) else None
    loss_sum = torch.zeros(len(tasks), dtype=torch.float64, device=x.device)
    stacked_anchor = next(iter(anchor.values())).ndim == next(iter(params.values())).ndim

    def client_loss(p, xb, yb, wb, nb, rb):
        return objective(model, algorithm, p, xb, yb, nb, rb, sample_weight=wb)

    batched_loss = _batched_loss(model, algorithm, compiled)
    for s in range(rows.shape[1]):
        active = actives[s]
        for lo in range(0, active, per_pass):
            hi = min(active, lo + per_pass)
            # compiled: vmap's client count is a constant of the compiled graph, so the pass computes a
            # bucket of clients (module docstring); those past ``hi`` are finished, computed and dropped
            top = lo + _bucket(hi - lo, len(tasks) - lo) if compiled and hi - lo > 1 else hi
            width = int(lengths[lo:hi, s].max())
            r = rows[lo:top, s, :width]
            wb = weight[lo:top, s, :width]
            if compiled:  # one stride whatever the width: no recompile on it
                wb = wb.contiguous()
            if top > hi:  # a finished client's step: one real row (row 0 of its padding), so no 0/0 in its loss
                wb = wb.clone()  # (a contiguous slice is a view of ``weight``)
                wb[hi - lo:, 0] = 1
            xb = _rows(x, r.reshape(-1)).view(*r.shape, *x.shape[1:])
            current = {k: v[lo:top].detach().requires_grad_(True) for k, v in params.items()}
            pass_refs = _slice(refs, lo, top)
            with torch.enable_grad():
                if hi - lo == 1:  # a single client needs no vmap: the same computation, less overhead
                    one = {k: v[0] for k, v in current.items()}
                    losses = client_loss(one, xb[0], y[r[0]], wb[0], counts[lo],
                                         _slice(pass_refs, 0, None, index=True)).unsqueeze(0)
                else:
                    losses = batched_loss(current, xb, y[r], wb, counts[lo:top], pass_refs)[:hi - lo]
                got = torch.autograd.grad(losses.sum(), list(current.values()), allow_unused=True)
                pass_grads = {k: torch.zeros_like(v[:hi - lo]) if g is None else g[:hi - lo]
                              for (k, v), g in zip(current.items(), got)}
            if buffer is None:  # one pass holds every active client
                grads = pass_grads
            else:
                for k, g in pass_grads.items():
                    buffer[k][lo:hi] = g
                grads = {k: b[:active] for k, b in buffer.items()}
            loss_sum[lo:hi] += losses.detach().double() * sizes[lo:hi, s]
        with torch.no_grad():
            current = {k: v[:active] for k, v in params.items()}  # views: written in place below
            step_anchor = _slice(anchor, 0, active) if stacked_anchor else anchor
            masks = _trainable_masks(tasks, s, active, current, x.device) if phased else None
            step_buffers = ({k: b[:active] for k, b in buffers.items()} if buffers is not None
                            else dict.fromkeys(current))
            if masks is None:  # every client trains every parameter: local_step's arithmetic, in place
                adjusted = algorithm.correction.adjust(grads, current, step_anchor, _slice(context, 0, active))
                for k, w in current.items():
                    sgd_step_(w, adjusted[k], step_buffers[k], opt)
                continue
            new, new_buffers = local_step(algorithm.correction, opt, current, grads, step_anchor,
                                          _slice(context, 0, active), step_buffers, masks.__getitem__)
            for k, w in current.items():
                w.copy_(new[k])
                if buffers is not None:
                    step_buffers[k].copy_(new_buffers[k])
    return params, loss_sum, sizes.sum(1)


def _rows(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """``x[rows]``, in ``x``'s memory format (``index_select`` returns NCHW even from NHWC)."""
    if x.ndim == 4 and not x.is_contiguous() and x.is_contiguous(memory_format=torch.channels_last):
        return x[rows]
    return x.index_select(0, rows)


def vectorization_blocker(algorithm) -> str | None:
    """Why this algorithm cannot run on the vectorized engine (None: it can).  A part
    that cannot be batched says so in its ``sequential_only`` (the reason, :class:`fedlib.algorithms.kinds.Part`)."""
    for part in (algorithm.loss, algorithm.representation, algorithm.correction, algorithm.personalization):
        reason = part.sequential_only
        if reason:
            return f"{part.name}: {reason}"
    return None


@torch.no_grad()
def train_clients_vectorized(model, algorithm, global_params: Params, tasks: list[ClientTask],
                             server_correction_state: dict, x: torch.Tensor, y: torch.Tensor,
                             opt: ClientOptimizer, *, memory_budget_gb: float = 4.0,
                             compiled: bool = False) -> list[ClientOutput]:
    """Train the sampled clients together; returns exactly what
    :func:`~fedlib.engine.train_clients_sequential` returns, in the same order (``compiled``: the stacked
    loss under ``torch.compile``, module docstring)."""
    correction, rep = algorithm.correction, algorithm.representation
    received = {k: v.detach() for k, v in global_params.items()}
    outputs: dict[int, ClientOutput] = {}
    corr_states = [t.client_state.get("correction") or correction.init_client_state(received) for t in tasks]
    starts = [received if t.start is None else t.start for t in tasks]

    def finish(i: int, local: Params, loss_sum: float, count: int) -> None:
        outputs[i] = finish_client(algorithm, tasks[i], received, starts[i], local, corr_states[i],
                                   server_correction_state, opt, loss_sum, count)

    order = sorted(range(len(tasks)), key=lambda i: -len(tasks[i].batches))  # τ_k descending
    training = [i for i in order if tasks[i].batches]
    for i in order[len(training):]:  # τ_k = 0: the client keeps its starting model
        finish(i, starts[i], 0.0, 0)
    if training:
        width = max(len(b) for i in training for b in tasks[i].batches)
        size, per_pass = group_size(model, received, x, width, len(tasks[training[0]].batches), memory_budget_gb)
        personal = any(tasks[i].start is not None for i in training)
        for lo in range(0, len(training), size):
            members = training[lo:lo + size]
            chunk = [tasks[i] for i in members]
            contexts = [correction.client_context(server_correction_state, corr_states[i]) for i in members]
            context = _stack(contexts) if contexts[0] else {}
            refs = _stack([rep.references(starts[i], tasks[i].client_state.get("representation", {}))
                           for i in members]) if rep.active else {}
            if personal:
                start = _stack([starts[i] for i in members])
                anchor = start
            else:  # every client starts from the global model: the anchor broadcasts
                start = {k: torch.stack([v] * len(chunk)) for k, v in received.items()}  # keeps v's layout
                anchor = received
            params, loss_sum, count = _train_group(model, algorithm, start, anchor, chunk, context, refs, x, y, opt,
                                                   per_pass, compiled)
            for j, (i, loss, n) in enumerate(zip(members, loss_sum.tolist(), count.tolist())):
                finish(i, {k: v[j] for k, v in params.items()}, loss, int(n))
    return [outputs[i] for i in range(len(tasks))]
