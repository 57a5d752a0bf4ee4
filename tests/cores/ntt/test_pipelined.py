"""PipelinedNtt (SDF / MDC) in Amaranth's simulator: bit-exact against hhe_gen.models.ntt for
several primes (run-time ``sel`` per polynomial), random and corner inputs, back-to-back
polynomials, random valid/ready gaps, exact latency and initiation interval N/P; the plan's
output order; parameter errors.  Small sizes by default, N = 64 .. 256 in the slow set."""

import random

import pytest

from hhe_gen.cores.ntt import PipelinedNtt, small_pipelined_ntt
from hhe_gen.cores.ntt.pipelined_plan import from_model_order, output_positions, plan_stages
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params import abc_fhe_primes, dna_hhe_primes
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.primes import ntt_primes
from hhe_gen.sim.ntt_pipelined import simulate_pipelined

def _polys(n, qs, rng, count, corners):
    polys = []
    for i in range(count):
        sel = i % len(qs)
        polys.append(([rng.randrange(qs[sel]) for _ in range(n)], sel))
    if corners:                 # zeros, all q-1, a single 1, a single q-1 at the top
        s = len(qs) - 1
        polys += [([0] * n, s), ([qs[s] - 1] * n, s), ([1] + [0] * (n - 1), 0),
                  ([0] * (n - 1) + [qs[0] - 1], 0)]
    return polys


def _latency_formula(dut):
    """The documented latency, computed from the structure (not from the core's own sum): 1 (output
    register) + X (inverse) + per butterfly bit: SDF temporal d + L + 1, spatial L + 1; MDC L + 1
    per bit plus each commutator's delay d."""
    L, n_log, lp = dut.butterfly_latency, dut.n_log, dut.lanes_log
    total = 1 + dut.scale_latency + n_log * (L + 1)
    if dut.arch == "sdf":
        total += sum(1 << (k - lp) for k in range(lp, n_log))          # temporal bits: d = 2^(k - lp)
    else:
        total += sum(1 << st.time_pos for st in dut.stages if st.kind == "commutator")
    return total


def _check(dut, polys, results, qs):
    beats = dut.beats
    assert len(results) == len(polys)
    for (poly, sel), r in zip(polys, results):
        exp = intt(poly, qs[sel]) if dut.inverse else ntt(poly, qs[sel])
        assert r.output == exp
        assert r.sels == {sel}
        assert r.lasts == [0] * (beats - 1) + [1]
    return results


def _full_rate(dut, polys, qs):
    res = _check(dut, polys, simulate_pipelined(dut, polys), qs)
    assert dut.latency == _latency_formula(dut)
    for i, r in enumerate(res):
        assert r.first_in == i * dut.beats and r.last_in == r.first_in + dut.beats - 1   # back to back
        assert r.first_out - r.first_in == dut.latency
        assert r.last_out - r.first_out == dut.beats - 1
    for a, b in zip(res, res[1:]):
        assert b.first_out - a.first_out == dut.cycles_per_polynomial == dut.beats
    return res


@pytest.mark.parametrize("n,lanes,arch,inverse", [
    (8, 1, "sdf", False), (8, 1, "sdf", True),
    (16, 2, "mdc", False), (16, 2, "mdc", True),
    (32, 4, "sdf", True), (32, 4, "mdc", False),
])
def test_full_rate(n, lanes, arch, inverse):
    qs = ntt_primes(n, 20, 3)
    dut = PipelinedNtt(n, lanes, qs, arch=arch, inverse=inverse, memory_threshold=4)
    _full_rate(dut, _polys(n, qs, random.Random(n * lanes), 3, corners=True), qs)


@pytest.mark.parametrize("n,lanes,arch,inverse", [
    (16, 1, "sdf", False), (16, 2, "mdc", True), (32, 2, "sdf", True),
])
def test_gaps(n, lanes, arch, inverse):
    """Random valid/ready gaps: nothing lost or duplicated, outputs exact; stalls only add cycles."""
    qs = ntt_primes(n, 20, 2)
    dut = PipelinedNtt(n, lanes, qs, arch=arch, inverse=inverse, memory_threshold=4)
    polys = _polys(n, qs, random.Random(7), 4, corners=False)
    res = _check(dut, polys, simulate_pipelined(dut, polys, in_gaps=0.3, out_gaps=0.3, seed=n), qs)
    for r in res:
        assert r.first_out - r.first_in >= dut.latency


def test_roundtrip_formal_sizes():
    """The small instances for the formal miter: N = 8, q = 17 (SDF) and N = 16, q = 257, 353 (MDC)."""
    fwd = small_pipelined_ntt(8)
    inv = small_pipelined_ntt(8, inverse=True)
    assert fwd.moduli == (17,) and fwd.n == 8
    rng = random.Random(17)
    polys = [([rng.randrange(17) for _ in range(8)], 0) for _ in range(3)]
    out = _full_rate(fwd, polys, [17])
    back = _full_rate(inv, [(r.output, 0) for r in out], [17])
    assert [r.output for r in back] == [p for p, _ in polys]
    dut = small_pipelined_ntt(16, 2, arch="mdc", rns=True)
    assert dut.moduli == (257, 353)
    _full_rate(dut, _polys(16, [257, 353], rng, 2, corners=False), [257, 353])
    for n, rns, qs in ((16, False, (97,)), (32, True, (257, 449))):
        other = small_pipelined_ntt(n, rns=rns)
        mark_unused(other)          # only its parameters are looked at
        assert other.moduli == qs
    with pytest.raises(ParameterError):
        small_pipelined_ntt(64)


def test_ntt_montgomery_kind():
    """A Montgomery kind: constants stored times R, outputs still the model's."""
    n = 16
    qs = [p.q for p in abc_fhe_primes(n, 29)][:2]
    for arch, inverse in (("sdf", True), ("mdc", False)):
        dut = PipelinedNtt(n, 2, qs, arch=arch, inverse=inverse, kind="ntt-montgomery")
        _full_rate(dut, _polys(n, qs, random.Random(3), 2, corners=False), qs)


@pytest.mark.slow
@pytest.mark.parametrize("kind,extra", [("montgomery", {"word_bits": 18}), ("special-barrett", {"k": 30})])
def test_other_kinds(kind, extra):
    n = 32
    if kind == "special-barrett":
        qs = [p.q for p in dna_hhe_primes(30, n, count=2)]
    else:
        qs = ntt_primes(1 << 17, 30, 2)
    for arch, inverse in (("sdf", False), ("mdc", True)):
        dut = PipelinedNtt(n, 2, qs, arch=arch, inverse=inverse, kind=kind, **extra)
        _full_rate(dut, _polys(n, qs, random.Random(4), 2, corners=False), qs)


@pytest.mark.slow
@pytest.mark.parametrize("arch", ["sdf", "mdc"])
@pytest.mark.parametrize("inverse", [False, True])
@pytest.mark.parametrize("n,lanes", [(64, 1), (64, 2), (64, 8), (128, 4), (256, 1), (256, 2), (256, 16)])
def test_sizes(n, lanes, arch, inverse):
    if arch == "mdc" and lanes == 1:
        pytest.skip("MDC needs 2 paths")
    qs = ntt_primes(n, 30, 2)
    dut = PipelinedNtt(n, lanes, qs, arch=arch, inverse=inverse)      # default threshold: memories
    _full_rate(dut, _polys(n, qs, random.Random(n + lanes), 2, corners=True), qs)
    polys = _polys(n, qs, random.Random(1), 2, corners=False)
    _check(dut, polys, simulate_pipelined(dut, polys, in_gaps=0.2, out_gaps=0.4, seed=2), qs)


# -- plan ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n_log,lanes_log", [(3, 0), (5, 1), (8, 2), (10, 4), (12, 1)])
def test_plan_orders(n_log, lanes_log):
    for arch in ("sdf", "mdc"):
        if arch == "mdc" and lanes_log == 0:
            continue
        for inverse in (False, True):
            pos = output_positions(n_log, lanes_log, arch, inverse)
            assert sorted(pos) == list(range(1 << n_log))
            if arch == "sdf":
                assert pos == list(range(1 << n_log))         # the SDF emits the model's order
            stages, _ = plan_stages(n_log, lanes_log, arch, inverse)
            bits = [st.k for st in stages if st.kind != "commutator"]
            assert bits == (list(range(n_log)) if inverse else list(range(n_log - 1, -1, -1)))
            if arch == "mdc":
                assert all(st.kind != "temporal" for st in stages)
            vals = list(range(100, 100 + (1 << n_log)))
            stream = from_model_order(vals, n_log, lanes_log, arch, inverse)
            assert [vals[j] for j in pos] == stream


def test_mdc_output_order_example():
    """N = 16, P = 2, forward MDC: the documented permutation (lane = index bit 0; the beat
    counter carries index bits 2, 3, 1 from its bit 0 up)."""
    pos = output_positions(4, 1, "mdc", False)
    exp = []
    for beat in range(8):
        for lane in range(2):
            exp.append(lane | ((beat >> 2) & 1) << 1 | (beat & 1) << 2 | ((beat >> 1) & 1) << 3)
    assert pos == exp


def test_resources():
    """SDF P = 1 stores N - 1 words minus what the butterflies' pipelines hold (d - L per long
    stage, 2d per short); MDC P/2 butterflies per stage."""
    n, L = 1 << 10, None
    dut = PipelinedNtt(n, 1, ntt_primes(n, 30, 1))
    mark_unused(dut)
    L = dut.butterfly_latency
    assert dut.butterflies == 10
    long_ = [1 << k for k in range(10) if 1 << k > L]
    short = [1 << k for k in range(10) if 1 << k <= L]
    mem = [d - L for d in long_]
    assert dut.delay_words == sum(w - 1 if w >= 16 else w for w in mem) + 2 * sum(short)
    mdc = PipelinedNtt(n, 4, ntt_primes(n, 30, 1), arch="mdc")
    mark_unused(mdc)
    assert mdc.butterflies == 2 * 10 and mdc.cycles_per_polynomial == n // 4


@pytest.mark.parametrize("kw,name", [
    (dict(n=4), "n"), (dict(n=12), "n"), (dict(n=1 << 17), "n"),
    (dict(lanes=0), "lanes"), (dict(lanes=3), "lanes"), (dict(lanes=32), "lanes"), (dict(lanes=True), "lanes"),
    (dict(lanes=1, arch="mdc"), "lanes"),
    (dict(arch="r4sdf"), "arch"), (dict(inverse="yes"), "inverse"),
    (dict(moduli=[]), "moduli"), (dict(moduli=[97]), "moduli[0]"), (dict(moduli=[12289 * 4 + 1]), "moduli[0]"),
    (dict(memory_threshold=2), "memory_threshold"),
    (dict(kind="karatsuba"), "zq.kind"), (dict(latency=1), "latency"), (dict(target="asic"), "target"),
])
def test_bad_parameters(kw, name):
    args = dict(n=32, lanes=4, moduli=ntt_primes(32, 20, 2))
    args.update(kw)
    with pytest.raises(ParameterError) as err:
        PipelinedNtt(**args)
    assert err.value.name == name


def test_bench_cases():
    """hhe-gen bench ntt: the pipelined cases are registered; the cycle case reports N/P and the
    documented latency (recomputed here from the structure)."""
    from hhe_gen.apps.bench import cases
    from hhe_gen.apps.bench.ntt import pipelined_cycles
    names = {c.name for c in cases(["ntt"])}
    quick = {c.name for c in cases(["ntt"], quick=True)}
    assert {"pipe-sdf-n12-p1", "pipe-mdc-n16-p32", "pipe-sim-mdc-n64-p2"} <= quick
    assert {"pipe-synth-sdf-n12-54b", "pipe-synth-mdc-n12-54b"} <= names - quick
    res = pipelined_cycles("sdf", 12, 1)
    L = res["butterfly_latency"]
    assert res["cycles_per_poly"] == 4096 and res["latency_fwd"] == 1 + 4095 + 12 * (L + 1)
    assert res["butterflies"] == 12
    mdc = pipelined_cycles("mdc", 12, 2)
    assert mdc["cycles_per_poly"] == 2048 and mdc["butterflies"] == 12
