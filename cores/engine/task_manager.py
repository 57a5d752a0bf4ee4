"""The engine's task manager (:class:`TaskManager`): takes instruction words, checks them, keeps
them in a window and hands each functional instruction to its unit as soon as the scoreboard
allows; executes the serialising ones itself.

Pipeline (cycles for an instruction accepted on ``i_instr`` in cycle t, queue depth >= 1)
---------------------------------------------------------------------------------------
* t     - accepted into the queue (``amaranth.lib.fifo.SyncFIFO``, ``queue`` words);
* t + 1 - at the queue's head: decoded and checked (:class:`~.decoder.InstructionDecoder`, against
          the "bound at decode" slots) and, in the same cycle, written into the window
          (:class:`~.scoreboard.Scoreboard`) - or dropped (malformed, or after an error: no state
          changes except the position counter) or retired (``nop``).  A word that needs a window
          entry waits at the queue's head while the window is full; a dropped word or a ``nop``
          never waits;
* t + 2 - the earliest cycle its task is offered to its unit (``task.valid``), if it is eligible
          (the dispatch rule in :mod:`.scoreboard`) and the unit holds no task; a ready unit takes
          it in that cycle (cycle d);
* d + L - the unit's ``done`` (L = the unit's latency); the entry is completed from d + L + 1:
          its dependents may be offered then, and it retires from the head then (one retirement
          per cycle, in program order).
With ``queue=0`` there is no queue: ``i_instr`` is decoded in the cycle it is offered (t + 1
above becomes t) and ``i_instr.ready`` is high when the word is dropped or retired at decode or
the window has room.

Serialising instructions (``isa.SERIALISING``: ``fence``, ``notify``, ``cfg.*``) take a window
entry and execute in the cycle they are at the head (every older instruction has retired, so
nothing older is in flight; nothing younger has been dispatched, since they block every younger
entry), retiring in that cycle: ``cfg.*`` write the configuration registers (``cfg``, outputs for
the units), ``notify`` pulses ``notify`` with ``notify_code`` = imm[15:0], ``fence`` only waits.
``cfg.prime`` also sets its slot in the "bound at decode" set when it passes decode, so the
instructions after it are checked against it (its own validity does not depend on that set).

Errors
------
The first error is latched (``error``, ``error_cause``, ``error_position``): a malformed
instruction's cause (:data:`isa.ErrorCause`) and position (its index among the words decoded
since the last abort, counting from 0: every word, dropped or not, including ``nop``), or
``DATA_RANGE`` with the task's position when a unit raises ``error`` with ``done`` (if both
happen in one cycle the unit's error is latched; among units, the first in port order).  From
the cycle after the error every word is dropped at decode (nothing enters the window; the
queue drains, so ``busy`` falls); entries already in the window complete normally.  ``abort``
clears the queue, the window, the error, the bound slots, the configuration registers, the
position and cycle counters, and is passed to every unit (which drops its task); the manager
accepts nothing in the abort cycle.

Cycle counter and completion records
------------------------------------
``cycle`` is 0 up to and including the cycle the first word after reset / abort is accepted on
``i_instr`` and counts every cycle after that.  When unit u reports ``done`` (cycle c), lane u
of ``completed`` is valid for one cycle with the task's position, its unit, ``dispatched`` (the
``cycle`` value of its transfer) and ``finished`` = c's ``cycle`` value: ``finished -
dispatched`` is the task's latency.  Nothing in the manager holds the seed (``ldseed`` only moves
its memory address to the memory unit).  ``busy`` is high from the cycle after a word's accept
(it is then in the queue) until the cycle after the last entry retires.

Verification
------------
``tests/cores/engine`` (the decoder against ``isa.check``; directed programs with exact cycle
counts, random programs checked for the hazard / serialising / in-order rules from the mock
units' own cycles, errors, abort) and ``hhe-gen prove engine`` (:mod:`hhe_gen.formal.engine`:
the dispatch rule, serialising execution, no lost completion, the bounded retirement of the
head and the error rules by k-induction on the real manager with free words, abort and units).
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, ResetInserter, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from . import isa
from .decoder import CAUSE_BITS, UNIT_BITS, InstructionDecoder, check_shape, instruction_layout
from .isa import ErrorCause, Opcode, Unit
from .scoreboard import MAX_WINDOW, POSITION_BITS, Scoreboard
from .units import UnitPort, tag_bits

__all__ = ["check_window", "port_groups", "TaskManager", "config_layout", "completion_layout", "status_members", "MAX_QUEUE",
           "CYCLE_BITS"]

MAX_QUEUE = 256
CYCLE_BITS = 32


def config_layout(shape: isa.EngineShape) -> data.StructLayout:
    """The configuration registers the serialising ``cfg.*`` instructions write.

    Fields
    ------
    prime : ArrayLayout(5, S)   prime id bound to each slot (``cfg.prime`` imm[31:27])
    bound : S bits              slot s has been bound (executed) since the last abort
    log_scale : 8               ``cfg.scale`` imm[7:0]
    rubato : 4                  ``cfg.rubato`` imm[3:0]          (only with Unit.RUBATO built)
    net_ip : 32, net_src_port : 16, net_dst_port : 16, net_segment : 8, net_message : 32
                                ``cfg.net.*``                     (only with Unit.NETWORK built)
    """
    fields = {"prime": data.ArrayLayout(5, shape.slots), "bound": shape.slots, "log_scale": 8}
    if Unit.RUBATO in shape.units:
        fields["rubato"] = 4
    if Unit.NETWORK in shape.units:
        fields.update(net_ip=32, net_src_port=16, net_dst_port=16, net_segment=8, net_message=32)
    return data.StructLayout(fields)


def completion_layout() -> data.StructLayout:
    """One ``completed`` lane: valid, position, unit, dispatched, finished (module docstring)."""
    return data.StructLayout({"valid": 1, "position": POSITION_BITS, "unit": UNIT_BITS,
                              "dispatched": CYCLE_BITS, "finished": CYCLE_BITS})


def status_members() -> dict:
    """The manager's status outputs, which the engine passes on unchanged (module docstring)."""
    return {"busy": Out(1), "error": Out(1), "error_cause": Out(CAUSE_BITS),
            "error_position": Out(POSITION_BITS), "notify": Out(1), "notify_code": Out(16),
            "cycle": Out(CYCLE_BITS)}


def check_window(window) -> int:
    """``window``, the number of window entries: a power of two 2 .. MAX_WINDOW."""
    if not isinstance(window, int) or isinstance(window, bool) or window not in \
            [1 << i for i in range(1, MAX_WINDOW.bit_length())]:
        raise ParameterError("window", window, f"a power of two 2 .. {MAX_WINDOW}")
    return window


def port_groups(kinds, groups) -> dict:
    """{task kind: the kind naming its physical unit's port} for the built ``kinds`` and the
    ``groups`` of kinds that share a unit (TaskManager's ``groups``)."""
    port_of = {u: u for u in kinds}
    seen = set()
    for group in groups:
        group = tuple(Unit(u) for u in group)
        if len(group) < 2 or len(set(group)) != len(group) or seen & set(group) or not set(group) <= set(kinds):
            raise ParameterError("groups", [u.name for u in group], "two or more distinct kinds among the built "
                                 "units (" + ", ".join(u.name for u in kinds) + "), each in one group")
        seen |= set(group)
        first = min(group)
        for u in group:
            port_of[u] = first
    return port_of


def unit_port_name(unit) -> str:
    """The TaskManager member of ``unit``'s port: ``unit_memory``, ``unit_ntt``, ..."""
    return "unit_" + Unit(unit).name.lower()


class TaskManager(wiring.Component):
    """Instruction queue, check, window, scoreboard, dispatch, serialising execution, errors.

    Parameters
    ----------
    shape : isa.EngineShape   buffers B, slots S, primes, log_scale, units built (one port each)
    window : int              window entries W, a power of two 2 .. 16
    ooo : bool                out-of-order dispatch (False: in-order dispatch, out-of-order
                              completion)
    queue : int               instruction queue depth, 0 .. 256 (0: no queue)
    exclusive_reads : bool    also hold back a reader behind an unfinished older reader of the
                              same buffer (for buffer files with one read port per buffer;
                              default False: only RAW / WAR / WAW)
    groups : sequence of sequences of isa.Unit   task kinds that one physical unit takes (a
                              shared datapath), each group on one port, named after its first
                              kind; a kind in no group has a port of its own (default: none)

    Members
    -------
    i_instr : In(stream.Signature(64))      instruction words (``isa.encode``)
    abort : In(1)                           soft reset strobe
    busy : Out(1)                           a word queued or an entry in the window
    error, error_cause (4), error_position (32) : Out   the first error since the last abort
    notify : Out(1), notify_code : Out(16)  a ``notify`` executes (one-cycle pulse)
    cycle : Out(32)                         cycles since the first word accepted after abort
    cfg : Out(config_layout(shape))         configuration registers for the units
    net_restart : Out(1)                    (Unit.NETWORK built) a ``cfg.net.message`` executes: the
                                            network unit numbers its packets from 0 again
    completed : Out(ArrayLayout(completion_layout(), U))   one lane per unit port, port order
    unit_<name> : Out(UnitPort(tag_bits(W)))   one per physical unit (a kind of ``shape.units``, or
                                            a group named after its first kind), in ``isa.Unit``
                                            order (``unit_memory``, ``unit_sampler``, ...)

    Attributes: ``units`` (the physical units' kinds in port order: a group's first kind),
    ``port_of`` (task kind -> the kind naming its port), ``tag_width``, ``decoder``,
    ``scoreboard`` (observation, e.g. for formal harnesses), ``bound_dec`` (the "bound at
    decode" register), ``position`` (the position counter), ``take`` (a word leaves the queue
    for decode in this cycle), ``drop`` (that word is dropped), ``word`` (the word at decode).

    Latency: module docstring (t -> t + 2 to the earliest offer to a unit).
    """

    @quiet_on_error
    def __init__(self, shape, window: int = 8, ooo: bool = True, queue: int = 4,
                 exclusive_reads: bool = False, groups=()):
        self.shape = check_shape(shape)
        self.window = check_window(window)
        if not isinstance(ooo, bool):
            raise ParameterError("ooo", ooo, "True (out-of-order dispatch) or False (in order)")
        self.ooo = ooo
        self.queue = check_int("queue", queue, 0, MAX_QUEUE)
        kinds = tuple(u for u in sorted(shape.units) if u != Unit.NONE)
        if not kinds:
            raise ParameterError("shape.units", shape.units, "at least one unit")
        self.port_of = port_groups(kinds, groups)
        self.units = tuple(u for u in kinds if self.port_of[u] == u)
        self.tag_width = tag_bits(window)
        members = {
            "i_instr": In(stream.Signature(isa.WORD_BITS)),
            "abort": In(1),
            **status_members(),
            "cfg": Out(config_layout(shape)),
            **({"net_restart": Out(1)} if Unit.NETWORK in shape.units else {}),
            "completed": Out(data.ArrayLayout(completion_layout(), len(self.units))),
        }
        for u in self.units:
            members[unit_port_name(u)] = Out(UnitPort(self.tag_width))
        super().__init__(members)
        self.decoder = InstructionDecoder(shape)
        self.scoreboard = Scoreboard(window, isa.resource_count(shape), self.units, ooo, exclusive_reads)
        self.exclusive_reads = exclusive_reads
        self.bound_dec = Signal(shape.slots)
        self.position = Signal(POSITION_BITS)
        self.running = Signal()
        self.take = Signal()
        self.drop = Signal()
        self.word = Signal(instruction_layout())
        self.dispatch_cycle = [Signal(CYCLE_BITS, name=f"dcycle_{u.name.lower()}")
                               for u in self.units]

    def unit_port(self, unit):
        """The port member of the physical unit that takes tasks of kind ``unit``."""
        return getattr(self, unit_port_name(self.port_of[Unit(unit)]))

    def _port_kind(self, unit):
        """``unit`` (a decoded kind) -> the kind naming its port: identity unless groups are given."""
        moved = {k: v for k, v in self.port_of.items() if k != v}
        out = unit
        for kind, port in moved.items():
            out = Mux(unit == kind, port, out)
        return out

    def elaborate(self, platform):
        m = Module()
        shape = self.shape
        abort = self.abort
        m.submodules.decoder = dec = self.decoder
        m.submodules.scoreboard = sb = self.scoreboard

        # -- the queue --------------------------------------------------------------------------
        q_valid = Signal()
        take, drop, word = self.take, self.drop, self.word
        if self.queue:
            m.submodules.queue = fifo = ResetInserter(abort)(SyncFIFO(width=isa.WORD_BITS,
                                                                      depth=self.queue))
            m.d.comb += [
                fifo.w_data.eq(self.i_instr.payload),
                fifo.w_en.eq(self.i_instr.valid & ~abort),
                self.i_instr.ready.eq(fifo.w_rdy & ~abort),
                q_valid.eq(fifo.r_rdy),
                word.eq(fifo.r_data),
                fifo.r_en.eq(take),
            ]
            queued = fifo.r_rdy
        else:
            m.d.comb += [q_valid.eq(self.i_instr.valid), word.eq(self.i_instr.payload),
                         self.i_instr.ready.eq(take)]
            queued = Const(0)
        accepted = self.i_instr.valid & self.i_instr.ready

        # -- decode and check -------------------------------------------------------------------
        error = self.error
        m.d.comb += [dec.word.eq(word), dec.bound.eq(self.bound_dec)]
        malformed = dec.cause != ErrorCause.NONE
        m.d.comb += drop.eq(error | malformed)
        retire_now = drop | dec.nop
        m.d.comb += take.eq(q_valid & ~abort & (retire_now | ~sb.full))
        insert = take & ~retire_now
        m.d.comb += [
            sb.insert.eq(insert),
            sb.entry.word.eq(word),
            sb.entry.reads.eq(dec.reads),
            sb.entry.writes.eq(dec.writes),
            sb.entry.unit.eq(self._port_kind(dec.unit)),
            sb.entry.serialising.eq(dec.serialising),
            sb.entry.position.eq(self.position),
            sb.clear.eq(abort),
        ]
        with m.If(abort):
            m.d.sync += [self.position.eq(0), self.bound_dec.eq(0)]
        with m.Else():
            m.d.sync += self.position.eq(self.position + take)
            with m.If(insert & (word.opcode == Opcode.CFG_PRIME)):
                m.d.sync += self.bound_dec.bit_select(word.slot, 1).eq(1)

        # -- cycle counter ----------------------------------------------------------------------
        with m.If(abort):
            m.d.sync += [self.running.eq(0), self.cycle.eq(0)]
        with m.Else():
            with m.If(accepted):
                m.d.sync += self.running.eq(1)
            with m.If(self.running | accepted):
                m.d.sync += self.cycle.eq(self.cycle + 1)

        # -- unit ports ---------------------------------------------------------------------------
        unit_err, unit_err_pos = [], []
        for k, u in enumerate(self.units):
            port = self.unit_port(u)
            offer = sb.offer[k]
            task = port.task
            for f in isa.FIELDS:
                m.d.comb += task.payload[f.name].eq(offer.word[f.name])
            m.d.comb += [
                task.payload.tag.eq(offer.tag),
                task.valid.eq(offer.valid),
                sb.fire[k].eq(task.valid & task.ready),
                sb.done[k].eq(port.done),
                port.abort.eq(abort),
            ]
            done = port.done & sb.inflight[k] & ~abort
            with m.If(task.valid & task.ready):
                m.d.sync += self.dispatch_cycle[k].eq(self.cycle)
            lane = self.completed[k]
            m.d.comb += [
                lane.valid.eq(done),
                lane.position.eq(sb.flight_position[k]),
                lane.unit.eq(u),
                lane.dispatched.eq(self.dispatch_cycle[k]),
                lane.finished.eq(self.cycle),
            ]
            unit_err.append(done & port.error)
            unit_err_pos.append(sb.flight_position[k])

        # -- the first error ------------------------------------------------------------------------
        with m.If(abort):
            m.d.sync += [error.eq(0), self.error_cause.eq(0), self.error_position.eq(0)]
        with m.Elif(~error):
            cause, position, hit = Const(0, CAUSE_BITS), Const(0, POSITION_BITS), Const(0)
            for e, p in reversed(list(zip(unit_err, unit_err_pos))):
                cause = Mux(e, ErrorCause.DATA_RANGE, cause)
                position = Mux(e, p, position)
                hit = hit | e
            dec_err = take & malformed
            with m.If(hit):
                m.d.sync += [error.eq(1), self.error_cause.eq(cause),
                             self.error_position.eq(position)]
            with m.Elif(dec_err):
                m.d.sync += [error.eq(1), self.error_cause.eq(dec.cause),
                             self.error_position.eq(self.position)]

        # -- serialising execution at the head -------------------------------------------------
        hw = sb.head_word
        cfg = self.cfg
        m.d.comb += [self.notify.eq(sb.exec & (hw.opcode == Opcode.NOTIFY)),
                     self.notify_code.eq(hw.imm[:16])]
        with m.If(abort):
            m.d.sync += cfg.eq(0)
        with m.Elif(sb.exec):
            with m.Switch(hw.opcode):
                with m.Case(Opcode.CFG_PRIME):
                    slot = hw.slot
                    m.d.sync += [Array(cfg.prime[s] for s in range(shape.slots))[slot]
                                 .eq(hw.imm[27:]),
                                 cfg.bound.bit_select(slot, 1).eq(1)]
                with m.Case(Opcode.CFG_SCALE):
                    m.d.sync += cfg.log_scale.eq(hw.imm[:8])
                if Unit.RUBATO in shape.units:
                    with m.Case(Opcode.CFG_RUBATO):
                        m.d.sync += cfg.rubato.eq(hw.imm[:4])
                if Unit.NETWORK in shape.units:
                    with m.Case(Opcode.CFG_NET_IP):
                        m.d.sync += cfg.net_ip.eq(hw.imm)
                    with m.Case(Opcode.CFG_NET_PORTS):
                        m.d.sync += [cfg.net_src_port.eq(hw.imm[16:]),
                                     cfg.net_dst_port.eq(hw.imm[:16])]
                    with m.Case(Opcode.CFG_NET_SEGMENT):
                        m.d.sync += cfg.net_segment.eq(hw.imm[:8])
                    with m.Case(Opcode.CFG_NET_MESSAGE):
                        m.d.sync += cfg.net_message.eq(hw.imm)
        if Unit.NETWORK in shape.units:
            m.d.comb += self.net_restart.eq(sb.exec & (hw.opcode == Opcode.CFG_NET_MESSAGE))

        m.d.comb += self.busy.eq(queued | ~sb.empty)
        return m
