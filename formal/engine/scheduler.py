"""The task manager's scheduling, completion, liveness and error rules, proven on the hardware.

Harness
-------
The real :class:`hhe_gen.cores.engine.TaskManager` (no instruction queue: ``queue=0``, so a word
is decoded in the cycle it is offered; the queue is ``amaranth.lib.fifo.SyncFIFO``, covered by
the simulation tests) with one :class:`~hhe_gen.cores.engine.units.MockUnit` per built unit in
"free" mode: ``done`` whenever the solver likes (``AnySeq``) but at the latest L cycles after the
task was taken, ``error`` free with it, ``task.ready`` free while idle but at the latest after S
cycles of an offered task.  The environment is free: every instruction word (``AnySeq``, the
stream rules assumed: valid held, payload stable until taken) - unknown opcodes, malformed words,
``cfg.prime``, serialising words, anything -, and ``abort`` in any cycle.

Independent of the manager's own decode, the harness computes from each window entry's stored
word the specification's read / write sets over the B + 1 resources, its unit and whether it is
serialising (straight from ``isa.OPCODES``), and follows each unit from the unit's side (ghost
``busy`` / ``tag`` per unit, set by the task transfer the unit sees, cleared by its ``done`` or an
abort).

Properties (asserted in every cycle)
------------------------------------
1. **Hazards** - when a unit takes a task (tag t, from the payload the unit sees): entry t is
   valid, not yet dispatched, functional for that unit, the payload is its word; and no valid
   entry i older than t that has not completed has a RAW / WAW (``writes_i & (reads_t |
   writes_t)``) or WAR (``reads_i & writes_t``) hazard with it (specification sets), is
   serialising, or - ``ooo=False`` - is not yet dispatched (with ``exclusive_reads`` a
   read-after-read counts as a hazard too).  Inductive form: the same holds for
   every dispatched entry against every older unfinished one in every state.
2. **Serialising** - a serialising instruction executes (``exec``) only at the head with no task
   in flight at any unit (ghosts), no task taken in that cycle and no younger entry dispatched; a
   serialising entry is never dispatched; ``notify`` pulses only then, with that opcode; the
   configuration registers change only in the cycle after such an execution (or an abort).
3. **Completion** - each unit holds at most the one task the manager believes it holds (ghost =
   manager's ``inflight`` / tag = the mock's ``busy``); that entry stays valid, dispatched and
   not completed until the unit's ``done``, after which it is completed in the next cycle (no
   lost completion); an entry completes only through its unit's ``done``; every dispatched,
   unfinished entry is held by exactly its unit; the head retires only when completed or
   serialising.
   **Bounded liveness** - a head that became the head in cycle t0 retires by cycle
   t0 + ``retire_bound`` - 1 (a counter of consecutive cycles with a valid head that does not
   retire, reset by an abort, is asserted < ``retire_bound``), where ``retire_bound`` =
   2L + S + 2 (S >= 1) or 2L + 1 (S = 0).  Why: a serialising or completed head retires at once;
   a dispatched one within L.  An undispatched head H is eligible (nothing is older) and already
   was in t0 - 1: its only older entry P then retired, so P was completed (it no longer blocks)
   or serialising (then it blocked every younger entry too).  So the one younger task Y its unit
   may hold (or hold an offer for) was taken by t0 - 1 (S >= 1; by t0 - 2 if S = 0: nothing is
   ever held), is done by t0 - 1 + L, the unit is offered H in the next cycle (the oldest
   eligible; a held offer is dropped while the unit is busy), takes it within S cycles, is done
   within L, and H retires in the cycle after: t0 + 2L + S + 1 at the latest (t0 + 2L if
   S = 0).  The ``tight-retire-bound`` proof asserts the bound one lower and must FAIL (the worst
   case above is reachable).
4. **Errors** (the environment offers any word, ``queue=0``) - a malformed word (the decoder's
   cause, which equals ``isa.check`` by the simulation tests) offered with no abort is taken in
   the same cycle and, if no error was latched, the error is latched in the next cycle with that
   cause and its position (the number of words taken since the abort, a ghost counter equal to
   the manager's), unless a unit's data error wins that cycle (then DATA_RANGE with the task's
   position); once latched, the error stays until an abort and no word enters the window or
   binds a slot; ``error`` implies a non-zero cause.

Induction closes with these ties (all asserted, so they are proven too): ghosts = manager =
mock state per unit; mock counters within their bounds; held offers point at valid, eligible,
undispatched entries of their unit; ``e_done`` implies ``e_disp``; an entry's ``valid`` register
equals its age below the count; between valid entries the manager's age and dependency matrices
(``e_older``, ``e_block``) equal the ages and the specification's hazards; serialising entries
are never dispatched and no dispatched entry has an older serialising one; the stored masks and
unit equal the specification's (so the manager's decode of every word that entered the window is
also checked).  k-induction depth: 2 for the
safety properties (1 - 4), ``retire_bound + 2`` for the liveness counter (it needs a window
longer than its bound; ``+ 1`` was measured UNKNOWN).
"""

from __future__ import annotations

from amaranth.asserts import AnySeq
from amaranth.hdl import Array, Assert, Assume, Const, Cover, Signal
from amaranth.lib import wiring

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.decoder import UNIT_BITS
from hhe_gen.cores.engine.isa import ErrorCause, Opcode
from hhe_gen.cores.engine.task_manager import TaskManager
from hhe_gen.cores.engine.units import MockUnit

from ..common.sby import formal_module
from ..common.stream import stream_rules

__all__ = ["SchedulerHarness", "spec_sets", "PROPERTIES", "retire_bound", "induction_depth"]

PROPERTIES = ("hazard", "serial", "completion", "liveness", "error")
PRIMES = (97, 193, 7681)


def spec_sets(m, word, buffers: int, name: str, units, groups=()):
    """The specification of a word (from ``isa.OPCODES``): (reads, writes, unit, serialising,
    known) signals; ``unit``: the opcode's unit, or the first kind of its group when it is in one of
    ``groups`` (the kinds one physical unit takes); ``known``: an opcode an engine with ``units``
    built accepts; reads / writes over
    buffers 0 .. B-1 and the registers (the seed at bit B, the Rubato and network registers after it
    when those units are built; written out here, not taken from :func:`isa.register_bits`)."""
    width = buffers + (3 if isa.Unit.NETWORK in units else 2 if isa.Unit.RUBATO in units else 1)
    register_bit = {"seed": buffers, "rubato": buffers + 1, "net": buffers + 2}
    reads = Signal(width, name=f"{name}_spec_r")
    writes = Signal(width, name=f"{name}_spec_w")
    unit = Signal(UNIT_BITS, name=f"{name}_spec_unit")
    ser = Signal(name=f"{name}_spec_ser")
    known = Signal(name=f"{name}_spec_known")
    rows = word.imm[:4]
    physical = {kind: group[0] for group in groups for kind in group}
    with m.Switch(word.opcode):
        for code, info in isa.OPCODES.items():
            if info.requires != isa.Unit.NONE and info.requires not in units:
                continue
            with m.Case(code):
                m.d.comb += [unit.eq(physical.get(info.unit, info.unit)), ser.eq(code in isa.SERIALISING),
                             known.eq(1)]
                for operands, target in ((info.reads, reads), (info.writes, writes)):
                    for operand in operands:
                        if operand in isa.REGISTERS:
                            if register_bit[operand] < width:
                                m.d.comb += target[register_bit[operand]].eq(1)
                            continue
                        field, _, span = operand.partition("+")
                        base = word[field]
                        for b in range(buffers):
                            hit = (base <= b) & (b < base + rows) if span else base == b
                            with m.If(hit):
                                m.d.comb += target[b].eq(1)
    return reads, writes, unit, ser, known


def retire_bound(latency: int, stall: int) -> int:
    """The liveness bound: 2L + S + 2, or 2L + 1 when S = 0 (module docstring)."""
    return 2 * latency + stall + 2 if stall else 2 * latency + 1


def induction_depth(properties, bound: int) -> int:
    """k-induction depth: ``bound + 2`` with the liveness property (measured: ``bound + 1`` is
    UNKNOWN), else 2 (the safety properties are inductive with the invariants; 2 steps for the
    checks that look one cycle back)."""
    return bound + 2 if "liveness" in properties else 2


class SchedulerHarness:
    """The harness of the module docstring.

    Parameters
    ----------
    buffers, slots : int      the engine shape (primes 97, 193, 7681; the CKKS units by default)
    window : int              manager window
    ooo : bool
    latency : int             L, the mocks' latest ``done``
    stall : int               S, the mocks' longest wait before ``ready`` (0: ready when idle)
    units : frozenset         units built
    manager : class           TaskManager or a mutant of it (:mod:`.mutants`)
    properties : tuple        which of PROPERTIES to assert (the invariants always)
    bound : int | None        the liveness bound to assert (default ``retire_bound``)
    exclusive_reads : bool    the manager's option; the specification's hazard then includes
                              read-after-read
    groups : tuple            the manager's ``groups``: kinds one physical unit (one mock) takes
    """

    def __init__(self, *, buffers=4, slots=2, window=4, ooo=True, latency=2, stall=1,
                 units=isa.CKKS_UNITS, manager=TaskManager, properties=PROPERTIES, bound=None,
                 exclusive_reads=False, groups=()):
        self.shape = isa.EngineShape(buffers, slots, PRIMES, log_scale=0, units=frozenset(units))
        self.groups = tuple(tuple(g) for g in groups)
        self.window, self.ooo, self.latency, self.stall = window, ooo, latency, stall
        self.exclusive_reads = exclusive_reads
        self.dut = manager(self.shape, window=window, ooo=ooo, queue=0,
                           exclusive_reads=exclusive_reads, groups=self.groups)
        self.mocks = {u: MockUnit(self.dut.tag_width, "free", max_latency=latency, max_stall=stall)
                      for u in self.dut.units}
        self.properties = tuple(properties)
        self.bound = self.retire_bound if bound is None else bound

    @property
    def retire_bound(self) -> int:
        """The liveness bound (:func:`retire_bound`)."""
        return retire_bound(self.latency, self.stall)

    @property
    def depth(self) -> int:
        """k-induction depth (:func:`induction_depth`)."""
        return induction_depth(self.properties, self.bound)

    def build(self):
        tm, shape, w = self.dut, self.shape, self.window
        sb = tm.scoreboard
        nb = shape.buffers
        units = tm.units
        props = set(self.properties)
        m, _ = formal_module()
        m.submodules.tm = tm
        for u, mock in self.mocks.items():
            m.submodules[f"mock_{u.name.lower()}"] = mock
            wiring.connect(m, tm.unit_port(u), mock.port)
            m.d.comb += [mock.free_done.eq(AnySeq(1)), mock.free_error.eq(AnySeq(1))]
            if self.stall:
                m.d.comb += mock.free_ready.eq(AnySeq(1))

        # -- environment -----------------------------------------------------------------------
        abort = tm.abort
        m.d.comb += [tm.i_instr.valid.eq(AnySeq(1)), tm.i_instr.payload.eq(AnySeq(64)),
                     abort.eq(AnySeq(1))]
        stream_rules(m, tm.i_instr, check=Assume, name="instr")
        was_abort = Signal(name="was_abort")
        m.d.sync += was_abort.eq(abort)

        # -- specification of every entry --------------------------------------------------------
        spec = [spec_sets(m, sb.e_word[i], nb, f"e{i}", self.shape.units, self.groups) for i in range(w)]
        s_r = [s[0] for s in spec]
        s_w = [s[1] for s in spec]
        s_unit = [s[2] for s in spec]
        s_ser = [s[3] for s in spec]
        valid, age = sb.valid, sb.age
        e_disp, e_done = sb.e_disp, sb.e_done

        def older(i, j):
            return valid[i] & (age[i] < age[j])

        def hazard(i, j):
            rar = (s_r[i] & s_r[j]).any() if self.exclusive_reads else 0
            return (s_w[i] & (s_r[j] | s_w[j])).any() | (s_r[i] & s_w[j]).any() | rar

        # -- unit-side ghosts ----------------------------------------------------------------------
        g_busy = [Signal(name=f"g_busy_{u.name.lower()}") for u in units]
        g_tag = [Signal(tm.tag_width, name=f"g_tag_{u.name.lower()}") for u in units]
        fire, fire_tag, done = [], [], []
        for k, u in enumerate(units):
            port = tm.unit_port(u)
            f = Signal(name=f"fire_{u.name.lower()}")
            d = Signal(name=f"done_{u.name.lower()}")
            m.d.comb += [f.eq(port.task.valid & port.task.ready),
                         d.eq(port.done & ~abort)]
            fire.append(f)
            fire_tag.append(port.task.payload.tag)
            done.append(d)
            with m.If(abort):
                m.d.sync += g_busy[k].eq(0)
            with m.Elif(f):
                m.d.sync += [g_busy[k].eq(1), g_tag[k].eq(port.task.payload.tag)]
            with m.Elif(d):
                m.d.sync += g_busy[k].eq(0)

        A_word = Array(sb.e_word)
        A_valid, A_disp, A_done = Array(valid), Array(e_disp), Array(e_done)
        A_sunit, A_sser = Array(s_unit), Array(s_ser)

        # -- invariants (always; they make the induction close) ------------------------------------
        m.d.comb += Assert(sb.count <= w, "at most W entries")
        for i in range(w):
            m.d.comb += Assert(valid[i] == (age[i] < sb.count), f"e{i}: valid (a register) = its age < count")
            with m.If(valid[i]):
                m.d.comb += [
                    Assert(spec[i][4], f"e{i}: a known opcode"),
                    Assert(sb.e_word[i].opcode != Opcode.NOP, f"e{i}: no nop in the window"),
                    Assert(sb.e_reads[i] == s_r[i], f"e{i}: stored read mask = specification"),
                    Assert(sb.e_writes[i] == s_w[i], f"e{i}: stored write mask = specification"),
                    Assert(sb.e_unit[i] == s_unit[i], f"e{i}: stored unit = specification"),
                    Assert(sb.e_ser[i] == s_ser[i], f"e{i}: stored serialising = specification"),
                    Assert(~e_done[i] | e_disp[i], f"e{i}: completed implies dispatched"),
                    Assert(~s_ser[i] | ~e_disp[i], f"e{i}: a serialising entry is never dispatched"),
                ]
                held = [g_busy[k] & (g_tag[k] == i) for k in range(len(units))]
                with m.If(e_disp[i] & ~e_done[i]):
                    m.d.comb += Assert(_any(held), f"e{i}: dispatched, unfinished: its unit holds it")
        for k, (u, mock) in enumerate(zip(units, self.mocks.values())):
            name = u.name.lower()
            m.d.comb += [
                Assert(g_busy[k] == sb.inflight[k], f"{name}: ghost busy = manager inflight"),
                Assert(g_busy[k] == mock.busy, f"{name}: ghost busy = the unit's busy"),
                Assert(mock.count <= self.latency, f"{name}: mock count bounded"),
                Assert(mock.busy == (mock.count != 0), f"{name}: mock count only while busy"),
                Assert(mock.stall <= self.stall, f"{name}: mock stall bounded"),
            ]
            with m.If(g_busy[k]):
                m.d.comb += [
                    Assert(g_tag[k] == sb.flight[k], f"{name}: ghost tag = manager tag"),
                    Assert(mock.held.tag == g_tag[k], f"{name}: the unit holds the ghost tag"),
                    Assert(A_valid[g_tag[k]] & A_disp[g_tag[k]] & ~A_done[g_tag[k]] &
                           (A_sunit[g_tag[k]] == u), f"{name}: its task's entry is in flight"),
                ]
            with m.If(sb.hold[k]):
                t = sb.hold_tag[k]
                m.d.comb += [
                    Assert(~sb.inflight[k], f"{name}: a held offer only while idle"),
                    Assert(Array(sb.eligible)[t] & (A_sunit[t] == u),
                           f"{name}: the held offer is an eligible entry of the unit"),
                ]
            if not self.stall:
                m.d.comb += Assert(~sb.hold[k], f"{name}: no held offer when always ready")
        for j in range(w):
            for i in range(w):
                if i != j:
                    m.d.comb += Assert(~(valid[j] & e_disp[j] & older(i, j) & s_ser[i]),
                                       f"e{j} dispatched behind serialising e{i}")
                    # the manager's age and dependency matrices, against the ages and the specification
                    with m.If(valid[j] & valid[i]):
                        m.d.comb += [
                            Assert(sb.e_older[j][i] == older(i, j), f"e{j}: its older bit of e{i} = the ages"),
                            Assert(sb.e_block[j][i] == (older(i, j) & (hazard(i, j) | s_ser[i])),
                                   f"e{j}: its blocking bit of e{i} = the specification"),
                        ]

        # -- 1. hazards --------------------------------------------------------------------------------
        if "hazard" in props:
            for k, u in enumerate(units):
                t = fire_tag[k]
                port = tm.unit_port(u)
                with m.If(fire[k]):
                    m.d.comb += [
                        Assert(A_valid[t] & ~A_disp[t] & ~A_sser[t] & (A_sunit[t] == u),
                               f"{u.name}: takes a valid, undispatched entry of its own"),
                        Assert(_all([port.task.payload[f.name] == A_word[t][f.name]
                                     for f in isa.FIELDS]), f"{u.name}: the task is the entry's word"),
                    ]
            for j in range(w):
                fired = _any([fire[k] & (fire_tag[k] == j) for k in range(len(units))])
                for i in range(w):
                    if i == j:
                        continue
                    bad = hazard(i, j) | s_ser[i]
                    if not self.ooo:
                        bad = bad | ~e_disp[i]
                    pending = older(i, j) & ~e_done[i]
                    m.d.comb += [
                        Assert(~(fired & pending & bad),
                               f"e{j} dispatched past older unfinished e{i} (hazard / serialising / order)"),
                        Assert(~(valid[j] & e_disp[j] & pending & bad),
                               f"e{j} is dispatched while older unfinished e{i} holds it back"),
                    ]

        # -- 2. serialising ----------------------------------------------------------------------------
        if "serial" in props:
            head = sb.head
            with m.If(sb.exec):
                m.d.comb += [
                    Assert(A_valid[head] & A_sser[head], "exec: a serialising entry at the head"),
                    Assert(~_any(g_busy), "exec: no task in flight at any unit"),
                    Assert(~_any(fire), "exec: no task taken in the same cycle"),
                ]
                for i in range(w):
                    m.d.comb += Assert(~(valid[i] & e_disp[i]), f"exec: e{i} (younger) not dispatched")
            m.d.comb += Assert(~tm.notify | (sb.exec & (A_word[head].opcode == Opcode.NOTIFY)),
                               "notify only when a notify executes")
            was_exec = Signal(name="was_exec")
            last_cfg = Signal(len(tm.cfg.as_value()), name="last_cfg")
            m.d.sync += [was_exec.eq(sb.exec), last_cfg.eq(tm.cfg.as_value())]
            m.d.comb += Assert((tm.cfg.as_value() == last_cfg) | was_exec | was_abort,
                               "configuration changes only by a serialising instruction")

        # -- 3. completion and liveness --------------------------------------------------------------
        if "completion" in props:
            for k, u in enumerate(units):
                was_done = Signal(name=f"was_done_{u.name.lower()}")
                was_tag = Signal(tm.tag_width, name=f"was_tag_{u.name.lower()}")
                m.d.sync += [was_done.eq(done[k] & g_busy[k]), was_tag.eq(g_tag[k])]
                with m.If(was_done):
                    m.d.comb += Assert(A_valid[was_tag] & A_done[was_tag],
                                       f"{u.name}: done completes the unit's entry")
                m.d.comb += Assert(~(tm.unit_port(u).done & ~g_busy[k]) | abort,
                                   f"{u.name}: done only with a task")
            for j in range(w):
                last = Signal(name=f"last_done{j}")
                hit = Signal(name=f"hit{j}")
                m.d.sync += [last.eq(e_done[j]),
                             hit.eq(_any([done[k] & g_busy[k] & (g_tag[k] == j)
                                          for k in range(len(units))]))]
                with m.If(valid[j] & e_done[j] & ~last & ~was_abort):
                    m.d.comb += Assert(hit, f"e{j} completed without its unit's done")
            head = sb.head
            with m.If(sb.retire):
                m.d.comb += Assert(A_valid[head] & (A_done[head] | A_sser[head]),
                                   "the head retires only when completed or serialising")
        if "liveness" in props:
            wait = Signal(range(self.bound + 2), name="head_wait")
            with m.If(abort | sb.empty | sb.retire):
                m.d.sync += wait.eq(0)
            with m.Elif(wait <= self.bound):
                m.d.sync += wait.eq(wait + 1)
            m.d.comb += Assert(wait < self.bound, f"the head retires within {self.bound} cycles")

        # -- 4. errors ---------------------------------------------------------------------------------
        if "error" in props:
            dec = tm.decoder
            offered = tm.i_instr.valid & ~abort
            bad = dec.cause != ErrorCause.NONE
            taken = tm.i_instr.valid & tm.i_instr.ready
            g_pos = Signal(32, name="g_pos")
            with m.If(abort):
                m.d.sync += g_pos.eq(0)
            with m.Elif(taken):
                m.d.sync += g_pos.eq(g_pos + 1)
            m.d.comb += [
                Assert(g_pos == tm.position, "position = words taken since the abort"),
                Assert(~(offered & bad) | tm.i_instr.ready, "a malformed word is taken at once"),
                Assert(~tm.error | (tm.error_cause != 0), "an error has a cause"),
            ]
            unit_err = _any([done[k] & g_busy[k] & tm.unit_port(u).error
                             for k, u in enumerate(units)])
            w_bad, w_cause, w_pos, w_err, w_unit = (
                Signal(name="was_bad"), Signal(4, name="was_cause"), Signal(32, name="was_pos"),
                Signal(name="was_error"), Signal(name="was_unit_err"))
            last_bound = Signal(shape.slots, name="last_bound_dec")
            m.d.sync += [w_bad.eq(taken & bad & ~abort), w_cause.eq(dec.cause), w_pos.eq(g_pos),
                         w_err.eq(tm.error & ~abort), w_unit.eq(unit_err),
                         last_bound.eq(tm.bound_dec)]
            with m.If(w_bad & ~w_unit & ~w_err):
                m.d.comb += Assert(tm.error & (tm.error_cause == w_cause) &
                                   (tm.error_position == w_pos),
                                   "a malformed word latches its cause and position next cycle")
            with m.If(w_err):
                m.d.comb += [Assert(tm.error, "the error stays until an abort"),
                             Assert(tm.bound_dec == last_bound, "no slot bound after an error")]
            with m.If(tm.error):
                m.d.comb += Assert(~sb.insert, "nothing enters the window after an error")
            with m.If(w_unit & ~w_err):
                m.d.comb += Assert(tm.error & (tm.error_cause == ErrorCause.DATA_RANGE),
                                   "a unit's data error is latched")

        # -- covers -------------------------------------------------------------------------------------
        m.d.comb += [
            Cover(sb.full, "window full"),
            Cover(_any([fire[a] & fire[b] for a in range(len(units)) for b in range(a)]),
                  "two units take a task in one cycle"),
            Cover(sb.exec & ~was_abort, "a serialising instruction executes"),
            Cover(tm.error & (tm.error_cause == ErrorCause.DATA_RANGE), "data error"),
            Cover(_any(sb.hold), "an offer held"),
        ]
        return m


def _all(terms):
    out = Const(1)
    for t in terms:
        out = out & t
    return out


def _any(terms):
    terms = list(terms)
    out = Const(0)
    for t in terms:
        out = out | t
    return out
