"""The engine's command / status port between the task manager and a unit (:class:`UnitPort`),
and a parameterised stand-in unit (:class:`MockUnit`) for tests and formal harnesses.

Protocol of one port (the manager is the initiator, the unit implements ``In(UnitPort(...))``):

* ``task`` - a stream (``amaranth.lib.stream`` rules: once ``valid`` is high it stays high with
  the same payload until the transfer) carrying the instruction's fields and the manager's window
  tag (:func:`task_layout`).  A transfer (``valid & ready``) hands one task to the unit.  The
  manager offers a task only while the unit has none of its tasks in flight.
* ``done`` - one-cycle pulse: the task the unit holds has completed (its results are written).
  The unit may raise ``task.ready`` again in the same cycle or later; the manager offers the
  next task from the cycle after ``done``.
* ``error`` - valid with ``done``: the task met a run-time data error
  (``isa.ErrorCause.DATA_RANGE``, e.g. a checked load saw a word >= q); the task still completes.
* ``abort`` - one-cycle strobe from the manager (soft reset): the unit drops the task it holds,
  raises no ``done`` for it (a ``done`` in the abort cycle itself is ignored) and is idle in the
  next cycle.  ``task.valid`` is low in that cycle.
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_int, check_power_of_two, is_int
from hhe_gen.params.errors import ParameterError

from . import isa

__all__ = ["tag_bits", "task_layout", "UnitPort", "MockUnit", "MAX_MOCK_LATENCY", "check_unit_sizes"]

#: The largest latency a :class:`MockUnit` table or bound may name.
MAX_MOCK_LATENCY = 1 << 12


def check_unit_sizes(unit, n, lanes, word_bits, buffers, slots, primes=None, *, n_low: int = 8,
                     lanes_high=None, fit_primes: bool = False) -> None:
    """The sizes every engine unit takes, checked and set on ``unit``: ``n`` (a power of two
    ``n_low`` .. 2^16), ``lanes`` (a power of two 1 .. ``lanes_high``, default N), ``word_bits``,
    ``buffers``, ``slots``, ``rows`` = N / lanes and, given ``primes``, the built-in primes (1 .. 32;
    with ``fit_primes`` each must fit ``word_bits``)."""
    unit.n = check_power_of_two("n", n, n_low, 1 << 16)
    unit.lanes = check_power_of_two("lanes", lanes, 1, n if lanes_high is None else lanes_high)
    unit.word_bits = check_int("word_bits", word_bits, 1, 64)
    unit.buffers = check_int("buffers", buffers, 1, isa.MAX_BUFFERS)
    unit.slots = check_int("slots", slots, 1, isa.MAX_SLOTS)
    unit.rows = n // lanes
    if primes is None:
        return
    unit.primes = tuple(primes)
    if not 1 <= len(unit.primes) <= 32:
        raise ParameterError("primes", primes, "1 .. 32 built-in primes")
    widest = max(q.bit_length() for q in unit.primes)
    if fit_primes and widest > word_bits:
        raise ParameterError("word_bits", word_bits, f">= {widest} (the largest prime's bit length)")


def tag_bits(window: int) -> int:
    """Bits of a window tag (a window slot index): log2(window), at least 1."""
    return max(1, (window - 1).bit_length())


def task_layout(tag_width: int) -> data.StructLayout:
    """Payload of a unit's ``task`` stream: the fields of :data:`isa.FIELDS` (same names and
    widths: opcode, dst, a, b, c, slot, flags, imm) and ``tag`` (the manager's window slot)."""
    check_int("tag_width", tag_width, 1, 8)
    return data.StructLayout({**{f.name: f.width for f in isa.FIELDS}, "tag": tag_width})


class UnitPort(wiring.Signature):
    """The task manager's side of one unit's port (module docstring for the protocol).

    Parameters
    ----------
    tag_width : int    bits of the window tag, 1 .. 8 (:func:`tag_bits` of the window)

    Members
    -------
    task : Out(stream.Signature(task_layout(tag_width)))   the task handed to the unit
    done : In(1)       the unit's task completed (one-cycle pulse)
    error : In(1)      with ``done``: a run-time data error (DATA_RANGE)
    abort : Out(1)     soft reset: drop the task held
    """

    def __init__(self, tag_width: int):
        self.tag_width = check_int("tag_width", tag_width, 1, 8)
        super().__init__({
            "task": Out(stream.Signature(task_layout(tag_width))),
            "done": In(1),
            "error": In(1),
            "abort": Out(1),
        })

    def __eq__(self, other):
        return type(other) is UnitPort and other.tag_width == self.tag_width

    def __hash__(self):
        return hash((UnitPort, self.tag_width))

    def __repr__(self):
        return f"UnitPort({self.tag_width})"


def _table(name, value, allowed):
    if is_int(value):
        value = (value,)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ParameterError(name, value, allowed)
    out = tuple(value)
    if not out:
        raise ParameterError(name, value, allowed)
    return out


class MockUnit(wiring.Component):
    """A stand-in unit: takes a task, raises ``done`` some cycles later, honours ``abort``.

    Parameters
    ----------
    tag_width : int
        the port's tag width (:func:`tag_bits` of the manager's window).
    latency : int, sequence of int, or "free"
        cycles from the task transfer (cycle d) to ``done`` (cycle d + latency), 1 .. 4096: one
        value for every task, or a table (the n-th task since reset / abort takes
        ``latency[n % len]``); "free": ``done`` whenever the input ``free_done`` is high while a
        task is held, and at the latest ``max_latency`` cycles after the transfer (formal
        harnesses drive ``free_done`` with ``AnySeq``).
    errors : bool or sequence of bool
        with ``done``, raise ``error`` for the n-th task if ``errors[n % len]`` (default: never);
        in "free" mode ``error`` = ``free_error`` with ``done``.
    max_latency : int
        the bound of the "free" mode, 1 .. 4096.
    max_stall : int
        "free" mode only: an idle unit is ready when ``free_ready`` is high; a task offered to
        an idle unit waits at most ``max_stall`` cycles (0: always ready when idle).  Table modes are
        always ready when idle.

    Members
    -------
    port : In(UnitPort(tag_width))   the unit side of the manager's port
    free_done, free_error : In(1)    "free" mode only
    free_ready : In(1)               "free" mode with ``max_stall`` > 0 only

    Observation members (not ports): ``busy`` (a task is held), ``count`` (cycles since its
    transfer: 1 in the cycle after it), ``tasks`` (tasks taken since reset / abort, 16 bits,
    wraps), ``held`` (the task's payload), ``stall`` (cycles an offered task has waited, free
    mode).

    Latency: ``task.ready`` = idle and not ``abort``; ``done`` in cycle d + latency for a task
    taken in cycle d; idle (ready) again in cycle d + latency + 1.
    """

    @quiet_on_error
    def __init__(self, tag_width: int, latency=1, *, errors=False, max_latency: int = 4,
                 max_stall: int = 0):
        self.tag_width = check_int("tag_width", tag_width, 1, 8)
        self.free = isinstance(latency, str)
        if self.free:
            if latency != "free":
                raise ParameterError("latency", latency, "an int, a table of ints or 'free'")
            self.max_latency = check_int("max_latency", max_latency, 1, MAX_MOCK_LATENCY)
            self.max_stall = check_int("max_stall", max_stall, 0, MAX_MOCK_LATENCY)
            self.latency = None
            self.errors = ()
        else:
            self.latency = _table("latency", latency, f"an int 1 .. {MAX_MOCK_LATENCY} or a "
                                                      f"non-empty table of them, or 'free'")
            for i, lat in enumerate(self.latency):
                check_int(f"latency[{i}]", lat, 1, MAX_MOCK_LATENCY)
            if isinstance(errors, bool):
                errors = (errors,)
            self.errors = _table("errors", errors, "a bool or a non-empty table of bools")
            if not all(isinstance(e, bool) for e in self.errors):
                raise ParameterError("errors", errors, "a bool or a non-empty table of bools")
            self.max_latency = max(self.latency)
            self.max_stall = 0
        members = {"port": In(UnitPort(tag_width))}
        if self.free:
            members.update(free_done=In(1), free_error=In(1))
            if self.max_stall:
                members["free_ready"] = In(1)
        super().__init__(members)
        self.busy = Signal()
        self.count = Signal(range(self.max_latency + 1))
        self.tasks = Signal(16)
        self.held = Signal(task_layout(tag_width))
        self.stall = Signal(range(self.max_stall + 1))
        self.cur_latency = Signal(range(self.max_latency + 1))
        self.cur_error = Signal()

    def elaborate(self, platform):
        m = Module()
        p = self.port
        abort = p.abort
        take = p.task.valid & p.task.ready
        if self.free:
            due = self.free_done | (self.count == self.max_latency)
            err = self.free_error
            if self.max_stall:
                may = self.free_ready | (self.stall == self.max_stall)
                with m.If(abort | ~p.task.valid | take):
                    m.d.sync += self.stall.eq(0)
                with m.Elif(~self.busy & (self.stall != self.max_stall)):
                    m.d.sync += self.stall.eq(self.stall + 1)
            else:
                may = Const(1)
        else:
            due = self.count == self.cur_latency
            err = self.cur_error
            may = Const(1)
        done = Signal()
        m.d.comb += [
            p.task.ready.eq(~self.busy & ~abort & may),
            done.eq(self.busy & ~abort & due),
            p.done.eq(done),
            p.error.eq(done & err),
        ]
        with m.If(abort):
            m.d.sync += [self.busy.eq(0), self.count.eq(0), self.tasks.eq(0)]
        with m.Elif(take):
            m.d.sync += [self.busy.eq(1), self.count.eq(1), self.held.eq(p.task.payload),
                         self.tasks.eq(self.tasks + 1)]
            if not self.free:
                lat = Array(Const(v, range(self.max_latency + 1)) for v in self.latency)
                errs = Array(Const(int(e), 1) for e in self.errors)
                m.d.sync += [self.cur_latency.eq(lat[self.tasks % len(self.latency)]),
                             self.cur_error.eq(errs[self.tasks % len(self.errors)])]
        with m.Elif(done):
            m.d.sync += [self.busy.eq(0), self.count.eq(0)]
        with m.Elif(self.busy):
            m.d.sync += self.count.eq(self.count + 1)
        return m
