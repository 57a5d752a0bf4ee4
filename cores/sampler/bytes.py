"""Byte gatherer: W-byte beats of an XOF stream in, k-byte candidate words out."""

from __future__ import annotations

from amaranth.hdl import Module, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from ._common import check_in_bytes, check_int, validating

__all__ = ["ByteGatherer", "byte_stream"]


def byte_stream(in_bytes: int) -> stream.Signature:
    """The byte-stream signature shared with the XOF: ``in_bytes`` bytes per beat, little-endian
    (the first byte of the stream in bits 0..7 of the first beat)."""
    return stream.Signature(unsigned(8 * check_in_bytes(in_bytes)))


class ByteGatherer(wiring.Component):
    """Turns a stream of W-byte beats into a stream of k-byte words, losing and repeating nothing.

    Word number t of the output is bytes ``t*k .. t*k+k-1`` of the input stream read as a
    little-endian integer (first byte least significant), exactly the "word of k bytes" of
    :mod:`hhe_gen.models.sampler`.  With ``variable=True`` each output word takes ``take``
    bytes (1..k, chosen by the consumer per word; the upper ``k - take`` bytes of the payload
    are zero).

    Internally a shift buffer of ``capacity = k + W - 1 + max(k, W)`` bytes holds the bytes
    received but not yet consumed; bytes above ``count`` are zero.  A beat is accepted when at
    least W bytes are free (a registered condition: no combinational path from ``o_stream.ready``
    to ``i_stream.ready``); a word is offered as soon as ``count >= take``.

    Parameters
    ----------
    in_bytes : int     W, bytes per input beat: 1, 2, 4 or 8
    word_bytes : int   k, bytes per output word (the maximum one with ``variable``): 1..64
    variable : bool    add the ``take`` input (bytes consumed by the current word)

    Members
    -------
    i_stream : In(stream.Signature(unsigned(8*W)))    XOF bytes
    o_stream : Out(stream.Signature(unsigned(8*k)))   words
    take : In(range(1, k+1))   only with ``variable``; hold it stable while ``o_stream.valid``
                               is high and ``ready`` low
    clear : In(1)   drop every buffered byte (restart for a new XOF message); no handshake
                    completes in a cycle with ``clear`` high
    count : Signal    bytes buffered (read-only, for formal harnesses and debugging)
    buffer : Signal   the buffered bytes, oldest in bits 0..7; zero above ``count`` (read-only)

    Throughput and latency
    ----------------------
    Full rate in both directions: one word per cycle when ``W >= k``, one beat per cycle (W/k
    words per cycle) when ``W < k``, provided the other side keeps up.  Latency: a word is valid
    the cycle after the beat that completes it was accepted (1 cycle).
    """

    def __init__(self, in_bytes: int = 1, word_bytes: int = 1, *, variable: bool = False):
        with validating(self):
            self.in_bytes = check_in_bytes(in_bytes)
            self.word_bytes = check_int("word_bytes", word_bytes, 1, 64)
        self.variable = bool(variable)
        self.capacity = self.word_bytes + self.in_bytes - 1 + max(self.word_bytes, self.in_bytes)
        members = {
            "i_stream": In(byte_stream(self.in_bytes)),
            "o_stream": Out(stream.Signature(unsigned(8 * self.word_bytes))),
            "clear": In(1),
        }
        if self.variable:
            members["take"] = In(range(1, self.word_bytes + 1))
        super().__init__(members)
        self.count = Signal(range(self.capacity + 1))
        self.buffer = Signal(8 * self.capacity)

    def elaborate(self, platform):
        m = Module()
        w, k, cap = self.in_bytes, self.word_bytes, self.capacity
        buf, count = self.buffer, self.count
        take = self.take if self.variable else k

        if self.variable:   # only the `take` consumed bytes: the payload is stable while it waits
            with m.Switch(take):
                for t in range(1, k + 1):
                    with m.Case(t):
                        m.d.comb += self.o_stream.payload.eq(buf[:8 * t])
        else:
            m.d.comb += self.o_stream.payload.eq(buf[:8 * k])
        m.d.comb += [
            self.o_stream.valid.eq(~self.clear & (count >= take)),
            self.i_stream.ready.eq(~self.clear & (count <= cap - w)),
        ]
        pop = self.o_stream.valid & self.o_stream.ready
        push = self.i_stream.valid & self.i_stream.ready

        # After the pop: shift out `take` bytes (a byte-granular mux, not a generic shifter).
        kept = Signal(8 * cap)
        kept_count = Signal(range(cap + 1))
        m.d.comb += [kept.eq(buf), kept_count.eq(count)]
        with m.If(pop):
            if self.variable:
                with m.Switch(take):
                    for t in range(1, k + 1):
                        with m.Case(t):
                            m.d.comb += [kept.eq(buf >> (8 * t)), kept_count.eq(count - t)]
            else:
                m.d.comb += [kept.eq(buf >> (8 * k)), kept_count.eq(count - k)]

        # The pushed beat lands right above the kept bytes (which are below cap - w + 1).
        placed = Signal(8 * cap)
        with m.Switch(kept_count):
            for c in range(cap - w + 1):
                with m.Case(c):
                    m.d.comb += placed.eq(self.i_stream.payload << (8 * c))

        with m.If(self.clear):
            m.d.sync += [buf.eq(0), count.eq(0)]
        with m.Elif(push):
            m.d.sync += [buf.eq(kept | placed), count.eq(kept_count + w)]
        with m.Else():
            m.d.sync += [buf.eq(kept), count.eq(kept_count)]
        return m
