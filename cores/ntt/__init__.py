"""Number-theoretic transforms (installed as ``hhe_gen.cores.ntt``).

Components
----------
:class:`IterativeNtt`
    iterative, memory-based negacyclic NTT / INTT: N = 2^3 .. 2^16, P butterfly lanes, a run-time
    selected prime of an RNS set, Lattigo's convention (:mod:`hhe_gen.models.ntt`), the memory
    plan of :mod:`hhe_gen.cores.ntt.schedule` (dual-port banks) or :mod:`.single_port` (single-port
    banks); twiddles from a banked ROM or formed on the fly; streams in and out.
:class:`NttAddressDecoder`
    the iterative core's combinational address decoder (stage, cycle -> banks' addresses and
    slots, lanes' twiddle indices), one for the reads and one for the writes.
:class:`PipelinedNtt`
    pipelined streaming NTT or INTT (build-time direction): radix-2 SDF (multi-path for P > 1) or
    radix-2 MDC, one polynomial every N/P cycles back to back, per-polynomial prime ``sel``,
    per-stage twiddle ROMs, delay lines in memory (:class:`DelayLine`); plan in
    :mod:`.pipelined_plan`.
"""

from .address_decoder import NttAddressDecoder
from .delay_line import DelayLine
from .iterative import BANKING, TWIDDLES, IterativeNtt
from .pipelined import ARCHS, SMALL_PRIMES, SMALL_RNS, PipelinedNtt, small_pipelined_ntt
from .plan import check_lanes, check_moduli, check_n, otf_tables, schedule_starts, twiddle_rom
from .single_port import single_port_schedule, single_port_starts

__all__ = ["IterativeNtt", "NttAddressDecoder", "TWIDDLES", "BANKING", "check_n", "check_lanes", "check_moduli",
           "schedule_starts", "twiddle_rom", "otf_tables", "single_port_schedule", "single_port_starts",
           "PipelinedNtt", "ARCHS", "DelayLine", "SMALL_PRIMES", "SMALL_RNS",
           "small_pipelined_ntt"]
