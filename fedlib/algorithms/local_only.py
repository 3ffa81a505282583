"""Local-only training: every client trains its own model on its own data and nothing is
communicated (the "Local only" column of FedABC Tables 1–2).

Every parameter stays on the client (:class:`~fedlib.algorithms.personalization.KeepLocal`
selecting them all): a client starts from the common initial model, trains E local
epochs whenever it is sampled, and keeps its model in its per-client state (in the
results store).  The server's model never changes, so ``final_accuracy`` is that of
the untrained initial model; the method's results are its personalized metrics.

Training budget: a client trains about ``participation · rounds · E`` epochs, plus E
for its personalized model under ``personalized_model="local_update"``.  FedRep's
``main_local.py`` (the code base FedABC's ConvNet comes from; notes §3) trains every
client for ``rounds`` epochs instead; ``participation=1`` trains every client in every
round.
"""

from __future__ import annotations

from .personalization import KeepLocal
from .registry import register_method


def _every_parameter(model) -> tuple[str, ...]:
    return tuple(k for k, _ in model.named_parameters())


register_method("local", parts={"personalization": lambda c: KeepLocal(select=_every_parameter, label="local")},
                paper="Local-only baseline (FedABC Tables 1–2)",
                doc="personalization: every parameter stays on the client, nothing is communicated")
