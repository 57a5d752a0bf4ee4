"""The engine's basis-conversion unit: ``conv``, a residue mod one prime centred and reduced mod
another, over P lanes, a row of P words per cycle (docs/isa.md, ``conv``; docs/evaluation.md).

Datapath per lane (one pipeline for every kind and prime pair, so no cycle count depends on data)::

    row r read (cycle t) -> word x (cycle t+1), x < q_src
      -> centre (register):   x >= threshold[src, kind]: u = q_src - x, negative; else u = x
      -> estimate (register): t = (u * mu_dst) >> word_bits     (mu_dst = floor(2^word_bits / q_dst);
                                                                 when every mu is a power of two,
                                                                 u >> (word_bits - log2 mu_dst))
      -> remainder (register): r = u - t * q_dst                (in [0, 2 q_dst))
      -> result (register):   r' = r - q_dst if r >= q_dst else r; negative and r' != 0: q_dst - r'
      -> row r of dst written (cycle t + 5)

The thresholds are :func:`hhe_gen.models.rns_basis.centre_threshold` of every built-in prime and
kind, built in as constants; so Lattigo's double-precision estimate (kind ``extend``) costs no
hardware.  The estimate t is floor(u / q_dst) or one less because u < 2^word_bits (Barrett), so one
conditional subtraction completes the reduction.

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width : the engine's sizes (:class:`.memory_unit.MemoryUnit`)
primes : tuple      the built-in primes (``slot_prime`` indexes them)

Members
-------
port : In(UnitPort(tag_width))
rd : Out(read_port_signature(...))    source a
wr : Out(write_port_signature(...))   destination
slot_prime : In(ArrayLayout(5, S))    built-in prime index of each slot

Latency
-------
Rows are read in cycles 1 .. N/P after the task transfer (cycle 0), written 5 cycles later;
``done`` in cycle N/P + 6 (:attr:`task_cycles`).  One task at a time (ready again the cycle after
done).
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.models.rns_basis import CENTRE_KINDS, centre_threshold

from . import isa
from .buffers import read_port_signature, write_port_signature
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["BasisUnit", "PIPELINE"]

PIPELINE = 5
"""Cycles from a row's read to its write: the read, centre, estimate, remainder and result stages."""


class BasisUnit(wiring.Component):
    """``conv`` over P lanes (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int, primes):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots, primes, fit_primes=True)
        self.mu = tuple((1 << word_bits) // q for q in self.primes)
        super().__init__({
            "port": In(UnitPort(tag_width)),
            "rd": Out(read_port_signature(buffers, self.rows, lanes, word_bits)),
            "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
            "slot_prime": In(data.ArrayLayout(5, slots)),
        })

    @property
    def declaration(self) -> UnitDeclaration:
        """Its kind and buffer ports (:mod:`.unit_ports`)."""
        return UnitDeclaration(isa.Unit.BASIS, reads=("rd",), writes=("wr",))

    @property
    def task_cycles(self) -> int:
        """Cycles from the task transfer to ``done``."""
        return self.rows + PIPELINE + 1

    def elaborate(self, platform):
        m = Module()
        p, wb = self.lanes, self.word_bits
        task, abort = self.port.task, self.port.abort
        held = Signal.like(task.payload)
        busy = Signal()
        issue = Signal(range(self.rows + 1))
        issuing = busy & (issue < self.rows) & ~abort

        kinds = len(CENTRE_KINDS)
        thresholds = Array(Const(centre_threshold(q, CENTRE_KINDS[min(k, kinds - 1)]), wb)
                           for q in self.primes for k in range(4))
        prime_q = Array(Const(q, wb) for q in self.primes)
        src = self.slot_prime[task.payload.slot]
        dst = self.slot_prime[task.payload.imm[:isa.SLOT_BITS]]
        # every mu a power of two (the primes near powers of two of an RNS basis): the estimate is
        # a shift, chosen per task by the destination's index among the distinct shifts; else a
        # product by the destination's mu
        shifts = sorted({wb - v.bit_length() + 1 for v in self.mu})
        by_shift = all(v & (v - 1) == 0 for v in self.mu)
        if by_shift:
            dst_shift = Signal(range(max(len(shifts), 2)))
            dst_estimate = dst_shift.eq(Array(Const(shifts.index(wb - v.bit_length() + 1), dst_shift.shape())
                                              for v in self.mu)[dst])
        else:
            dst_mu = Signal(max(self.mu).bit_length())
            dst_estimate = dst_mu.eq(Array(Const(v, dst_mu.shape()) for v in self.mu)[dst])
        q_src, q_dst, thr = Signal(wb), Signal(wb), Signal(wb)
        t_bits = max(self.mu).bit_length()  # the estimate t <= u * mu / 2^wb < mu

        def estimate(u):
            if not by_shift:
                return (u * dst_mu) >> wb
            out = u >> shifts[0]
            for i, s in enumerate(shifts[1:], 1):
                out = Mux(dst_shift == i, u >> s, out)
            return out

        m.d.comb += task.ready.eq(~busy & ~abort)
        with m.If(abort):
            m.d.sync += busy.eq(0)
        with m.Elif(task.valid & task.ready):
            m.d.sync += [held.eq(task.payload), busy.eq(1), issue.eq(0), q_src.eq(prime_q[src]),
                         q_dst.eq(prime_q[dst]), dst_estimate,
                         thr.eq(thresholds[src * 4 + task.payload.flags[:2]])]
        with m.Elif(issuing):
            m.d.sync += issue.eq(issue + 1)
        m.d.comb += [self.rd.sel.eq(held.a), self.rd.addr.eq(issue), self.rd.en.eq(issuing)]

        valid = [Signal(name=f"v{i}") for i in range(PIPELINE + 1)]
        row = [Signal(range(self.rows), name=f"row{i}") for i in range(PIPELINE + 1)]
        m.d.comb += [valid[0].eq(issuing), row[0].eq(issue)]
        for i in range(PIPELINE):
            m.d.sync += [valid[i + 1].eq(valid[i] & ~abort), row[i + 1].eq(row[i])]

        for j in range(p):
            x = self.rd.data[j]
            u1, n1 = Signal(wb, name=f"u{j}"), Signal(name=f"neg{j}")
            m.d.sync += [n1.eq(x >= thr), u1.eq(Mux(x >= thr, q_src - x, x))]
            t2, u2, n2 = Signal(t_bits, name=f"t{j}"), Signal(wb, name=f"u2_{j}"), Signal(name=f"neg2_{j}")
            m.d.sync += [t2.eq(estimate(u1)), u2.eq(u1), n2.eq(n1)]
            r3, n3 = Signal(wb + 1, name=f"r{j}"), Signal(name=f"neg3_{j}")
            m.d.sync += [r3.eq(u2 - t2 * q_dst), n3.eq(n2)]
            r = Mux(r3 >= q_dst, r3 - q_dst, r3)[:wb]
            out = Signal(wb, name=f"out{j}")
            m.d.sync += out.eq(Mux(n3 & (r != 0), q_dst - r, r))
            m.d.comb += self.wr.data[j].eq(out)

        out_valid = valid[PIPELINE]
        m.d.comb += [self.wr.sel.eq(held.dst), self.wr.addr.eq(row[PIPELINE]),
                     self.wr.lanes.eq(Mux(out_valid & ~abort, (1 << p) - 1, 0))]
        done = Signal()
        m.d.sync += done.eq(out_valid & (row[PIPELINE] == self.rows - 1) & ~abort)
        m.d.comb += [self.port.done.eq(done & ~abort), self.port.error.eq(0)]
        with m.If(done & ~abort):
            m.d.sync += busy.eq(0)
        return m
