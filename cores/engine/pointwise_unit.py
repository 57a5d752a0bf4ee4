"""The engine's pointwise unit: ``add``, ``sub``, ``mul``, ``mac``, ``msub`` and ``move`` over P
butterfly lanes, reading up to three buffers and writing one, a row of P words per cycle.

Datapath per lane (one pipeline for every opcode, so no cycle count depends on data or opcode)::

    row r read (cycle t) -> words a, b, c (cycle t+1)
      -> operand stage (register):  lift each source whose flag is set (signed word s -> s + q if
         s < 0 else s), msub: b -> (q - b) mod q; integer add: a + b (word_bits, wrapping)
      -> Butterfly (op mul / add / sub / mac, Z_q, the slot's prime)     latency L
      -> row r of dst written (cycle t + 2 + L); move writes the (lifted) a, integer add its sum,
         delayed alongside

    add: a + b   sub: a - b   mul: a * b   mac: a * b + c   msub: c + a * (q - b) = c - a * b
    (all mod q_slot);  move: a, or its lift with flags bit 0;  add ..., integer (flags 4): a + b of
    the words as two's complement integers, wrapping, no prime.

Operands of the modular opcodes must be residues (< q after the lift; a lifted word's signed
value in (-q, q)): the ISA leaves other inputs unspecified (docs/isa.md), and every word the engine
computes itself is one.  The reducer must return a*b itself (Barrett kinds): Montgomery kinds,
whose products carry R^-1, are refused.

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width : the engine's sizes (:class:`.memory_unit.MemoryUnit`)
primes : tuple      the built-in primes (``slot_prime`` indexes them)
kind : str          the reducer ("barrett", "special-barrett"), **reducer its parameters
latency : int or None   the butterfly's latency (None: its default)
target : str        "ecp5" | "xilinx" | "generic"
butterflies : str   "own" (its P butterflies) or "external" (the ``lanes_port`` drives an array
                    outside, :class:`~hhe_gen.cores.arith.butterfly_array.ButterflyArray` of
                    ``butterfly_plan``: the crypto unit's shared lanes)

Members
-------
port : In(UnitPort(tag_width))
rd0, rd1, rd2 : Out(read_port_signature(...))   sources a, b, c
wr : Out(write_port_signature(...))             destination
slot_prime : In(ArrayLayout(5, S))              built-in prime index of each slot
lanes_port : Out(butterfly_lanes_signature(butterfly_plan, P))   (external butterflies)
butterfly_plan : the :class:`~hhe_gen.cores.arith.butterfly.ButterflyPlan` of its P lanes
bf_latency : their latency (``elaborate`` builds them, unless external)

Latency
-------
Rows are read in cycles 1 .. N/P after the task transfer (cycle 0), written L + 2 cycles later;
``done`` in cycle N/P + L + 3 (:attr:`task_cycles`).  One task at a time (ready again the cycle
after done).
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.arith.butterfly import OP_CODES, ButterflyPlan
from hhe_gen.cores.arith.butterfly_array import butterfly_lanes_signature, sequencer_lanes
from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.errors import ParameterError

from . import isa
from .buffers import read_port_signature, write_port_signature
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["PointwiseUnit", "pointwise_zq", "KINDS"]

KINDS = ("barrett", "special-barrett")
BUTTERFLIES = ("own", "external")


def pointwise_zq(n: int, primes, kind: str, reducer: dict) -> dict:
    """The Z_q configuration of the pointwise butterflies (the Butterfly's ``zq``): ``kind`` must
    give a*b itself (:data:`KINDS`)."""
    if kind not in KINDS:
        raise ParameterError("kind", kind, "one of " + ", ".join(map(repr, KINDS))
                             + " (the pointwise unit needs a*b itself, not a Montgomery form)")
    zq = dict(kind=kind, moduli=list(primes), **reducer)
    if kind == "special-barrett":
        zq.setdefault("log_n", n.bit_length() - 1)
    return zq


class PointwiseUnit(wiring.Component):
    """add / sub / mul / mac / msub / move over P butterfly lanes (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int,
                 primes, *, kind: str = "barrett", latency=None, target: str = "ecp5", butterflies: str = "own",
                 **reducer):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots, primes, fit_primes=True)
        zq = pointwise_zq(n, self.primes, kind, reducer)
        if butterflies not in BUTTERFLIES:
            raise ParameterError("butterflies", butterflies, "one of " + ", ".join(map(repr, BUTTERFLIES)))
        self.butterflies = butterflies
        self._butterfly = dict(zq=zq, target=target, latency=latency)
        self.butterfly_plan = ButterflyPlan(**self._butterfly)
        self.bf_latency = self.butterfly_plan.latency
        rd = read_port_signature(buffers, self.rows, lanes, word_bits)
        external = {"lanes_port": Out(butterfly_lanes_signature(self.butterfly_plan, lanes))} \
            if butterflies == "external" else {}
        super().__init__({
            "port": In(UnitPort(tag_width)),
            "rd0": Out(rd), "rd1": Out(rd), "rd2": Out(rd),
            "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
            "slot_prime": In(data.ArrayLayout(5, slots)),
            **external,
        })

    @property
    def declaration(self) -> UnitDeclaration:
        """Its kind and buffer ports (:mod:`.unit_ports`)."""
        return UnitDeclaration(isa.Unit.POINTWISE, reads=("rd0", "rd1", "rd2"), writes=("wr",))

    @property
    def task_cycles(self) -> int:
        """Cycles from the task transfer to ``done``."""
        return self.rows + self.bf_latency + 3

    def elaborate(self, platform):
        m = Module()
        p, wb, L = self.lanes, self.word_bits, self.bf_latency
        task = self.port.task
        abort = self.port.abort
        held = Signal.like(task.payload)
        busy = Signal()
        issue = Signal(range(self.rows + 1))      # next row to read
        issuing = busy & (issue < self.rows) & ~abort
        sel = Signal(range(max(len(self.primes), 2)))
        q = Signal(wb)
        prime_q = Array(Const(v, wb) for v in self.primes)

        # the task
        m.d.comb += task.ready.eq(~busy & ~abort)
        with m.If(abort):
            m.d.sync += busy.eq(0)
        with m.Elif(task.valid & task.ready):
            pid = self.slot_prime[task.payload.slot]
            m.d.sync += [held.eq(task.payload), busy.eq(1), issue.eq(0), sel.eq(pid), q.eq(prime_q[pid])]
        with m.Elif(issuing):
            m.d.sync += issue.eq(issue + 1)

        for port, name in ((self.rd0, "a"), (self.rd1, "b"), (self.rd2, "c")):
            m.d.comb += [port.sel.eq(getattr(held, name)), port.addr.eq(issue), port.en.eq(issuing)]

        # valid and row address along the pipeline: read (1) + operand stage (1) + butterfly (L)
        depth = 2 + L
        valid = [Signal(name=f"v{i}") for i in range(depth + 1)]
        row = [Signal(range(self.rows), name=f"row{i}") for i in range(depth + 1)]
        m.d.comb += [valid[0].eq(issuing), row[0].eq(issue)]
        for i in range(depth):
            m.d.sync += [valid[i + 1].eq(valid[i] & ~abort), row[i + 1].eq(row[i])]

        op = held.opcode
        flags = held.flags
        is_msub = op == isa.Opcode.MSUB
        is_integer = (op == isa.Opcode.ADD) & (flags == isa.INTEGER_ADD)
        bf_op = Signal(3)
        m.d.comb += bf_op.eq(Mux(op == isa.Opcode.ADD, OP_CODES["add"],
                             Mux(op == isa.Opcode.SUB, OP_CODES["sub"],
                             Mux(op == isa.Opcode.MUL, OP_CODES["mul"], OP_CODES["mac"]))))

        def lift(word, on):
            signed_word = word.as_signed()
            return Mux(on & signed_word[-1], (signed_word + q)[:wb], word)

        lanes = sequencer_lanes(m, self, p, **self._butterfly)
        m.d.comb += lanes.op.eq(bf_op)
        if len(self.primes) > 1:
            m.d.comb += lanes.sel.eq(sel)
        raw_a = []
        for j in range(p):
            a_w, b_w, c_w = self.rd0.data[j], self.rd1.data[j], self.rd2.data[j]
            a_l, b_l, c_l = lift(a_w, flags[0]), lift(b_w, flags[1]), lift(c_w, flags[2])
            neg_b = Mux(b_l == 0, 0, q - b_l)[:wb]
            a_r, b_r, c_r = Signal(wb, name=f"a{j}"), Signal(wb, name=f"b{j}"), Signal(wb, name=f"c{j}")
            m.d.sync += [a_r.eq(Mux(is_integer, (a_w + b_w)[:wb], a_l)), b_r.eq(Mux(is_msub, neg_b, b_l)),
                         c_r.eq(c_l)]
            m.d.comb += [lanes.a[j].eq(a_r), lanes.b[j].eq(b_r), lanes.c[j].eq(c_r), lanes.w[j].eq(0)]
            # move: the (lifted) a, delayed alongside the butterfly
            d = a_r
            for i in range(L):
                nxt = Signal(wb, name=f"move{j}_{i}")
                m.d.sync += nxt.eq(d)
                d = nxt
            raw_a.append(d)

        is_move = (op == isa.Opcode.MOVE) | is_integer
        out_valid = valid[depth]
        m.d.comb += [self.wr.sel.eq(held.dst), self.wr.addr.eq(row[depth]),
                     self.wr.lanes.eq(Mux(out_valid & ~abort, (1 << p) - 1, 0))]
        for j in range(p):
            m.d.comb += self.wr.data[j].eq(Mux(is_move, raw_a[j], lanes.x[j][:wb]))

        last_written = out_valid & (row[depth] == self.rows - 1)
        done = Signal()
        m.d.sync += done.eq(last_written & ~abort)
        m.d.comb += [self.port.done.eq(done & ~abort), self.port.error.eq(0)]
        with m.If(done & ~abort):
            m.d.sync += busy.eq(0)
        return m
