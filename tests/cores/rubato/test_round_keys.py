"""RoundKeySchedule on its own: XOF words from hashlib's SHAKE256 (with random gaps) in, every
round key read back from the banks equals key[i] * rc (rc = the accepted words masked, computed
here in Python), rk_count and xof_words as documented, also after a clear mid-block."""

import hashlib
import json
import random
import struct
from pathlib import Path

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.rubato import RoundKeySchedule
from hhe_gen.models import rubato as model
from hhe_gen.params import rubato_params
from hhe_gen.sim.rubato import write_key

from ._helpers import KAT_DIR


def _words(nonce, counter, count):
    stream = hashlib.shake_256(nonce.to_bytes(8, "little") + counter.to_bytes(8, "little")).digest(4 * count)
    return list(struct.unpack(f"<{count}I", stream))


async def _read_round_keys(ctx, dut, lanes, got):
    for addr in range(dut.depth):
        ctx.set(dut.rk_addr, addr)
        await ctx.tick()
        for a in range(lanes):
            got[addr * lanes + a] = ctx.get(dut.rk[a])


def _simulate(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("name,lanes,multiplier", [("Par-80S", 2, "barrett"), ("Par-128M", 6, "butterfly"),
                                                   ("Par-80L", 1, "barrett"), ("Par-128S", 2, "none"),
                                                   ("Par-128M", 3, "none")])
def test_round_keys(name, lanes, multiplier):
    """The banks hold key[i]*rc, or with ``multiplier="none"`` rc itself and the key banks the key
    (word i in bank i mod L at i div L)."""
    p = rubato_params(name)
    rng = random.Random(name)
    key = [rng.randrange(p.q) for _ in range(p.n)]
    nonce, counter = rng.getrandbits(64), rng.getrandbits(64)
    words = _words(nonce, counter, 2 * p.round_constant_count + 64)
    mask = (1 << p.q_bits) - 1
    accepted = [i for i, x in enumerate(words) if x & mask < p.q][:p.round_constant_count]
    rc = [words[i] & mask for i in accepted]
    want = [key[k % p.n] * rc[k] % p.q for k in range(p.round_constant_count)]
    if multiplier == "none":
        want = rc
    dut = RoundKeySchedule(p, lanes, multiplier=multiplier)
    assert dut.mul_latency == 0 or multiplier != "none"
    got = {}

    async def bench(ctx):
        await write_key(ctx, dut, key)
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
        await _read_round_keys(ctx, dut, lanes, got)
        if multiplier == "none":
            for row in range(p.n // lanes):
                ctx.set(dut.key_rd, row)
                await ctx.tick()
                for a in range(lanes):
                    keys[row * lanes + a] = ctx.get(dut.key[a])

    keys = {}
    _simulate(dut, bench)
    assert [got[k] for k in range(p.round_constant_count)] == want
    if multiplier == "none":
        assert [keys[i] for i in range(p.n)] == key
    else:
        assert "key" not in dut.signature.members


def _kat_vector(name, index):
    """One SHAKE256 vector of a shipped KAT file (computed with the Rubato reference code)."""
    return json.loads((Path(KAT_DIR) / name).read_text())["vectors"][index]


def _model_vector(name, nonce, counter):
    """The same fields from the golden model hhe_gen.models.rubato (with a random key)."""
    p = rubato_params(name)
    rng = random.Random(nonce)
    key = [rng.randrange(p.q) for _ in range(p.n)]
    tr = model.RubatoTrace()
    model.keystream(p, key, nonce, counter, trace=tr)
    return {"key": key, "nonce": nonce, "counter": counter, "round_keys": tr.round_keys,
            "rc_xof_words_read": tr.rc_xof_words_read}


@pytest.mark.parametrize("name,lanes,source", [("Par-80S", 4, ("model", 20, 0)),
                                               ("Par-128L", 8, ("kat", "rubato_128l.json", 7))],
                         ids=["80s-model-nonce20", "128l-kat-vector7"])
def test_xof_words_stop_at_the_last_constant(name, lanes, source):
    """Blocks in which the candidate right after the last round constant is rejected, so the
    filter goes on taking candidates nobody will use: ``xof_words`` must stay at the reference's
    ``rc_xof_words_read`` (from the golden model, resp. the shipped KAT file) while the XOF keeps
    streaming, and the round keys are the reference's."""
    p = rubato_params(name)
    v = _model_vector(name, *source[1:]) if source[0] == "model" else _kat_vector(*source[1:])
    words = _words(v["nonce"], v["counter"], 2 * p.round_constant_count + 64)
    mask = (1 << p.q_bits) - 1
    read = v["rc_xof_words_read"]
    assert words[read] & mask >= p.q          # the case this test is about
    rng = random.Random(name)
    dut = RoundKeySchedule(p, lanes)
    seen, got = [], {}

    async def bench(ctx):
        await write_key(ctx, dut, v["key"])
        ctx.set(dut.abort, 1)
        await ctx.tick()
        ctx.set(dut.abort, 0)
        feed = iter(words)
        word = next(feed)
        after = 0                            # cycles since all round keys were written
        while after < 12:
            valid = rng.random() < 0.8
            ctx.set(dut.i_stream.valid, valid)
            ctx.set(dut.i_stream.payload, word)
            ready = ctx.get(dut.i_stream.ready)
            await ctx.tick()
            if valid and ready:
                word = next(feed)
            if ctx.get(dut.rk_count) == p.round_constant_count:
                after += 1
                seen.append(ctx.get(dut.xof_words))
        ctx.set(dut.i_stream.valid, 0)
        await _read_round_keys(ctx, dut, lanes, got)

    _simulate(dut, bench)
    assert seen == [read] * len(seen)
    assert [got[k] for k in range(p.round_constant_count)] == [x for row in v["round_keys"] for x in row]
