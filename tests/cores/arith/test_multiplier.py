"""The DSP-aware multiplier generator against Python's a*b (and its parts)."""

import random

import pytest

from hhe_gen.cores.arith.multiplier import MulPlan, Multiplier
from hhe_gen.params import ParameterError
from hhe_gen.testing import run_unit


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
