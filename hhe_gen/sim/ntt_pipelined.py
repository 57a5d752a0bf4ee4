"""Run :class:`~hhe_gen.cores.ntt.PipelinedNtt` in Amaranth's simulator or in Verilator (tests, benchmarks).

Both return, per polynomial, the output in the model's list order (``to_model_order`` applied),
the cycle its first and last input beats were taken and the cycle its first and last output
beats were taken (cycle = clock edges since the start), plus the ``sel`` and ``last`` flags seen.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["PolyResult", "simulate_pipelined", "verilate_pipelined"]


@dataclass
class PolyResult:
    output: list
    first_in: int
    last_in: int
    first_out: int
    last_out: int
    sels: set
    lasts: list


def _pack(values, width):
    return sum(v << (width * i) for i, v in enumerate(values))


def _unpack(value, width, count):
    mask = (1 << width) - 1
    return [(value >> (width * i)) & mask for i in range(count)]


def _results(dut, polys, in_cycles, outs):
    beats = dut.beats
    res = []
    for i, _ in enumerate(polys):
        chunk = outs[i * beats:(i + 1) * beats]
        flat = [v for _, data, _, _ in chunk for v in data]
        res.append(PolyResult(dut.to_model_order(flat), in_cycles[i * beats], in_cycles[(i + 1) * beats - 1],
                              chunk[0][0], chunk[-1][0], {s for _, _, s, _ in chunk},
                              [la for _, _, _, la in chunk]))
    return res


def simulate_pipelined(dut, polys, *, in_gaps: float = 0.0, out_gaps: float = 0.0, seed: int = 0,
                       vcd: str | None = None) -> list[PolyResult]:
    """Send ``polys`` (a list of (coefficients, sel)) back to back through ``dut``; with gaps > 0
    the producer withholds a beat / the consumer refuses one with that probability per cycle."""
    from amaranth.sim import Simulator

    from hhe_gen.sim.stream import run_simulation

    rng_in, rng_out = random.Random(seed), random.Random(seed + 1)
    P, beats = dut.lanes, dut.beats
    in_cycles, outs = [], []
    total = len(polys) * beats

    async def producer(ctx):
        cycle = 0
        for poly, sel in polys:
            for b in range(beats):
                while in_gaps and rng_in.random() < in_gaps:
                    ctx.set(dut.i_stream.valid, 0)
                    await ctx.tick()
                    cycle += 1
                ctx.set(dut.i_stream.payload.data, list(poly[b * P:(b + 1) * P]))
                # sel counts on the first beat only: the others carry a different one on purpose
                ctx.set(dut.i_stream.payload.sel, sel if b == 0 else (sel + 1) % len(dut.moduli))
                ctx.set(dut.i_stream.valid, 1)
                while True:
                    _, _, ready = await ctx.tick().sample(dut.i_stream.ready)     # before the edge
                    if ready:
                        in_cycles.append(cycle)
                        cycle += 1
                        break
                    cycle += 1
        ctx.set(dut.i_stream.valid, 0)

    async def consumer(ctx):
        cycle = 0
        while len(outs) < total:
            ready = not (out_gaps and rng_out.random() < out_gaps)
            ctx.set(dut.o_stream.ready, int(ready))
            _, _, valid, payload = await ctx.tick().sample(dut.o_stream.valid, dut.o_stream.payload)
            if ready and valid:
                outs.append((cycle, [int(payload.data[p]) for p in range(P)], int(payload.sel),
                             int(payload.last)))
            cycle += 1
        ctx.set(dut.o_stream.ready, 0)

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(producer)
    sim.add_testbench(consumer)
    run_simulation(sim, vcd)
    return _results(dut, polys, in_cycles, outs)


def verilate_pipelined(dut, polys, *, progress: str | None = None) -> list[PolyResult]:
    """The same at full rate (input always valid, output always ready) in Verilator
    (:mod:`hhe_gen.flow.verilator`, cached build), cycle by cycle through the driver's S/G/T commands."""
    from amaranth.hdl import Shape
    from hhe_gen.flow.verilator import build

    model = build(dut, "ntt_pipe", progress=progress)
    P, w, beats = dut.lanes, dut.qbits, dut.beats
    sbits = Shape.cast(dut.sel_shape).width
    stream = []
    for poly, sel in polys:
        for b in range(beats):
            stream.append(_pack(poly[b * P:(b + 1) * P], w) | (sel << (P * w)))
    total = len(stream)
    cycles = total + dut.latency + 4
    script = ["S o_stream__ready 1"]
    for t in range(cycles):
        if t < total:
            script += [f"S i_stream__payload {stream[t]:x}", "S i_stream__valid 1"]
        elif t == total:
            script.append("S i_stream__valid 0")
        script += ["G i_stream__ready", "G o_stream__valid", "G o_stream__payload", "T 1"]
    lines = iter(model.run(script))
    in_cycles, outs = [], []
    for t in range(cycles):
        ready, valid, payload = (int(next(lines), 16) for _ in range(3))
        if t < total and ready:
            in_cycles.append(t)
        if valid:
            data = _unpack(payload, w, P)
            rest = payload >> (P * w)
            outs.append((t, data, rest & ((1 << sbits) - 1), (rest >> sbits) & 1))
    if len(in_cycles) != total:
        raise RuntimeError("the core refused input at full rate")
    return _results(dut, polys, in_cycles, outs[:total])
