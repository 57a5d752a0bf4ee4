"""SamplerUnit: every kind equals hhe_gen.models.sampler on the same (seed, domain, nonce) - values
in two's complement in the buffer, the uniform sampler's prime chosen by slot - and a task after an
abort mid-sampling starts clean; a task offered in the cycle after the previous one ended takes as
many cycles as on a unit fresh from reset (the XOF restarts in that cycle, from a register).  The
same on the engine's one XOF (``xof="external"``), with the cycles of the unit's own."""

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.cores.engine.sampler_unit import BEAT_BYTES, SamplerUnit
from hhe_gen.cores.keccak.shared import SharedXof
from hhe_gen.models import sampler
from hhe_gen.params import ParameterError, ntt_primes

from ._bench import dump, payload, run_task, simulate

N = 32
SEED = bytes(range(100, 132))


def _rig(lanes, primes, **kw):
    bits = max(q.bit_length() for q in primes)
    m = Module()
    unit = SamplerUnit(N, lanes, bits, 3, 2, 2, primes, **kw)
    bufs = BufferFile(3, N // lanes, lanes, bits, read_ports=1, write_ports=1)
    m.submodules.unit, m.submodules.bufs = unit, bufs
    wiring.connect(m, unit.wr, bufs.write0)
    if kw.get("xof") == "external":         # the engine's one XOF, here with the unit its only client
        m.submodules.xof = shared = SharedXof(1, beat_bytes=BEAT_BYTES)
        wiring.connect(m, unit.xof, shared.client0)
    return m, unit, bufs, bits



def _words(values, bits):
    return [v % (1 << bits) for v in values]


XOFS = ("own", "external")


@pytest.mark.parametrize("lanes,xof", [(1, "own"), (4, "own"), (4, "external")])
def test_every_kind_equals_the_model(lanes, xof):
    primes = tuple(ntt_primes(N, 54, 2))
    m, unit, bufs, bits = _rig(lanes, primes, hamming_weight=5, xof=xof)
    got = {}
    tasks = {
        "uniform": (isa.SampleKind.UNIFORM, 5, 1, 1),
        "ternary": (isa.SampleKind.TERNARY, 2, 0, 0),
        "hamming": (isa.SampleKind.HAMMING, 1, 7, 0),
        "gaussian": (isa.SampleKind.GAUSSIAN, 3, 0x123456, 0),
    }

    async def bench(ctx):
        ctx.set(unit.seed, int.from_bytes(SEED, "little"))
        ctx.set(unit.slot_prime, [0, 1])
        for name, (kind, domain, nonce, slot) in tasks.items():
            ins = isa.Instruction(isa.Opcode.SAMPLE, dst=2, slot=slot, flags=kind, imm=domain << 24 | nonce)
            await run_task(ctx, unit, ins)
            got[name] = await dump(ctx, bufs, 2, N, lanes, 0)

    simulate(m, bench)

    def xof(name):
        _, domain, nonce, _ = tasks[name]
        return sampler.seeded_xof(SEED, domain, nonce)

    assert got["uniform"] == sampler.uniform_mod_q(xof("uniform"), primes[1], N)
    assert got["ternary"] == _words(sampler.ternary_uniform(xof("ternary"), N), bits)
    assert got["hamming"] == _words(sampler.ternary_hamming(xof("hamming"), N, 5), bits)
    assert got["gaussian"] == _words(sampler.gaussian_cdt(xof("gaussian"), N), bits)


@pytest.mark.parametrize("xof", XOFS)
def test_abort_mid_sampling_then_a_clean_task(xof):
    primes = tuple(ntt_primes(N, 30, 1))
    m, unit, bufs, bits = _rig(2, primes, xof=xof)
    got = {}

    async def bench(ctx):
        ctx.set(unit.seed, int.from_bytes(SEED, "little"))
        port = unit.port
        ctx.set(port.task.payload, payload(isa.Instruction(isa.Opcode.SAMPLE, dst=1, flags=isa.SampleKind.GAUSSIAN,
                                                           imm=3 << 24)))
        ctx.set(port.task.valid, 1)
        await ctx.tick().until(port.task.ready)
        ctx.set(port.task.valid, 0)
        for _ in range(40):
            await ctx.tick()
        ctx.set(port.abort, 1)
        await ctx.tick()
        ctx.set(port.abort, 0)
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.SAMPLE, dst=1, flags=isa.SampleKind.TERNARY,
                                                  imm=2 << 24))
        got["t"] = await dump(ctx, bufs, 1, N, 2, 0)

    simulate(m, bench)
    assert got["t"] == _words(sampler.ternary_uniform(sampler.seeded_xof(SEED, 2, 0), N), bits)


def test_a_task_right_after_another_takes_the_cycles_of_a_first_task():
    primes = tuple(ntt_primes(N, 30, 1))
    gaussian = isa.Instruction(isa.Opcode.SAMPLE, dst=1, flags=isa.SampleKind.GAUSSIAN, imm=3 << 24 | 9)
    ternary = isa.Instruction(isa.Opcode.SAMPLE, dst=2, flags=isa.SampleKind.TERNARY, imm=2 << 24)
    cycles = {}

    def run(order, key, xof="own"):
        m, unit, bufs, bits = _rig(2, primes, xof=xof)

        async def bench(ctx):
            ctx.set(unit.seed, int.from_bytes(SEED, "little"))
            for ins in order:                      # each offered in the cycle after the previous done
                cycles.setdefault(key, []).append((await run_task(ctx, unit, ins))[0])
            cycles[key + "_words"] = await dump(ctx, bufs, 1, N, 2, 0)

        simulate(m, bench)

    run([gaussian], "alone")
    run([ternary, gaussian, gaussian], "after")
    run([ternary, gaussian, gaussian], "shared", xof="external")   # the one XOF, released and restarted
    assert cycles["after"][1] == cycles["after"][2] == cycles["alone"][0]
    assert cycles["shared"] == cycles["after"]
    assert cycles["after_words"] == cycles["alone_words"] == cycles["shared_words"] == \
        _words(sampler.gaussian_cdt(sampler.seeded_xof(SEED, 3, 9), N), 30)


def test_bad_parameters():
    with pytest.raises(ParameterError, match="'primes'"):
        SamplerUnit(N, 1, 54, 3, 2, 2, (ntt_primes(N, 54, 1)[0], ntt_primes(N, 30, 1)[0]))
    with pytest.raises(ParameterError, match="'hamming_weight'"):
        SamplerUnit(N, 1, 30, 3, 2, 2, tuple(ntt_primes(N, 30, 1)), hamming_weight=N + 1)
    with pytest.raises(ParameterError, match="'xof'"):
        SamplerUnit(N, 1, 30, 3, 2, 2, tuple(ntt_primes(N, 30, 1)), xof="shared")
