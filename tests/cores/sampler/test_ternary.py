"""TernaryUniform and TernaryHamming: bit-exact with the models (values and bytes consumed),
cycle-exact, consecutive vectors, clear, statistics."""

import math
import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.sampler import TernaryHamming, TernaryUniform
from hhe_gen.models.sampler import Domain, seeded_xof, ternary_hamming, ternary_uniform, to_residues
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream

from ._helpers import beats


def _seed(n):
    return random.Random(n).randbytes(32)


class _Counting:
    def __init__(self, xof):
        self.xof, self.used = xof, 0

    def squeeze(self, n):
        self.used += n
        return self.xof.squeeze(n)


def _model(fn, seed, domain, *args):
    """Model output and exactly the bytes it consumed."""
    xof = _Counting(seeded_xof(seed, domain))
    want = fn(xof, *args)
    return want, seeded_xof(seed, domain).squeeze(xof.used)


# -- uniform ternary ------------------------------------------------------------------------------

def _uniform_schedule(data, in_cycles, w):
    """Byte b is loaded when the previous one has given all its accepted pieces (at least one
    cycle each); its values follow on consecutive cycles."""
    out, load = [], None
    for b, byte in enumerate(data):
        avail = in_cycles[b // w] + 1
        load = avail if load is None else max(avail, load + max(accepted, 1))
        accepted = sum(((byte >> s) & 3) != 3 for s in (0, 2, 4, 6))
        out += [load + 1 + i for i in range(accepted)]
    return out


@pytest.mark.parametrize("w", [1, 2, 8])
def test_uniform_bit_exact_and_cycle_exact(w):
    n = 300
    want, data = _model(ternary_uniform, _seed(w), Domain.SECRET, n)
    full = run_stream(TernaryUniform(in_bytes=w), beats(data, w), n)
    assert full.outputs == want
    assert full.out_cycles == _uniform_schedule(data, full.in_cycles, w)[:n]
    gappy = run_stream(TernaryUniform(in_bytes=w), beats(data, w), n, gaps=w)
    assert gappy.outputs == want


def test_uniform_residues():
    moduli = (2, 3, 65929217, (1 << 54) - 33)
    want, data = _model(ternary_uniform, _seed(4), Domain.EPHEMERAL, 100)
    run = run_stream(TernaryUniform(in_bytes=8, moduli=moduli), beats(data, 8), 100, gaps=4)
    assert [o["value"] for o in run.outputs] == want
    for i, q in enumerate(moduli):
        assert [o["residues"][i] for o in run.outputs] == to_residues(want, q)


def test_uniform_edge_bytes():
    """0xff (all four pieces rejected) gives nothing and costs one cycle; 0x00 gives four zeros;
    0b10_01_00_11 gives 0, +1, -1."""
    data = bytes([0xFF, 0x00, 0b10010011, 0xFF, 0xFF, 0b01010101])
    run = run_stream(TernaryUniform(), list(data), 11)
    assert run.outputs == [0, 0, 0, 0, 0, 1, -1, 1, 1, 1, 1]
    assert run.out_cycles == _uniform_schedule(data, run.in_cycles, 1)


def _pair_schedule(data, in_cycles, w, pairs):
    """The two-values-a-cycle selector's output cycles, recomputed from the bytes: a pair leaves in
    every cycle with at least two values held; a byte (offered a cycle after its beat, one byte a
    cycle) is taken when at most two values are left after the pair, its accepted pieces held
    from the next cycle."""
    fill, b, c, out, taken = 0, 0, 0, [], None
    while len(out) < pairs:
        pop = fill >= 2
        if pop:
            out.append(c)
        left = fill - 2 * pop
        if b < len(data):
            avail = in_cycles[b // w] + 1 if taken is None else max(in_cycles[b // w] + 1, taken + 1)
            if avail <= c and left <= 2:
                left += sum(((data[b] >> s) & 3) != 3 for s in (0, 2, 4, 6))
                taken, b = c, b + 1
        fill, c = left, c + 1
    return out


@pytest.mark.parametrize("w", [1, 2, 8])
def test_pairs_bit_exact_and_cycle_exact(w):
    n = 300
    want, data = _model(ternary_uniform, _seed(10 + w), Domain.EPHEMERAL, n)
    full = run_stream(TernaryUniform(in_bytes=w, values_per_cycle=2), beats(data, w), n // 2)
    assert [v for pair in full.outputs for v in pair] == want
    assert full.out_cycles == _pair_schedule(data, full.in_cycles, w, n // 2)
    if w == 8:              # one byte a cycle from the beats: a pair nearly every cycle
        assert full.out_cycles[-1] - full.out_cycles[0] < n // 2 + 10
    gappy = run_stream(TernaryUniform(in_bytes=w, values_per_cycle=2), beats(data, w), n // 2, gaps=w + 1)
    assert [v for pair in gappy.outputs for v in pair] == want


def test_pairs_edge_bytes():
    """All-rejected bytes between the pieces: the pairs still follow the piece order."""
    data = bytes([0xFF, 0x00, 0b10010011, 0xFF, 0xFF, 0b01010101, 0xFF, 0b11111110])
    run = run_stream(TernaryUniform(values_per_cycle=2), list(data), 6)
    assert [v for pair in run.outputs for v in pair] == [0, 0, 0, 0, 0, 1, -1, 1, 1, 1, 1, -1]
    assert run.out_cycles == _pair_schedule(data, run.in_cycles, 1, 6)


def test_pairs_parameters():
    with pytest.raises(ParameterError, match="'values_per_cycle' = 3"):
        TernaryUniform(values_per_cycle=3)
    with pytest.raises(ParameterError, match="'values_per_cycle' = 2.*moduli"):
        TernaryUniform(values_per_cycle=2, moduli=(3,))


# -- fixed Hamming weight -------------------------------------------------------------------------

def _candidates_per_step(data, count, h):
    """Candidates drawn for each shuffle step, recomputed from the bytes (independently of the model)."""
    k = max(1, ((count - 1).bit_length() + 7) // 8)
    pos, out = (h + 7) // 8, []
    for i in range(count - h, count):
        mask, c = (1 << i.bit_length()) - 1, 0
        while True:
            c += 1
            j = int.from_bytes(data[pos:pos + k], "little") & mask
            pos += k
            if j <= i:
                break
        out.append(c)
    assert pos == len(data)
    return out, k


def _hamming_first_out(in_cycles, w, k, count, h, candidates):
    """First output cycle: signs (one byte per cycle once available) in parallel with zeroing
    (count cycles); each step pops its candidates (one per cycle once available) then 2 cycles;
    c[0] is read the next cycle and is out one cycle later."""
    def avail(last_byte):
        return in_cycles[last_byte // w] + 1
    pos, last = 0, -1
    for _ in range((h + 7) // 8):
        last = max(avail(pos), last + 1)
        pos += 1
    cycle = max(count, last + 1) + 1
    for c in candidates:
        for _ in range(c):
            cycle = max(avail(pos + k - 1), cycle) + 1
            pos += k
        cycle += 2
    return cycle + 1


@pytest.mark.parametrize("count,h,w", [(64, 16, 1), (64, 16, 8), (300, 100, 8), (256, 256, 2), (10, 0, 1),
                                       (1, 1, 1), (1, 0, 8), (1000, 64, 4), (257, 1, 1), (40, 39, 2)])
def test_hamming_bit_exact_and_cycle_exact(count, h, w):
    want, data = _model(ternary_hamming, _seed(count + h), Domain.SECRET, count, h)
    assert sum(x != 0 for x in want) == h
    candidates, k = _candidates_per_step(data, count, h)
    dut = TernaryHamming(count, h, in_bytes=w)
    assert dut.word_bytes == k
    full = run_stream(dut, beats(data, w), count)
    assert full.outputs == want
    assert full.out_cycles[0] == _hamming_first_out(full.in_cycles, w, k, count, h, candidates)
    assert full.out_cycles == list(range(full.out_cycles[0], full.out_cycles[0] + count))
    if w >= k:      # the documented closed form holds at full input rate
        start = full.in_cycles[0] if full.in_cycles else 0
        assert full.out_cycles[0] - start == max(count, (h + 7) // 8 + 1) + sum(c + 2 for c in candidates) + 2
    gappy = run_stream(TernaryHamming(count, h, in_bytes=w), beats(data, w), count, gaps=count + w)
    assert gappy.outputs == want


class _Bytes:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def squeeze(self, n):
        self.pos += n
        return self.data[self.pos - n:self.pos]


def test_hamming_same_cycles_for_different_values():
    """Two streams with the same rejection pattern but different accepted positions and signs:
    identical transfer cycles, different vectors."""
    count, h = 128, 127

    def stream(seed):
        r = random.Random(seed)
        data = bytearray(r.randbytes(16))
        for i in range(count - h, count):
            mask = (1 << i.bit_length()) - 1
            if mask > i:            # one rejected candidate wherever rejection is possible
                data.append(r.randrange(i + 1, mask + 1))
            data.append(r.randrange(0, i + 1))
        return bytes(data)

    runs = []
    for seed in (1, 2):
        data = stream(seed)
        want = ternary_hamming(_Bytes(data), count, h)
        run = run_stream(TernaryHamming(count, h, in_bytes=2), beats(data, 2), count, gaps=7)
        assert run.outputs == want
        runs.append(run)
    assert runs[0].outputs != runs[1].outputs
    assert runs[0].in_cycles == runs[1].in_cycles and runs[0].out_cycles == runs[1].out_cycles


def test_hamming_consecutive_vectors_and_clear():
    """Vectors follow each other on one stream (= consecutive model calls on one XOF); clear in
    the middle of a vector restarts it from a fresh stream."""
    count, h = 40, 12
    xof = _Counting(seeded_xof(_seed(1), Domain.SECRET))
    first, second = ternary_hamming(xof, count, h), ternary_hamming(xof, count, h)
    data = seeded_xof(_seed(1), Domain.SECRET).squeeze(xof.used)
    run = run_stream(TernaryHamming(count, h, in_bytes=4), beats(data, 4), 2 * count, gaps=2)
    assert run.outputs == first + second

    fresh, fresh_bytes = _model(ternary_hamming, _seed(2), Domain.SECRET, count, h)
    dut = TernaryHamming(count, h, in_bytes=1)
    got = []

    async def bench(ctx):
        for byte in data[:10]:                  # part of a vector (signs and a few positions)
            ctx.set(dut.i_stream.payload, byte)
            ctx.set(dut.i_stream.valid, 1)
            await ctx.tick().until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)
        ctx.set(dut.abort, 1)
        await ctx.tick()
        ctx.set(dut.abort, 0)
        ctx.set(dut.o_stream.ready, 1)
        stream = iter(fresh_bytes)
        ctx.set(dut.i_stream.payload, next(stream))
        ctx.set(dut.i_stream.valid, 1)
        while len(got) < count:
            *_, ready, valid, value = await ctx.tick().sample(dut.i_stream.ready, dut.o_stream.valid,
                                                              dut.o_stream.payload)
            if ready:
                nxt = next(stream, None)
                if nxt is None:
                    ctx.set(dut.i_stream.valid, 0)
                else:
                    ctx.set(dut.i_stream.payload, nxt)
            if valid:
                got.append(value)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == fresh


def test_hamming_residues():
    want, data = _model(ternary_hamming, _seed(5), Domain.SECRET, 50, 20)
    run = run_stream(TernaryHamming(50, 20, in_bytes=8, moduli=(3, 12289)), beats(data, 8), 50, gaps=1)
    assert [o["value"] for o in run.outputs] == want
    assert [o["residues"][1] for o in run.outputs] == to_residues(want, 12289)


@pytest.mark.parametrize("kwargs,name", [
    (dict(count=0, h=0), "count"), (dict(count=8, h=9), "h"), (dict(count=8, h=-1), "h"),
    (dict(count=8, h=2, in_bytes=3), "in_bytes"), (dict(count=8, h=2, moduli=[1]), "moduli"),
])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as err:
        TernaryHamming(**kwargs)
    assert err.value.name.partition("[")[0] == name       # a bad element i is named name[i]
    with pytest.raises(ParameterError):
        TernaryUniform(in_bytes=5)


# -- statistics on the hardware (slow) -----------------------------------------------------------

def _ternary_ok(values):
    """Chi-square of {-1, 0, 1} counts against 1/3 each (2 dof, threshold 20: p ~ 5e-5)."""
    n = len(values)
    counts = [values.count(v) for v in (-1, 0, 1)]
    chi = sum((c - n / 3) ** 2 / (n / 3) for c in counts)
    return chi < 20


@pytest.mark.slow
def test_uniform_statistics_on_1e5_hardware_samples():
    n = 100_000
    want, data = _model(ternary_uniform, _seed(21), Domain.SECRET, n)
    values = run_stream(TernaryUniform(in_bytes=8), beats(data, 8), n).outputs
    assert values == want
    assert _ternary_ok(values)
    # Mapping piece 3 to -1 instead of rejecting it is caught.
    wrong = [{0: 0, 1: 1, 2: -1, 3: -1}[(b >> s) & 3] for b in data for s in (0, 2, 4, 6)][:n]
    assert not _ternary_ok(wrong)


@pytest.mark.slow
def test_hamming_statistics_on_1e5_hardware_samples():
    """1600 vectors of 64 with h = 16 from one stream (102400 values): every position is
    non-zero with probability h/count, and signs are balanced."""
    count, h, vectors = 64, 16, 1600
    xof = _Counting(seeded_xof(_seed(22), Domain.SECRET))
    want = [v for _ in range(vectors) for v in ternary_hamming(xof, count, h)]
    data = seeded_xof(_seed(22), Domain.SECRET).squeeze(xof.used)
    values = run_stream(TernaryHamming(count, h, in_bytes=8), beats(data, 8), count * vectors).outputs
    assert values == want
    arr = np.array(values).reshape(vectors, count)
    assert (np.count_nonzero(arr, axis=1) == h).all()
    hits = np.count_nonzero(arr, axis=0)
    expected = vectors * h / count
    chi = float(((hits - expected) ** 2 / (expected * (1 - h / count))).sum())
    assert chi < count - 1 + 4 * math.sqrt(2 * (count - 1)) + 10
    plus, minus = int((arr == 1).sum()), int((arr == -1).sum())
    assert abs(plus - minus) < 4.5 * math.sqrt(plus + minus)
