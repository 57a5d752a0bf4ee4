"""The engine's NTT unit: ``ntt`` / ``intt`` from one buffer into another through the iterative NTT
core (:class:`~hhe_gen.cores.ntt.IterativeNtt`).

Flow of a task: the core takes the command (``inverse``, the slot's prime), then buffer ``a``'s N/P
rows as its input beats (read ahead through a three-row FIFO, so the load runs at one beat per
cycle; ``ntt`` with flags bit 0 lifts each word, signed s -> s + q if s < 0), transforms in its own
banks, and its N/P output beats are written to buffer ``dst`` row by row.  ``dst`` may equal ``a``
(every row is read before the first is written).  The order of the words is the buffer's: natural
in / bit-reversed out for ``ntt`` (Lattigo's NTT order), the reverse for ``intt``
(:func:`hhe_gen.models.ntt.ntt` / ``intt``).

In place (``in_place=True``, the engine's buffers banked as the core's memory plan,
:class:`~.buffers.BufferFile` ``banked``): the core (``memory="external"``) transforms in the
buffers themselves through the buffer file's ``bank`` port: its first stage reads ``a`` and
writes ``dst``, every later read and write is ``dst``; ``lift`` acts on the first stage's reads,
the inverse's N^-1 is in its halving butterflies (op ``gsh``).  No load, no unload, no FIFO, and no
banks of the core's own.

Abort resets the core and the FIFO (``ResetInserter``): the unit is idle in the next cycle.

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width, primes : the engine's sizes (as
    :class:`.pointwise_unit.PointwiseUnit`)
kind, latency, target, twiddles, banking, **reducer : passed to the NTT core
in_place : bool   the transform in the banked buffers (see above; banking "dual")
butterflies : str   "own" (the core's P butterflies) or "external" (the core's ``lanes_port`` is
    the unit's: the crypto unit's shared lanes)

Members
-------
port : In(UnitPort(tag_width));  rd : Out(read port);  wr : Out(write port)   (streaming)
bank : Out(:func:`~.buffers.bank_access_signature`)                          (in place)
slot_prime : In(ArrayLayout(5, S))
lanes_port : Out(:func:`~hhe_gen.cores.arith.butterfly_array.butterfly_lanes_signature`)  (external
             butterflies: the core's)
ntt_plan : the NTT core's :class:`~hhe_gen.cores.ntt.iterative.IterativeNttPlan` (its latencies, no
           hardware); ``ntt``, the :class:`~hhe_gen.cores.ntt.IterativeNtt` itself, is built by
           ``elaborate``

Latency
-------
:meth:`task_cycles` (inverse) = ``ntt_plan.command_cycles(inverse) + 1`` cycles from the task transfer
(cycle 0) to ``done``: the command is taken in cycle 1, the first input beat waits one cycle for
the FIFO (the buffer's read latency), then the core runs at full rate; ``done`` comes with the
last output beat's write.  In place: ``ntt_plan.command_cycles(inverse)`` (the command is taken in
cycle 1, ``done`` with the last write): 2 N/P + ``load_wait`` + 1 fewer, in either direction.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, ResetInserter, Signal
from amaranth.lib import data, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.ntt.iterative import IterativeNtt, IterativeNttPlan
from hhe_gen.cores.unused import quiet_on_error

from . import isa
from .buffers import bank_access_signature, read_port_signature, write_port_signature
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["NttUnit"]


class NttUnit(wiring.Component):
    """ntt / intt between buffers through the iterative NTT core (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int,
                 primes, *, kind: str = "barrett", latency=None, target: str = "ecp5", twiddles: str = "rom",
                 banking: str = "dual", in_place: bool = False, butterflies: str = "own", **reducer):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots, primes, lanes_high=n // 2, fit_primes=True)
        self.in_place = bool(in_place)
        external = dict(memory="external", bank_width=word_bits) if self.in_place else {}
        self._core = dict(n=n, lanes=lanes, moduli=list(self.primes), kind=kind, latency=latency, target=target,
                          twiddles=twiddles, banking=banking, butterflies=butterflies, **external, **reducer)
        self.ntt_plan = IterativeNttPlan(**self._core)
        if butterflies == "external":
            ports = {"lanes_port": self.ntt_plan.port_members["lanes_port"]}
        else:
            ports = {}
        if self.in_place:
            ports["bank"] = Out(bank_access_signature(buffers, lanes, self.rows, word_bits))
        else:
            ports["rd"] = Out(read_port_signature(buffers, self.rows, lanes, word_bits))
            ports["wr"] = Out(write_port_signature(buffers, self.rows, lanes, word_bits))
        super().__init__({"port": In(UnitPort(tag_width)), **ports, "slot_prime": In(data.ArrayLayout(5, slots))})

    @property
    def declaration(self) -> UnitDeclaration:
        """Its kind and buffer ports (:mod:`.unit_ports`): the bank port in place, else a read and
        a write port."""
        if self.in_place:
            return UnitDeclaration(isa.Unit.NTT, bank="bank")
        return UnitDeclaration(isa.Unit.NTT, reads=("rd",), writes=("wr",))

    def task_cycles(self, inverse: bool = False) -> int:
        """Cycles from the task transfer to ``done``."""
        return self.ntt_plan.command_cycles(inverse) + (not self.in_place)

    def elaborate(self, platform):
        self.ntt = IterativeNtt(**self._core)           # the core of ``ntt_plan``
        m = self._in_place() if self.in_place else self._streaming()
        if self.ntt.butterflies == "external":
            wiring.connect(m, self.ntt.lanes_port, wiring.flipped(self.lanes_port))
        return m

    def _streaming(self):
        """The task's registers, the load FIFO and the unload around the core's streams (see the
        module docstring)."""
        m = Module()
        p, wb, rows = self.lanes, self.word_bits, self.rows
        qb = self.ntt.qbits
        task, abort = self.port.task, self.port.abort
        core = ResetInserter(abort)(self.ntt)
        m.submodules.ntt = core
        fifo = SyncFIFO(width=p * wb, depth=3)
        m.submodules.rows = ResetInserter(abort)(fifo)
        ntt = self.ntt

        dst, src, lift = Signal(isa.BUFFER_BITS), Signal(isa.BUFFER_BITS), Signal()
        inverse, sel = Signal(), Signal(range(max(len(self.primes), 2)))
        q = Signal(wb)
        prime_q = Array(Const(v, wb) for v in self.primes)
        issue = Signal(range(rows + 1))            # next row to read
        inflight = Signal()
        written = Signal(range(rows + 1))
        reading = Signal()
        busy = Signal()
        command = Signal()                         # the core's command is pending

        m.d.comb += task.ready.eq(~busy & ~abort)
        with m.If(abort):
            m.d.sync += [busy.eq(0), command.eq(0), inflight.eq(0)]
        with m.Elif(task.valid & task.ready):
            pl = task.payload
            pid = self.slot_prime[pl.slot]
            m.d.sync += [busy.eq(1), command.eq(1), dst.eq(pl.dst), src.eq(pl.a),
                         lift.eq((pl.opcode == isa.Opcode.NTT) & pl.flags[0]),
                         inverse.eq(pl.opcode == isa.Opcode.INTT), sel.eq(pid), q.eq(prime_q[pid]),
                         issue.eq(0), written.eq(0)]

        # command
        m.d.comb += [ntt.cmd.valid.eq(command & ~abort), ntt.cmd.payload.inverse.eq(inverse)]
        if len(self.primes) > 1:
            m.d.comb += ntt.cmd.payload.sel.eq(sel)
        with m.If(ntt.cmd.valid & ntt.cmd.ready):
            m.d.sync += command.eq(0)

        # load: rows of src -> (lift) -> FIFO -> the core's input beats
        m.d.comb += reading.eq(busy & ~abort & (issue < rows) & (fifo.level + inflight < 3))
        m.d.comb += [self.rd.sel.eq(src), self.rd.addr.eq(issue), self.rd.en.eq(reading)]
        with m.If(reading):
            m.d.sync += issue.eq(issue + 1)
        with m.If(~abort):
            m.d.sync += inflight.eq(reading)
        lifted = []
        for j in range(p):
            word = self.rd.data[j]
            s = word.as_signed()
            lifted.append(Mux(lift & s[-1], (s + q)[:wb], word))
        m.d.comb += [fifo.w_data.eq(Cat(*lifted)), fifo.w_en.eq(inflight)]
        for j in range(p):
            m.d.comb += ntt.i_stream.payload[j].eq(fifo.r_data[j * wb:j * wb + qb])
        feeding = busy & ~command & ~abort
        m.d.comb += [ntt.i_stream.valid.eq(fifo.r_rdy & feeding), fifo.r_en.eq(ntt.i_stream.ready & feeding)]

        # unload: the core's output beats -> rows of dst
        out = ntt.o_stream
        m.d.comb += out.ready.eq(busy & ~abort)
        take = out.valid & out.ready
        m.d.comb += [self.wr.sel.eq(dst), self.wr.addr.eq(written),
                     self.wr.lanes.eq(Mux(take, (1 << p) - 1, 0))]
        for j in range(p):
            m.d.comb += self.wr.data[j].eq(out.payload[j])
        done = Signal()
        with m.If(take):
            m.d.sync += written.eq(written + 1)
        m.d.comb += done.eq(take & (written == rows - 1) & ~abort)
        m.d.comb += [self.port.done.eq(done), self.port.error.eq(0)]
        with m.If(done):
            m.d.sync += busy.eq(0)
        return m


    def _in_place(self):
        """The task's registers and the core on the buffer file's bank port (see the module
        docstring)."""
        m = Module()
        task, abort = self.port.task, self.port.abort
        core = ResetInserter(abort)(self.ntt)
        m.submodules.ntt = core
        dst, src = Signal(isa.BUFFER_BITS), Signal(isa.BUFFER_BITS)
        busy, command = Signal(), Signal()
        cmd = self.ntt.cmd
        m.d.comb += task.ready.eq(~busy & ~abort)
        with m.If(abort):
            m.d.sync += [busy.eq(0), command.eq(0)]
        with m.Elif(task.valid & task.ready):
            pl = task.payload
            pid = self.slot_prime[pl.slot]
            m.d.sync += [busy.eq(1), command.eq(1), dst.eq(pl.dst), src.eq(pl.a),
                         cmd.payload.lift.eq((pl.opcode == isa.Opcode.NTT) & pl.flags[0]),
                         cmd.payload.inverse.eq(pl.opcode == isa.Opcode.INTT)]
            if len(self.primes) > 1:
                m.d.sync += cmd.payload.sel.eq(pid)
        m.d.comb += cmd.valid.eq(command & ~abort)
        with m.If(cmd.valid & cmd.ready):
            m.d.sync += command.eq(0)

        inner, outer = self.ntt.bank_port, self.bank
        m.d.comb += [outer.raddr.eq(inner.raddr), outer.ren.eq(inner.ren), outer.first.eq(inner.first),
                     inner.rdata.eq(outer.rdata), outer.waddr.eq(inner.waddr), outer.wen.eq(inner.wen),
                     outer.wdata.eq(inner.wdata),
                     outer.rsel.eq(Mux(inner.first, src, dst)), outer.wsel.eq(dst)]
        done = Signal()
        m.d.comb += done.eq(busy & self.ntt.done & ~abort)
        m.d.comb += [self.port.done.eq(done), self.port.error.eq(0)]
        with m.If(done):
            m.d.sync += busy.eq(0)
        return m
