"""hhe_gen.flow.verilator (generic Verilog export + C++ driver + cached build) on a small NTT core:
Verilator and Amaranth's simulator give the same outputs at the same cycles, and a second build
of the same design comes from the cache."""

import random

import pytest

from hhe_gen.cores.ntt import IterativeNtt
from hhe_gen.sim.ntt import Job, simulate, verilate
from hhe_gen.models.ntt import ntt
from hhe_gen.params.primes import ntt_primes

pytestmark = [pytest.mark.toolchain]


@pytest.mark.parametrize("banking", ["dual", "single"])
def test_verilator_equals_simulator(tmp_path, monkeypatch, banking):
    monkeypatch.setenv("HHE_GEN_VERILATOR_CACHE", str(tmp_path))
    n, lanes = 16, 2
    qs = ntt_primes(n, 40, 2)               # 80-bit beats: a port wider than 64 bits
    rng = random.Random(banking)
    jobs = [Job(tuple(rng.randrange(q) for _ in range(n)), inv, i) for i, q in enumerate(qs)
            for inv in (False, True)] + [Job((1,) + (0,) * (n - 1), False, 0)]
    got = verilate(IterativeNtt(n, lanes, qs, banking=banking), jobs)
    want = simulate(IterativeNtt(n, lanes, qs, banking=banking), jobs)
    assert [(r.output, r.cmd, r.first_out, r.done) for r in got] == \
        [(r.output, r.cmd, r.first_out, r.done) for r in want]
    assert got[-1].output == ntt(jobs[-1].poly, qs[0])

    from hhe_gen.flow.verilator import build
    model = build(IterativeNtt(n, lanes, qs, banking=banking), "ntt")
    assert model.cached
