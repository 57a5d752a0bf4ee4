"""The packetizer: a polynomial's coefficients in, UDP packets of the wire format out (docs/wire.md,
:func:`hhe_gen.models.wire.polynomial_packets` is its model), on a stream shaped like LiteEth's UDP
user port.

A command names one row of a polynomial (kind, message id, row, rows, log_scale, NTT form, the
first packet's sequence number, the row's length ``total``); then ``total`` coefficients arrive on
``i_stream``, one 64-bit word per beat.  The packetizer cuts them into packets of ``segment``
coefficients (``cfg.segment``; the row's last packet takes the rest), each a 24-byte header,
8 bytes per coefficient and the 4-byte CRC-32 of the two (:mod:`.crc`: computed over the words as
they go out, one per cycle, and sent as the packet's last word), and sends every packet as 32-bit
words (little-endian: the first byte of the payload in ``data[0:8]``) on ``o_stream``:

* ``ip_address``, ``src_port``, ``dst_port`` (from ``cfg``) and ``length`` (28 + 8 x count) hold
  their values for the whole packet, so they are valid on its first beat;
* ``last`` on the packet's final word, ``last_be`` = 0b1000 there (LiteEth's one-hot mark of the
  last valid byte: every packet is a whole number of words), 0 elsewhere;
* no gap in ``valid`` inside a packet: LiteEth (2024.12) has no transmit store-and-forward, so a
  packet is sent only once all its coefficients sit in the packet buffer.  Two packet buffers of
  ``max_segment`` coefficients take turns, so the next packet fills while one is sent.

``done`` pulses with the row's final word; the next packet's sequence number is ``next_sequence``
(a polynomial's rows are numbered on, row after row, by the caller).  ``abort`` drops the row in
progress: the coefficients taken and the packet waiting are dropped, but a packet already on the
wire is sent to its end (LiteEth must see whole packets), then the packetizer is idle (``busy``
low; no ``done`` for the aborted row).

Parameters
----------
max_segment : int   coefficients a packet buffer holds, 1 .. 180 (:data:`hhe_gen.models.wire.MAX_COUNT`)

Members
-------
cfg : In(:data:`CFG_LAYOUT`)           ip_address, src_port, dst_port, segment (1 .. max_segment;
                                       0 or more: max_segment)
cmd : In(stream of :data:`ROW_LAYOUT`) kind, message, row, rows, log_scale, ntt, sequence, total
i_stream : In(stream of 64 bits)       the row's coefficients
o_stream : Out(stream of :data:`UDP_LAYOUT`)   data (32), last, last_be (4), ip_address, src_port,
                                       dst_port, length
busy, done, abort, next_sequence : Out(16)

Latency
-------
Header words come from registers, coefficients from the packet buffer's read port (read one
word ahead, held while the consumer stalls) and the CRC word from the CRC register: with the
consumer always ready a packet of c coefficients takes 7 + 2c cycles on the wire (6 header words,
2c coefficient words, the CRC); its first word is valid two cycles after its buffer is full or
after the previous packet's last word, whichever is later (a row of n coefficients in packets of
c, arriving one per cycle: c + (n/c)(9 + 2c) cycles from the command to ``done``).  Nothing
depends on the coefficients' values.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.interfaces import command_members
from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.wire import CRC_BYTES, HEADER_BYTES, MAGIC, MAX_COUNT, VERSION
from hhe_gen.params.checks import check_int

from .crc import CRC_INIT, crc32_word

__all__ = ["Packetizer", "CFG_LAYOUT", "ROW_LAYOUT", "UDP_LAYOUT", "HEADER_WORDS"]

HEADER_WORDS = HEADER_BYTES // 4

CFG_LAYOUT = data.StructLayout({"ip_address": 32, "src_port": 16, "dst_port": 16, "segment": 16})
ROW_LAYOUT = data.StructLayout({"kind": 8, "message": 32, "row": 8, "rows": 8, "log_scale": 8, "ntt": 1,
                                "sequence": 16, "total": 32})
UDP_LAYOUT = data.StructLayout({"data": 32, "last": 1, "last_be": 4, "ip_address": 32, "src_port": 16,
                                "dst_port": 16, "length": 16})


class Packetizer(wiring.Component):
    """Coefficients of a polynomial row -> UDP packets (see the module docstring)."""

    @quiet_on_error
    def __init__(self, max_segment: int = MAX_COUNT):
        self.max_segment = check_int("max_segment", max_segment, 1, MAX_COUNT)
        super().__init__({
            "cfg": In(CFG_LAYOUT),
            **command_members(ROW_LAYOUT, abort=True),
            "i_stream": In(stream.Signature(64)),
            "o_stream": Out(stream.Signature(UDP_LAYOUT)),
            "next_sequence": Out(16),
        })

    def elaborate(self, platform):
        m = Module()
        S = self.max_segment
        abort, cmd, inp, out = self.abort, self.cmd, self.i_stream, self.o_stream
        m.submodules.buffer = buf = memory.Memory(shape=64, depth=2 * S, init=[])
        wp, rp = buf.write_port(), buf.read_port()

        # ---- fill side: the row's coefficients into buffer `fill` (0 / 1) ------------------------
        row = Signal(ROW_LAYOUT)                 # the command, held
        active = Signal()                        # a row is being taken
        remaining = Signal(32)                   # coefficients of the row not yet taken
        offset = Signal(32)                      # offset of the packet being filled
        index = Signal(range(S + 1))             # coefficients in the packet being filled
        size = Signal(range(S + 1))              # its size: min(segment, remaining at its start)
        fill = Signal()
        send = Signal()                          # the buffer sent next / being sent
        sending = Signal()                       # its packet is on the wire
        sequence = Signal(16)
        # per buffer: full (waiting or being sent), its count, offset, sequence, last of the row
        full = Signal(2)
        count_of = [Signal(range(S + 1), name=f"count{h}") for h in range(2)]
        offset_of = [Signal(32, name=f"offset{h}") for h in range(2)]
        seq_of = [Signal(16, name=f"seq{h}") for h in range(2)]
        last_of = Signal(2)
        release = Signal(2)                      # set by the send side when a buffer's packet is out

        seg = Signal(range(S + 1))
        m.d.comb += seg.eq(Mux((self.cfg.segment == 0) | (self.cfg.segment > S), S, self.cfg.segment))
        m.d.comb += [self.busy.eq(active | full.any()), cmd.ready.eq(~active & ~full.any() & ~abort),
                     self.next_sequence.eq(sequence)]
        free = ~Mux(fill, full[1], full[0])
        m.d.comb += inp.ready.eq(active & free & ~abort & (size != 0))
        take = inp.valid & inp.ready
        m.d.comb += [wp.addr.eq(Mux(fill, S, 0) + index), wp.data.eq(inp.payload), wp.en.eq(take)]

        next_full = Signal(2)
        m.d.comb += next_full.eq(full & ~release)
        aborted = Signal()                       # the row was aborted: no done for it
        with m.If(abort):                        # keep only the packet on the wire
            m.d.sync += [active.eq(0), full.eq(next_full & Mux(sending, Mux(send, 0b10, 0b01), 0)), aborted.eq(1)]
        with m.Elif(cmd.valid & cmd.ready):
            first = Mux(cmd.payload.total < seg, cmd.payload.total, seg)
            m.d.sync += [row.eq(cmd.payload), active.eq(cmd.payload.total != 0), remaining.eq(cmd.payload.total),
                         offset.eq(0), index.eq(0), size.eq(first), fill.eq(send), sequence.eq(cmd.payload.sequence),
                         aborted.eq(0)]
            with m.If(cmd.payload.total == 0):                   # nothing to send
                m.d.comb += self.done.eq(1)
        with m.Else():
            m.d.sync += full.eq(next_full)
            with m.If(take):
                m.d.sync += index.eq(index + 1)
                with m.If(index == size - 1):                     # the packet is complete
                    rest = remaining - size
                    for h in range(2):
                        with m.If(fill == h):
                            m.d.sync += [count_of[h].eq(size), offset_of[h].eq(offset), seq_of[h].eq(sequence),
                                         last_of[h].eq(rest == 0)]
                    m.d.sync += [full.eq(next_full | Mux(fill, 0b10, 0b01)), fill.eq(~fill), index.eq(0),
                                 offset.eq(offset + size), remaining.eq(rest), sequence.eq(sequence + 1),
                                 size.eq(Mux(rest < seg, rest, seg))]
                    with m.If(rest == 0):
                        m.d.sync += active.eq(0)

        # ---- send side: buffer `send`'s packet, header words, two words per coefficient, the CRC --
        word = Signal(range(HEADER_WORDS + 2 * S + 2))     # index of the word in o_stream now
        o_valid = Signal()
        count = Mux(send, count_of[1], count_of[0])
        words = HEADER_WORDS + 2 * count + 1
        header = [Cat(Const(MAGIC, 16), Const(VERSION, 8), row.kind),
                  row.message,
                  Cat(row.row, row.rows, row.log_scale, row.ntt, Const(0, 7)),
                  Cat(Mux(send, seq_of[1], seq_of[0]), count, Const(0, 16 - len(count))),
                  Mux(send, offset_of[1], offset_of[0]),
                  row.total]
        hdr_q = Signal(32)
        half_q = Signal()
        is_header_q = Signal()
        is_crc_q = Signal()                       # the word now is the packet's CRC
        crc = Signal(32, init=CRC_INIT)           # the CRC register over the words sent so far
        advance = ~o_valid | out.ready            # the output register takes the next word
        m.d.comb += [rp.en.eq(advance)]
        nxt = Signal.like(word)
        m.d.comb += nxt.eq(Mux(o_valid, word + 1, 0))
        coef = nxt - HEADER_WORDS
        m.d.comb += rp.addr.eq(Mux(send, S, 0) + (coef >> 1)[:len(rp.addr)])
        with m.If(~sending):
            with m.If(Mux(send, full[1], full[0]) & ~abort):
                m.d.sync += sending.eq(1)
        with m.Elif(advance):
            with m.If(o_valid & (word == words - 1)):             # the packet's last word went out
                m.d.sync += [o_valid.eq(0), sending.eq(0), send.eq(~send)]
                m.d.comb += release.eq(Mux(send, 0b10, 0b01))
                m.d.comb += self.done.eq(Mux(send, last_of[1], last_of[0]) & ~aborted & ~abort)
            with m.Else():
                m.d.sync += [o_valid.eq(1), word.eq(nxt), is_header_q.eq(nxt < HEADER_WORDS), half_q.eq(coef[0]),
                             is_crc_q.eq(nxt == words - 1)]
                with m.Switch(nxt):
                    for k, value in enumerate(header):
                        with m.Case(k):
                            m.d.sync += hdr_q.eq(value)
        coefficient = rp.data
        with m.If(out.valid & out.ready):
            m.d.sync += crc.eq(Mux(is_crc_q, CRC_INIT, crc32_word(crc, out.payload.data)))
        m.d.comb += [out.valid.eq(o_valid),
                     out.payload.data.eq(Mux(is_crc_q, ~crc, Mux(is_header_q, hdr_q,
                                                                  Mux(half_q, coefficient[32:], coefficient[:32])))),
                     out.payload.last.eq(word == words - 1),
                     out.payload.last_be.eq(Mux(word == words - 1, 0b1000, 0)),
                     out.payload.ip_address.eq(self.cfg.ip_address), out.payload.src_port.eq(self.cfg.src_port),
                     out.payload.dst_port.eq(self.cfg.dst_port),
                     out.payload.length.eq(HEADER_WORDS * 4 + 8 * count + CRC_BYTES)]
        return m
