"""The Rubato core's multipliers (hhe_gen.cores.rubato.multiplier): the Z_t Butterfly in op "mul"
and "mac" and the Barrett modmul, simulated against Python integers at both Rubato moduli (random
operands and the corners 0, 1, q-1)."""

import random

import pytest

from hhe_gen.cores.rubato.multiplier import ZtButterfly, make_multiplier
from hhe_gen.params.errors import ParameterError

MODULI = (65929217, 33292289)


def _run(unit, cases):
    from amaranth.sim import Simulator

    got = []

    async def bench(ctx):
        ctx.set(unit.en, 1)
        for k in range(len(cases) + unit.latency):
            if k < len(cases):
                a, b, c = cases[k]
                ctx.set(unit.a, a)
                ctx.set(unit.b, b)
                if hasattr(unit, "c"):
                    ctx.set(unit.c, c)
            await ctx.tick()
            if k + 1 >= unit.latency:
                got.append(ctx.get(unit.p))

    sim = Simulator(unit)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return got[:len(cases)]


def _cases(q, seed):
    rng = random.Random(seed)
    corners = [0, 1, q - 1, q - 2]
    cases = [(a, b, c) for a in corners for b in corners for c in (0, q - 1)]
    return cases + [(rng.randrange(q), rng.randrange(q), rng.randrange(q)) for _ in range(200)]


@pytest.mark.parametrize("q", MODULI)
@pytest.mark.parametrize("kind,mac", [("butterfly", True), ("butterfly", False), ("barrett", False)])
def test_products(q, kind, mac):
    unit = make_multiplier(kind, q, mac=mac)
    assert unit.latency == 3
    cases = _cases(q, q + mac)
    want = [((c if mac else 0) + a * b) % q for a, b, c in cases]
    assert _run(unit, cases) == want


def test_latency_and_bad_op():
    assert ZtButterfly(65929217, "mac", latency=5).latency == 5
    with pytest.raises(ParameterError, match="op"):
        ZtButterfly(65929217, "ct")
    with pytest.raises(ParameterError, match="multiplier"):
        make_multiplier("montgomery", 65929217)
