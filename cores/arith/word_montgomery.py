"""Word-level Montgomery multiplier (bit-exact with :class:`hhe_gen.models.modarith.WordMontgomeryReducer`)."""

from __future__ import annotations

from amaranth.hdl import Mux

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.modarith import WordMontgomeryReducer

from .constants import check_int, constant_table
from .multiplier import MulPlan
from .pipeline import DELAY
from .reducer import ModMulBase, ReducerPlan, correction_segments

__all__ = ["WordMontgomeryPlan", "WordMontgomeryMul"]


class WordMontgomeryPlan(ReducerPlan):
    """a*b*R^-1 mod q (R = 2^(w*L), L = ceil(width/w)) for q = 1 (mod 2^w), q = moduli[sel].

    Because -q^-1 = -1 (mod 2^w), each word's quotient digit is the two's complement of the low
    word, and the only multiplier besides a*b is m * q_hi (w x bitlen(q_hi)) per word step.

    Parameters
    ----------
    moduli : int or list of int   odd moduli below 2^width with q = 1 (mod 2^word_bits)
    width : int                   16 .. 64 (also fixes R)
    word_bits : int               w, 1 .. width-1 (18 or 17 fill an ECP5 / Xilinx tile)
    latency : int or None         register stages, >= 1 + (word steps whose product uses tiles)
    target, karatsuba             multiplier tiles (karatsuba applies to a*b)
    dsp : str                     "infer" | "primitive" | "model" (ecp5 MULT18X18D primitives)

    Datapath (names = the model's trace keys, each a probe, modulo 2^(probe width)):
      ``x = a*b`` (multiplier "x"), ``t0 = x``; for i = 0 .. L-1, with ``lo{i} = t{i} mod 2^w``,
      ``m{i} = -lo{i} mod 2^w`` and ``carry{i} = lo{i} != 0`` (the model's step
      ``t{i+1} = (t{i} >> w) + m{i}*q_hi + carry{i}``): since m{i} = 2^w - lo{i} when lo{i} != 0,
      ``t{i+1} = (t{i} >> w) - lo{i}*q_hi + carry{i}*(q_hi*2^w + 1)`` - the multiplier "s{i}"
      subtracts the product lo{i}*q_hi (no negation before the tiles: lo{i} is a slice of t{i})
      and the shifted t and the gated per-prime constant are two more rows of its tree (m{i} is
      not built; carry{i} is an OR of the word, computed beside the tiles);
      ``r = t{L} - q if t{L} >= q``.
      t{i} is held in bitlen(max((q-1)^2 >> (w*i)) + q) bits (the model's bound t{i} < x/2^(wi) + q).

    Latency: ``latency`` cycles, initiation interval 1.  Minimum: one register after the tiles of
    a*b and after those of every word step.
    """

    kind = "montgomery"

    @quiet_on_error
    def __init__(self, moduli, width, word_bits, latency=None, *, target="ecp5", karatsuba=False, dsp="infer"):
        self.word_bits = check_int("word_bits", word_bits, 1, 63)
        self._setup(moduli, width, latency, target, karatsuba, dsp)

    def _plan(self):
        w = self.word_bits
        self.models = tuple(WordMontgomeryReducer(q, self.width, w) for q in self.moduli)
        self.words = self.models[0].words
        self.kq = kq = max(q.bit_length() for q in self.moduli)
        self.qh_bits = max(max(m.q_hi.bit_length() for m in self.models), 1)
        qmax = max(self.moduli)
        self.t_bits = [max(((qmax - 1) ** 2 >> (w * i)) + qmax, 1).bit_length() for i in range(self.words + 1)]
        self.t_bits[0] = 2 * kq
        kw = dict(target=self.target, dsp=self.dsp)
        self.mul_x = MulPlan(kq, kq, name="x", karatsuba=self.karatsuba, **kw)
        plans, segs = [self.mul_x], list(self.mul_x.segments)
        self.steps = []
        for i in range(self.words):
            shifted = self.t_bits[i] - w
            step = MulPlan(w, self.qh_bits, part="low", part_bits=self.t_bits[i + 1], name=f"s{i}", sign=-1,
                           extra=[(0, shifted, 1), (0, self.qh_bits + w + 1, 1)],
                           side_delay=3 * DELAY["gate"], **kw)
            self.steps.append(step)
            plans.append(step)
            segs += step.segments
        self.mul_plans = tuple(plans)
        self.segments = segs + correction_segments(self.t_bits[-1], names=("r",))
        self.probe_names = ("x", "r") + tuple(f"{n}{i}" for i in range(self.words)
                                              for n in ("lo", "carry", "t")) + (f"t{self.words}",)
        self.probe_names = tuple(n for n in self.probe_names if n != "t0") + ("t0",)

    def _build(self, pipe, a, b):
        w, kq = self.word_bits, self.kq
        a = pipe.wire(lambda v: v[:kq], a, shape=kq, name="a_k")
        b = pipe.wire(lambda v: v[:kq], b, shape=kq, name="b_k")
        t = self.mul_x.build(pipe, a, b, probe="x")
        pipe.probes["t0"] = pipe.probes["x"]
        kconst = constant_table(self.models, "q_hi")
        for i, step in enumerate(self.steps):
            lo = pipe.wire(lambda v: v[:w], t, shape=w, name=f"lo{i}", probe=True)
            t_sh = pipe.wire(lambda v: v[w:], t, shape=self.t_bits[i] - w, name=f"tsh{i}")   # q > 2^w: t{i} > w bits
            # segment s{i}.pp: the tiles of lo * q_hi and beside them the gated constant row
            carry = pipe.comb(lambda v: v != 0, lo, shape=1, name=f"carry{i}", probe=True)
            k = pipe.table([(qh << w) + 1 for qh in kconst], self.qh_bits + w + 1, "qhw")
            row = pipe.comb(lambda c, v: Mux(c, v, 0), carry, k, shape=self.qh_bits + w + 1, name=f"crow{i}")
            q_hi = pipe.table(kconst, self.qh_bits, "q_hi")
            t = step.build(pipe, lo, q_hi, extras=[t_sh, row], probe=f"t{i + 1}")
        q = pipe.table(self.moduli, kq, "q")
        r = self._correct(pipe, t, q, "r", self.width)
        return pipe.boundary("r", r)


class WordMontgomeryMul(WordMontgomeryPlan, ModMulBase):
    """:class:`WordMontgomeryPlan` as a raw unit: its ports and elaboration (:class:`~.reducer.ModMulBase`)."""
