"""DNA-HHE special-prime Barrett multiplier (bit-exact with
:class:`hhe_gen.models.modarith.SpecialPrimeBarrett`, seeds/000 section III-B)."""

from __future__ import annotations

from hhe_gen.models.modarith import SpecialPrimeBarrett
from hhe_gen.params.errors import ParameterError

from .constants import check_int, constant_table, quiet_on_error
from .multiplier import MulPlan
from .pipeline import Segment, add_delay
from .reducer import ModMulBase, barrett_tail_segments

__all__ = ["SpecialBarrettMul"]


class SpecialBarrettMul(ModMulBase):
    """a*b mod q for DNA-HHE primes q = 2^k - 2N*bnd + 1 (mu = 2^k + Delta - 1), q = moduli[sel].

    Both constant products of Barrett reduction become narrow: the mu product is x_hi * Delta_hi
    ((k+1) x bitlen(Delta_hi), Delta = Delta_hi * 2^s) plus shifts and adds, the q product is
    q_est * bnd ((k+1) x bnd_bits, only its low k+1-log_n bits) plus shifts and adds.

    Parameters
    ----------
    moduli : int or list of int   primes of the form above, all with the same k and N
    k : int                       bit length of every prime, 16 .. 64
    log_n : int                   N = 2^log_n (1 .. 17)
    latency : int or None         register stages, >= 3 (default 3)
    bnd_bits : int                bnd < 2^bnd_bits (1 .. 16, the paper: 10)
    delta_shift : int or None     s (zero bits dropped from Delta), common to all primes; default
                                  min(log_n + 1, trailing zeros of every Delta)
    width : int or None           port width, k .. 64 (default k)
    target, karatsuba             multiplier tiles; karatsuba defaults to True here (the a*b
                                  product is the only wide one: 6 instead of 9 tiles at 54 bits)

    Datapath (names = the model's trace keys, each a probe, modulo 2^(probe width)):
      1. ``x = a*b`` (multiplier "x"); ``x_hi = x >> (k-1)``
      2. ``pd = x_hi * delta_hi`` (multiplier "pd", (k+1) x bitlen(delta_hi))
      3. ``p = (x_hi << k) + (pd << s) - x_hi`` (segment "p"); ``q_est = p >> (k+1)``
      4. ``pb = q_est * bnd`` modulo 2^(k+1-log_n) (multiplier "pb", low part; absent when
         k+1 <= log_n)
      5. ``qq = (q_est << k) - (pb << (log_n+1)) + q_est`` modulo 2^(k+2) (segment "qq")
      6. ``r0 = x - qq`` modulo 2^(k+2); ``r1``, ``r`` the two constant-time corrections (r0 - q
         and r0 - 2q side by side in segment "d", the selects in segment "r")

    Latency: ``latency`` cycles, initiation interval 1.  Minimum 3 (a register after the tiles of
    x, pd and pb); other registers placed by :func:`~hhe_gen.cores.arith.pipeline.schedule`.
    """

    kind = "special-barrett"
    probe_names = ("x", "x_hi", "pd", "p", "q_est", "pb", "qq", "r0", "r1", "r")

    @quiet_on_error
    def __init__(self, moduli, k, log_n, latency=None, *, bnd_bits=10, delta_shift=None, width=None,
                 target="ecp5", karatsuba=True):
        self.k = check_int(k, "k", 16, 64)
        self.log_n = check_int(log_n, "log_n", 1, 17)
        self.bnd_bits = check_int(bnd_bits, "bnd_bits", 1, 16)
        self._delta_shift = delta_shift
        width = k if width is None else width
        if isinstance(width, int) and not isinstance(width, bool) and width < k:
            raise ParameterError("width", width, f"an integer in k = {k} .. 64")
        self._setup(moduli, width, latency, target, karatsuba)

    def _plan(self):
        k, log_n = self.k, self.log_n
        first = [SpecialPrimeBarrett(q, k, log_n, bnd_bits=self.bnd_bits, width=self.width) for q in self.moduli]
        if self._delta_shift is None:
            shift = min(min((m.delta & -m.delta).bit_length() - 1 for m in first), log_n + 1)
        else:
            shift = self._delta_shift
        self.models = tuple(SpecialPrimeBarrett(q, k, log_n, bnd_bits=self.bnd_bits, delta_shift=shift,
                                                width=self.width) for q in self.moduli)
        self.delta_shift = shift
        self.dh_bits = max(m.delta_hi.bit_length() for m in self.models)
        self.bnd_w = max(m.bnd.bit_length() for m in self.models)
        kw = dict(target=self.target)
        self.mul_x = MulPlan(k, k, name="x", karatsuba=self.karatsuba, **kw)
        self.mul_pd = MulPlan(k + 1, self.dh_bits, name="pd", **kw)
        self.pb_bits = min(k + 1 - log_n, k + 1 + self.bnd_w)
        plans = [self.mul_x, self.mul_pd]
        segs = self.mul_x.segments + self.mul_pd.segments + [Segment("p", 2 * add_delay(2 * k + 2))]
        if self.pb_bits > 0:
            part = "full" if self.pb_bits == k + 1 + self.bnd_w else "low"
            self.mul_pb = MulPlan(k + 1, self.bnd_w, part=part, part_bits=None if part == "full" else self.pb_bits,
                                  name="pb", **kw)
            plans.append(self.mul_pb)
            segs += self.mul_pb.segments
        else:
            self.mul_pb = None
        self.mul_plans = tuple(plans)
        self.segments = segs + [Segment("qq", 2 * add_delay(k + 2))] + barrett_tail_segments(k)

    def _build(self, pipe, a, b):
        k, s, sh = self.k, self.delta_shift, self.log_n + 1
        a = pipe.comb(lambda v: v[:k], a, name="a_k")
        b = pipe.comb(lambda v: v[:k], b, name="b_k")
        x = self.mul_x.build(pipe, a, b, probe="x")
        x_hi = pipe.comb(lambda v: v[k - 1:], x, shape=k + 1, name="x_hi", probe=True)
        dh = pipe.table(constant_table(self.models, "delta_hi"), self.dh_bits, "delta_hi")
        pd = self.mul_pd.build(pipe, x_hi, dh, probe="pd")
        p = pipe.comb(lambda u, v: (u << k) - u + (v << s), x_hi, pd, shape=2 * k + 2, name="p", probe=True)
        p = pipe.boundary("p", p)
        q_est = pipe.comb(lambda v: v[k + 1:], p, shape=k + 1, name="q_est", probe=True)
        if self.mul_pb is not None:
            bnd = pipe.table(constant_table(self.models, "bnd"), self.bnd_w, "bnd")
            pb = self.mul_pb.build(pipe, q_est, bnd, probe="pb")
            qq = pipe.comb(lambda u, v: (u << k) - (v << sh) + u, q_est, pb, shape=k + 2, name="qq", probe=True)
        else:
            qq = pipe.comb(lambda u: (u << k) + u, q_est, shape=k + 2, name="qq", probe=True)
        qq = pipe.boundary("qq", qq)
        return self._barrett_tail(pipe, x, qq)
