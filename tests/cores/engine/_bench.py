"""Testbench steps shared by the engine unit tests: fill / dump a buffer through spare BufferFile
ports, hand a task to a unit and count its cycles."""

from hhe_gen.cores.engine import isa


async def fill(ctx, bufs, b, words, lanes, port=1):
    """Write ``words`` into buffer ``b`` through write port ``port``, a row per cycle."""
    wr = bufs.write(port)
    for r in range(len(words) // lanes):
        ctx.set(wr.sel, b)
        ctx.set(wr.addr, r)
        ctx.set(wr.data, words[r * lanes:(r + 1) * lanes])
        ctx.set(wr.lanes, (1 << lanes) - 1)
        await ctx.tick()
    ctx.set(wr.lanes, 0)


async def dump(ctx, bufs, b, n, lanes, port):
    """Read buffer ``b`` (N words) through read port ``port``."""
    rd = bufs.read(port)
    out = []
    for r in range(n // lanes):
        ctx.set(rd.sel, b)
        ctx.set(rd.addr, r)
        ctx.set(rd.en, 1)
        await ctx.tick()
        out += [int(x) for x in ctx.get(rd.data)]
    ctx.set(rd.en, 0)
    return out


def payload(ins, tag=0):
    return {f.name: getattr(ins, f.name) for f in isa.FIELDS} | {"tag": tag}


async def run_task(ctx, unit, ins):
    """Hand ``ins`` to ``unit``; the cycles from the transfer to ``done`` and ``error``."""
    port = unit.port
    ctx.set(port.task.payload, payload(ins))
    ctx.set(port.task.valid, 1)
    await ctx.tick().until(port.task.ready)
    ctx.set(port.task.valid, 0)
    cycles = 0
    while True:
        *_, done, error = await ctx.tick().sample(port.done, port.error)
        cycles += 1
        if done:
            return cycles, error


async def abort_task(ctx, unit, ins, after: int):
    """Hand ``ins`` to ``unit``, pulse ``abort`` ``after`` cycles past the transfer (one cycle)."""
    port = unit.port
    ctx.set(port.task.payload, payload(ins))
    ctx.set(port.task.valid, 1)
    await ctx.tick().until(port.task.ready)
    ctx.set(port.task.valid, 0)
    for _ in range(after):
        await ctx.tick()
    ctx.set(port.abort, 1)
    await ctx.tick()
    ctx.set(port.abort, 0)


def simulate(dut, bench, processes=()):
    """Run the testbench ``bench`` on ``dut`` (1 MHz clock) with background ``processes``."""
    from amaranth.sim import Simulator

    from hhe_gen.sim.stream import run_simulation

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    for process in processes:
        sim.add_process(process)
    sim.add_testbench(bench)
    run_simulation(sim)
