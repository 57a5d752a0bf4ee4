"""A specification butterfly: the ports and latency of :class:`hhe_gen.cores.arith.Butterfly`, the
Z_q results computed directly with Amaranth's ``%`` at the prime's own width.

The compositional equivalence proof (:mod:`.equivalence`, ``butterflies="spec"``) elaborates
:class:`~hhe_gen.cores.ntt.IterativeNtt` with external butterflies, this unit on each lane
(:class:`SpecButterflyArray` on the core's ``lanes_port``), so the
solver sees q-bit products reduced by a constant modulus instead of the 16-bit Barrett
multipliers (the minimum width of cores/arith), and the NTT's data routing can be proven for free
inputs.  That the real butterfly computes the same function is the butterfly's own verification,
cited, not repeated: its golden model :func:`hhe_gen.models.butterfly.butterfly` (ct: a + b*w,
a - b*w; gs: a + b, (a - b)*w; mul: a*b, 0 - all mod q) checked against the simulation
(tests/cores/arith), and the formal proofs of the reducers in ``hhe-gen prove arith``
(:mod:`hhe_gen.formal.arith`: full bit-level a*b mod q at reduced widths, the z3 bounds of the
algorithms at full width).

Semantics (operands < q of the selected prime; the port bits above the prime's width are ignored
like the real unit's, the outputs are zero there):

    op    x                     y
    ct    (a + (b*w mod q)) mod q   (a - (b*w mod q)) mod q
    gs    (a + b) mod q             ((a - b) mod q) * w mod q
    mul   a*b mod q                 0
    add   (a + b) mod q             0
    sub   (a - b) mod q             0
    mac   (c + a*b) mod q           0
    gsh   (a + b) 2^-1 mod q        ((a - b) mod q) * w * 2^-1 mod q

Latency: ``latency`` cycles (the real unit's, for the same configuration), registers enabled by
``en`` like the real pipeline.  Only the Z_q field with a single prime (``sel`` is accepted and
ignored when there are several primes: not used by the proof).
"""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith.butterfly import OP_CODES
from hhe_gen.cores.arith.butterfly_array import butterfly_lanes_signature

__all__ = ["SpecButterfly", "SpecButterflyArray"]


class SpecButterfly(wiring.Component):
    """Port- and latency-compatible stand-in for :class:`hhe_gen.cores.arith.Butterfly` (module
    docstring).

    Parameters
    ----------
    plan : the real butterfly's :class:`~hhe_gen.cores.arith.butterfly.ButterflyPlan` (its latency,
           port width and moduli: one prime is used, the first)

    Members
    -------
    op, a, b, w, c, en, (sel), x, y : the real unit's ports
    latency, width, q
    """

    def __init__(self, plan):
        self.latency, self.width = plan.latency, plan.width
        self.q = plan.moduli["zq"][0]
        ports = {"op": In(3), "a": In(plan.width), "b": In(plan.width), "w": In(plan.width),
                 "c": In(plan.width), "en": In(1), "x": Out(plan.width), "y": Out(plan.width)}
        if plan.n_sel > 1:
            ports["sel"] = In(range(plan.n_sel))
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        q = self.q
        w = q.bit_length()
        a, b, tw, c = self.a[:w], self.b[:w], self.w[:w], self.c[:w]

        def mod(v, name):
            s = Signal(w, name=name)
            m.d.comb += s.eq(v % q)
            return s
        t = mod(b * tw, "bw")                       # ct product
        d = mod(a + q - b, "d")                     # gs difference
        x, y = Signal(w, name="x0"), Signal(w, name="y0")
        with m.Switch(self.op):
            with m.Case(OP_CODES["ct"]):
                m.d.comb += [x.eq((a + t) % q), y.eq((a + q - t) % q)]
            with m.Case(OP_CODES["gs"]):
                m.d.comb += [x.eq((a + b) % q), y.eq(d * tw % q)]
            with m.Case(OP_CODES["mul"]):
                m.d.comb += x.eq(a * b % q)
            with m.Case(OP_CODES["add"]):
                m.d.comb += x.eq((a + b) % q)
            with m.Case(OP_CODES["sub"]):
                m.d.comb += x.eq(d)
            with m.Case(OP_CODES["mac"]):
                m.d.comb += x.eq((c + a * b % q) % q)
            with m.Case(OP_CODES["gsh"]):
                inv2 = pow(2, -1, q)
                m.d.comb += [x.eq((a + b) % q * inv2 % q), y.eq(d * tw % q * inv2 % q)]
        for i in range(self.latency):
            xr, yr = Signal(w, name=f"x{i + 1}"), Signal(w, name=f"y{i + 1}")
            with m.If(self.en):
                m.d.sync += [xr.eq(x), yr.eq(y)]
            x, y = xr, yr
        m.d.comb += [self.x.eq(x), self.y.eq(y)]
        return m


class SpecButterflyArray(wiring.Component):
    """:class:`~hhe_gen.cores.arith.butterfly_array.ButterflyArray`'s stand-in: P
    :class:`SpecButterfly` units behind the same ``lanes_port`` (connect it to a core built with
    ``butterflies="external"``)."""

    def __init__(self, lanes: int, plan):
        self.lanes, self.plan = lanes, plan
        super().__init__({"lanes_port": In(butterfly_lanes_signature(plan, lanes))})

    def elaborate(self, platform):
        m = Module()
        port = self.lanes_port
        for j in range(self.lanes):
            bf = SpecButterfly(self.plan)
            m.submodules[f"bf{j}"] = bf
            m.d.comb += [bf.op.eq(port.op), bf.a.eq(port.a[j]), bf.b.eq(port.b[j]), bf.w.eq(port.w[j]),
                         bf.c.eq(port.c[j]), bf.en.eq(1), port.x[j].eq(bf.x), port.y[j].eq(bf.y)]
        return m
