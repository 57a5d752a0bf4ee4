"""Broken packetizers the proofs must refute."""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from hhe_gen.cores.net.packetizer import Packetizer

__all__ = ["GappyPacketizer"]


class GappyPacketizer(wiring.Component):
    """A packetizer whose ``valid`` drops for one cycle after the third word of every packet (a gap
    LiteEth would turn into a broken frame): the real core behind a gate."""

    def __init__(self, max_segment: int):
        self.inner = Packetizer(max_segment)
        super().__init__(self.inner.signature)

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self.inner
        count = Signal(8)
        gap = Signal()
        with m.If(self.o_stream.valid & self.o_stream.ready):
            m.d.sync += count.eq(count + 1)
            with m.If(self.o_stream.payload.last):
                m.d.sync += count.eq(0)
        with m.If(~gap & (count == 3) & inner.o_stream.valid):
            m.d.sync += gap.eq(1)
        with m.Elif(gap):
            m.d.sync += gap.eq(0)
        m.d.comb += [inner.cfg.eq(self.cfg), inner.cmd.valid.eq(self.cmd.valid), inner.cmd.payload.eq(self.cmd.payload),
                     self.cmd.ready.eq(inner.cmd.ready), inner.i_stream.valid.eq(self.i_stream.valid),
                     inner.i_stream.payload.eq(self.i_stream.payload), self.i_stream.ready.eq(inner.i_stream.ready),
                     self.o_stream.valid.eq(inner.o_stream.valid & ~gap),
                     self.o_stream.payload.eq(inner.o_stream.payload),
                     inner.o_stream.ready.eq(self.o_stream.ready & ~gap),
                     inner.abort.eq(self.abort), self.busy.eq(inner.busy), self.done.eq(inner.done),
                     self.next_sequence.eq(inner.next_sequence)]
        return m
