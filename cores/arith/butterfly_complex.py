"""Fixed-point complex pieces of the multi-field butterfly: the 3-multiplier complex product
(three MulPlans that can sit at different pipeline stages, see :mod:`.butterfly_share`), the
rounding shifts of :meth:`hhe_gen.models.fft.FixedPointFormat.round_shift` in hardware, and the
packing of (re, im) pairs into one port.

Packing: a complex operand of format ``fmt`` (width W) is ``re | im << W`` on a port: bits
[0, W) hold Re as W-bit two's complement, bits [W, 2W) hold Im; bits above 2W are ignored on
inputs and zero on outputs.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const

from hhe_gen.models.fft import FixedPointFormat

from .multiplier import MulPlan
from .pipeline import DELAY, Segment, Timed, add_delay

__all__ = ["pack_complex", "unpack_complex", "round_shift_hw", "wrap_hw", "ComplexProducts", "COMPLEX_REDUCE"]

#: How the complex products' rows are summed unless the configuration says otherwise
#: (:data:`.compressor.REDUCTIONS`; see :class:`ComplexProducts`).
COMPLEX_REDUCE = "adders"


def pack_complex(pair, fmt: FixedPointFormat) -> int:
    """(re, im) integers in ``fmt`` -> the port integer ``re | im << W`` (two's complement)."""
    mask = (1 << fmt.width) - 1
    return (pair[0] & mask) | (pair[1] & mask) << fmt.width


def unpack_complex(value: int, fmt: FixedPointFormat) -> tuple[int, int]:
    """The port integer -> (re, im) signed integers (inverse of :func:`pack_complex`)."""
    w = fmt.width
    return fmt.wrap(value & ((1 << w) - 1)), fmt.wrap((value >> w) & ((1 << w) - 1))


def parts(v, w):
    """(re, im) of a packed value as signed w-bit Values."""
    return v[:w].as_signed(), v[w:2 * w].as_signed()


def round_shift_hw(x, s: int, rounding: str):
    """``fmt.round_shift(x, s)`` for a signed Value x (exact; the result is one bit narrower per
    shifted bit plus one for the rounding increment).  half-up: (x + 2^(s-1)) >> s; truncate:
    x >> s; half-even: q = x >> s, +1 when the remainder is above half, or exactly half and q odd."""
    if rounding == "half-up":
        return (x + (1 << (s - 1))) >> s
    if rounding == "truncate":
        return x >> s
    q = x >> s
    rem = x.as_unsigned()[:s]
    above = rem[s - 1] & (rem[:s - 1].any() | q[0]) if s > 1 else rem[0] & q[0]
    return q + above


def wrap_hw(x, w: int):
    """x reduced to w bits (two's complement wrap: the low w bits)."""
    return x.as_unsigned()[:w]


class ComplexProducts:
    """The exact complex product p = m1 * m2 of two packed operands with three real products
    (:func:`hhe_gen.models.fft.complex_mul_3mult`), rounded once per component by frac_bits and
    wrapped to W bits - :func:`hhe_gen.models.fft._twiddle_product` / the model's ``mul``.

    With m1 = (xr, xi) (data) and m2 = (wr, wi) (twiddle or second factor):

    ======  ===========================  ================================================
    name    product                       operands (a: W+1 bits signed, b: W bits signed)
    ======  ===========================  ================================================
    k1      wr * (xr + xi)  (+ 2^(F-1))   a = xr + xi, b = wr; the half-up rounding constant
                                          is one more row of k1's adder tree
    k2      xr * (wi - wr)                a = wi - wr, b = xr
    k3      xi * (wr + wi)                a = wr + wi, b = xi
    ======  ===========================  ================================================

    Each product's rows (tiles, the AND-gated rows of the operand bits beyond the tiles, the sign
    corrections) are summed as ``reduce`` says (:data:`.compressor.REDUCTIONS`): by default
    (:data:`COMPLEX_REDUCE`) "adders", levels of carry-propagate adders, which on ECP5 take about
    half the logic of 3:2 compressors for these many-row trees (a W = 38 operand is 39 x 38 bits,
    two 18-bit limbs and LUT rows for the rest); the deeper tree's estimated delay stays within
    the Z_q reducer's, which bounds the sharing plan.

    re = k1 - k3 and im = k1 + k2 are exact modulo 2^(F+W), which is all the rounding shift and
    the wrap to W bits need, so every product is a *low part* of F+W bits (``MulPlan(part="low")``,
    signed).  Each product is its own pipeline (segments ``cs`` = the operand sum, then the
    plan's), so the sharing planner can start them at different stages; ``combine_segments`` are
    ``ri`` (re, im) and ``rnd`` (half-even increment; a wire for the other modes).
    """

    NAMES = ("k1", "k2", "k3")

    def __init__(self, fmt: FixedPointFormat, target: str, karatsuba: bool, reduce: str = COMPLEX_REDUCE):
        self.fmt = fmt
        w, f = fmt.width, fmt.frac_bits
        self.bits = f + w
        self.plans = {}
        self.segments = {}
        for name in self.NAMES:
            extra = [(f - 1, 1, 1)] if name == "k1" and fmt.rounding == "half-up" else []
            plan = MulPlan(w + 1, w, target=target, karatsuba=karatsuba, part="low", part_bits=self.bits,
                           signed=True, extra=extra, name=name, reduce=reduce)
            self.plans[name] = plan
            self.segments[name] = [Segment("cs", add_delay(w + 1))] + plan.segments
        self.tiles = sum(p.tiles for p in self.plans.values())
        rnd = add_delay(w) + DELAY["gate"] if fmt.rounding == "half-even" else DELAY["gate"]
        self.combine_segments = [Segment("ri", add_delay(self.bits)), Segment("rnd", rnd)]

    def build_product(self, name, pipe, m1: Timed, m2: Timed) -> Timed:
        """Emit product ``name`` into ``pipe`` (its segments: ``self.segments[name]``); m1, m2 packed
        operands at the pipe's stage 0.  Returns the product modulo 2^(F+W)."""
        w = self.fmt.width
        if name == "k1":
            s = pipe.comb(lambda v: parts(v, w)[0] + parts(v, w)[1], m1, shape=w + 1, name="k1_a")
            b = pipe.comb(lambda v: v[:w], m2, shape=w, name="k1_b")
        elif name == "k2":
            s = pipe.comb(lambda v: parts(v, w)[1] - parts(v, w)[0], m2, shape=w + 1, name="k2_a")
            b = pipe.comb(lambda v: v[:w], m1, shape=w, name="k2_b")
        else:
            s = pipe.comb(lambda v: parts(v, w)[0] + parts(v, w)[1], m2, shape=w + 1, name="k3_a")
            b = pipe.comb(lambda v: v[w:2 * w], m1, shape=w, name="k3_b")
        s = pipe.boundary("cs", s)
        plan = self.plans[name]
        extras = ()
        if plan.extra:
            names = [sg.name for sg in pipe.segments]
            pp_stage = sum(pipe.counts[:names.index(f"{name}.pp") + 1])
            extras = (Timed(Const(1, 1), pp_stage),)
        return plan.build(pipe, s, b, extras)

    def build_combine(self, pipe, k1: Timed, k2: Timed, k3: Timed) -> Timed:
        """re = k1 - k3, im = k1 + k2 (mod 2^(F+W)), rounded and wrapped; packed (2W bits)."""
        w, f, n = self.fmt.width, self.fmt.frac_bits, self.bits
        re = pipe.comb(lambda u, v: u - v, k1, k3, shape=n, name="re")
        im = pipe.comb(lambda u, v: u + v, k1, k2, shape=n, name="im")
        re, im = pipe.boundary("ri", re, im)
        rounding = self.fmt.rounding

        def rnd(v):
            if rounding == "half-even":
                return wrap_hw(round_shift_hw(v.as_signed(), f, rounding), w)
            return v[f:f + w]          # half-up: the constant is already in k1; truncate: floor
        p = pipe.comb(lambda u, v: Cat(rnd(u), rnd(v)), re, im, shape=2 * w, name="p")
        return pipe.boundary("rnd", p)

