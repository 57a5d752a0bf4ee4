"""ByteGatherer: no byte lost, duplicated or reordered (proof by k-induction at full size).

Every structure (beat register, shift register, beat window, byte buffer) is proven with the
same harness: their ``count`` / ``buffer`` members describe the held bytes the same way.

Harness: the input beats and the consumer's ``ready`` (and ``take``, ``clear``) are free
(``AnySeq``) under the stream rules.  A free byte index ``n`` (``AnyConst``) is watched: the
harness counts bytes accepted (``in_pos``) and bytes consumed (``out_pos``) since the last
``clear``, records byte ``n`` when its beat is accepted, and asserts that

* ``count == in_pos - out_pos`` (no byte appears or vanishes inside);
* the word that consumes stream position ``n`` carries the recorded byte at offset
  ``n - out_pos`` (so every output byte is the right input byte: nothing lost, reused or
  reordered, for every ``n`` since ``n`` is arbitrary);
* bytes above ``count`` in the buffer are zero, the watched byte sits at ``n - out_pos``
  while it waits, and the structure's counters are in range (the inductive invariants);
* the output obeys the stream rules;

and covers a word leaving, a word leaving while a beat arrives, and back-pressure.  The byte
counters are 7 bits, so ``n`` ranges over the first 64 stream positions after a clear
(assumed: at most 100 bytes per message in the proof; the invariants do not depend on it).
"""

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Module, Signal

from hhe_gen.cores.sampler.bytes import ByteGatherer

from ._props import check_source, drive_source

POSITIONS = 7   # bits of the byte counters


class GathererHarness(Elaboratable):
    """Formal harness around one :class:`ByteGatherer` configuration."""

    def __init__(self, in_bytes: int, word_bytes: int, variable: bool = False, core=ByteGatherer,
                 structure=None):
        kwargs = {"structure": structure} if structure else {}
        self.dut = core(in_bytes, word_bytes, variable=variable, **kwargs)

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        w, k = dut.in_bytes, dut.word_bytes
        clear = Signal()
        m.d.comb += clear.eq(AnySeq(1))
        drive_source(m, dut.i_stream, exempt=clear, tag="i")
        check_source(m, dut.o_stream, exempt=clear, tag="o")
        m.d.comb += dut.abort.eq(clear)
        take = dut.take if dut.variable else k
        if dut.variable:
            m.d.comb += [dut.take.eq(AnySeq(dut.take.shape())), Assume((dut.take >= 1) & (dut.take <= k))]
            prev_take = Signal.like(dut.take)
            pending = Signal()
            m.d.sync += [prev_take.eq(dut.take), pending.eq(dut.o_stream.valid & ~dut.o_stream.ready & ~clear)]
            with m.If(pending):
                m.d.comb += Assume(dut.take == prev_take)

        n = Signal(POSITIONS - 1)
        m.d.comb += n.eq(AnyConst(POSITIONS - 1))
        in_pos = Signal(POSITIONS)
        out_pos = Signal(POSITIONS)
        seen = Signal()
        value = Signal(8)
        m.d.comb += Assume(in_pos <= 100)

        push = dut.i_stream.valid & dut.i_stream.ready
        pop = dut.o_stream.valid & dut.o_stream.ready
        in_off = Signal(POSITIONS + 1)
        out_off = Signal(POSITIONS + 1)
        m.d.comb += [in_off.eq(n - in_pos), out_off.eq(n - out_pos)]

        with m.If(clear):
            m.d.sync += [in_pos.eq(0), out_pos.eq(0), seen.eq(0)]
        with m.Else():
            with m.If(push):
                m.d.sync += in_pos.eq(in_pos + w)
                with m.If((in_pos <= n) & (n < in_pos + w)):
                    m.d.sync += [seen.eq(1), value.eq(dut.i_stream.payload.word_select(in_off[:3], 8))]
            with m.If(pop):
                m.d.sync += out_pos.eq(out_pos + take)
                with m.If((out_pos <= n) & (n < out_pos + take)):
                    m.d.comb += [Assert(seen),
                                 Assert(dut.o_stream.payload.word_select(out_off[:6], 8) == value)]

        # Inductive invariants (also properties in their own right).
        m.d.comb += [
            Assert(dut.consistent),
            Assert(dut.count == in_pos - out_pos),
            Assert((dut.buffer >> (8 * dut.count)) == 0),
            Assert(seen == (n < in_pos)),
        ]
        with m.If(seen & (out_pos <= n)):
            m.d.comb += Assert(dut.buffer.word_select(out_off[:6], 8) == value)

        m.d.comb += [
            Cover(pop & (out_pos >= 2 * k)),
            Cover(pop & push & (out_pos >= k)),
            Cover(dut.o_stream.valid & ~dut.o_stream.ready & (dut.count > dut.capacity - w)),   # full
        ]
        return m
