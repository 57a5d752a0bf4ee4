"""A Keccak round a few planes at a time (KeccakPlanes) against the golden model's round
(hhe_gen.models.keccak, itself checked with hashlib), and the XOF built on it against hashlib."""

import hashlib
import random

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.keccak import PLANES_PER_CYCLE, RATES, KeccakPlanes, ShakeXof, permutation_cycles, squeeze_bytes_per_cycle
from hhe_gen.cores.keccak.planes import plane_groups
from hhe_gen.models.keccak import RHO_OFFSETS, ROUND_CONSTANTS, keccak_round
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream

from .test_xof import assert_exact_cycles, drive, message_beats, unbeat

MASK64 = (1 << 64) - 1
STATES = {"zero": [0] * 25, "ones": [MASK64] * 25, "one-bit": [1 << 63] + [0] * 24}


def pack(lanes):
    return sum(v << (64 * i) for i, v in enumerate(lanes))


def planes_of_round(dut, state, rnd):
    """The round's five output planes as the block gives them, group by group (lanes x + 5y)."""
    out = {}
    p, groups = dut.planes_per_cycle, dut.groups

    async def tb(ctx):
        ctx.set(dut.i_state, pack(state))
        ctx.set(dut.rc, ROUND_CONSTANTS[rnd])
        for g in range(groups):
            if groups > 1:
                ctx.set(dut.group, g)
            word = ctx.get(dut.o_planes)
            for s in range(p):
                if g * p + s < 5:
                    out[g * p + s] = [(word >> (320 * s + 64 * x)) & MASK64 for x in range(5)]

    sim = Simulator(dut)
    sim.add_testbench(tb)
    sim.run()
    return [out[y][x] for y in range(5) for x in range(5)]


@pytest.mark.parametrize("p", PLANES_PER_CYCLE)
def test_every_group_is_the_models_round(p):
    rng = random.Random(p)
    cases = [(s, rng.randrange(24)) for s in STATES.values()]
    cases += [([rng.getrandbits(64) for _ in range(25)], rnd) for rnd in (0, 23, rng.randrange(1, 23))]
    for state, rnd in cases:
        assert planes_of_round(KeccakPlanes(p), state, rnd) == keccak_round(state, rnd), rnd


def test_a_wrong_rotation_is_seen():
    class WrongRho(KeccakPlanes):
        _rho_offsets = tuple(r + (i == 7) for i, r in enumerate(RHO_OFFSETS))
    state = [random.Random(3).getrandbits(64) for _ in range(25)]
    assert planes_of_round(WrongRho(1), state, 5) != keccak_round(state, 5)


@pytest.mark.parametrize("p,cycles", [(1, 120), (2, 72), (3, 48), (5, 24)])
def test_permutation_cycles_and_rate(p, cycles):
    assert plane_groups(p) * 24 == cycles == permutation_cycles(1, p)
    assert squeeze_bytes_per_cycle(256, 8, 1, p) == 136 / (17 + cycles)


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
@pytest.mark.parametrize("kwargs,name", [
    ({"planes_per_cycle": 4}, "planes_per_cycle"), ({"planes_per_cycle": 0}, "planes_per_cycle"),
    ({"planes_per_cycle": True}, "planes_per_cycle"), ({"planes_per_cycle": 2, "rounds_per_cycle": 2}, "rounds_per_cycle"),
])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as err:
        ShakeXof(256, **kwargs)
    assert err.value.name == name


@pytest.mark.parametrize("variant,w,p,length,n_out", [
    (256, 8, 1, 41, 40),            # the samplers' seeding message, past one squeeze block
    (128, 8, 2, 168, 25),           # exactly one block: the last beat completes it
    (256, 4, 3, 2 * 136 + 7, 70),
])
def test_xof_matches_hashlib_with_exact_cycles(variant, w, p, length, n_out):
    rng = random.Random(f"{variant}-{w}-{p}")
    msg = rng.randbytes(length)
    want = getattr(hashlib, f"shake_{variant}")(msg).digest(n_out * w)

    def xof():
        return ShakeXof(variant, beat_bytes=w, planes_per_cycle=p)

    beats = message_beats(msg, w, random.Random(1))
    full = run_stream(xof(), beats, n_out)
    assert unbeat(full.outputs, w) == want
    assert_exact_cycles(full, length, len(beats), w, RATES[variant], permutation_cycles(1, p))
    gappy = run_stream(xof(), message_beats(msg, w, rng), n_out, gaps=length + 1)
    assert unbeat(gappy.outputs, w) == want


@pytest.mark.parametrize("p", [1, 3])
def test_restarts_mid_round_and_both_variants(p):
    """variant="both" with planes: messages of both kinds, each restarted in the middle of its
    squeeze (inside a round's groups), give the fresh streams; drive() checks that a restart leaves
    every register at its reset value, the round and group counters too."""
    rng = random.Random(p)
    msgs = [(rng.randbytes(L), v) for L, v in ((0, 128), (136, 256), (41, 256), (170, 128))]
    ops = []
    for msg, v in msgs:
        ops += [("msg", msg, v), ("take", 22), ("wait", 7), ("restart",)]
    dut = ShakeXof("both", beat_bytes=8, planes_per_cycle=p)
    out, _ = drive(dut, ops, seed=p)
    assert out == [getattr(hashlib, f"shake_{v}")(msg).digest(22 * 8) for msg, v in msgs]
