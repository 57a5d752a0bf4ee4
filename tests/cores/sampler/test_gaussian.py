"""GaussianCDT / CDTScan: bit-exact with the model, exact cycle counts, timing independent of
the drawn values, residues, statistics."""

import math
import random

import numpy as np
import pytest

from hhe_gen.cores.sampler import CDTScan, GaussianCDT
from hhe_gen.models import sampler
from hhe_gen.models.sampler import Domain, gaussian_cdt, gaussian_cdt_table, seeded_xof
from hhe_gen.params.errors import ParameterError
from hhe_gen.sim.stream import run_stream

from ._helpers import beats


def _seed(n):
    return random.Random(n).randbytes(32)


def _model_and_bytes(seed, count, bits=63, **dist):
    """The model's samples and exactly the bytes it consumed (count * word bytes)."""
    k = (bits + 1) // 8
    data = seeded_xof(seed, Domain.ERROR0).squeeze(count * k)
    want = gaussian_cdt(seeded_xof(seed, Domain.ERROR0), count, bits=bits, **dist)
    return want, data


def _scan_schedule(in_cycles, k, w, steps, n):
    """Expected output cycles with an always-ready consumer: word t is at the gatherer's output
    the cycle after the beat with its last byte; the scan takes it when free (every `steps`
    cycles at most), and the result is out `steps + 2` cycles later."""
    out, free = [], None
    for t in range(n):
        ready = in_cycles[((t + 1) * k - 1) // w] + 1
        take = ready if free is None else max(ready, free)
        free = take + steps
        out.append(take + steps + 2)
    return out


@pytest.mark.parametrize("w,comparators", [(8, None), (8, 7), (1, None), (1, 1), (2, 20), (4, 3)])
def test_bit_exact_and_cycle_exact(w, comparators):
    n = 120
    want, data = _model_and_bytes(_seed(w * 31 + (comparators or 0)), n)
    dut = GaussianCDT(in_bytes=w, comparators=comparators)
    b = len(gaussian_cdt_table())
    assert dut.steps == -(-b // (comparators or b))
    full = run_stream(dut, beats(data, w), n)
    assert full.outputs == want
    assert full.out_cycles == _scan_schedule(full.in_cycles, 8, w, dut.steps, n)
    gap = full.out_cycles[-1] - full.out_cycles[-2]
    assert gap == dut.cycles_per_sample == max(dut.steps, 8 // w)
    assert full.latency == dut.latency + (8 // w - 1)     # the first word needs 8/W beats
    gappy = run_stream(GaussianCDT(in_bytes=w, comparators=comparators), beats(data, w), n, gaps=w + 17)
    assert gappy.outputs == want


def test_timing_does_not_depend_on_the_values():
    """Same handshakes (same gap seed), different random bytes: identical cycle of every
    transfer (the formal miter proves it for all inputs; this is the simulation check)."""
    runs = []
    for seed in (1, 2, 3):
        want, data = _model_and_bytes(_seed(seed), 60)
        run = run_stream(GaussianCDT(in_bytes=2, comparators=6), beats(data, 2), 60, gaps=99)
        assert run.outputs == want
        runs.append((run.in_cycles, run.out_cycles))
    assert runs[0] == runs[1] == runs[2]
    # The extreme words (all-zero: magnitude 0; all-ones: the largest magnitude) take as long.
    extreme = bytes(8 * 10) + b"\xff" * (8 * 10)
    ext = run_stream(GaussianCDT(in_bytes=2, comparators=6), beats(extreme, 2), 20)
    assert ext.outputs == [0] * 10 + [-20] * 10
    plain = run_stream(GaussianCDT(in_bytes=2, comparators=6), beats(bytes(range(160)), 2), 20)
    assert ext.out_cycles == plain.out_cycles


@pytest.mark.parametrize("bits,sigma,bound", [(15, 3.2, 3), (31, 3.2, 6), (7, 1, 2), (127, 3.2, 6), (63, 10.0, 3)])
def test_other_tables(bits, sigma, bound):
    n = 60
    want, data = _model_and_bytes(_seed(bits), n, bits=bits, sigma=sigma, bound_sigmas=bound)
    table = gaussian_cdt_table(sigma, bound, bits)
    dut = GaussianCDT(sigma, bound, bits, in_bytes=4, comparators=min(5, len(table)))
    assert dut.table == table
    assert run_stream(dut, beats(data, 4), n, gaps=bits).outputs == want


def test_residues_serve_every_prime():
    moduli = (97, 12289, 65929217, (1 << 54) - 33)
    n = 100
    want, data = _model_and_bytes(_seed(5), n)
    dut = GaussianCDT(in_bytes=8, moduli=moduli)
    run = run_stream(dut, beats(data, 8), n, gaps=5)
    assert [o["value"] for o in run.outputs] == want
    for i, q in enumerate(moduli):
        assert [o["residues"][i] for o in run.outputs] == sampler.to_residues(want, q)
    assert run_stream(GaussianCDT(in_bytes=8, moduli=moduli), beats(data, 8), n).latency == dut.latency == 5


def test_scan_alone_on_words_with_a_non_monotone_table():
    table = (5, 100, 7, 2**15 - 1, 50)     # any table, used as given
    rng = random.Random(4)
    words = [rng.randrange(1 << 16) for _ in range(200)] + [0, 1, 2**16 - 1, 2**16 - 2, 101 << 1, 100 << 1]
    for comparators in (1, 2, 5):
        run = run_stream(CDTScan(table, 16, comparators), words, gaps=comparators)
        assert run.outputs == [sampler.gaussian_cdt_sample(w, table) for w in words]


def test_clear_restarts():
    from amaranth.sim import Simulator
    want, data = _model_and_bytes(_seed(8), 4)
    dut = GaussianCDT(in_bytes=4, comparators=4)
    got = []

    async def bench(ctx):
        # Half a word, then clear: those bytes must be forgotten.
        ctx.set(dut.i_stream.payload, 0xdeadbeef)
        ctx.set(dut.i_stream.valid, 1)
        await ctx.tick().until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)
        ctx.set(dut.abort, 1)
        await ctx.tick()
        ctx.set(dut.abort, 0)
        ctx.set(dut.o_stream.ready, 1)
        for beat in beats(data, 4):
            ctx.set(dut.i_stream.payload, beat)
            ctx.set(dut.i_stream.valid, 1)
            *_, ready, valid, payload = await ctx.tick().sample(dut.i_stream.ready, dut.o_stream.valid,
                                                                dut.o_stream.payload)
            while not ready:
                if valid:
                    got.append(payload)
                *_, ready, valid, payload = await ctx.tick().sample(dut.i_stream.ready, dut.o_stream.valid,
                                                                    dut.o_stream.payload)
            if valid:
                got.append(payload)
        ctx.set(dut.i_stream.valid, 0)
        while len(got) < 4:
            *_, valid, payload = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
            if valid:
                got.append(payload)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == want


@pytest.mark.parametrize("kwargs,name", [
    (dict(comparators=0), "comparators"), (dict(comparators=21), "comparators"),
    (dict(in_bytes=3), "in_bytes"), (dict(bits=62), "bits"), (dict(table=[1, 2], bits=62), "bits"),
    (dict(table=[1, 2**31], bits=31), "table"), (dict(table=[], bits=31), "table"),
    (dict(moduli=[17]), "moduli"), (dict(moduli=[]), "moduli"), (dict(sigma=-1), "sigma"),
])
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError) as err:
        GaussianCDT(**kwargs)
    assert err.value.name.partition("[")[0] == name       # a bad element i is named name[i]


def table_pmf(table, bits):
    """Exact P(|e| = c), c = 0..B, of the rule |e| = #{k : T[k] < u} for u uniform on bits bits,
    for any table (sorted or not: a non-monotone entry just moves where the count steps)."""
    s = sorted(table)
    b, top = len(s), (1 << bits) - 1
    sizes = [s[0] + 1] + [s[c] - s[c - 1] for c in range(1, b)] + [top - s[-1]]
    return [x / (1 << bits) for x in sizes]


def _gaussian_chi_square(values, table, bits):
    """Chi-square of the observed values against the exact distribution of the table."""
    b = len(table)
    p_mag = table_pmf(table, bits)
    probs = {0: p_mag[0]}
    for k in range(1, b + 1):
        probs[k] = probs[-k] = p_mag[k] / 2
    counts = {v: 0 for v in probs}
    for v in values:
        counts[v] += 1
    n = len(values)
    # Pool the tails where fewer than 5 samples are expected.
    keys = sorted(probs)
    cells, obs, exp = [], 0, 0.0
    for v in keys:
        obs += counts[v]
        exp += probs[v] * n
        if exp >= 5:
            cells.append((obs, exp))
            obs, exp = 0, 0.0
    if exp:
        o, e = cells.pop()
        cells.append((o + obs, e + exp))
    chi = sum((o - e) ** 2 / e for o, e in cells)
    return chi, len(cells) - 1


@pytest.mark.slow
def test_statistics_on_1e5_hardware_samples():
    """10^5 samples of the hardware (Amaranth simulation, ~40 s): chi-square against the exact
    table distribution (threshold: 99.99% quantile), mean, variance against sigma = 3.2."""
    n = 100_000
    data = seeded_xof(_seed(77), Domain.ERROR1).squeeze(8 * n)
    run = run_stream(GaussianCDT(in_bytes=8), beats(data, 8), n)
    values = run.outputs
    assert values == gaussian_cdt(seeded_xof(_seed(77), Domain.ERROR1), n)
    table = gaussian_cdt_table()
    chi, dof = _gaussian_chi_square(values, table, 63)
    assert chi < dof + 4 * math.sqrt(2 * dof) + 10, (chi, dof)
    arr = np.array(values, dtype=float)
    assert abs(arr.mean()) < 5 * 3.2 / math.sqrt(n)
    assert abs(arr.var() / 3.2 ** 2 - 1) < 0.03
    assert max(abs(v) for v in values) <= 20
    # The test can fail: a sigma-3.0 table is rejected by the same chi-square.
    chi_wrong, _ = _gaussian_chi_square(values, gaussian_cdt_table(3.0), 63)
    assert chi_wrong > dof + 4 * math.sqrt(2 * dof) + 10


def test_statistics_rejects_a_wrong_distribution_quickly():
    """The chi-square used on 10^5 hardware samples (slow test) accepts the model's own output and
    rejects a slightly wrong sigma, here on 2*10^4 model samples."""
    n = 20_000
    values = gaussian_cdt(seeded_xof(_seed(3), Domain.ERROR0), n)
    chi, dof = _gaussian_chi_square(values, gaussian_cdt_table(), 63)
    assert chi < dof + 4 * math.sqrt(2 * dof) + 10
    chi_wrong, _ = _gaussian_chi_square(values, gaussian_cdt_table(2.9), 63)
    assert chi_wrong > dof + 4 * math.sqrt(2 * dof) + 10
