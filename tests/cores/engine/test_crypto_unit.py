"""CryptoUnit: ntt / intt, the pointwise ops and the codec on one array of P butterflies, in place in
banked buffers and streaming: NTT and pointwise tasks back to back equal hhe_gen.models.ntt and the
pointwise formulas (two primes by slot, a lifted input, mac and msub on corner residues), each in
its sequencer's cycle count; the engine holds P butterflies, not 3P; an abort in a transform leaves
the next pointwise task right; bad parameters name the parameter.  (Encode and decode on the
array: tests/cores/engine/test_engine.py, datapath "shared".)"""

import random

import pytest
from amaranth.hdl import Fragment, Module
from amaranth.lib import wiring

from hhe_gen.cores.arith import Butterfly
from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.buffers import BufferFile
from hhe_gen.cores.engine.crypto_unit import CryptoUnit
from hhe_gen.cores.engine.engine import Engine
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params import ParameterError, ntt_primes

from ._bench import abort_task, dump, fill, run_task, simulate

TEST_WRITE, TEST_READ = 1, 3            # the buffer ports the bench fills and dumps through


def _rig(n, lanes, primes, in_place, **kw):
    bits = max(q.bit_length() for q in primes)
    m = Module()
    unit = CryptoUnit(n, lanes, bits, 6, 2, 2, primes, in_place=in_place, **kw)
    bufs = BufferFile(6, n // lanes, lanes, bits, read_ports=4, write_ports=2, banked=in_place)
    m.submodules.unit, m.submodules.bufs = unit, bufs
    for k, rd in enumerate((unit.rd0, unit.rd1, unit.rd2)):
        wiring.connect(m, rd, bufs.read(k))
    wiring.connect(m, unit.wr, bufs.write0)
    if in_place:
        wiring.connect(m, unit.bank, bufs.bank)
    return m, unit, bufs, bits


def _residues(rng, q, n):
    corner = [0, 1, q - 1, q - 2, (q + 1) // 2]
    return [rng.choice(corner) if rng.random() < 0.3 else rng.randrange(q) for _ in range(n)]


@pytest.mark.parametrize("in_place", [True, False])
@pytest.mark.parametrize("n,lanes,bits,kind", [(16, 1, 30, "barrett"), (32, 2, 54, "barrett")])
def test_both_kinds_back_to_back_bit_exact(n, lanes, bits, kind, in_place):
    primes = tuple(ntt_primes(n, bits, 2))
    q0, q1 = primes
    m, unit, bufs, wb = _rig(n, lanes, primes, in_place, kind=kind, twiddles="otf")
    rng = random.Random(n * 7 + lanes + in_place)
    x, y, z = (_residues(rng, q1, n) for _ in range(3))
    small = [rng.randint(-20, 20) for _ in range(n)]
    O = isa.Opcode
    tasks = [("ntt_x", isa.Instruction(O.NTT, dst=3, a=0, slot=0)),
             ("mul", isa.Instruction(O.MUL, dst=4, a=3, b=1, slot=0)),
             ("intt", isa.Instruction(O.INTT, dst=5, a=4, slot=0)),
             ("mac", isa.Instruction(O.MAC, dst=4, a=0, b=1, c=2, slot=0)),
             ("lifted", isa.Instruction(O.NTT, dst=3, a=5, slot=1, flags=1)),
             ("msub", isa.Instruction(O.MSUB, dst=5, a=0, b=1, c=2, slot=0))]
    got, cycles = {}, {}

    async def bench(ctx):
        ctx.set(unit.slot_prime, [1, 0])                      # slot 0 -> q1, slot 1 -> q0
        for b, words in enumerate((x, y, z)):
            await fill(ctx, bufs, b, words, lanes, TEST_WRITE)
        for name, ins in tasks:
            if name == "lifted":
                await fill(ctx, bufs, 5, [v % (1 << wb) for v in small], lanes, TEST_WRITE)
            cycles[name], _ = await run_task(ctx, unit, ins)
            got[name] = await dump(ctx, bufs, ins.dst, n, lanes, TEST_READ)

    simulate(m, bench)
    x_hat = ntt(x, q1)
    assert got["ntt_x"] == x_hat
    assert got["mul"] == [a * b % q1 for a, b in zip(x_hat, y)]
    assert got["intt"] == intt(got["mul"], q1)
    assert got["mac"] == [(a * b + c) % q1 for a, b, c in zip(x, y, z)]
    assert got["lifted"] == ntt([v % q0 for v in small], q0)
    assert got["msub"] == [(c - a * b) % q1 for a, b, c in zip(x, y, z)]
    assert cycles == {name: unit.task_cycles(ins.opcode) for name, ins in tasks}
    assert cycles["ntt_x"] == unit.ntt_unit.ntt_plan.command_cycles(False) + (not in_place)
    assert cycles["mul"] == n // lanes + unit.array_plan.latency + 3


def _butterflies(fragment) -> int:
    """Butterfly units elaborated in ``fragment`` and below."""
    mine = any(isinstance(origin, Butterfly) for origin in fragment.origins or ())
    return mine + sum(_butterflies(sub) for sub, *_ in fragment.subfragments)


def test_one_array_of_p_butterflies():
    """The crypto unit elaborates P butterflies (Z_q and complex); the separate NTT, pointwise and
    codec units 3P."""
    n, lanes = 32, 2
    primes = tuple(ntt_primes(n, 30, 2))

    def count(datapath):
        engine = Engine(n, primes, lanes=lanes, buffers=6, sampler=False, datapath=datapath, log_scale=20)
        return _butterflies(Fragment.get(engine, None))
    assert count("shared") == lanes and count("separate") == 3 * lanes


def test_abort_in_a_transform_then_a_pointwise_task():
    n, lanes = 32, 2
    primes = tuple(ntt_primes(n, 30, 1))
    q = primes[0]
    m, unit, bufs, wb = _rig(n, lanes, primes, True)
    a, b = list(range(1, n + 1)), list(range(n, 0, -1))
    got = {}

    async def bench(ctx):
        ctx.set(unit.slot_prime, [0, 0])
        await fill(ctx, bufs, 0, a, lanes, TEST_WRITE)
        await fill(ctx, bufs, 1, b, lanes, TEST_WRITE)
        await abort_task(ctx, unit, isa.Instruction(isa.Opcode.NTT, dst=2, a=0), n // lanes + 5)
        got["ready"] = ctx.get(unit.port.task.ready)
        got["cycles"], _ = await run_task(ctx, unit, isa.Instruction(isa.Opcode.MUL, dst=3, a=0, b=1))
        got["mul"] = await dump(ctx, bufs, 3, n, lanes, TEST_READ)
        await run_task(ctx, unit, isa.Instruction(isa.Opcode.NTT, dst=2, a=0))
        got["ntt"] = await dump(ctx, bufs, 2, n, lanes, TEST_READ)

    simulate(m, bench)
    assert got["ready"] == 1
    assert got["mul"] == [u * v % q for u, v in zip(a, b)]
    assert got["cycles"] == unit.pointwise_unit.task_cycles
    assert got["ntt"] == ntt(a, q)


@pytest.mark.parametrize("kwargs,name", [({"kind": "ntt-montgomery"}, "kind"), ({"word_bits": 20}, "word_bits"),
                                         ({"twiddles": "cache"}, "twiddles"), ({"lanes": 32}, "lanes")])
def test_bad_parameters(kwargs, name):
    args = dict(n=32, lanes=1, word_bits=30, buffers=4, slots=2, tag_width=2,
                primes=tuple(ntt_primes(32, 30, 1))) | kwargs
    with pytest.raises(ParameterError, match=f"'{name}'"):
        CryptoUnit(**args)


def test_the_engine_refuses_two_reducers_on_one_array():
    primes = tuple(ntt_primes(32, 30, 1))
    with pytest.raises(ParameterError, match="'pointwise.kind'"):
        Engine(32, primes, sampler=False, codec=False, datapath="shared", ntt=dict(kind="barrett"),
               pointwise=dict(kind="special-barrett"))
    with pytest.raises(ParameterError, match="'datapath'"):
        Engine(32, primes, sampler=False, codec=False, datapath="one")


def test_the_array_takes_the_latency_with_the_fewest_tiles():
    """DNA-HHE's three fields (Z_q special primes, Rubato's t, complex 38/36): at the default
    latency 8 the sharing plan needs 16 DSP tiles, at 9 it packs them into 13, so the array takes
    9; a latency given is kept."""
    from hhe_gen.cores.arith.butterfly import ButterflyPlan
    from hhe_gen.cores.engine.crypto_unit import _fewest_tiles
    from hhe_gen.models.fft import FixedPointFormat
    from hhe_gen.params import preset
    from hhe_gen.params.rubato import rubato_params
    p = preset("dna-hhe")
    fields = dict(zq=dict(kind="special-barrett", moduli=list(p.moduli), log_n=13),
                  zt=dict(kind="barrett", moduli=[rubato_params("Par-128S").q]),
                  complex=FixedPointFormat(38, 36), target="ecp5")
    default = ButterflyPlan(**fields)
    chosen = _fewest_tiles(fields, None)
    assert (default.latency, default.tiles) == (8, 16)
    assert (chosen.latency, chosen.tiles) == (9, 13)
    assert _fewest_tiles(fields, 8).latency == 8
