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
:func:`hhe_gen.sim.stream.run_stream`; :func:`hhe_gen.sim.stream.run_unit` drives a raw unit.

Units
-----
==========================================  ====================================  ============
unit                                        model (hhe_gen.models.modarith)       min latency
==========================================  ====================================  ============
``ModAdd(moduli, width, latency=0|1)``      mod_add_trace                         0
``ModSub(moduli, width, latency=0|1)``      mod_sub_trace                         0
``Multiplier(a_width, b_width, ...)``       a*b (or its low/high part)            1 (0 w/o tiles)
``BarrettMul(moduli, width, latency)``      BarrettReducer                        3
``WordMontgomeryMul(moduli, width, w, l)``  WordMontgomeryReducer                 1 + word steps
``SpecialBarrettMul(moduli, k, log_n, l)``  SpecialPrimeBarrett                   3 (2 with
                                                                                  bnd_luts)
``NttMontgomeryMul(moduli, log_n, w, l)``   NttFriendlyMontgomery                 1
``modmul(kind, moduli, width, latency)``    by name (REDUCER_NAMES)               as above
``reducer_plan(kind, ...)``                 its plan (no hardware: ReducerPlan)   as above
==========================================  ====================================  ============

DSP tiles (``tiles``; ECP5 = MULT18X18D, Xilinx = DSP48E1; "+K" = karatsuba=True; the test
primes of tests/cores/arith: N = 2^13 for the two special forms, word_bits = 18):

=================  ==========  ==========  ==========  ====================================
unit               36 bits     54 bits     64 bits     notes
=================  ==========  ==========  ==========  ====================================
Barrett            11 / +K 9   24 / +K 17  42 / +K 28  xilinx 64: 32
word Montgomery    6 / +K 5    15 / +K 12  28 / +K 22  min latency 3 / 4 / 5
special Barrett    8 / +K 7    15 / +K 12  23 / +K 17  default karatsuba=True: 7 / 12 / 17
NTT Montgomery     4 / +K 3    9 / +K 6    16 / +K 10  only a*b uses DSPs
=================  ==========  ==========  ==========  ====================================

Special Barrett with ``karatsuba=False, bnd_luts=True`` (a*b on schoolbook tiles, q_est*bnd as LUT
rows): 6 / 12 / 20 tiles.

Yosys 0.70 (``synth_ecp5`` / ``synth_xilinx`` up to DSP mapping) on the 54-bit units, latency 6:
special Barrett 12 MULT18X18D / 11 DSP48E1, generic Barrett 24 MULT18X18D / 23 DSP48E1.

Speed on ECP5 (what makes it)
-----------------------------
* Every adder tree is a carry-save compressor tree (3:2 adders, one LUT level each) and a single
  carry-propagate adder cut into chunks; the scheduler may put a register between two chunks
  (the carry crosses it), so no stage needs a carry chain longer than its chunks.
* The shifts and adds around the narrow products of the Barrett reducers are rows of those
  trees (one adder per step), and the three candidates r0, r0 - q, r0 - 2q are computed side by
  side: the corrections cost one adder delay and a select.
* ``dsp="primitive"`` (ecp5) instantiates MULT18X18D blocks whose input and output registers
  take the pipeline registers around the tiles (Yosys and nextpnr-ecp5 do not pack fabric
  registers into them; register -> inferred tile -> register alone is 7.1 ns).  The simulator
  cannot run the instance: ``dsp="model"`` builds the same wiring with an Amaranth model of the
  primitive, and the tests check that one bit- and cycle-exactly.
* ``karatsuba=False, bnd_luts=True, dsp="primitive"`` is the 54-bit special-prime Barrett's
  fastest form on ECP5 (post-route figures against the defaults, ``hhe-gen bench arith``: the
  barrett-ecp5 table of docs/figures.md).
"""

from .barrett import BarrettMul
from .butterfly import Butterfly, ButterflyStream
from .constants import TARGETS
from .factory import KINDS, PLANS, modmul, reducer_plan
from .modadd import ModAdd, ModSub
from .multiplier import MulPlan, Multiplier, SumPlan
from .ntt_montgomery import NttMontgomeryMul
from .pipeline import Pipe, Segment, StreamPipeline, Timed, schedule
from .special_barrett import SpecialBarrettMul
from .word_montgomery import WordMontgomeryMul

__all__ = ["TARGETS", "KINDS", "PLANS", "modmul", "reducer_plan", "ModAdd", "ModSub", "Multiplier", "MulPlan",
           "SumPlan", "BarrettMul", "WordMontgomeryMul", "SpecialBarrettMul", "NttMontgomeryMul",
           "Pipe", "Segment", "StreamPipeline", "Timed", "schedule", "Butterfly", "ButterflyStream"]
