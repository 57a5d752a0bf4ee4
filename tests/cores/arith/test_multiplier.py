"""The DSP-aware multiplier generator against Python's a*b (and its parts)."""

import random

import pytest

from hhe_gen.cores.arith.multiplier import MulPlan, Multiplier
from hhe_gen.params import ParameterError
from hhe_gen.sim.stream import run_unit

def _to_signed(x, w):
    return x - (1 << w) if x >> (w - 1) else x

def _reference(a, b, wa, wb, part, part_bits, is_signed):
    """The wanted output for bit patterns a, b (independent of the generator)."""
    if is_signed:
        a, b = _to_signed(a, wa), _to_signed(b, wb)
    prod, full = a * b, wa + wb
    if part == "full":
        return prod if is_signed else prod
    if part == "low":
        return prod % (1 << part_bits)
    top = (prod % (1 << full)) >> (full - part_bits)
    return _to_signed(top, part_bits) if is_signed else top

def _min_latency(wa, wb, **kw):
    return sum(s.required for s in MulPlan(wa, wb, **kw).segments)

def _check(wa, wb, n, seed, **kw):
    rng = random.Random(seed)
    dut = Multiplier(wa, wb, **kw)
    pats = []
    for _ in range(n):
        a = rng.choice([0, 1, (1 << wa) - 1, 1 << (wa - 1), (1 << (wa - 1)) - 1, rng.getrandbits(wa)])
        b = rng.choice([0, 1, (1 << wb) - 1, 1 << (wb - 1), (1 << (wb - 1)) - 1, rng.getrandbits(wb)])
        pats.append((a, b))
    is_signed = kw.get("signed", False)
    ins = [{"a": _to_signed(a, wa), "b": _to_signed(b, wb)} if is_signed else {"a": a, "b": b} for a, b in pats]
    run = run_unit(dut, ins, en_gaps=seed)
    want = [_reference(a, b, wa, wb, kw.get("part", "full"), kw.get("part_bits"), is_signed) for a, b in pats]
    assert run.outputs == want, (wa, wb, kw)
    return dut

SHAPES = [(16, 16), (18, 18), (24, 17), (36, 36), (54, 54), (55, 10), (20, 33), (61, 64), (64, 64)]

@pytest.mark.parametrize("target", ["ecp5", "xilinx", "generic"])
@pytest.mark.parametrize("karatsuba", [False, True])
@pytest.mark.parametrize("part", ["full", "low", "high"])
@pytest.mark.parametrize("is_signed", [False, True])
def test_multiplier_equals_product(target, karatsuba, part, is_signed):
    for k, (wa, wb) in enumerate(SHAPES):
        part_bits = None if part == "full" else (wa + wb) // 2 + 1 if part == "low" else wa + 1
        kw = dict(target=target, karatsuba=karatsuba, part=part, part_bits=part_bits, signed=is_signed)
        latency = _min_latency(wa, wb, **kw) + (k % 3)       # minimum, minimum + 1, minimum + 2
        _check(wa, wb, 8, seed=k + 17 * len(target), latency=latency, **kw)

@pytest.mark.parametrize("target, wa, wb, kara, tiles", [
    ("ecp5", 18, 18, False, 1), ("ecp5", 19, 19, False, 1), ("ecp5", 36, 36, False, 4),
    ("ecp5", 36, 36, True, 3), ("ecp5", 54, 54, False, 9), ("ecp5", 54, 54, True, 6),
    ("ecp5", 64, 64, False, 16), ("ecp5", 64, 64, True, 10), ("ecp5", 55, 10, False, 3),
    ("xilinx", 24, 17, False, 1), ("xilinx", 25, 18, False, 1), ("xilinx", 54, 54, False, 9),
    ("xilinx", 48, 34, False, 4), ("generic", 64, 64, False, 1), ("generic", 64, 64, True, 3),
])
def test_tile_counts(target, wa, wb, kara, tiles):
    # 19x19 / 25x18: one tile plus LUT rows for the extra bits; 55x10: the 1-bit top limb is LUT rows
    assert MulPlan(wa, wb, target=target, karatsuba=kara).tiles == tiles

def test_low_part_skips_tiles():
    full = MulPlan(55, 54).tiles
    low = MulPlan(55, 54, part="low", part_bits=56)
    assert (full, low.tiles) == (9, 6)          # offsets 0/18/36 x 0/18: (36,36) and up vanish
    _check(55, 54, 10, seed=4, part="low", part_bits=56)
    assert MulPlan(54, 10, part="low", part_bits=12).tiles == 1

def test_latency_is_register_count_and_placement():
    dut = _check(54, 54, 4, seed=1, latency=6)
    assert sum(dut.counts) == 6 and dut.counts[[s.name for s in dut.segments].index("m.pp") + 1] >= 1
    many = _check(16, 16, 6, seed=2, latency=4)     # one segment: in + pp boundaries, extras at the output
    assert many.counts == [1, 3]
    assert _min_latency(3, 40) == 0             # LUT rows only: may be combinational
    _check(3, 40, 6, seed=5, latency=0)

def test_multiplier_bad_parameters():
    for kw, name in [(dict(target="ice40"), "target"), (dict(part="middle"), "part"),
                     (dict(part="low"), "part_bits"), (dict(part="high", part_bits=99), "part_bits"),
                     (dict(latency=0), "latency"), (dict(karatsuba=2), "karatsuba"),
                     (dict(part="full", part_bits=4), "part_bits")]:
        with pytest.raises(ParameterError, match=name):
            Multiplier(20, 20, **kw)
    with pytest.raises(ParameterError, match="a_width"):
        Multiplier(0, 20)

@pytest.mark.slow
@pytest.mark.parametrize("target", ["ecp5", "xilinx", "generic"])
def test_multiplier_many_widths_slow(target):
    for wa in (2, 7, 17, 18, 19, 25, 35, 37, 53, 61, 64):
        for wb in (1, 10, 18, 24, 34, 64):
            for kara in (False, True):
                for part, pb in (("full", None), ("low", max(1, wa - 3)), ("high", max(1, wb // 2))):
                    _check(wa, wb, 20, seed=wa * 100 + wb, target=target, karatsuba=kara, part=part,
                           part_bits=pb, latency=_min_latency(wa, wb, target=target, karatsuba=kara, part=part,
                                                              part_bits=pb) + 1)

# -- carry-save trees and split (chunked) adders -------------------------------------------------------
from amaranth.back import rtlil                                          # noqa: E402
from amaranth.hdl import Module                                          # noqa: E402
from amaranth.lib import wiring                                          # noqa: E402
from amaranth.lib.wiring import In, Out                                  # noqa: E402

from hhe_gen.cores.arith.multiplier import CompressorPlan, SumPlan       # noqa: E402
from hhe_gen.cores.arith.pipeline import Pipe, schedule                  # noqa: E402
from hhe_gen.cores.unused import mark_unused


class SumUnit(wiring.Component):
    """Test harness: a SumPlan over ports r0, r1 ... (rows (offset, width, sign)), ``latency``
    registers placed by the scheduler; p = the sum modulo 2^out_bits."""

    def __init__(self, rows, out_bits, latency, chunk_bits=None, reduce="csa"):
        self.plan = SumPlan([rows], out_bits, name="s", chunk_bits=chunk_bits, reduce=reduce)
        self.segments = self.plan.segments
        self.counts = schedule(self.segments, latency)
        self.latency = latency
        self.rows = rows
        ports = {f"r{i}": In(w) for i, (_, w, _) in enumerate(rows)}
        ports.update({"en": In(1), "p": Out(out_bits)})
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        pipe = Pipe(m, self.en, self.segments, self.counts)
        vals = [pipe.input(getattr(self, f"r{i}")) for i in range(len(self.rows))]
        out = self.plan.build(pipe, [vals])[0]
        m.d.comb += self.p.eq(pipe.output(out))
        return m


def _sum_reference(rows, vals, out_bits):
    return sum(s * v << o for (o, _, s), v in zip(rows, vals)) % (1 << out_bits)


ROW_SETS = [
    ([(0, 20, 1), (5, 20, 1), (9, 12, -1), (30, 10, 1)], 44),
    ([(0, 36, 1), (18, 36, 1), (18, 36, 1), (36, 36, 1), (36, 36, 1), (36, 36, 1), (54, 36, 1), (72, 36, 1)], 108),
    ([(0, 17, -1), (3, 9, -1), (0, 30, 1), (12, 1, 1), (29, 3, -1)], 31),
    ([(0, 64, 1), (0, 64, 1)], 64),                  # two rows: no compressor level
    ([(4, 7, 1)], 20),                               # one row: no adder at all
]


@pytest.mark.parametrize("case", range(len(ROW_SETS)))
def test_sum_plan_exact_at_every_latency(case):
    """Bit-exact sums (signed rows, constants of the negative rows, rows cut at out_bits) with the
    registers wherever the scheduler puts them, including between the chunks of the adder (small
    chunks: a carry crosses a register); every result exactly ``latency`` enabled cycles late."""
    rows, out_bits = ROW_SETS[case]
    rng = random.Random(case)
    vecs = []
    for _ in range(14):
        vecs.append({f"r{i}": rng.choice([0, (1 << w) - 1, rng.getrandbits(w)]) for i, (_, w, _) in enumerate(rows)})
    probe = SumUnit(rows, out_bits, 0, chunk_bits=8)
    mark_unused(probe)
    n_seg = len(probe.segments)
    split_seen = False
    for latency in sorted({0, 1, 2, n_seg // 2, n_seg, n_seg + 2}):
        dut = SumUnit(rows, out_bits, latency, chunk_bits=8)
        run = run_unit(dut, vecs, en_gaps=latency)
        want = [_sum_reference(rows, [v[f"r{i}"] for i in range(len(rows))], out_bits) for v in vecs]
        assert run.outputs == want, (latency, dut.counts)
        names = [s.name for s in dut.segments]
        chunk_regs = [dut.counts[i + 1] for i, nm in enumerate(names) if nm.startswith("s.a")][:-1]
        split_seen |= any(chunk_regs)
    if case in (0, 1, 3):
        assert split_seen, "no register ever went between two adder chunks"


@pytest.mark.parametrize("case", range(len(ROW_SETS)))
def test_sum_plan_adders_exact_at_every_latency(case):
    """The "adders" reduction: the same sums bit-exact with the registers between any of its adder
    levels, every result exactly ``latency`` enabled cycles late."""
    rows, out_bits = ROW_SETS[case]
    rng = random.Random(100 + case)
    vecs = [{f"r{i}": rng.choice([0, (1 << w) - 1, rng.getrandbits(w)]) for i, (_, w, _) in enumerate(rows)}
            for _ in range(14)]
    probe = SumUnit(rows, out_bits, 0, reduce="adders")
    mark_unused(probe)
    assert not any(s.name.startswith("s.a") for s in probe.segments)        # no final adder
    n_seg = len(probe.segments)
    want = [_sum_reference(rows, [v[f"r{i}"] for i in range(len(rows))], out_bits) for v in vecs]
    for latency in sorted({0, 1, n_seg // 2, n_seg, n_seg + 2}):
        dut = SumUnit(rows, out_bits, latency, reduce="adders")
        assert run_unit(dut, vecs, en_gaps=latency).outputs == want, (latency, dut.counts)


def test_adder_levels_and_spans():
    # n fully overlapping words: ceil(log2 n) levels of pairwise adders, down to one word
    for n, levels in [(1, 0), (2, 1), (3, 2), (4, 2), (5, 3), (8, 3), (9, 4), (22, 5)]:
        plan = CompressorPlan([multiplier_row(0, 40) for _ in range(n)], 48, reduce="adders")
        assert plan.levels == levels and len(plan.spans[-1]) == 1 and plan.chunks == [], n
    # carry_save stops at two words
    plan = CompressorPlan([multiplier_row(0, 40) for _ in range(5)], 48, carry_save=True, reduce="adders")
    assert len(plan.spans[-1]) == 2
    # non-overlapping rows share one word: no adder; an overlap adds a carry column (capped at W)
    plan = CompressorPlan([multiplier_row(0, 10), multiplier_row(10, 10), multiplier_row(25, 5)], 40, reduce="adders")
    assert plan.levels == 0
    plan = CompressorPlan([multiplier_row(0, 36), multiplier_row(18, 36)], 72, reduce="adders")
    assert plan.spans[-1] == [(0, 55)]
    plan = CompressorPlan([multiplier_row(0, 36), multiplier_row(18, 36)], 50, reduce="adders")
    assert plan.spans[-1] == [(0, 50)]


def test_reduce_refused():
    from hhe_gen.cores.arith.mul_plan import MulPlan
    from hhe_gen.params.errors import ParameterError
    for make in (lambda: CompressorPlan([multiplier_row(0, 8)], 8, reduce="wallace"),
                 lambda: SumPlan([[(0, 8, 1)]], 8, reduce="wallace"),
                 lambda: MulPlan(20, 20, reduce="wallace")):
        with pytest.raises(ParameterError, match="reduce"):
            make()


def test_compressor_levels_and_chunks():
    # n fully overlapping words: 3:2 levels n -> 2*(n//3) + n%3 until two are left
    for n, levels in [(2, 0), (3, 1), (4, 2), (5, 3), (6, 3), (9, 4), (13, 5)]:
        plan = CompressorPlan([multiplier_row(0, 40) for _ in range(n)], 48)
        assert plan.levels == levels, n
    # rows that do not overlap are concatenated into one word: no level
    plan = CompressorPlan([multiplier_row(0, 10), multiplier_row(10, 10), multiplier_row(25, 5)], 40)
    assert plan.levels == 0 and plan.chunks == []
    # the adder starts at the first column where two words have bits and is cut into chunks
    plan = CompressorPlan([multiplier_row(0, 36), multiplier_row(18, 36), multiplier_row(36, 36)], 72, chunk_bits=20)
    assert plan.levels == 0 and plan.cpa_lo == 18 and plan.chunks == [(18, 36), (36, 54), (54, 72)]
    plan = CompressorPlan([multiplier_row(0, 36), multiplier_row(18, 36), multiplier_row(30, 36)], 72)
    assert plan.levels == 1 and plan.cpa_lo == 19 and len(plan.chunks) == 2


def multiplier_row(offset, width, sign=1):
    from hhe_gen.cores.arith.multiplier import RowSpec
    return RowSpec(offset, width, sign, ("src", 0))


# -- DSP primitives (ecp5 MULT18X18D with their registers) ----------------------------------------------
@pytest.mark.parametrize("karatsuba", [False, True])
def test_dsp_model_equals_product(karatsuba):
    """dsp="model": the MULT18X18D wiring (input registers taking the register before the tiles,
    output register taking the one after them) with an Amaranth model of the primitive."""
    for k, (wa, wb) in enumerate([(18, 18), (36, 36), (54, 54), (55, 10), (61, 64)]):
        low = MulPlan(wa, wb, karatsuba=karatsuba, dsp="model")
        base = sum(s.required for s in low.segments)
        for extra in (0, 1, 3, 6):
            dut = _check(wa, wb, 8, seed=k * 10 + extra, karatsuba=karatsuba, dsp="model", latency=base + extra)
            assert dut.tiles == low.tiles


def _primitive_cells(dut):
    text = rtlil.convert(dut)
    cells = text.count("cell \\MULT18X18D ")
    reg_in = text.count('REG_INPUTA_CLK "CLK0"')
    reg_out = text.count('REG_OUTPUT_CLK "CLK0"')
    return text, cells, reg_in, reg_out


def test_dsp_primitive_instances():
    # register after the tiles only: output registers; with a register before them too: input ones
    dut = Multiplier(54, 54, dsp="primitive", latency=1)
    text, cells, reg_in, reg_out = _primitive_cells(dut)
    assert (cells, reg_in, reg_out) == (9, 0, 9) and "$mul" not in text
    dut = Multiplier(54, 54, dsp="primitive", latency=8)
    assert dut.counts[0] >= 1          # the schedule put a register at the input: absorbed
    text, cells, reg_in, reg_out = _primitive_cells(dut)
    assert (cells, reg_in, reg_out) == (9, 9, 9) and "$mul" not in text
    # the same unit with dsp="infer" multiplies with '*' (one per tile)
    assert rtlil.convert(Multiplier(54, 54, latency=8)).count("$mul") == 9


def test_dsp_bad_parameters():
    with pytest.raises(ParameterError, match="dsp"):
        Multiplier(20, 20, dsp="primitive", target="xilinx")
    with pytest.raises(ParameterError, match="dsp"):
        Multiplier(20, 20, dsp="hard")
    with pytest.raises(ParameterError, match="part"):
        MulPlan(20, 20, carry_save=True)


@pytest.mark.toolchain
def test_dsp_primitive_synthesis():
    """Yosys maps the primitive version to the same MULT18X18D count with fewer flip-flops (the
    registers around the tiles live inside the DSP blocks)."""
    from hhe_gen.flow.synth import synth_ecp5
    prim = synth_ecp5(Multiplier(36, 36, dsp="primitive", latency=4), name="mul36_prim")
    infer = synth_ecp5(Multiplier(36, 36, latency=4), name="mul36_infer")
    assert prim["MULT18X18D"] == infer["MULT18X18D"] == 4
    assert prim["FF"] < infer["FF"]
