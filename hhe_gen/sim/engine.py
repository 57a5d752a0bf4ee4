"""Run a program on the RTL engine (:class:`hhe_gen.cores.engine.engine.Engine`) in Amaranth's
simulator, with a simulated external memory (:class:`hhe_gen.sim.memory.MemoryModel`) behind its
memory port.

The program's words are offered on ``i_instr`` one per cycle as fast as the engine takes them; the
run ends when the engine is idle after the last word (``busy`` low).  Every completed task is
recorded from the engine's ``completed`` lanes, every ``notify`` with its cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hhe_gen.params.checks import check_int

__all__ = ["TaskRecord", "EngineRun", "run_engine"]


@dataclass(frozen=True)
class TaskRecord:
    """One completed task: its position in the program, unit, and the engine cycles of its dispatch
    and its completion (``finished - dispatched`` = the task's latency)."""
    position: int
    unit: int
    dispatched: int
    finished: int


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
    """
    memory: object
    cycles: int = 0
    error_cause: int = 0
    error_position: int = 0
    notifies: list = field(default_factory=list)
    tasks: list = field(default_factory=list)

    def busy_cycles(self) -> dict:
        """Cycles each unit was busy with a task (sum of its tasks' latencies)."""
        out: dict = {}
        for t in self.tasks:
            out[t.unit] = out.get(t.unit, 0) + t.finished - t.dispatched
        return out


def run_engine(engine, words, memory, *, max_cycles: int = 10_000_000, abort_after=None,
               vcd: str | None = None) -> EngineRun:
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

    sim = Simulator(engine)
    sim.add_clock(1e-8)
    sim.add_process(memory.process(engine.mem))
    sim.add_process(monitor)
    sim.add_testbench(feeder)
    run_simulation(sim, vcd)
    return run
