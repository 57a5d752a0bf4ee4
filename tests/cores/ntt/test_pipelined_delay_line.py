"""DelayLine: o = i of exactly `delay` enabled cycles ago, registers and memory forms, with random
enable gaps (compared with a Python queue); the memory form's clear flag hides unwritten words."""

import random

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.ntt import DelayLine
from hhe_gen.params.errors import ParameterError


@pytest.mark.parametrize("delay,threshold,clear", [(0, 16, False), (1, 16, False), (5, 16, False),
                                                   (3, 3, True), (4, 3, False), (20, 16, True)])
def test_delay(delay, threshold, clear):
    dut = DelayLine(12, delay, memory_threshold=threshold, clear=clear)
    assert dut.in_memory == (delay >= threshold)
    rng = random.Random(delay)
    history = []            # values written in enabled cycles

    async def bench(ctx):
        for cycle in range(6 * delay + 40):
            en = rng.random() < 0.7
            v = rng.randrange(1, 4096)
            ctx.set(dut.i, v)
            ctx.set(dut.en, int(en))
            o = ctx.get(dut.o)
            if delay == 0:
                assert o == v
            elif len(history) >= delay:
                assert o == history[-delay]
            elif dut.in_memory and clear:
                assert o == 0
            if en:
                history.append(v)
            if delay:
                await ctx.tick()
            else:
                await ctx.delay(1e-6)

    sim = Simulator(dut)
    if delay:
        sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()


def test_bad():
    with pytest.raises(ParameterError) as err:
        DelayLine(8, -1)
    assert err.value.name == "delay"
    with pytest.raises(ParameterError) as err:
        DelayLine(8, 4, memory_threshold=2)
    assert err.value.name == "memory_threshold"


@pytest.mark.parametrize("delay,threshold", [(3, 3), (20, 16)])
def test_clear_after_reset(delay, threshold):
    """The memory form with ``clear=True`` after a reset in mid-stream: the buffer still holds the
    words written before the reset (memories are not reset), yet ``o`` is 0 until ``delay``
    enabled cycles after the reset and then the words written after it (random enable gaps on
    both sides of the reset)."""
    from amaranth.hdl import ClockDomain, Module

    dut = DelayLine(12, delay, memory_threshold=threshold, clear=True)
    assert dut.in_memory
    top = Module()
    top.domains.sync = cd = ClockDomain("sync")
    top.submodules.dut = dut
    rng = random.Random(delay + 1000)
    seen = []               # outputs before the reset: the stale words must really be non-zero

    async def bench(ctx):
        for cycle in range(3 * delay + 10):         # fill the buffer with non-zero words
            ctx.set(dut.i, rng.randrange(1, 4096))
            ctx.set(dut.en, int(cycle % 4 != 3))
            seen.append(ctx.get(dut.o))
            await ctx.tick()
        ctx.set(dut.en, 0)
        ctx.set(cd.rst, 1)
        await ctx.tick()
        ctx.set(cd.rst, 0)
        history = []        # values written in enabled cycles since the reset
        for _ in range(4 * delay + 20):
            en = rng.random() < 0.7
            v = rng.randrange(1, 4096)
            ctx.set(dut.i, v)
            ctx.set(dut.en, int(en))
            o = ctx.get(dut.o)
            if len(history) >= delay:
                assert o == history[-delay]
            else:
                assert o == 0, f"stale word {o} after {len(history)} enabled cycles since the reset"
            if en:
                history.append(v)
            await ctx.tick()

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert all(seen[-delay:])
