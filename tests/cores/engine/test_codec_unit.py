"""CodecUnit: encode equals hhe_gen.models.ckks_fixed.encode_fixed for any binding of the slots to
the built-in primes (also a prime bound twice, and rows for fewer primes than built); decode equals
decode_fixed at every built row count, written as the ISA's slot layout; a decode the codec was not
built for is refused with error and touches nothing."""

import cmath
import math
import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.cores.engine.codec_unit import CodecUnit
from hhe_gen.models import ckks_fixed
from hhe_gen.models import fft as fftm
from hhe_gen.params import ntt_primes

from ._bench import dump, fill, run_task, simulate

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
            _, err = await run_task(ctx, unit, isa.Instruction(isa.Opcode.ENCODE, dst=3, a=0, slot=0, imm=rows))
            got[name] = (err, [await dump(ctx, bufs, 3 + r, N, lanes, reads) for r in range(rows)])

    simulate(m, bench)
    for name, binding in bindings.items():
        rows = 3 if name != "twice" else 2
        want = ckks_fixed.encode_fixed(slots, FMT, LOG_SCALE, [primes[p] for p in binding[:rows]])
        assert got[name] == (0, want), name


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
        assert got[count][1] == 0
        assert got[f"slots{count}"] == _slot_words(want, bits), count
    assert got["rows2"] == (1, 1) and got["bound"] == (1, 1)        # refused at once, with error
    assert got["untouched"] == [123] * N
