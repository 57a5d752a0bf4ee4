"""DNA-HHE special-prime Barrett multiplier (bit-exact with
:class:`hhe_gen.models.modarith.SpecialPrimeBarrett`, section III-B)."""

from __future__ import annotations

from amaranth.hdl import Const, Mux

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.modarith import SpecialPrimeBarrett
from hhe_gen.params.errors import ParameterError

from .constants import check_int, constant_table
from .multiplier import MulPlan, SumPlan
from .pipeline import DELAY, Segment, add_delay
from .reducer import ModMulBase, ReducerPlan

__all__ = ["SpecialBarrettPlan", "SpecialBarrettMul"]


class SpecialBarrettPlan(ReducerPlan):
    """a*b mod q for DNA-HHE primes q = 2^k - 2N*bnd + 1 (mu = 2^k + Delta - 1), q = moduli[sel].

    Both constant products of Barrett reduction become narrow: the mu product is x_hi * Delta_hi
    ((k+1) x bitlen(Delta_hi), Delta = Delta_hi * 2^s) plus shifts and adds, the q product is
    q_est * bnd ((k+1) x bnd_bits, only its low k+2-log_n bits) plus shifts and adds.  The shifts
    and adds are not separate adders: they are rows of the products' carry-save trees, so each
    of the two steps costs one carry-propagate adder.

    Parameters
    ----------
    moduli : int or list of int   primes of the form above, all with the same k and N
    k : int                       bit length of every prime, 16 .. 64
    log_n : int                   N = 2^log_n (1 .. 17)
    latency : int or None         register stages, >= ``min_latency`` (default: the minimum)
    bnd_bits : int                bnd < 2^bnd_bits (1 .. 16, the paper: 10)
    delta_shift : int or None     s (zero bits dropped from Delta), common to all primes; default
                                  min(log_n + 1, trailing zeros of every Delta)
    width : int or None           port width, k .. 64 (default k)
    target, karatsuba             multiplier tiles; karatsuba defaults to True here (the a*b
                                  product is the only wide one: 6 instead of 9 tiles at 54 bits)
    bnd_luts : bool               q_est*bnd as AND-gated LUT rows (no DSP tiles) instead of tiles
                                  (default False); with karatsuba=False this keeps 54 bits at 12
                                  tiles (9 for a*b, 3 for x_hi*Delta_hi) with the shortest pipeline
    dsp : str                     "infer" | "primitive" | "model" (ecp5 MULT18X18D primitives with
                                  their registers, see :class:`~hhe_gen.cores.arith.multiplier.MulPlan`)

    Datapath (names = the model's trace keys; probes: x, x_hi, q_est, r0, r1, r):
      1. ``x = a*b`` (multiplier "x": tiles, carry-save tree, chunked adder); ``x_hi = x >> (k-1)``
      2. multiplier "pd": the tree of x_hi * Delta_hi with three more rows gives
         W = (p + 2^(k+1)) >> s = pd + (x_hi << (k-s)) + (~x_hi >> s) + [x_hi mod 2^s = 0]
         (p = (x_hi << k) + (pd << s) - x_hi; ~x_hi the (k+1)-bit complement), so that
         q1 = W >> (k+1-s) = q_est + 1 comes out of one adder; p, pd are not built.  In parallel
         (same segment): E_j = x_lo + (1-j)*q mod 2^(k+2), j = 0, 1, 2 (x_lo = x mod 2^(k+2))
      3. multiplier "pb" (carry-save, no adder): (pb' << (log_n+1)) - q1*(2^k + 1) mod 2^(k+2)
         with pb' = q1 * bnd = pb + bnd: since qq = q_est*q = q1*q - q, r0 = x - qq =
         x + q - q1*(2^k + 1) + (pb' << (log_n+1)) mod 2^(k+2)
      4. sums "d": d_j = r0 - j*q = (the two carry-save words) + E_j, three adders side by side
      5. segment "r": r1 = d1 if d1 >= 0 else r0; r = d2 if d2 >= 0 else r1 (the model's two
         corrections: r0 in [0, 3q); the sign of d_j is its bit k+1)

    Latency: ``latency`` cycles, initiation interval 1.  Minimum: one register after each set of
    DSP tiles; the other registers are placed by :func:`~hhe_gen.cores.arith.pipeline.schedule`
    (boundaries ``x.*``, ``pd.*``, ``pb.*``, ``d.*``, ``r``).
    """

    kind = "special-barrett"
    probe_names = ("x", "x_hi", "q_est", "r0", "r1", "r")

    @quiet_on_error
    def __init__(self, moduli, k, log_n, latency=None, *, bnd_bits=10, delta_shift=None, width=None,
                 target="ecp5", karatsuba=True, bnd_luts=False, dsp="infer"):
        self.k = check_int("k", k, 16, 64)
        self.log_n = check_int("log_n", log_n, 1, 17)
        self.bnd_bits = check_int("bnd_bits", bnd_bits, 1, 16)
        if not isinstance(bnd_luts, bool):
            raise ParameterError("bnd_luts", bnd_luts, "True or False")
        self.bnd_luts = bnd_luts
        self._delta_shift = delta_shift
        width = k if width is None else width
        if isinstance(width, int) and not isinstance(width, bool) and width < k:
            raise ParameterError("width", width, f"an integer in k = {k} .. 64")
        self._setup(moduli, width, latency, target, karatsuba, dsp)

    def _plan(self):
        k, log_n = self.k, self.log_n
        first = [SpecialPrimeBarrett(q, k, log_n, bnd_bits=self.bnd_bits, width=self.width) for q in self.moduli]
        if self._delta_shift is None:
            shift = min(min((m.delta & -m.delta).bit_length() - 1 for m in first), log_n + 1)
        else:
            shift = self._delta_shift
        self.models = tuple(SpecialPrimeBarrett(q, k, log_n, bnd_bits=self.bnd_bits, delta_shift=shift,
                                                width=self.width) for q in self.moduli)
        self.delta_shift = s = shift
        sh = log_n + 1
        self.dh_bits = max(m.delta_hi.bit_length() for m in self.models)
        self.bnd_w = max(m.bnd.bit_length() for m in self.models)
        kw = dict(target=self.target, dsp=self.dsp)
        self.mul_x = MulPlan(k, k, name="x", karatsuba=self.karatsuba, **kw)
        # W = pd + x_hi << (k-s) + (~x_hi >> s) + z, modulo 2^(2k+3-s) (holds q1 = W >> (k+1-s))
        side = max(add_delay(k + 2), 2 * DELAY["gate"])        # E_j and z beside the pd tiles
        self.w_bits = 2 * k + 3 - s
        self.mul_pd = MulPlan(k + 1, self.dh_bits, name="pd", part="low", part_bits=self.w_bits,
                              extra=[(k - s, k + 1, 1), (0, k + 1 - s, 1), (0, 1, 1)], side_delay=side, **kw)
        # C = (q1*bnd << sh) - q1 - (q1[0:2] << k) modulo 2^(k+2), left in carry-save form
        lut = {"lut_bits": max(self.bnd_w, 1)} if self.bnd_luts else {}
        self.mul_pb = MulPlan(max(k + 2 - sh, 1), self.bnd_w, name="pb", part="low", part_bits=k + 2,
                              offset=sh, extra=[(0, k + 2, -1), (k, 2, -1)], carry_save=True, **lut, **kw)
        self.sum_d = SumPlan([[(0, k + 2, 1)] * 3] * 3, k + 2, name="d")
        self.mul_plans = (self.mul_x, self.mul_pd, self.mul_pb)
        self.pb_bits = k + 2 - sh
        self.segments = (self.mul_x.segments + self.mul_pd.segments + self.mul_pb.segments +
                         self.sum_d.segments + [Segment("r", 2 * DELAY["mux"])])

    def _build(self, pipe, a, b):
        k, s = self.k, self.delta_shift
        a = pipe.wire(lambda v: v[:k], a, shape=k, name="a_k")
        b = pipe.wire(lambda v: v[:k], b, shape=k, name="b_k")
        x = self.mul_x.build(pipe, a, b, probe="x")
        x_hi = pipe.wire(lambda v: v[k - 1:], x, shape=k + 1, name="x_hi", probe=True)
        x_lo = pipe.wire(lambda v: v[:k + 2], x, shape=k + 2, name="x_lo")
        # segment pd.pp: the tiles of x_hi * Delta_hi, and beside them E_j and z
        mod = 1 << (k + 2)
        es = []
        for j in range(3):
            c = pipe.table([((1 - j) * q) % mod for q in self.moduli], k + 2, f"c{j}")
            es.append(pipe.comb(lambda u, v: u + v, x_lo, c, shape=k + 2, name=f"e{j}"))
        nx = pipe.wire(lambda v: ~v[s:], x_hi, shape=k + 1 - s, name="nx")
        if s:
            z = pipe.comb(lambda v: v[:s] == 0, x_hi, shape=1, name="z")
        else:
            z = pipe.wire(Const(1, 1), shape=1, name="z")
        dh = pipe.table(constant_table(self.models, "delta_hi"), self.dh_bits, "delta_hi")
        w = self.mul_pd.build(pipe, x_hi, dh, extras=[x_hi, nx, z])
        q1 = pipe.wire(lambda v: v[k + 1 - s:k + 1 - s + k + 2], w, shape=k + 2, name="q1")
        pipe.comb(lambda v: v - 1, q1, shape=k + 1, name="q_est", probe=True)     # probe only
        bnd = pipe.table(constant_table(self.models, "bnd"), self.bnd_w, "bnd")
        q1_lo2 = pipe.wire(lambda v: v[:2], q1, shape=2, name="q1_lo2")
        cx, cy = self.mul_pb.build(pipe, q1, bnd, extras=[q1, q1_lo2])
        d0, d1, d2 = self.sum_d.build(pipe, [[cx, cy, e] for e in es])
        r0 = pipe.wire(lambda v: v, d0, shape=k + 2, name="r0", probe=True)
        r1 = pipe.comb(lambda u, v: Mux(v[k + 1], u, v), r0, d1, shape=k + 1, name="r1", probe=True)
        r = pipe.comb(lambda u, v: Mux(v[k + 1], u, v), r1, d2, shape=k, name="r", probe=True)
        return pipe.boundary("r", r)


class SpecialBarrettMul(SpecialBarrettPlan, ModMulBase):
    """:class:`SpecialBarrettPlan` as a raw unit: its ports and elaboration (:class:`~.reducer.ModMulBase`)."""
