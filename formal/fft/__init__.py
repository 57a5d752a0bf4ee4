"""Formal harnesses of the FFT cores (installed as ``hhe_gen.formal.fft``); what is proven at
which size: :mod:`.harnesses`; the registered proofs (``hhe-gen prove fft``): :mod:`.proofs`."""
