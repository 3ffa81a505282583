"""FedPer (Arivazhagan et al. 2019, "Federated Learning with Personalization Layers").

The body is shared and averaged; the head (the final ``classifier``) stays on the
client and is trained jointly with the body in every local epoch.  The
personalized model is the global body with the client's own head (notes §3:
FedRep's ``main_fedrep.py --alg fedper``, PFLlib ``clientper.py``, FL-bench
``fedper.py``).
"""

from __future__ import annotations

from ..models import head_keys
from .personalization import KeepLocal
from .registry import register_method

register_method("fedper", parts={"personalization": lambda c: KeepLocal(select=head_keys, label="fedper")},
                paper="Arivazhagan et al. 2019",
                doc="personalization: the head stays on the client, trained jointly with the shared body")
