"""The sampler proofs (SymbiYosys): they pass on the cores, and fail on deliberately broken ones."""

import pytest
from amaranth.hdl import Module

from hhe_gen.cores.sampler import ByteGatherer
from hhe_gen.formal import sampler as formal_sampler

pytestmark = pytest.mark.toolchain


def _check(results):
    for task, res in results.items():
        assert res.passed, f"{task}: {res.status}\n{res.log[-4000:]}"


@pytest.mark.parametrize("w,k,variable", [(1, 4, False), (8, 3, False), (2, 5, False), (8, 2, True)])
def test_gatherer_proof(tmp_path, w, k, variable):
    _check(formal_sampler.prove("gatherer", tmp_path, in_bytes=w, word_bytes=k, variable=variable))


@pytest.mark.slow
@pytest.mark.parametrize("w,k,variable", [(8, 8, False), (1, 3, True), (4, 8, True), (2, 1, False)])
def test_gatherer_proof_more_sizes(tmp_path, w, k, variable):
    _check(formal_sampler.prove("gatherer", tmp_path, in_bytes=w, word_bytes=k, variable=variable))


class _CorruptingGatherer(ByteGatherer):
    """A gatherer that flips bit 0 of every input beat equal to 0x5a (a lost/altered byte)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._inner = ByteGatherer(self.in_bytes, self.word_bytes, variable=self.variable)
        self.count, self.buffer = self._inner.count, self._inner.buffer

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
