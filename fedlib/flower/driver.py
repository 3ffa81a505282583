"""``fedlib.flower.run_simulation``: a fedlib configuration run in Flower's simulation engine.

It drives :func:`flwr.simulation.run_simulation`, Flower's in-process entry point (Flower 1.4x
marks it deprecated in favour of ``flwr run``, which :func:`fedlib.flower.write_app`'s folder uses).

One Flower node per fedlib client, node ``partition-id`` i holding client i's samples;
the ServerApp runs in this process, the ClientApps in Ray actors.  Returns a
:class:`fedlib.Result` built from what the ServerApp saw: its per-round history, its
final parameters.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings

import fedlib.flower.bridge as bridge
from .components import client_app, server_app

__all__ = ["run_simulation", "run_simulations", "DEFAULT_BACKEND"]

# One CPU per ClientApp, at most two in all: a local Ray instance that leaves the machine usable.
DEFAULT_BACKEND = {"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                   # address "local": a Ray instance of its own, never a cluster `ray start` left running
                   "init_args": {"address": "local", "num_cpus": 2, "num_gpus": 0, "include_dashboard": False,
                                 "logging_level": logging.ERROR, "log_to_driver": False}}


def run_simulation(config: dict | None = None, *, backend_config: dict | None = None, verbose: bool = False,
                   **params):
    """Run the fedlib configuration (``config`` dict and/or keywords, as :func:`fedlib.run`) with
    :func:`flwr.simulation.run_simulation`; returns a :class:`fedlib.Result` (``summary["engine"]``
    is ``"flower"``; nothing goes to the results store).  ``backend_config``: Flower's backend
    configuration (default :data:`DEFAULT_BACKEND`: 1 CPU per ClientApp, a Ray instance of 2 CPUs)."""
    return run_simulations([{**(config or {}), **params}], backend_config=backend_config, verbose=verbose)[0]


def run_simulations(configs: list[dict], *, backend_config: dict | None = None, verbose: bool = False,
                    retries: int = 1) -> list:
    """Several fedlib configurations, one after another, in ONE Flower simulation (the same nodes,
    the Ray instance and its actors started once); one :class:`fedlib.Result` each.  They must
    agree on ``num_clients`` (one node per client).  A runtime that fails (Ray's raylet can die
    while starting on an overloaded machine) is started again, ``retries`` times at most, for the
    runs not yet done; a run's numbers do not depend on the attempt."""
    from flwr.simulation import run_simulation as flwr_run_simulation

    resolved = [bridge.resolve_config(c) for c in configs]  # every value validated before Ray starts
    sizes = {c.num_clients for c in resolved}
    if len(sizes) != 1:
        raise ValueError(f"num_clients must be the same in every configuration of one simulation, got {sorted(sizes)}")
    backend = backend_config if backend_config is not None else DEFAULT_BACKEND
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    sink: list = []
    for attempt in range(1 + retries):
        remaining = configs[len(sink):]
        stop = threading.Event()
        try:
            flwr_run_simulation(server_app=server_app(*remaining, sink=sink, stop=stop), client_app=client_app(),
                                num_supernodes=resolved[0].num_clients,
                                backend_config={k: dict(v) for k, v in backend.items()}, verbose_logging=verbose)
        except RuntimeError as err:  # the runtime itself failed (e.g. Ray's raylet on an overloaded machine)
            if attempt == retries:
                raise
            warnings.warn(f"Flower's simulation runtime failed ({err}); starting it again for the "
                          f"{len(configs) - len(sink)} runs left", RuntimeWarning, stacklevel=2)
        finally:
            stop.set()
        if len(sink) == len(configs):
            break
    if len(sink) != len(configs):
        raise RuntimeError(f"the Flower simulation ended after {len(sink)} of {len(configs)} runs "
                           "(see Flower's log above)")
    return [bridge.result(o["config"], o["history"], o["summary"], o["params"]) for o in sink]
