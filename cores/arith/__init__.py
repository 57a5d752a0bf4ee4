"""Modular-arithmetic cores: constant-time add/sub, a DSP-aware multiplier generator and four
pipelined modular multipliers with a run-time-selected prime.

Raw pipelined units (the interface every unit here has)
--------------------------------------------------------
A raw unit is a ``wiring.Component`` with the members

=========  ===========================  =====================================================
``a``      ``In(width)``                operand, in [0, q)
``b``      ``In(width)``                operand, in [0, q)
``sel``    ``In(range(len(moduli)))``   prime index; absent when there is one modulus
``en``     ``In(1)``                    clock enable: the pipeline advances only when en = 1
                                        (every register of the unit is enabled by it)
``p``      ``Out(width)``               the result, in [0, q)
=========  ===========================  =====================================================

and the Python attributes ``latency`` (int: ``p`` holds the result of the operands presented
``latency`` enabled cycles earlier; 0 = combinational), ``ii = 1``, ``min_latency``, ``tiles``
(DSP-sized partial products), ``moduli``, ``width``, ``segments``/``counts`` (the datapath chain
and how many registers each boundary got, see :func:`pipeline.schedule`) and, after elaboration,
``probes`` (name -> (signal, stage)) for the golden model's trace values.  Montgomery units
return a*b*R^-1 mod q.  ``sel`` must stay below ``len(moduli)``.  Nothing depends on data:
no data-dependent control, no data-dependent cycle counts.

``StreamPipeline(unit)`` wraps any raw unit into ``i_stream`` (payload ``StructLayout({"a":
width, "b": width, "sel": ...})``) and ``o_stream`` (payload ``width``) for
:func:`hhe_gen.testing.run_stream`.
"""

from .barrett import BarrettMul
from .constants import TARGETS
from .factory import KINDS, modmul
from .modadd import ModAdd, ModSub
from .multiplier import MulPlan, Multiplier, SumPlan
from .ntt_montgomery import NttMontgomeryMul
from .pipeline import Pipe, Segment, StreamPipeline, Timed, schedule
from .special_barrett import SpecialBarrettMul
from .word_montgomery import WordMontgomeryMul

__all__ = ["TARGETS", "KINDS", "modmul", "ModAdd", "ModSub", "Multiplier", "MulPlan", "SumPlan",
           "BarrettMul", "WordMontgomeryMul", "SpecialBarrettMul", "NttMontgomeryMul",
           "Pipe", "Segment", "StreamPipeline", "Timed", "schedule"]
