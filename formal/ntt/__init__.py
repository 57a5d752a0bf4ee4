"""Formal proofs of the NTT cores (``hhe-gen prove ntt``): :mod:`.schedule` (the address / bank
schedule of :class:`hhe_gen.cores.ntt.IterativeNtt`, k-induction), :mod:`.equivalence` (the core
equals the model's NTT / INTT on symbolic inputs, BMC), :mod:`.streams` (stream rules, covers);
registered in :mod:`.proofs`."""
