"""The iterative NTT's controller (:class:`~.iterative.IterativeNtt`): the command registers and the
state machine IDLE -> LOAD (N/P beats) -> WAIT (``load_wait`` cycles) -> RUN (stage s issues its
cosets from cycle ``starts[inverse][s]`` on, one per cycle) -> UNLOAD (the unload side returns to
IDLE), with the beat, stage and cycle counters.  External memory (the transform in place in banks
outside the core): IDLE -> RUN -> DRAIN (one cycle, ``done``; the inverse's N^-1 is in its
butterflies, op ``gsh``).
"""

from __future__ import annotations

from types import SimpleNamespace

from amaranth.hdl import Array, Const, Mux, Signal

__all__ = ["IDLE", "LOAD", "WAIT", "RUN", "UNLOAD", "DRAIN", "controller"]

IDLE, LOAD, WAIT, RUN, UNLOAD, DRAIN = range(6)


def controller(m, core) -> SimpleNamespace:
    """Add the controller of ``core`` (an ``IterativeNtt``: its ``cmd``, ``i_stream`` and ``busy``
    ports, cycle formulas and stage starts) to the module ``m``.

    Returns
    -------
    SimpleNamespace   inverse, sel, lift (command registers; lift 0 with own memory), state, beat
                      (load / unload beat counter), stage, cyc (the stage and its cycle of the
                      coset issued), issue (a coset is read this cycle), load_take (an input beat
                      is taken from ``i_stream`` this cycle; external memory: never), load_beat
                      (that beat's number)
    """
    n_log, crows = core.n_log, core.n >> core.coset_bits          # cycles per stage
    totals = {inv: core.transform_cycles(inv) for inv in (False, True)}
    inverse = Signal(name="inverse")
    sel = Signal(range(len(core.moduli)), name="sel")
    lift = Signal(name="lift")
    state = Signal(range(6), name="state")
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
    t_last = Mux(inverse, totals[True] - 1, totals[False] - 1)

    issue = Signal(name="issue")
    load_take = Signal(name="load_take")
    load_beat = beat
    m.d.comb += core.cmd.ready.eq(state == IDLE)
    run_state = dict(run_cnt=run_cnt, stage=stage, cyc=cyc, active=active)

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
                if core.external:       # done in the next cycle (the last write lands then)
                    m.d.sync += [state.eq(DRAIN), wait.eq(0)]
                else:
                    m.d.sync += [state.eq(UNLOAD), beat.eq(0)]
        if core.external:
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
