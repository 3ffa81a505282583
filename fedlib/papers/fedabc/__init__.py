"""FedABC (Wang et al., AAAI 2023): the paper's reported results (:mod:`.reported`)."""
