"""Boundary polynomials for the NTT cores (issue 14 section 6), hardware against hhe_gen.models.ntt:
all 0, all q-1, alternating 0 / q-1, 1 / q-1 and q//2 / q//2+1, and polynomials whose transform is all q-1 or
alternating (the inverse model's output fed in), on small primes (17, 97, 113, 257, 353: butterfly sums
and differences land on q often; 113 also drives Barrett's remainder past 2q) and a 20-bit prime,
forward and inverse, iterative and pipelined (SDF and MDC), with ``sel`` switching primes."""

import pytest

from hhe_gen.cores.ntt import IterativeNtt, PipelinedNtt
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params.primes import abc_fhe_primes, ntt_primes
from hhe_gen.sim.ntt import Job, simulate
from hhe_gen.sim.ntt_pipelined import simulate_pipelined


def boundary_polys(n: int, q: int, inverse: bool) -> list[list[int]]:
    """The boundary inputs, then the inputs whose transform (forward or inverse) is all q-1 or
    alternates 0 / q-1."""
    alt = [0, q - 1] * (n // 2)
    polys = [[0] * n, [q - 1] * n, alt, [1, q - 1] * (n // 2), [q - 1] + [0] * (n - 1),
             [q // 2, q // 2 + 1] * (n // 2)]
    return polys + [(ntt if inverse else intt)(s, q) for s in ([q - 1] * n, alt)]


@pytest.mark.parametrize("n, lanes, moduli, kind", [
    (8, 2, (97, 113), "barrett"),
    (8, 1, (17,), "barrett"),
    (16, 4, (257, 353), "barrett"),
    (8, 2, tuple(ntt_primes(8, 20, 1)), "barrett"),
    (8, 2, tuple(p.q for p in abc_fhe_primes(8, 29)[:1]), "ntt-montgomery"),
])
def test_iterative_boundaries(n, lanes, moduli, kind):
    dut = IterativeNtt(n, lanes, list(moduli), kind=kind)
    jobs = [Job(tuple(p), inverse, sel) for sel, q in enumerate(moduli) for inverse in (False, True)
            for p in boundary_polys(n, q, inverse)]
    for job, res in zip(jobs, simulate(dut, jobs)):
        q = moduli[job.sel]
        assert res.output == (intt(job.poly, q) if job.inverse else ntt(job.poly, q)), job


@pytest.mark.parametrize("n, lanes, arch, moduli", [
    (8, 1, "sdf", (97, 113)),
    (16, 2, "mdc", (257, 353)),
])
@pytest.mark.parametrize("inverse", [False, True])
def test_pipelined_boundaries(n, lanes, arch, moduli, inverse):
    dut = PipelinedNtt(n, lanes, list(moduli), arch=arch, inverse=inverse, memory_threshold=4)
    polys = [(p, sel) for sel, q in enumerate(moduli) for p in boundary_polys(n, q, inverse)]
    for (poly, sel), res in zip(polys, simulate_pipelined(dut, polys)):
        q = moduli[sel]
        assert res.output == (intt(poly, q) if inverse else ntt(poly, q)), (poly, sel)
