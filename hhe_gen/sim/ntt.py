"""Run :class:`~hhe_gen.cores.ntt.IterativeNtt` in Amaranth's simulator (tests and benchmarks).

:func:`simulate` sends a list of jobs (polynomial, inverse, prime index) through the core's
streams, optionally with random gaps on both streams, and returns every job's output with the
cycle numbers of its command, its first and last input beat, its first output beat and ``done``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["Job", "JobResult", "simulate", "pack_beat", "unpack_beat"]


@dataclass(frozen=True)
class Job:
    poly: tuple
    inverse: bool = False
    sel: int = 0


@dataclass
class JobResult:
    """Output of one job and the cycle (clock edges since reset) of each event."""
    output: list
    cmd: int
    first_in: int
    last_in: int
    first_out: int
    done: int


def pack_beat(values, width: int) -> int:
    return sum(v << (width * i) for i, v in enumerate(values))


def unpack_beat(value: int, width: int, count: int) -> list[int]:
    mask = (1 << width) - 1
    return [(value >> (width * i)) & mask for i in range(count)]


def simulate(dut, jobs, *, gaps: float = 0.0, seed: int = 0, vcd: str | None = None) -> list[JobResult]:
    """Simulate ``dut`` on ``jobs`` (``Job`` or (poly, inverse, sel) tuples); with ``gaps`` > 0 each
    input beat is withheld and each output beat refused with that probability per cycle."""
    from amaranth.hdl import Value
    from amaranth.sim import Simulator

    from hhe_gen.sim.stream import run_simulation

    jobs = [j if isinstance(j, Job) else Job(tuple(j[0]), bool(j[1]), int(j[2])) for j in jobs]
    rng = random.Random(seed)
    results = []
    P, w, beats = dut.lanes, dut.qbits, dut.beats
    ip, op = Value.cast(dut.i_stream.payload), Value.cast(dut.o_stream.payload)

    async def bench(ctx):
        cycle = 0

        async def tick():
            nonlocal cycle
            await ctx.tick()
            cycle += 1

        for job in jobs:
            ctx.set(dut.cmd.payload.inverse, int(job.inverse))
            ctx.set(dut.cmd.payload.sel, job.sel)
            ctx.set(dut.cmd.valid, 1)
            while not ctx.get(dut.cmd.ready):
                await tick()
            t_cmd = cycle
            await tick()
            ctx.set(dut.cmd.valid, 0)
            taken = []
            for b in range(beats):
                while gaps and rng.random() < gaps:
                    ctx.set(dut.i_stream.valid, 0)
                    await tick()
                ctx.set(ip, pack_beat(job.poly[b * P:(b + 1) * P], w))
                ctx.set(dut.i_stream.valid, 1)
                while not ctx.get(dut.i_stream.ready):
                    await tick()
                taken.append(cycle)
                await tick()
            ctx.set(dut.i_stream.valid, 0)
            out, out_cycles, t_done = [], [], None
            while t_done is None:
                ready = not (gaps and rng.random() < gaps)
                ctx.set(dut.o_stream.ready, int(ready))
                if ready and ctx.get(dut.o_stream.valid):
                    out += unpack_beat(ctx.get(op), w, P)
                    out_cycles.append(cycle)
                if ctx.get(dut.done):
                    t_done = cycle
                await tick()
            ctx.set(dut.o_stream.ready, 0)
            results.append(JobResult(out, t_cmd, taken[0], taken[-1], out_cycles[0], t_done))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    run_simulation(sim, vcd)
    return results


def verilate(dut, jobs, *, progress: str | None = None) -> list[JobResult]:
    """Run ``jobs`` on ``dut`` in Verilator (:mod:`hhe_gen.flow.verilator`, cached build) at full rate;
    the same results as :func:`simulate` (the cycle of each command, input and output beat;
    ``done`` is the last output beat's cycle)."""
    from hhe_gen.flow.verilator import build

    jobs = [j if isinstance(j, Job) else Job(tuple(j[0]), bool(j[1]), int(j[2])) for j in jobs]
    model = build(dut, "ntt", progress=progress)
    P, w, beats = dut.lanes, dut.qbits, dut.beats
    script = []
    for job in jobs:
        script += ["C", f"PUT cmd {int(job.inverse) | job.sel << 1:x}"]
        script += [f"PUT i_stream {pack_beat(job.poly[b * P:(b + 1) * P], w):x}" for b in range(beats)]
        script += ["GET o_stream"] * beats
    lines = iter(model.run(script))
    results = []
    for _ in jobs:
        t_cmd = int(next(lines))
        out, cycles = [], []
        for _ in range(beats):
            c, v = next(lines).split()
            cycles.append(int(c))
            out += unpack_beat(int(v, 16), w, P)
        # full rate: the input beats follow the command back to back
        results.append(JobResult(out, t_cmd, t_cmd + 1, t_cmd + beats, cycles[0], cycles[-1]))
    return results
