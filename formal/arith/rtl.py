"""SymbiYosys harnesses of the arithmetic RTL (``hhe_gen.cores.arith``).

Importing this module registers every RTL proof of ``hhe-gen prove arith`` (once, in this order);
the harnesses live beside it, one module per kind of proof:

* :mod:`.rtl_common` - small primes of each form, the units built for them, the certificate
  specifications, the operand assumption;
* :mod:`.rtl_reducers` - :func:`~.rtl_reducers.equivalence`, :func:`~.rtl_reducers.contract`;
* :mod:`.rtl_addsub` - ModAdd / ModSub at 64 bits (:func:`~.rtl_addsub.addsub`);
* :mod:`.rtl_stream` - the StreamPipeline handshake (:func:`~.rtl_stream.stream_handshake`);
* :mod:`.rtl_multiplier` - the multiplier generator (:func:`~.rtl_multiplier.multiplier_structure`);
* :mod:`.rtl_pieces` - pieces of the full-width reducers (:func:`~.rtl_pieces.piece`);
* :mod:`.rtl_miter` - Barrett against word Montgomery (:func:`~.rtl_miter.miter_barrett_montgomery`).

What is proven, at which size (every harness below says it again):

* **Full functional equivalence of each reducer at small widths**
  (:func:`~.rtl_reducers.equivalence`): the real generator (``BarrettMul``, ``WordMontgomeryMul``,
  ``SpecialBarrettMul``, ``NttMontgomeryMul``) instantiated with small primes of its form, for every operand pair
  a, b < q and every prime of a two-prime table (``sel``), against an independent specification:
  ``a*b mod q`` or ``a*b*R^-1 mod q`` expressed by a *certificate* - free values k, r with
  ``Assume(a*b == k*q + r)``, ``r < q`` (Montgomery: a quotient certificate M < R, c in {0,1} with
  ``a*b + M*q == (r + c*q)*R``, ``r < q``), which pins r to the unique residue without a divider
  in the solver.  Harness:
  :func:`~hhe_gen.formal.common.contract.pipeline_contract`, operands entering in the first
  cycle, no stalls, BMC of depth latency + 1 (the one checked step).  Bit-level proofs of
  multipliers grow steeply with the width (measured: Barrett 8 bits ~15 s, 10 bits ~45 s,
  12 bits ~75 s), so the sizes are the largest that finish in about a minute; above them the
  algorithm is proven by z3 (``formal/arith/bounds.py``) and the same generator code runs at
  the real widths.
* **Barrett over primes of two bit lengths** (``rtl-barrett-mixed-8-6-equiv``): the same
  equivalence for a table of an 8- and a 6-bit prime, the second scaled by 2^2 inside the unit.
* **The pipeline contract with stalls** (:func:`~.rtl_reducers.contract`): the same units, the
  operands entering in any cycle, ``en`` and every other input free in every cycle, BMC of depth
  2*latency + 3.
* **ModAdd / ModSub at 64 bits**: full equivalence with (a + b) mod q / (a - b) mod q (as a
  certificate r < q, c in {0, 1} with a + b = r + c*q / a + c*q = b + r) for two 64-bit primes, by k-induction without stalls (every cycle, from any reachable state) and by
  BMC with stalls.
* **Stream handshake of StreamPipeline** (:func:`~.rtl_stream.stream_handshake`): AXI-like rules
  assumed on ``i_stream`` and asserted on ``o_stream``; an in-flight counter asserted equal to the number of
  set bits of the wrapper's own ``valid`` shift register, so k-induction closes; a scoreboard
  that follows one item through a 64-bit ModAdd (BMC); covers (a result comes out, back-pressure,
  full pipeline, transfer after back-pressure).
* **The multiplier generator** (:func:`~.rtl_multiplier.multiplier_structure`): ``Multiplier``
  built with DSP tiles scaled down to 3x3 (4x3 for the Xilinx shape) so that operand splitting, Karatsuba, low/high
  parts, signed operands, LUT rows and the compressor trees are all exercised, equal to a*b (or
  its part) for every operand pair at 6..8 bits (BMC).
* **Pieces of the full-width reducers** (:func:`~.rtl_pieces.piece`, table ``PIECES``), at 36 / 54 / 64-bit
  primes of the real forms (N = 2^13), on the real full-width units, each relation between the
  unit's own internal values (probes) for every operand pair: the constant-time corrections of
  both Barrett kinds (r0 < 3q, proven by z3, gives r = r0 mod q) at 36/54/64 bits, ABC-FHE's
  shift-add QInv (m*q = t_lo mod R) and its carry-save m*q network (d = x - m*q exactly), both
  signs, at 36 bits (at 54 bits the QInv relation ran over 1200 s).  The
  pieces that go through the wide constant products (the DNA-HHE quotient and remainder) did
  not finish in 400 s at 36 bits and are covered by the z3 proofs of the algorithm plus
  simulation.
* **A miter between two reducers** (:func:`~.rtl_miter.miter_barrett_montgomery`): Barrett(a, b) equals word
  Montgomery(a, b*R mod q) at 8 bits, both primes; no specification in between.
* **Mutants** (``expect="FAIL"``): units built for a different modulus than the specification's.
"""

from __future__ import annotations

# registration order = the order of ``hhe-gen prove arith``
from . import rtl_reducers, rtl_addsub, rtl_stream, rtl_multiplier, rtl_pieces, rtl_miter  # noqa: F401
from .rtl_common import GROUP, KINDS

__all__ = ["GROUP", "KINDS", "rtl_reducers", "rtl_addsub", "rtl_stream", "rtl_multiplier", "rtl_pieces",
           "rtl_miter"]
