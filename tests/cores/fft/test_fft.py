"""The iterative special FFT / IFFT (cores/fft) against hhe_gen.models.fft, bit for bit.

* plan (pure Python, banked memory, per-lane twiddle ROMs) == special_ifft_fixed /
  special_fft_fixed for every n 2^3 .. 2^12 (2^15 slow) and every P;
* the Amaranth core == the model at n = 8, 16, 32, 128 slots (N = 16, 32, 64, 256) for several P,
  both directions, random and corner inputs (max/min integers: sums wrap exactly as the model's),
  with random valid gaps and back-pressure (results unchanged), several transforms back to back;
* cycle counts asserted exactly: first output = last input + compute_cycles + 2 + output_register
  (first_output_delay), one beat per
  cycle, period = cycles(); compute_cycles = stage_starts total + 1 and within 5% of
  (n/2P) log2(n) + delay for n >= 2^8;
* bad parameters raise ParameterError.
"""

import math
import random

import pytest

from hhe_gen.cores.arith.butterfly import pack_complex, unpack_complex
from hhe_gen.cores.fft import FftPlan, IterativeFft, SpecialFft, SpecialIfft, run_plan
from hhe_gen.cores.ntt.schedule import ntt_schedule, stage_starts
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models import fft as fftm
from hhe_gen.params import ParameterError
from hhe_gen.sim.stream import run_stream

FMT = fftm.FixedPointFormat(29, 26)


def random_values(n, fmt, seed, corners=True):
    rng = random.Random(seed)
    extremes = [fmt.max_int, fmt.min_int, 0, 1, -1, fmt.one if fmt.frac_bits <= fmt.width - 2 else fmt.max_int]

    def pick():
        if corners and rng.random() < 0.2:
            return rng.choice(extremes)
        return rng.randint(-fmt.one, fmt.one) if rng.random() < 0.7 else rng.randint(fmt.min_int, fmt.max_int)
    return [(pick(), pick()) for _ in range(n)]


def beats(values, lanes, fmt):
    return [[pack_complex(values[b * lanes + lane], fmt) for lane in range(lanes)]
            for b in range(len(values) // lanes)]


def unbeat(outputs, fmt):
    return [unpack_complex(x, fmt) for beat in outputs for x in beat]


# -- plan --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("inverse", [True, False])
@pytest.mark.parametrize("n_log", range(3, 13))
def test_plan_equals_model(n_log, inverse):
    n = 1 << n_log
    fmt = fftm.FixedPointFormat(24, 21, "half-even" if n_log % 2 else "half-up")
    model = fftm.special_ifft_fixed if inverse else fftm.special_fft_fixed
    for lanes in (1, 2, 4, 8, 16):
        if lanes > n // 4:
            continue
        values = random_values(n, fmt, seed=n_log * 100 + lanes)
        assert run_plan(FftPlan(n, lanes, inverse, 7), values, fmt) == model(values, fmt)


@pytest.mark.slow
@pytest.mark.parametrize("inverse", [True, False])
def test_plan_equals_model_large(inverse):
    n = 1 << 15
    values = random_values(n, FMT, seed=5, corners=False)
    model = fftm.special_ifft_fixed if inverse else fftm.special_fft_fixed
    assert run_plan(FftPlan(n, 8, inverse, 7), values, FMT) == model(values, FMT)


def test_twiddle_rom_depth():
    for n in (8, 64, 4096, 1 << 15):
        for lanes in (1, 2, 4, 8):
            if lanes <= n // 4:
                plan = FftPlan(n, lanes, True, 7)
                assert plan.tw_depth == n // lanes + plan.bank_bits - 2
                assert len(plan.twiddle_rom(lanes - 1)) == plan.tw_depth


@pytest.mark.parametrize("inverse", [True, False])
def test_compute_cycles_near_bound(inverse):
    """Independent count: stage_starts of the NTT schedule with the same bit order; and the target
    (n/2P) log2 n + delay within 5% for n >= 2^8 (at 2^7 and P = 8, 8 cycles a stage, the
    reads a cycle after their writes cost 10 %)."""
    for n_log in (8, 10, 13, 15):
        n = 1 << n_log
        for lanes in (1, 2, 4, 8):
            plan = FftPlan(n, lanes, inverse, 7)
            _, total = stage_starts(ntt_schedule(n, lanes, inverse=not inverse), 7, write_first=False)
            assert plan.compute_cycles == total
            bound = (n // (2 * lanes)) * n_log + 7
            assert abs(total - bound) <= 0.05 * bound, (n, lanes, total, bound)


# -- hardware ------------------------------------------------------------------------------------------
def run_transforms(dut, transforms, gaps=None):
    inputs = [b for vals in transforms for b in beats(vals, dut.lanes, dut.fmt)]
    per = dut.unload_beats
    r = run_stream(dut, inputs, per * len(transforms), gaps=gaps)
    outs = unbeat(r.outputs, dut.fmt)
    n = dut.n
    return [outs[i * n * dut.passes:(i + 1) * n * dut.passes] for i in range(len(transforms))], r


CASES = [(8, 1), (8, 2), (16, 1), (16, 4), (32, 2), (32, 8), (128, 4)]


@pytest.mark.parametrize("inverse", [True, False])
@pytest.mark.parametrize("n,lanes,output_register", [(n, p, True) for n, p in CASES] + [(16, 4, False), (32, 2, False)])
def test_core_equals_model(n, lanes, inverse, output_register):
    dut = IterativeFft(n, lanes, FMT, inverse=inverse, output_register=output_register)
    transforms = [random_values(n, FMT, seed=n + lanes + s) for s in range(2)]
    got, r = run_transforms(dut, transforms)
    for vals, out in zip(transforms, got):
        assert out == dut.model(vals)
    # exact cycle counts (full rate)
    nb = n // lanes
    for i in range(2):
        ins = r.in_cycles[i * nb:(i + 1) * nb]
        outs = r.out_cycles[i * nb:(i + 1) * nb]
        assert ins == list(range(ins[0], ins[0] + nb))
        assert outs == list(range(outs[0], outs[0] + nb))
        assert outs[0] == ins[-1] + dut.first_output_delay == ins[-1] + dut.compute_cycles + 2 + output_register
        assert outs[-1] - ins[0] + 1 == dut.cycles()
    assert r.in_cycles[nb] == r.out_cycles[nb - 1] + 1          # back to back: period = cycles()
    schedule = ntt_schedule(n, lanes, inverse=not inverse)
    assert dut.compute_cycles == stage_starts(schedule, dut.delay, write_first=False)[1] + 1


@pytest.mark.parametrize("inverse", [True, False])
def test_core_gaps_and_rounding_modes(inverse):
    for fmt, gaps in ((fftm.FixedPointFormat(12, 9, "half-even"), 3), (fftm.FixedPointFormat(10, 8, "truncate"), 4),
                      (fftm.FixedPointFormat(16, 13), 5)):
        dut = IterativeFft(32, 2, fmt, inverse=inverse)
        transforms = [random_values(32, fmt, seed=gaps + s) for s in range(2)]
        got, _ = run_transforms(dut, transforms, gaps=gaps)
        assert got == [dut.model(v) for v in transforms]


def test_passes_and_split_load():
    fmt = FMT
    n, lanes = 16, 2
    dut = SpecialFft(n, lanes, fmt, passes=3, split_load=True)
    vals = random_values(n, fmt, seed=9)
    # split load: the real parts (beats 0 .. n/P-1) then the imaginary parts, each lane's value in
    # both halves of the packed word (only the half being loaded is written)
    mask = (1 << fmt.width) - 1
    re_beats = [[(vals[b * lanes + l][0] & mask) * (1 + (1 << fmt.width)) for l in range(lanes)]
                for b in range(n // lanes)]
    im_beats = [[(vals[b * lanes + l][1] & mask) * (1 + (1 << fmt.width)) for l in range(lanes)]
                for b in range(n // lanes)]
    r = run_stream(dut, re_beats + im_beats, 3 * n // lanes)
    out = unbeat(r.outputs, fmt)
    ref = dut.model(vals)
    assert out == ref * 3
    assert r.out_cycles[0] == r.in_cycles[-1] + dut.compute_cycles + 3
    assert r.out_cycles[-1] - r.in_cycles[0] + 1 == dut.cycles() == 2 * n // lanes + dut.compute_cycles + 3 * n // lanes + 2
    ifft = SpecialIfft(16, 2, fmt)
    mark_unused(ifft)
    assert isinstance(ifft, IterativeFft) and ifft.inverse


def test_bad_parameters():
    with pytest.raises(ParameterError, match="'n'"):
        IterativeFft(4, 1, FMT)
    with pytest.raises(ParameterError, match="'n'"):
        IterativeFft(1 << 16, 1, FMT)
    with pytest.raises(ParameterError, match="'n'"):
        IterativeFft(48, 1, FMT)
    with pytest.raises(ParameterError, match="lanes"):
        IterativeFft(16, 8, FMT)
    with pytest.raises(ParameterError, match="lanes"):
        IterativeFft(16, 3, FMT)
    with pytest.raises(ParameterError, match="fmt"):
        IterativeFft(16, 1, (29, 26))
    with pytest.raises(ParameterError, match="passes"):
        IterativeFft(16, 1, FMT, passes=0)
    with pytest.raises(ParameterError, match="split_load"):
        IterativeFft(16, 1, FMT, split_load=1)
    with pytest.raises(ParameterError, match="inverse"):
        FftPlan(16, 1, "yes", 7)


@pytest.mark.slow
@pytest.mark.parametrize("inverse", [True, False])
def test_core_equals_model_1024(inverse):
    dut = IterativeFft(1024, 4, FMT, inverse=inverse)
    vals = random_values(1024, FMT, seed=1)
    got, r = run_transforms(dut, [vals])
    assert got[0] == dut.model(vals)
    assert r.out_cycles[-1] - r.in_cycles[0] + 1 == dut.cycles()
    bound = (1024 // 8) * 10 + dut.delay
    assert dut.compute_cycles - 1 <= math.ceil(1.05 * bound)
