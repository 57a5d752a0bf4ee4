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
    register) + per butterfly bit: SDF temporal d + L + 1, spatial L + 1; MDC L + 1
    per bit plus each commutator's delay d."""
    L, n_log, lp = dut.butterfly_latency, dut.n_log, dut.lanes_log
    total = 1 + n_log * (L + 1)
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


# -- the SDF feedback loop (a temporal stage with d > L), reset, resource report ----------------------
def _loop_stages(dut):
    """The temporal stages built as the SDF loop: distance d = 2^p beats > L."""
    return [st for st in dut.stages if st.kind == "temporal" and 1 << st.time_pos > dut.butterfly_latency]


def _beats(dut, polys):
    """The input stream of ``polys``: per beat (data, sel); sel counts on a polynomial's first beat
    only, the others carry a different one on purpose."""
    P, nsel = dut.lanes, len(dut.moduli)
    return [(poly[b * P:(b + 1) * P], sel if b == 0 else (sel + 1) % nsel)
            for poly, sel in polys for b in range(dut.beats)]


def _run_bounded(dut, polys, cycles, *, before=None):
    """Full rate for exactly ``cycles`` cycles (input valid until every beat of ``polys`` is taken,
    output always ready), the core inside a module with its own sync domain.  With ``before`` (a
    list of input beats (data, sel)) those beats go first, then the input is not valid for one
    cycle in which the domain's reset is high, then ``polys``.  Bounded, unlike
    simulate_pipelined: a core that loses output beats ends the run with too few of them instead
    of waiting for them forever.  Returns the cycles the beats of ``polys`` were taken, the reset
    cycle (None without ``before``) and every valid output beat as (cycle, data list, sel, last)."""
    from amaranth.hdl import ClockDomain, Module
    from amaranth.sim import Simulator

    top = Module()
    top.domains.sync = cd = ClockDomain("sync")
    top.submodules.dut = dut
    P = dut.lanes
    in_cycles, outs, reset = [], [], []

    async def producer(ctx):
        cycle = 0

        async def send(beats, taken):
            nonlocal cycle
            for data, sel in beats:
                ctx.set(dut.i_stream.payload.data, data)
                ctx.set(dut.i_stream.payload.sel, sel)
                ctx.set(dut.i_stream.valid, 1)
                while True:
                    _, _, ready = await ctx.tick().sample(dut.i_stream.ready)     # before the edge
                    cycle += 1
                    if ready:
                        taken.append(cycle - 1)
                        break
            ctx.set(dut.i_stream.valid, 0)

        if before is not None:
            await send(before, [])
            ctx.set(cd.rst, 1)
            await ctx.tick()
            ctx.set(cd.rst, 0)
            reset.append(cycle)
            cycle += 1
        await send(_beats(dut, polys), in_cycles)

    async def consumer(ctx):
        ctx.set(dut.o_stream.ready, 1)
        for cycle in range(cycles):
            _, _, valid, payload = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
            if valid:
                outs.append((cycle, [int(payload.data[p]) for p in range(P)], int(payload.sel),
                             int(payload.last)))

    sim = Simulator(top)
    sim.add_clock(1e-6)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    sim.run()
    return in_cycles, (reset[0] if reset else None), outs


def _check_back_to_back(dut, polys, outs, first_out, qs):
    """``outs`` (from _run_bounded) are exactly the polynomials' N/P beats each, one per cycle
    from ``first_out`` on, equal to the model, with each polynomial's sel and last on its final beat."""
    beats = dut.beats
    assert len(outs) == len(polys) * beats, f"{len(outs)} valid output beats, {len(polys) * beats} expected"
    assert [c for c, _, _, _ in outs] == list(range(first_out, first_out + len(outs)))
    for i, (poly, sel) in enumerate(polys):
        chunk = outs[i * beats:(i + 1) * beats]
        got = dut.to_model_order([v for _, data, _, _ in chunk for v in data])
        assert got == (intt(poly, qs[sel]) if dut.inverse else ntt(poly, qs[sel])), f"polynomial {i}"
        assert {s for _, _, s, _ in chunk} == {sel}
        assert [la for _, _, _, la in chunk] == [0] * (beats - 1) + [1]


@pytest.mark.parametrize("inverse,threshold", [(False, 16), (True, 4)])
def test_sdf_feedback_loop(inverse, threshold):
    """SDF N = 32, P = 1: the first forward (last inverse) stage has d = 16 > L, the SDF loop
    (a d - L word line closed through the butterfly that also carries the valid / sel tag; in
    registers at threshold 16, a memory at threshold 4), which the small cases above never build.
    Forward and inverse: bit-exact, back to back at full rate with the documented latency (in a
    bounded run, so a loop that loses its beats fails rather than hangs), then with random gaps."""
    n = 32
    qs = ntt_primes(n, 20, 2)
    dut = PipelinedNtt(n, 1, qs, inverse=inverse, memory_threshold=threshold)
    assert [1 << st.time_pos for st in _loop_stages(dut)] == [16]
    assert dut.latency == _latency_formula(dut)
    polys = _polys(n, qs, random.Random(32 + inverse), 2, corners=True)
    in_cycles, _, outs = _run_bounded(dut, polys, len(polys) * n + dut.latency + 2 * n)
    assert in_cycles == list(range(len(polys) * n))
    _check_back_to_back(dut, polys, outs, dut.latency, qs)
    polys = _polys(n, qs, random.Random(7), 2, corners=False)
    res = _check(dut, polys, simulate_pipelined(dut, polys, in_gaps=0.3, out_gaps=0.3, seed=5), qs)
    for r in res:
        assert r.first_out - r.first_in >= dut.latency


@pytest.mark.parametrize("inverse,cut", [(False, 48), (True, 112)])
def test_reset_mid_stream(inverse, cut):
    """A reset in mid-stream (SDF N = 32, P = 1, its loop line of d - L = 8 words in memory at
    threshold 4; memories keep their words over a reset) after ``cut`` input beats: 1.5
    polynomials forward (the loop is the first stage), 3.5 inverse (the loop is the last stage:
    the data needs about a latency to reach it).  Before the reset the output is a prefix of the
    model's stream; after it exactly the 2 x N/P beats of the two polynomials sent after it come
    out, one latency after the first of them, equal to the model - none of the words or valid /
    sel tags left in the lines before the reset leaks out."""
    n = 32
    qs = ntt_primes(n, 20, 2)
    dut = PipelinedNtt(n, 1, qs, inverse=inverse, memory_threshold=4)
    assert _loop_stages(dut)
    rng = random.Random(5 + inverse)
    polys = [([rng.randrange(1, qs[i % 2]) for _ in range(n)], i % 2) for i in range(6)]
    early, later = polys[:4], polys[4:]
    before = _beats(dut, early)[:cut]
    in_cycles, reset, outs = _run_bounded(dut, later, cut + 1 + 3 * dut.latency + 2 * n, before=before)
    assert reset == cut
    assert in_cycles == list(range(reset + 1, reset + 1 + 2 * n))
    pre = [o for o in outs if o[0] <= reset]                  # taken up to the reset's cycle
    assert [c for c, _, _, _ in pre] == list(range(dut.latency, dut.latency + len(pre)))
    stream = [v for poly, sel in early for v in (intt(poly, qs[sel]) if inverse else ntt(poly, qs[sel]))]
    assert [v for _, data, _, _ in pre for v in data] == stream[:len(pre)]   # SDF: the model's order
    assert len(pre) == max(0, reset + 1 - dut.latency)
    _check_back_to_back(dut, later, outs[len(pre):], reset + 1 + dut.latency, qs)


def _hardware_storage(dut):
    """What the elaborated core really instantiates, found by walking its fragment tree: the delay
    lines as (delay, words, in memory) - a line with a memory stores that memory's depth, one
    without stores ``delay`` one-word registers - the depths of the other memories (the twiddle
    ROMs; one-word tables are constants, not memories) and the number of butterflies."""
    from amaranth.hdl import Fragment
    from amaranth.lib import memory

    from hhe_gen.cores.arith import Butterfly
    from hhe_gen.cores.ntt import DelayLine

    def of(frag, cls):
        return next((o for o in getattr(frag, "origins", None) or () if isinstance(o, cls)), None)

    def subs(frag):
        return [sub for sub, _, _ in frag.subfragments]

    lines, roms, butterflies = [], [], 0
    for sub in subs(Fragment.get(dut, None)):
        if of(sub, DelayLine) is not None:
            dl = of(sub, DelayLine)
            mems = [of(x, memory.Memory) for x in subs(sub) if of(x, memory.Memory) is not None]
            assert len(mems) <= 1
            lines.append((dl.delay, mems[0].depth if mems else dl.delay, bool(mems)))
        elif of(sub, memory.Memory) is not None:
            roms.append(of(sub, memory.Memory).depth)
        elif of(sub, Butterfly) is not None:
            butterflies += 1
    return lines, roms, butterflies


@pytest.mark.parametrize("n,lanes,nq,arch,inverse,threshold", [
    (64, 2, 1, "mdc", False, 16),       # commutator lines of d = 16 = the threshold
    (32, 1, 2, "sdf", True, 8),         # the SDF loop's line of d - L = 8 = the threshold
    (16, 1, 1, "sdf", False, 8),        # feed-forward lines of d = 8; one prime: a constant twiddle
    (32, 4, 1, "mdc", True, 4),
])
def test_resources_match_hardware(n, lanes, nq, arch, inverse, threshold):
    """The resource report (delay_words, memory_delay_words, twiddle_words, butterflies) equals
    what the elaborated hardware instantiates (counted from its memories and delay lines), in
    configurations with a delay line exactly ``memory_threshold`` long (a memory of d - 1 words)
    and with one-word twiddle tables (constants, no ROM)."""
    dut = PipelinedNtt(n, lanes, ntt_primes(n, 20, nq), arch=arch, inverse=inverse,
                       memory_threshold=threshold)
    lines, roms, butterflies = _hardware_storage(dut)
    assert any(d == threshold for d, _, _ in lines)
    for d, words, in_memory in lines:
        assert in_memory == (d >= threshold) and words == (d - 1 if in_memory else d)
    assert dut.delay_words == sum(w for _, w, _ in lines)
    assert dut.memory_delay_words == sum(w for _, w, m in lines if m) > 0
    assert dut.twiddle_words == sum(roms)
    assert dut.butterflies == butterflies
    if nq == 1:         # a single prime: the table of the first forward / last inverse stage is psi^+-brv(1)
        one = [st for st in dut.stages if st.kind != "commutator" and st.k == n.bit_length() - 2]
        assert [len(t) for t, _ in dut.stage_tables(one[0])[0]] == [1]
