"""Byte gatherer: W-byte beats of an XOF stream in, k-byte candidate words out."""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import validating
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from ._common import check_in_bytes

__all__ = ["ByteGatherer", "byte_stream", "choose_structure"]


def byte_stream(in_bytes: int) -> stream.Signature:
    """The byte-stream signature shared with the XOF: ``in_bytes`` bytes per beat, little-endian
    (the first byte of the stream in bits 0..7 of the first beat)."""
    return stream.Signature(unsigned(8 * check_in_bytes(in_bytes)))


def choose_structure(in_bytes: int, word_bytes: int, variable: bool = False, structure=None):
    """(structure, capacity in bytes) of a :class:`ByteGatherer` with these parameters."""
    w, k = in_bytes, word_bytes
    if structure is None and not variable and w % k == 0:
        return "beat", w
    if structure is None and not variable and k % w == 0:
        return "shift", k
    if structure == "buffer":
        return "buffer", k + w - 1 + max(k, w)
    return "window", -(-(w - 1 + k) // w) * w


class ByteGatherer(wiring.Component):
    """Turns a stream of W-byte beats into a stream of k-byte words, losing and repeating nothing.

    Word number t of the output is bytes ``t*k .. t*k+k-1`` of the input stream read as a
    little-endian integer (first byte least significant), exactly the "word of k bytes" of
    :mod:`hhe_gen.models.sampler`.  With ``variable=True`` each output word takes ``take``
    bytes (1..k, chosen by the consumer per word; the upper ``k - take`` bytes of the payload
    are zero).

    Three structures, chosen from W and k (``structure``):

    * ``"beat"`` (k divides W, fixed size): one beat register; its W/k words are offered in turn
      (a W/k-way word mux), and the next beat is taken in the cycle the last word leaves.
    * ``"shift"`` (W divides k, k > W, fixed size): beats shift into a k-byte register; the word
      is offered when k/W beats are in, and the next beat is taken in the cycle it leaves.
    * ``"window"`` (any other W, k, or ``variable``): ``S = ceil((W - 1 + k) / W)`` beat slots
      and a byte offset into the oldest; a word is the k bytes at the offset (a W-way byte mux),
      consumed slots shift out and a beat enters the first free slot.
    * ``"buffer"`` (only on request, ``structure="buffer"``): a byte shift buffer of ``k + W - 1 +
      max(k, W)`` bytes that accepts a beat when W bytes are free (a registered condition); larger
      and slower than the window, but without a combinational ready path.

    The first three take a beat in the cycle the word that frees its room leaves: there is a
    combinational path from ``o_stream.ready`` to ``i_stream.ready``, as through a pipeline
    register.  ``count`` and ``buffer`` describe the bytes held in every structure the same way
    (for the proofs).

    Parameters
    ----------
    in_bytes : int     W, bytes per input beat: 1, 2, 4 or 8
    word_bytes : int   k, bytes per output word (the maximum one with ``variable``): 1..64
    variable : bool    add the ``take`` input (bytes consumed by the current word)
    structure : str    None (the best for W and k), or "window" / "buffer" to force one

    Members
    -------
    i_stream : In(stream.Signature(unsigned(8*W)))    XOF bytes
    o_stream : Out(stream.Signature(unsigned(8*k)))   words
    take : In(range(1, k+1))   only with ``variable``; hold it stable while ``o_stream.valid``
                               is high and ``ready`` low
    abort : In(1)   drop every buffered byte (restart for a new XOF message); no handshake
                    completes in a cycle with ``clear`` high
    count : Signal    bytes held (read-only, for formal harnesses and debugging)
    buffer : Signal   the bytes held, oldest in bits 0..7; zero above ``count`` (read-only)
    structure : str   "beat", "shift" or "buffer"
    capacity : int    bytes the structure can hold
    consistent : Signal   1 when the internal counters are in range (an invariant the formal
                          harness proves; read-only)

    Throughput and latency
    ----------------------
    Full rate in both directions: one word per cycle when ``W >= k``, one beat per cycle (W/k
    words per cycle) when ``W < k``, provided the other side keeps up.  Latency: a word is valid
    the cycle after the beat that completes it was accepted (1 cycle).
    """

    def __init__(self, in_bytes: int = 1, word_bytes: int = 1, *, variable: bool = False, structure=None):
        with validating(self):
            self.in_bytes = check_in_bytes(in_bytes)
            self.word_bytes = check_int("word_bytes", word_bytes, 1, 64)
            if structure not in (None, "window", "buffer"):
                raise ParameterError("structure", structure, "None (automatic), 'window' or 'buffer'")
        self.variable = bool(variable)
        w, k = self.in_bytes, self.word_bytes
        self.slots = -(-(w - 1 + k) // w)
        self.structure, self.capacity = choose_structure(w, k, self.variable, structure)
        members = {
            "i_stream": In(byte_stream(self.in_bytes)),
            "o_stream": Out(stream.Signature(unsigned(8 * self.word_bytes))),
            "abort": In(1),
        }
        if self.variable:
            members["take"] = In(range(1, self.word_bytes + 1))
        super().__init__(members)
        self.count = Signal(range(self.capacity + 1))
        self.buffer = Signal(8 * self.capacity)
        self.consistent = Signal()

    def elaborate(self, platform):
        if self.structure == "beat":
            return self._elaborate_beat()
        if self.structure == "shift":
            return self._elaborate_shift()
        if self.structure == "window":
            return self._elaborate_window()
        return self._elaborate_buffer()

    def _elaborate_window(self):
        m = Module()
        w, k, n_slots = self.in_bytes, self.word_bytes, self.slots
        lw = w.bit_length() - 1                   # W is a power of two
        slots = [Signal(8 * w, name=f"slot{i}") for i in range(n_slots)]
        filled = Signal(range(n_slots + 1))       # valid slots (slot 0 the oldest)
        off = Signal(range(max(w, 2)))            # bytes of slot 0 already consumed
        window = Cat(*slots)
        take = self.take if self.variable else k
        m.d.comb += [
            self.consistent.eq((filled <= n_slots) & (off < w) & ((filled != 0) | (off == 0))),
            self.count.eq(filled * w - off),
            self.buffer.eq(window >> (8 * off)),
        ]
        # The word: the k bytes at the offset (upper bytes beyond `take` zero when variable).
        word = Signal(8 * k)
        with m.Switch(off):
            for o in range(w):
                with m.Case(o):
                    m.d.comb += word.eq(window[8 * o:8 * o + 8 * k])
        if self.variable:
            with m.Switch(take):
                for t in range(1, k + 1):
                    with m.Case(t):
                        m.d.comb += self.o_stream.payload.eq(word[:8 * t])
        else:
            m.d.comb += self.o_stream.payload.eq(word)
        m.d.comb += self.o_stream.valid.eq(~self.abort & (self.count >= take))
        pop = self.o_stream.valid & self.o_stream.ready

        moved = Signal(range(w + k))              # offset after the pop, before dropping slots
        m.d.comb += moved.eq(off + Mux(pop, take, 0))
        consumed = moved[lw:] if lw else moved
        remaining = Signal(range(n_slots + 1))
        m.d.comb += [remaining.eq(filled - consumed),
                     self.i_stream.ready.eq(~self.abort & (remaining < n_slots))]
        push = self.i_stream.valid & self.i_stream.ready

        with m.If(self.abort):
            m.d.sync += [filled.eq(0), off.eq(0)] + [s.eq(0) for s in slots]
        with m.Else():
            m.d.sync += [off.eq(moved[:lw] if lw else 0), filled.eq(remaining + push)]
            with m.Switch(consumed):
                for c in range(((w + k - 1) >> lw) + 1):      # at most the slots a word spans
                    with m.Case(c):
                        for j in range(n_slots):
                            src = slots[j + c] if j + c < n_slots else 0
                            with m.If(push & (remaining == j)):
                                m.d.sync += slots[j].eq(self.i_stream.payload)
                            with m.Else():
                                m.d.sync += slots[j].eq(src)
        return m

    def _elaborate_beat(self):
        m = Module()
        w, k = self.in_bytes, self.word_bytes
        words = w // k
        beat = Signal(8 * w)
        idx = Signal(range(max(words, 2)))
        full = Signal()
        last = idx == words - 1
        m.d.comb += self.consistent.eq((idx < words) & (full | (idx == 0)))
        m.d.comb += [
            self.o_stream.valid.eq(~self.abort & full),
            self.o_stream.payload.eq(beat.word_select(idx, 8 * k) if words > 1 else beat),
            self.i_stream.ready.eq(~self.abort & (~full | (self.o_stream.ready & last))),
            self.count.eq(Mux(full, w - k * idx, 0)),
            self.buffer.eq(Mux(full, beat >> (8 * k * idx), 0)),
        ]
        pop = self.o_stream.valid & self.o_stream.ready
        with m.If(self.abort):
            m.d.sync += [full.eq(0), idx.eq(0)]
        with m.Elif(self.i_stream.valid & self.i_stream.ready):
            m.d.sync += [beat.eq(self.i_stream.payload), idx.eq(0), full.eq(1)]
        with m.Elif(pop):
            with m.If(last):
                m.d.sync += [full.eq(0), idx.eq(0)]
            with m.Else():
                m.d.sync += idx.eq(idx + 1)
        return m

    def _elaborate_shift(self):
        m = Module()
        w, k = self.in_bytes, self.word_bytes
        beats = k // w
        word = Signal(8 * k)
        n = Signal(range(beats + 1))           # beats collected (the newest at the top)
        done = n == beats
        missing = Signal(range(beats + 1))
        m.d.comb += [missing.eq(beats - n), self.consistent.eq(n <= beats)]
        m.d.comb += [
            self.o_stream.valid.eq(~self.abort & done),
            self.o_stream.payload.eq(word),
            self.i_stream.ready.eq(~self.abort & (~done | self.o_stream.ready)),
            self.count.eq(n * w),
            self.buffer.eq(word >> (8 * w * missing)),
        ]
        pop = self.o_stream.valid & self.o_stream.ready
        with m.If(self.abort):
            m.d.sync += n.eq(0)
        with m.Elif(self.i_stream.valid & self.i_stream.ready):
            m.d.sync += [word.eq(Cat(word[8 * w:], self.i_stream.payload)), n.eq(Mux(done, 1, n + 1))]
        with m.Elif(pop):
            m.d.sync += n.eq(0)
        return m

    def _elaborate_buffer(self):
        m = Module()
        w, k, cap = self.in_bytes, self.word_bytes, self.capacity
        buf, count = self.buffer, self.count
        m.d.comb += self.consistent.eq(count <= cap)
        take = self.take if self.variable else k

        if self.variable:   # only the `take` consumed bytes: the payload is stable while it waits
            with m.Switch(take):
                for t in range(1, k + 1):
                    with m.Case(t):
                        m.d.comb += self.o_stream.payload.eq(buf[:8 * t])
        else:
            m.d.comb += self.o_stream.payload.eq(buf[:8 * k])
        m.d.comb += [
            self.o_stream.valid.eq(~self.abort & (count >= take)),
            self.i_stream.ready.eq(~self.abort & (count <= cap - w)),
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

        with m.If(self.abort):
            m.d.sync += [buf.eq(0), count.eq(0)]
        with m.Elif(push):
            m.d.sync += [buf.eq(kept | placed), count.eq(kept_count + w)]
        with m.Else():
            m.d.sync += [buf.eq(kept), count.eq(kept_count)]
        return m
