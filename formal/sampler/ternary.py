"""Ternary piece selector: the n-th output is the n-th accepted 2-bit piece, mapped.

Harness: one :class:`PieceSelector` with free bytes and free back-pressure under the stream
rules.  The pieces of the input stream are numbered in stream order (bits 1:0 of a byte first),
counting only accepted ones (piece != 3); for a free ``n`` (``AnyConst``) the harness records the
n-th accepted piece when its byte is taken and asserts that the n-th output is its value
(0 -> 0, 1 -> +1, 2 -> -1).  So every output is an accepted piece, in order, none skipped or
repeated, and rejected pieces never come out.  Invariants: accepted-but-not-output pieces =
the number of pending bits of ``left``, and the tracked piece sits at the expected bit of
``left``/``pieces`` while it waits.  Covers: a value out; back-pressure; a byte whose four
pieces are all rejected.

:class:`PairHarness` does the same for a :class:`PiecePairSelector` (two values a cycle): the
n-th value out (value 0 of a pair before value 1) is the n-th accepted piece, mapped; invariants:
the values held = accepted pieces in minus values out, at most the buffer's depth, and the
tracked piece, while it waits, at buffer position n - (values out).  Covers: a pair out with the
tracked piece second; back-pressure; a byte whose four pieces are all rejected.
"""

from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume, Const, Cover, Elaboratable, Module, Mux, Signal

from hhe_gen.cores.sampler.ternary import PiecePairSelector, PieceSelector

from ._props import check_source, drive_source

COUNTER = 7


def _popcount(bits):
    total = Const(0, 3)
    for b in bits:
        total = total + b
    return total


def _track_nth_piece(m, dut):
    """The common part of both harnesses: stream rules on the selector's ports, a free n, the
    accepted pieces counted in (``n_in``) and the n-th one's piece (``value``) and position in its
    byte (``slot``) recorded when its byte is taken.  Returns (n, n_in, value, slot, byte, push)."""
    drive_source(m, dut.i_stream, tag="i")
    check_source(m, dut.o_stream, tag="o")
    n = Signal(COUNTER - 1)
    m.d.comb += n.eq(AnyConst(COUNTER - 1))
    n_in = Signal(COUNTER)
    m.d.comb += Assume(n_in < (1 << COUNTER) - 8)
    value, slot = Signal(2), Signal(2)
    byte = dut.i_stream.payload
    accepted = [byte[2 * i:2 * i + 2] != 3 for i in range(4)]
    push = dut.i_stream.valid & dut.i_stream.ready
    with m.If(push):
        m.d.sync += n_in.eq(n_in + _popcount(accepted))
        before = Const(0, 3)
        for i in range(4):
            with m.If(accepted[i] & (n_in + before == n)):
                m.d.sync += [value.eq(byte[2 * i:2 * i + 2]), slot.eq(i)]
            before = before + accepted[i]
    return n, n_in, value, slot, byte, push


def _ternary_of(piece):
    return Mux(piece == 2, -1, piece)


class TernaryHarness(Elaboratable):
    """Formal harness around a :class:`PieceSelector`."""

    def __init__(self, core=PieceSelector):
        self.dut = core()

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        n, n_in, value, slot, byte, push = _track_nth_piece(m, dut)
        n_out = Signal(COUNTER)                             # values out
        pop = dut.o_stream.valid & dut.o_stream.ready
        with m.If(pop):
            m.d.sync += n_out.eq(n_out + 1)
            with m.If(n_out == n):
                m.d.comb += Assert(dut.o_stream.payload == _ternary_of(value))

        m.d.comb += Assert(n_in - n_out == _popcount(dut.left))
        # While the tracked piece waits, it is pending at its slot with its value.
        waiting = (n_out <= n) & (n < n_in)
        with m.If(waiting):
            m.d.comb += [Assert(dut.left.bit_select(slot, 1)),
                         Assert(dut.pieces.word_select(slot, 2) == value)]
            # and the pieces still pending before it are exactly the outputs still owed before it
            below = Signal(3)
            m.d.comb += below.eq(_popcount([dut.left[i] & (i < slot) for i in range(4)]))
            m.d.comb += Assert(n - n_out == below)
        for i in range(4):
            with m.If(dut.left[i]):
                m.d.comb += Assert(dut.pieces[2 * i:2 * i + 2] != 3)

        m.d.comb += [Cover(pop & (n_out == n) & (dut.o_stream.payload == -1)),
                     Cover(dut.o_stream.valid & ~dut.o_stream.ready),
                     Cover(push & (byte == 0xff))]
        return m



class PairHarness(Elaboratable):
    """Formal harness around a :class:`PiecePairSelector` (module docstring)."""

    def __init__(self, core=PiecePairSelector):
        self.dut = core()

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        n, n_in, value, slot, byte, push = _track_nth_piece(m, dut)
        n_out = Signal(COUNTER)                             # values out
        pop = dut.o_stream.valid & dut.o_stream.ready
        with m.If(pop):
            m.d.sync += n_out.eq(n_out + 2)
            for j in range(2):
                with m.If(n_out + j == n):
                    m.d.comb += Assert(dut.o_stream.payload[j] == _ternary_of(value))

        m.d.comb += [Assert(n_in - n_out == dut.fill), Assert(dut.fill <= dut.DEPTH), Assert(value != 3)]
        waiting = (n_out <= n) & (n < n_in)
        with m.If(waiting):
            for i in range(dut.DEPTH):
                with m.If(n - n_out == i):
                    m.d.comb += Assert(dut.values[i] == _ternary_of(value))

        m.d.comb += [Cover(pop & (n_out + 1 == n) & (dut.o_stream.payload[1] == -1)),
                     Cover(dut.o_stream.valid & ~dut.o_stream.ready),
                     Cover(push & (byte == 0xff))]
        return m
