"""Ternary samplers: uniform {-1, 0, 1} and fixed Hamming weight h."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import validating
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from ._common import chain, check_in_bytes
from .bytes import ByteGatherer, byte_stream
from .residues import Residues, check_moduli

__all__ = ["PieceSelector", "PiecePairSelector", "TernaryUniform", "HammingShuffle", "TernaryHamming"]

TERNARY = signed(2)


def _ternary_of_piece(piece):
    """0 -> 0, 1 -> +1, 2 -> -1 (3 is rejected before it gets here)."""
    return Mux(piece == 2, -1, piece)


class PieceSelector(wiring.Component):
    """Bytes in, ternary values out: the four 2-bit pieces of each byte, least significant first;
    piece 0 -> 0, 1 -> +1, 2 -> -1, 3 -> skipped (:func:`hhe_gen.models.sampler.ternary_uniform`).

    Members
    -------
    i_stream : In(stream.Signature(unsigned(8)))
    o_stream : Out(stream.Signature(signed(2)))
    pieces, left : Signal   state (read-only, for formal harnesses)

    One value per cycle; a byte is taken in the cycle its last accepted piece leaves (or, with
    no piece left, at once), so a byte of ``a`` accepted pieces occupies ``max(a, 1)`` cycles.
    Latency 1 cycle.
    """

    def __init__(self):
        super().__init__({"i_stream": In(stream.Signature(unsigned(8))),
                          "o_stream": Out(stream.Signature(TERNARY))})
        self.pieces = Signal(8)      # the current byte
        self.left = Signal(4)        # its accepted pieces not yet output (one bit per piece)

    def elaborate(self, platform):
        m = Module()
        pieces, left = self.pieces, self.left
        first = Signal(4)        # one-hot: the lowest of them
        m.d.comb += first.eq(left & -left)
        piece = Signal(2)
        m.d.comb += piece.eq(Mux(first[0], pieces[0:2], Mux(first[1], pieces[2:4],
                                                             Mux(first[2], pieces[4:6], pieces[6:8]))))
        pop = self.o_stream.valid & self.o_stream.ready
        remaining = Signal(4)
        m.d.comb += [
            self.o_stream.valid.eq(left != 0),
            self.o_stream.payload.eq(_ternary_of_piece(piece)),
            remaining.eq(Mux(pop, left & ~first, left)),
            self.i_stream.ready.eq(remaining == 0),
        ]
        byte = self.i_stream.payload
        with m.If(self.i_stream.valid & self.i_stream.ready):
            m.d.sync += [pieces.eq(byte),
                         left.eq(Cat(*(byte[2 * i:2 * i + 2] != 3 for i in range(4))))]
        with m.Else():
            m.d.sync += left.eq(remaining)
        return m


class PiecePairSelector(wiring.Component):
    """Bytes in, two ternary values per cycle out, in :class:`PieceSelector`'s order (the n-th value
    is the n-th accepted 2-bit piece of the byte stream, least significant piece first; piece 3
    skipped: :func:`hhe_gen.models.sampler.ternary_uniform`).

    A buffer of up to 6 values: a byte is taken when at most 2 values are left after this cycle's
    pair leaves, and its accepted pieces (0 .. 4, compacted in order) are appended behind them.

    Members
    -------
    i_stream : In(stream.Signature(unsigned(8)))
    o_stream : Out(stream.Signature(ArrayLayout(signed(2), 2)))   value 0 first in the order
    fill, values : Signal, list of Signal   values held and the buffer, ``values[0]`` next out
                    (read-only, for harnesses)

    Throughput and latency
    ----------------------
    Two values per cycle while the bytes keep up (a byte gives 3 values on average, 2/3 byte per
    cycle is needed); a cycle with fewer than two values held is idle.  Latency 1 cycle from a
    byte to the first pair it completes.  Which cycles are idle depends on the rejected pieces
    only, never on the values output.
    """

    DEPTH = 6

    def __init__(self):
        super().__init__({"i_stream": In(stream.Signature(unsigned(8))),
                          "o_stream": Out(stream.Signature(data.ArrayLayout(TERNARY, 2)))})
        self.fill = Signal(range(self.DEPTH + 1))
        self.values = [Signal(TERNARY, name=f"value{i}") for i in range(self.DEPTH)]

    def elaborate(self, platform):
        m = Module()
        depth, fill, buf = self.DEPTH, self.fill, self.values
        pop = Signal()
        left = Signal(range(depth + 1))          # values held after this cycle's pair leaves
        m.d.comb += [self.o_stream.valid.eq(fill >= 2), self.o_stream.payload[0].eq(buf[0]),
                     self.o_stream.payload[1].eq(buf[1]),
                     pop.eq(self.o_stream.valid & self.o_stream.ready),
                     left.eq(fill - Mux(pop, 2, 0)),
                     self.i_stream.ready.eq(left <= 2)]
        take = self.i_stream.valid & self.i_stream.ready
        byte = self.i_stream.payload
        pieces = [byte[2 * i:2 * i + 2] for i in range(4)]
        kept = [p != 3 for p in pieces]
        # compacted[j] = the j-th accepted piece's value: piece i is the (number of accepted
        # pieces below it)-th
        below = [sum((kept[k] for k in range(i)), Const(0, 3)) for i in range(4)]
        compacted = [Signal(TERNARY, name=f"accepted{j}") for j in range(4)]
        for j, v in enumerate(compacted):       # one-hot select: only piece i >= j can be the j-th
            terms = [Mux(kept[i] & (below[i] == j), _ternary_of_piece(pieces[i]), 0) for i in range(j, 4)]
            acc = terms[0]
            for t in terms[1:]:
                acc = acc | t
            m.d.comb += v.eq(acc)
        count = below[3] + kept[3]
        shifted = [Mux(pop, buf[i + 2] if i + 2 < depth else 0, buf[i]) for i in range(depth)]
        for i in range(depth):
            new = shifted[i]
            for j in range(4):          # slot i takes the j-th new value when i == left + j
                new = Mux(take & (left + j == i) & (count > j), compacted[j], new)
            m.d.sync += buf[i].eq(new)
        m.d.sync += fill.eq(left + Mux(take, count, 0))
        return m


class TernaryUniform(wiring.Component):
    """Values uniform over {-1, 0, 1}, bit-exact with :func:`hhe_gen.models.sampler.ternary_uniform`.

    XOF bytes -> :class:`ByteGatherer` (1-byte words) -> :class:`PieceSelector` -> optional
    :class:`Residues`.  Consecutive vectors read from one stream equal consecutive model calls
    only if each vector ends on a byte boundary (the model drops the unused pieces of the last
    byte): restart with ``clear`` and a fresh XOF per vector, as :mod:`hhe_gen.models.ckks` does.

    Parameters
    ----------
    in_bytes : int     W, XOF bytes per beat
    moduli : sequence  optional residue outputs (one value per cycle only)
    values_per_cycle : int   1 (:class:`PieceSelector`) or 2 (:class:`PiecePairSelector`: the
                       payload is then an ``ArrayLayout(signed(2), 2)``, the earlier value first)

    Members
    -------
    i_stream : In(byte_stream(W))
    o_stream : Out(stream.Signature(signed(2)))   or ``{value, residues}`` with ``moduli``, or two
                       values a beat
    abort : In(1)

    Throughput and latency
    ----------------------
    One value per cycle while bytes keep up (a byte gives 3 values on average; a byte whose
    four pieces are all rejected costs one idle cycle); 1/3 byte per value on average.  Latency
    2 cycles from the beat to its first value (+1 with ``moduli``).  ``values_per_cycle=2``: two
    values a cycle while bytes keep up (the gatherer gives one byte a cycle, 2/3 are needed).
    Which cycles are idle depends on the rejected pieces only, never on the values output.
    """

    def __init__(self, *, in_bytes: int = 1, moduli=None, values_per_cycle: int = 1):
        with validating(self):
            self.in_bytes = check_in_bytes(in_bytes)
            self.moduli = None if moduli is None else check_moduli(moduli, 1)
            self.values_per_cycle = check_int("values_per_cycle", values_per_cycle, 1, 2)
            if self.moduli is not None and self.values_per_cycle > 1:
                raise ParameterError("values_per_cycle", values_per_cycle, "1 with residue outputs (moduli)")
        selector = PieceSelector() if self.values_per_cycle == 1 else PiecePairSelector()
        self._stages = [ByteGatherer(self.in_bytes, 1), selector]
        if self.moduli is not None:
            self._stages.append(Residues(self.moduli, TERNARY, 1))
        super().__init__({"i_stream": In(byte_stream(self.in_bytes)),
                          "o_stream": Out(stream.Signature(self._stages[-1].o_stream.payload.shape())),
                          "abort": In(1)})

    def elaborate(self, platform):
        m = Module()
        chain(m, self, self._stages, ["gather", "pieces", "residues"])
        return m


class HammingShuffle(wiring.Component):
    """The fixed-Hamming-weight shuffle of :func:`hhe_gen.models.sampler.ternary_hamming` on a
    stream of gathered words (see :class:`TernaryHamming` for the whole sampler).

    Per vector: (1) ``ceil(h/8)`` sign bytes (``take = 1``) into a sign memory while the
    coefficient memory is zeroed (``count`` cycles, in parallel); (2) for ``i = count-h ..
    count-1``: k-byte candidates (``take = k``) masked to ``bitlen(i)`` bits, rejected while
    ``> i``; the accepted ``j`` costs 2 more cycles (``c[i] = c[j]``, then ``c[j] = sign``),
    whatever its value; (3) ``count`` values out, one per cycle, then the next vector.

    Members
    -------
    i_stream : In(stream.Signature(unsigned(8*k)))   gathered words (low ``take`` bytes used)
    take : Out(range(1, k+1))                        bytes wanted from the current word
    o_stream : Out(stream.Signature(signed(2)))
    """

    def __init__(self, count: int, h: int, word_bytes: int):
        self.count, self.h, self.word_bytes = count, h, word_bytes
        self.sign_bytes = (h + 7) // 8
        super().__init__({"i_stream": In(stream.Signature(unsigned(8 * word_bytes))),
                          "take": Out(range(1, word_bytes + 1)),
                          "o_stream": Out(stream.Signature(TERNARY))})

    def elaborate(self, platform):
        m = Module()
        count, h, k = self.count, self.h, self.word_bytes
        m.submodules.coeffs = coeffs = memory.Memory(shape=TERNARY, depth=count, init=[])
        wr, rd = coeffs.write_port(), coeffs.read_port()
        m.d.comb += rd.en.eq(0)          # read ports' enables default to 1: hold unless told
        if h:
            m.submodules.signs = signs = memory.Memory(shape=unsigned(8), depth=self.sign_bytes, init=[])
            swr, srd = signs.write_port(), signs.read_port()
            m.d.comb += srd.en.eq(0)

        zero_at = Signal(range(count + 1))       # next coefficient to zero
        sign_at = Signal(range(self.sign_bytes + 1))
        t = Signal(range(h + 1))                 # shuffle step
        i = Signal(range(max(count, 2)))
        mask = Signal(range(max(count, 2)))
        j = Signal(range(max(count, 2)))
        out_at = Signal(range(count + 1))
        o_valid = Signal()
        word = self.i_stream.payload
        candidate = Signal(range(max(count, 2)))
        m.d.comb += candidate.eq(word[:len(candidate)] & mask)
        out_free = ~o_valid | self.o_stream.ready
        m.d.comb += [self.o_stream.valid.eq(o_valid), self.o_stream.payload.eq(rd.data)]
        if h:
            m.d.comb += [srd.addr.eq(t >> 3), swr.addr.eq(sign_at), swr.data.eq(word[:8])]

        start_i = count - h
        start_mask = (1 << start_i.bit_length()) - 1
        with m.FSM(name="phase"):
            with m.State("SIGNS"):      # zero the coefficients while the sign bytes arrive
                m.d.comb += self.take.eq(1)
                with m.If(zero_at < count):
                    m.d.comb += [wr.addr.eq(zero_at), wr.data.eq(0), wr.en.eq(1)]
                    m.d.sync += zero_at.eq(zero_at + 1)
                if h:
                    with m.If(sign_at < self.sign_bytes):
                        m.d.comb += self.i_stream.ready.eq(1)
                        with m.If(self.i_stream.valid):
                            m.d.comb += swr.en.eq(1)
                            m.d.sync += sign_at.eq(sign_at + 1)
                signs_done = (sign_at == self.sign_bytes) if h else 1
                with m.If((zero_at == count) & signs_done):
                    m.d.sync += [t.eq(0), i.eq(start_i), mask.eq(start_mask)]
                    m.next = "DRAW" if h else "OUT"
            with m.State("DRAW"):       # candidates until one is <= i; read c[j] and the sign
                m.d.comb += [self.take.eq(k), self.i_stream.ready.eq(1), rd.addr.eq(candidate)]
                with m.If(self.i_stream.valid & (candidate <= i)):
                    m.d.comb += [rd.en.eq(1)]
                    if h:
                        m.d.comb += srd.en.eq(1)
                    m.d.sync += j.eq(candidate)
                    m.next = "MOVE"
            with m.State("MOVE"):       # c[i] = c[j]
                m.d.comb += [self.take.eq(k), wr.addr.eq(i), wr.data.eq(rd.data), wr.en.eq(1)]
                m.next = "SIGN"
            with m.State("SIGN"):       # c[j] = sign_t
                m.d.comb += [self.take.eq(k), wr.addr.eq(j), wr.en.eq(1)]
                if h:
                    bit = srd.data.bit_select(t[:3], 1)
                    m.d.comb += wr.data.eq(Mux(bit, -1, 1))
                m.d.sync += [t.eq(t + 1), i.eq(i + 1)]
                with m.If(i + 1 > mask):
                    m.d.sync += mask.eq(Cat(1, mask))
                with m.If(t == h - 1):
                    m.d.sync += out_at.eq(0)
                    m.next = "OUT"
                with m.Else():
                    m.next = "DRAW"
            with m.State("OUT"):        # stream c[0..count-1]; the read port holds while stalled
                m.d.comb += [self.take.eq(k), rd.addr.eq(out_at)]
                with m.If(out_free):
                    with m.If(out_at < count):
                        m.d.comb += rd.en.eq(1)
                        m.d.sync += [out_at.eq(out_at + 1), o_valid.eq(1)]
                    with m.Else():
                        m.d.sync += [o_valid.eq(0), zero_at.eq(0), sign_at.eq(0)]
                        m.next = "SIGNS"
        return m


class TernaryHamming(wiring.Component):
    """Vectors of ``count`` values in {-1, 0, 1} with exactly ``h`` non-zero ones, bit-exact with
    :func:`hhe_gen.models.sampler.ternary_hamming` (same values, same bytes consumed).

    XOF bytes -> :class:`ByteGatherer` (variable word size: 1-byte sign words, then k-byte
    position candidates, ``k = max(1, ceil(bitlen(count-1)/8))``) -> :class:`HammingShuffle`
    -> optional :class:`Residues`.  Memories: ``count`` x 2 bits (coefficients) and
    ``ceil(h/8)`` x 8 bits (signs).  Vectors follow each other; consecutive vectors read from
    one stream equal consecutive model calls on one XOF.

    Parameters
    ----------
    count : int     vector length (the ring degree N), 1..2^17
    h : int         Hamming weight, 0..count
    in_bytes : int  W, XOF bytes per beat
    moduli : sequence  optional residue outputs

    Members
    -------
    i_stream : In(byte_stream(W))
    o_stream : Out(stream.Signature(signed(2)))   or ``{value, residues}`` with ``moduli``
    abort : In(1)    restart the current vector (memories are re-zeroed by the next vector)

    Cycles (input at full rate with ``W >= k``, always-ready output)
    -----------------------------------------------------------------
    The first value comes ``max(count, ceil(h/8) + 1) + sum_t (candidates_t + 2) + 2`` cycles
    after the first beat, then one value per cycle (``count`` cycles), and the next vector
    starts one cycle after the last value; ``candidates_t`` is the number of candidates drawn
    for step t (each accepted with probability > 1/2).  The 2 cycles per step do not depend on
    the position or sign drawn.  Bytes per vector: ``ceil(h/8) + k * sum_t candidates_t``.
    """

    def __init__(self, count: int, h: int, *, in_bytes: int = 1, moduli=None):
        with validating(self):
            self.count = check_int("count", count, 1, 1 << 17)
            self.h = check_int("h", h, 0, self.count, f"an integer 0..count = {self.count}")
            self.in_bytes = check_in_bytes(in_bytes)
            self.moduli = None if moduli is None else check_moduli(moduli, 1)
        self.word_bytes = max(1, ((self.count - 1).bit_length() + 7) // 8)
        self._gather = ByteGatherer(self.in_bytes, self.word_bytes, variable=self.word_bytes > 1)
        self._shuffle = HammingShuffle(self.count, self.h, self.word_bytes)
        self._stages = [self._gather, self._shuffle]
        if self.moduli is not None:
            self._stages.append(Residues(self.moduli, TERNARY, 1))
        super().__init__({"i_stream": In(byte_stream(self.in_bytes)),
                          "o_stream": Out(stream.Signature(self._stages[-1].o_stream.payload.shape())),
                          "abort": In(1)})

    def elaborate(self, platform):
        m = Module()
        chain(m, self, self._stages, ["gather", "shuffle", "residues"])
        if self._gather.variable:
            m.d.comb += self._gather.take.eq(self._shuffle.take)
        return m
