"""Benchmarks of the network cores (``hhe-gen bench net``).

Quick cases simulate one polynomial row of N = 2^13 coefficients through the packetizer (the
consumer always ready, a coefficient offered every cycle) and the same packets back through the
depacketizer (a word offered every cycle, the writes always taken): cycles from the command (or
the first word) to the last word (or the last write), the packets, the wire words per cycle, and
whether the bytes and writes equal the wire format's model (``bit_exact``).  A ciphertext of R
rows is 2R such rows.  The ``-synth`` cases (not quick) add the ECP5 area and post-route Fmax.
"""

from __future__ import annotations

from hhe_gen.apps.bench import bench_case

_N = 1 << 13


def _row(n: int, seed: int = 1) -> list[int]:
    import random
    rng = random.Random(seed)
    return [rng.randrange(1 << 54) for _ in range(n)]


@bench_case("net", "packetizer-row-n8192-s180", n=_N, segment=180)
@bench_case("net", "packetizer-row-n8192-s64", n=_N, segment=64)
def packetizer_row(n: int, segment: int) -> dict:
    from amaranth.sim import Simulator

    from hhe_gen.cores.net import Packetizer
    from hhe_gen.models.wire import Kind, polynomial_packets, stream_payload
    dut = Packetizer(segment)
    row = _row(n)
    words, out = [], {}

    async def bench(ctx):
        ctx.set(dut.cfg, {"ip_address": 0x0A000001, "src_port": 5000, "dst_port": 6000, "segment": segment})
        ctx.set(dut.cmd.payload, {"kind": int(Kind.CKKS_C0), "message": 1, "row": 0, "rows": 1, "log_scale": 50,
                                  "ntt": 1, "sequence": 0, "total": n})
        ctx.set(dut.cmd.valid, 1)
        ctx.set(dut.o_stream.ready, 1)
        await ctx.tick().until(dut.cmd.ready)
        ctx.set(dut.cmd.valid, 0)
        i, cycles, packets, current = 0, 0, [], []
        while True:
            ctx.set(dut.i_stream.valid, i < n)
            if i < n:
                ctx.set(dut.i_stream.payload, row[i])
            *_, took, valid, beat, done = await ctx.tick().sample(dut.i_stream.ready, dut.o_stream.valid,
                                                                  dut.o_stream.payload, dut.done)
            cycles += 1
            if took and i < n:
                i += 1
            if valid:
                current.append(beat.data)
                words.append(beat.data)
                if beat.last:
                    packets.append(stream_payload(current, beat.last_be))
                    current = []
            if done:
                break
        out.update(cycles=cycles + 1, packets=packets)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    want = polynomial_packets(Kind.CKKS_C0, 1, [row], segment=segment, log_scale=50, ntt=True)
    cycles = out["cycles"]
    return {"coefficients": n, "segment": segment, "packets": len(out["packets"]), "cycles": cycles,
            "wire_words_per_cycle": round(len(words) / cycles, 4), "cycles_per_coefficient": round(cycles / n, 3),
            "bit_exact": out["packets"] == want}


@bench_case("net", "depacketizer-row-n8192-s180", n=_N, segment=180)
def depacketizer_row(n: int, segment: int) -> dict:
    from amaranth.sim import Simulator

    from hhe_gen.cores.net import Depacketizer
    from hhe_gen.models.wire import Kind, polynomial_packets, stream_beats
    row = _row(n, 2)
    payloads = polynomial_packets(Kind.CKKS_C0, 1, [row], segment=segment)
    beats = [(w, be) for p in payloads for w, be in stream_beats(p)]
    dut = Depacketizer(segment, kinds=(int(Kind.CKKS_C0),))
    got, out = {}, {}

    async def bench(ctx):
        ctx.set(dut.cfg, {"rows": 1, "total": n})
        ctx.set(dut.o_write.ready, 1)
        k, cycles = 0, 0
        while len(got) < n and cycles < 10 * len(beats):
            ctx.set(dut.i_stream.valid, k < len(beats))
            if k < len(beats):
                ctx.set(dut.i_stream.payload, {"data": beats[k][0], "last": beats[k][1] != 0,
                                               "last_be": beats[k][1]})
            *_, took, valid, wr = await ctx.tick().sample(dut.i_stream.ready, dut.o_write.valid, dut.o_write.payload)
            cycles += 1
            if took and k < len(beats):
                k += 1
            if valid:
                got[wr.index] = wr.data
        out.update(cycles=cycles, dropped=ctx.get(dut.dropped), messages=ctx.get(dut.messages))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return {"coefficients": n, "packets": len(payloads), "words": len(beats), "cycles": out["cycles"],
            "cycles_per_coefficient": round(out["cycles"] / n, 3),
            "bit_exact": [got.get(i) for i in range(n)] == row and out["dropped"] == 0 and out["messages"] == 1}


@bench_case("net", "packetizer-synth", quick=False, core="packetizer")
@bench_case("net", "depacketizer-synth", quick=False, core="depacketizer")
def net_synth(core: str) -> dict:
    from hhe_gen.cores.net import Depacketizer, Packetizer
    from hhe_gen.flow.synth import synth_ecp5
    dut = Packetizer() if core == "packetizer" else Depacketizer()
    r = synth_ecp5(dut, name=f"hhe_{core}", timeout=3600)
    return {k: r.get(k) for k in ("LUT4", "FF", "DP16KD", "fmax_mhz")}
