"""The small Z_q helpers of the datapath: shift-and-add sums and their reduction, simulated
against Python integers at the real moduli (random and corner sums) and exhaustively at 5 bits."""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hhe_gen.cores.rubato.lanes import mod_add, quotient_estimate, reduce_corrected, reduce_corrections, sum_bound, \
    weighted_sum

CIRCULANTS = {4: (2, 3, 1, 1), 6: (4, 2, 4, 3, 1, 1), 8: (5, 3, 4, 3, 6, 2, 1, 1)}


def reduce_small(m, s, bound, q):
    """The datapath's reduction (two pipeline stages there) in one expression."""
    return reduce_corrected(m, quotient_estimate(s, bound, q), bound, q)


def _eval(build, width_in, n_in, cases, out_width):
    m = Module()
    ins = [Signal(width_in) for _ in range(n_in)]
    out = Signal(out_width)
    m.d.comb += out.eq(build(m, ins))
    results = []

    async def bench(ctx):
        for case in cases:
            for s, v in zip(ins, case):
                ctx.set(s, v)
            results.append(ctx.get(out))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    return results


@pytest.mark.parametrize("q,v", [(65929217, 4), (33292289, 6), (33292289, 8), (31, 4), (31, 8), (17, 8)])
def test_linear_sum_mod_q(q, v):
    c = CIRCULANTS[v]
    w = q.bit_length()
    rng = random.Random(q * v)
    cases = [[q - 1] * v, [0] * v, [1] + [0] * (v - 1)]
    cases += [[rng.randrange(q) for _ in range(v)] for _ in range(300)]
    cases += [[rng.choice((0, 1, q - 2, q - 1)) for _ in range(v)] for _ in range(100)]
    bound = sum_bound(c, q)
    got = _eval(lambda m, ins: reduce_small(m, weighted_sum(ins, c), bound, q), w, v, cases, w)
    assert got == [sum(ci * x for ci, x in zip(c, case)) % q for case in cases]


@pytest.mark.parametrize("q", [31, 17, 65929217])
def test_reduce_small_every_sum_near_multiples(q):
    bound = 25 * (q - 1)
    values = sorted({s for k in range(26) for s in range(k * q - 3, k * q + 4) if 0 <= s <= bound})
    if q < 100:
        values = list(range(bound + 1))
    got = _eval(lambda m, ins: reduce_small(m, ins[0], bound, q), bound.bit_length(), 1, [[s] for s in values],
                q.bit_length())
    assert got == [s % q for s in values]
    assert reduce_corrections(bound, q) >= 1


@pytest.mark.parametrize("q", [31, 33292289, 65929217])
def test_mod_add(q):
    rng = random.Random(q)
    cases = [[0, 0], [q - 1, q - 1], [q - 1, 1], [1, q - 2]] + [[rng.randrange(q), rng.randrange(q)] for _ in range(200)]
    got = _eval(lambda m, ins: mod_add(ins[0], ins[1], q), q.bit_length(), 2, cases, q.bit_length())
    assert got == [(a + b) % q for a, b in cases]


def test_rubato_constants_take_few_signed_digits():
    """The quotient estimate's constants 2^b - q in non-adjacent form (hhe_gen.models.modarith,
    tested there for every c): three terms for Par-128S's q, two for Par-128M/L's."""
    from hhe_gen.models.modarith import signed_digits
    assert signed_digits((1 << 26) - 65929217) == ((-1, 0), (1, 17), (1, 20))
    assert signed_digits((1 << 25) - 33292289) == ((-1, 0), (1, 18))
