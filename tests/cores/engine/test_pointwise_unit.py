"""PointwiseUnit: every opcode on random and boundary residues (0, 1, q-1, sums landing on q),
lifted small signed sources, the integer add (two's complement words, wrapping at 2^word_bits),
in place (dst = a), two primes by slot, exact cycles; bad parameters."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.cores.engine.pointwise_unit import PointwiseUnit
from hhe_gen.params import ParameterError, ntt_primes

from ._bench import dump, fill, run_task, simulate

N = 16


def _rig(lanes, primes, kind="barrett", buffers=5):
    bits = max(q.bit_length() for q in primes)
    m = Module()
    unit = PointwiseUnit(N, lanes, bits, buffers, 2, 2, primes, kind=kind)
    bufs = BufferFile(buffers, N // lanes, lanes, bits, read_ports=4, write_ports=2)
    m.submodules.unit, m.submodules.bufs = unit, bufs
    for k, rd in enumerate((unit.rd0, unit.rd1, unit.rd2)):
        wiring.connect(m, rd, bufs.read(k))
    wiring.connect(m, unit.wr, bufs.write0)
    return m, unit, bufs, bits


def _signed(x, bits):
    return x - (1 << bits) if x >> (bits - 1) else x


def _expected(op, a, b, c, q, flags, bits):
    def lift(x, k):
        return _signed(x, bits) % q if flags >> k & 1 else x
    if op == isa.Opcode.ADD and flags == isa.INTEGER_ADD:
        return (a + b) % (1 << bits)
    a, b, c = lift(a, 0), lift(b, 1), lift(c, 2)
    return {isa.Opcode.ADD: (a + b) % q, isa.Opcode.SUB: (a - b) % q, isa.Opcode.MUL: a * b % q,
            isa.Opcode.MAC: (a * b + c) % q, isa.Opcode.MSUB: (c - a * b) % q, isa.Opcode.MOVE: a}[op]


def _operands(rng, q, bits, small):
    if small:
        return [rng.randint(-20, 20) % (1 << bits) for _ in range(N)]
    corner = [0, 1, q - 1, q - 2, (q + 1) // 2, q // 2]
    return [rng.choice(corner) if rng.random() < 0.4 else rng.randrange(q) for _ in range(N)]


@pytest.mark.parametrize("lanes,kind,bits", [(1, "barrett", 30), (2, "barrett", 54), (4, "special-barrett", 54)])
def test_every_opcode_bit_exact(lanes, kind, bits):
    if kind == "special-barrett":
        from hhe_gen.params import dna_hhe_primes
        primes = tuple(p.q for p in dna_hhe_primes(bits, N)[:2])
    else:
        primes = tuple(ntt_primes(N, bits, 2))
    m, unit, bufs, wb = _rig(lanes, primes, kind)
    rng = random.Random(lanes)
    cases = []
    for op in (isa.Opcode.ADD, isa.Opcode.SUB, isa.Opcode.MUL, isa.Opcode.MAC, isa.Opcode.MSUB, isa.Opcode.MOVE):
        flag_sets = {isa.Opcode.MOVE: (0, 1), isa.Opcode.ADD: (0, 0b101, isa.INTEGER_ADD)}.get(op, (0, 0b101))
        for flags in flag_sets:
            slot = rng.randrange(2)
            cases.append((op, flags, slot))
    got, want, cycles = [], [], set()

    async def bench(ctx):
        ctx.set(unit.slot_prime, [1, 0])                      # slot 0 -> prime 1, slot 1 -> prime 0
        for op, flags, slot in cases:
            q = primes[1 - slot]
            srcs = [_operands(rng, q, wb, flags >> k & 1) for k in range(3)]
            if flags == isa.INTEGER_ADD and op == isa.Opcode.ADD:   # signed small + any word, and the extremes
                srcs[0] = _operands(rng, q, wb, True)
                srcs[1] = [rng.randrange(1 << wb) for _ in range(N)]
                srcs[0][:3] = [(1 << (wb - 1)) - 1, 1 << (wb - 1), (1 << wb) - 1]
                srcs[1][:3] = [1, (1 << wb) - 1, 1]
            for b in range(3):
                await fill(ctx, bufs, b, srcs[b], lanes)
            ins = isa.Instruction(op, dst=3, a=0, b=1, c=2, slot=slot, flags=flags)
            cycles.add((await run_task(ctx, unit, ins))[0])
            got.append(await dump(ctx, bufs, 3, N, lanes, 3))
            want.append([_expected(op, *v, q, flags, wb) for v in zip(*srcs)])

    simulate(m, bench)
    assert got == want
    assert cycles == {unit.task_cycles} == {N // lanes + unit.bf_latency + 3}


def test_in_place_and_sums_landing_on_q():
    primes = tuple(ntt_primes(N, 30, 1))
    q = primes[0]
    m, unit, bufs, wb = _rig(2, primes)
    a = [q - 1, 1, q // 2, q - 2] * (N // 4)
    b = [1, q - 1, q - q // 2, 2] * (N // 4)          # every a + b = q exactly
    out = {}

    async def bench(ctx):
        ctx.set(unit.slot_prime, [0, 0])
        await fill(ctx, bufs, 0, a, 2)
        await fill(ctx, bufs, 1, b, 2)
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.ADD, dst=0, a=0, b=1))
        out["add"] = await dump(ctx, bufs, 0, N, 2, 3)
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.SUB, dst=1, a=0, b=1))
        out["sub"] = await dump(ctx, bufs, 1, N, 2, 3)

    simulate(m, bench)
    assert out["add"] == [0] * N
    assert out["sub"] == [(q - x) % q for x in b]


@pytest.mark.parametrize("kwargs,name", [({"kind": "ntt-montgomery"}, "kind"), ({"word_bits": 20}, "word_bits"),
                                         ({"primes": ()}, "primes"), ({"lanes": 3}, "lanes")])
def test_bad_parameters(kwargs, name):
    args = dict(n=N, lanes=1, word_bits=30, buffers=4, slots=2, tag_width=2,
                primes=tuple(ntt_primes(N, 30, 1))) | kwargs
    with pytest.raises(ParameterError, match=f"'{name}'"):
        PointwiseUnit(**args)
