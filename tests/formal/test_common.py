"""The shared formal harnesses (formal/common) on small designs of our own, correct and broken:
every harness must PASS the correct design and FAIL each broken one."""

import os
from pathlib import Path

import pytest
from amaranth.hdl import Assert, Cat, Fragment, Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.formal.common.contract import induction_depth, pipeline_contract
from hhe_gen.formal.common import sby as sby_module
from hhe_gen.formal.common.sby import find_signal, formal_module, run_harness, sby_template, write_sby
from hhe_gen.formal.common.stream import popcount, stream_harness
from hhe_gen.flow.tools import ToolError

pytestmark = pytest.mark.toolchain


class AddPipe(wiring.Component):
    """p = (a + b) mod 2^8 after ``latency`` enabled cycles; ``bug`` breaks it on purpose."""

    def __init__(self, latency, bug=None):
        self.latency, self.bug = latency, bug
        super().__init__({"a": In(8), "b": In(8), "en": In(1), "p": Out(8)})

    def elaborate(self, platform):
        m = Module()
        v = Signal(8)
        m.d.comb += v.eq(self.a + self.b)
        for i in range(self.latency):
            r = Signal(8, name=f"r{i}")
            if self.bug == "ignores-stall" and i == self.latency - 1:
                m.d.sync += r.eq(v)                     # this register does not honour en
            else:
                with m.If(self.en):
                    m.d.sync += r.eq(v)
            v = r
        if self.bug == "off-by-one":
            m.d.comb += self.p.eq(v + (self.a == 0x5A))
        else:
            m.d.comb += self.p.eq(v)
        return m


class StreamRegs(wiring.Component):
    """A stream pipeline of ``latency`` registers (like StreamPipeline); ``bug`` breaks it."""

    def __init__(self, latency, bug=None):
        self.latency, self.bug = latency, bug
        super().__init__({"i_stream": In(stream.Signature(8)), "o_stream": Out(stream.Signature(8))})

    def elaborate(self, platform):
        m = Module()
        en = Signal()
        valid = Signal(self.latency, name="valid")
        data = [Signal(8, name=f"d{i}") for i in range(self.latency)]
        m.d.comb += [en.eq(~self.o_stream.valid | self.o_stream.ready), self.i_stream.ready.eq(en),
                     self.o_stream.valid.eq(valid[-1]), self.o_stream.payload.eq(data[-1] + 1)]
        if self.bug == "drops-valid":          # the output valid is cleared even when not taken
            m.d.sync += valid.eq(Cat(self.i_stream.valid & en, valid[:-1]))
        else:
            with m.If(en):
                m.d.sync += valid.eq(Cat(self.i_stream.valid, valid[:-1]))
        with m.If(en | (self.bug == "payload-moves")):
            m.d.sync += [data[0].eq(self.i_stream.payload)] + \
                        [data[i].eq(data[i - 1]) for i in range(1, self.latency)]
        return m


def _spec_add(m, ops):
    return (ops["a"] + ops["b"])[:8]


@pytest.mark.parametrize("latency", [0, 3])
def test_contract_passes_correct_pipeline(tmp_path, latency):
    dut = AddPipe(latency)
    run = run_harness(pipeline_contract(dut, _spec_add), tmp_path / "bmc", "add", mode="bmc",
                      depth=2 * latency + 3)
    assert run.status == "PASS", run.summary()
    h = pipeline_contract(AddPipe(latency), _spec_add, stalls=False)
    run = run_harness(h, tmp_path / "prove", "add", mode="prove", depth=induction_depth(latency))
    assert run.status == "PASS", run.summary()
    run = run_harness(pipeline_contract(AddPipe(latency), _spec_add), tmp_path / "cover", "add",
                      mode="cover", depth=2 * latency + 3)
    assert run.status == "PASS", run.summary()


@pytest.mark.parametrize("bug,latency", [("ignores-stall", 2), ("off-by-one", 1), ("wrong-latency", 2)])
def test_contract_fails_broken_pipeline(tmp_path, bug, latency):
    dut = AddPipe(latency, None if bug == "wrong-latency" else bug)
    claimed = latency - 1 if bug == "wrong-latency" else latency
    h = pipeline_contract(dut, _spec_add, latency=claimed)
    run = run_harness(h, tmp_path, "add", mode="bmc", depth=2 * latency + 3)
    assert run.status == "FAIL"
    assert any(Path(run.workdir).glob("engine_0/trace*.vcd"))          # a counterexample trace


def test_contract_induction_with_bounded_stalls(tmp_path):
    h = pipeline_contract(AddPipe(2), _spec_add, max_stall=1)
    run = run_harness(h, tmp_path, "add", mode="prove", depth=induction_depth(2, 1))
    assert run.status == "PASS", run.summary()


def _occupancy(frag):
    return popcount(find_signal(frag, "valid"))


@pytest.mark.parametrize("latency", [2])
def test_stream_harness_proves_correct_pipeline_by_induction(tmp_path, latency):
    h = stream_harness(StreamRegs(latency), capacity=latency, occupancy=_occupancy)
    run = run_harness(h, tmp_path / "p", "s", mode="prove", depth=latency + 2)
    assert run.status == "PASS", run.summary()
    # the scoreboard follows data through the design's registers: bounded proof and covers
    for mode in ("bmc", "cover"):
        h = stream_harness(StreamRegs(latency), capacity=latency, occupancy=_occupancy,
                           spec=lambda p: (p + 1)[:8])
        run = run_harness(h, tmp_path / mode, "s", mode=mode, depth=2 * latency + 6)
        assert run.status == "PASS", run.summary()


def test_stream_harness_without_the_tie_does_not_close(tmp_path):
    h = stream_harness(StreamRegs(2), capacity=2)
    run = run_harness(h, tmp_path, "s", mode="prove", depth=4)
    assert run.status == "UNKNOWN"


@pytest.mark.parametrize("bug", ["drops-valid", "payload-moves"])
def test_stream_harness_fails_broken_pipeline(tmp_path, bug):
    h = stream_harness(StreamRegs(2, bug), capacity=2, spec=lambda p: (p + 1)[:8])
    run = run_harness(h, tmp_path, "s", mode="bmc", depth=8)
    assert run.status == "FAIL"


def test_find_signal_and_template(tmp_path):
    frag = Fragment.get(StreamRegs(2), None)
    assert len(find_signal(frag, "valid")) == 2
    with pytest.raises(LookupError):
        find_signal(frag, "no_such_signal")
    text = sby_template()
    assert "{mode}" in text and "{depth}" in text and "read_rtlil {il_file}" in text
    sby = write_sby(tmp_path / "x.sby", mode="cover", depth=7, il_file="x.il")
    assert "mode cover" in sby.read_text() and "depth 7" in sby.read_text()
    with pytest.raises(ValueError):
        write_sby(tmp_path / "y.sby", mode="magic", depth=1, il_file="x.il")


def _rom_harness(kind):
    """A counter indexes a table of non-zero constants (a ``Switch`` assigning constants - Yosys'
    ``proc_rom`` makes it a ROM, as it did of IterativeNtt's stage-start table - or a ``lib.memory``
    ROM read asynchronously); asserted: the word read is non-zero.  Inductive at depth 1 only if
    the table's contents are constants."""
    m, _ = formal_module()
    words = [3, 1, 4, 1, 5, 9, 2, 6]
    idx = Signal(3, name="idx")
    m.d.sync += idx.eq(idx + 1)
    word = Signal(4, name="word")
    if kind == "switch":
        with m.Switch(idx):
            for i, w in enumerate(words):
                with m.Case(i):
                    m.d.comb += word.eq(w)
    else:
        m.submodules.rom = rom = memory.Memory(shape=4, depth=len(words), init=words)
        port = rom.read_port(domain="comb")
        m.d.comb += [port.addr.eq(idx), word.eq(port.data)]
    m.d.comb += Assert(word != 0, "table word non-zero")
    return m


@pytest.mark.parametrize("kind", ["switch", "memory"])
def test_prove_mode_keeps_rom_contents_constant(tmp_path, kind, monkeypatch):
    run = run_harness(_rom_harness(kind), tmp_path / "mapped", "rom", mode="prove", depth=1)
    assert run.status == "PASS"
    # without the ROM mapping the step case may start from any ROM contents: no proof
    monkeypatch.setattr(sby_module, "PROVE_ROM_LINES", "")
    run = run_harness(_rom_harness(kind), tmp_path / "free", "rom", mode="prove", depth=1)
    assert run.status != "PASS"


def _processes_in(folder: Path) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd").startswith(str(folder)):
                found.append(int(pid))
        except OSError:
            pass
    return found


@pytest.mark.slow   # timing-dependent: did not time out once on a loaded CI machine
def test_timeout_kills_the_solver_too(tmp_path):
    # a deep BMC of a 32-bit multiplier identity takes far longer than the time limit
    m, _ = formal_module()
    from amaranth.asserts import AnySeq
    from amaranth.hdl import Assert
    a, b = Signal(32), Signal(32)
    m.d.comb += [a.eq(AnySeq(32)), b.eq(AnySeq(32))]
    acc = Signal(64)
    m.d.sync += acc.eq(a * b)
    m.d.comb += Assert(acc != 0xFFFF_FFFF_FFFF_FFF1)
    with pytest.raises(ToolError) as info:
        run_harness(m, tmp_path, "slow", mode="bmc", depth=40, timeout=8)
    assert info.value.returncode is None
    import time
    time.sleep(1)
    assert _processes_in(tmp_path) == []
