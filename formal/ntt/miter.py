"""Miter: the iterative core (:class:`hhe_gen.cores.ntt.IterativeNtt`) and the pipelined one
(:class:`hhe_gen.cores.ntt.pipelined.PipelinedNtt`, SDF or MDC) transform the same polynomial to the
same result.

Harness: both cores at a small size (``small_pipelined_ntt``: N = 8, q = 17 or N = 16, q = 97),
the same direction, the same free input coefficients (``AnyConst`` < q; or, with
``inputs="impulse"``, one free coefficient at a free position and zeros elsewhere), each fed at
full rate through its own stream; the pipelined core's output beats are stored in the harness
(restored to the model's order with its ``output_positions``), and every output beat of the
iterative core must equal the stored words, which must have arrived by then.  Bounded model
check over the iterative command (the longer of the two).
"""

from __future__ import annotations

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume, Cover, Signal

from ..common.sby import formal_module

__all__ = ["MiterHarness"]


class MiterHarness:
    """Iterative vs pipelined on one polynomial (module docstring).

    Parameters
    ----------
    n : 8 or 16;  lanes : P of both cores;  arch : "sdf" or "mdc";  inverse : the direction
    inputs : "free" or "impulse"
    mutant : the pipelined core of the other direction (must be refuted)
    """

    def __init__(self, n: int, lanes: int, arch: str = "sdf", inverse: bool = False, inputs: str = "free",
                 mutant: bool = False):
        from hhe_gen.cores.ntt import IterativeNtt
        from hhe_gen.cores.ntt.pipelined import SMALL_PRIMES, small_pipelined_ntt
        self.n, self.lanes, self.inverse, self.inputs = n, lanes, bool(inverse), inputs
        self.q = SMALL_PRIMES[n]
        self.iterative = IterativeNtt(n, lanes, self.q)
        self.pipelined = small_pipelined_ntt(n, lanes, arch=arch, inverse=self.inverse != mutant)

    @property
    def depth(self) -> int:
        return max(self.iterative.command_cycles(self.inverse), self.pipelined.latency + self.pipelined.beats) + 3

    def build(self):
        it, pl, n, q, P = self.iterative, self.pipelined, self.n, self.q, self.lanes
        w = it.qbits
        beats = n // P
        m, _ = formal_module()
        m.submodules.iterative = it
        m.submodules.pipelined = pl
        a = [Signal(w, name=f"a{j}") for j in range(n)]
        for v in a:
            m.d.comb += [v.eq(AnyConst(w)), Assume(v < q)]
        if self.inputs == "impulse":
            pos = Signal(range(n), name="impulse_pos")
            m.d.comb += pos.eq(AnyConst(range(n)))
            for j, v in enumerate(a):
                m.d.comb += Assume((pos == j) | (v == 0))

        # iterative: one command, the beats at full rate, output always taken
        sent = Signal(name="sent")
        m.d.sync += sent.eq(sent | it.cmd.ready)
        m.d.comb += [it.cmd.valid.eq(~sent), it.cmd.payload.inverse.eq(int(self.inverse)),
                     it.cmd.payload.sel.eq(0), it.o_stream.ready.eq(1)]
        it_beat = Signal(range(beats + 1), name="it_in_beat")
        m.d.comb += it.i_stream.valid.eq(sent & (it_beat < beats))
        pl_beat = Signal(range(beats + 1), name="pl_in_beat")
        pl_data = pl.i_stream.payload.data
        m.d.comb += [pl.i_stream.valid.eq(pl_beat < beats), pl.o_stream.ready.eq(1)]
        if hasattr(pl.i_stream.payload, "sel"):
            m.d.comb += pl.i_stream.payload.sel.eq(0)
        for counter, port in ((it_beat, it.i_stream.payload), (pl_beat, pl_data)):
            with m.Switch(counter):
                for b in range(beats):
                    with m.Case(b):
                        m.d.comb += [port[p].eq(a[b * P + p]) for p in range(P)]
        with m.If(it.i_stream.valid & it.i_stream.ready):
            m.d.sync += it_beat.eq(it_beat + 1)
        with m.If(pl.i_stream.valid & pl.i_stream.ready):
            m.d.sync += pl_beat.eq(pl_beat + 1)

        # the pipelined outputs, stored at their model positions
        positions = pl.output_positions()
        store = [Signal(w, name=f"pl_out{i}") for i in range(n)]
        have = [Signal(name=f"pl_have{i}") for i in range(n)]
        pl_out = Signal(range(beats + 1), name="pl_out_beat")
        with m.If(pl.o_stream.valid & pl.o_stream.ready & (pl_out < beats)):
            m.d.sync += pl_out.eq(pl_out + 1)
            with m.Switch(pl_out):
                for b in range(beats):
                    with m.Case(b):
                        for p in range(P):
                            i = positions[b * P + p]
                            m.d.sync += [store[i].eq(pl.o_stream.payload.data[p]), have[i].eq(1)]

        it_out = Signal(range(beats + 1), name="it_out_beat")
        with m.If(it.o_stream.valid & it.o_stream.ready):
            m.d.sync += it_out.eq(it_out + 1)
            with m.Switch(it_out):
                for b in range(beats):
                    with m.Case(b):
                        for p in range(P):
                            i = b * P + p
                            m.d.comb += Assert(have[i] & (it.o_stream.payload[p] == store[i]), f"output {i}")
        finished = Signal(name="finished")
        with m.If(it.done):
            m.d.sync += finished.eq(1)
        cycle = Signal(range(self.depth + 2), name="cycle")
        m.d.sync += cycle.eq(cycle + 1)
        with m.If(cycle == self.depth - 1):
            m.d.comb += Assert(finished, "the iterative command completes")
        m.d.comb += Cover(it.done)
        return m
