"""Deliberately broken sampler cores: each harness must refute its mutant (``expect="FAIL"``),
which shows the harness can find the kind of bug it is there for.

===========================  ==================  ================================================
mutant                       harness             bug
===========================  ==================  ================================================
:class:`CorruptingGatherer`  ``gatherer``        an input byte 0x5a arrives as 0x5b
:class:`LeakyGaussianCDT`    ``gaussian_timing`` a zero sample is held one extra cycle
:class:`LessEqualScan`       ``cdt_contract``    compares T <= u instead of T < u
:class:`OffByOneFilter`      ``rejection``       accepts v <= q (q itself comes out)
:class:`NegatingSelector`    ``ternary``         +1 and -1 swapped
===========================  ==================  ================================================
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from hhe_gen.cores.sampler import ByteGatherer, CDTScan, GaussianCDT, PiecePairSelector, PieceSelector, RejectionFilter
from hhe_gen.cores.unused import mark_unused

__all__ = ["CorruptingGatherer", "LeakyScan", "LeakyGaussianCDT", "LessEqualScan", "OffByOneFilter",
           "NegatingSelector", "SwappingPairSelector"]


class CorruptingGatherer(ByteGatherer):
    """A gatherer that flips bit 0 of every input beat equal to 0x5a."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._inner = ByteGatherer(self.in_bytes, self.word_bytes, variable=self.variable)
        self.count, self.buffer, self.consistent = self._inner.count, self._inner.buffer, self._inner.consistent

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self._inner
        m.d.comb += [
            inner.i_stream.valid.eq(self.i_stream.valid),
            inner.i_stream.payload.eq(self.i_stream.payload ^ (self.i_stream.payload == 0x5a)),
            self.i_stream.ready.eq(inner.i_stream.ready),
            inner.abort.eq(self.abort),
        ]
        if self.variable:
            m.d.comb += inner.take.eq(self.take)
        wiring.connect(m, inner.o_stream, wiring.flipped(self.o_stream))
        return m


class LeakyScan(CDTScan):
    """A scan whose result is held one extra cycle when it is zero: data-dependent timing."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._inner = CDTScan(*args, **kwargs)
        for name in ("busy", "step", "b_valid", "b_first", "b_last"):
            setattr(self, name, getattr(self._inner, name))

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self._inner
        held = Signal()
        zero = inner.o_stream.payload == 0
        with m.If(inner.o_stream.valid & zero & ~held):
            m.d.sync += held.eq(1)
        with m.If(self.o_stream.valid & self.o_stream.ready):
            m.d.sync += held.eq(0)
        wiring.connect(m, wiring.flipped(self.i_stream), inner.i_stream)
        m.d.comb += [
            self.o_stream.valid.eq(inner.o_stream.valid & (~zero | held)),
            self.o_stream.payload.eq(inner.o_stream.payload),
            inner.o_stream.ready.eq(self.o_stream.ready & (~zero | held)),
        ]
        return m


class LeakyGaussianCDT(GaussianCDT):
    """A GaussianCDT whose scan is a :class:`LeakyScan`."""

    def __init__(self, **params):
        super().__init__(**params)
        mark_unused(self._scan)        # replaced before elaboration
        self._scan = LeakyScan(self.table, self.bits + 1, self.comparators)
        self._stages[1] = self._scan


class LessEqualScan(CDTScan):
    """Compares T <= u instead of T < u (entries lowered by one): off by one at the breakpoints."""

    def groups(self):
        return [[max(t - 1, 0) for t in g] for g in super().groups()]


class OffByOneFilter(RejectionFilter):
    """Accepts v <= q: q itself comes out (the harness has read the real q already)."""

    def elaborate(self, platform):
        real, self.moduli = self.moduli, tuple(q + 1 for q in self.moduli)
        try:
            return super().elaborate(platform)
        finally:
            self.moduli = real


class NegatingSelector(PieceSelector):
    """Swaps +1 and -1 (piece 1 -> -1): a wrong mapping."""

    def __init__(self):
        super().__init__()
        self._inner = PieceSelector()
        self.pieces, self.left = self._inner.pieces, self._inner.left

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self._inner
        wiring.connect(m, wiring.flipped(self.i_stream), inner.i_stream)
        m.d.comb += [self.o_stream.valid.eq(inner.o_stream.valid),
                     self.o_stream.payload.eq(-inner.o_stream.payload),
                     inner.o_stream.ready.eq(self.o_stream.ready)]
        return m


class SwappingPairSelector(PiecePairSelector):
    """Gives each pair's two values in swapped order."""

    def __init__(self):
        super().__init__()
        self._inner = PiecePairSelector()
        self.fill, self.values = self._inner.fill, self._inner.values

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self._inner
        wiring.connect(m, wiring.flipped(self.i_stream), inner.i_stream)
        m.d.comb += [self.o_stream.valid.eq(inner.o_stream.valid),
                     self.o_stream.payload[0].eq(inner.o_stream.payload[1]),
                     self.o_stream.payload[1].eq(inner.o_stream.payload[0]),
                     inner.o_stream.ready.eq(self.o_stream.ready)]
        return m
