"""Tests for hhe_gen.flow.synth: the timing harness, the ECP5 / Xilinx flows, parsing and the cache.

The expected numbers come from the designs themselves, not from the code under test: an N-bit
register is N flip-flops, an unsigned 16x16 product fits one 18x18 DSP tile, a 36x36 product
needs ceil(36/18)^2 MULT18X18D (ECP5, 18-bit unsigned limbs) and ceil(36/24)*ceil(36/17)
DSP48E1 (Xilinx 25x18 signed, so 24x17-bit unsigned limbs), a chain of six dependent adders is
slower than one adder. The ``toolchain`` tests run Yosys and nextpnr on tiny designs (seconds
each) with a private cache folder, so they start cold.
"""

import json
import os
import time

import pytest
from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.sim import Simulator

from hhe_gen.flow import synth
from hhe_gen.params.errors import ParameterError
from hhe_gen.flow.tools import ToolMissing

# the parameter tests build components that are never elaborated; Amaranth warns at collection
pytestmark = pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")


# ------------------------------------------------------------------------------- small designs


class Counter(wiring.Component):
    """A free-running n-bit counter (n flip-flops, only an output)."""

    def __init__(self, n):
        self.n = n
        super().__init__({"count": Out(n)})

    def elaborate(self, platform):
        m = Module()
        m.d.sync += self.count.eq(self.count + 1)
        return m


class Register(wiring.Component):
    """q <= d when en (n flip-flops, en tied high by the harness)."""

    def __init__(self, n):
        self.n = n
        super().__init__({"d": In(n), "en": In(1), "q": Out(n)})

    def elaborate(self, platform):
        m = Module()
        with m.If(self.en):
            m.d.sync += self.q.eq(self.d)
        return m


class Product(wiring.Component):
    """Combinational unsigned a_width x b_width product (the harness registers around it)."""

    def __init__(self, a_width, b_width):
        self.a_width, self.b_width = a_width, b_width
        super().__init__({"a": In(a_width), "b": In(b_width), "p": Out(a_width + b_width)})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.p.eq(self.a * self.b)
        return m


class AdderChain(wiring.Component):
    """``depth`` dependent 24-bit additions, x = (x + b_i) ^ c_i, between two registers.

    The XOR between additions stops Yosys from merging them into one multi-operand adder, so
    the register-to-register path really goes through ``depth`` carry chains.
    """

    def __init__(self, depth, width=24):
        self.depth, self.width = depth, width
        super().__init__({"x": In(width), "b": In(width * depth), "c": In(width * depth),
                          "y": Out(width)})

    def elaborate(self, platform):
        m = Module()
        w = self.width
        x = Signal(w)
        m.d.sync += x.eq(self.x)
        v = x
        for i in range(self.depth):
            v = ((v + self.b[i * w:(i + 1) * w])[:w] ^ self.c[i * w:(i + 1) * w])
        m.d.sync += self.y.eq(v)
        return m


class Streamer(wiring.Component):
    """A stream component: o_stream.payload = i_stream.payload + 1 (checks port discovery)."""

    def __init__(self):
        super().__init__({"i_stream": In(stream.Signature(8)), "o_stream": Out(stream.Signature(9))})

    def elaborate(self, platform):
        m = Module()
        m.d.comb += [self.o_stream.payload.eq(self.i_stream.payload + 1),
                     self.o_stream.valid.eq(self.i_stream.valid),
                     self.i_stream.ready.eq(self.o_stream.ready)]
        return m


def _ceil(a, b):
    return -(-a // b)


# ------------------------------------------------------------------------------- quick (no tools)


def test_harness_counts_ports():
    h = synth.TimingHarness(Register(20))
    assert (h.input_bits, h.output_bits) == (20, 20)   # en is tied, not shifted in
    assert h.fold == 5 and h.harness_ff == 25
    s = synth.TimingHarness(Streamer())
    # inputs: i_stream.payload (8) + valid + o_stream.ready; outputs: payload (9) + valid + ready
    assert (s.input_bits, s.output_bits) == (10, 11)
    assert synth.TimingHarness(Register(8), fold=3, tie_high=()).input_bits == 9


def test_harness_feeds_inputs_and_folds_outputs():
    """Simulate the harness: dout equals the XOR fold, computed here, of the registered input."""
    n, fold = 12, 5
    h = synth.TimingHarness(Register(n), fold=fold)
    bits = [(i * 7 + 3) % 5 == 0 or i % 3 == 1 for i in range(60)]
    seen = []

    async def bench(ctx):
        for b in bits:
            ctx.set(h.din, int(b))
            await ctx.tick()
            seen.append(ctx.get(h.dout))

    sim = Simulator(h)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    for t in range(2 * n + 2, len(bits)):
        # after tick t (0-based) the chain holds bits[t-n+1 .. t], bit 0 = the newest;
        # q takes the chain one tick later, the fold register q one tick after that.
        chain = [bits[t - 2 - j] for j in range(n)]
        expect = 0
        for i, bit in enumerate(chain):
            expect ^= int(bit) << (i % fold)
        assert seen[t] == expect, t


@pytest.mark.parametrize("kwargs, name", [
    ({"device": "100k"}, "device"),
    ({"device": "25k", "package": "CABGA756"}, "package"),
    ({"seed": -1}, "seed"),
    ({"freq_mhz": 0}, "freq_mhz"),
    ({"name": "bad name"}, "name"),
    ({"fold": 0}, "fold"),
    ({"router": "router3"}, "router"),
    ({"synth_args": "-abc9"}, "synth_args"),
    ({"nextpnr_args": ("--placer", 5)}, "nextpnr_args"),
])
def test_ecp5_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as e:
        synth.synth_ecp5(Counter(4), **kwargs)
    assert e.value.name == name


def test_bad_family_and_component():
    with pytest.raises(ParameterError) as e:
        synth.synth_xilinx(Counter(4), family="xc9")
    assert e.value.name == "family" and "xc7" in str(e.value)
    with pytest.raises(ParameterError) as e:
        synth.TimingHarness(Module())
    assert e.value.name == "component"


def test_cache_root_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HHE_GEN_CACHE", str(tmp_path))
    assert synth.cache_root() == tmp_path / "synth"
    monkeypatch.delenv("HHE_GEN_CACHE")
    assert synth.cache_root() == synth.Path.home() / ".cache" / "hhe-gen" / "synth"


# ------------------------------------------------------------------------------- real tools


@pytest.fixture(scope="module")
def cold_cache(tmp_path_factory):
    """A private, initially empty result cache for this module's runs."""
    path = tmp_path_factory.mktemp("synth-cache")
    old = os.environ.get("HHE_GEN_CACHE")
    os.environ["HHE_GEN_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("HHE_GEN_CACHE", None)
    else:
        os.environ["HHE_GEN_CACHE"] = old



@pytest.mark.toolchain
def test_yosys_only_run_has_area_and_no_timing(cold_cache):
    r = synth.synth_ecp5(Register(7), name="reg7", place_and_route=False, synth_args=("-nowidelut",))
    assert r["FF"] == 7 and r["fmax_mhz"] is None and r["critical_path"] is None
    assert r["nextpnr_s"] is None and r["synth_args"] == ["-nowidelut"]
    assert not (r.workdir / "report.json").exists()


@pytest.mark.toolchain
def test_ecp5_classic_abc_maps_to_lut4_only(cold_cache):
    r = synth.synth_ecp5(AdderChain(2), name="chain2_classic", place_and_route=False, abc9=False)
    assert "abc -lut 4" in (r.workdir / "synth.ys").read_text()
    assert r["LUT4"] > 0 and r["CCU2C"] > 0
    assert "PFUMX" not in r["cells"] and "L6MUX21" not in r["cells"]


@pytest.mark.toolchain
def test_register_is_n_flip_flops(cold_cache):
    n = 23
    r = synth.synth_ecp5(Register(n), name="reg23")
    assert not r.cached
    assert r["FF"] == n and r["MULT18X18D"] == 0
    assert r["total"]["FF"] == n + r["harness"]["FF"] == n + n + _ceil(n, 4)
    assert r["total"]["TRELLIS_FF"] == r["total"]["FF"]      # nextpnr agrees with yosys
    assert r["fmax_mhz"] > 0
    x = synth.synth_xilinx(Register(n), name="reg23")
    assert x["FF"] == n and x["DSP48E1"] == 0 and x["total"]["FF"] == 2 * n + _ceil(n, 4)


@pytest.mark.toolchain
def test_counter(cold_cache):
    r = synth.synth_ecp5(Counter(16), name="counter16")
    assert r["FF"] == 16
    assert 0 < r["fmax_mhz"] < 1000
    assert r["critical_path"]["ns"] == pytest.approx(1000 / r["fmax_mhz"], rel=0.05)
    assert r["critical_path"]["signals"][-1] == "count"        # the path ends at the counter
    assert r["LUT4"] + r["CCU2C"] > 0                         # the incrementer exists
    assert r["harness"]["input_bits"] == 0


@pytest.mark.toolchain
@pytest.mark.parametrize("aw, bw", [(16, 16), (36, 36)])
def test_multiplier_dsp_tiles(cold_cache, aw, bw):
    r = synth.synth_ecp5(Product(aw, bw), name=f"mul{aw}x{bw}")
    assert r["MULT18X18D"] == _ceil(aw, 18) * _ceil(bw, 18)
    assert r["FF"] == 0                                       # purely combinational DUT
    x = synth.synth_xilinx(Product(aw, bw), name=f"mul{aw}x{bw}")
    tiles = min(_ceil(aw, 24) * _ceil(bw, 17), _ceil(aw, 17) * _ceil(bw, 24))
    assert x["DSP48E1"] == tiles


@pytest.mark.toolchain
def test_long_adder_chain_is_slower(cold_cache):
    short = synth.synth_ecp5(AdderChain(1), name="chain1")
    long = synth.synth_ecp5(AdderChain(6), name="chain6")
    assert 0 < long["fmax_mhz"] < short["fmax_mhz"]
    assert long["critical_path"]["carry"] > short["critical_path"]["carry"]
    assert long["CCU2C"] > short["CCU2C"]


@pytest.mark.toolchain
def test_cache_returns_the_same_result_without_running(cold_cache):
    first = synth.synth_ecp5(Product(10, 10), name="cachetest", seed=3)
    assert not first.cached
    t0 = time.perf_counter()
    again = synth.synth_ecp5(Product(10, 10), name="cachetest", seed=3)
    elapsed = time.perf_counter() - t0
    assert again.cached and again == first
    assert elapsed < 0.5 * (first["yosys_s"] + first["nextpnr_s"])
    assert json.loads((again.workdir / "result.json").read_text()) == dict(first)
    # the result is derived from the stored tool outputs: result.json is only a copy
    (again.workdir / "result.json").unlink()
    assert synth.synth_ecp5(Product(10, 10), name="cachetest", seed=3) == first
    # a damaged entry (nextpnr's report lost) is run again
    (again.workdir / "report.json").unlink()
    redone = synth.synth_ecp5(Product(10, 10), name="cachetest", seed=3)
    assert not redone.cached and redone["MULT18X18D"] == 1
    assert {k: v for k, v in redone.items() if not k.endswith("_s")} == \
        {k: v for k, v in first.items() if not k.endswith("_s")}      # nextpnr is deterministic
    # cache=False runs again
    fresh = synth.synth_ecp5(Product(10, 10), name="cachetest", seed=3, cache=False)
    assert not fresh.cached and fresh["MULT18X18D"] == first["MULT18X18D"] == 1


@pytest.mark.toolchain
def test_registered_dsp_block_is_faster(cold_cache):
    """An Instance passes through the flow; the DSP's own registers take it off the fabric path."""
    from hhe_gen.apps.bench.arith import Mult18x18D
    comb = synth.synth_ecp5(Mult18x18D(registered=False), name="mult18_comb")
    regs = synth.synth_ecp5(Mult18x18D(registered=True), name="mult18_regs")
    assert comb["MULT18X18D"] == regs["MULT18X18D"] == 1 and comb["FF"] == regs["FF"] == 0
    assert comb["critical_path"]["dsp"] == 1 and regs["critical_path"]["dsp"] == 0
    assert regs["fmax_mhz"] > comb["fmax_mhz"] > 0


@pytest.mark.toolchain
def test_missing_tool_surfaces(cold_cache, monkeypatch):
    monkeypatch.setenv("HHE_GEN_NEXTPNR_ECP5", "/nonexistent/nextpnr-ecp5")
    with pytest.raises(ToolMissing):
        synth.synth_ecp5(Counter(4), name="missing")


# ------------------------------------------------------------------------------- bench arith


@pytest.mark.parametrize("staged", [False, True])
def test_naive_barrett_reference_is_correct(staged):
    """The naive reference row computes a*b mod q (checked with Python's %), sel switching."""
    import random

    from hhe_gen.apps.bench.arith import NaiveBarrett, moduli_for
    from hhe_gen.sim.stream import run_unit
    moduli = list(moduli_for("naive-staged", 54))
    dut = NaiveBarrett(moduli, 54, staged=staged)
    assert dut.latency == (5 if staged else 2)
    rng = random.Random(5)
    vecs = []
    for i in range(40):
        s = i % 3
        q = moduli[s]
        pick = lambda: rng.choice([0, 1, q - 1, q - 2, q >> 1]) if i < 12 else rng.randrange(q)  # noqa: E731
        vecs.append({"a": pick(), "b": pick(), "sel": s})
    run = run_unit(dut, vecs, en_gaps=11)
    assert run.outputs == [v["a"] * v["b"] % moduli[v["sel"]] for v in vecs]


def test_naive_barrett_bad_parameters():
    from hhe_gen.apps.bench.arith import NaiveBarrett
    with pytest.raises(ParameterError) as e:
        NaiveBarrett([97, 1009], 16)
    assert e.value.name == "moduli"
    with pytest.raises(ParameterError) as e:
        NaiveBarrett([1009], 8)
    assert e.value.name == "width"


def test_arith_bench_cases():
    from hhe_gen.apps import bench as benchmarks
    from hhe_gen.apps.bench.arith import KINDS, LATENCIES, WIDTHS
    cs = benchmarks.cases(["arith"])
    names = [c.name for c in cs]
    assert len(names) == len(set(names))
    for target, main in (("ecp5", "-prim"), ("xilinx", "")):
        for kind in KINDS:
            for w in WIDTHS:
                assert f"{target}-{kind}-{w}-lmin{main}" in names
                for lat in LATENCIES:
                    assert f"{target}-{kind}-{w}-l{lat}{main}" in names
        assert f"{target}-naive-staged-54" in names and f"{target}-naive-comb-54" in names
    for kind in KINDS:      # the generator's defaults on ECP5 at 54 bits
        assert f"ecp5-{kind}-54-lmin" in names and f"ecp5-{kind}-54-l8" in names
    assert "ecp5-special-barrett-54-l8-prim-nok-bndluts" in names
    assert "xilinx-special-barrett-54-l8-nok-bndluts" in names
    assert "ecp5-mult18x18d-comb" in names and "ecp5-mult18x18d-registered" in names
    assert names[-1] == "plot"      # runs after every measurement of the group
    quick = [c.name for c in benchmarks.cases(["arith"], quick=True)]
    assert quick == ["ecp5-ntt-montgomery-36-lmin-prim", "xilinx-ntt-montgomery-36-lmin", "plot"]


def test_arith_bench_goals(monkeypatch, tmp_path):
    """The goal bookkeeping, with the tools replaced by a fake that reports each unit's tiles."""
    from hhe_gen.apps.bench import arith

    def fake_ecp5(unit, **kw):
        return {"LUT4": 1, "FF": 2, "MULT18X18D": unit.tiles, "CCU2C": 3, "fmax_mhz": 100.0,
                "critical_path": {"ns": 10.0, "dsp": 1, "carry": 2, "lut": 3,
                                  "sources": ["cores/arith/x.py:1"], "signals": ["x", "y"]},
                "yosys_s": 0.1, "nextpnr_s": 0.2}

    def fake_xilinx(unit, **kw):
        return {"LUT": 1, "FF": 2, "DSP48E1": unit.tiles + 1, "CARRY4": 3, "SRL": 0,
                "yosys_s": 0.1}

    monkeypatch.setattr(synth, "synth_ecp5", fake_ecp5)
    monkeypatch.setattr(synth, "synth_xilinx", fake_xilinx)
    monkeypatch.setattr(arith, "_ECP5_RESULTS", {})
    special = arith.build("special-barrett", 54, None, "ecp5", "prim-nok-bndluts")
    generic = arith.build("barrett", 54, None, "ecp5", "prim")
    m = arith.measure_ecp5("special-barrett", 54, variant="prim-nok-bndluts")
    assert m["MULT18X18D"] == special.tiles and m["latency"] == special.min_latency
    assert m["cp_signals"] == "x > y" and m["cp_path"] == "1 dsp, 2 carry, 3 lut"
    goals = m["goals"].split("; ")
    assert goals[0] == "fmax>=125 MISS by 25.0 MHz" and goals[1] == "lat<=8 ok"
    assert goals[2] == "dsp<=12 " + ("ok" if special.tiles <= 12 else "MISS")
    saving = 1 - special.tiles / generic.tiles
    assert m["dsp_saving"] == round(saving, 3)
    assert goals[3].startswith(f"saving {saving:.0%} vs {generic.tiles} ")
    assert goals[3].endswith("ok" if saving >= 0.4 else "MISS")
    assert arith.measure_ecp5("barrett", 36)["goals"] == ""
    with pytest.raises(ParameterError):
        arith.build("barrett", 54, None, "ecp5", "no-such-variant")
    x = arith.measure_xilinx("special-barrett", 64, 6)
    xs = arith.build("special-barrett", 64, 6, "xilinx")
    xg = arith.build("barrett", 64, 6, "xilinx")
    assert x["latency"] == 6
    assert x["dsp_saving"] == round(1 - (xs.tiles + 1) / (xg.tiles + 1), 3)
    out = arith.plot(str(tmp_path / "arith.png"))
    assert out["points"] == 3      # special 54, its generic Barrett baseline, barrett 36
    assert {p["reducer"] for p in arith._ECP5_RESULTS.values()} == {
        "special-barrett (prim-nok-bndluts)", "barrett (prim)", "barrett (infer)"}
    data = (tmp_path / "arith.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_plot_skips_points_without_fmax(tmp_path):
    from hhe_gen.apps.report import plot_area_vs_fmax
    pts = [{"reducer": "a", "width": 36, "latency": 3, "LUT4": 10, "MULT18X18D": 1, "fmax_mhz": 90.0},
           {"params": {"kind": "b", "width": 54}, "metrics": {"latency": 4, "LUT4": 20,
                                                              "MULT18X18D": 2, "fmax_mhz": 80.0}},
           {"reducer": "c", "LUT4": 5, "fmax_mhz": None}]
    path = plot_area_vs_fmax(pts, tmp_path / "sub" / "p.png")
    assert path.read_bytes()[:4] == b"\x89PNG"


def test_plot_series_draws_the_numeric_points(tmp_path, monkeypatch):
    import matplotlib.axes

    from hhe_gen.apps.report import plot_series
    drawn = {}
    original = matplotlib.axes.Axes.plot

    def spy(self, xs, ys, **kw):
        drawn[kw["label"]] = (list(xs), list(ys), kw.get("linestyle"))
        return original(self, xs, ys, **kw)
    monkeypatch.setattr(matplotlib.axes.Axes, "plot", spy)
    panels = [{"series": {"core": [(8, 10), (2, 40), (4, None)], "bound": [(2, 32), (8, 8)], "empty": [(1, "-")]},
               "xlabel": "P", "ylabel": "cycles", "logx": True, "logy": 10, "dashed": ["bound"]}]
    path = plot_series(panels, tmp_path / "sub" / "s.png", title="t")
    assert path.read_bytes()[:4] == b"\x89PNG"
    assert drawn == {"core": ([2, 8], [40, 10], "-"), "bound": ([2, 8], [32, 8], "--")}


def test_synth_xilinx_any_falls_back_only_on_the_abc9_assertion(tmp_path, monkeypatch):
    from hhe_gen.flow import synth
    from hhe_gen.flow.tools import ToolError
    calls = []

    def fake(component, abc9=True, **kw):
        calls.append(abc9)
        if abc9:
            (tmp_path / "yosys.log").write_text(log_text)
            raise ToolError(["yosys"], 1, "", "", str(tmp_path))
        return synth.SynthResult({"LUT": 7}, cached=True, workdir=tmp_path)
    monkeypatch.setattr(synth, "synth_xilinx", fake)
    log_text = "ERROR: Assert `count_id(wire->name) == 0' failed in kernel/rtlil.cc:2872."
    res = synth.synth_xilinx_any(lambda: object(), name="x")
    assert calls == [True, False] and res["LUT"] == 7 and res["abc9"] is False
    calls.clear()
    log_text = "ERROR: something else"
    with pytest.raises(ToolError):
        synth.synth_xilinx_any(lambda: object(), name="x")
    assert calls == [True]


class TwoRegisters(wiring.Component):
    """Two submodules (``wide``: a 9-bit register, ``narrow``: a 4-bit one) and 2 flip-flops of
    its own: the per-unit area must find 9, 4 and 2."""

    def __init__(self):
        super().__init__({"d": In(9), "en": In(1), "q": Out(15)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.wide = wide = Register(9)
        m.submodules.narrow = narrow = Register(4)
        own = Signal(2)
        m.d.sync += own.eq(self.d[:2])
        m.d.comb += [wide.d.eq(self.d), wide.en.eq(self.en), narrow.d.eq(self.d[5:]), narrow.en.eq(self.en),
                     self.q.eq(Cat(wide.q, narrow.q, own))]
        return m


@pytest.mark.toolchain
def test_ecp5_area_by_unit_splits_the_flip_flops_by_submodule(cold_cache):
    r = synth.synth_ecp5(TwoRegisters(), name="two_registers", by_unit=True)
    assert set(r["units"]) == {"", "wide", "narrow"}
    assert (r["units"]["wide"]["FF"], r["units"]["narrow"]["FF"], r["units"][""]["FF"]) == (9, 4, 2)
    assert r["FF"] == 15 and r["fmax_mhz"] is None
    script = (r.workdir / "synth.ys").read_text()
    assert "-noflatten" in script and "abc -lut 4" in script


def test_unit_cells_sums_each_units_modules_and_skips_instances():
    from hhe_gen.flow.synth_reports import unit_cells
    stat = {"modules": {
        "\\top.dut": {"num_cells_by_type": {"LUT4": 1, "\\top.dut.a": 1, "\\top.dut.b": 1}},
        "\\top.dut.a": {"num_cells_by_type": {"LUT4": 10, "TRELLIS_FF": 3, "\\top.dut.a.x": 1}},
        "\\top.dut.a.x": {"num_cells_by_type": {"LUT4": 5, "$scopeinfo": 2}},
        "\\top.dut.b": {"num_cells_by_type": {"DP16KD": 2}},
        "\\top": {"num_cells_by_type": {"TRELLIS_FF": 100, "\\top.dut": 1}},
    }}
    assert unit_cells(stat, "top") == {"": {"LUT4": 1}, "a": {"LUT4": 15, "TRELLIS_FF": 3}, "b": {"DP16KD": 2}}
    # the units' parts: a unit's own module under "<unit>.(own)", each part with what is below it
    assert unit_cells(stat, "top", 2) == {"": {"LUT4": 1}, "a.(own)": {"LUT4": 10, "TRELLIS_FF": 3},
                                          "a.x": {"LUT4": 5}, "b.(own)": {"DP16KD": 2}}
