"""BasisUnit (``conv``): every centring kind on both sides of its threshold and on random residues,
between primes of different widths (DNA-HHE's 54-bit q and 61-bit P, where Lattigo's
double-precision estimate moves ModDown's threshold 129 below (P + 1)/2), into a larger and a
smaller prime, equal to the ISA model's semantics; exact cycles; bad parameters."""

import random

import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.basis_unit import BasisUnit
from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.models.rns_basis import CENTRE_KINDS, centre, centre_threshold
from hhe_gen.params import ParameterError, is_prime, preset

from ._bench import dump, fill, run_task, simulate

N = 16
DNA = preset("dna-hhe")
PRIMES = tuple(DNA.moduli) + tuple(DNA.special_moduli)       # q0, q1, q2 (54 bits), P (61 bits)


def _rig(lanes, primes=PRIMES, buffers=3):
    bits = max(q.bit_length() for q in primes)
    m = Module()
    unit = BasisUnit(N, lanes, bits, buffers, 4, 2, primes)
    bufs = BufferFile(buffers, N // lanes, lanes, bits, read_ports=2, write_ports=2)
    m.submodules.unit, m.submodules.bufs = unit, bufs
    wiring.connect(m, unit.rd, bufs.read(0))
    wiring.connect(m, unit.wr, bufs.write0)
    return m, unit, bufs


def _inputs(rng, q):
    """Residues around every kind's threshold (0, q - 1, the halves, the float edge) and random ones."""
    near = set()
    for kind in CENTRE_KINDS:
        thr = centre_threshold(q, kind)
        near.update({thr - 1, thr, thr + 1})
    near.update({0, 1, q - 1, q // 2})
    values = sorted(v for v in near if 0 <= v < q)
    return (values + [rng.randrange(q) for _ in range(N)])[:N]


def _prime_from(start):
    q = start | 1
    while not is_prime(q):
        q += 2
    return q


#: primes whose mu = floor(2^61 / q) are not all powers of two (the unit's product estimate;
#: DNA-HHE's mu are 128 and 1, the shift estimate)
UNEVEN = (_prime_from(3 << 38), _prime_from(5 << 37), _prime_from((1 << 40) - (1 << 20)), PRIMES[3])


@pytest.mark.parametrize("lanes, primes", [(1, PRIMES), (4, PRIMES), (2, UNEVEN)], ids=["dna-1", "dna-4", "uneven-2"])
def test_every_kind_between_every_prime_pair(lanes, primes):
    m, unit, bufs = _rig(lanes, primes)
    assert any(mu & (mu - 1) for mu in unit.mu) == (primes is UNEVEN)
    rng = random.Random(lanes)
    pairs = [(3, 0), (0, 3), (2, 0), (0, 1), (3, 3)]          # P -> q, q -> P, q -> q, P -> P
    got, want, cycles = [], [], set()

    async def bench(ctx):
        ctx.set(unit.slot_prime, [0, 1, 2, 3])
        for src, dst in pairs:
            q_src, q_dst = primes[src], primes[dst]
            words = _inputs(rng, q_src)
            await fill(ctx, bufs, 0, words, lanes)
            for kind, name in enumerate(CENTRE_KINDS):
                ins = isa.Instruction(isa.Opcode.CONV, dst=1, a=0, slot=src, flags=kind, imm=dst)
                cycles.add((await run_task(ctx, unit, ins))[0])
                got.append(await dump(ctx, bufs, 1, N, lanes, 1))
                want.append([centre(x, q_src, name) % q_dst for x in words])

    simulate(m, bench)
    assert got == want
    assert cycles == {unit.task_cycles} == {N // lanes + 6}


def test_the_float_edge_of_extend_is_built_in():
    p, q = PRIMES[3], PRIMES[0]
    half = (p - 1) // 2
    edge = half + 1 - 129                         # docs/isa.md: 129 values lower for DNA-HHE's P
    assert float(edge + half) == float(p) and float(edge - 1 + half) != float(p)
    m, unit, bufs = _rig(2)
    words = [edge - 1, edge, half, half + 1] * (N // 4)
    out = {}

    async def bench(ctx):
        ctx.set(unit.slot_prime, [0, 1, 2, 3])
        await fill(ctx, bufs, 0, words, 2)
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.CONV, dst=1, a=0, slot=3, flags=2, imm=0))
        out["x"] = await dump(ctx, bufs, 1, N, 2, 1)

    simulate(m, bench)
    assert out["x"][:4] == [(edge - 1) % q, (edge - p) % q, (half - p) % q, (half + 1 - p) % q]


@pytest.mark.parametrize("kwargs,name", [({"word_bits": 20}, "word_bits"), ({"primes": ()}, "primes"),
                                         ({"lanes": 3}, "lanes")])
def test_bad_parameters(kwargs, name):
    args = dict(n=N, lanes=1, word_bits=61, buffers=4, slots=4, tag_width=2, primes=PRIMES) | kwargs
    with pytest.raises(ParameterError, match=f"'{name}'"):
        BasisUnit(**args)
