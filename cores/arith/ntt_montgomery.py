"""ABC-FHE NTT-friendly Montgomery multiplier with shift-add QInv (bit-exact with
:class:`hhe_gen.models.modarith.NttFriendlyMontgomery`, eq. 4-11)."""

from __future__ import annotations

from amaranth.hdl import Mux

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.modarith import NttFriendlyMontgomery
from hhe_gen.params.errors import ParameterError

from .constants import check_int
from .multiplier import MulPlan, SumPlan
from .pipeline import DELAY, Segment
from .reducer import ModMulBase, ReducerPlan

__all__ = ["NttMontgomeryPlan", "NttMontgomeryMul"]


class NttMontgomeryPlan(ReducerPlan):
    """a*b*R^-1 mod q (R = 2^r) for primes q = 2^e + kk*2N + 1 with a sparse kk, q = moduli[sel].

    Only a*b uses DSP tiles: m = t_lo * QInv mod R and m*q are shift-add networks (the signed
    digits ``qinv_terms`` / ``q_terms`` of the model).  The networks differ per prime, so one
    network per prime is built and the result is selected by ``sel`` (constant time: all are
    computed; area grows with the number of primes).

    Parameters
    ----------
    moduli : int or list of int   primes of that form (see the model), q < 2^width
    log_n : int                   N = 2^log_n, 1 .. 17
    width : int                   16 .. 64
    latency : int or None         register stages, >= 1 (default 1)
    r_bits : int or None          R = 2^r_bits, bitlen(q) .. 64, common to all primes (default width)
    max_kk_terms : int            1 .. 4 (the paper: 3)
    negated : bool                QInv = -q^-1 (t = (x + m*q)/R, subtract q if >= q) instead of the
                                  paper's q^-1 (t = (x - m*q)/R, add q if negative)
    target, karatsuba             multiplier tiles of a*b
    dsp : str                     "infer" | "primitive" | "model" (ecp5 MULT18X18D primitives)

    Datapath (names = the model's trace keys, each a probe, modulo 2^(probe width)):
      1. ``x = a*b`` (multiplier "x"); ``t_lo = x mod R``
      2. ``m = sum(+-t_lo << p) mod R`` (adder tree "m", one per prime, then selected)
      3. ``mq = sum(+-m << p)`` (compressor tree "mq", one per prime, left in carry-save form:
         two words, both selected; mq itself is not built)
      4. sums "t": ``d = x - mq`` (negated: ``x + mq``) from x and the two words, and beside it
         ``d + q*R`` (negated: ``d - q*R``), modulo 2^(r+kq+2); ``t = d >> r`` (exact: d is a
         multiple of R)
      5. segment "r": ``r = t + q if t < 0 else t`` (negated: ``t - q if t >= q else t``), a select
         between the two sums

    Latency: ``latency`` cycles, initiation interval 1.  Minimum 1 (the register after the a*b
    tiles); the others go where :func:`~hhe_gen.cores.arith.pipeline.schedule` balances the
    estimated delays of the compressor levels and adder chunks.
    """

    kind = "ntt-montgomery"
    probe_names = ("x", "t_lo", "m", "d", "t", "r")

    @quiet_on_error
    def __init__(self, moduli, log_n, width, latency=None, *, r_bits=None, max_kk_terms=3, negated=False,
                 target="ecp5", karatsuba=False, dsp="infer"):
        self.log_n = check_int("log_n", log_n, 1, 17)
        if negated not in (True, False):
            raise ParameterError("negated", negated, "True or False")
        self.negated, self._r_bits, self.max_kk_terms = negated, r_bits, max_kk_terms
        self._setup(moduli, width, latency, target, karatsuba, dsp)

    def _plan(self):
        self.models = tuple(NttFriendlyMontgomery(q, self.log_n, self.width, r_bits=self._r_bits,
                                                  max_kk_terms=self.max_kk_terms, negated=self.negated)
                            for q in self.moduli)
        r = self.r_bits = self.models[0].r_bits
        if self._r_bits is None and any(m.r_bits != r for m in self.models):
            raise ParameterError("r_bits", self._r_bits, "one R for all moduli")
        self.kq = kq = max(q.bit_length() for q in self.moduli)
        self.mul_x = MulPlan(kq, kq, name="x", target=self.target, karatsuba=self.karatsuba, dsp=self.dsp)
        self.net_m = SumPlan([[(p, r - p, s) for s, p in m.qinv_terms] for m in self.models], r, name="m")
        self.mq_bits = r + kq
        self.d_bits = d = r + kq + 2           # |d| < 2^(r+kq): the sign fits
        self.net_mq = SumPlan([[(p, r, s) for s, p in m.q_terms] for m in self.models], d, name="mq",
                              carry_save=True)
        sg = 1 if self.negated else -1
        self.sum_t = SumPlan([[(0, 2 * kq, 1), (0, d, sg), (0, d, sg)],
                              [(0, 2 * kq, 1), (0, d, sg), (0, d, sg), (r, kq, -sg)]], d, name="t")
        self.mul_plans = (self.mul_x,)
        sel_delay = DELAY["mux"] if len(self.moduli) > 1 else 0.0
        self.segments = (self.mul_x.segments + self.net_m.segments + [Segment("m_sel", sel_delay)] +
                         self.net_mq.segments + [Segment("mq_sel", sel_delay)] + self.sum_t.segments +
                         [Segment("r", DELAY["mux"])])
        self.shift_add_rows = sum(len(m.qinv_terms) + len(m.q_terms) for m in self.models)

    def _build(self, pipe, a, b):
        kq, r = self.kq, self.r_bits
        a = pipe.wire(lambda v: v[:kq], a, shape=kq, name="a_k")
        b = pipe.wire(lambda v: v[:kq], b, shape=kq, name="b_k")
        x = self.mul_x.build(pipe, a, b, probe="x")
        t_lo = pipe.wire(lambda v: v[:r], x, shape=r, name="t_lo", probe=True)
        ms = self.net_m.build(pipe, [[t_lo] * len(m.qinv_terms) for m in self.models])
        m = pipe.select(ms, "m", probe=True)
        m = pipe.boundary("m_sel", m)
        pairs = self.net_mq.build(pipe, [[m] * len(md.q_terms) for md in self.models])
        ws = pipe.select([p[0] for p in pairs], "mq_s")
        wc = pipe.select([p[1] for p in pairs], "mq_c")
        ws, wc = pipe.boundary("mq_sel", ws, wc)
        q = pipe.table(self.moduli, kq, "q")
        d0, d1 = self.sum_t.build(pipe, [[x, ws, wc], [x, ws, wc, q]])
        d0 = pipe.wire(lambda v: v.as_signed(), d0, name="d", probe=True)
        t = pipe.wire(lambda v: v[r:].as_signed(), d0, name="t", probe=True)
        t2 = pipe.wire(lambda v: v[r:].as_signed(), d1, name="t2")
        if self.negated:            # t2 = t - q: keep t when t2 < 0
            res = pipe.comb(lambda u, v: Mux(v[-1], u, v), t, t2, shape=self.width, name="r", probe=True)
        else:                       # t2 = t + q: take it when t < 0
            res = pipe.comb(lambda u, v: Mux(u[-1], v, u), t, t2, shape=self.width, name="r", probe=True)
        return pipe.boundary("r", res)


class NttMontgomeryMul(NttMontgomeryPlan, ModMulBase):
    """:class:`NttMontgomeryPlan` as a raw unit: its ports and elaboration (:class:`~.reducer.ModMulBase`)."""
