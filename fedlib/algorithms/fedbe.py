"""FedBE (Chen & Chao, ICLR 2021, "FedBE: Making Bayesian Model Ensemble Applicable to Federated Learning").

After aggregation the server fits a distribution over global models to the
sampled clients' models, samples M models from it, and distils the Bayesian
ensemble into the mean model on unlabelled server data D_ulb:

* **Gaussian** (FedBE §4, the default): mean μ = Σ_k p_k w_k (the FedAvg model,
  p_k = n_k / Σ n), diagonal covariance σ² = Σ_k p_k (w_k − μ)²; samples
  w_m = μ + σ ⊙ ε_m, ε_m ~ N(0, I);
* **Dirichlet** (FedBE §4, the alternative): w_m = Σ_k γ_{m,k} w_k with
  γ_m ~ Dir(α·1_{|S|}).

The ensemble is {μ} ∪ {w_k} ∪ {w_m} (FedBE §4, "we include the mean and the
clients' models"), its prediction the average of the members' softmax outputs
(Bayesian model averaging), and the student, starting from μ, follows it by KL
on D_ulb with the budget FedDF uses here
(:data:`~fedlib.algorithms.server_steps.DISTILL_PARAMS`).  FedBE distils with
SGD and stochastic weight averaging over many more steps; the shared Adam
budget is used instead so that FedDF and FedBE differ only in their teachers.
With GroupNorm models there are no BatchNorm statistics to re-estimate for the
sampled models (FedBE's code does this for its BatchNorm nets).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..params import Param
from .feddf import EnsembleDistillation
from .registry import register_method
from .server_steps import DISTILL_PARAMS

__all__ = ["BayesianEnsemble", "sample_models", "POSTERIORS"]

POSTERIORS = ("gaussian", "dirichlet")


def sample_models(client_params: list[dict], weights: list[float], count: int, posterior: str,
                  dirichlet_alpha: float, generator: torch.Generator) -> tuple[dict, list[dict]]:
    """(μ, [w_1 … w_M]): the weighted mean of the clients' models and ``count`` models drawn
    from the Gaussian N(μ, diag σ²) or from the Dirichlet mixture of the clients' models."""
    p = torch.as_tensor(weights, dtype=torch.float64)
    p = p / p.sum()
    keys = list(client_params[0])
    stacked = {k: torch.stack([c[k] for c in client_params]) for k in keys}

    def mix(coef):  # Σ_k coef_k w_k
        return {k: torch.tensordot(coef.to(v.dtype), v, dims=1) for k, v in stacked.items()}

    mean = mix(p)
    samples = []
    for _ in range(count):
        if posterior == "gaussian":
            sample = {}
            for k in keys:
                var = torch.tensordot(p.to(stacked[k].dtype), (stacked[k] - mean[k]) ** 2, dims=1)
                eps = torch.randn(mean[k].shape, generator=generator, dtype=mean[k].dtype)
                sample[k] = mean[k] + var.sqrt() * eps
            samples.append(sample)
        else:
            seed = int(torch.randint(0, 2**62, (), generator=generator))
            gamma = np.random.default_rng(seed).dirichlet(np.full(len(client_params), float(dirichlet_alpha)))
            samples.append(mix(torch.from_numpy(gamma)))
    return mean, samples


@dataclass(frozen=True)
class BayesianEnsemble(EnsembleDistillation):
    samples: int = 10
    posterior: str = "gaussian"
    dirichlet_alpha: float = 1.0
    name = "fedbe"

    def ensemble(self, ctx):
        mean, drawn = sample_models(ctx.client_params, ctx.client_weights, self.samples, self.posterior,
                                    self.dirichlet_alpha, ctx.generator(2))
        return [mean, *ctx.client_params, *drawn]

    def combine(self, member_logits):
        """Log of the members' averaged predictive distribution (Bayesian model averaging)."""
        probs = torch.softmax(member_logits, dim=-1).mean(0)
        return probs.clamp_min(torch.finfo(probs.dtype).tiny).log()


register_method(
    "fedbe",
    parts={"server_training": BayesianEnsemble},
    params=(Param("fedbe_samples", 10, int, "FedBE: models M sampled from the posterior each round",
                  check=lambda v: v >= 0, allowed="an integer ≥ 0", source="FedBE §5 (M = 10)", field="samples"),
            Param("fedbe_posterior", "gaussian", str, "FedBE: distribution fitted to the clients' models",
                  choices=POSTERIORS, source="FedBE §4 (Gaussian by default; Dirichlet studied)", field="posterior"),
            Param("fedbe_dirichlet_alpha", 1.0, float, "FedBE Dirichlet posterior: concentration α of Dir(α·1)",
                  check=lambda v: v > 0, allowed="> 0", source="not in FEDIC; FedBE §4", field="dirichlet_alpha"),
            *DISTILL_PARAMS),
    paper="Chen & Chao, ICLR 2021",
    doc="server training: distil a Bayesian ensemble (mean, clients, sampled models) into the FedAvg model on D_ulb")
