"""MemoryUnit against the simulated memory: load (truncation to word_bits, checked loads flag a word
>= q and still write), store (every word, zero-extended, one beat per cycle), ldseed (the seed
register), exact cycle counts with an always-ready memory, the Wishbone-shaped slow memory, abort
mid-load (the transaction completes, no done, the next task works)."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.cores.engine.memory_unit import MemoryUnit
from hhe_gen.cores.unused import mark_unused
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.memory import MemoryModel

from ._bench import payload, run_task, simulate


def _rig(n, lanes, bits, buffers=3, slots=2, beat_words=1):
    m = Module()
    unit = MemoryUnit(n, lanes, bits, buffers, slots, tag_width=2, beat_words=beat_words)
    bufs = BufferFile(buffers, n // lanes, lanes, bits)
    m.submodules.unit, m.submodules.bufs = unit, bufs
    wiring.connect(m, unit.wr, bufs.write0)
    wiring.connect(m, unit.rd, bufs.read0)
    return m, unit


@pytest.mark.parametrize("n,lanes,bits", [(16, 1, 30), (16, 2, 54), (32, 4, 12)])
def test_load_store_roundtrip_and_cycles(n, lanes, bits):
    rng = random.Random(n * lanes)
    words = [rng.getrandbits(64) for _ in range(n)]
    words[0], words[1] = 0, (1 << 64) - 1
    mem = MemoryModel(latency=5)
    mem.load(0x100, words)
    m, unit = _rig(n, lanes, bits)
    got = {}

    async def bench(ctx):
        got["load"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.LOAD, dst=2, imm=0x100))
        got["store"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.STORE, a=2, imm=0x400))

    simulate(m, bench, [mem.process(unit.mem)])
    assert mem.dump(0x400, n) == [w & ((1 << bits) - 1) for w in words]
    assert mem.commands == [(0x100, n, 0), (0x400, n, 1)]
    # load: command in cycle 1 (taken at once), first beat after latency 5 -> beat k in cycle 6 + k,
    # done in the cycle after the last one
    assert got["load"] == (1 + 5 + n, 0)
    # store: command in cycle 1, row 0 read in cycle 2, in the FIFO in cycle 4: beat k in cycle
    # 4 + k, done in cycle 4 + n (one beat per cycle: the read-ahead keeps up)
    assert got["store"] == (4 + n, 0)


@pytest.mark.parametrize("n,lanes,w", [(16, 2, 2), (32, 4, 2), (32, 4, 4), (64, 8, 8), (64, 8, 4)])
def test_wide_beats_roundtrip_cycles_check_and_seed(n, lanes, w):
    """W words per beat (a 128 .. 512-bit port): word k still lands in buffer word k; a load and a
    store take N/W beats; a checked load flags a bad word in any position of a beat; the seed
    takes 4/W beats (one at W = 8)."""
    bits, q = 40, (1 << 39) - 7
    rng = random.Random(n * w)
    words = [rng.randrange(q) for _ in range(n)]
    bad = list(words)
    bad[w - 1] = q                                    # the last word of the first beat
    seed = bytes(range(3, 35))
    mem = MemoryModel(latency=5, beat_words=w)
    mem.load(0x100, words)
    mem.load(0x800, bad)
    mem.load(0x10, [int.from_bytes(seed[8 * i:8 * i + 8], "little") for i in range(4)])
    m, unit = _rig(n, lanes, bits, beat_words=w)
    got = {}

    async def bench(ctx):
        ctx.set(unit.slot_q, [97, q])
        got["load"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.LOAD, dst=2, slot=1, flags=1, imm=0x100))
        got["store"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.STORE, a=2, imm=0x400))
        got["bad"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.LOAD, dst=1, slot=1, flags=1, imm=0x800))
        got["seed"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.LDSEED, imm=0x10))
        got["value"] = ctx.get(unit.seed)

    simulate(m, bench, [mem.process(unit.mem)])
    assert mem.dump(0x400, n) == words
    beats = n // w
    assert mem.commands[:3] == [(0x100, beats, 0), (0x400, beats, 1), (0x800, beats, 0)]
    assert mem.commands[3] == (0x10, max(1, 4 // w), 0)
    assert got["load"] == (1 + 5 + beats, 0) and got["store"] == (4 + beats, 0)
    assert got["bad"][1] == 1
    assert got["value"] == int.from_bytes(seed, "little")


def test_beat_words_is_checked():
    for lanes, w in ((2, 4), (8, 16), (4, 3)):
        with pytest.raises(ParameterError, match="beat_words"):
            MemoryUnit(32, lanes, 30, 2, 1, tag_width=2, beat_words=w)
    unit = mark_unused(MemoryUnit(32, 4, 30, 2, 1, tag_width=2, beat_words=4))
    with pytest.raises(ParameterError, match="beat_words"):
        MemoryModel(beat_words=3)
    with pytest.raises(ParameterError, match="beat_words"):
        MemoryModel(beat_words=2).process(unit.mem)


def test_checked_load_flags_a_word_not_below_q_and_still_writes():
    n, q = 16, (1 << 29) - 3
    words = [q - 1] * n
    words[7] = q
    mem = MemoryModel(latency=2)
    mem.load(0, words)
    mem.load(0x40, [q - 1] * n)
    m, unit = _rig(n, 1, 30)
    got = {}

    async def bench(ctx):
        ctx.set(unit.slot_q, [97, q])
        got["bad"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.LOAD, dst=0, slot=1, flags=1, imm=0))
        got["good"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.LOAD, dst=1, slot=1, flags=1, imm=0x40))
        got["unchecked"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.LOAD, dst=1, slot=0, imm=0))
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.STORE, a=0, imm=0x80))

    simulate(m, bench, [mem.process(unit.mem)])
    assert got["bad"][1] == 1 and got["good"][1] == 0 and got["unchecked"][1] == 0
    assert mem.dump(0x80, n) == words


def test_ldseed_and_slow_memory():
    seed = bytes(range(7, 39))
    mem = MemoryModel(latency=3, cycles_per_beat=4)
    mem.load(0x10, [int.from_bytes(seed[8 * i:8 * i + 8], "little") for i in range(4)])
    m, unit = _rig(8, 1, 16)
    got = {}

    async def bench(ctx):
        got["seed"] = await run_task(ctx, unit, isa.Instruction(isa.Opcode.LDSEED, imm=0x10))
        got["value"] = ctx.get(unit.seed)

    simulate(m, bench, [mem.process(unit.mem)])
    assert got["value"] == int.from_bytes(seed, "little")
    # command in cycle 1, beats at 1 + 3 + 4k (k = 0..3), done one cycle after the last
    assert got["seed"] == (1 + 3 + 4 * 3 + 1, 0)


def test_abort_mid_load_finishes_the_transaction_and_raises_no_done():
    n = 16
    mem = MemoryModel(latency=2)
    mem.load(0, list(range(100, 100 + n)))
    mem.load(0x20, list(range(200, 200 + n)))
    m, unit = _rig(n, 2, 16)
    seen = {"done": 0}

    async def bench(ctx):
        port = unit.port
        ctx.set(port.task.payload, payload(isa.Instruction(isa.Opcode.LOAD, dst=0, imm=0)))
        ctx.set(port.task.valid, 1)
        await ctx.tick().until(port.task.ready)
        ctx.set(port.task.valid, 0)
        for _ in range(6):
            await ctx.tick()
        ctx.set(port.abort, 1)
        await ctx.tick()
        ctx.set(port.abort, 0)
        for _ in range(40):
            *_, done = await ctx.tick().sample(port.done)
            seen["done"] += done
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.LOAD, dst=1, imm=0x20))
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.STORE, a=1, imm=0x60))

    simulate(m, bench, [mem.process(unit.mem)])
    assert seen["done"] == 0
    assert mem.dump(0x60, n) == list(range(200, 200 + n))
    assert mem.reads == 2 * n          # the aborted load's beats were all taken too
