"""Uniform mod q by rejection sampling (CKKS's ``a``, Rubato's round constants)."""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import validating
from hhe_gen.params import checks
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from ._common import chain, check_in_bytes
from .bytes import ByteGatherer, byte_stream

__all__ = ["RejectionFilter", "UniformModQ"]


def _check_moduli(q) -> tuple[int, ...]:
    return checks.check_moduli(q, checks.modulus_above(1), name="q", distinct=False,
                               allowed="an integer modulus >= 2 or a non-empty sequence of them")


class RejectionFilter(wiring.Component):
    """Candidate words in, accepted values out: ``v = word & (2^bitlen(q) - 1)``, kept if ``v < q``.

    Parameters
    ----------
    word_bits : int       bits per candidate word (at least bitlen of every modulus)
    moduli : tuple[int]   one modulus, or several chosen at run time by ``modulus``

    Members
    -------
    i_stream : In(stream.Signature(unsigned(word_bits)))
    o_stream : Out(stream.Signature(unsigned(max bitlen(q))))
    modulus : In(range(len(moduli)))   only with several moduli; change it only between vectors
                                       (with the sampler's ``clear``)

    Latency 1 cycle (registered); one candidate per cycle, rejected ones leave no output.
    """

    def __init__(self, word_bits: int, moduli):
        with validating(self):
            self.moduli = _check_moduli(moduli)
            need = max(q.bit_length() for q in self.moduli)
            self.word_bits = check_int("word_bits", word_bits, need, None,
                                       f"an integer >= {need} (the widest modulus)")
        self.value_bits = max(q.bit_length() for q in self.moduli)
        members = {"i_stream": In(stream.Signature(unsigned(self.word_bits))),
                   "o_stream": Out(stream.Signature(unsigned(self.value_bits)))}
        if len(self.moduli) > 1:
            members["modulus"] = In(range(len(self.moduli)))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        vb = self.value_bits
        if len(self.moduli) == 1:
            q, mask = Const(self.moduli[0], vb), Const((1 << self.moduli[0].bit_length()) - 1, vb)
        else:
            q = Array(Const(x, vb) for x in self.moduli)[self.modulus]
            mask = Array(Const((1 << x.bit_length()) - 1, vb) for x in self.moduli)[self.modulus]
        value = Signal(vb)
        m.d.comb += value.eq(self.i_stream.payload[:vb] & mask)
        enable = ~self.o_stream.valid | self.o_stream.ready
        m.d.comb += self.i_stream.ready.eq(enable)
        with m.If(enable):
            m.d.sync += [self.o_stream.valid.eq(self.i_stream.valid & (value < q)),
                         self.o_stream.payload.eq(value)]
        return m


class UniformModQ(wiring.Component):
    """Values uniform in ``[0, q)``, bit-exact with :func:`hhe_gen.models.sampler.uniform_mod_q`.

    XOF bytes -> :class:`ByteGatherer` (words of ``k = ceil(bitlen(q)/8)`` bytes) ->
    :class:`RejectionFilter`.  Uniform mod q is uniform in the NTT domain too, so the same
    stream serves as the NTT-domain ``a`` of secret-key encryption (one stream per prime, each
    from its own seeded XOF as :mod:`hhe_gen.models.ckks` does).  Rubato's round constants are
    the case k = 4 (:class:`~.rubato.RubatoRoundConstants`).

    Parameters
    ----------
    q : int or sequence of int   the modulus, or an RNS set chosen at run time by ``modulus``
                                 (all with the same k)
    in_bytes : int               W, XOF bytes per beat (1, 2, 4, 8)
    word_bytes : int             k, bytes per candidate (default ``ceil(bitlen(q)/8)``, the model's)

    Members
    -------
    i_stream : In(byte_stream(W))
    o_stream : Out(stream.Signature(unsigned(bitlen(q))))
    modulus : In(range(len(q)))   only with several moduli
    abort : In(1)                 restart (drop buffered bytes and the value in flight)

    Throughput and latency
    ----------------------
    One candidate per ``max(1, k/W)`` cycles, each accepted with probability ``q / 2^bitlen(q)``
    (> 1/2): ``k / (accept rate)`` bytes per value on average.  Which candidates are rejected
    depends on the random stream only (rejected words carry no information about accepted
    ones).  Latency: 2 cycles from the beat that completes an accepted word to its value.
    """

    def __init__(self, q, *, in_bytes: int = 1, word_bytes: int | None = None):
        with validating(self):
            self.moduli = _check_moduli(q)
            self.in_bytes = check_in_bytes(in_bytes)
            ks = {-(-x.bit_length() // 8) for x in self.moduli}
            need = max(ks)
            if word_bytes is None:
                if len(ks) > 1:
                    raise ParameterError("q", q, "moduli with the same byte length ceil(bitlen(q)/8)")
                word_bytes = need
            self.word_bytes = check_int("word_bytes", word_bytes, need, 64,
                                        f"an integer {need}..64 (bytes per candidate)")
            self._gather = ByteGatherer(self.in_bytes, self.word_bytes)
            self._filter = RejectionFilter(8 * self.word_bytes, self.moduli)
        self.value_bits = self._filter.value_bits
        members = {"i_stream": In(byte_stream(self.in_bytes)),
                   "o_stream": Out(stream.Signature(unsigned(self.value_bits))),
                   "abort": In(1)}
        if len(self.moduli) > 1:
            members["modulus"] = In(range(len(self.moduli)))
        super().__init__(members)

    def accept_rate(self, index: int = 0) -> float:
        """Probability that a candidate is accepted for modulus ``index``."""
        q = self.moduli[index]
        return q / (1 << q.bit_length())

    @property
    def cycles_per_candidate(self) -> float:
        """Steady-state cycles per candidate word at full input and output rate."""
        return max(1.0, self.word_bytes / self.in_bytes)

    def elaborate(self, platform):
        m = Module()
        chain(m, self, [self._gather, self._filter], ["gather", "filter"])
        if len(self.moduli) > 1:
            m.d.comb += self._filter.modulus.eq(self.modulus)
        return m
