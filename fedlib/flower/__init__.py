"""fedlib's methods as Flower apps (the optional extra ``fedlib[flower]``).

* :func:`apps` (``**config``) → ``(ServerApp, ClientApp)`` on Flower's Message API: the
  ServerApp's strategy samples, aggregates and steps the server with fedlib's parts
  (``configure_train`` / ``aggregate_train``), the ClientApp trains with fedlib's client
  loss and correction (``@app.train()``) and evaluates personalized models
  (``@app.evaluate()``); per-client state lives in the node's ``Context.state``.
* :func:`run_simulation` (``**config``) runs those apps in Flower's own simulation engine,
  node ``partition-id`` i holding fedlib's client i, and returns a :class:`fedlib.Result`.
* :func:`write_app` writes a folder that ``flwr run`` starts as it is
  (``python -m fedlib flower-app …``).

Flower is imported only when one of these is called: ``import fedlib`` never imports it.
"""

from __future__ import annotations

import importlib.util

__all__ = ["apps", "server_app", "client_app", "run_simulation", "run_simulations", "write_app", "FlowerNotInstalled",
           "require_flower"]

INSTALL_HINT = 'pip install "fedlib[flower]"'


class FlowerNotInstalled(ImportError):
    """Flower (``flwr[simulation]``) is not installed."""


def require_flower() -> None:
    """Raise :class:`FlowerNotInstalled` (one line naming the extra) without Flower and Ray."""
    for module, what in (("flwr", "Flower (flwr)"), ("ray", "Flower's simulation engine (ray)")):
        if importlib.util.find_spec(module) is None:
            raise FlowerNotInstalled(f"fedlib.flower needs {what}, which is not installed: {INSTALL_HINT}")


def apps(**config):
    """``(ServerApp, ClientApp)`` for the method composition in ``config`` (see :mod:`fedlib.flower.components`)."""
    require_flower()
    from .components import apps as _apps

    return _apps(**config)


def run_simulation(config=None, **params):
    """Run ``config`` in Flower's simulation engine; a :class:`fedlib.Result` (see :mod:`fedlib.flower.driver`)."""
    require_flower()
    from .driver import run_simulation as _run

    return _run(config, **params)


def run_simulations(configs, **kwargs):
    """Several configurations in one Flower simulation; a list of :class:`fedlib.Result`
    (see :mod:`fedlib.flower.driver`)."""
    require_flower()
    from .driver import run_simulations as _run

    return _run(configs, **kwargs)


def server_app(*configs, **kwargs):
    """The ServerApp running each configuration in turn; with none, the run config
    (``[tool.flwr.app.config]``) is the whole configuration (see :mod:`fedlib.flower.components`)."""
    require_flower()
    from .components import server_app as _server_app

    return _server_app(*(configs or ({},)), **kwargs)


def client_app():
    """The ClientApp of every fedlib method: it trains as the server's messages configure it."""
    require_flower()
    from .components import client_app as _client_app

    return _client_app()


def write_app(out, config=None, **params):
    """Write a ``flwr run``-able app folder for the configuration into ``out`` (see :mod:`fedlib.flower.app_folder`)."""
    from .app_folder import write_app as _write

    return _write(out, config, **params)
