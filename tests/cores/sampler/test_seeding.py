"""Seeding: the XOF messages, the write-only seed, and seed -> SHAKE256 (cores.keccak) -> sampler
end to end against the models."""

import random

import pytest
from amaranth.hdl import Fragment
from amaranth.lib import wiring
from amaranth.sim import Simulator

from hhe_gen.cores.sampler import (GaussianCDT, RubatoNoise, RubatoRoundConstants, TernaryHamming,
                                   TernaryUniform, UniformModQ)
from hhe_gen.cores.sampler.seeding import MessageKind, SeededSampler, SeedMessage, message_bytes
from hhe_gen.models import sampler as model
from hhe_gen.params import ntt_primes, rubato_params
from hhe_gen.params.errors import ParameterError

from ._helpers import KAT_SETS, load_kat, shake


def _seed(n):
    return random.Random(n).randbytes(32)


async def _write_seed(ctx, dut, seed):
    for i in range(8):
        ctx.set(dut.seed_we, 1)
        ctx.set(dut.seed_addr, i)
        ctx.set(dut.seed_data, int.from_bytes(seed[4 * i:4 * i + 4], "little"))
        await ctx.tick()
    ctx.set(dut.seed_we, 0)


def _command(kind, domain=0, nonce=0, counter=0):
    return {"kind": kind, "domain": domain, "nonce": nonce, "counter": counter}


# -- the messages ----------------------------------------------------------------------------------

def _emit(w, seed, commands, gaps=0):
    dut = SeedMessage(w)
    rng = random.Random(gaps)
    messages = []

    async def bench(ctx):
        await _write_seed(ctx, dut, seed)
        for cmd in commands:
            ctx.set(dut.i_stream.payload, cmd)
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick().until(dut.i_stream.ready)
            ctx.set(dut.i_stream.valid, 0)
            out = bytearray()
            while True:
                ready = rng.random() < 0.7
                ctx.set(dut.o_stream.ready, ready)
                *_, valid, beat = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
                if valid and ready:
                    n = beat["nbytes"] if beat["last"] else w
                    raw = beat["data"].to_bytes(w, "little")
                    assert raw[n:] == bytes(w - n), "bytes beyond the message must be zero"
                    out += raw[:n]
                    if beat["last"]:
                        break
            ctx.set(dut.o_stream.ready, 0)
            messages.append(bytes(out))

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return messages


@pytest.mark.parametrize("w", [1, 2, 4, 8])
def test_messages_are_the_models_xof_inputs(w):
    rng = random.Random(w)
    seed = _seed(w)
    domain, nonce, counter = rng.randrange(256), rng.getrandbits(64), rng.getrandbits(64)
    got = _emit(w, seed, [_command(MessageKind.SEEDED, domain, nonce, counter),
                          _command(MessageKind.RUBATO_RC, domain, nonce, counter),
                          _command(MessageKind.RUBATO_NOISE, domain, nonce, counter)], gaps=w)
    # seeded_xof absorbs exactly seed || domain || nonce: same SHAKE256 stream as hashlib on it.
    assert got[0] == message_bytes(MessageKind.SEEDED, seed, domain, nonce)
    assert shake(got[0], 200) == model.seeded_xof(seed, domain, nonce).squeeze(200)
    assert got[1] == model.rubato_xof_input(nonce, counter)
    assert got[2] == model.rubato_noise_xof_input(nonce, counter, int.from_bytes(seed[:8], "little"))


@pytest.mark.parametrize("name", KAT_SETS)
def test_message_bytes_of_every_kind(name):
    """The host helper for the Rubato kinds: the models' XOF inputs and the shipped KAT files'
    ``rc_xof_input_hex`` / ``noise.xof_input_hex`` (the seed register's low 64 bits are the noise
    seed; its other bytes must not appear), and what SeedMessage emits for the same commands."""
    kat = load_kat(name)
    for v in kat["vectors"][:2]:
        nonce, counter, noise_seed = v["nonce"], v["counter"], v["noise"]["seed"]
        seed = noise_seed.to_bytes(8, "little") + _seed(nonce % 1000)[8:]
        rc = message_bytes(MessageKind.RUBATO_RC, seed, 7, nonce, counter)
        noise = message_bytes(MessageKind.RUBATO_NOISE, seed, 7, nonce, counter)
        assert rc == model.rubato_xof_input(nonce, counter) == bytes.fromhex(v["rc_xof_input_hex"])
        assert noise == model.rubato_noise_xof_input(nonce, counter, noise_seed) \
            == bytes.fromhex(v["noise"]["xof_input_hex"])
        assert message_bytes(MessageKind.SEEDED, seed, 7, nonce, counter) == seed + bytes([7]) + rc[:8]
        kinds = list(MessageKind)
        got = _emit(4, seed, [_command(kind, 7, nonce, counter) for kind in kinds], gaps=1)
        assert got == [message_bytes(kind, seed, 7, nonce, counter) for kind in kinds]


def test_seed_clear_and_rewrite():
    dut = SeedMessage(8)
    got = []

    async def bench(ctx):
        await _write_seed(ctx, dut, _seed(1))
        ctx.set(dut.seed_clear, 1)
        await ctx.tick()
        ctx.set(dut.seed_clear, 0)
        ctx.set(dut.seed_we, 1)              # one word rewritten after the zeroisation
        ctx.set(dut.seed_addr, 3)
        ctx.set(dut.seed_data, 0x44332211)
        await ctx.tick()
        ctx.set(dut.seed_we, 0)
        ctx.set(dut.i_stream.payload, _command(MessageKind.SEEDED, 5, 9))
        ctx.set(dut.i_stream.valid, 1)
        await ctx.tick().until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)
        ctx.set(dut.o_stream.ready, 1)
        out = b""
        while True:
            *_, beat = await ctx.tick().sample(dut.o_stream.payload).until(dut.o_stream.valid)
            out += beat["data"].to_bytes(8, "little")[:beat["nbytes"] if beat["last"] else 8]
            if beat["last"]:
                break
        got.append(out)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == [bytes(12) + bytes([0x11, 0x22, 0x33, 0x44]) + bytes(16) + bytes([5]) + (9).to_bytes(8, "little")]


def test_the_seed_has_no_read_path():
    """Write-only: the only outputs are the message stream (SeedMessage, to the XOF) and the
    samples (SeededSampler); no port is named or shaped like a seed read-back."""
    for dut, allowed in ((SeedMessage(8), {"o_stream"}),
                         (SeededSampler(GaussianCDT(in_bytes=8)), {"o_stream"})):
        outputs = {name for name, member in dut.signature.members.items() if member.flow == wiring.Out}
        assert outputs == allowed
        seed_ports = {name for name in dut.signature.members if name.startswith("seed")}
        assert seed_ports == {"seed_we", "seed_addr", "seed_data", "seed_clear"}
        assert all(dut.signature.members[name].flow == wiring.In for name in seed_ports)
        Fragment.get(dut, None)     # it elaborates (and is used)


# -- seed -> XOF -> sampler ------------------------------------------------------------------------

def _run_seeded(sampler, seed, commands, count, *, rounds_per_cycle=4, gaps=None, setup=None):
    """Run commands one after the other on a SeededSampler, taking `count` values of each.
    Returns (values per command, cycles from the command to its first value)."""
    dut = SeededSampler(sampler, rounds_per_cycle=rounds_per_cycle)
    rng = random.Random(gaps) if gaps is not None else None
    results, firsts = [], []

    async def bench(ctx):
        if setup:
            setup(ctx, sampler)
        await _write_seed(ctx, dut, seed)
        for cmd in commands:
            ctx.set(dut.i_stream.payload, cmd)
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick().until(dut.i_stream.ready)
            ctx.set(dut.i_stream.valid, 0)
            values, cycle, first = [], 0, None
            while len(values) < count:
                ready = rng is None or rng.random() < 0.7
                ctx.set(dut.o_stream.ready, ready)
                *_, valid, payload = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
                cycle += 1
                if valid and first is None:
                    first = cycle
                if valid and ready:
                    values.append(payload if isinstance(payload, int) else payload["value"])
            ctx.set(dut.o_stream.ready, 0)
            results.append(values)
            firsts.append(first)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return results, firsts


def test_gaussian_end_to_end_with_exact_latency():
    seed = _seed(10)
    commands = [_command(MessageKind.SEEDED, model.Domain.ERROR0, 0), _command(MessageKind.SEEDED,
                                                                              model.Domain.ERROR1, 0)]
    for w, k in ((8, 4), (2, 1)):
        sampler = GaussianCDT(in_bytes=w)
        got, firsts = _run_seeded(sampler, seed, commands, 40, rounds_per_cycle=k)
        assert got == [model.gaussian_cdt(model.seeded_xof(seed, c["domain"], 0), 40) for c in commands]
        # message beats, pad, 24/k permutation cycles, then the sampler's latency from the beat that
        # completes the first word (8/W beats of the XOF, one per cycle).
        beats = -(-41 // w)
        assert firsts == [beats + 2 + 24 // k + (8 // w - 1) + sampler.latency] * 2


def test_uniform_rns_end_to_end():
    seed, primes = _seed(11), ntt_primes(1 << 10, 30, 2)
    for i, q in enumerate(primes):
        sampler = UniformModQ(primes, in_bytes=2)
        got, _ = _run_seeded(sampler, seed, [_command(MessageKind.SEEDED, model.Domain.UNIFORM_A, i)], 60,
                             gaps=i, setup=lambda ctx, s, i=i: ctx.set(s.modulus, i))
        assert got == [model.uniform_mod_q(model.seeded_xof(seed, model.Domain.UNIFORM_A, i), q, 60)]


def test_ternary_end_to_end():
    seed = _seed(12)
    got, _ = _run_seeded(TernaryUniform(in_bytes=1), seed, [_command(MessageKind.SEEDED, model.Domain.EPHEMERAL)],
                         100, rounds_per_cycle=24, gaps=3)
    assert got == [model.ternary_uniform(model.seeded_xof(seed, model.Domain.EPHEMERAL), 100)]
    commands = [_command(MessageKind.SEEDED, model.Domain.SECRET, n) for n in (0, 1)]
    got, _ = _run_seeded(TernaryHamming(260, 40, in_bytes=8), seed, commands, 260, rounds_per_cycle=8, gaps=4)
    assert got == [model.ternary_hamming(model.seeded_xof(seed, model.Domain.SECRET, n), 260, 40) for n in (0, 1)]


@pytest.mark.parametrize("name", ["80s", "128m"])
def test_rubato_end_to_end_kat(name):
    """The first two KAT vectors: round constants and noise through the hardware XOF."""
    kat = load_kat(name)
    p = rubato_params(kat["parameter_set"])
    for v in kat["vectors"][:2]:
        seed = v["noise"]["seed"].to_bytes(8, "little") + bytes(24)
        rc, _ = _run_seeded(RubatoRoundConstants(p, in_bytes=8), seed,
                            [_command(MessageKind.RUBATO_RC, 0, v["nonce"], v["counter"])], p.round_constant_count)
        assert rc == [[x for row in v["round_constants"] for x in row]]
        noise, _ = _run_seeded(RubatoNoise(p, in_bytes=4), seed,
                               [_command(MessageKind.RUBATO_NOISE, 0, v["nonce"], v["counter"])], p.n, gaps=1)
        assert noise == [v["noise"]["values_all_n_words"]]


def test_bad_parameters():
    with pytest.raises(ParameterError) as err:
        SeedMessage(3)
    assert err.value.name == "in_bytes"
    not_a_sampler = SeedMessage(8)
    with pytest.raises(ParameterError) as err:
        SeededSampler(not_a_sampler)
    assert err.value.name == "sampler"
    Fragment.get(not_a_sampler, None)


def test_ckks_model_conventions_toy_preset():
    """The CKKS model's own samples (secret s, key error e, a in the NTT domain for every prime)
    come out of the hardware for the toy preset (N = 64, two 30-bit primes)."""
    from hhe_gen.models import ckks
    from hhe_gen.params import preset

    p = preset("toy")
    seed = ckks.seed_bytes(5)
    s, _ = _run_seeded(TernaryUniform(in_bytes=8), seed, [_command(MessageKind.SEEDED, model.Domain.SECRET)], p.n)
    assert s == [ckks._secret(p, seed)]
    e, _ = _run_seeded(GaussianCDT(p.error.sigma, p.error.bound_sigmas, in_bytes=8, moduli=p.moduli), seed,
                       [_command(MessageKind.SEEDED, model.Domain.KEY_ERROR)], p.n)
    assert e == [ckks._gaussian(p, seed, model.Domain.KEY_ERROR)]
    a_hat = ckks._uniform_ntt(p, seed, p.max_level)
    for i in range(len(p.moduli)):
        a, _ = _run_seeded(UniformModQ(p.moduli, in_bytes=8), seed,
                           [_command(MessageKind.SEEDED, model.Domain.UNIFORM_A, i)], p.n,
                           setup=lambda ctx, smp, i=i: ctx.set(smp.modulus, i))
        assert a == [a_hat[i]]
