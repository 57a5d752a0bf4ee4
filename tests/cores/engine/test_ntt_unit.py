"""NttUnit, streaming and in place in banked buffers: ntt / intt between buffers equal
hhe_gen.models.ntt (random and boundary residues, lifted small signed inputs, dst = a, prime chosen
by slot), exact cycles (the core's command cycles, + 1 streaming), abort mid-transform leaves the
unit idle and the next task right."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.cores.engine.ntt_unit import NttUnit
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params import ParameterError, ntt_primes

from ._bench import dump, fill, payload, run_task, simulate


def _rig(n, lanes, primes, in_place=False, **kw):
    bits = max(q.bit_length() for q in primes)
    m = Module()
    unit = NttUnit(n, lanes, bits, 4, 2, 2, primes, in_place=in_place, **kw)
    bufs = BufferFile(4, n // lanes, lanes, bits, read_ports=2, write_ports=2, banked=in_place)
    m.submodules.unit, m.submodules.bufs = unit, bufs
    if in_place:
        wiring.connect(m, unit.bank, bufs.bank)
    else:
        wiring.connect(m, unit.rd, bufs.read0)
        wiring.connect(m, unit.wr, bufs.write0)
    return m, unit, bufs, bits



@pytest.mark.parametrize("in_place", [False, True])
@pytest.mark.parametrize("n,lanes,bits,twiddles", [(16, 1, 30, "rom"), (32, 2, 54, "otf"), (64, 4, 40, "rom")])
def test_ntt_intt_bit_exact(n, lanes, bits, twiddles, in_place):
    primes = tuple(ntt_primes(n, bits, 2))
    m, unit, bufs, wb = _rig(n, lanes, primes, in_place, twiddles=twiddles)
    rng = random.Random(n + lanes)
    q0, q1 = primes
    x = [rng.choice([0, 1, q1 - 1]) if rng.random() < 0.3 else rng.randrange(q1) for _ in range(n)]
    small = [rng.randint(-20, 20) for _ in range(n)]
    got, cycles = {}, {}

    async def bench(ctx):
        ctx.set(unit.slot_prime, [1, 0])             # slot 0 -> q1, slot 1 -> q0
        await fill(ctx, bufs, 0, x, lanes)
        await fill(ctx, bufs, 1, [v % (1 << wb) for v in small], lanes)
        cycles["ntt"], _ = await run_task(ctx, unit, isa.Instruction(isa.Opcode.NTT, dst=2, a=0, slot=0))
        got["ntt"] = await dump(ctx, bufs, 2, n, lanes, 1)
        cycles["intt"], _ = await run_task(ctx, unit, isa.Instruction(isa.Opcode.INTT, dst=2, a=2, slot=0))
        got["back"] = await dump(ctx, bufs, 2, n, lanes, 1)
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.NTT, dst=3, a=1, slot=1, flags=1))
        got["lifted"] = await dump(ctx, bufs, 3, n, lanes, 1)

    simulate(m, bench)
    assert got["ntt"] == ntt(x, q1)
    assert got["back"] == x
    assert got["lifted"] == ntt([v % q0 for v in small], q0)
    assert intt(got["ntt"], q1) == x
    extra = 0 if in_place else 1                    # streaming: the FIFO's cycle
    assert cycles == {"ntt": unit.ntt.command_cycles(False) + extra, "intt": unit.ntt.command_cycles(True) + extra}
    if in_place:                                    # no load, no unload, no banks of its own
        assert unit.task_cycles(False) == unit.ntt.transform_cycles(False) + 2


@pytest.mark.parametrize("in_place", [False, True])
def test_abort_mid_transform(in_place):
    n, lanes = 32, 2
    primes = tuple(ntt_primes(n, 30, 1))
    q = primes[0]
    m, unit, bufs, wb = _rig(n, lanes, primes, in_place)
    x = list(range(1, n + 1))
    got = {}

    async def bench(ctx):
        ctx.set(unit.slot_prime, [0, 0])
        await fill(ctx, bufs, 0, x, lanes)
        port = unit.port
        ctx.set(port.task.payload, payload(isa.Instruction(isa.Opcode.NTT, dst=1, a=0)))
        ctx.set(port.task.valid, 1)
        await ctx.tick().until(port.task.ready)
        ctx.set(port.task.valid, 0)
        for _ in range(n // lanes + 5):                 # in the middle of the transform
            await ctx.tick()
        ctx.set(port.abort, 1)
        await ctx.tick()
        ctx.set(port.abort, 0)
        got["ready"] = ctx.get(port.task.ready)
        dones = 0
        for _ in range(unit.task_cycles()):
            *_, done = await ctx.tick().sample(port.done)
            dones += done
        got["dones"] = dones
        got["cycles"], _ = await run_task(ctx, unit, isa.Instruction(isa.Opcode.NTT, dst=1, a=0))
        got["out"] = await dump(ctx, bufs, 1, n, lanes, 1)

    simulate(m, bench)
    assert got["ready"] == 1 and got["dones"] == 0
    assert got["out"] == ntt(x, q)
    assert got["cycles"] == unit.task_cycles()


@pytest.mark.parametrize("kwargs,name", [({"word_bits": 20}, "word_bits"), ({"primes": ()}, "primes"),
                                         ({"lanes": 32}, "lanes"), ({"n": 12}, "n")])
def test_bad_parameters(kwargs, name):
    args = dict(n=32, lanes=1, word_bits=30, buffers=4, slots=2, tag_width=2,
                primes=tuple(ntt_primes(32, 30, 1))) | kwargs
    with pytest.raises(ParameterError, match=f"'{name}'"):
        NttUnit(**args)
