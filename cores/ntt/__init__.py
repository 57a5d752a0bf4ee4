"""Number-theoretic transforms (installed as ``hhe_gen.cores.ntt``).

Components
----------
:class:`IterativeNtt`
    iterative, memory-based negacyclic NTT / INTT: N = 2^3 .. 2^16, P butterfly lanes, a run-time
    selected prime of an RNS set, Lattigo's convention (:mod:`hhe_gen.models.ntt`), the memory
    plan of :mod:`hhe_gen.models.ntt_schedule` (dual-port banks) or :mod:`.single_port` (single-port
    banks); streams in and out.
"""

from .iterative import BANKING, TWIDDLES, IterativeNtt
from .plan import check_lanes, check_moduli, check_n, schedule_starts, twiddle_rom

__all__ = ["IterativeNtt", "TWIDDLES", "BANKING", "check_n", "check_lanes", "check_moduli",
           "schedule_starts", "twiddle_rom"]
