"""FedConcat (Diao, Li, He, AAAI 2024, "Exploiting Label Skews in Federated Learning with Model
Concatenation"): the paper's reported values (:mod:`.reported`), the baselines' communication budget
(:mod:`.communication`) and where fedlib departs from the paper or its code (:mod:`.deviations`).
The method itself is :mod:`fedlib.algorithms.fedconcat` (tokens ``fedconcat``, ``fedconcat_id``)."""
