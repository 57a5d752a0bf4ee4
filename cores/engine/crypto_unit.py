"""The engine's crypto unit: one array of P multi-field butterflies
(:class:`~hhe_gen.cores.arith.butterfly_array.ButterflyArray`) that the sequencers of the NTT, the
pointwise operations, the codec's special FFT and Rubato's Feistel take turns on, one task at a
time (DNA-HHE's crypto unit, section III-A, Fig. 5).

::

    port (NTT, POINTWISE, CODEC,  --> task router --> NttUnit        --+
          RUBATO tasks)                           --> PointwiseUnit  --+-- lanes_port --> mode mux --> ButterflyArray
                                                  --> CodecUnit      --+                  (Z_q, Z_t, complex)
                                                  --> RubatoUnit     --+
                                                                              <-- x, y (to every sequencer)

Each sequencer is the engine's unit of that kind built with ``butterflies="external"``: its
``lanes_port`` drives the array instead of butterflies of its own, and it counts on the array's
latency (one latency for every field: the butterfly's fixed pipeline).  The unit takes the kinds
on one task-manager port (its declaration's ``also``), so the manager offers it one task at a time
and the sequencers never run together.  A task goes to the sequencer of its opcode's kind; the
register ``mode``, set when a task is taken, selects whose ``op``, ``field``, ``sel`` and operands
the array sees.  An operand only some sequencers drive (``c``: the pointwise ``mac`` and Rubato's
Feistel; ``w``: the NTT's and the FFT's twiddles) is multiplexed among those alone: the other
sequencers' ops ignore it (the butterfly's datapath, :mod:`hhe_gen.cores.arith.butterfly`: ct and
gs never read ``c``, mul / add / sub / mac never read ``w``).  Each
sequencer's results come back on ``x`` and ``y`` the array's latency later, while its task still
holds the unit (a task's ``done`` follows its last result).

Buffer ports are shared the same way: read port k of the unit is the k-th read member of every
sequencer that has one (the NTT streaming ``rd``; pointwise ``rd0``, ``rd1``, ``rd2``; the codec's
``rd`` and decode's ``rd_row0`` ..; Rubato's ``rd``), multiplexed by ``mode``, its data to all of
them; the write port likewise.  The NTT in place keeps the buffer file's bank port (``bank``).

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width, primes : the engine's sizes
    (:class:`.pointwise_unit.PointwiseUnit`)
kind, latency, target, **reducer : the butterflies' Z_q reducer (a kind the pointwise unit takes:
    "barrett", "special-barrett"), the array's latency (None: of the default of its fields and the
    next two, the one whose sharing plan needs the fewest DSP tiles) and target
twiddles, banking, in_place : the NTT's (:class:`.ntt_unit.NttUnit`)
codec : dict or None  the codec's options (``fmt``, ``log_scale``, ``decode_rows``;
    :class:`.codec_unit.CodecUnit`): the array gains the complex field of ``fmt`` and the unit
    takes CODEC tasks; None: no codec
rubato : dict or None  the Rubato unit's options (``params``, ``rubato_lanes`` <= P;
    :class:`.rubato_unit.RubatoUnit`): the array gains the Z_t field of the set's t, the Feistel
    squarers and ARK's key*rc are its lanes 0 .. rubato_lanes - 1 (op mac), and the unit takes
    RUBATO tasks (the linear layers keep their shift-and-add lanes); with
    ``xof="external"`` (the engine's one XOF) the unit has Rubato's ``xof`` port

Members
-------
port : In(UnitPort(tag_width))         the tasks of every kind in ``declaration.kinds``
rd0 .. rd{R-1} : Out(read port);  wr : Out(write port);  bank : Out(bank port) (in place)
slot_prime : In(ArrayLayout(5, S))
xof : Out(xof_client_signature(8))     Rubato's port on the one XOF (``rubato["xof"] = "external"``)
ntt_unit, pointwise_unit, codec_unit, rubato_unit (or None) : the sequencers; ``sequencers``: (name, kind,
    field, operands, reads, writes) of each; ``array_plan``: the lanes'
    :class:`~hhe_gen.cores.arith.butterfly.ButterflyPlan`

Latency
-------
The sequencers' own, nothing added (the router and the multiplexers are combinational, ``mode``
is set in the transfer cycle and read from the next; a sequencer's first butterfly operands and
buffer reads come later than that): :meth:`task_cycles` of an opcode is its sequencer's.  The
array's latency is every sequencer's butterfly latency, so a codec task takes the cycles of a
codec unit built with that butterfly latency.
"""

from __future__ import annotations

from typing import NamedTuple

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith.butterfly import ButterflyPlan
from hhe_gen.cores.arith.butterfly_array import ButterflyArray
from hhe_gen.cores.rubato.datapath import check_params
from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_int

from . import isa
from .buffers import bank_access_signature, read_port_signature, write_port_signature
from .codec_unit import CodecUnit
from .ntt_unit import NttUnit
from .pointwise_unit import PointwiseUnit, pointwise_zq
from .rubato_unit import RubatoUnit
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["CryptoUnit", "Sequencer"]

OPERANDS = ("a", "b", "w", "c")


class Sequencer(NamedTuple):
    """One sequencer of the crypto unit: its member ``name``, its task ``kind``, the array ``field``
    it uses, the ``operands`` of the lanes it drives, its read and write members in the order of
    the unit's read / write ports."""
    name: str
    kind: isa.Unit
    field: str
    operands: tuple
    reads: tuple
    writes: tuple


def _opcodes_of(kind) -> tuple:
    """The opcodes whose tasks go to units of ``kind`` (from :data:`isa.OPCODES`)."""
    return tuple(code for code, info in isa.OPCODES.items() if info.unit == kind)


#: Latencies above the array's default that :func:`_fewest_tiles` tries.
LATENCY_SEARCH = 2


def _fewest_tiles(butterfly: dict, latency) -> ButterflyPlan:
    """The array's butterfly plan: at ``latency``, or (None) the one of the default latency and the
    next :data:`LATENCY_SEARCH` with the fewest DSP tiles (the sharing plan packs the three fields'
    products into fewer tiles at some depths; the earliest of the fewest)."""
    if latency is not None:
        return ButterflyPlan(**butterfly, latency=latency)
    first = ButterflyPlan(**butterfly)
    plans = [first] + [ButterflyPlan(**butterfly, latency=first.latency + k) for k in range(1, LATENCY_SEARCH + 1)]
    return min(plans, key=lambda plan: (plan.tiles, plan.latency))


class CryptoUnit(wiring.Component):
    """The NTT, the pointwise ops (and the codec, Rubato) on one butterfly array (module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int,
                 primes, *, kind: str = "barrett", latency=None, target: str = "ecp5", twiddles: str = "rom",
                 banking: str = "dual", in_place: bool = False, codec=None, rubato=None, **reducer):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots, primes, lanes_high=n // 2, fit_primes=True)
        fields = {"zq": pointwise_zq(n, self.primes, kind, reducer)}      # refuses the Montgomery kinds
        if codec is not None:
            fields["complex"] = codec["fmt"]
        if rubato is not None:
            fields["zt"] = dict(kind="barrett", moduli=[check_params(rubato.get("params", "Par-128S")).q])
        self.array_plan = _fewest_tiles(dict(fields, target=target), latency)
        L = self.array_plan.latency
        self._array = dict(fields, target=target, latency=L)
        common = dict(n=n, lanes=lanes, word_bits=word_bits, buffers=buffers, slots=slots, tag_width=tag_width,
                      primes=primes, target=target, butterflies="external")
        self.pointwise_unit = PointwiseUnit(**common, kind=kind, latency=L, **reducer)
        self.ntt_unit = NttUnit(**common, kind=kind, latency=L, twiddles=twiddles, banking=banking,
                                in_place=in_place, **reducer)
        self.codec_unit = None if codec is None else CodecUnit(**common, bf_latency=L, **codec)
        self.rubato_unit = None
        if rubato is not None:
            rubato = dict(rubato)
            check_int("rubato_lanes", rubato.setdefault("rubato_lanes", 2), 1, lanes)
            self.rubato_unit = RubatoUnit(n, lanes, word_bits, buffers, slots, tag_width, multiplier="external",
                                          mul_latency=L, **rubato)
        self.in_place = self.ntt_unit.in_place
        for unit, plan in ((self.ntt_unit, self.ntt_unit.ntt_plan.butterfly_plan),
                           (self.pointwise_unit, self.pointwise_unit.butterfly_plan),
                           (self.codec_unit, self.codec_unit and self.codec_unit.fft.butterfly_plan)):
            if unit is not None and plan.latency != L:
                raise AssertionError(f"{type(unit).__name__}'s butterflies are not the array's latency")
        streaming = () if self.in_place else ("rd",)
        self.sequencers = (
            Sequencer("ntt_unit", isa.Unit.NTT, "zq", ("a", "b", "w"), streaming, ("wr",) if streaming else ()),
            Sequencer("pointwise_unit", isa.Unit.POINTWISE, "zq", ("a", "b", "c"), ("rd0", "rd1", "rd2"), ("wr",)),
        )
        if self.codec_unit is not None:
            reads = ("rd", *(f"rd_row{r}" for r in range(self.codec_unit.row_ports)))
            self.sequencers += (Sequencer("codec_unit", isa.Unit.CODEC, "complex", ("a", "b", "w"), reads,
                                          ("wr",)),)
        if self.rubato_unit is not None:
            self.sequencers += (Sequencer("rubato_unit", isa.Unit.RUBATO, "zt", ("a", "b", "c"), ("rd",), ("wr",)),)
        self.read_ports = max(len(s.reads) for s in self.sequencers)
        rd = read_port_signature(buffers, self.rows, lanes, word_bits)
        ports = {"port": In(UnitPort(tag_width)), "slot_prime": In(data.ArrayLayout(5, slots)),
                 **{f"rd{k}": Out(rd) for k in range(self.read_ports)},
                 "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits))}
        if self.in_place:
            ports["bank"] = Out(bank_access_signature(buffers, lanes, self.rows, word_bits))
        if self.rubato_unit is not None and "xof" in self.rubato_unit.signature.members:
            ports["xof"] = self.rubato_unit.signature.members["xof"]
        super().__init__(ports)

    @property
    def declaration(self) -> UnitDeclaration:
        """Every sequencer's kind on one port (NTT first); the buffer ports of the module docstring."""
        kinds = [s.kind for s in self.sequencers]
        return UnitDeclaration(kinds[0], reads=tuple(f"rd{k}" for k in range(self.read_ports)), writes=("wr",),
                               bank="bank" if self.in_place else None, also=tuple(kinds[1:]))

    def task_cycles(self, opcode) -> int:
        """Cycles from the task transfer to ``done`` for an NTT or pointwise task of ``opcode`` (an
        :class:`.isa.Opcode`); a codec task's are the codec unit's (its FFT's timing)."""
        if opcode in (isa.Opcode.NTT, isa.Opcode.INTT):
            return self.ntt_unit.task_cycles(opcode == isa.Opcode.INTT)
        if opcode in _opcodes_of(isa.Unit.POINTWISE):
            return self.pointwise_unit.task_cycles
        raise ValueError(f"{opcode!r}: the codec's cycles depend on the task (its FFT's timing)")

    def elaborate(self, platform):
        m = Module()
        seqs = [(i, s, getattr(self, s.name)) for i, s in enumerate(self.sequencers)]
        for _, s, unit in seqs:
            m.submodules[s.name] = unit
        m.submodules.butterflies = array = ButterflyArray(self.lanes, **self._array)
        mode = Signal(range(len(seqs)), name="mode")

        def by_mode(users, value):
            """``value(unit)`` of the sequencer of the mode among ``users`` ((index, unit) pairs; the
            first one's when the mode is none of them)."""
            out = value(users[0][1])
            for i, unit in users[1:]:
                out = Mux(mode == i, value(unit), out)
            return out

        # the task router: a task to the sequencer of its opcode's kind
        task = self.port.task
        op = task.payload.opcode
        mine = []
        for i, s, unit in seqs:
            hit = Const(0)
            for code in _opcodes_of(s.kind):
                hit = hit | (op == code)
            mine.append(hit)
            m.d.comb += [unit.port.task.payload.eq(task.payload), unit.port.task.valid.eq(task.valid & hit),
                         unit.port.abort.eq(self.port.abort)]
            if "slot_prime" in unit.signature.members:
                m.d.comb += unit.slot_prime.eq(self.slot_prime)
        ready, done, error = Const(0), Const(0), Const(0)
        for (i, s, unit), hit in zip(seqs, mine):
            ready = Mux(hit, unit.port.task.ready, ready)
            done, error = done | unit.port.done, error | unit.port.error
        m.d.comb += [task.ready.eq(ready), self.port.done.eq(done), self.port.error.eq(error)]
        with m.If(task.valid & task.ready):
            for (i, s, unit), hit in zip(seqs, mine):
                with m.If(hit):
                    m.d.sync += mode.eq(i)

        # the array: op, field, sel and each operand from the sequencer of the mode among its users
        lanes = array.lanes_port
        everyone = [(i, unit.lanes_port) for i, s, unit in seqs]
        m.d.comb += lanes.op.eq(by_mode(everyone, lambda port: port.op))
        plan = self.array_plan
        if len(plan.fields) > 1:
            index = {i: Const(plan.field_index[s.field], range(len(plan.fields))) for i, s, _ in seqs}
            m.d.comb += lanes.field.eq(by_mode([(i, i) for i, _, _ in seqs], lambda i: index[i]))
        if plan.n_sel > 1:      # the prime of the Z_q sequencers (Z_t has one modulus, complex none)
            modular = [(i, unit.lanes_port) for i, s, unit in seqs if "sel" in unit.lanes_port.signature.members]
            m.d.comb += lanes.sel.eq(by_mode(modular, lambda port: port.sel))

        def width(port) -> int:
            return port.signature.members["a"].shape.length      # the sequencer's lanes (Rubato: <= P)
        for name in OPERANDS:
            for j in range(self.lanes):
                users = [(i, unit.lanes_port) for i, s, unit in seqs if name in s.operands
                         and j < width(unit.lanes_port)]
                if users:
                    m.d.comb += getattr(lanes, name)[j].eq(by_mode(users, lambda port: getattr(port, name)[j]))
        for _, _, unit in seqs:
            for j in range(width(unit.lanes_port)):
                m.d.comb += [unit.lanes_port.x[j].eq(lanes.x[j]), unit.lanes_port.y[j].eq(lanes.y[j])]

        # the buffer ports: port k from the sequencer of the mode among those with a k-th member
        for k in range(self.read_ports):
            port = getattr(self, f"rd{k}")
            users = [(i, getattr(unit, s.reads[k])) for i, s, unit in seqs if len(s.reads) > k]
            for name in ("sel", "addr", "en"):
                m.d.comb += getattr(port, name).eq(by_mode(users, lambda member: getattr(member, name)))
            for _, member in users:
                m.d.comb += member.data.eq(port.data)
        users = [(i, getattr(unit, s.writes[0])) for i, s, unit in seqs if s.writes]
        for name in ("sel", "addr", "lanes", "data"):
            m.d.comb += getattr(self.wr, name).eq(by_mode(users, lambda member: getattr(member, name)))
        if self.in_place:
            wiring.connect(m, wiring.flipped(self.bank), self.ntt_unit.bank)
        if "xof" in self.signature.members:
            wiring.connect(m, wiring.flipped(self.xof), self.rubato_unit.xof)
        return m
