"""The stream simulation helpers, on a small pipelined adder written here."""

import pytest
from amaranth import Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.sim.stream import run_stream


class _AddPipe(wiring.Component):
    def __init__(self, depth):
        self.depth = depth
        super().__init__({"i_stream": In(stream.Signature(data.StructLayout({"a": 8, "b": 8}))),
                          "o_stream": Out(stream.Signature(9))})

    def elaborate(self, platform):
        m = Module()
        en = ~self.o_stream.valid | self.o_stream.ready
        vals = [Signal(9, name=f"v{i}") for i in range(self.depth)]
        vld = [Signal(name=f"ok{i}") for i in range(self.depth)]
        m.d.comb += self.i_stream.ready.eq(en)
        with m.If(en):
            m.d.sync += [vals[0].eq(self.i_stream.payload.a + self.i_stream.payload.b), vld[0].eq(self.i_stream.valid)]
            for i in range(1, self.depth):
                m.d.sync += [vals[i].eq(vals[i - 1]), vld[i].eq(vld[i - 1])]
        m.d.comb += [self.o_stream.payload.eq(vals[-1]), self.o_stream.valid.eq(vld[-1])]
        return m


@pytest.mark.parametrize("depth", [1, 3])
def test_run_stream_results_latency_and_backpressure(depth):
    ins = [{"a": i, "b": (7 * i) % 256} for i in range(40)]
    want = [d["a"] + d["b"] for d in ins]
    full = run_stream(_AddPipe(depth), ins)
    assert full.outputs == want and full.latency == depth
    assert full.out_cycles == [c + depth for c in full.in_cycles]          # one result per cycle
    gappy = run_stream(_AddPipe(depth), ins, gaps=5)
    assert gappy.outputs == want and gappy.out_cycles[-1] > full.out_cycles[-1]


def test_run_stream_times_out_when_nothing_comes_out():
    with pytest.raises(TimeoutError):
        run_stream(_AddPipe(2), [{"a": 1, "b": 2}], n_outputs=2, max_cycles=200)
