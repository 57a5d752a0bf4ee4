"""The engine's instruction window and scoreboard (:class:`Scoreboard`): which instruction may go
to its unit now.

Window
------
``window`` = W entries (a power of two) in a ring: ``head`` is the oldest entry, ``count`` the
number of valid entries, entry i is valid when its age ``(i - head) mod W`` is below ``count``; a
new entry is written at ``head + count`` (its tag = its slot index, which stays fixed until it
retires).  Each entry holds the instruction word, its read and write masks over the R = B + 1
resources (buffers and the seed), its unit, a serialising flag, its program position (32 bits)
and two flags: ``disp`` (handed to its unit) and ``done`` (its unit reported ``done``).

The words and the positions are W-deep memories with an asynchronous read port per reader (each
unit's offer and flight, the head), which FPGA tools map to distributed RAM: each reader is then a
W-word RAM instead of a W-to-1 multiplexer of 96 registers (docs/engine.md has the area).
Everything the dispatch rule reads (masks, unit, flags) stays in registers.

Age and dependency matrices
---------------------------
The pairwise part of the rule is worked out once, when an entry enters, and kept in registers:
entry j's ``e_older[j]`` has bit i set when entry i was valid as j entered (so i is older), and
``e_block[j]`` bit i when moreover i has a hazard with j or is serialising.  An entry's bit in
every other row is cleared when it enters (a new occupant of slot i is younger than all).  Each
cycle then needs only an AND-OR over registers: j is blocked when some valid, unfinished i has
``e_block[j][i]`` (or, in order, ``e_older[j][i]`` and not dispatched), and the oldest
candidate of a unit is the one with no older candidate (``e_older``).  W^2 register bits replace
W^2 mask comparisons and age subtractions per cycle (docs/engine.md has the area and the clock).

Dispatch rule
-------------
Entry j is *eligible* when it is valid, functional (not serialising), not yet dispatched, and no
valid entry i older than j (age_i < age_j) that has not completed (``done`` = 0) has

* a hazard with j: ``writes_i & (reads_j | writes_j)`` (RAW, WAW) or ``reads_i & writes_j`` (WAR)
  non-zero - with ``exclusive_reads=True`` also ``reads_i & reads_j`` (two readers of one
  resource never overlap: for buffers with a single read port shared by the units), or
* ``serialising``, or
* (``ooo=False`` only) ``disp`` = 0 - in-order dispatch; completion stays out of order.

For each built unit u: if the unit has no task in flight (``inflight[u]`` = 0), the manager
offers it the *oldest* eligible entry of that unit (``offer[u].valid``, ``.tag``, ``.word``).  An
offer not taken (``fire[u]`` low) is held - the same tag is offered in the next cycles until
taken, as the stream rules require (an entry never loses eligibility, so the held entry stays
eligible).  Several units may take a task in the same cycle.  ``fire[u]`` marks the entry
``disp`` and the unit in flight with that tag; ``done[u]`` marks that tag's entry ``done`` and
the unit free (both take effect in the next cycle: a dependent of a task that completes in cycle
c may dispatch in cycle c + 1).

Retirement and serialising entries
----------------------------------
In each cycle the head retires when it is valid and either completed (``done``) or serialising:
a serialising entry at the head executes (``exec`` = 1 in that cycle, ``head_word`` is its
instruction) and retires in the same cycle.  At the head nothing older exists, and every younger
entry is blocked by it until it retires, so nothing is in flight when it executes (this is
proven in ``hhe_gen.formal.engine``).  At most one entry retires per cycle; ``insert`` needs
``full`` = 0 (a slot freed by a retirement is usable in the next cycle).

``clear`` (the engine's abort) empties the window and forgets every flight in one cycle.

Latency: an entry inserted in cycle t is valid (and may be offered) in cycle t + 1.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_int, check_power_of_two
from hhe_gen.params.errors import ParameterError

from . import isa
from .decoder import UNIT_BITS, instruction_layout
from .units import tag_bits

__all__ = ["entry_layout", "offer_layout", "Scoreboard", "POSITION_BITS", "MAX_WINDOW"]

POSITION_BITS = 32
MAX_WINDOW = 16


def entry_layout(resources: int) -> data.StructLayout:
    """What ``insert`` writes into an entry: word, reads / writes masks, unit, serialising,
    position."""
    return data.StructLayout({"word": instruction_layout(), "reads": resources, "writes": resources,
                              "unit": UNIT_BITS, "serialising": 1, "position": POSITION_BITS})


def offer_layout(window: int) -> data.StructLayout:
    """One unit's offer: valid, tag (window slot) and the entry's instruction word."""
    return data.StructLayout({"valid": 1, "tag": tag_bits(window), "word": instruction_layout()})


class Scoreboard(wiring.Component):
    """Instruction window, hazard check, dispatch choice and retirement (module docstring).

    Parameters
    ----------
    window : int       W entries, a power of two 2 .. 16
    resources : int    R, bits of the read / write masks (:func:`isa.resource_count`), 2 .. 35
    units : sequence of isa.Unit   the units offered tasks, in port order (1 .. 8 distinct,
                       not ``Unit.NONE``)
    ooo : bool         out-of-order dispatch (False: an entry waits until every older entry has
                       been dispatched)
    exclusive_reads : bool   read-after-read also holds a younger entry back (default False:
                       concurrent readers of one resource are allowed)

    Members
    -------
    insert : In(1)                     write ``entry`` at the tail (needs ``full`` = 0)
    entry : In(entry_layout(R))
    full, empty : Out(1)
    offer : Out(ArrayLayout(offer_layout(W), U))   per unit (in ``units`` order)
    fire : In(U)                       bit u: unit u took its offer in this cycle
    done : In(U)                       bit u: unit u reports its task completed in this cycle
    flight : Out(ArrayLayout(tag, U)) / inflight : Out(U)   the tag unit u holds / whether it holds one
    flight_position : Out(ArrayLayout(32, U))   the program position of the task unit u holds
    exec : Out(1)                      the head is serialising and executes (retires) now
    head_word : Out(instruction_layout())   the head entry's instruction
    clear : In(1)                      empty the window, forget every flight

    Observation members (not ports): ``head``, ``count``, per entry the lists ``e_word``,
    ``e_reads``, ``e_writes``, ``e_unit``, ``e_ser``, ``e_disp``, ``e_done``, ``e_pos``, ``valid``
    (registers, equal to ``age < count``) and the combinational ``age`` and ``eligible`` (lists of
    1-bit signals), the matrices ``e_older`` / ``e_block`` (lists of W-bit rows), per unit
    ``hold`` / ``hold_tag``, and ``retire`` (the head retires this cycle).  ``e_word`` and
    ``e_pos`` read the memories (a read port each, which synthesis drops when nothing reads it:
    the proofs do).

    Latency: combinational from the registers to ``offer``, ``exec``; everything takes effect in
    the next cycle.
    """

    @quiet_on_error
    def __init__(self, window: int = 8, resources: int = 5, units=tuple(sorted(isa.CKKS_UNITS)),
                 ooo: bool = True, exclusive_reads: bool = False):
        self.window = check_power_of_two("window", window, 2, MAX_WINDOW)
        self.resources = check_int("resources", resources, 2, isa.MAX_BUFFERS + 3)
        units = tuple(units)
        if not 1 <= len(units) <= len(isa.Unit) - 1 or len(set(units)) != len(units) or \
                any(u not in set(isa.Unit) or u == isa.Unit.NONE for u in units):
            raise ParameterError("units", units, f"1 .. {len(isa.Unit) - 1} distinct isa.Unit values other than NONE")
        self.units = tuple(isa.Unit(u) for u in units)
        if not isinstance(ooo, bool):
            raise ParameterError("ooo", ooo, "True (out-of-order dispatch) or False (in order)")
        self.ooo = ooo
        if not isinstance(exclusive_reads, bool):
            raise ParameterError("exclusive_reads", exclusive_reads, "True or False")
        self.exclusive_reads = exclusive_reads
        self.tag_width = tb = tag_bits(window)
        n = len(units)
        super().__init__({
            "insert": In(1),
            "entry": In(entry_layout(resources)),
            "full": Out(1),
            "empty": Out(1),
            "offer": Out(data.ArrayLayout(offer_layout(window), n)),
            "fire": In(n),
            "done": In(n),
            "flight": Out(data.ArrayLayout(tb, n)),
            "inflight": Out(n),
            "flight_position": Out(data.ArrayLayout(POSITION_BITS, n)),
            "exec": Out(1),
            "head_word": Out(instruction_layout()),
            "clear": In(1),
        })
        w = window
        self.head = Signal(tb)
        self.count = Signal(range(w + 1))
        self.e_word = [Signal(instruction_layout(), name=f"e_word{i}") for i in range(w)]
        self.e_reads = [Signal(resources, name=f"e_reads{i}") for i in range(w)]
        self.e_writes = [Signal(resources, name=f"e_writes{i}") for i in range(w)]
        self.e_unit = [Signal(UNIT_BITS, name=f"e_unit{i}") for i in range(w)]
        self.e_ser = [Signal(name=f"e_ser{i}") for i in range(w)]
        self.e_disp = [Signal(name=f"e_disp{i}") for i in range(w)]
        self.e_done = [Signal(name=f"e_done{i}") for i in range(w)]
        self.e_pos = [Signal(POSITION_BITS, name=f"e_pos{i}") for i in range(w)]
        self.e_older = [Signal(w, name=f"e_older{i}") for i in range(w)]
        self.e_block = [Signal(w, name=f"e_block{i}") for i in range(w)]
        self.valid = [Signal(name=f"valid{i}") for i in range(w)]
        self.age = [Signal(tb, name=f"age{i}") for i in range(w)]
        self.eligible = [Signal(name=f"eligible{i}") for i in range(w)]
        self.hold = [Signal(name=f"hold_{u.name.lower()}") for u in self.units]
        self.hold_tag = [Signal(tb, name=f"hold_tag_{u.name.lower()}") for u in self.units]
        self.retire = Signal()

    def _hazard(self, i: int, entry):
        """RAW / WAW (``writes_i & (reads_j | writes_j)``) or WAR (``reads_i & writes_j``)
        between entry i and a younger ``entry`` j entering (and RAR with ``exclusive_reads``)."""
        reads_j = entry.reads | entry.writes if self.exclusive_reads else entry.writes
        return (self.e_writes[i] & (entry.reads | entry.writes)).any() | (self.e_reads[i] & reads_j).any()

    def _stops(self, i: int, entry):
        """Whether entry i, older and unfinished, holds back the ``entry`` entering for as long as
        it stays so (the dispatch rule without the in-order part, which changes with ``disp``)."""
        return self._hazard(i, entry) | self.e_ser[i]

    def elaborate(self, platform):
        m = Module()
        w, units = self.window, self.units
        mask = w - 1
        head, count = self.head, self.count
        valid, age = self.valid, self.age
        for i in range(w):
            m.d.comb += age[i].eq((i - head) & mask)         # (valid[i] is a register: age[i] < count)

        # -- eligibility: no older unfinished entry with a hazard / serialising / (in order) ------
        for j in range(w):
            blockers = []
            for i in range(w):
                if i == j:
                    continue
                stop = self.e_block[j][i]
                if not self.ooo:
                    stop = stop | (self.e_older[j][i] & ~self.e_disp[i])
                blockers.append(valid[i] & ~self.e_done[i] & stop)
            blocked = _any(blockers)
            m.d.comb += self.eligible[j].eq(valid[j] & ~self.e_ser[j] & ~self.e_disp[j] & ~blocked)

        # -- the words and positions: written at insert, read by each reader ----------------------
        m.submodules.words = words = Memory(shape=instruction_layout(), depth=w, init=[])
        m.submodules.positions = positions = Memory(shape=POSITION_BITS, depth=w, init=[])

        def read(memory, addr):
            port = memory.read_port(domain="comb")
            m.d.comb += port.addr.eq(addr)
            return port.data

        for i in range(w):
            m.d.comb += [self.e_word[i].eq(read(words, i)), self.e_pos[i].eq(read(positions, i))]

        # -- per unit: the oldest eligible entry, or the held offer -----------------------------
        inflight_tag = [Signal(self.tag_width, name=f"flight_{u.name.lower()}") for u in units]
        inflight = [Signal(name=f"inflight_{u.name.lower()}") for u in units]
        fire_to, done_to = [], []           # per unit: one-hot entry masks
        for k, u in enumerate(units):
            cand = [Signal(name=f"cand_{u.name.lower()}{j}") for j in range(w)]
            for j in range(w):
                m.d.comb += cand[j].eq(self.eligible[j] & (self.e_unit[j] == u))
            sel_tag = Signal(self.tag_width, name=f"sel_{u.name.lower()}")
            any_sel = _any(cand)
            oldest = []                          # one-hot: the candidates have one oldest
            for j in range(w):
                younger_than = _any([cand[i] & self.e_older[j][i] for i in range(w) if i != j])
                oldest.append(cand[j] & ~younger_than)
            for b in range(self.tag_width):      # its tag, as an OR of the one-hot bits
                m.d.comb += sel_tag[b].eq(_any([oldest[j] for j in range(w) if j >> b & 1]))
            tag = Mux(self.hold[k], self.hold_tag[k], sel_tag)
            offer = self.offer[k]
            m.d.comb += [
                offer.valid.eq((self.hold[k] | any_sel) & ~inflight[k] & ~self.clear),
                offer.tag.eq(tag),
                offer.word.eq(read(words, offer.tag)),
                self.flight[k].eq(inflight_tag[k]),
                self.inflight[k].eq(inflight[k]),
                self.flight_position[k].eq(read(positions, inflight_tag[k])),
            ]
            fire = offer.valid & self.fire[k]
            done = inflight[k] & self.done[k] & ~self.clear
            m.d.sync += [self.hold[k].eq(offer.valid & ~fire), self.hold_tag[k].eq(offer.tag)]
            with m.If(self.clear):
                m.d.sync += [inflight[k].eq(0), self.hold[k].eq(0)]
            with m.Elif(fire):
                m.d.sync += [inflight[k].eq(1), inflight_tag[k].eq(offer.tag)]
            with m.Elif(done):
                m.d.sync += inflight[k].eq(0)
            fire_to.append([fire & (offer.tag == j) for j in range(w)])
            done_to.append([done & (inflight_tag[k] == j) for j in range(w)])

        # -- head: retire a completed entry, execute a serialising one -----------------------------
        head_ser = Array(self.e_ser)[head]
        head_done = Array(self.e_done)[head]
        nonempty = count != 0
        m.d.comb += [
            self.head_word.eq(read(words, head)),
            self.exec.eq(nonempty & head_ser & ~self.clear),
            self.retire.eq(nonempty & (head_ser | head_done) & ~self.clear),
            self.full.eq(count == w),
            self.empty.eq(~nonempty),
        ]
        insert = self.insert & (count != w) & ~self.clear
        e = self.entry
        tail = Signal(self.tag_width)
        m.d.comb += tail.eq(head + count)
        word_in, position_in = words.write_port(), positions.write_port()
        m.d.comb += [word_in.addr.eq(tail), word_in.data.eq(e.word), word_in.en.eq(insert),
                     position_in.addr.eq(tail), position_in.data.eq(e.position), position_in.en.eq(insert)]
        with m.If(self.clear):
            m.d.sync += [head.eq(0), count.eq(0), [v.eq(0) for v in valid]]
        with m.Else():
            m.d.sync += count.eq(count + insert - self.retire)
            with m.If(self.retire):
                m.d.sync += head.eq(head + 1)
            for j in range(w):                   # (insert needs count < W, retire count > 0: never one slot)
                with m.If(insert & (tail == j)):
                    m.d.sync += valid[j].eq(1)
                with m.Elif(self.retire & (head == j)):
                    m.d.sync += valid[j].eq(0)
        # the entering entry's row of each matrix: every valid entry is older than it
        older_in = Cat(*valid)
        block_in = Cat(*(valid[i] & self._stops(i, e) for i in range(w)))
        for j in range(w):
            with m.If(insert & (tail == j)):
                m.d.sync += [self.e_reads[j].eq(e.reads), self.e_writes[j].eq(e.writes),
                             self.e_unit[j].eq(e.unit), self.e_ser[j].eq(e.serialising),
                             self.e_disp[j].eq(0), self.e_done[j].eq(0),
                             self.e_older[j].eq(older_in), self.e_block[j].eq(block_in)]
            with m.Elif(insert):                 # the entering entry is younger than entry j
                m.d.sync += [self.e_older[j].eq(self.e_older[j] & ~(1 << tail)),
                             self.e_block[j].eq(self.e_block[j] & ~(1 << tail))]
            with m.If(_any([f[j] for f in fire_to])):
                m.d.sync += self.e_disp[j].eq(1)
            with m.If(_any([d[j] for d in done_to])):
                m.d.sync += self.e_done[j].eq(1)
        return m


def _any(terms):
    terms = list(terms)
    if not terms:
        return Const(0)
    out = terms[0]
    for t in terms[1:]:
        out = out | t
    return out
