"""CodecUnit: encode equals hhe_gen.models.ckks_fixed.encode_fixed for any binding of the slots to
the built-in primes (also a prime bound twice, and rows for fewer primes than built); decode equals
decode_fixed at every built row count, written as the ISA's slot layout; a decode the codec was not
built for is refused with error and touches nothing.

One FFT core serves both tasks (inverse="both": IFFT for encode, FFT for decode): the unit holds
one set of FFT banks and twiddle ROMs; encodes and decodes alternating on it stay bit-exact, also
after an encode aborted in the middle; task cycles are asserted exactly against the formulas of
the unit's Latency section, with the compute lengths taken from the NTT schedule's stage_starts
(independent of the FFT core's own timing)."""

import cmath
import math
import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.cores.engine.codec_unit import CodecUnit
from hhe_gen.cores.engine.memory_plan import unit_memories
from hhe_gen.cores.ntt.schedule import ntt_schedule, stage_starts
from hhe_gen.models import ckks_fixed
from hhe_gen.models import fft as fftm
from hhe_gen.params import ntt_primes

from ._bench import abort_task, dump, fill, run_task, simulate

N = 32
FMT = fftm.FixedPointFormat(29, 26)
LOG_SCALE = 40


def _rig(lanes, primes, buffers=8, slots=3, decode_rows=None):
    bits = max(q.bit_length() for q in primes)
    m = Module()
    unit = CodecUnit(N, lanes, bits, buffers, slots, 2, primes, fmt=FMT, log_scale=LOG_SCALE,
                     decode_rows=decode_rows)
    reads = 1 + unit.row_ports
    bufs = BufferFile(buffers, N // lanes, lanes, bits, read_ports=reads + 1, write_ports=2)
    m.submodules.unit, m.submodules.bufs = unit, bufs
    wiring.connect(m, unit.rd, bufs.read0)
    for r in range(unit.row_ports):
        wiring.connect(m, unit.rd_row(r), bufs.read(1 + r))
    wiring.connect(m, unit.wr, bufs.write0)
    return m, unit, bufs, bits, reads


def _slots(seed):
    rng = random.Random(seed)
    out = [fftm.quantize_complex(cmath.rect(math.sqrt(rng.random()), rng.random() * 2 * math.pi), FMT)
           for _ in range(N // 2)]
    out[0] = (FMT.max_int, FMT.min_int)
    return out


def _slot_words(slots, bits):
    return [re % (1 << bits) for re, _ in slots] + [im % (1 << bits) for _, im in slots]


def _compute(unit, inverse):
    """The FFT's COMPUTE length, from the NTT schedule (the IFFT uses the forward bit order)."""
    schedule = ntt_schedule(N // 2, unit.lanes, inverse=not inverse)
    return stage_starts(schedule, unit.fft.delay, write_first=False)[1] + 1


def encode_cycles(unit, binding, rows):
    """Task transfer to done (the unit's Latency section): N/P cycles reading the slots, the IFFT,
    then a row beat per cycle for every (prime, copy) - a prime no row wants still streams by."""
    beats = N // unit.lanes
    copies = [max(1, binding[:rows].count(p)) for p in range(len(unit.primes))]
    return beats + _compute(unit, True) + sum(copies) * beats + 5


def decode_cycles(unit, rows):
    """N/P input beats, the CRT, the FFT, two cycles per output beat."""
    beats = N // unit.lanes
    return beats + unit.crts[rows].latency + _compute(unit, False) + 2 * (beats // 2) + 5


@pytest.mark.parametrize("lanes", [1, 2])
def test_encode_any_binding(lanes):
    primes = tuple(ntt_primes(N, 50, 3))
    m, unit, bufs, bits, reads = _rig(lanes, primes)
    slots = _slots(lanes)
    got = {}
    bindings = {"in order": [0, 1, 2], "permuted": [2, 0, 1], "twice": [1, 1, 0]}

    async def bench(ctx):
        await fill(ctx, bufs, 0, _slot_words(slots, bits), lanes)
        for name, binding in bindings.items():
            ctx.set(unit.slot_prime, binding)
            rows = 3 if name != "twice" else 2
            cycles, err = await run_task(ctx, unit, isa.Instruction(isa.Opcode.ENCODE, dst=3, a=0, slot=0, imm=rows))
            got[name] = (err, [await dump(ctx, bufs, 3 + r, N, lanes, reads) for r in range(rows)])
            got[name, "cycles"] = cycles

    simulate(m, bench)
    for name, binding in bindings.items():
        rows = 3 if name != "twice" else 2
        want = ckks_fixed.encode_fixed(slots, FMT, LOG_SCALE, [primes[p] for p in binding[:rows]])
        assert got[name] == (0, want), name
        assert got[name, "cycles"] == encode_cycles(unit, binding, rows), name


@pytest.mark.parametrize("lanes", [1, 2])
def test_decode_each_built_row_count_and_refusals(lanes):
    primes = tuple(ntt_primes(N, 50, 3))
    m, unit, bufs, bits, reads = _rig(lanes, primes, decode_rows=(1, 3))
    rng = random.Random(7)
    rows = [[rng.randrange(q) for _ in range(N)] for q in primes]
    rows[0][:4] = [0, 1, primes[0] - 1, primes[0] // 2]
    got = {}

    async def bench(ctx):
        for r in range(3):
            await fill(ctx, bufs, 1 + r, rows[r], lanes)
        ctx.set(unit.slot_prime, [0, 1, 2])
        for count in (1, 3):
            got[count] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.DECODE, dst=5, a=1, slot=0, imm=count))
            got[f"slots{count}"] = await dump(ctx, bufs, 5, N, lanes, reads)
        await fill(ctx, bufs, 6, [123] * N, lanes)
        got["rows2"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.DECODE, dst=6, a=1, slot=0, imm=2))
        ctx.set(unit.slot_prime, [1, 0, 2])
        got["bound"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.DECODE, dst=6, a=1, slot=0, imm=1))
        got["untouched"] = await dump(ctx, bufs, 6, N, lanes, reads)

    simulate(m, bench)
    for count in (1, 3):
        want = ckks_fixed.decode_fixed(rows[:count], list(primes[:count]), FMT, LOG_SCALE)
        assert got[count] == (decode_cycles(unit, count), 0)
        assert got[f"slots{count}"] == _slot_words(want, bits), count
    assert got["rows2"] == (1, 1) and got["bound"] == (1, 1)        # refused at once, with error
    assert got["untouched"] == [123] * N


def test_one_fft_for_both_tasks():
    """The unit's memories: one FFT (2P banks, P twiddle ROMs of the FFT plan's depth) and the two
    small FIFOs, nothing else."""
    lanes = 2
    primes = tuple(ntt_primes(N, 50, 3))
    unit = CodecUnit(N, lanes, 50, 8, 3, 2, primes, fmt=FMT, log_scale=LOG_SCALE)
    assert unit.fft.both and unit.fft.passes == (6, 1) and unit.fft.split_load == (False, True)
    names = sorted(u.name for u in unit_memories("codec_unit", unit))
    assert names == sorted([f"fft/bank{k}" for k in range(2 * lanes)] + [f"fft/twiddle{k}" for k in range(lanes)]
                           + ["row_beats/storage", "slot_beats/storage"])


@pytest.mark.parametrize("lanes", [1, 2])
def test_encode_decode_alternating_and_abort(lanes):
    primes = tuple(ntt_primes(N, 50, 3))
    m, unit, bufs, bits, reads = _rig(lanes, primes, decode_rows=(1, 3))
    slots = [_slots(10 + lanes), [(0, 0)] * (N // 2), [(FMT.max_int, FMT.max_int)] * (N // 2)]
    rng = random.Random(lanes)
    rows = [[rng.randrange(q) for _ in range(N)] for q in primes]
    got = []

    async def bench(ctx):
        ctx.set(unit.slot_prime, [0, 1, 2])
        await fill(ctx, bufs, 0, _slot_words(slots[0], bits), lanes)
        for r in range(3):
            await fill(ctx, bufs, 1 + r, rows[r], lanes)
        # an encode aborted while the FFT computes: the next task runs on a clean FFT
        await abort_task(ctx, unit, isa.Instruction(isa.Opcode.ENCODE, dst=4, a=0, slot=0, imm=3), N // lanes + 12)
        jobs = [("dec", 3, None), ("enc", 3, 0), ("dec", 1, None), ("dec", 3, None), ("enc", 3, 1),
                ("enc", 2, 2), ("dec", 3, None)]
        for kind, count, s in jobs:
            if kind == "enc":
                await fill(ctx, bufs, 0, _slot_words(slots[s], bits), lanes)
                cycles, err = await run_task(ctx, unit, isa.Instruction(isa.Opcode.ENCODE, dst=4, a=0, slot=0,
                                                                        imm=count))
                out = [await dump(ctx, bufs, 4 + r, N, lanes, reads) for r in range(count)]
            else:
                cycles, err = await run_task(ctx, unit, isa.Instruction(isa.Opcode.DECODE, dst=7, a=1, slot=0,
                                                                        imm=count))
                out = await dump(ctx, bufs, 7, N, lanes, reads)
            got.append((kind, count, s, cycles, err, out))

    simulate(m, bench)
    for kind, count, s, cycles, err, out in got:
        assert err == 0
        if kind == "enc":
            assert out == ckks_fixed.encode_fixed(slots[s], FMT, LOG_SCALE, list(primes[:count])), (kind, count, s)
            assert cycles == encode_cycles(unit, [0, 1, 2], count)
        else:
            want = ckks_fixed.decode_fixed(rows[:count], list(primes[:count]), FMT, LOG_SCALE)
            assert out == _slot_words(want, bits), (kind, count)
            assert cycles == decode_cycles(unit, count)


@pytest.mark.parametrize("lanes", [1, 2])
def test_signed_encode_writes_the_integers_in_place_whatever_the_binding(lanes):
    """``encode ..., signed``: the rounded integers (ckks_fixed.encode_integers, the model's) as
    word_bits two's complement into one buffer, also over its own slots; constant extreme slots
    give the extreme integers +-2^(W-1-F+log_scale); no other buffer is written; the cycles of an
    unsigned encode of every prime's row."""
    primes = tuple(ntt_primes(N, 50, 3))
    m, unit, bufs, bits, reads = _rig(lanes, primes)
    sets = {"to b4": (_slots(10 + lanes), 0, 4, [2, 0, 1]),
            "in place": ([(FMT.max_int, FMT.min_int)] * (N // 2), 1, 1, [1, 1, 0])}
    got = {}

    async def bench(ctx):
        for slots, src, _, _ in sets.values():
            await fill(ctx, bufs, src, _slot_words(slots, bits), lanes)
        await fill(ctx, bufs, 5, [7] * N, lanes)
        for name, (_, src, dst, binding) in sets.items():
            ctx.set(unit.slot_prime, binding)
            ins = isa.Instruction(isa.Opcode.ENCODE, dst=dst, a=src, slot=0, flags=1, imm=1)
            got[name] = await run_task(ctx, unit, ins) + (await dump(ctx, bufs, dst, N, lanes, reads),)
        got["b5"] = await dump(ctx, bufs, 5, N, lanes, reads)
        # the FFT restarts clean after a signed encode: an unsigned encode and a decode follow
        ctx.set(unit.slot_prime, [0, 1, 2])
        got["after"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.ENCODE, dst=2, a=0, slot=0, imm=3))
        got["after rows"] = [await dump(ctx, bufs, 2 + r, N, lanes, reads) for r in range(3)]
        got["decode"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.DECODE, dst=6, a=2, slot=0, imm=3))
        got["decoded"] = await dump(ctx, bufs, 6, N, lanes, reads)

    simulate(m, bench)
    beats = N // lanes
    random_slots = sets["to b4"][0]
    assert got["after"] == (encode_cycles(unit, [0, 1, 2], 3), 0)
    assert got["after rows"] == ckks_fixed.encode_fixed(random_slots, FMT, LOG_SCALE, list(primes))
    assert got["decode"][1] == 0
    decoded = ckks_fixed.decode_fixed(got["after rows"], list(primes), FMT, LOG_SCALE)
    assert got["decoded"] == _slot_words(decoded, bits)
    bound = 1 << (FMT.width - 1 - FMT.frac_bits + LOG_SCALE)
    for name, (slots, _, _, _) in sets.items():
        ints = ckks_fixed.encode_integers(slots, FMT, LOG_SCALE)
        cycles, err, words = got[name]
        assert (err, words) == (0, [x % (1 << bits) for x in ints]), name
        assert cycles == beats + _compute(unit, True) + beats + 5, name      # prime 0's row only
    extreme = ckks_fixed.encode_integers(sets["in place"][0], FMT, LOG_SCALE)
    assert min(extreme) == -bound and max(extreme) > bound - (1 << LOG_SCALE - FMT.frac_bits + 1)
    assert got["b5"] == [7] * N
