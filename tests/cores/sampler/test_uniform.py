"""UniformModQ / RejectionFilter: bit-exact with uniform_mod_q, exact stream use and cycles,
RNS sets selected at run time, statistics."""

import math
import random

import numpy as np
import pytest

from hhe_gen.cores.sampler import RejectionFilter, UniformModQ
from hhe_gen.models.sampler import Domain, seeded_xof, uniform_mod_q
from hhe_gen.params import ntt_primes
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream

from ._helpers import asap_out_cycles, beats

PRIMES_54 = ntt_primes(1 << 13, 54, 3)


def _seed(n):
    return random.Random(n).randbytes(32)


class _Counting:
    """Wraps an XOF and counts the bytes the model takes."""

    def __init__(self, xof):
        self.xof, self.used = xof, 0

    def squeeze(self, n):
        self.used += n
        return self.xof.squeeze(n)


def _model(seed, q, count, nonce=0):
    xof = _Counting(seeded_xof(seed, Domain.UNIFORM_A, nonce))
    want = uniform_mod_q(xof, q, count)
    return want, seeded_xof(seed, Domain.UNIFORM_A, nonce).squeeze(xof.used)


def _candidates(data, q, k):
    """Indices of the accepted candidates among the k-byte words of data (independent of the model)."""
    mask = (1 << q.bit_length()) - 1
    return [j for j in range(len(data) // k) if int.from_bytes(data[j * k:j * k + k], "little") & mask < q]


@pytest.mark.parametrize("q,w", [(257, 1), (12289, 8), (65929217, 4), (33292289, 1), (PRIMES_54[0], 8),
                                 (PRIMES_54[1], 2), (2**31 - 1, 8), (3, 1)])
def test_bit_exact_exact_stream_use_and_cycles(q, w):
    n = 150
    want, data = _model(_seed(q % 1000 + w), q, n)
    dut = UniformModQ(q, in_bytes=w)
    k = dut.word_bytes
    assert k == -(-q.bit_length() // 8)
    # Fed exactly the bytes the model consumed, the hardware produces every value.
    full = run_stream(dut, beats(data, w), n)
    assert full.outputs == want
    # Cycles: candidate j leaves the gatherer the cycle after the beat with its last byte, at most
    # one per cycle; the filter registers it (1 cycle); rejected candidates leave no output.
    at_gatherer = asap_out_cycles([full.in_cycles[((j + 1) * k - 1) // w] + 1 for j in range(len(data) // k)])
    assert full.out_cycles == [at_gatherer[j] + 1 for j in _candidates(data, q, k)]
    gappy = run_stream(UniformModQ(q, in_bytes=w), beats(data, w), n, gaps=q % 97)
    assert gappy.outputs == want


def test_rns_set_selected_at_run_time():
    primes = PRIMES_54
    dut_outputs = {}
    for i, q in enumerate(primes):
        want, data = _model(_seed(9), q, 80, nonce=i)

        dut = UniformModQ(primes, in_bytes=8)

        async def select(ctx, dut=dut, i=i):
            ctx.set(dut.modulus, i)

        run = run_stream(dut, beats(data, 8), 80, setup=select, gaps=i)
        assert run.outputs == want
        dut_outputs[q] = run.outputs
    assert len({tuple(v) for v in dut_outputs.values()}) == 3


def test_more_bytes_than_needed_and_clear_between_vectors():
    """A continuous random stream: the sampler takes only what it needs per value (run ends as soon
    as the values are out); with clear and a fresh stream the next vector starts from scratch."""
    q = 12289
    from amaranth.sim import Simulator
    a_want, _ = _model(_seed(1), q, 40, nonce=0)
    b_want, _ = _model(_seed(1), q, 40, nonce=1)
    a_bytes = seeded_xof(_seed(1), Domain.UNIFORM_A, 0).squeeze(400)
    b_bytes = seeded_xof(_seed(1), Domain.UNIFORM_A, 1).squeeze(400)
    assert run_stream(UniformModQ(q, in_bytes=8), beats(a_bytes, 8), 40, all_inputs=False).outputs == a_want

    dut = UniformModQ(q, in_bytes=8)
    got = [[], []]

    async def bench(ctx):
        ctx.set(dut.o_stream.ready, 1)
        for vector, data in enumerate((a_bytes, b_bytes)):
            stream = iter(beats(data, 8))
            ctx.set(dut.i_stream.valid, 1)
            ctx.set(dut.i_stream.payload, next(stream))
            while len(got[vector]) < 40:
                *_, ready, valid, value = await ctx.tick().sample(dut.i_stream.ready, dut.o_stream.valid,
                                                                  dut.o_stream.payload)
                if ready:
                    ctx.set(dut.i_stream.payload, next(stream))
                if valid:
                    got[vector].append(value)
            ctx.set(dut.i_stream.valid, 0)
            ctx.set(dut.abort, 1)       # restart: the prefetched bytes of stream a are dropped
            await ctx.tick()
            ctx.set(dut.abort, 0)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == [a_want, b_want]


def test_filter_alone():
    q = 1000
    rng = random.Random(2)
    words = [rng.randrange(1 << 12) for _ in range(300)]
    run = run_stream(RejectionFilter(12, q), words, sum((w & 1023) < q for w in words), gaps=1)
    assert run.outputs == [w & 1023 for w in words if (w & 1023) < q]


@pytest.mark.parametrize("kwargs,name", [
    (dict(q=1), "q"), (dict(q=[]), "q"), (dict(q="x"), "q"), (dict(q=[12289, PRIMES_54[0]]), "q"),
    (dict(q=12289, word_bytes=1), "word_bytes"), (dict(q=12289, in_bytes=5), "in_bytes"),
])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as err:
        UniformModQ(**kwargs)
    assert err.value.name.partition("[")[0] == name       # a bad element i is named name[i]


def test_wider_words_than_needed():
    """word_bytes above ceil(bitlen/8) reads more bytes per candidate (same masking rule)."""
    q = 12289
    data = seeded_xof(_seed(3), Domain.UNIFORM_A).squeeze(4 * 300)
    words = [int.from_bytes(data[i:i + 4], "little") & 16383 for i in range(0, len(data), 4)]
    want = [v for v in words if v < q][:100]
    assert run_stream(UniformModQ(q, in_bytes=4, word_bytes=4), beats(data, 4), 100,
                      all_inputs=False).outputs == want


def _uniform_checks(values, q, cells=64):
    """Chi-square over `cells` equal ranges of [0, q), and the mean; thresholds at ~4 sigma."""
    n = len(values)
    arr = np.array(values, dtype=np.float64)
    edges = [q * i // cells for i in range(cells + 1)]
    counts = np.histogram(arr, bins=edges)[0]
    expected = np.diff(edges) / q * n
    chi = float(((counts - expected) ** 2 / expected).sum())
    dof = cells - 1
    mean_z = (arr.mean() - (q - 1) / 2) / (q / math.sqrt(12 * n))
    return chi < dof + 4 * math.sqrt(2 * dof) + 10 and abs(mean_z) < 4.5


@pytest.mark.slow
@pytest.mark.parametrize("q", [12289, 65929217, PRIMES_54[0]])
def test_statistics_on_1e5_hardware_samples(q):
    """10^5 values of the hardware (Amaranth simulation, ~40 s each)."""
    n = 100_000
    want, data = _model(_seed(11), q, n)
    values = run_stream(UniformModQ(q, in_bytes=8), beats(data, 8), n).outputs
    assert values == want
    assert _uniform_checks(values, q)
    # The checks can fail: reducing the masked word mod q instead of rejecting it is caught
    # (for q = 0.75 * 2^14 it makes the low residues twice as likely).
    if q == 12289:
        biased = [(int.from_bytes(data[i:i + 2], "little") & 16383) % q for i in range(0, 2 * n, 2)]
        assert not _uniform_checks(biased, q)


def test_statistic_catches_a_biased_sampler():
    q = 12289               # 0.75 * 2^14: "mask and reduce" makes 0..4094 twice as likely
    rng = random.Random(5)
    biased = [rng.getrandbits(14) % q for _ in range(20_000)]
    assert not _uniform_checks(biased, q)
    assert _uniform_checks([rng.randrange(q) for _ in range(20_000)], q)
