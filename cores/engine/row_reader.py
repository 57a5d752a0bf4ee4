"""Words of one buffer as a stream, one word per cycle (:class:`RowReader`): the buffer's rows are
read ahead into a three-row FIFO and leave lane by lane.  The memory unit's ``store`` and the
network unit's ``send`` read their buffers through it.

Parameters
----------
n : int          N, words per buffer
lanes : int      P, words per row
word_bits : int  bits of a word
buffers : int    B

Members
-------
start : In(1)                       strobe: read words 0 .. ``count``-1 of buffer ``sel`` (both taken
                                    with the strobe; a start while words are still pending is
                                    outside the contract)
sel : In(range(B)), count : In(range(N + 1))
rd : Out(read_port_signature(...))  the buffer read port
o_stream : Out(stream.Signature(word_bits))   the words in order
busy : Out(1)                       words of the last start not yet taken

To drop what is pending (an abort), reset the reader (``ResetInserter``).

Latency
-------
Rows are read from the cycle after ``start``, one per cycle while the FIFO (counting the row in
flight) has room; the first word is valid two cycles after ``start``, and then one word per cycle
while ``o_stream`` is ready.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error

from .buffers import read_port_signature
from .units import check_unit_sizes

__all__ = ["RowReader", "READ_AHEAD_ROWS"]

READ_AHEAD_ROWS = 3


class RowReader(wiring.Component):
    """A buffer's words 0 .. count-1 out one per cycle (module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int):
        check_unit_sizes(self, n, lanes, word_bits, buffers, 1)
        super().__init__({
            "start": In(1),
            "sel": In(range(max(buffers, 2))),
            "count": In(range(n + 1)),
            "rd": Out(read_port_signature(buffers, self.rows, lanes, word_bits)),
            "o_stream": Out(stream.Signature(word_bits)),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p, out = self.lanes, self.o_stream
        fifo = m.submodules.rows = SyncFIFO(width=p * self.word_bits, depth=READ_AHEAD_ROWS)
        src = Signal.like(self.sel)
        row_issue = Signal(range(self.rows + 1))
        row_end = Signal(range(self.rows + 1))
        remaining = Signal(range(self.n + 1))
        lane = Signal(range(max(p, 2)))
        inflight = Signal()
        reading = Signal()

        m.d.comb += [reading.eq((row_issue < row_end) & (fifo.level + inflight < READ_AHEAD_ROWS)),
                     self.rd.sel.eq(src), self.rd.addr.eq(row_issue), self.rd.en.eq(reading),
                     fifo.w_data.eq(self.rd.data.as_value()), fifo.w_en.eq(inflight),
                     self.busy.eq(remaining != 0)]
        m.d.sync += inflight.eq(reading)
        with m.If(reading):
            m.d.sync += row_issue.eq(row_issue + 1)

        head = fifo.r_data.word_select(lane, self.word_bits) if p > 1 else fifo.r_data
        m.d.comb += [out.valid.eq(fifo.r_rdy & (remaining != 0)), out.payload.eq(head)]
        with m.If(out.valid & out.ready):
            m.d.sync += remaining.eq(remaining - 1)
            if p > 1:
                m.d.sync += lane.eq(Mux(lane == p - 1, 0, lane + 1))
                m.d.comb += fifo.r_en.eq((lane == p - 1) | (remaining == 1))
            else:
                m.d.comb += fifo.r_en.eq(1)

        with m.If(self.start):
            m.d.sync += [src.eq(self.sel), row_issue.eq(0), lane.eq(0), remaining.eq(self.count),
                         row_end.eq((self.count + p - 1) >> (p.bit_length() - 1))]
        return m
