"""IterativeNtt at N >= 2^12 in Verilator (hhe_gen.flow.verilator: Verilog export, generic C++ driver,
cached build): bit-exact forward and inverse transforms against hhe_gen.models.ntt with run-time
prime switching, corner inputs, and the exact cycle counts of the documented formulas.

A build of the 8-lane core at N = 2^13 takes about a minute on this machine (cached afterwards
under ~/.cache/hhe-gen/verilator), so these are toolchain + slow tests."""

import random

import pytest

from hhe_gen.cores.ntt import IterativeNtt
from hhe_gen.sim.ntt import Job, verilate
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params.presets import preset
from hhe_gen.params.primes import ntt_primes

pytestmark = [pytest.mark.toolchain, pytest.mark.slow]


def _run(dut, qs, rng, corners=True):
    n = dut.n
    jobs = []
    for i, q in enumerate(qs):
        jobs.append(Job(tuple(rng.randrange(q) for _ in range(n)), False, i))
        jobs.append(Job(tuple(rng.randrange(q) for _ in range(n)), True, i))
    if corners:
        q, s = qs[0], 0
        one = tuple([1] + [0] * (n - 1))
        for poly in ((q - 1,) * n, one):
            jobs += [Job(poly, False, s), Job(poly, True, s)]
    results = verilate(dut, jobs)
    for job, res in zip(jobs, results):
        q = qs[job.sel]
        assert res.output == (intt(job.poly, q) if job.inverse else ntt(job.poly, q))
        t = dut.transform_cycles(job.inverse)
        assert res.first_out == res.cmd + 2 + dut.load_cycles + t
        assert res.done + 1 - res.cmd == dut.command_cycles(job.inverse)
    for a, b in zip(results, results[1:]):
        assert b.cmd == a.done + 1
    return results


@pytest.mark.parametrize("log_n", [12, 13])
def test_barrett_p8(log_n):
    n = 1 << log_n
    qs = ntt_primes(n, 32, 3)
    dut = IterativeNtt(n, 8, qs)
    _run(dut, qs, random.Random(log_n))
    # the schedule's claim for these sizes: within a few cycles of bound + depth - 1
    for inv in (False, True):
        assert dut.bound + dut.depth - 1 <= dut.transform_cycles(inv) <= dut.bound + dut.depth + 8


def test_dna_hhe_configuration():
    """DNA-HHE: N = 2^13, three 54-bit special primes, special-prime Barrett (k = 54)."""
    ring = preset("dna-hhe").ring
    qs = list(ring.moduli)
    assert ring.n == 1 << 13 and len(qs) == 3 and all(q.bit_length() == 54 for q in qs)
    dut = IterativeNtt(ring.n, 8, qs, kind="special-barrett", k=54)
    _run(dut, qs, random.Random(54), corners=False)


def test_n16():
    n = 1 << 16
    qs = ntt_primes(n, 36, 1)
    dut = IterativeNtt(n, 8, qs)
    _run(dut, qs, random.Random(16), corners=False)


def test_single_port_n13():
    """Single-port banks at N = 2^13, P = 8 (32 one-address banks)."""
    n = 1 << 13
    qs = ntt_primes(n, 32, 2)
    dut = IterativeNtt(n, 8, qs, banking="single")
    _run(dut, qs, random.Random(113), corners=False)
    assert dut.transform_cycles(False) <= dut.bound * 1.02


def test_otf_twiddles_n13():
    """Twiddles on the fly at N = 2^13, P = 8, 32-bit primes."""
    n = 1 << 13
    qs = ntt_primes(n, 32, 2)
    dut = IterativeNtt(n, 8, qs, twiddles="otf")
    _run(dut, qs, random.Random(213), corners=False)
