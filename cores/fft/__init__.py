"""CKKS special FFT / IFFT cores (installed as ``hhe_gen.cores.fft``).

=====================  ==============================================  =======================
core                   model (hhe_gen.models.fft)                      cycles (compute part)
=====================  ==============================================  =======================
:class:`SpecialIfft`   ``special_ifft_fixed`` (GS, halving, bitrev out)  ~ (n/2P) log2 n + delay
:class:`SpecialFft`    ``special_fft_fixed`` (bitrev in, CT)             ~ (n/2P) log2 n + delay
=====================  ==============================================  =======================

n = N/2 slots (N = 2^4 .. 2^16), P butterfly lanes of :class:`hhe_gen.cores.arith.Butterfly`
(complex field), fixed point :class:`hhe_gen.models.fft.FixedPointFormat`.  The memory plan is
:class:`.plan.FftPlan`; the component :class:`.iterative.IterativeFft`.

``IterativeFft(..., inverse="both")`` runs either direction, chosen per transform by its
``inverse`` port, with ONE set of banks and ONE twiddle ROM per lane (the FFT's; the IFFT reads
their conjugates: :func:`.plan.check_shared_twiddles`), so a codec that never encodes and decodes
at the same time needs one core instead of two; ``passes`` / ``split_load`` may differ per
direction, and each direction takes exactly the cycles of the one-direction core
(:meth:`IterativeFft.timing`).

Cycles (29/26, default Butterfly latency 5, read-to-write delay 7; measured in simulation by
``hhe-gen bench fft`` up to n = 512 and equal to :attr:`IterativeFft.compute_cycles` /
:meth:`IterativeFft.cycles`, which the tests assert exactly; larger n from the plan)::

    n      P   compute   (n/2P) log2 n + 7   load + unload   cycles() (one transform, I/O incl.)
    128    2      231          231               128                361
    128    4      119          119                64                185
    512    1     2311         2311              1024               3337
    512    8      295          295               128                425
    4096   2    12295        12295              4096              16393
    4096   4     6151         6151              2048               8201
    32768  8    30727        30727              8192              38921

The compute part meets the target (n/2P) log2(n) + pipeline depth exactly for n >= 2^7 (small n
stall on the read-after-write dependencies: n = 8, P = 2 takes 23 cycles against 13).  Load and
unload are not overlapped with the computation (one set of banks): a ping-pong second set would
hide them at twice the memory.  cycles() includes the output register after the lane multiplexer
(``output_register=True``, one cycle).
"""

from .iterative import FftTiming, IterativeFft, SpecialFft, SpecialIfft
from .plan import MAX_SLOTS, MIN_SLOTS, FftPlan, check_shared_twiddles, run_plan

__all__ = ["IterativeFft", "SpecialFft", "SpecialIfft", "FftTiming", "FftPlan", "run_plan",
           "check_shared_twiddles", "MIN_SLOTS", "MAX_SLOTS"]
