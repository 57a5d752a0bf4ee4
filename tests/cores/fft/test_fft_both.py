"""The iterative FFT core with ``inverse="both"`` (one set of banks and twiddle ROMs, the direction
chosen per transform by the ``inverse`` port) against hhe_gen.models.fft, bit for bit.

* the twiddle identity it relies on, from the model's own index formulas: for every stage bit k and
  offset j the IFFT's twiddle is the exact complex conjugate of the FFT's (29/26, 38/36, 24/21, up
  to n = 2^15), and formats that break it (frac_bits = width - 1, saturated roots) are refused;
* the plan with the shared ROMs (pure Python, FFT layout addressed by k, imaginary part negated in
  IFFT mode) == special_ifft_fixed / special_fft_fixed;
* the Amaranth core at n = 16 and 64 slots, P = 1, 2, 4: several transforms back to back with the
  direction alternating, per-direction passes / split_load (the codec's ((2L, 1), (False, True))
  and others), random and corner inputs (max / min integers, zeros); the ``inverse`` port is only
  valid with the first beat of a transform (random afterwards: it is sampled); every output equals
  the model; cycle counts per transform equal the one-direction core's (and the independent
  formulas); random valid gaps and back-pressure give the same results;
* the "both" core has the memories of ONE one-direction core;
* bad ``inverse`` values and bad per-direction pairs raise ParameterError.
"""

import random

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.arith.butterfly import pack_complex, unpack_complex
from hhe_gen.cores.engine.memory_plan import unit_memories
from hhe_gen.cores.fft import FftPlan, IterativeFft, run_plan
from hhe_gen.cores.fft.plan import check_shared_twiddles
from hhe_gen.cores.ntt.schedule import ntt_schedule, stage_starts
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models import fft as fftm
from hhe_gen.params import ParameterError

FMT = fftm.FixedPointFormat(29, 26)
FMT38 = fftm.FixedPointFormat(38, 36)


def model(values, inverse, fmt):
    return (fftm.special_ifft_fixed if inverse else fftm.special_fft_fixed)(values, fmt)


def random_values(n, fmt, rng, kind="random"):
    if kind == "zeros":
        return [(0, 0)] * n
    if kind == "max":
        return [(fmt.max_int, fmt.max_int)] * n
    if kind == "min":
        return [(fmt.min_int, fmt.min_int)] * n
    extremes = [fmt.max_int, fmt.min_int, 0, 1, -1]

    def pick():
        if rng.random() < 0.25:
            return rng.choice(extremes)
        return rng.randint(-fmt.one, fmt.one) if rng.random() < 0.7 else rng.randint(fmt.min_int, fmt.max_int)
    return [(pick(), pick()) for _ in range(n)]


def input_beats(values, lanes, fmt, split, rng):
    """The beats of one transform: packed values, or (split load) the real parts then the imaginary
    parts, each in the half being loaded with random bits in the other half (must be ignored)."""
    mask = (1 << fmt.width) - 1
    nb = len(values) // lanes
    if not split:
        return [[pack_complex(values[b * lanes + l], fmt) for l in range(lanes)] for b in range(nb)]
    re = [[(values[b * lanes + l][0] & mask) | (rng.getrandbits(fmt.width) << fmt.width) for l in range(lanes)]
          for b in range(nb)]
    im = [[rng.getrandbits(fmt.width) | ((values[b * lanes + l][1] & mask) << fmt.width) for l in range(lanes)]
          for b in range(nb)]
    return re + im


def run_both(dut, jobs, gaps=None):
    """Run transforms ``jobs`` = [(inverse, beats)] back to back; ``inverse`` is set with each
    transform's first beat and is random afterwards.  Returns per transform (outputs, input cycles,
    output cycles)."""
    rng = random.Random(gaps)
    n_out = [dut.timing(inv).unload_beats for inv, _ in jobs]
    ins, outs, out_cycles = [], [], []
    state = {"cycle": 0}

    async def clock(ctx):
        async for _ in ctx.tick():
            state["cycle"] += 1
            if state["cycle"] > 200_000:
                raise TimeoutError("no result")

    async def producer(ctx):
        for inv, beats in jobs:
            cycles = []
            for i, payload in enumerate(beats):
                while gaps is not None and rng.random() < 0.3:
                    ctx.set(dut.inverse, rng.getrandbits(1))
                    await ctx.tick()
                ctx.set(dut.i_stream.payload, payload)
                ctx.set(dut.i_stream.valid, 1)
                ctx.set(dut.inverse, int(inv) if i == 0 else rng.getrandbits(1))
                await ctx.tick().until(dut.i_stream.ready)
                cycles.append(state["cycle"] - 1)
                ctx.set(dut.i_stream.valid, 0)
                ctx.set(dut.inverse, rng.getrandbits(1))
            ins.append(cycles)

    async def consumer(ctx):
        for count in n_out:
            got, cycles = [], []
            while len(got) < count:
                ready = gaps is None or rng.random() < 0.7
                ctx.set(dut.o_stream.ready, ready)
                *_, valid, payload = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
                if ready and valid:
                    got.append([int(x) for x in payload])
                    cycles.append(state["cycle"] - 1)
            ctx.set(dut.o_stream.ready, 0)
            outs.append(got)
            out_cycles.append(cycles)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_process(clock)
    sim.add_testbench(producer, background=True)
    sim.add_testbench(consumer)
    sim.run()
    return [([unpack_complex(x, dut.fmt) for beat in o for x in beat], i, c)
            for o, i, c in zip(outs, ins, out_cycles)]


def one_direction_core(n, lanes, fmt, inverse, passes, split):
    core = IterativeFft(n, lanes, fmt, inverse=inverse, passes=passes, split_load=split)
    mark_unused(core)
    return core


# -- the twiddle identity ------------------------------------------------------------------------------
@pytest.mark.parametrize("n,lanes,fmt", [(8, 1, FMT), (64, 4, FMT), (4096, 2, FMT), (4096, 2, FMT38),
                                         (1 << 15, 8, FMT38), (256, 2, fftm.FixedPointFormat(24, 21))])
def test_twiddles_are_conjugates(n, lanes, fmt):
    table = fftm.twiddle_table(n, fmt)
    rot = fftm.rotation_group(n)
    for log_len in range(1, n.bit_length()):
        # the models' indices (special_ifft_fixed / special_fft_fixed) of the pair at offset j
        half, mask, gap, lenq = fftm._stage_params(n, log_len)
        for j in range(half):
            re_f, im_f = table[(rot[j] & mask) << gap]
            assert table[(lenq - (rot[j] & mask)) << gap] == (re_f, -im_f), (log_len, j)
    inv, fwd = FftPlan(n, lanes, True, 7), FftPlan(n, lanes, False, 7)
    check_shared_twiddles(inv, fwd, fmt)
    # same lane offsets and ROM masks per bit k, stage order reversed
    assert inv.stage_k == tuple(reversed(fwd.stage_k))
    assert inv.tw_mask_k == fwd.tw_mask_k
    for k in range(inv.n_log):
        si, sf = inv.stage_k.index(k), fwd.stage_k.index(k)
        for lane in range(lanes):
            for c in range(n // (2 * lanes)):
                assert inv.lane_j(si, c, lane) == fwd.lane_j(sf, c, lane)


def test_saturating_format_is_refused():
    fmt = fftm.FixedPointFormat(12, 11)          # roots near +-1 saturate to max_int but not min_int
    table = fftm.twiddle_table(4096, fmt)
    assert any(table[4 * 4096 - i] != (table[i][0], -table[i][1]) for i in range(4 * 4096))
    with pytest.raises(ParameterError, match="'fmt'"):
        IterativeFft(4096, 2, fmt, inverse="both")
    with pytest.raises(ParameterError, match="'fmt'"):
        check_shared_twiddles(FftPlan(4096, 2, True, 7), FftPlan(4096, 2, False, 7), fmt)


@pytest.mark.parametrize("n_log", [3, 5, 8, 11])
def test_plan_with_shared_roms_equals_model(n_log):
    n = 1 << n_log
    rng = random.Random(n_log)
    for fmt in (FMT, FMT38, fftm.FixedPointFormat(20, 17, "half-even")):
        for lanes in (1, 2, 8):
            if lanes > n // 4:
                continue
            fwd = FftPlan(n, lanes, False, 7)
            for inverse in (True, False):
                plan = FftPlan(n, lanes, inverse, 7)
                values = random_values(n, fmt, rng)
                assert run_plan(plan, values, fmt, shared_with=fwd) == model(values, inverse, fmt)


# -- the core ------------------------------------------------------------------------------------------
CODEC_LIKE = dict(passes=(4, 1), split_load=(False, True))       # encoder 2L passes (L = 2), decoder split
CONFIGS = [
    (16, 1, CODEC_LIKE), (16, 2, CODEC_LIKE), (16, 4, CODEC_LIKE),
    (64, 1, CODEC_LIKE), (64, 2, CODEC_LIKE), (64, 4, CODEC_LIKE),
    (16, 2, dict(passes=1, split_load=False)),
    (64, 4, dict(passes=(1, 3), split_load=(True, False))),
    (16, 4, dict(passes=2, split_load=True)),
]
DIRECTIONS = [True, False, False, True, True, False]


@pytest.mark.parametrize("n,lanes,kw", CONFIGS)
def test_both_core_equals_model_alternating(n, lanes, kw):
    fmt = FMT38 if lanes == 2 else FMT
    dut = IterativeFft(n, lanes, fmt, inverse="both", **kw)
    rng = random.Random(n * 10 + lanes)
    kinds = ["random", "max", "random", "zeros", "min", "random"]
    pairs = {name: (v if isinstance(v, tuple) else (v, v)) for name, v in kw.items()}
    jobs, values = [], []
    for inv, kind in zip(DIRECTIONS, kinds):
        vals = random_values(n, fmt, rng, kind)
        split = pairs["split_load"][0 if inv else 1]
        jobs.append((inv, input_beats(vals, lanes, fmt, split, rng)))
        values.append(vals)
    results = run_both(dut, jobs)
    prev_last = None
    for (inv, beats), vals, (out, ins, outs) in zip(jobs, values, results):
        passes = pairs["passes"][0 if inv else 1]
        split = pairs["split_load"][0 if inv else 1]
        assert out == model(vals, inv, fmt) * passes, (inv, vals[:2])
        # cycle counts: independent formulas, and the one-direction core's
        single = one_direction_core(n, lanes, fmt, inv, passes, split)
        t = dut.timing(inv)
        load, unload = (2 if split else 1) * n // lanes, passes * n // lanes
        compute = stage_starts(ntt_schedule(n, lanes, inverse=not inv), dut.delay, write_first=False)[1] + 1
        assert (t.load_beats, t.unload_beats, t.compute_cycles) == (load, unload, compute)
        assert (t.load_beats, t.unload_beats, t.compute_cycles, t.first_output_delay, t.cycles) == \
            (single.load_beats, single.unload_beats, single.compute_cycles, single.first_output_delay,
             single.cycles())
        assert dut.cycles(inv) == single.cycles() == load + compute + 2 + unload
        assert len(ins) == load and ins == list(range(ins[0], ins[0] + load))
        assert len(outs) == unload and outs == list(range(outs[0], outs[0] + unload))
        assert outs[0] == ins[-1] + single.first_output_delay == ins[-1] + compute + 3
        assert outs[-1] - ins[0] + 1 == single.cycles()
        if prev_last is not None:
            assert ins[0] == prev_last + 1                       # back to back, no extra cycle
        prev_last = outs[-1]


@pytest.mark.parametrize("n,lanes", [(16, 2), (64, 4)])
def test_both_core_gaps_and_back_pressure(n, lanes):
    fmt = fftm.FixedPointFormat(16, 13, "half-even")
    dut = IterativeFft(n, lanes, fmt, inverse="both", passes=(2, 1), split_load=(False, True))
    rng = random.Random(lanes)
    jobs, values = [], []
    for inv in (False, True, True, False):
        vals = random_values(n, fmt, rng)
        jobs.append((inv, input_beats(vals, lanes, fmt, not inv, rng)))
        values.append(vals)
    results = run_both(dut, jobs, gaps=n + lanes)
    for (inv, _), vals, (out, _, _) in zip(jobs, values, results):
        assert out == model(vals, inv, fmt) * (2 if inv else 1)


def test_one_set_of_memories():
    """The "both" core holds the memories of one one-direction core: 2P banks and P twiddle ROMs
    (the FFT plan's), nothing more."""
    for n, lanes in ((64, 2), (4096, 2)):
        both = IterativeFft(n, lanes, FMT38, inverse="both", passes=(6, 1), split_load=(False, True))
        single = IterativeFft(n, lanes, FMT38, inverse=False, split_load=True)
        mark_unused(single)
        got = sorted((u.name, u.depth, u.width, u.rom) for u in unit_memories("fft", both))
        want = sorted((u.name, u.depth, u.width, u.rom) for u in unit_memories("fft", single))
        assert got == want
        assert len(got) == 3 * lanes
        assert sum(u.depth for u in unit_memories("fft", both) if u.rom) == n + lanes * (FftPlan(n, lanes, False, 7).bank_bits - 2)


def test_ports_and_members():
    dut = IterativeFft(16, 2, FMT, inverse="both", passes=(4, 1), split_load=(False, True))
    mark_unused(dut)
    assert dut.signature.members["inverse"].flow.name == "In" and len(dut.inverse) == 1
    assert dut.both and dut.direction == "both" and dut.passes == (4, 1) and dut.split_load == (False, True)
    assert dut.model([(1, 0)] * 16, True) == fftm.special_ifft_fixed([(1, 0)] * 16, FMT)
    with pytest.raises(AttributeError, match="timing"):
        dut.compute_cycles
    single = IterativeFft(16, 2, FMT, inverse=True)
    mark_unused(single)
    assert "inverse" not in single.signature.members and single.inverse is True
    assert single.cycles() == single.cycles(True) == single.timing().cycles


def test_bad_parameters():
    for bad in ("yes", "Both", 1, None, (True, False)):
        with pytest.raises(ParameterError, match="'inverse'"):
            IterativeFft(16, 1, FMT, inverse=bad)
    for bad in ((0, 1), (1, 257), (2, 1, 1), (True, 1), (2,), [2.0, 1]):
        with pytest.raises(ParameterError, match="'passes'"):
            IterativeFft(16, 1, FMT, inverse="both", passes=bad)
    for bad in ((1, True), (True,), (True, False, True), "yes"):
        with pytest.raises(ParameterError, match="'split_load'"):
            IterativeFft(16, 1, FMT, inverse="both", split_load=bad)
    # pairs only for "both"
    with pytest.raises(ParameterError, match="'passes'"):
        IterativeFft(16, 1, FMT, inverse=True, passes=(2, 1))
    with pytest.raises(ParameterError, match="'split_load'"):
        IterativeFft(16, 1, FMT, inverse=False, split_load=(False, True))
    both = IterativeFft(16, 1, FMT, inverse="both")
    mark_unused(both)
    for bad in (None, 1, "both"):
        with pytest.raises(ParameterError, match="'inverse'"):
            both.cycles(bad)
    single = IterativeFft(16, 1, FMT, inverse=True)
    mark_unused(single)
    with pytest.raises(ParameterError, match="'inverse'"):
        single.cycles(False)
