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
"""

from .iterative import IterativeFft, SpecialFft, SpecialIfft
from .plan import MAX_SLOTS, MIN_SLOTS, FftPlan, run_plan

__all__ = ["IterativeFft", "SpecialFft", "SpecialIfft", "FftPlan", "run_plan", "MIN_SLOTS", "MAX_SLOTS"]
