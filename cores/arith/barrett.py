"""Generic Barrett modular multiplier (bit-exact with :class:`hhe_gen.models.modarith.BarrettReducer`)."""

from __future__ import annotations

from hhe_gen.models.modarith import BarrettReducer
from hhe_gen.params.errors import ParameterError

from .constants import constant_table, quiet_on_error
from .multiplier import MulPlan
from .reducer import ModMulBase, barrett_tail_segments

__all__ = ["BarrettMul"]


class BarrettMul(ModMulBase):
    """a*b mod q with generic Barrett reduction, q = moduli[sel] selected at run time.

    Parameters
    ----------
    moduli : int or list of int   odd moduli, all of the same bit length k (the usual RNS basis;
                                  k fixes every shift), q < 2^width
    width : int                   port width, 16 .. 64
    latency : int or None         register stages, >= 3 (default 3)
    target : str                  "ecp5" | "xilinx" | "generic" (multiplier tiles)
    karatsuba : bool              one-level Karatsuba in the three products (default False)

    Members: the raw-unit ports and attributes (see :class:`~hhe_gen.cores.arith.reducer.ModMulBase`);
    ``k`` and the table columns ``mu`` (k+1 bits) and ``q``.

    Datapath (names = the model's trace keys, each a probe):
      1. ``x = a*b``: k x k product (multiplier "x")
      2. ``x_hi = x >> (k-1)``; ``p = x_hi * mu``: (k+1) x (k+1) product, exact; ``q_est`` = its
         high k+1 bits (multiplier "p", part "high")
      3. ``qq = q_est * q`` modulo 2^(k+2): (k+1) x k low-part product (multiplier "qq")
      4. ``r0 = x - qq`` modulo 2^(k+2) (in [0, 3q)); ``r1``, ``r``: the two constant-time
         corrections, with r0 - q and r0 - 2q computed side by side (one adder delay, segment
         "d"), then two selects (segment "r")
    Probes hold the values modulo 2^(their width): x (2k), x_hi (k+1), p (2k+2), q_est (k+1),
    qq (k+2), r0 (k+2), r1 (k+1), r (k).

    Latency: ``latency`` cycles, initiation interval 1.  Minimum 3: one register right after the
    DSP tiles of each product; the other registers are placed by
    :func:`~hhe_gen.cores.arith.pipeline.schedule` (boundaries: ``in``, ``x.pp``, ``x.t1`` ...,
    ``p.pp``, ``p.t*``, ``qq.pp``, ``qq.t*``, ``r0``, ``d``, ``r``; extras at the output).
    """

    kind = "barrett"
    probe_names = ("x", "x_hi", "p", "q_est", "qq", "r0", "r1", "r")

    @quiet_on_error
    def __init__(self, moduli, width, latency=None, *, target="ecp5", karatsuba=False):
        self._args = (moduli, width)
        self._setup(moduli, width, latency, target, karatsuba)

    def _plan(self):
        self.models = tuple(BarrettReducer(q, self.width) for q in self.moduli)
        ks = {m.k for m in self.models}
        if len(ks) != 1:
            raise ParameterError("moduli", self.moduli, "moduli of one bit length k (k fixes the shifts)")
        k = self.k = ks.pop()
        kw = dict(target=self.target, karatsuba=self.karatsuba)
        self.mul_x = MulPlan(k, k, name="x", **kw)
        self.mul_p = MulPlan(k + 1, k + 1, part="high", part_bits=k + 1, name="p", **kw)
        self.mul_q = MulPlan(k + 1, k, part="low", part_bits=k + 2, name="qq", **kw)
        self.mul_plans = (self.mul_x, self.mul_p, self.mul_q)
        self.segments = (self.mul_x.segments + self.mul_p.segments + self.mul_q.segments +
                         barrett_tail_segments(k))

    def _build(self, pipe, a, b):
        k = self.k
        a = pipe.comb(lambda v: v[:k], a, name="a_k")
        b = pipe.comb(lambda v: v[:k], b, name="b_k")
        x = self.mul_x.build(pipe, a, b, probe="x")
        x_hi = pipe.comb(lambda v: v[k - 1:], x, shape=k + 1, name="x_hi", probe=True)
        mu = pipe.table(constant_table(self.models, "mu"), k + 1, "mu")
        q_est = self.mul_p.build(pipe, x_hi, mu, probe="q_est", probe_full="p")
        q = pipe.table(self.moduli, k, "q")
        qq = self.mul_q.build(pipe, q_est, q, probe="qq")
        return self._barrett_tail(pipe, x, qq)

