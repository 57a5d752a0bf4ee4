"""The iterative NTT's controller (:class:`~.iterative.IterativeNtt`): the command registers and the
state machine IDLE -> LOAD (N/P beats) -> WAIT (``load_wait`` cycles) -> RUN (stage s issues its
cosets from cycle ``starts[inverse][s]`` on, one per cycle) -> UNLOAD (the unload side returns to
IDLE), with the beat, stage and cycle counters.  External memory (the transform in place in banks
outside the core): IDLE -> RUN -> DRAIN (forward: one cycle, ``done``) or RUN -> SCALE (N/P beats
read, each times N^-1 through the load's path and written back) -> DRAIN (``load_wait`` + 2 cycles,
``done`` in the last).
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Array, Const, Mux, Signal

__all__ = ["IDLE", "LOAD", "WAIT", "RUN", "UNLOAD", "SCALE", "DRAIN", "controller"]

IDLE, LOAD, WAIT, RUN, UNLOAD, SCALE, DRAIN = range(7)


def controller(m, core) -> SimpleNamespace:
    """Add the controller of ``core`` (an ``IterativeNtt``: its ``cmd``, ``i_stream`` and ``busy``
    ports, cycle formulas and stage starts) to the module ``m``.

    Returns
    -------
    SimpleNamespace   inverse, sel, lift (command registers; lift 0 with own memory), state, beat
                      (load / unload / scale beat counter), stage, cyc (the stage and its cycle of
                      the coset issued), issue (a coset is read this cycle), load_take (an input
                      beat is taken this cycle: own memory, from ``i_stream``; external, the scale
                      pass's beat read in the previous cycle), load_beat (that beat's number)
    """
    n_log, crows = core.n_log, core.n >> core.coset_bits          # cycles per stage
    totals = {inv: core.transform_cycles(inv) for inv in (False, True)}
    inverse = Signal(name="inverse")
    sel = Signal(range(len(core.moduli)), name="sel")
    lift = Signal(name="lift")
    state = Signal(range(7), name="state")
    m.d.comb += core.busy.eq(state != IDLE)

    beat = Signal(range(core.beats + 1), name="beat")         # load / unload beat counter
    wait = Signal(range(core.load_wait + 2), name="wait")
    total = max(totals.values())
    run_cnt = Signal(range(total + 1), name="run_cnt")
    stage = Signal(range(n_log + 1), name="stage")
    cyc = Signal(range(max(crows, 2)), name="cyc")
    active = Signal(name="stage_active")

    starts_f = Array(Const(s, range(total + 1)) for s in core.starts[False] + (total,))
    starts_i = Array(Const(s, range(total + 1)) for s in core.starts[True] + (total,))
    stage_start = Mux(inverse, starts_i[stage], starts_f[stage])
    # external memory, inverse: the scale pass reads from the cycle after the transform's last
    # write (the banks outside need not be transparent)
    t_last = Mux(inverse, totals[True] - 1 + core.external, totals[False] - 1)

    issue = Signal(name="issue")
    load_take = Signal(name="load_take")
    load_beat = beat
    m.d.comb += core.cmd.ready.eq(state == IDLE)
    run_state = dict(run_cnt=run_cnt, stage=stage, cyc=cyc, active=active)
    if core.external:
        load_beat = Signal.like(beat, name="load_beat")         # the scale pass: read -> taken
        m.d.sync += [load_take.eq((state == SCALE) & (beat < core.beats)), load_beat.eq(beat)]

    with m.Switch(state):
        with m.Case(IDLE):
            with m.If(core.cmd.valid):
                m.d.sync += [inverse.eq(core.cmd.payload.inverse), sel.eq(core.cmd.payload.sel), beat.eq(0)]
                if core.external:
                    m.d.sync += [lift.eq(core.cmd.payload.lift), state.eq(RUN), *_run_start(run_state)]
                else:
                    m.d.sync += state.eq(LOAD)
        if not core.external:
            with m.Case(LOAD):
                m.d.comb += [core.i_stream.ready.eq(1), load_take.eq(core.i_stream.valid)]
                with m.If(core.i_stream.valid):
                    m.d.sync += beat.eq(beat + 1)
                    with m.If(beat == core.beats - 1):
                        m.d.sync += [state.eq(WAIT), wait.eq(0)]
            with m.Case(WAIT):
                m.d.sync += wait.eq(wait + 1)
                with m.If(wait == core.load_wait - 1):
                    m.d.sync += [state.eq(RUN), *_run_start(run_state)]
        with m.Case(RUN):
            m.d.sync += run_cnt.eq(run_cnt + 1)
            with m.If((stage < n_log) & (active | (run_cnt == stage_start))):
                m.d.comb += issue.eq(1)
                m.d.sync += [active.eq(1), cyc.eq(cyc + 1)]
                with m.If(cyc == crows - 1):
                    m.d.sync += [active.eq(0), cyc.eq(0), stage.eq(stage + 1)]
            with m.If(run_cnt == t_last):
                if core.external:       # forward: done in the next cycle (the last write lands then)
                    m.d.sync += [state.eq(Mux(inverse, SCALE, DRAIN)), beat.eq(0), wait.eq(0)]
                else:
                    m.d.sync += [state.eq(UNLOAD), beat.eq(0)]
        if core.external:
            with m.Case(SCALE):         # read beat ``beat``; its N^-1 product is written load_wait + 2 later
                m.d.sync += beat.eq(beat + 1)
                with m.If(beat == core.beats - 1):
                    m.d.sync += [state.eq(DRAIN), wait.eq(core.load_wait + 1)]
            with m.Case(DRAIN):
                m.d.sync += wait.eq(wait - 1)
                with m.If(wait == 0):
                    m.d.comb += core.done.eq(1)
                    m.d.sync += state.eq(IDLE)
    return SimpleNamespace(inverse=inverse, sel=sel, lift=lift, state=state, beat=beat, stage=stage, cyc=cyc,
                           issue=issue, load_take=load_take, load_beat=load_beat)


def _run_start(r) -> list:
    """The counters' values at the first cycle of RUN."""
    return [r["run_cnt"].eq(0), r["stage"].eq(0), r["cyc"].eq(0), r["active"].eq(0)]
