"""The engine's network unit: ``send`` puts buffers on the network as UDP packets of the wire format
(docs/wire.md) through a :class:`hhe_gen.cores.net.Packetizer`, and ``recv`` takes a ciphertext from
arriving packets through a :class:`hhe_gen.cores.net.Depacketizer`, with no CPU and no memory
traffic.

- ``send a, sK, KIND, rows=R, of=T, words=W[, ntt]``: buffers a .. a+R-1 are rows K .. K+R-1 of a
  polynomial of T rows (0: R) and kind KIND (c0, c1, Rubato, slots), so a program may send a
  ciphertext row by row as each is ready; words 0 .. W-1 of each (W = 0: N) are read through a
  :class:`.row_reader.RowReader` and cut into packets of ``cfg.net.segment`` coefficients (0 or
  more than ``max_segment``: ``max_segment``).  The header carries the message id of
  ``cfg.net.message``, the engine's log_scale for c0 / c1 (0 otherwise) and the sequence number,
  which runs on across ``send`` instructions from 0 after each ``cfg.net.message`` (``restart``)
  and after an abort.  Addressing (destination IP, ports) comes from ``cfg.net.ip`` /
  ``cfg.net.ports``.
- The unit's ``done`` comes with the last word of the last packet on ``o_udp``: a ``store`` or
  ``send`` after it sees the packets out.
- ``recv dst, rows=R`` (the way back, cloud -> ct-to-m): the packets arriving on ``i_udp`` go
  through a :class:`hhe_gen.cores.net.Depacketizer` (R/2 rows of N words, kinds c0 then c1, in
  order; a malformed, damaged (CRC-32) or misplaced packet writes nothing and is counted in
  ``received_dropped``)
  into dst + j (c0 row j) and dst + R/2 + j (c1 row j), one word per cycle; the task completes
  once a whole message is written.  ``i_udp`` is taken only while a ``recv`` runs (otherwise it is
  held back).  It waits for the packets as long as they take: ``abort`` ends the wait (the
  packet in progress is dropped).
- Abort: the packetizer finishes the packet already on the wire (LiteEth must see whole packets)
  and drops the rest; ``task.ready`` stays low until then; no ``done``.

Model: :meth:`hhe_gen.engine.model.EngineModel._send` (packets by
:func:`hhe_gen.models.wire.polynomial_packets`) and ``_recv``
(:class:`hhe_gen.models.wire_in_order.InOrderReceiver`).

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width : the engine's sizes (:func:`.units.check_unit_sizes`)
log_scale : int       the engine's log2(Delta), 0 .. 255 (c0 / c1 headers)
max_segment : int     coefficients a packet buffer holds, 1 .. 180

Members
-------
port : In(UnitPort(tag_width))       the task manager's command / status port
rd : Out(read_port_signature(...))   read port from the buffers
cfg : In(:func:`net_config_layout`)  ip_address, src_port, dst_port, segment, message (the
                                     manager's ``cfg.net_*``)
restart : In(1)                      ``cfg.net.message`` executes: number the packets from 0 again
o_udp : Out(stream of :data:`hhe_gen.cores.net.UDP_LAYOUT`)   LiteEth's UDP user port shape
i_udp : In(stream of UDP_LAYOUT)     arriving packets (LiteEth's UDP user port, receive side)
wr : Out(write_port_signature(...))  write port into the buffers (``recv``)
received_dropped : Out(32)           packets ``recv`` dropped since reset
busy : Out(1)                        a task held, or (after an abort) a packet still going out

Latency
-------
With the consumer always ready a row of W words in packets of c_0, c_1, .. c_{k-1} coefficients
(c_i = c but the last) takes c_0 + 5 + sum(7 + 2 c_i) + 2(k - 1) cycles from the task to its
last packet's last word: the first packet fills (c_0 words at one per cycle after the reader's
two cycles), then every packet is 7 + 2c words on the wire (6 header words, 2 per coefficient,
the CRC-32 word) with two idle cycles before the next (which filled meanwhile).  Rows follow one
another (a row's command waits for the previous row's last packet), so a send of R rows takes R
times that.  At N = 2^13 and c = 180 a row is 46 packets (45 of 180, one of 92), 16,706 words on
the wire, in 16,981 cycles.  ``recv`` takes a word per cycle while a
packet arrives, then writes its c coefficients in c + 1 cycles (the input waits meanwhile), and
completes once the last packet's words are written.  Nothing depends on the words' values.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, ResetInserter, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.net.depacketizer import Depacketizer
from hhe_gen.cores.net.packetizer import UDP_LAYOUT, Packetizer
from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.wire import Kind
from hhe_gen.params.checks import check_int

from . import isa
from .buffers import read_port_signature, write_port_signature
from .row_reader import RowReader
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["NetworkUnit", "net_config_layout"]



def net_config_layout() -> data.StructLayout:
    """The network configuration the unit reads (written by ``cfg.net.*``)."""
    return data.StructLayout({"ip_address": 32, "src_port": 16, "dst_port": 16, "segment": 8, "message": 32})


class NetworkUnit(wiring.Component):
    """``send``: buffers -> UDP packets; ``recv``: UDP packets -> buffers (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int, *,
                 log_scale: int = 0, max_segment: int = isa.MAX_SEGMENT):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots)
        self.log_scale = check_int("log_scale", log_scale, 0, 255)
        self.max_segment = check_int("max_segment", max_segment, 1, isa.MAX_SEGMENT,
                                     f"coefficients per packet buffer, 1 .. {isa.MAX_SEGMENT}")
        super().__init__({
            "port": In(UnitPort(tag_width)),
            "rd": Out(read_port_signature(buffers, self.rows, lanes, word_bits)),
            "cfg": In(net_config_layout()),
            "restart": In(1),
            "o_udp": Out(stream.Signature(UDP_LAYOUT)),
            "i_udp": In(stream.Signature(UDP_LAYOUT)),
            "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
            "received_dropped": Out(32),
            "busy": Out(1),
        })

    @property
    def declaration(self) -> UnitDeclaration:
        """Its kind and buffer ports (:mod:`.unit_ports`)."""
        return UnitDeclaration(isa.Unit.NETWORK, reads=("rd",), writes=("wr",))

    def elaborate(self, platform):
        m = Module()
        task, abort = self.port.task, self.port.abort
        m.submodules.packetizer = pk = Packetizer(self.max_segment)
        reader = RowReader(self.n, self.lanes, self.word_bits, self.buffers)
        m.submodules.reader = ResetInserter(abort)(reader)
        wiring.connect(m, reader.rd, wiring.flipped(self.rd))
        wiring.connect(m, pk.o_stream, wiring.flipped(self.o_udp))
        m.d.comb += [pk.cfg.ip_address.eq(self.cfg.ip_address), pk.cfg.src_port.eq(self.cfg.src_port),
                     pk.cfg.dst_port.eq(self.cfg.dst_port), pk.cfg.segment.eq(self.cfg.segment),
                     pk.abort.eq(abort)]

        m.submodules.depacketizer = dp = Depacketizer()
        receiving = Signal()
        half = Signal(3)                         # rows of each polynomial of the message received
        dst = Signal(isa.BUFFER_BITS)
        messages_before = Signal(32)
        P = self.lanes
        wr = dp.o_write.payload
        taking = Signal()                        # a recv runs and its message is not complete yet
        m.d.comb += taking.eq(receiving & (dp.messages == messages_before))
        m.d.comb += [dp.abort.eq(abort), dp.cfg.rows.eq(half), dp.cfg.total.eq(self.n),
                     dp.i_stream.valid.eq(self.i_udp.valid & taking), dp.i_stream.payload.eq(self.i_udp.payload),
                     self.i_udp.ready.eq(dp.i_stream.ready & taking), dp.o_write.ready.eq(1),
                     self.received_dropped.eq(dp.dropped),
                     self.wr.sel.eq(dst + Mux(wr.kind, half, 0) + wr.row),
                     self.wr.addr.eq(wr.index >> (P.bit_length() - 1)),
                     self.wr.lanes.eq(Mux(dp.o_write.valid, 1 << (wr.index[:P.bit_length() - 1] if P > 1 else 0), 0))]
        for j in range(P):
            m.d.comb += self.wr.data[j].eq(wr.data[:self.word_bits])

        base = Signal(isa.BUFFER_BITS)
        first_row = Signal(isa.SLOT_BITS)
        last_row = Signal(4)
        total_rows = Signal(4)
        row = Signal(4)
        kind = Signal(3)
        ntt = Signal()
        words = Signal(range(self.n + 1))
        sequence = Signal(16)

        cmd = pk.cmd.payload
        m.d.comb += [cmd.kind.eq(kind), cmd.message.eq(self.cfg.message), cmd.row.eq(row), cmd.rows.eq(total_rows),
                     cmd.log_scale.eq(Mux((kind == Kind.CKKS_C0) | (kind == Kind.CKKS_C1), self.log_scale, 0)),
                     cmd.ntt.eq(ntt), cmd.sequence.eq(sequence), cmd.total.eq(words),
                     reader.sel.eq(base + row - first_row), reader.count.eq(words)]
        m.d.comb += [pk.i_stream.valid.eq(reader.o_stream.valid), pk.i_stream.payload.eq(reader.o_stream.payload),
                     reader.o_stream.ready.eq(pk.i_stream.ready)]
        with m.If(abort | self.restart):
            m.d.sync += sequence.eq(0)

        with m.FSM() as fsm:
            m.d.comb += self.busy.eq(~fsm.ongoing("idle") | pk.busy)
            with m.State("idle"):
                m.d.comb += task.ready.eq(~abort & ~pk.busy)
                with m.If(task.valid & task.ready & (task.payload.opcode == isa.Opcode.RECV)):
                    m.d.sync += [dst.eq(task.payload.dst), half.eq(task.payload.imm[1:4]),
                                 messages_before.eq(dp.messages), receiving.eq(1)]
                    m.next = "recv"
                with m.Elif(task.valid & task.ready):
                    imm, slot = task.payload.imm, task.payload.slot
                    rows_f, words_f = imm[:4], imm[16:]
                    m.d.sync += [base.eq(task.payload.a), first_row.eq(slot), row.eq(slot),
                                 last_row.eq(slot + rows_f - 1), total_rows.eq(Mux(imm[8:12] == 0, rows_f, imm[8:12])),
                                 kind.eq(imm[4:7]), ntt.eq(imm[7]), words.eq(Mux(words_f == 0, self.n, words_f))]
                    m.next = "command"
            with m.State("command"):
                m.d.comb += pk.cmd.valid.eq(~abort)
                with m.If(abort):
                    m.next = "idle"
                with m.Elif(pk.cmd.ready):
                    m.d.comb += reader.start.eq(1)
                    m.next = "row"
            with m.State("recv"):
                with m.If(abort):
                    m.d.sync += receiving.eq(0)
                    m.next = "idle"
                with m.Elif((dp.messages != messages_before) & dp.i_stream.ready & ~dp.o_write.valid):
                    m.d.comb += self.port.done.eq(1)
                    m.d.sync += receiving.eq(0)
                    m.next = "idle"
            with m.State("row"):
                with m.If(abort):
                    m.next = "idle"
                with m.Elif(pk.done):
                    m.d.sync += [sequence.eq(pk.next_sequence), row.eq(row + 1)]
                    with m.If(row == last_row):
                        m.d.comb += self.port.done.eq(1)
                        m.next = "idle"
                    with m.Else():
                        m.next = "command"
        return m
