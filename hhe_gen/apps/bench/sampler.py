"""Benchmarks of the sampler cores (``hhe-gen bench sampler``).

Quick cases simulate each sampler on real SHAKE256 bytes (full-rate input, always-ready output)
and report the measured steady-state throughput (samples per cycle), the XOF bytes consumed per
sample and the first-sample latency; the ``-synth`` cases (not quick) add ECP5 area and Fmax
(``hhe_gen.flow.synth.synth_ecp5``, post place-and-route) and Xilinx 7-series utilisation.
"""

from __future__ import annotations

import hashlib

from hhe_gen.apps.bench import bench_case

_SEED = bytes(range(32))


def _beats(data: bytes, w: int) -> list[int]:
    data = data + bytes(-len(data) % w)
    return [int.from_bytes(data[i:i + w], "little") for i in range(0, len(data), w)]


def _measure(dut, data: bytes, w: int, n: int, per_beat: int = 1) -> dict:
    """Simulate ``n`` output beats of ``per_beat`` samples each; samples/cycle from the output
    cycles, bytes/sample from the beats."""
    from hhe_gen.sim.stream import run_stream
    run = run_stream(dut, _beats(data, w), n, all_inputs=False)
    span = run.out_cycles[-1] - run.out_cycles[0]
    return {
        "samples": n * per_beat,
        "samples_per_cycle": round((n - 1) * per_beat / span, 4) if span else None,
        "bytes_per_sample": round(len(run.in_cycles) * w / (n * per_beat), 3),
        "latency_cycles": run.latency,
        "cycles": run.out_cycles[-1] - run.in_cycles[0] + 1,
    }


def _stream(n: int) -> bytes:
    return hashlib.shake_256(_SEED).digest(n)


def _build(kind: str, w: int, **kw):
    from hhe_gen.cores import sampler as s
    from hhe_gen.params import ntt_primes, rubato_params
    if kind == "gaussian":
        return s.GaussianCDT(in_bytes=w, comparators=kw.get("comparators"))
    if kind == "uniform":
        return s.UniformModQ(ntt_primes(1 << 13, kw["bits"], 1)[0], in_bytes=w)
    if kind == "rubato-rc":
        return s.RubatoRoundConstants(rubato_params(kw["set"]), in_bytes=w)
    if kind == "rubato-noise":
        return s.RubatoNoise(rubato_params(kw["set"]), in_bytes=w, comparators=kw.get("comparators"))
    if kind == "ternary":
        return s.TernaryUniform(in_bytes=w, values_per_cycle=kw.get("values_per_cycle", 1))
    if kind == "hamming":
        return s.TernaryHamming(kw["count"], kw["h"], in_bytes=w)
    if kind == "seed-message":
        return s.SeedMessage(w)
    raise ValueError(kind)


@bench_case("sampler", "gaussian-w8-parallel", kind="gaussian", w=8)
@bench_case("sampler", "gaussian-w8-comparators5", kind="gaussian", w=8, comparators=5)
@bench_case("sampler", "gaussian-w1-comparators1", kind="gaussian", w=1, comparators=1)
@bench_case("sampler", "uniform-54bit-w8", kind="uniform", w=8, bits=54)
@bench_case("sampler", "uniform-36bit-w2", kind="uniform", w=2, bits=36)
@bench_case("sampler", "rubato-rc-128s-w8", kind="rubato-rc", w=8, set="Par-128S")
@bench_case("sampler", "rubato-rc-80l-w4", kind="rubato-rc", w=4, set="Par-80L")
@bench_case("sampler", "rubato-noise-128l-w4", kind="rubato-noise", w=4, set="Par-128L")
@bench_case("sampler", "rubato-noise-80s-w4-comparators4", kind="rubato-noise", w=4, set="Par-80S", comparators=4)
@bench_case("sampler", "ternary-w1", kind="ternary", w=1)
@bench_case("sampler", "ternary-pairs-w8", kind="ternary", w=8, values_per_cycle=2)
def sampler_throughput(kind, w, n=2000, **kw):
    dut = _build(kind, w, **kw)
    per_beat = kw.get("values_per_cycle", 1)
    res = _measure(dut, _stream(64 * n), w, n // per_beat, per_beat)
    if kind in ("gaussian", "rubato-noise"):
        res["cycles_per_sample_doc"] = dut.cycles_per_sample
        res["scan_steps"] = dut.steps
    if kind in ("uniform", "rubato-rc"):
        res["accept_rate"] = round(dut.accept_rate(), 4)
    return res


@bench_case("sampler", "hamming-1024-h192-w8", count=1024, h=192, w=8)
@bench_case("sampler", "hamming-256-h64-w1", count=256, h=64, w=1)
def hamming_throughput(count, h, w):
    from hhe_gen.cores.sampler import TernaryHamming
    from hhe_gen.sim.stream import run_stream
    data = _stream(64 * count)
    run = run_stream(TernaryHamming(count, h, in_bytes=w), _beats(data, w), count, all_inputs=False)
    cycles = run.out_cycles[-1] - run.in_cycles[0] + 2      # until the next vector can start
    return {"count": count, "h": h, "cycles_per_vector": cycles, "samples_per_cycle": round(count / cycles, 4),
            "bytes_per_vector": len(run.in_cycles) * w, "first_value_cycles": run.latency}


@bench_case("sampler", "seeded-gaussian-w8-k4", w=8, rounds_per_cycle=4, kind="gaussian")
@bench_case("sampler", "seeded-gaussian-w8-k24", w=8, rounds_per_cycle=24, kind="gaussian")
@bench_case("sampler", "seeded-uniform54-w8-k4", w=8, rounds_per_cycle=4, kind="uniform")
def seeded_throughput(w, rounds_per_cycle, kind, n=600):
    """End to end: command -> message -> SHAKE256 (cores.keccak) -> sampler."""
    from amaranth.sim import Simulator

    from hhe_gen.cores.sampler import MessageKind, SeededSampler
    dut = SeededSampler(_build(kind, w, bits=54), rounds_per_cycle=rounds_per_cycle)
    got = {}

    async def bench(ctx):
        ctx.set(dut.i_stream.payload, {"kind": MessageKind.SEEDED, "domain": 3, "nonce": 0, "counter": 0})
        ctx.set(dut.i_stream.valid, 1)
        await ctx.tick().until(dut.i_stream.ready)
        ctx.set(dut.i_stream.valid, 0)
        ctx.set(dut.o_stream.ready, 1)
        cycle, outs = 0, []
        while len(outs) < n:
            *_, valid = await ctx.tick().sample(dut.o_stream.valid)
            cycle += 1
            if valid:
                outs.append(cycle)
        got["first"], got["span"] = outs[0], outs[-1] - outs[0]
        got["beats"] = ctx.get(dut.xof_beats)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return {"samples": n, "first_sample_cycles": got["first"],
            "samples_per_cycle": round((n - 1) / got["span"], 4),
            "xof_bytes_per_cycle": round(got["beats"] * w / (got["first"] + got["span"]), 3)}


@bench_case("sampler", "gaussian-w8-parallel-synth", quick=False, kind="gaussian", w=8)
@bench_case("sampler", "gaussian-w8-comparators5-synth", quick=False, kind="gaussian", w=8, comparators=5)
@bench_case("sampler", "gaussian-w1-comparators1-synth", quick=False, kind="gaussian", w=1, comparators=1)
@bench_case("sampler", "uniform-54bit-w8-synth", quick=False, kind="uniform", w=8, bits=54)
@bench_case("sampler", "rubato-rc-128s-w8-synth", quick=False, kind="rubato-rc", w=8, set="Par-128S")
@bench_case("sampler", "rubato-noise-128l-w4-synth", quick=False, kind="rubato-noise", w=4, set="Par-128L")
@bench_case("sampler", "ternary-w8-synth", quick=False, kind="ternary", w=8)
@bench_case("sampler", "hamming-4096-h192-w8-synth", quick=False, kind="hamming", w=8, count=4096, h=192)
@bench_case("sampler", "seed-message-w8-synth", quick=False, kind="seed-message", w=8)
def sampler_synth(kind, w, **kw):
    from hhe_gen.flow.synth import synth_ecp5, synth_xilinx
    ecp5 = synth_ecp5(_build(kind, w, **kw), name="sampler")
    xc7 = synth_xilinx(_build(kind, w, **kw), name="sampler")
    res = {k: ecp5.get(k) for k in ("LUT4", "FF", "CCU2C", "DP16KD", "MULT18X18D", "fmax_mhz")}
    res.update({f"xc7_{k}": v for k, v in xc7.items() if k in ("LUT", "FF", "RAMB18", "RAMB36", "DSP48E1", "CARRY4")})
    return res
