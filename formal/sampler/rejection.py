"""Rejection filter (uniform mod q, Rubato round constants): no rejected word ever comes out.

Harness: one :class:`RejectionFilter` with free candidate words and free back-pressure under the
stream rules; with several moduli, the selected modulus is a free constant.  Proven by
k-induction at full width (e.g. 32-bit words and the 25/26-bit Rubato q, or 54-bit RNS primes):

* every output is ``< q`` and equals the most recent input word ANDed with ``2^bitlen(q) - 1``;
* every accepted word comes out exactly once and a rejected one never does: the number of
  accepted-but-not-yet-output words equals ``o_stream.valid`` (0 or 1) at all times;
* the output obeys the stream rules.

Covers: a value comes out; a value comes out right after a word was rejected; back-pressure.
"""

from amaranth.asserts import AnyConst
from amaranth.hdl import Array, Assert, Const, Cover, Elaboratable, Module, Signal

from hhe_gen.cores.sampler.uniform import RejectionFilter

from ._props import check_source, drive_source


class RejectionHarness(Elaboratable):
    """Formal harness around one :class:`RejectionFilter` configuration."""

    def __init__(self, word_bits: int, moduli, core=RejectionFilter):
        self.dut = core(word_bits, moduli)

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        drive_source(m, dut.i_stream, tag="i")
        check_source(m, dut.o_stream, tag="o")
        vb = dut.value_bits
        if len(dut.moduli) == 1:
            q, mask = dut.moduli[0], (1 << dut.moduli[0].bit_length()) - 1
        else:
            sel = Signal.like(dut.modulus)
            m.d.comb += [sel.eq(AnyConst(sel.shape())), dut.modulus.eq(sel)]
            q = Array(Const(x, vb) for x in dut.moduli)[sel]
            mask = Array(Const((1 << x.bit_length()) - 1, vb) for x in dut.moduli)[sel]

        push = dut.i_stream.valid & dut.i_stream.ready
        pop = dut.o_stream.valid & dut.o_stream.ready
        incoming = Signal(vb)
        m.d.comb += incoming.eq(dut.i_stream.payload[:vb] & mask)
        accepted = push & (incoming < q)
        last = Signal(vb)           # the most recent input word, masked
        owed = Signal(2)            # accepted words not yet output
        rejected_last = Signal()
        with m.If(push):
            m.d.sync += [last.eq(incoming), rejected_last.eq(~accepted)]
        m.d.sync += owed.eq(owed + accepted - pop)

        m.d.comb += Assert(owed == dut.o_stream.valid)
        with m.If(dut.o_stream.valid):
            m.d.comb += [Assert(dut.o_stream.payload < q), Assert(dut.o_stream.payload == last)]
        m.d.comb += [Cover(pop),
                     Cover(pop & ~rejected_last & dut.i_stream.valid & (incoming >= q)),
                     Cover(dut.o_stream.valid & ~dut.o_stream.ready & dut.i_stream.valid)]
        prev_rejected = Signal()
        m.d.sync += prev_rejected.eq(push & ~accepted)
        m.d.comb += Cover(prev_rejected & push & accepted)
        return m
