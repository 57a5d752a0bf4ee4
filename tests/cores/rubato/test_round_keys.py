"""RoundKeySchedule on its own: XOF words from hashlib's SHAKE256 (with random gaps) in, every
round key read back from the banks equals key[i] * rc (rc = the accepted words masked, computed
here in Python), rk_count and xof_words as documented, also after a clear mid-block."""

import hashlib
import random
import struct

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.rubato import RoundKeySchedule
from hhe_gen.params import rubato_params


def _words(nonce, counter, count):
    stream = hashlib.shake_256(nonce.to_bytes(8, "little") + counter.to_bytes(8, "little")).digest(4 * count)
    return list(struct.unpack(f"<{count}I", stream))


@pytest.mark.parametrize("name,lanes,multiplier", [("Par-80S", 2, "barrett"), ("Par-128M", 6, "butterfly"),
                                                   ("Par-80L", 1, "barrett")])
def test_round_keys(name, lanes, multiplier):
    p = rubato_params(name)
    rng = random.Random(name)
    key = [rng.randrange(p.q) for _ in range(p.n)]
    nonce, counter = rng.getrandbits(64), rng.getrandbits(64)
    words = _words(nonce, counter, 2 * p.round_constant_count + 64)
    mask = (1 << p.q_bits) - 1
    accepted = [i for i, x in enumerate(words) if x & mask < p.q][:p.round_constant_count]
    rc = [words[i] & mask for i in accepted]
    want = [key[k % p.n] * rc[k] % p.q for k in range(p.round_constant_count)]
    dut = RoundKeySchedule(p, lanes, multiplier=multiplier)
    got = {}

    async def bench(ctx):
        for i, k in enumerate(key):
            ctx.set(dut.key_we, 1)
            ctx.set(dut.key_addr, i)
            ctx.set(dut.key_data, k)
            await ctx.tick()
        ctx.set(dut.key_we, 0)
        for attempt in range(2):            # the second time after a clear in mid-block
            ctx.set(dut.abort, 1)
            await ctx.tick()
            ctx.set(dut.abort, 0)
            feed = iter(words)
            word = next(feed)
            cycles = 0
            while ctx.get(dut.rk_count) < p.round_constant_count:
                if attempt == 0 and cycles == 40:
                    break
                valid = rng.random() < 0.7
                ctx.set(dut.i_stream.valid, valid)
                ctx.set(dut.i_stream.payload, word)
                ready = ctx.get(dut.i_stream.ready)
                await ctx.tick()
                cycles += 1
                if valid and ready:
                    word = next(feed)
            ctx.set(dut.i_stream.valid, 0)
        assert ctx.get(dut.xof_words) == accepted[-1] + 1
        for _ in range(dut.mul_latency + 3):
            await ctx.tick()
        assert ctx.get(dut.rk_count) == p.round_constant_count
        for addr in range(dut.depth):
            ctx.set(dut.rk_addr, addr)
            await ctx.tick()
            for a in range(lanes):
                got[addr * lanes + a] = ctx.get(dut.rk[a])

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert [got[k] for k in range(p.round_constant_count)] == want
