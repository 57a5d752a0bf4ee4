"""The depacketizer: UDP packets of the wire format in (from LiteEth's UDP user port), coefficient
writes out, in order, nothing of a malformed packet (:class:`hhe_gen.models.wire_in_order.InOrderReceiver`
is its model).

A packet's 32-bit words arrive on ``i_stream`` (``data``, ``last``, ``last_be``: LiteEth's one-hot
mark of the last valid byte, 0b1000 for a whole last word; the UDP parameters are not used): six
header words, then two words per coefficient, then the CRC-32 word (little-endian, docs/wire.md).
The coefficients are staged in a packet buffer of ``max_count`` coefficients; words past it are
counted but never stored; a CRC register (:mod:`.crc`) takes every word as it arrives.  At the
packet's ``last`` word it is judged: its last word is the CRC-32 of the words before it (else a
``checksum`` drop: a packet damaged anywhere), well formed (magic, version, a kind of ``kinds``, no
reserved flag, count 1 .. max_count, exactly 7 + 2 x count whole words, offset + count <= total,
row < rows), of the configured rows and row length, and exactly at the
cursor (the message, the next sequence number, the kind, row and offset the next packet must
start at), or at the very start of a new message (sequence 0, the first kind, row 0, offset 0).
A packet that passes is committed: its coefficients leave on ``o_write`` (kind index, row, index
in the row, coefficient; ``i_stream`` waits meanwhile) and the cursor moves on; any other packet is
dropped and counted, its reason code in ``last_drop``.  Nothing depends on the coefficients'
values; a packet of any length ends at its ``last`` word, so nothing hangs.

Parameters
----------
max_count : int     coefficients the packet buffer holds, 1 .. 180
kinds : tuple       the wire kinds of a message in sending order (default CKKS c0, c1)

Members
-------
cfg : In(StructLayout rows 8, total 32)
i_stream : In(stream of :data:`.packetizer.UDP_LAYOUT`)
o_write : Out(stream of StructLayout kind, row 8, index 32, data 64)
accepted, dropped : Out(32)     packets taken, packets dropped
last_drop : Out(4)              the reason of the last drop (:data:`DROP_CODES`)
messages : Out(32)              messages completed
abort : In(1)                   forget the packet in progress and the cursor; the rest of a packet
                                that was arriving is dropped (it does not start at the cursor)

Latency
-------
Words are taken one per cycle; a committed packet of c coefficients then takes c cycles on
``o_write`` (consumer ready) plus one, during which ``i_stream`` is not ready.
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.wire import MAGIC, MAX_COUNT, VERSION, Kind
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from .crc import CRC_INIT, crc32_word
from .packetizer import HEADER_WORDS, UDP_LAYOUT

__all__ = ["Depacketizer", "DROP_CODES"]

DROP_CODES = {"none": 0, "short": 11, "checksum": 12, "bad_magic": 1, "bad_version": 2, "bad_kind": 3,
              "bad_flags": 4, "bad_count": 5, "length": 6, "range": 7, "row": 8, "mismatch": 9, "order": 10}
"""``last_drop`` codes (the first failing check, in this order: ``short`` is a packet of fewer
than 7 words, a header and a CRC)."""


class Depacketizer(wiring.Component):
    """UDP packets -> in-order coefficient writes (see the module docstring)."""

    @quiet_on_error
    def __init__(self, max_count: int = MAX_COUNT, kinds=(Kind.CKKS_C0, Kind.CKKS_C1)):
        self.max_count = check_int("max_count", max_count, 1, MAX_COUNT)
        self.kinds = tuple(int(k) for k in kinds)
        if not 1 <= len(self.kinds) <= 4 or any(not 1 <= k <= 4 for k in self.kinds) or \
                len(set(self.kinds)) != len(self.kinds):
            raise ParameterError("kinds", kinds, "1 .. 4 distinct wire kinds 1 .. 4 (docs/wire.md)")
        self.write_layout = data.StructLayout({"kind": range(max(len(self.kinds), 2)), "row": 8, "index": 32,
                                               "data": 64})
        super().__init__({
            "cfg": In(data.StructLayout({"rows": 8, "total": 32})),
            "i_stream": In(stream.Signature(UDP_LAYOUT)),
            "o_write": Out(stream.Signature(self.write_layout)),
            "accepted": Out(32), "dropped": Out(32), "messages": Out(32), "last_drop": Out(4),
            "abort": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        C, K = self.max_count, len(self.kinds)
        inp, out, abort = self.i_stream, self.o_write, self.abort
        m.submodules.buffer = buf = memory.Memory(shape=64, depth=C, init=[])
        wp, rp = buf.write_port(), buf.read_port(transparent_for=())

        # ---- taking words ---------------------------------------------------------------------------
        words = Signal(16)                        # words of this packet taken so far (saturating)
        header = [Signal(32, name=f"h{k}") for k in range(HEADER_WORDS)]
        low = Signal(32)                          # the low half of the coefficient being assembled
        crc = Signal(32, init=CRC_INIT)           # the CRC register over this packet's words so far
        committing = Signal()
        m.d.comb += inp.ready.eq(~committing & ~abort)
        take = inp.valid & inp.ready
        w = inp.payload.data
        coef_word = words - HEADER_WORDS          # index of the word among the coefficient words
        m.d.comb += [wp.addr.eq(coef_word[1:]), wp.data.eq(Cat(low, w)),
                     wp.en.eq(take & (words >= HEADER_WORDS) & coef_word[0] & (coef_word[1:] < C))]
        with m.If(take):
            m.d.sync += words.eq(Mux(inp.payload.last, 0, Mux(words == 0xFFFF, words, words + 1)))
            m.d.sync += crc.eq(Mux(inp.payload.last, CRC_INIT, crc32_word(crc, w)))
            for k in range(HEADER_WORDS):
                with m.If(words == k):
                    m.d.sync += header[k].eq(w)
            with m.If((words >= HEADER_WORDS) & ~coef_word[0]):
                m.d.sync += low.eq(w)

        # ---- the header's fields (valid from the packet's last word on; words < 6: zeros) --------------
        magic, version, kind = header[0][:16], header[0][16:24], header[0][24:32]
        message = header[1]
        row, rows, flags = header[2][:8], header[2][8:16], header[2][24:32]
        sequence, count = header[3][:16], header[3][16:32]
        offset, total = header[4], header[5]
        n_words = words + 1                       # at the last word: the packet's length in words
        partial = inp.payload.last_be != 0b1000  # LiteEth's one-hot last byte: a whole last word
        kind_index = Signal(range(max(K, 2)))
        kind_ok = Signal()
        for i, k in enumerate(self.kinds):
            with m.If(kind == k):
                m.d.comb += [kind_index.eq(i), kind_ok.eq(1)]

        # the cursor
        cur_message, cur_sequence = Signal(32), Signal(16)
        cur_kind, cur_row, cur_offset = Signal(range(max(K, 2))), Signal(8), Signal(32)
        started = Signal()
        start = (sequence == 0) & (kind_index == 0) & (row == 0) & (offset == 0)
        at_cursor = started & (message == cur_message) & (sequence == cur_sequence) & \
            (kind_index == cur_kind) & (row == cur_row) & (offset == cur_offset)
        checks = [
            ("short", n_words < HEADER_WORDS + 1),
            ("checksum", w != ~crc),             # at the last word: the CRC of the words before it
            ("bad_magic", magic != MAGIC), ("bad_version", version != VERSION),
            ("bad_kind", ~kind_ok), ("bad_flags", flags[1:] != 0),
            ("bad_count", (count == 0) | (count > C)),
            ("length", (n_words != HEADER_WORDS + 2 * count + 1) | partial),
            ("range", (total == 0) | (offset + count > total)), ("row", row >= rows),
            ("mismatch", (rows != self.cfg.rows) | (total != self.cfg.total)),
            ("order", ~(start | at_cursor)),
        ]
        reason = Signal(4)
        for name, bad in reversed(checks):
            reason = Mux(bad, DROP_CODES[name], reason)
        verdict = Signal(4)
        m.d.comb += verdict.eq(reason)

        # ---- judging at the last word, committing -------------------------------------------------------
        c_kind, c_row, c_offset, c_count = Signal.like(cur_kind), Signal(8), Signal(32), Signal(16)
        c_next = Signal(16)                       # next coefficient of the commit to read
        out_valid = Signal()
        with m.If(abort):
            m.d.sync += [committing.eq(0), out_valid.eq(0), started.eq(0), words.eq(0), crc.eq(CRC_INIT)]
        with m.Elif(take & inp.payload.last):
            with m.If(verdict == 0):
                m.d.sync += [committing.eq(1), c_kind.eq(kind_index), c_row.eq(row), c_offset.eq(offset),
                             c_count.eq(count), c_next.eq(0), self.accepted.eq(self.accepted + 1)]
                # the cursor moves on
                end_row = offset + count == total
                last_row = row == rows - 1
                last_kind = kind_index == K - 1
                m.d.sync += [cur_message.eq(message), cur_sequence.eq(sequence + 1), started.eq(1),
                             cur_kind.eq(kind_index), cur_row.eq(row), cur_offset.eq(offset + count)]
                with m.If(end_row):
                    m.d.sync += [cur_offset.eq(0), cur_row.eq(row + 1)]
                    with m.If(last_row):
                        m.d.sync += [cur_row.eq(0), cur_kind.eq(kind_index + 1)]
                        with m.If(last_kind):
                            m.d.sync += [started.eq(0), self.messages.eq(self.messages + 1)]
            with m.Else():
                m.d.sync += [self.dropped.eq(self.dropped + 1), self.last_drop.eq(verdict)]
        # commit: read the staged coefficients one by one (read ahead, held while o_write stalls)
        advance = ~out_valid | out.ready
        m.d.comb += [rp.addr.eq(c_next[:len(rp.addr)]), rp.en.eq(advance)]
        idx = Signal(16)
        with m.If(committing & ~abort & advance):
            with m.If(c_next < c_count):
                m.d.sync += [out_valid.eq(1), c_next.eq(c_next + 1), idx.eq(c_next)]
            with m.Else():
                m.d.sync += [out_valid.eq(0), committing.eq(0)]
        m.d.comb += [out.valid.eq(out_valid & ~abort), out.payload.kind.eq(c_kind), out.payload.row.eq(c_row),
                     out.payload.index.eq(c_offset + idx), out.payload.data.eq(rp.data)]
        return m
