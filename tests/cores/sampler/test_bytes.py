"""ByteGatherer: every byte once, in order, at full rate; variable word size; clear."""

import random

import pytest
from amaranth.hdl import Fragment
from amaranth.sim import Simulator

from hhe_gen.cores.sampler import ByteGatherer
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream

from ._helpers import asap_out_cycles, beats


def _simulate(dut, *benches):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    for bench in benches:
        sim.add_testbench(bench)
    sim.run()


def _random_bytes(n, seed):
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(n))


@pytest.mark.parametrize("w,k", [(1, 1), (1, 4), (1, 8), (2, 3), (2, 5), (4, 4), (4, 7), (8, 1), (8, 3), (8, 8),
                                 (8, 13)])
def test_words_are_consecutive_bytes(w, k):
    data = _random_bytes(24 * k * w, w * 100 + k)
    n = len(data) // k
    want = [int.from_bytes(data[t * k:t * k + k], "little") for t in range(n)]
    full = run_stream(ByteGatherer(w, k), beats(data, w), n)
    assert full.outputs == want
    # Timing: word t is ready the cycle after the beat holding its last byte was accepted, and
    # leaves as soon as the previous word has gone.
    last_beat = [((t + 1) * k - 1) // w for t in range(n)]
    assert full.out_cycles == asap_out_cycles([full.in_cycles[b] + 1 for b in last_beat])
    if w >= k:     # one word per cycle
        assert full.out_cycles == list(range(full.out_cycles[0], full.out_cycles[0] + n))
    else:          # one beat per cycle
        assert full.in_cycles == list(range(full.in_cycles[0], full.in_cycles[0] + len(full.in_cycles)))
    gappy = run_stream(ByteGatherer(w, k), beats(data, w), n, gaps=w * k)
    assert gappy.outputs == want


@pytest.mark.parametrize("w,k,structure", [(8, 7, "buffer"), (2, 5, "buffer"), (8, 8, "window"), (1, 4, "window"),
                                           (8, 2, "buffer"), (4, 7, None)])
def test_every_structure(w, k, structure):
    data = _random_bytes(40 * k, w * k)
    n = len(data) // k
    dut = ByteGatherer(w, k, structure=structure)
    assert dut.structure == (structure or "window")
    full = run_stream(dut, beats(data, w), n)
    assert full.outputs == [int.from_bytes(data[t * k:t * k + k], "little") for t in range(n)]
    last_beat = [((t + 1) * k - 1) // w for t in range(n)]
    assert full.out_cycles == asap_out_cycles([full.in_cycles[b] + 1 for b in last_beat])
    gappy = run_stream(ByteGatherer(w, k, structure=structure), beats(data, w), n, gaps=k)
    assert gappy.outputs == full.outputs


def _built(*args, **kwargs):
    dut = ByteGatherer(*args, **kwargs)
    Fragment.get(dut, None)
    return dut


def test_automatic_structure():
    assert [_built(w, k).structure for w, k in [(8, 8), (8, 1), (1, 4), (2, 8), (8, 7), (2, 5)]] == \
        ["beat", "beat", "shift", "shift", "window", "window"]
    assert _built(8, 8, variable=True).structure == "window"
    assert _built(8, 7).capacity == 16 and _built(2, 5).capacity == 6


def _variable_bench(dut, data, takes, seed, clear_at=None):
    """Feed `data` as beats; pop words of the given sizes with random gaps; optional clear."""
    rng = random.Random(seed)
    got = []
    w = dut.in_bytes

    async def producer(ctx):
        for beat in beats(data, w):
            while rng.random() < 0.3:
                await ctx.tick()
            ctx.set(dut.i_stream.payload, beat)
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick().until(dut.i_stream.ready)
            ctx.set(dut.i_stream.valid, 0)

    async def consumer(ctx):
        for take in takes:
            ctx.set(dut.take, take)
            while rng.random() < 0.3:
                await ctx.tick()
            ctx.set(dut.o_stream.ready, 1)
            word, = await ctx.tick().sample(dut.o_stream.payload).until(dut.o_stream.valid)
            ctx.set(dut.o_stream.ready, 0)
            got.append(word)

    _simulate(dut, producer, consumer)
    return got


@pytest.mark.parametrize("w,k", [(1, 3), (8, 2), (4, 8)])
def test_variable_take(w, k):
    rng = random.Random(w + k)
    takes = [rng.randrange(1, k + 1) for _ in range(150)]
    data = _random_bytes(sum(takes), 7)   # exactly what is consumed: the producer finishes
    got = _variable_bench(ByteGatherer(w, k, variable=True), data, takes, seed=3)
    want, pos = [], 0
    for take in takes:
        want.append(int.from_bytes(data[pos:pos + take], "little"))
        pos += take
    assert got == want


def test_clear_drops_buffered_bytes():
    dut = ByteGatherer(8, 3)
    got = []

    async def bench(ctx):
        ctx.set(dut.i_stream.payload, 0x0807060504030201)
        ctx.set(dut.i_stream.valid, 1)
        await ctx.tick().until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)
        ctx.set(dut.o_stream.ready, 1)
        got.append((await ctx.tick().sample(dut.o_stream.payload).until(dut.o_stream.valid))[0])
        ctx.set(dut.o_stream.ready, 0)
        assert ctx.get(dut.count) == 5
        ctx.set(dut.abort, 1)
        assert not ctx.get(dut.o_stream.valid) and not ctx.get(dut.i_stream.ready)
        await ctx.tick()
        ctx.set(dut.abort, 0)
        assert ctx.get(dut.count) == 0 and not ctx.get(dut.o_stream.valid)
        ctx.set(dut.i_stream.payload, 0x1817161514131211)
        ctx.set(dut.i_stream.valid, 1)
        await ctx.tick().until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)
        ctx.set(dut.o_stream.ready, 1)
        got.append((await ctx.tick().sample(dut.o_stream.payload).until(dut.o_stream.valid))[0])

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == [0x030201, 0x131211]


@pytest.mark.parametrize("kwargs", [dict(in_bytes=3), dict(in_bytes=16), dict(in_bytes=True),
                                    dict(word_bytes=0), dict(word_bytes=65), dict(word_bytes=2.0),
                                    dict(structure="fifo")])
def test_bad_parameters(kwargs):
    with pytest.raises(ParameterError) as err:
        ByteGatherer(**kwargs)
    assert err.value.name == next(iter(kwargs))


@pytest.mark.parametrize("w,k,structure", [(8, 8, None), (1, 1, None), (8, 2, None), (1, 4, None), (2, 5, None),
                                           (8, 7, None), (2, 5, "buffer"), (8, 7, "buffer"), (8, 2, "buffer")])
def test_consistent_every_cycle(w, k, structure):
    """``consistent`` (the proofs' invariant) is 1 in every cycle from reset on, with random
    traffic, long consumer stalls and clears; the buffer's ready is ``count <= capacity - W``."""
    dut = ByteGatherer(w, k, structure=structure)
    rng = random.Random(f"{w}{k}{structure}")
    seen = []

    async def bench(ctx):
        for cycle in range(300):
            abort = rng.random() < 0.02
            ctx.set(dut.abort, abort)
            ctx.set(dut.i_stream.valid, rng.random() < 0.8)
            ctx.set(dut.i_stream.payload, rng.getrandbits(8 * w))
            ctx.set(dut.o_stream.ready, rng.random() < (0.1 if (cycle // 40) % 2 else 0.9))
            count = ctx.get(dut.count)
            seen.append(count)
            assert ctx.get(dut.consistent), (cycle, count)
            assert count <= dut.capacity
            if dut.structure == "buffer":
                assert ctx.get(dut.i_stream.ready) == (not abort and count <= dut.capacity - w), (cycle, count)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert seen[0] == 0 and max(seen) > 0


@pytest.mark.parametrize("w,k,pops", [(2, 5, 1), (8, 7, 6)])
def test_buffer_fills_to_capacity(w, k, pops):
    """A stalled consumer after ``pops`` words: the buffer takes a beat whenever W bytes are free,
    up to exactly ``capacity`` bytes (still consistent), then gives every byte back in order."""
    dut = ByteGatherer(w, k, structure="buffer")
    data = _random_bytes(w * 40, w + k)
    n = len(data) // k
    got, counts = [], []

    async def producer(ctx):
        for beat in beats(data, w):
            ctx.set(dut.i_stream.payload, beat)
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick().until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)

    async def consumer(ctx):
        for t in range(n):
            if t == pops:                    # stall until the buffer stops taking beats
                ctx.set(dut.o_stream.ready, 0)
                for _ in range(3 * dut.capacity):
                    count = ctx.get(dut.count)
                    counts.append(count)
                    assert ctx.get(dut.consistent), count
                    assert ctx.get(dut.i_stream.ready) == (count <= dut.capacity - w), count
                    await ctx.tick()
            ctx.set(dut.o_stream.ready, 1)
            word, = await ctx.tick().sample(dut.o_stream.payload).until(dut.o_stream.valid)
            got.append(word)

    _simulate(dut, producer, consumer)
    assert dut.capacity - w in counts          # the case "exactly W bytes free" was reached ...
    assert counts[-1] == dut.capacity          # ... and took the beat: the buffer is full
    assert got == [int.from_bytes(data[t * k:t * k + k], "little") for t in range(n)]
