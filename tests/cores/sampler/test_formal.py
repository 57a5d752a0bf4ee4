"""The sampler proofs (SymbiYosys): they pass on the cores, and fail on deliberately broken ones."""

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring

from hhe_gen.cores.sampler import ByteGatherer, CDTScan, PieceSelector, RejectionFilter
from hhe_gen.formal import sampler as formal_sampler
from hhe_gen.params import ntt_primes, rubato_params

pytestmark = pytest.mark.toolchain


def _check(results):
    for task, res in results.items():
        assert res.passed, f"{task}: {res.status}\n{res.log[-4000:]}"


# The default run proves one configuration per harness (about 80 s of CPU in all); the other
# configurations are `slow`.

def _slow(*values):
    return pytest.param(*values, marks=pytest.mark.slow)


@pytest.mark.parametrize("w,k,variable", [(1, 4, False), (8, 8, False), (2, 5, False),     # shift, beat, buffer
                                          _slow(8, 3, False), _slow(8, 2, True), _slow(8, 1, False),
                                          _slow(1, 3, True), _slow(4, 8, True), _slow(2, 8, False),
                                          _slow(1, 1, False), _slow(8, 7, False)])
def test_gatherer_proof(tmp_path, w, k, variable):
    _check(formal_sampler.prove("gatherer", tmp_path, in_bytes=w, word_bytes=k, variable=variable))


class _CorruptingGatherer(ByteGatherer):
    """A gatherer that flips bit 0 of every input beat equal to 0x5a (a lost/altered byte)."""

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
            self.o_stream.valid.eq(inner.o_stream.valid),
            self.o_stream.payload.eq(inner.o_stream.payload),
            inner.o_stream.ready.eq(self.o_stream.ready),
            inner.clear.eq(self.clear),
        ]
        return m


def test_gatherer_proof_catches_a_corrupted_byte(tmp_path, monkeypatch):
    from hhe_gen.formal.sampler import gatherer
    monkeypatch.setattr(gatherer, "ByteGatherer", _CorruptingGatherer)
    res = formal_sampler.prove("gatherer", tmp_path, tasks=("prove",), in_bytes=1, word_bytes=2)["prove"]
    assert res.status == "FAIL"


# -- Gaussian: constant time (miter) and contract ----------------------------------------------

RUBATO_128ML = rubato_params("Par-128M").cdf_table


@pytest.mark.parametrize("params", [
    dict(in_bytes=8),                                                     # parallel, 1 sample/cycle
    _slow(dict(in_bytes=2, comparators=7, moduli=(97, 12289))),           # 3 steps, residues
    dict(in_bytes=4, bits=31, table=RUBATO_128ML, comparators=3),         # Rubato noise, defect table
], ids=["parallel-w8", "seq7-w2-residues", "rubato128m-seq3-w4"])
def test_gaussian_timing_proof(tmp_path, params):
    _check(formal_sampler.prove("gaussian_timing", tmp_path, **params))


@pytest.mark.slow
def test_gaussian_timing_proof_fully_sequential(tmp_path):
    _check(formal_sampler.prove("gaussian_timing", tmp_path, in_bytes=1, comparators=1))


@pytest.mark.parametrize("params", [_slow(dict(comparators=None)), dict(comparators=7),
                                    _slow(dict(table=RUBATO_128ML, word_bits=32, comparators=4))],
                         ids=["ckks-parallel", "ckks-seq7", "rubato128m-seq4"])
def test_cdt_contract_proof(tmp_path, params):
    _check(formal_sampler.prove("cdt_contract", tmp_path, **params))


class _LeakyScan(CDTScan):
    """A scan whose result is held one extra cycle when it is zero: data-dependent timing."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._inner = CDTScan(*args, **kwargs)
        self.busy, self.step = self._inner.busy, self._inner.step

    def elaborate(self, platform):
        m = Module()
        m.submodules.inner = inner = self._inner
        held = Signal()
        zero = inner.o_stream.payload == 0
        with m.If(inner.o_stream.valid & zero & ~held):
            m.d.sync += held.eq(1)
        with m.If(self.o_stream.valid & self.o_stream.ready):
            m.d.sync += held.eq(0)
        m.d.comb += [
            inner.i_stream.valid.eq(self.i_stream.valid),
            inner.i_stream.payload.eq(self.i_stream.payload),
            self.i_stream.ready.eq(inner.i_stream.ready),
            self.o_stream.valid.eq(inner.o_stream.valid & (~zero | held)),
            self.o_stream.payload.eq(inner.o_stream.payload),
            inner.o_stream.ready.eq(self.o_stream.ready & (~zero | held)),
        ]
        return m


def test_gaussian_timing_proof_catches_a_data_dependent_delay(tmp_path, monkeypatch):
    from hhe_gen.cores.sampler import gaussian
    monkeypatch.setattr(gaussian, "CDTScan", _LeakyScan)
    res = formal_sampler.prove("gaussian_timing", tmp_path, tasks=("prove",), in_bytes=8)["prove"]
    assert res.status == "FAIL"


# -- rejection: no rejected word comes out ------------------------------------------------------

@pytest.mark.parametrize("word_bits,moduli", [
    _slow(32, (65929217,)), _slow(32, (33292289,)),                       # Rubato 26- and 25-bit q
    (56, tuple(ntt_primes(1 << 13, 54, 3))), _slow(16, (12289,)),         # RNS set at run time; 14-bit
])
def test_rejection_proof(tmp_path, word_bits, moduli):
    _check(formal_sampler.prove("rejection", tmp_path, word_bits=word_bits, moduli=moduli))


def test_rejection_proof_catches_an_off_by_one(tmp_path, monkeypatch):
    """A filter accepting v <= q (q itself leaks out) fails the proof."""
    from hhe_gen.formal.sampler import rejection

    class _OffByOne(RejectionFilter):
        def elaborate(self, platform):      # the harness has read the real q already
            real, self.moduli = self.moduli, tuple(q + 1 for q in self.moduli)
            try:
                return super().elaborate(platform)
            finally:
                self.moduli = real

    monkeypatch.setattr(rejection, "RejectionFilter", _OffByOne)
    res = formal_sampler.prove("rejection", tmp_path, tasks=("prove",), word_bits=16, moduli=(12289,))["prove"]
    assert res.status == "FAIL"


# -- ternary: the accepted pieces, in order ------------------------------------------------------

def test_ternary_proof(tmp_path):
    _check(formal_sampler.prove("ternary", tmp_path))


class _NegatingSelector(PieceSelector):
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


def test_ternary_proof_catches_a_wrong_mapping(tmp_path, monkeypatch):
    from hhe_gen.formal.sampler import ternary
    monkeypatch.setattr(ternary, "PieceSelector", _NegatingSelector)
    assert formal_sampler.prove("ternary", tmp_path, tasks=("prove",))["prove"].status == "FAIL"


class _LessEqualScan(CDTScan):
    """Compares T <= u instead of T < u (entries lowered by one): off by one at the breakpoints."""

    def groups(self):
        return [[max(t - 1, 0) for t in g] for g in super().groups()]


def test_cdt_contract_catches_an_off_by_one_comparison(tmp_path, monkeypatch):
    from hhe_gen.formal.sampler import gaussian
    monkeypatch.setattr(gaussian, "CDTScan", _LessEqualScan)
    res = formal_sampler.prove("cdt_contract", tmp_path, tasks=("prove",), comparators=7)["prove"]
    assert res.status == "FAIL"
