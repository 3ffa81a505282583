"""FEDIC (Shang et al., ICME 2022, "FEDIC: Federated Learning on Non-IID and Long-Tailed Data
via Calibrated Distillation"): FedAvg on the clients, calibrated ensemble distillation on the server.

Every round, after FedAvg's aggregation w = Σ_k |D^k|/|D| w_k (Eq. 2), the server

1. **FT**: fine-tunes a copy ŵ of w with CE on the balanced labelled set D_aux
   (``fedic_finetune_steps`` Adam steps); z_ft = φ_ŵ(x);
2. **LA** (ensemble calibration) from the sampled clients' models w_k:
   client-wise weights e_k = sigmoid(a_eᵀ φ_{w_k}(x) + b_e), normalised to sum 1
   over the clients (Eq. 4), the weighted ensemble φ^t(x) = Σ_k e_k φ_{w_k}(x)
   (Eq. 1), class-wise adjustment z_cl = a_z ⊙ φ^t(x) + b_z (Eq. 5);
3. with FT and LA, the **calibration gating network**: σ = sigmoid(uᵀv) on the
   feature ensemble v = (1/|S|) Σ_{k∈S} f_{w_k}(x) (Eq. 6) and z′ = σ z_cl + (1 − σ) z_ft
   (Eq. 7);
4. trains the calibration parameters (a_e, b_e, a_z, b_z, u) with CE of the
   teacher's logits on D_aux (Eq. 8; I = ``fedic_calibration_steps`` Adam steps);
5. **KD**: distils the calibrated teacher into the student, which starts from w:
   L = (1 − λ)·CE(student(x_aux), y) + λ·KL(teacher(x_ulb) ‖ student(x_ulb)) (Eq. 9;
   J = ``fedic_distill_steps`` Adam steps, D_aux and D_ulb batches drawn at every step);
   the student is the new global model.

The teacher, by switches (Table 3): FT and LA → z′ (Eq. 7); FT only → z_ft;
LA only → z_cl (Eqs. 4-5, trained by Eq. 8 without a gate); neither → the
plain average of the clients' logits.  Without KD the new global model is ŵ
(FT on) or w, and the teacher is only evaluated.  Rows (a)-(d) of Table 3
(teachers) are the ``teacher_accuracy`` this part reports for runs (e)-(h)
(students); ``fedic_teacher_eval`` says when.

Server state across rounds (resumed exactly): the calibration parameters and
the three Adam optimizers' moments (FEDIC's code creates them once,
``main.py:95,104-106``).  Server randomness (which D_aux / D_ulb rows form each
batch) comes from the run's seeded server generator.

Where the released code and the paper differ (notes §4, §7.1), the paper is
followed and the code's choice is a parameter: the gate has no bias (Eq. 6;
``fedic_gate_bias``), v averages over the |S| sampled clients (the code divides
by a hard-coded 8).  Hidden settings of the code are parameters with their
source (see :data:`FEDIC_PARAMS`).  Deviations list:
:data:`fedlib.papers.fedic.deviations.DEVIATIONS`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ..losses import calibrated_distillation_loss, cross_entropy
from ..params import Param
from .kinds import ServerTraining
from .registry import register_method
from .server_steps import adam_init, adam_train, client_outputs, logits_of, sample_rows

__all__ = ["FedicServer", "FEDIC_PARAMS", "TEACHER_EVAL", "client_weights", "weighted_ensemble",
           "class_adjust", "gate", "gated_logits", "teacher_logits", "init_calibration"]

TEACHER_EVAL = ("final", "evaluated", "never")


# ------------------------------------------------------------------------------ ensemble calibration (Eqs. 1, 4-7)
def client_weights(a_e: torch.Tensor, b_e: torch.Tensor, client_logits: torch.Tensor) -> torch.Tensor:
    """Eq. 4: e_k = sigmoid(a_eᵀ φ_{w_k}(x) + b_e), then divided by Σ_k e_k.  [S, B, K] → [S, B]."""
    e = torch.sigmoid(client_logits @ a_e + b_e)
    return e / e.sum(0, keepdim=True)


def weighted_ensemble(e: torch.Tensor, client_logits: torch.Tensor) -> torch.Tensor:
    """Eq. 1: φ^t(x) = Σ_k e_k φ_{w_k}(x).  [S, B], [S, B, K] → [B, K]."""
    return (e.unsqueeze(-1) * client_logits).sum(0)


def class_adjust(a_z: torch.Tensor, b_z: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Eq. 5: z_cl = a_z ⊙ φ^t(x) + b_z."""
    return a_z * z + b_z


def gate(u: torch.Tensor, u_bias: torch.Tensor | None, client_features: torch.Tensor) -> torch.Tensor:
    """Eq. 6: σ = sigmoid(uᵀv), v = (1/|S|) Σ_k f_{w_k}(x) (plus a bias when given).  [S, B, d] → [B]."""
    s = client_features.mean(0) @ u
    return torch.sigmoid(s if u_bias is None else s + u_bias)


def gated_logits(sigma: torch.Tensor, z_cl: torch.Tensor, z_ft: torch.Tensor) -> torch.Tensor:
    """Eq. 7: z′ = σ z_cl + (1 − σ) z_ft."""
    s = sigma.unsqueeze(-1)
    return s * z_cl + (1 - s) * z_ft


def teacher_logits(cal: dict, client_features: torch.Tensor, client_logits: torch.Tensor,
                   z_ft: torch.Tensor | None, ft: bool, la: bool) -> torch.Tensor:
    """The teacher of FEDIC's switches (module doc); ``cal`` holds a_e, b_e, a_z, b_z, u (, u_bias)."""
    if not la:
        return z_ft if ft else client_logits.mean(0)
    z_cl = class_adjust(cal["a_z"], cal["b_z"],
                        weighted_ensemble(client_weights(cal["a_e"], cal["b_e"], client_logits), client_logits))
    if not ft:
        return z_cl
    return gated_logits(gate(cal["u"], cal.get("u_bias"), client_features), z_cl, z_ft)


def init_calibration(num_classes: int, dim: int, a_e_init: float, gate_bias: bool, seed: int) -> dict:
    """a_e = a_e_init·1, b_e = 0, a_z = 1, b_z = 0 (code main.py:27-31); u (and its bias) as PyTorch's
    default Linear(d, 1) initialisation, U(−1/√d, 1/√d), from a generator seeded by the run's seed."""
    g = torch.Generator().manual_seed(int(seed) * 7919 + 17)
    bound = 1.0 / math.sqrt(dim)
    cal = {"a_e": torch.full((num_classes,), float(a_e_init)), "b_e": torch.zeros(()),
           "a_z": torch.ones(num_classes), "b_z": torch.zeros(num_classes),
           "u": torch.rand(dim, generator=g) * 2 * bound - bound}
    if gate_bias:
        cal["u_bias"] = torch.rand((), generator=g) * 2 * bound - bound
    return cal


# ------------------------------------------------------------------------------ the server step
@dataclass(frozen=True)
class FedicServer(ServerTraining):
    """FEDIC's server step (module doc).  Its fields are filled by name from
    :data:`FEDIC_PARAMS` (``fedic_<field>``; λ is ``lam``) and the run's ``seed``."""

    ft: bool = True
    la: bool = True
    kd: bool = True
    lam: float = 0.5
    temperature: float = 2.0
    t_squared: bool = False
    finetune_steps: int = 100
    calibration_steps: int = 100
    distill_steps: int = 100
    aux_batch_size: int = 20
    ulb_batch_size: int = 128
    finetune_lr: float = 1e-3
    finetune_weight_decay: float = 2e-4
    calibration_lr: float = 1e-3
    calibration_weight_decay: float = 0.0
    distill_lr: float = 1e-3
    distill_weight_decay: float = 2e-4
    persist_optimizers: bool = True
    gate_bias: bool = False
    client_weight_init: float = 1.0
    teacher_eval: str = "final"
    seed: int = 0
    name = "fedic"
    from_core = {"seed": "seed"}

    @property
    def needs(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("aux", "unlabeled") if self.kd and self.lam > 0 else ("aux",)

    def init_state(self, params):
        num_classes, dim = params["classifier.weight"].shape
        device = params["classifier.weight"].device  # drawn on the CPU (the same numbers on every device), then moved
        cal = {k: v.to(device) for k, v in
               init_calibration(num_classes, dim, self.client_weight_init, self.gate_bias, self.seed).items()}
        return {"calibration": cal, "calibration_adam": adam_init(cal),
                "finetune_adam": adam_init(params), "distill_adam": adam_init(params)}

    def _adam(self, state: dict, key: str):
        return state[key] if self.persist_optimizers else adam_init(state[key]["m"])

    def after_round(self, ctx, params, state):
        model, clients, data = ctx.model, ctx.client_params, ctx.server_data
        aux_x, aux_y = data.aux_x.to(ctx.device), data.aux_y.to(ctx.device)
        state = dict(state)

        def aux_rows(stream: int, steps: int):
            g = ctx.generator(stream)
            return [sample_rows(len(aux_y), self.aux_batch_size, g) for _ in range(steps)]

        # 1. FT: ŵ = w fine-tuned with CE on D_aux
        w_hat = None
        if self.ft:
            rows = aux_rows(1, self.finetune_steps)
            w_hat, state["finetune_adam"] = adam_train(
                lambda p, s: cross_entropy(logits_of(model, p, aux_x[rows[s]]), aux_y[rows[s]]), params,
                self.finetune_steps, self.finetune_lr, self.finetune_weight_decay, self._adam(state, "finetune_adam"))

        def outputs(x):  # the clients' features and logits, and z_ft, on x (no gradient)
            feats, logits = client_outputs(model, clients, x) if self.la or not self.ft else (None, None)
            z_ft = client_outputs(model, [w_hat], x)[1][0] if self.ft else None
            return feats, logits, z_ft

        # 2-4. LA (+ gate): calibration trained with CE on D_aux (Eq. 8)
        cal = state["calibration"]
        if self.la:
            feats, logits, z_ft = outputs(aux_x)  # fixed inputs: computed once per round
            rows = aux_rows(2, self.calibration_steps)

            def calibration_loss(c, s):
                r = rows[s]
                z = teacher_logits(c, feats[:, r], logits[:, r], None if z_ft is None else z_ft[r], self.ft, True)
                return cross_entropy(z, aux_y[r])  # Eq. 8

            cal, state["calibration_adam"] = adam_train(calibration_loss, cal, self.calibration_steps,
                                                        self.calibration_lr, self.calibration_weight_decay,
                                                        self._adam(state, "calibration_adam"))
            state["calibration"] = cal

        def teacher(x):
            return teacher_logits(cal, *outputs(x), self.ft, self.la)

        # 5. KD: the student starts from w; Eq. 9
        new = w_hat if self.ft else params
        if self.kd:
            a_rows = aux_rows(3, self.distill_steps)
            g = ctx.generator(4)
            u_rows = [sample_rows(len(data.unlabeled_x), self.ulb_batch_size, g) for _ in range(self.distill_steps)] \
                if self.lam > 0 else None

            def distill_loss(p, s):
                student_aux = logits_of(model, p, aux_x[a_rows[s]])
                if self.lam == 0:  # no KL term: the teacher is not needed
                    return cross_entropy(student_aux, aux_y[a_rows[s]])
                xu = data.unlabeled_x[u_rows[s]].to(ctx.device)
                return calibrated_distillation_loss(student_aux, aux_y[a_rows[s]], logits_of(model, p, xu),
                                                    teacher(xu), self.lam, self.temperature, self.t_squared)

            new, state["distill_adam"] = adam_train(distill_loss, params, self.distill_steps, self.distill_lr,
                                                    self.distill_weight_decay, self._adam(state, "distill_adam"))

        if ctx.evaluate is not None and (self.teacher_eval == "evaluated" and ctx.evaluating
                                         or self.teacher_eval == "final" and ctx.final):
            acc, per_class = ctx.evaluate(teacher)
            ctx.report["teacher_accuracy"] = acc
            ctx.report.update({f"teacher_acc_class_{k}": float(v) for k, v in enumerate(per_class)})
        return new, state

    def after_training(self, ctx, params, state):
        return params


def _field(name: str) -> str:
    """The :class:`FedicServer` field a ``fedic_…`` parameter fills: its name without the prefix."""
    return name.removeprefix("fedic_")


def _bool(name: str, default: bool, doc: str, source: str, field: str = "") -> Param:
    return Param(name, default, bool, doc, source=source, field=field or _field(name))


def _steps(name: str, doc: str, source: str) -> Param:
    return Param(name, 100, int, doc, check=lambda v: v >= 0, allowed="an integer ≥ 0", source=source,
                 field=_field(name))


def _rate(name: str, default: float, doc: str, source: str) -> Param:
    return Param(name, default, float, doc, check=lambda v: v >= 0, allowed="≥ 0", source=source, field=_field(name))


#: FEDIC's parameters: the paper's (λ, I, J, Adam 1e-3) and the released code's hidden settings (notes §4, §7.1).
FEDIC_PARAMS = (
    _bool("fedic_ft", True, "FEDIC: fine-tune ŵ on D_aux (FT of Table 3)", "FEDIC §2.2, Table 3"),
    _bool("fedic_la", True, "FEDIC: client- and class-wise logit adjustment (LA of Table 3, Eqs. 4-5)",
          "FEDIC §2.2, Table 3"),
    _bool("fedic_kd", True, "FEDIC: distil the teacher into the global model (KD of Table 3, Eq. 9)",
          "FEDIC §2.2, Table 3"),
    Param("fedic_lambda", 0.5, float, "FEDIC: λ of Eq. 9, the KL's weight (1 − λ on the CE)",
          check=lambda v: 0 <= v <= 1, allowed="in [0, 1]", source="FEDIC §2.2 (λ = 0.5 in all experiments)",
          field="lam"),
    Param("fedic_temperature", 2.0, float, "FEDIC: softmax temperature T of the KL", check=lambda v: v > 0,
          allowed="> 0", source="code options.py:30 (not in the paper)", field="temperature"),
    _bool("fedic_kd_t_squared", False, "FEDIC: multiply the KL by T² (Hinton et al.)",
          "code main.py:209-211 has no T² (not in the paper)", field="t_squared"),
    _steps("fedic_finetune_steps", "FEDIC: Adam steps of the FT stage", "code main.py:132 (100; the paper's I)"),
    _steps("fedic_calibration_steps", "FEDIC: calibration steps I", "FEDIC §3.1 (I = 100)"),
    _steps("fedic_distill_steps", "FEDIC: distillation steps J", "FEDIC §3.1 (J = 100)"),
    Param("fedic_aux_batch_size", 20, int, "FEDIC: D_aux samples per server step (FT, calibration, the CE of Eq. 9)",
          check=lambda v: v >= 1, allowed="an integer ≥ 1", source="code options.py:22 (not in the paper)",
          field="aux_batch_size"),
    Param("fedic_ulb_batch_size", 128, int, "FEDIC: D_ulb samples per distillation step",
          check=lambda v: v >= 1, allowed="an integer ≥ 1", source="code options.py:23 (not in the paper)",
          field="ulb_batch_size"),
    _rate("fedic_finetune_lr", 1e-3, "FEDIC: Adam learning rate of FT", "code main.py:106 (not in the paper)"),
    _rate("fedic_finetune_weight_decay", 2e-4, "FEDIC: Adam weight decay of FT", "code main.py:106"),
    _rate("fedic_calibration_lr", 1e-3, "FEDIC: Adam learning rate of the calibration", "code main.py:105"),
    _rate("fedic_calibration_weight_decay", 0.0, "FEDIC: Adam weight decay of the calibration", "code main.py:105"),
    _rate("fedic_distill_lr", 1e-3, "FEDIC: Adam learning rate of the distillation",
          "FEDIC §3.1 (Adam, 0.001)"),
    _rate("fedic_distill_weight_decay", 2e-4, "FEDIC: Adam weight decay of the distillation",
          "code main.py:104 (not in the paper)"),
    _bool("fedic_persist_optimizers", True, "FEDIC: the three Adam optimizers keep their moments across rounds "
          "(False: fresh every round)", "code main.py:104-106 (created once; not in the paper)"),
    _bool("fedic_gate_bias", False, "FEDIC: the gate σ = sigmoid(uᵀv + b) has a bias b",
          "paper Eq. 6 has none (default); the code's Linear(256→1) has one (main.py:32)"),
    Param("fedic_client_weight_init", 1.0, float, "FEDIC: initial a_e = this·1 (b_e = 0) of Eq. 4",
          source="code main.py:27 (ones; not in the paper)", field="client_weight_init"),
    Param("fedic_teacher_eval", "final", str, "FEDIC: when the teacher's test accuracy is reported (Table 3 rows "
          "a-d): at the last round, at every evaluated round, or never", choices=TEACHER_EVAL,
          source="FEDIC §3.3 (round 200)", field="teacher_eval"),
)

register_method(
    "fedic",
    parts={"server_training": FedicServer},  # its fields filled by name from FEDIC_PARAMS and the run's seed
    params=FEDIC_PARAMS, paper="Shang et al., ICME 2022",
    doc="server training: FT on D_aux, calibrated ensemble (Eqs. 4-8), distillation with (1−λ)CE + λKL (Eq. 9)")
