"""IterativeNtt in Amaranth's simulator: bit-exact against hhe_gen.models.ntt (forward and inverse,
run-time prime switching, random and corner inputs, round trips), exact cycle counts against the
documented formulas and against stage_starts, stream gaps, parameter checks."""

import random

import pytest

from hhe_gen.cores.ntt import IterativeNtt
from hhe_gen.cores.ntt.schedule import ntt_schedule, stage_starts
from hhe_gen.cores.unused import mark_unused
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.primes import abc_fhe_primes, dna_hhe_primes, ntt_primes
from hhe_gen.sim.ntt import Job, simulate

def _jobs(n, qs, rng, corners=True):
    """Random forward/inverse jobs on alternating primes plus the corner inputs."""
    jobs = []
    for i, q in enumerate(qs):
        jobs.append(Job(tuple(rng.randrange(q) for _ in range(n)), False, i))
        jobs.append(Job(tuple(rng.randrange(q) for _ in range(n)), True, i))
    if corners:
        q = qs[-1]
        s = len(qs) - 1
        one = tuple([1] + [0] * (n - 1))
        for poly in ((0,) * n, (q - 1,) * n, one, tuple(reversed(one))):
            jobs += [Job(poly, False, s), Job(poly, True, s)]
    return jobs


def _check(dut, jobs, results, qs, exact_cycles=True):
    for job, res in zip(jobs, results):
        q = qs[job.sel]
        want = intt(job.poly, q) if job.inverse else ntt(job.poly, q)
        assert res.output == want, f"inverse={job.inverse} sel={job.sel}"
        if exact_cycles:
            t = dut.transform_cycles(job.inverse)
            assert res.first_in == res.cmd + 1
            assert res.last_in == res.cmd + dut.beats
            # first output: command + load (N/P beats + L) + transform + 1 read cycle
            assert res.first_out == res.cmd + 1 + dut.load_cycles + t + 1
            assert res.done == res.first_out + dut.beats - 1
            assert res.done + 1 - res.cmd == dut.command_cycles(job.inverse)
    if exact_cycles:
        for a, b in zip(results, results[1:]):
            assert b.cmd == a.done + 1


SMALL = [(8, 1), (8, 2), (8, 4), (16, 1), (16, 4), (16, 8), (64, 1), (64, 2), (64, 4), (64, 8),
         (256, 4)]
SLOW = [(16, 2), (64, 16), (64, 32), (256, 1), (256, 2), (256, 8), (256, 16)]


@pytest.mark.parametrize("n,lanes", SMALL)
def test_model_and_cycles(n, lanes):
    qs = ntt_primes(n, 20, 2)
    dut = IterativeNtt(n, lanes, qs)
    rng = random.Random(n * 100 + lanes)
    jobs = _jobs(n, qs, rng, corners=n <= 64)
    _check(dut, jobs, simulate(dut, jobs), qs)


@pytest.mark.slow
@pytest.mark.parametrize("n,lanes", SLOW)
def test_model_and_cycles_more(n, lanes):
    qs = ntt_primes(n, 24, 3)
    dut = IterativeNtt(n, lanes, qs)
    rng = random.Random(n * 100 + lanes)
    jobs = _jobs(n, qs, rng)
    _check(dut, jobs, simulate(dut, jobs), qs)


def test_transform_cycles_are_stage_starts():
    """The controller's transform length is stage_starts' total at depth L + 4 (read, the two
    crossbar registers, the operand registers), within bound + depth - 1 + a few cycles."""
    qs = ntt_primes(64, 20, 1)
    for lanes in (1, 2, 4, 8):
        dut = IterativeNtt(64, lanes, qs)
        mark_unused(dut)            # only the plan is checked here
        assert dut.xbar_regs == (1, 1) and dut.depth == dut.butterfly_latency + 4
        assert dut.load_wait == dut.butterfly_latency + 1
        for inv in (False, True):
            starts, total = stage_starts(ntt_schedule(64, lanes, inv), dut.butterfly_latency + 4)
            assert dut.transform_cycles(inv) == total
            assert tuple(starts) == dut.starts[inv]
            assert dut.bound + dut.depth - 1 <= total


def test_round_trip_and_gaps():
    """INTT(NTT(a)) = a through the hardware twice (the first output fed back), with random gaps
    on both streams (results unchanged; gaps only add cycles)."""
    n, lanes = 32, 4
    qs = ntt_primes(n, 24, 2)
    dut = IterativeNtt(n, lanes, qs)
    rng = random.Random(7)
    a = tuple(rng.randrange(qs[1]) for _ in range(n))
    fwd = simulate(dut, [Job(a, False, 1)], gaps=0.3, seed=3)[0]
    assert fwd.output == ntt(a, qs[1])
    back = simulate(dut, [Job(tuple(fwd.output), True, 1)], gaps=0.3, seed=4)[0]
    assert back.output == list(a)
    assert back.done - back.cmd + 1 >= dut.command_cycles(True)


@pytest.mark.parametrize("kind,extra,lanes", [
    ("ntt-montgomery", {}, 4),
    ("montgomery", {"word_bits": 18}, 2),
    ("special-barrett", {"k": 30}, 4),
])
def test_reducer_kinds(kind, extra, lanes):
    """Montgomery kinds store constants times R (outputs still equal the model); special-prime
    Barrett on DNA-HHE-form primes."""
    n = 64
    if kind == "special-barrett":
        qs = [p.q for p in dna_hhe_primes(30, n, count=2)]
    elif kind == "ntt-montgomery":
        qs = [p.q for p in abc_fhe_primes(n, 29)][:2]
    else:                       # word Montgomery: q = 1 (mod 2^word_bits)
        qs = ntt_primes(1 << 17, 30, 2)
    dut = IterativeNtt(n, lanes, qs, kind=kind, **extra)
    rng = random.Random(kind)
    jobs = _jobs(n, qs, rng, corners=False)
    _check(dut, jobs, simulate(dut, jobs), qs)


@pytest.mark.parametrize("kw,name", [
    (dict(n=4), "n"), (dict(n=12), "n"), (dict(n=1 << 17), "n"), (dict(n=8.0), "n"),
    (dict(lanes=0), "lanes"), (dict(lanes=3), "lanes"), (dict(lanes=32), "lanes"),
    (dict(lanes=True), "lanes"),
    (dict(moduli=[]), "moduli"), (dict(moduli=[97]), "moduli[0]"), (dict(moduli=[12289 * 4 + 1]), "moduli[0]"),
    (dict(moduli=["x"]), "moduli[0]"), (dict(moduli=None), "moduli"),
    (dict(twiddles="ram"), "twiddles"), (dict(banking="quad"), "banking"),
    (dict(kind="karatsuba"), "zq.kind"), (dict(latency=1), "latency"), (dict(target="asic"), "target"),
])
def test_bad_parameters(kw, name):
    args = dict(n=32, lanes=4, moduli=ntt_primes(32, 20, 2))
    args.update(kw)
    with pytest.raises(ParameterError) as err:
        IterativeNtt(**args)
    assert err.value.name == name


def test_duplicate_primes():
    q = ntt_primes(32, 20, 1)[0]
    with pytest.raises(ParameterError) as err:
        IterativeNtt(32, 4, [q, q])
    assert err.value.name == "moduli"


# -- single-port banks ---------------------------------------------------------------------------

SINGLE = [(16, 1), (16, 4), (64, 2), (64, 8), pytest.param(256, 4, marks=pytest.mark.slow),
          pytest.param(256, 16, marks=pytest.mark.slow), pytest.param(64, 16, marks=pytest.mark.slow)]


@pytest.mark.parametrize("n,lanes", SINGLE)
def test_single_port_model_and_cycles(n, lanes):
    qs = ntt_primes(n, 20, 2)
    dut = IterativeNtt(n, lanes, qs, banking="single")
    assert dut.banks == 4 * lanes and dut.depth % 2 == 1
    rng = random.Random(n * 10 + lanes)
    jobs = _jobs(n, qs, rng, corners=n <= 64)
    _check(dut, jobs, simulate(dut, jobs), qs)


def test_single_port_montgomery():
    n = 64
    qs = [p.q for p in abc_fhe_primes(n, 29)][:2]
    dut = IterativeNtt(n, 4, qs, kind="ntt-montgomery", banking="single")
    jobs = _jobs(n, qs, random.Random(5), corners=False)
    _check(dut, jobs, simulate(dut, jobs), qs)


@pytest.mark.parametrize("n", [16, 64, 256, 1024])
def test_single_port_plan(n):
    """The single-port plan, checked independently of its construction: the reordered schedule
    computes the model; with the static starts at an odd depth D, no bank is read and written in
    one cycle, every read comes at least a cycle after the write it needs, and each stage's
    cycles still cover every pair once."""
    from hhe_gen.cores.ntt.single_port import run_banked, single_port_schedule, single_port_starts
    q = ntt_primes(n, 30, 1)[0]
    rng = random.Random(n)
    a = [rng.randrange(q) for _ in range(n)]
    for lanes in (1, 2, 4, 8, 16):
        if lanes > n // 4:
            continue
        for inv in (False, True):
            sched = single_port_schedule(n, lanes, inv)
            assert run_banked(sched, a, q) == (intt(a, q) if inv else ntt(a, q))
            ref = ntt_schedule(n, lanes, inv)
            for s1, s2 in zip(sched.stages, ref.stages):
                assert sorted((sl.lo, sl.hi, sl.tw) for c in s1 for sl in c) == \
                    sorted((sl.lo, sl.hi, sl.tw) for c in s2 for sl in c)
            for depth in (9, 11):
                starts, total = single_port_starts(n, lanes, inv, depth)
                reads, writes, written = {}, {}, {}
                for s, stage in enumerate(sched.stages):
                    for c, cycle in enumerate(stage):
                        t = starts[s] + c
                        banks = {sched.bank(i) for sl in cycle for i in (sl.lo, sl.hi)}
                        assert not reads.get(t) and len(banks) == 4 * lanes // 2
                        reads[t] = banks
                        for sl in cycle:
                            for i in (sl.lo, sl.hi):
                                assert written.get(i, -1) < t      # the previous stage's write is done
                        for sl in cycle:
                            for i in (sl.lo, sl.hi):
                                written[i] = t + depth
                        writes.setdefault(t + depth, set()).update(banks)
                for t, banks in reads.items():
                    assert not banks & writes.get(t, set()), f"bank read and written in cycle {t}"
                assert total == max(written.values()) + 1


def test_single_port_bad_lanes():
    with pytest.raises(ParameterError) as err:
        IterativeNtt(16, 8, ntt_primes(16, 20, 1), banking="single")
    assert err.value.name == "lanes"


# -- twiddles on the fly ---------------------------------------------------------------------------

@pytest.mark.parametrize("n,lanes,banking,kind", [
    (8, 4, "dual", "barrett"), (32, 2, "dual", "barrett"), (64, 8, "single", "barrett"),
    (64, 4, "dual", "ntt-montgomery"), (32, 2, "dual", "special-barrett"),
    pytest.param(256, 4, "dual", "barrett", marks=pytest.mark.slow),
    pytest.param(256, 2, "single", "ntt-montgomery", marks=pytest.mark.slow),
])
def test_otf_twiddles(n, lanes, banking, kind):
    """twiddles="otf": each lane multiplies two small-table entries; the operands wait for it
    (depth L + 4 + the multiplier's latency); outputs and cycles as documented."""
    qs = [p.q for p in abc_fhe_primes(n, 29)][:2] if kind == "ntt-montgomery" else ntt_primes(n, 24, 2)
    if kind == "special-barrett":
        qs = [p.q for p in dna_hhe_primes(54, n, count=2)]
    dut = IterativeNtt(n, lanes, qs, kind=kind, twiddles="otf", banking=banking)
    assert dut.tw_latency >= 1 and dut.depth == dut.butterfly_latency + 4 + dut.tw_latency + dut.out_regs
    jobs = _jobs(n, qs, random.Random(n + lanes), corners=n <= 32)
    _check(dut, jobs, simulate(dut, jobs), qs)


def test_special_prime_twiddle_multiplier_takes_the_fewest_tiles():
    """DNA-HHE's set (N = 2^13, 54-bit special primes): each lane's twiddle multiplier forms
    q_est*bnd in LUT rows, 9 DSP tiles instead of 12 and one register less (plans only)."""
    from hhe_gen.cores.arith import reducer_plan
    qs = [p.q for p in dna_hhe_primes(54, 8192, count=3)]
    dut = IterativeNtt(8192, 2, qs, kind="special-barrett", twiddles="otf")
    mark_unused(dut)
    tw = dut._twiddle_multiplier(plan=True)
    tiled = reducer_plan("special-barrett", qs, 54, None, target="ecp5", log_n=13, bnd_luts=False)
    assert (tw.tiles, tiled.tiles) == (9, 12) and dut.tw_latency == tw.latency == tiled.latency - 1


@pytest.mark.parametrize("n,lanes,banking", [(64, 2, "dual"), (64, 4, "single")])
def test_pieced_twiddle_rom(monkeypatch, n, lanes, banking):
    """A ROM bank over one piece (ROM_PIECE_WORDS, made small here: the 1024-word pieces start at
    N = 2^10, P = 1) is read through registered pieces: X = ROM_PIECE_LATENCY more cycles of depth,
    the same outputs."""
    from hhe_gen.cores.ntt import iterative
    monkeypatch.setattr(iterative, "ROM_PIECE_WORDS", 16)
    qs = ntt_primes(n, 20, 2)
    dut = IterativeNtt(n, lanes, qs, banking=banking)
    assert dut.rom_words == 2 * n * 2 // lanes and dut.rom_pieces == dut.rom_words // 16 > 1
    assert dut.tw_latency == iterative.ROM_PIECE_LATENCY
    monkeypatch.undo()
    plain = IterativeNtt(n, lanes, qs, banking=banking)
    mark_unused(plain)
    assert plain.rom_pieces == 1 and plain.tw_latency == 0
    assert dut.depth in (plain.depth + 2, plain.depth + 3)      # single-port: the next odd depth
    rng = random.Random(n + lanes)
    jobs = _jobs(n, qs, rng)
    _check(dut, jobs, simulate(dut, jobs), qs)


@pytest.mark.parametrize("n,lanes,banking", [(8, 4, "dual"), (16, 2, "single")])
def test_otf_twiddles_one_prime(n, lanes, banking):
    """twiddles="otf" with a single prime (no ``sel`` to route to the twiddle multipliers):
    outputs and cycles as documented, forward and inverse."""
    qs = ntt_primes(n, 24, 1)
    dut = IterativeNtt(n, lanes, qs, twiddles="otf", banking=banking)
    assert dut.tw_latency >= 1 and dut.depth == dut.butterfly_latency + 4 + dut.tw_latency + dut.out_regs
    jobs = _jobs(n, qs, random.Random(n * lanes))
    _check(dut, jobs, simulate(dut, jobs), qs)


def test_busy():
    """``busy``: low while idle (before the first command, between commands, after the last),
    high from the cycle after a command is accepted up to and including the cycle of ``done``
    (the last output beat's handshake), with random gaps on both streams; outputs still the model's."""
    from amaranth.sim import Simulator

    n, lanes = 16, 4
    qs = ntt_primes(n, 20, 2)
    dut = IterativeNtt(n, lanes, qs)
    rng = random.Random(11)
    jobs = _jobs(n, qs, rng, corners=False)[:3]
    outputs, trace = [], []         # trace: (busy, phase) per cycle

    async def bench(ctx):
        async def tick(phase):
            trace.append((ctx.get(dut.busy), phase))
            await ctx.tick()

        for _ in range(3):
            await tick("idle")
        for job in jobs:
            ctx.set(dut.cmd.payload.inverse, int(job.inverse))
            ctx.set(dut.cmd.payload.sel, job.sel)
            ctx.set(dut.cmd.valid, 1)
            assert ctx.get(dut.cmd.ready)
            await tick("idle")                  # the command is accepted at this edge
            ctx.set(dut.cmd.valid, 0)
            for b in range(dut.beats):
                while rng.random() < 0.3:
                    ctx.set(dut.i_stream.valid, 0)
                    await tick("busy")
                ctx.set(dut.i_stream.payload, job.poly[b * lanes:(b + 1) * lanes])
                ctx.set(dut.i_stream.valid, 1)
                while not ctx.get(dut.i_stream.ready):
                    await tick("busy")
                await tick("busy")
            ctx.set(dut.i_stream.valid, 0)
            out, done = [], False
            while not done:
                ready = rng.random() < 0.7
                ctx.set(dut.o_stream.ready, int(ready))
                if ready and ctx.get(dut.o_stream.valid):
                    out += list(ctx.get(dut.o_stream.payload))
                done = ctx.get(dut.done)
                await tick("busy")
            ctx.set(dut.o_stream.ready, 0)
            outputs.append(out)
            for _ in range(2):
                await tick("idle")
                assert ctx.get(dut.cmd.ready)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    for job, out in zip(jobs, outputs):
        q = qs[job.sel]
        assert out == (intt(job.poly, q) if job.inverse else ntt(job.poly, q))
    assert len(outputs) == len(jobs)
    assert [busy for busy, _ in trace] == [int(phase == "busy") for _, phase in trace]
