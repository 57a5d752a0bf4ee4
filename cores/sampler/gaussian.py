"""Discrete Gaussian by a cumulative table, scanned whole for every sample (constant time)."""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, signed, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import validating
from hhe_gen.models.sampler import gaussian_cdt_table
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from ._common import chain, check_in_bytes, negate_if, popcount
from .bytes import ByteGatherer, byte_stream
from .residues import Residues, check_moduli

__all__ = ["CDTScan", "GaussianCDT"]


def _check_table(table, bits: int) -> tuple[int, ...]:
    try:
        table = tuple(table)
    except TypeError:
        raise ParameterError("table", table, "a sequence of integers") from None
    if not table or any(isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < 1 << bits for t in table):
        raise ParameterError("table", table, f"a non-empty sequence of integers in [0, 2^{bits})")
    return table


class CDTScan(wiring.Component):
    """The constant-time CDT scan of :func:`hhe_gen.models.sampler.gaussian_cdt_sample` on words.

    For a word ``w``: ``sign = w & 1``, ``u = w >> 1``, ``|e| = #{k : table[k] < u}`` over the
    whole table, ``e = -|e|`` if ``sign`` else ``|e|``.  The table is used exactly as given (it
    need not be monotone: Rubato's Par-128M/L table is not).

    The table's B entries are compared ``comparators`` at a time: a sample takes
    ``steps = ceil(B / comparators)`` cycles, every entry compared for every sample (padding
    entries equal to the largest u never count).  Which cycles a sample occupies depends only
    on the handshakes, never on the word (proven by the ``gaussian_timing`` harness).

    Two pipeline stages: A compares one group of entries per cycle with u and registers the
    result bits; B counts them into the running total and, after the last group, writes the
    signed result to the output register.  A starts the next word while B finishes the last
    group of the previous one.

    Parameters
    ----------
    table : sequence of int   B entries, each below 2^(word_bits - 1)
    word_bits : int           bits per word: 1 sign bit + (word_bits - 1) bits of u
    comparators : int         1..B comparisons per cycle (default B: one sample per cycle)

    Members
    -------
    i_stream : In(stream.Signature(unsigned(word_bits)))
    o_stream : Out(stream.Signature(signed(bitlen(B) + 1)))
    busy, step, u, sign : Signal      stage A (read-only, for formal harnesses): a word is being
        compared, which group of entries, the word's u and sign
    b_valid, b_first, b_last, b_sign, b_bits, acc : Signal   stage B: a group's comparison bits,
        whether it is the first / last group of its word, the word's sign, and the count of
        the groups before it

    Latency and throughput
    ----------------------
    A word accepted in cycle t gives its sample in cycle ``t + steps + 2`` (output register),
    unless the consumer stalls.  Initiation interval ``steps`` cycles.
    """

    def __init__(self, table, word_bits: int, comparators: int | None = None):
        with validating(self):
            self.word_bits = check_int("word_bits", word_bits, 2, 1024)
            self.table = _check_table(table, self.word_bits - 1)
            b = len(self.table)
            self.comparators = check_int("comparators", b if comparators is None else comparators, 1, b,
                                         f"an integer 1..{b} (the table has {b} entries)")
        self.steps = -(-len(self.table) // self.comparators)
        self.value_shape = signed(len(self.table).bit_length() + 1)
        super().__init__({"i_stream": In(stream.Signature(unsigned(self.word_bits))),
                          "o_stream": Out(stream.Signature(self.value_shape))})
        self.latency = self.steps + 2
        self.busy = Signal()
        self.step = Signal(range(max(self.steps, 2)))
        self.u = Signal(self.word_bits - 1)
        self.sign = Signal()
        self.b_valid = Signal()
        self.b_first = Signal()
        self.b_last = Signal()
        self.b_sign = Signal()
        self.b_bits = Signal(self.comparators)
        self.acc = Signal(range(len(self.table) + 1))

    def groups(self):
        """The table padded to ``steps * comparators`` entries, as ``steps`` groups."""
        c, ub = self.comparators, self.word_bits - 1
        padded = list(self.table) + [(1 << ub) - 1] * (self.steps * c - len(self.table))
        return [padded[s * c:(s + 1) * c] for s in range(self.steps)]

    def elaborate(self, platform):
        m = Module()
        c, steps, ub = self.comparators, self.steps, self.word_bits - 1
        groups = self.groups()
        u, sign, busy, step = self.u, self.sign, self.busy, self.step

        if steps == 1:
            entries = [Const(t, ub) for t in groups[0]]
        else:
            lanes = [Array(Const(groups[s][j], ub) for s in range(steps)) for j in range(c)]
            entries = [lane[step] for lane in lanes]
        compare = Cat(*(e < u for e in entries))

        total = Signal(range(len(self.table) + 1))
        m.d.comb += total.eq(Mux(self.b_first, 0, self.acc) + popcount(list(self.b_bits)))

        out_free = ~self.o_stream.valid | self.o_stream.ready
        stall = self.b_valid & self.b_last & ~out_free
        a_last = step == steps - 1
        m.d.comb += self.i_stream.ready.eq(~stall & (~busy | a_last))

        with m.If(~stall):
            # Stage B: count the group; after the last one, the result goes out.
            with m.If(self.b_valid):
                m.d.sync += self.acc.eq(total)
            with m.If(self.b_valid & self.b_last):
                m.d.sync += [self.o_stream.valid.eq(1), self.o_stream.payload.eq(negate_if(self.b_sign, total))]
            with m.Elif(self.o_stream.ready):
                m.d.sync += self.o_stream.valid.eq(0)
            # Stage A -> B.
            m.d.sync += [self.b_valid.eq(busy), self.b_bits.eq(compare), self.b_first.eq(step == 0),
                         self.b_last.eq(a_last), self.b_sign.eq(sign)]
            with m.If(busy & ~a_last):
                m.d.sync += step.eq(step + 1)
            word = self.i_stream.payload
            with m.If(self.i_stream.valid & self.i_stream.ready):
                m.d.sync += [busy.eq(1), step.eq(0), u.eq(word[1:]), sign.eq(word[0])]
            with m.Elif(busy & a_last):
                m.d.sync += busy.eq(0)
        return m


class GaussianCDT(wiring.Component):
    """Discrete Gaussian sampler, bit-exact with :func:`hhe_gen.models.sampler.gaussian_cdt`.

    XOF bytes -> :class:`ByteGatherer` (words of ``(bits+1)/8`` bytes) -> :class:`CDTScan` ->
    optionally :class:`Residues`.  Each sample consumes exactly one word (no rejection), so
    ``(bits+1)/8`` bytes per sample (8 for the default 63-bit table).  With ``table`` given it
    samples from that table instead (Rubato's noise: :class:`~.rubato.RubatoNoise`).

    Parameters
    ----------
    sigma, bound_sigmas : the distribution (default CKKS: 3.2, 6 sigma, bound B = 20)
    bits : int            table precision (word = bits + 1 bits); 7, 15, 31, 63 or 127
    table : sequence      explicit table of B entries < 2^bits (overrides sigma/bound_sigmas)
    in_bytes : int        W, XOF bytes per beat (1, 2, 4, 8)
    comparators : int     table entries compared per cycle, 1..B (default B)
    moduli : sequence     if given, every sample also comes out as residues mod each modulus

    Members
    -------
    i_stream : In(byte_stream(W))
    o_stream : Out(stream.Signature(signed(bitlen(B)+1)))  or, with ``moduli``,
               Out(stream.Signature(residue_layout(...)))   ``{value, residues[len(moduli)]}``
    abort : In(1)   restart (drop buffered bytes and the sample in flight)

    Throughput and latency
    ----------------------
    ``steps = ceil(B / comparators)`` cycles per sample for the scan, and ``k/W`` cycles per
    sample to bring the ``k = (bits+1)/8`` bytes in: ``max(steps, k/W)`` cycles per sample
    (1 for W = 8, 63-bit table, parallel comparators).  Latency from the beat completing a word
    to its sample: ``1 + steps + 2`` cycles, plus 1 with ``moduli``.  Never data dependent.
    """

    def __init__(self, sigma=3.2, bound_sigmas=6, bits: int = 63, *, table=None, in_bytes: int = 1,
                 comparators: int | None = None, moduli=None):
        with validating(self):
            self.in_bytes = check_in_bytes(in_bytes)
            if table is None:
                table = gaussian_cdt_table(sigma, bound_sigmas, bits)
            elif not isinstance(bits, int) or bits not in (7, 15, 31, 63, 127):
                raise ParameterError("bits", bits, "7, 15, 31, 63 or 127 (bits+1 a multiple of 8)")
            self.table = _check_table(table, bits)
            self.bits = bits
            self.word_bytes = (bits + 1) // 8
            self.moduli = None if moduli is None else check_moduli(moduli, len(self.table))
            self._scan = CDTScan(self.table, bits + 1, comparators)
            self._gather = ByteGatherer(self.in_bytes, self.word_bytes)
        self.comparators, self.steps = self._scan.comparators, self._scan.steps
        self.value_shape = self._scan.value_shape
        self._stages = [self._gather, self._scan]
        if self.moduli is not None:
            self._stages.append(Residues(self.moduli, self.value_shape, len(self.table)))
        super().__init__({"i_stream": In(byte_stream(self.in_bytes)),
                          "o_stream": Out(stream.Signature(self._stages[-1].o_stream.payload.shape())),
                          "abort": In(1)})

    @property
    def cycles_per_sample(self) -> float:
        """Steady-state cycles per sample at full input and output rate."""
        return max(self.steps, self.word_bytes / self.in_bytes)

    @property
    def latency(self) -> int:
        """Cycles from the beat that completes a word to its sample on ``o_stream`` (no stalls)."""
        return 1 + self._scan.latency + (self.moduli is not None)

    def elaborate(self, platform):
        m = Module()
        chain(m, self, self._stages, ["gather", "scan", "residues"])
        return m
