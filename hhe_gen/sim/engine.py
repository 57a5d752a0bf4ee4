"""Run a program on the RTL engine (:class:`hhe_gen.cores.engine.engine.Engine`) in Amaranth's
simulator, with a simulated external memory (:class:`hhe_gen.sim.memory.MemoryModel`) behind its
memory port.

The program's words are offered on ``i_instr`` one per cycle as fast as the engine takes them; the
run ends when the engine is idle after the last word (``busy`` low).  Every completed task is
recorded from the engine's ``completed`` lanes, every ``notify`` with its cycle, and with a
network unit every packet of ``o_udp`` (:class:`UdpPacket`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hhe_gen.params.checks import check_int

__all__ = ["TaskRecord", "UdpPacket", "EngineRun", "busy_cycles", "run_engine", "udp_packet"]


@dataclass(frozen=True)
class TaskRecord:
    """One completed task: its position in the program, unit, and the engine cycles of its dispatch
    and its completion (``finished - dispatched`` = the task's latency)."""
    position: int
    unit: int
    dispatched: int
    finished: int


@dataclass(frozen=True)
class UdpPacket:
    """One packet the engine put on ``o_udp`` (LiteEth's UDP user port).

    Members
    -------
    first, last : int        cycles of its first and last beat
    ip_address, src_port, dst_port, length : int   as on its first beat
    payload : bytes          the beats' ``data``, little-endian, up to ``last_be``'s last byte
    steady : bool            the addressing and length held on every beat, ``last_be`` was 0 before
                             the last beat
    gaps : int               cycles inside the packet with ``valid`` low (LiteEth needs none)
    """
    first: int
    last: int
    ip_address: int
    src_port: int
    dst_port: int
    length: int
    payload: bytes
    steady: bool
    gaps: int


def udp_packet(beats, gaps: int) -> UdpPacket:
    """A packet from its beats, each ``(cycle, data, last_be, (ip, src_port, dst_port, length))``,
    and the cycles ``valid`` was low inside it."""
    from hhe_gen.models.wire import stream_payload
    data = stream_payload((b[1] for b in beats), beats[-1][2])
    steady = len({b[3] for b in beats}) == 1 and all(b[2] == 0 for b in beats[:-1])
    return UdpPacket(beats[0][0], beats[-1][0], *beats[0][3], data, steady, gaps)


@dataclass
class EngineRun:
    """The result of :func:`run_engine`.

    Members
    -------
    memory : MemoryModel        the memory after the run (``.words``, ``.dump``)
    cycles : int                engine cycles from the first word offered to the cycle ``busy`` fell
    error_cause, error_position : int   the engine's first error (cause 0: none)
    notifies : list             (cycle, code) of every ``notify``
    tasks : list[TaskRecord]    in completion order
    packets : list[UdpPacket]   (network unit) the packets of ``o_udp``, in order
    """
    memory: object
    cycles: int = 0
    error_cause: int = 0
    error_position: int = 0
    notifies: list = field(default_factory=list)
    tasks: list = field(default_factory=list)
    packets: list = field(default_factory=list)

    def busy_cycles(self) -> dict:
        """Cycles each unit was busy with a task (sum of its tasks' latencies)."""
        return busy_cycles(self.tasks)


def busy_cycles(tasks) -> dict:
    """Unit -> the cycles it was busy with ``tasks`` (:class:`TaskRecord` s): the sum of their
    latencies, finished - dispatched."""
    out: dict = {}
    for t in tasks:
        out[t.unit] = out.get(t.unit, 0) + t.finished - t.dispatched
    return out


def run_engine(engine, words, memory, *, max_cycles: int = 10_000_000, abort_after=None,
               udp_ready=None, udp_in=(), vcd: str | None = None) -> EngineRun:
    """Simulate ``engine`` running ``words`` against ``memory`` (a :class:`MemoryModel`, changed in
    place).

    Parameters
    ----------
    engine : Engine              a fresh (never elaborated) engine component
    words : list of int          the program (instruction words)
    memory : MemoryModel         the external memory, with the program's inputs placed
    max_cycles : int             give up (RuntimeError) after this many cycles
    abort_after : int or None    pulse ``abort`` this many cycles after the first word (tests of the
                                 soft reset); the run then ends when the engine is idle
    udp_ready : callable or None (network unit) ``udp_ready(cycle)``: is the UDP port ready in that
                                 cycle (default: always)
    udp_in : sequence of bytes   (network unit) payloads offered on ``i_udp`` from the first cycle,
                                 back to back as 32-bit little-endian words (``last_be`` one-hot on
                                 the last byte; empty ones are skipped); ``recv`` takes them
    """
    from amaranth.sim import Simulator

    from .stream import run_simulation

    check_int("max_cycles", max_cycles, 1)
    words = list(words)
    run = EngineRun(memory)

    async def monitor(ctx):
        cycle = 0
        lanes = len(engine.completed)
        while True:
            *_, notify, code, completed = await ctx.tick().sample(engine.notify, engine.notify_code,
                                                                   engine.completed)
            cycle += 1
            if notify:
                run.notifies.append((cycle, int(code)))
            for k in range(lanes):
                lane = completed[k]
                if lane.valid:
                    run.tasks.append(TaskRecord(int(lane.position), int(lane.unit), int(lane.dispatched),
                                                int(lane.finished)))

    async def feeder(ctx):
        cycles = 0
        for word in words:
            ctx.set(engine.i_instr.payload, word)
            ctx.set(engine.i_instr.valid, 1)
            while True:
                *_, ready = await ctx.tick().sample(engine.i_instr.ready)
                cycles += 1
                if abort_after is not None and cycles == abort_after:
                    break
                if ready:
                    break
            if abort_after is not None and cycles >= abort_after:
                break
        ctx.set(engine.i_instr.valid, 0)
        if abort_after is not None:
            while cycles < abort_after:
                await ctx.tick()
                cycles += 1
            ctx.set(engine.abort, 1)
            await ctx.tick()
            ctx.set(engine.abort, 0)
            cycles += 1
        while True:
            *_, busy = await ctx.tick().sample(engine.busy)
            cycles += 1
            if not busy:
                break
            if cycles > max_cycles:
                raise RuntimeError(f"the engine is still busy after {max_cycles} cycles")
        run.cycles = cycles
        run.error_cause = int(ctx.get(engine.error_cause)) if ctx.get(engine.error) else 0
        run.error_position = int(ctx.get(engine.error_position))

    async def udp_sink(ctx):
        out = engine.o_udp
        cycle, beats, gaps = 0, [], 0
        while True:
            ready = 1 if udp_ready is None else int(bool(udp_ready(cycle)))
            ctx.set(out.ready, ready)
            *_, valid, beat = await ctx.tick().sample(out.valid, out.payload)
            cycle += 1
            if not (valid and ready):
                gaps += bool(beats and not valid)
                continue
            beats.append((cycle, int(beat.data), int(beat.last_be), (int(beat.ip_address), int(beat.src_port),
                                                                     int(beat.dst_port), int(beat.length))))
            if beat.last:
                run.packets.append(udp_packet(beats, gaps))
                beats, gaps = [], 0

    async def udp_source(ctx):
        from hhe_gen.models.wire import stream_beats
        port = engine.i_udp
        for payload in udp_in:
            if not payload:                      # nothing to put on a stream
                continue
            beats = stream_beats(payload)
            for k, (beat, last_be) in enumerate(beats):
                ctx.set(port.payload.data, beat)
                ctx.set(port.payload.last, k == len(beats) - 1)
                ctx.set(port.payload.last_be, last_be)
                ctx.set(port.valid, 1)
                while True:
                    *_, ready = await ctx.tick().sample(port.ready)
                    if ready:
                        break
        ctx.set(port.valid, 0)

    sim = Simulator(engine)
    sim.add_clock(1e-8)
    sim.add_process(memory.process(engine.mem))
    sim.add_process(monitor)
    if hasattr(engine, "o_udp"):
        sim.add_process(udp_sink)
    if udp_in:
        sim.add_process(udp_source)
    sim.add_testbench(feeder)
    run_simulation(sim, vcd)
    return run
