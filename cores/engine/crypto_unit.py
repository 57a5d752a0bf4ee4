"""The engine's crypto unit: one array of P multi-field butterflies
(:class:`~hhe_gen.cores.arith.butterfly_array.ButterflyArray`) that the NTT's sequencer and the
pointwise sequencer take turns on, one task at a time (DNA-HHE's crypto unit, section III-A).

::

    port (NTT and POINTWISE tasks) --> task router --> NttUnit (butterflies="external")  --+
                                           |                                                | lanes_port
                                           +--------> PointwiseUnit (butterflies="external") -+--> mode mux --> ButterflyArray
                                                                                               <-- x, y (to both)

The unit takes the task kinds NTT and POINTWISE on one task-manager port (its declaration's
``also``): the manager offers it one task at a time, so the two sequencers never run together.
A task goes to the sequencer of its opcode (``ntt`` / ``intt`` to the NTT's, the rest to the
pointwise one); the register ``ntt_mode``, set when a task is taken, selects whose ``op``, ``sel``,
``a`` and ``b`` the array sees.  ``w`` is always the NTT's and ``c`` always the pointwise
sequencer's: the pointwise ops ignore ``w``, ct and gs ignore ``c`` (the butterfly's datapath,
:mod:`hhe_gen.cores.arith.butterfly`).  Each sequencer's results come back on ``x`` and ``y`` the
array's latency later, while its task still holds the unit (a task's ``done`` follows its last
result).

Buffer ports: in place, the NTT's bank port (``bank``) and the pointwise sequencer's ``rd0``, ``rd1``,
``rd2`` and ``wr``; streaming, the NTT's read and write ports are ``rd0`` and ``wr``, shared with the
pointwise sequencer through the same mode multiplexer (one fewer read and write port in the
buffer file than two units).

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width, primes : the engine's sizes
    (:class:`.pointwise_unit.PointwiseUnit`)
kind, latency, target, **reducer : the butterflies' reducer (a kind the pointwise unit takes:
    "barrett", "special-barrett"), latency and target, one for both sequencers
twiddles, banking, in_place : the NTT's (:class:`.ntt_unit.NttUnit`)

Members
-------
port : In(UnitPort(tag_width))                    NTT and POINTWISE tasks
bank : Out(bank port)  (in place);  rd0, rd1, rd2 : Out(read port);  wr : Out(write port)
slot_prime : In(ArrayLayout(5, S))
ntt_unit, pointwise_unit : the two sequencers (external butterflies); ``array_plan`` the lanes'
    :class:`~hhe_gen.cores.arith.butterfly.ButterflyPlan`

Latency
-------
The sequencers' own, nothing added (the router and the mode multiplexer are combinational, the
mode register is set in the transfer cycle and read from the next): ``ntt`` / ``intt``
``ntt_unit.task_cycles(inverse)``, the pointwise ops ``pointwise_unit.task_cycles``.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith.butterfly_array import ButterflyArray
from hhe_gen.cores.unused import quiet_on_error

from . import isa
from .buffers import bank_access_signature, read_port_signature, write_port_signature
from .ntt_unit import NttUnit
from .pointwise_unit import PointwiseUnit
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["CryptoUnit"]


class CryptoUnit(wiring.Component):
    """NTT / INTT and the pointwise ops on one butterfly array (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int,
                 primes, *, kind: str = "barrett", latency=None, target: str = "ecp5", twiddles: str = "rom",
                 banking: str = "dual", in_place: bool = False, **reducer):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots, primes, lanes_high=n // 2, fit_primes=True)
        common = dict(n=n, lanes=lanes, word_bits=word_bits, buffers=buffers, slots=slots, tag_width=tag_width,
                      primes=primes, kind=kind, latency=latency, target=target, butterflies="external", **reducer)
        self.pointwise_unit = PointwiseUnit(**common)        # first: it refuses the Montgomery kinds
        self.ntt_unit = NttUnit(**common, twiddles=twiddles, banking=banking, in_place=in_place)
        self.in_place = self.ntt_unit.in_place
        self.array_plan = self.pointwise_unit.butterfly_plan
        ntt_plan = self.ntt_unit.ntt_plan.butterfly_plan
        if (ntt_plan.latency, ntt_plan.width, ntt_plan.moduli) != \
                (self.array_plan.latency, self.array_plan.width, self.array_plan.moduli):
            raise AssertionError("the NTT's and the pointwise sequencer's butterflies differ")
        rd = read_port_signature(buffers, self.rows, lanes, word_bits)
        ports = {"port": In(UnitPort(tag_width)), "slot_prime": In(data.ArrayLayout(5, slots)),
                 "rd0": Out(rd), "rd1": Out(rd), "rd2": Out(rd),
                 "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits))}
        if self.in_place:
            ports["bank"] = Out(bank_access_signature(buffers, lanes, self.rows, word_bits))
        super().__init__(ports)

    @property
    def declaration(self) -> UnitDeclaration:
        """NTT tasks and POINTWISE ones on one port; the buffer ports of the module docstring."""
        return UnitDeclaration(isa.Unit.NTT, reads=("rd0", "rd1", "rd2"), writes=("wr",),
                               bank="bank" if self.in_place else None, also=(isa.Unit.POINTWISE,))

    def task_cycles(self, opcode) -> int:
        """Cycles from the task transfer to ``done`` for a task of ``opcode`` (an :class:`.isa.Opcode`)."""
        if opcode in (isa.Opcode.NTT, isa.Opcode.INTT):
            return self.ntt_unit.task_cycles(opcode == isa.Opcode.INTT)
        return self.pointwise_unit.task_cycles

    def elaborate(self, platform):
        m = Module()
        nu, pu = self.ntt_unit, self.pointwise_unit
        m.submodules.ntt_unit, m.submodules.pointwise_unit = nu, pu
        m.submodules.butterflies = array = ButterflyArray(self.lanes, **pu._butterfly)
        if array.latency != nu.ntt_plan.butterfly_latency:
            raise AssertionError("the array's latency is not the NTT's")

        # the task router: a task to the sequencer of its opcode
        task = self.port.task
        op = task.payload.opcode
        to_ntt = (op == isa.Opcode.NTT) | (op == isa.Opcode.INTT)
        ntt_mode = Signal()
        for unit, mine in ((nu, to_ntt), (pu, ~to_ntt)):
            m.d.comb += [unit.port.task.payload.eq(task.payload), unit.port.task.valid.eq(task.valid & mine),
                         unit.port.abort.eq(self.port.abort), unit.slot_prime.eq(self.slot_prime)]
        m.d.comb += [task.ready.eq(Mux(to_ntt, nu.port.task.ready, pu.port.task.ready)),
                     self.port.done.eq(nu.port.done | pu.port.done),
                     self.port.error.eq(nu.port.error | pu.port.error)]
        with m.If(task.valid & task.ready):
            m.d.sync += ntt_mode.eq(to_ntt)

        # the array: op, sel, a, b from the sequencer of the mode; w from the NTT's, c from the
        # pointwise one's; the results to both
        lanes, ntt_lanes, pw_lanes = array.lanes_port, nu.lanes_port, pu.lanes_port
        names = ["op", "a", "b"] + (["sel"] if self.array_plan.n_sel > 1 else [])
        for name in names:
            m.d.comb += getattr(lanes, name).eq(Mux(ntt_mode, getattr(ntt_lanes, name), getattr(pw_lanes, name)))
        m.d.comb += [lanes.w.eq(ntt_lanes.w), lanes.c.eq(pw_lanes.c)]
        for side in (ntt_lanes, pw_lanes):
            m.d.comb += [side.x.eq(lanes.x), side.y.eq(lanes.y)]

        # the buffer ports
        wiring.connect(m, wiring.flipped(self.rd1), pu.rd1)
        wiring.connect(m, wiring.flipped(self.rd2), pu.rd2)
        if self.in_place:
            wiring.connect(m, wiring.flipped(self.bank), nu.bank)
            wiring.connect(m, wiring.flipped(self.rd0), pu.rd0)
            wiring.connect(m, wiring.flipped(self.wr), pu.wr)
        else:
            for name in ("sel", "addr", "en"):
                m.d.comb += getattr(self.rd0, name).eq(Mux(ntt_mode, getattr(nu.rd, name), getattr(pu.rd0, name)))
            m.d.comb += [nu.rd.data.eq(self.rd0.data), pu.rd0.data.eq(self.rd0.data)]
            for name in ("sel", "addr", "lanes", "data"):
                m.d.comb += getattr(self.wr, name).eq(Mux(ntt_mode, getattr(nu.wr, name), getattr(pu.wr, name)))
        return m
