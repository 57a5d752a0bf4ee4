"""Generic Barrett modular multiplier (bit-exact with :class:`hhe_gen.models.modarith.BarrettReducer`)."""

from __future__ import annotations

from amaranth.hdl import Mux

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.modarith import BarrettReducer

from .constants import constant_table
from .multiplier import MulPlan, SumPlan
from .pipeline import DELAY, Segment, add_delay
from .reducer import ModMulBase, ReducerPlan

__all__ = ["BarrettPlan", "BarrettMul"]


class BarrettPlan(ReducerPlan):
    """a*b mod q with generic Barrett reduction, q = moduli[sel] selected at run time.

    Parameters
    ----------
    moduli : int or list of int   odd moduli, q < 2^width; k = the largest bit length.  Moduli of
                                  one bit length (the usual RNS basis) need nothing more; a
                                  narrower one (an RNS basis with a wider special prime P) is
                                  scaled to k bits (the model's ``shift``, below)
    width : int                   port width, 16 .. 64
    latency : int or None         register stages, >= ``min_latency`` (default: the minimum)
    target : str                  "ecp5" | "xilinx" | "generic" (multiplier tiles)
    karatsuba : bool              one-level Karatsuba in the three products (default False)
    dsp : str                     "infer" | "primitive" | "model" (ecp5 MULT18X18D primitives with
                                  their registers, see :class:`~hhe_gen.cores.arith.multiplier.MulPlan`)

    Members: the raw-unit ports and attributes (see :class:`~hhe_gen.cores.arith.reducer.ModMulBase`);
    ``k``, ``shifts`` (per prime, k - its bit length) and the table columns ``mu`` (k+1 bits) and
    ``q_scaled`` (k bits).

    Datapath (names = the model's trace keys, each a probe):
      0. only with mixed bit lengths, segment "b_s": ``b_s = b << shift`` (a multiplexer over the
         distinct shifts); q below is q_scaled
      1. ``x = a*b_s``: k x k product (multiplier "x")
      2. ``x_hi = x >> (k-1)``; ``p = x_hi * mu``: (k+1) x (k+1) product, exact; ``q_est`` = its
         high k+1 bits (multiplier "p", part "high")
      3. ``-q_est * q`` modulo 2^(k+2): (k+1) x k low-part product left in carry-save form
         (multiplier "qq", no adder; qq itself is not built); beside its tiles
         E_j = x_lo - j*q mod 2^(k+2), j = 0, 1, 2 (x_lo = x mod 2^(k+2))
      4. sums "d": d_j = r0 - j*q = (the two carry-save words) + E_j, three adders side by side
      5. segment "r": r1 = d1 if d1 >= 0 else r0; r_s = d2 if d2 >= 0 else r1 (r0 in [0, 3q); the
         sign of d_j is its bit k+1); with mixed bit lengths ``r = r_s >> shift`` (a multiplexer)
    Probes hold the values modulo 2^(their width): b_s (k, mixed only), x (2k), x_hi (k+1),
    p (2k+2), q_est (k+1), r0 (k+2), r1 (k+1), r (k).

    Latency: ``latency`` cycles, initiation interval 1.  Minimum 3: one register right after the
    DSP tiles of each product; the other registers are placed by
    :func:`~hhe_gen.cores.arith.pipeline.schedule` (boundaries: ``in``, [``b_s``,] ``x.pp``, ``x.c*``,
    ``x.a*``, ``p.*``, ``qq.*``, ``d.*``, ``r``; extras at the output).  Mixed bit lengths add two
    multiplexers of delay (the shifts) and no register to the minimum.
    """

    kind = "barrett"
    probe_names = ("x", "x_hi", "p", "q_est", "r0", "r1", "r")

    @quiet_on_error
    def __init__(self, moduli, width, latency=None, *, target="ecp5", karatsuba=False, dsp="infer"):
        self._setup(moduli, width, latency, target, karatsuba, dsp)

    def _plan(self):
        k = self.k = max(q.bit_length() for q in self.moduli)
        self.models = tuple(BarrettReducer(q, self.width, k=k) for q in self.moduli)
        self.shifts = tuple(m.shift for m in self.models)
        self.probe_names = (("b_s",) if any(self.shifts) else ()) + type(self).probe_names
        kw = dict(target=self.target, karatsuba=self.karatsuba, dsp=self.dsp)
        self.mul_x = MulPlan(k, k, name="x", **kw)
        self.mul_p = MulPlan(k + 1, k + 1, part="high", part_bits=k + 1, name="p", **kw)
        self.mul_q = MulPlan(k + 1, k, part="low", part_bits=k + 2, name="qq", sign=-1, carry_save=True,
                             side_delay=add_delay(k + 2), **kw)
        self.sum_d = SumPlan([[(0, k + 2, 1)] * 3] * 3, k + 2, name="d")
        self.mul_plans = (self.mul_x, self.mul_p, self.mul_q)
        mixed = any(self.shifts)
        shift_mux = DELAY["mux"] * (len(set(self.shifts)) - 1)
        self.segments = (([Segment("b_s", shift_mux)] if mixed else []) +
                         self.mul_x.segments + self.mul_p.segments + self.mul_q.segments +
                         self.sum_d.segments + [Segment("r", 2 * DELAY["mux"] + shift_mux)])

    def _shifted(self, pipe, value, name, left):
        """``value`` shifted by the selected prime's ``shift`` (left or right): a multiplexer over
        the distinct shifts, keyed by a per-prime table of the shift's index."""
        distinct = sorted(set(self.shifts))
        index = pipe.table([distinct.index(s) for s in self.shifts], max(1, (len(distinct) - 1).bit_length()),
                           f"{name}_shift")

        def f(v, i):
            out = v << distinct[0] if left else v >> distinct[0]
            for j, s in enumerate(distinct[1:], 1):
                out = Mux(i == j, v << s if left else v >> s, out)
            return out
        return pipe.comb(f, value, index, shape=self.k, name=name, probe=True)

    def _build(self, pipe, a, b):
        k = self.k
        a = pipe.wire(lambda v: v[:k], a, shape=k, name="a_k")
        b = pipe.wire(lambda v: v[:k], b, shape=k, name="b_k")
        if any(self.shifts):
            b = self._shifted(pipe, b, "b_s", left=True)
            a, b = pipe.boundary("b_s", a, b)
        x = self.mul_x.build(pipe, a, b, probe="x")
        x_hi = pipe.wire(lambda v: v[k - 1:], x, shape=k + 1, name="x_hi", probe=True)
        x_lo = pipe.wire(lambda v: v[:k + 2], x, shape=k + 2, name="x_lo")
        mu = pipe.table(constant_table(self.models, "mu"), k + 1, "mu")
        q_est = self.mul_p.build(pipe, x_hi, mu, probe="q_est", probe_full="p")
        # segment qq.pp: the tiles of q_est * q, and beside them E_j = x_lo - j*q
        mod = 1 << (k + 2)
        es = []
        for j in range(3):
            c = pipe.table([(-j * m.q_scaled) % mod for m in self.models], k + 2, f"c{j}")
            es.append(pipe.comb(lambda u, v: u + v, x_lo, c, shape=k + 2, name=f"e{j}"))
        q = pipe.table(constant_table(self.models, "q_scaled"), k, "q")
        cx, cy = self.mul_q.build(pipe, q_est, q)
        d0, d1, d2 = self.sum_d.build(pipe, [[cx, cy, e] for e in es])
        r0 = pipe.wire(lambda v: v, d0, shape=k + 2, name="r0", probe=True)
        r1 = pipe.comb(lambda u, v: Mux(v[k + 1], u, v), r0, d1, shape=k + 1, name="r1", probe=True)
        if not any(self.shifts):
            r = pipe.comb(lambda u, v: Mux(v[k + 1], u, v), r1, d2, shape=k, name="r", probe=True)
            return pipe.boundary("r", r)
        r_s = pipe.comb(lambda u, v: Mux(v[k + 1], u, v), r1, d2, shape=k, name="r_s")
        return pipe.boundary("r", self._shifted(pipe, r_s, "r", left=False))


class BarrettMul(BarrettPlan, ModMulBase):
    """:class:`BarrettPlan` as a raw unit: its ports and elaboration (:class:`~.reducer.ModMulBase`)."""
