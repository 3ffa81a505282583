"""The FEDIC companion: Shang et al., "FEDIC: Federated Learning on Non-IID and Long-Tailed Data via
Calibrated Distillation", ICME 2022.

* :mod:`.reported` -- Tables 1-3 and the claims of Figs. 3-5 as data, the paper's setup and the
  mapping of Table 3's rows to FEDIC's switches (inferred);
* :mod:`.deviations` -- every place fedlib's reproduction departs from the paper or follows its code.

The method is :mod:`fedlib.algorithms.fedic`; the baselines are ``fedavg``, ``fedavgm``,
``fedprox``, ``fednova``, ``feddf``, ``fedbe``, ``fed_focal``, ``ratio_loss``, ``crt``,
``tau_norm`` and ``lws``.  Profiles, experiments and notebooks come in the next phase.
"""
