"""Keccak-f[1600] core against the golden model (hhe_gen.models.keccak, itself checked with hashlib)."""

import random

import pytest
from amaranth import Shape
from amaranth.lib.wiring import In
from amaranth.sim import Simulator

from hhe_gen.cores.keccak import ROUNDS_PER_CYCLE, KeccakF1600, KeccakRounds
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models.keccak import keccak_f1600, keccak_rounds
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream

MASK64 = (1 << 64) - 1


def pack(lanes):
    return sum(v << (64 * i) for i, v in enumerate(lanes))


def unpack(value):
    return [(value >> (64 * i)) & MASK64 for i in range(25)]


def random_state(rng):
    return [rng.getrandbits(64) for _ in range(25)]


@pytest.mark.parametrize("k", ROUNDS_PER_CYCLE)
def test_every_intermediate_state_and_latency(k):
    """After j cycles the register holds rounds 0..j*k-1; valid exactly 24/k cycles after input."""
    rng = random.Random(100 + k)
    dut = KeccakF1600(k)
    assert dut.latency == dut.ii == 24 // k
    states = [random_state(rng), [0] * 25]
    seen = []

    async def tb(ctx):
        for s in states:
            trace = []
            ctx.set(dut.o_stream.ready, 0)
            ctx.set(dut.i_stream.payload, pack(s))
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick().until(dut.i_stream.ready)   # accepted on this edge
            ctx.set(dut.i_stream.valid, 0)
            for _ in range(30):
                trace.append((ctx.get(dut.o_stream.payload), ctx.get(dut.o_stream.valid)))
                if trace[-1][1]:
                    break
                await ctx.tick()
            # hold the result a few cycles under back-pressure: it must not change
            for _ in range(3):
                await ctx.tick()
                assert ctx.get(dut.o_stream.valid) and ctx.get(dut.o_stream.payload) == trace[-1][0]
                assert not ctx.get(dut.i_stream.ready)
            ctx.set(dut.o_stream.ready, 1)
            await ctx.tick()
            seen.append(trace)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(tb)
    sim.run()
    for s, trace in zip(states, seen):
        # trace[j]: the register j cycles after the clock edge that took the input
        assert len(trace) == 24 // k                       # valid after exactly 24/k cycles
        assert [v for _, v in trace] == [0] * (24 // k - 1) + [1]
        for j, (value, _) in enumerate(trace):
            assert unpack(value) == keccak_rounds(s, 0, (j + 1) * k), f"after cycle {j}"
        assert unpack(trace[-1][0]) == keccak_f1600(s)


@pytest.mark.parametrize("k", [1, 3, 8, 24])
def test_stream_of_states_full_rate_and_backpressure(k):
    rng = random.Random(k)
    states = [random_state(rng) for _ in range(4)]
    want = [pack(keccak_f1600(s)) for s in states]
    dut = KeccakF1600(k)
    full = run_stream(dut, [pack(s) for s in states])
    assert full.outputs == want
    n = 24 // k
    assert full.latency == n
    assert [o - i for i, o in zip(full.in_cycles, full.out_cycles)] == [n] * 4
    assert [b - a for a, b in zip(full.in_cycles, full.in_cycles[1:])] == [n] * 3   # II = 24/k
    gappy = run_stream(KeccakF1600(k), [pack(s) for s in states], gaps=k)
    assert gappy.outputs == want


def test_rounds_block_steps():
    """The combinational block applies rounds step*k .. step*k+k-1 for every step."""
    k = 6
    dut = KeccakRounds(k)
    rng = random.Random(7)
    s = random_state(rng)

    async def tb(ctx):
        ctx.set(dut.i_state, pack(s))
        for step in range(24 // k):
            ctx.set(dut.step, step)
            assert unpack(ctx.get(dut.o_state)) == keccak_rounds(s, step * k, k)

    sim = Simulator(dut)
    sim.add_testbench(tb)
    sim.run()


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
@pytest.mark.parametrize("bad", [0, 5, 7, 25, 48, -1, True, 2.0001, "1"])
def test_bad_rounds_per_cycle(bad):
    with pytest.raises(ParameterError) as err:
        KeccakF1600(bad)
    assert err.value.name == "rounds_per_cycle"


@pytest.mark.parametrize("k", ROUNDS_PER_CYCLE)
def test_rounds_block_members(k):
    """The documented ports of KeccakRounds(k): i_state, o_state (1600 bits) and ``step`` of
    range(24 // k) - absent when k = 24 (one group of rounds: no zero-width port)."""
    dut = mark_unused(KeccakRounds(k))
    members = dut.signature.members
    want = {"i_state", "o_state"} | ({"step"} if k < 24 else set())
    assert set(members) == want
    assert Shape.cast(members["i_state"].shape) == Shape.cast(members["o_state"].shape) == Shape(1600)
    if k < 24:
        assert Shape.cast(members["step"].shape) == Shape.cast(range(24 // k))
        assert members["step"].flow == In
