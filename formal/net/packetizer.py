"""The packetizer's stream rules toward LiteEth's UDP port (:class:`hhe_gen.cores.net.Packetizer`).

Harness: one packetizer at a small size (``max_segment`` coefficients per packet buffer) with a
free configuration (any segment, ports, address), commands at any time, all with one free payload
(any kind, message, rows, row, sequence and a row length ``total`` of 0 .. ``max_total``; a free
payload per cycle made the solver hours slower and steers nothing more), coefficients 0 (no control decision
reads them; tests/cores/net checks the data bit for bit), free abort and free back-pressure, the
input streams under the handshake rules.  Asserted in every cycle:

* the output obeys the handshake rules (valid held until the transfer, payload unchanged);
* no gap inside a packet: after a transfer that is not ``last``, ``valid`` stays high until the
  packet's ``last`` transfer (abort included: a packet on the wire is finished);
* ``length`` is the same on every beat of a packet, a multiple of 4 between 24 + 8 + 4 and
  24 + 8 x max_segment + 4 (header, coefficients, CRC-32: so never above 1472 bytes), and
  ``last`` comes exactly on word
  ``length / 4`` of the packet, with ``last_be`` = 0b1000 there (LiteEth's one-hot last byte) and
  0 elsewhere;
* the first two words of every packet are the magic / version / kind word and the message id of
  the row being sent.

Covers: a whole packet out; two packets back to back; a packet finished after an abort; a stalled
beat inside a packet.
"""

from __future__ import annotations

from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Cover, Signal

from hhe_gen.cores.net.packetizer import HEADER_WORDS, Packetizer
from hhe_gen.models.wire import CRC_BYTES, MAGIC, VERSION

from ..common.sby import formal_module
from ..common.stream import stream_rules

__all__ = ["PacketizerHarness"]


class PacketizerHarness:
    """The harness of the module docstring; :meth:`build` returns the top module."""

    def __init__(self, max_segment: int = 2, max_total: int = 5, core=Packetizer):
        self.dut = core(max_segment)
        self.max_segment, self.max_total = max_segment, max_total

    def build(self):
        m, _ = formal_module()
        m.submodules.dut = dut = self.dut
        out = dut.o_stream
        # -- environment ------------------------------------------------------------------------
        m.d.comb += [dut.cfg.eq(AnyConst(len(dut.cfg.as_value()))), dut.abort.eq(AnySeq(1)),
                     dut.cmd.valid.eq(AnySeq(1)), dut.cmd.payload.eq(AnyConst(len(dut.cmd.payload.as_value()))),
                     dut.i_stream.valid.eq(AnySeq(1)), dut.i_stream.payload.eq(AnySeq(64)),
                     out.ready.eq(AnySeq(1))]
        # the coefficients' values steer nothing (they are only stored and sent): 0 keeps the solver
        # off 64-bit data it does not need; the simulation tests check the data bit for bit
        m.d.comb += [Assume(dut.cmd.payload.total <= self.max_total), Assume(dut.i_stream.payload == 0)]
        stream_rules(m, dut.cmd, check=Assume, name="cmd")
        stream_rules(m, dut.i_stream, check=Assume, name="coef")
        rules = stream_rules(m, out, check=Assert, name="udp")
        transfer = rules["transfer"]

        # -- the packet on the wire ------------------------------------------------------------------
        inside = Signal(name="inside")                   # a transfer of this packet happened, not its last
        words = Signal(range(HEADER_WORDS + 2 * self.max_segment + 2), name="words")   # words transferred
        length = Signal(16, name="length_first")
        message = Signal(32, name="message")
        kind = Signal(8, name="kind")
        with m.If(dut.cmd.valid & dut.cmd.ready):
            m.d.sync += [message.eq(dut.cmd.payload.message), kind.eq(dut.cmd.payload.kind)]
        with m.If(transfer):
            with m.If(out.payload.last):
                m.d.sync += [inside.eq(0), words.eq(0)]
            with m.Else():
                m.d.sync += [inside.eq(1), words.eq(words + 1)]
            with m.If(~inside):
                m.d.sync += length.eq(out.payload.length)
        p = out.payload
        with m.If(inside):
            m.d.comb += [Assert(out.valid, "valid dropped inside a packet"),
                         Assert(p.length == length, "length changed inside a packet")]
        with m.If(out.valid):
            m.d.comb += [Assert(p.length[:2] == 0), Assert(p.length >= HEADER_WORDS * 4 + 8 + CRC_BYTES),
                         Assert(p.length <= HEADER_WORDS * 4 + 8 * self.max_segment + CRC_BYTES),
                         Assert(p.last == (p.length == 4 * (words + 1)), "last not on word length / 4"),
                         Assert(p.last_be == (p.last << 3))]
            with m.If(words == 0):
                m.d.comb += Assert(p.data == (MAGIC | VERSION << 16 | kind << 24), "first word")
            with m.If(words == 1):
                m.d.comb += Assert(p.data == message, "message id")

        # -- covers ------------------------------------------------------------------------------------
        packets = Signal(2, name="packets")
        aborted = Signal(name="aborted_inside")
        stalled = Signal(name="stalled_inside")
        with m.If(transfer & p.last & (packets != 3)):
            m.d.sync += packets.eq(packets + 1)
        with m.If(dut.abort & inside):
            m.d.sync += aborted.eq(1)
        with m.If(inside & out.valid & ~out.ready):
            m.d.sync += stalled.eq(1)
        m.d.comb += [Cover(transfer & p.last), Cover(transfer & p.last & (packets == 1)),
                     Cover(transfer & p.last & aborted), Cover(transfer & p.last & stalled)]
        return m
