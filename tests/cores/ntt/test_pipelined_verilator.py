"""PipelinedNtt at N = 2^12, 2^13 (and 2^16) in Verilator (hhe_gen.flow.verilator, cached build): bit-exact
forward / inverse against hhe_gen.models.ntt with a different prime per polynomial, corner inputs,
back-to-back polynomials at full rate, and the exact latency and N/P initiation interval."""

import random

import pytest

from hhe_gen.cores.ntt import PipelinedNtt
from hhe_gen.sim.ntt_pipelined import verilate_pipelined
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params.presets import preset
from hhe_gen.params.primes import ntt_primes

pytestmark = [pytest.mark.toolchain, pytest.mark.slow]


def _run(dut, qs, seed, corners=True):
    n, rng = dut.n, random.Random(seed)
    polys = [([rng.randrange(qs[i % len(qs)]) for _ in range(n)], i % len(qs)) for i in range(len(qs))]
    if corners:
        q = qs[-1]
        polys += [([0] * n, len(qs) - 1), ([q - 1] * n, len(qs) - 1), ([1] + [0] * (n - 1), 0)]
    res = verilate_pipelined(dut, polys)
    for i, ((poly, sel), r) in enumerate(zip(polys, res)):
        q = qs[sel]
        assert r.output == (intt(poly, q) if dut.inverse else ntt(poly, q))
        assert r.sels == {sel} and r.lasts[-1] == 1 and sum(r.lasts) == 1
        assert r.first_in == i * dut.beats                       # back to back at full rate
        assert r.first_out - r.first_in == dut.latency
        assert r.last_out - r.first_out == dut.beats - 1
    for a, b in zip(res, res[1:]):
        assert b.first_out - a.first_out == dut.cycles_per_polynomial
    return res


@pytest.mark.parametrize("arch,lanes,inverse", [("sdf", 1, False), ("sdf", 1, True), ("mdc", 2, False),
                                                ("mdc", 2, True)])
def test_n4096(arch, lanes, inverse):
    n = 1 << 12
    qs = ntt_primes(n, 32, 3)
    dut = PipelinedNtt(n, lanes, qs, arch=arch, inverse=inverse)
    _run(dut, qs, 12)
    # the formula for these: SDF P = 1 forward 1 + (N - 1) + 12 (L + 1)
    if arch == "sdf" and not inverse:
        assert dut.latency == 1 + (n - 1) + 12 * (dut.butterfly_latency + 1)


@pytest.mark.parametrize("arch,lanes,inverse", [("sdf", 4, True), ("mdc", 8, False)])
def test_dna_hhe_n8192(arch, lanes, inverse):
    """DNA-HHE: N = 2^13, three 54-bit special primes, special-prime Barrett (k = 54)."""
    ring = preset("dna-hhe").ring
    qs = list(ring.moduli)
    dut = PipelinedNtt(ring.n, lanes, qs, arch=arch, inverse=inverse, kind="special-barrett", k=54)
    _run(dut, qs, 13)


def test_n65536():
    """N = 2^16, SDF P = 1 (16 butterflies; P = 16 means 224 of them and a build too long here)."""
    n = 1 << 16
    qs = ntt_primes(n, 30, 2)
    dut = PipelinedNtt(n, 1, qs, arch="sdf")
    _run(dut, qs, 16, corners=False)
