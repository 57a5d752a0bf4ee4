"""Words of one buffer as a stream, W words per cycle (:class:`RowReader`): the buffer's rows are
read ahead into a three-row FIFO and leave W lanes at a time.  The memory unit's ``store`` and the
network unit's ``send`` read their buffers through it.

Parameters
----------
n : int          N, words per buffer
lanes : int      P, words per row
word_bits : int  bits of a word
buffers : int    B
words : int      W, words per transfer: a power of two dividing P (default 1)

Members
-------
start : In(1)                       strobe: read words 0 .. ``count``-1 of buffer ``sel`` (both taken
                                    with the strobe; ``count`` a multiple of W; a start while
                                    words are still pending is outside the contract)
sel : In(range(B)), count : In(range(N + 1))
rd : Out(read_port_signature(...))  the buffer read port
o_stream : Out(stream.Signature(W * word_bits))   the words in order, word i of a transfer in
                                    bits i * word_bits ..
busy : Out(1)                       words of the last start not yet taken

To drop what is pending (an abort), reset the reader (``ResetInserter``).

Latency
-------
Rows are read from the cycle after ``start``, one per cycle while the FIFO (counting the row in
flight) has room; the first words are valid two cycles after ``start``, and then W words per cycle
while ``o_stream`` is ready.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_power_of_two

from .buffers import read_port_signature
from .units import check_unit_sizes

__all__ = ["RowReader", "READ_AHEAD_ROWS"]

READ_AHEAD_ROWS = 3


class RowReader(wiring.Component):
    """A buffer's words 0 .. count-1 out W per cycle (module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, words: int = 1):
        check_unit_sizes(self, n, lanes, word_bits, buffers, 1)
        self.words = check_power_of_two("words", words, 1, lanes, f"a power of two 1 .. P = {lanes}")
        super().__init__({
            "start": In(1),
            "sel": In(range(max(buffers, 2))),
            "count": In(range(n + 1)),
            "rd": Out(read_port_signature(buffers, self.rows, lanes, word_bits)),
            "o_stream": Out(stream.Signature(words * word_bits)),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p, w, out = self.lanes, self.words, self.o_stream
        groups = p // w                 # transfers per row
        fifo = m.submodules.rows = SyncFIFO(width=p * self.word_bits, depth=READ_AHEAD_ROWS)
        src = Signal.like(self.sel)
        row_issue = Signal(range(self.rows + 1))
        row_end = Signal(range(self.rows + 1))
        remaining = Signal(range(self.n + 1))
        lane = Signal(range(max(groups, 2)))     # the transfer within the row
        inflight = Signal()
        reading = Signal()

        m.d.comb += [reading.eq((row_issue < row_end) & (fifo.level + inflight < READ_AHEAD_ROWS)),
                     self.rd.sel.eq(src), self.rd.addr.eq(row_issue), self.rd.en.eq(reading),
                     fifo.w_data.eq(self.rd.data.as_value()), fifo.w_en.eq(inflight),
                     self.busy.eq(remaining != 0)]
        m.d.sync += inflight.eq(reading)
        with m.If(reading):
            m.d.sync += row_issue.eq(row_issue + 1)

        head = fifo.r_data.word_select(lane, w * self.word_bits) if groups > 1 else fifo.r_data
        m.d.comb += [out.valid.eq(fifo.r_rdy & (remaining != 0)), out.payload.eq(head)]
        with m.If(out.valid & out.ready):
            m.d.sync += remaining.eq(remaining - w)
            if groups > 1:
                m.d.sync += lane.eq(Mux(lane == groups - 1, 0, lane + 1))
                m.d.comb += fifo.r_en.eq((lane == groups - 1) | (remaining == w))
            else:
                m.d.comb += fifo.r_en.eq(1)

        with m.If(self.start):
            m.d.sync += [src.eq(self.sel), row_issue.eq(0), lane.eq(0), remaining.eq(self.count),
                         row_end.eq((self.count + p - 1) >> (p.bit_length() - 1))]
        return m
