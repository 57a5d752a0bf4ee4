"""The engine's memory unit: ``load``, ``store`` and ``ldseed`` between the buffers and the memory
port (:mod:`.memory_port`).

- ``load dst, slot, addr[, check]``: one read command of N beats; beat k's low ``word_bits`` bits
  go to word k of buffer ``dst`` (row k / P, lane k mod P), one word per cycle at the memory's
  rate.  With ``check`` (flags bit 0) a beat >= q_slot (compared on all 64 bits) marks the task's
  ``error`` (DATA_RANGE); the words are still written and the load completes.
- ``store a, addr``: one write command of N beats, word k of buffer ``a`` zero-extended to 64
  bits, read through a :class:`.row_reader.RowReader` (rows read ahead into a three-row FIFO), so
  the beats leave at one per cycle.
- ``ldseed addr``: one read command of 4 beats into the 256-bit seed register (beat i = bytes
  8i .. 8i+7, little-endian).  The seed goes to the sampling unit only: no readable register holds
  it.

Abort: a task aborted before its command is sent is dropped at once; once the command is out the
unit finishes the transaction with the memory (a load's or seed's beats are taken and discarded,
a store's beats are sent, so the memory port never sees half a transaction) and raises no
``done``; ``task.ready`` stays low until then.

Parameters
----------
n : int          N, words per polynomial
lanes : int      P, words per buffer row
word_bits : int  bits of a buffer word
buffers : int    B
slots : int      S (the width of ``slot_q``)
tag_width : int  the task manager's window tag width

Members
-------
port : In(UnitPort(tag_width))      the task manager's command / status port
mem : Out(MemoryPort())             the memory-master port
wr : Out(write_port_signature(...)) write port into the buffers
rd : Out(read_port_signature(...))  read port from the buffers
slot_q : In(ArrayLayout(64, S))     q of each prime slot (for checked loads)
seed : Out(256)                     the seed register (to the sampling unit)

Latency
-------
load: command in the cycle after the task transfer, then one cycle per beat after the memory
delivers it; ``done`` in the cycle after the last beat.  store: command in the cycle after the
task, beats from the third cycle at one per cycle while the memory takes them; ``done`` in the
cycle after the last beat's transfer.  ldseed: like a load of 4 beats.
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error

from . import isa
from .buffers import read_port_signature, write_port_signature
from .memory_port import MemoryPort
from .row_reader import RowReader
from .units import UnitPort, check_unit_sizes

__all__ = ["MemoryUnit", "SEED_BEATS"]

SEED_BEATS = 4


class MemoryUnit(wiring.Component):
    """Load / store / ldseed over the memory port (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots)
        super().__init__({
            "port": In(UnitPort(tag_width)),
            "mem": Out(MemoryPort()),
            "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
            "rd": Out(read_port_signature(buffers, self.rows, lanes, word_bits)),
            "slot_q": In(data.ArrayLayout(64, slots)),
            "seed": Out(256),
        })

    def elaborate(self, platform):
        m = Module()
        n, p = self.n, self.lanes
        task = self.port.task
        abort = self.port.abort
        op = Signal(isa.OPCODE_BITS)
        dst, src = Signal(isa.BUFFER_BITS), Signal(isa.BUFFER_BITS)
        check, addr = Signal(), Signal(isa.IMM_BITS)
        q = Signal(64)
        aborted = Signal()          # finish the memory transaction, no done
        error = Signal()
        count = Signal(range(n + 1))      # beats moved
        is_store = op == isa.Opcode.STORE
        is_seed = op == isa.Opcode.LDSEED
        beats = Mux(is_seed, SEED_BEATS, n)

        # store: the buffer's words through the row reader
        reader = m.submodules.store_reader = RowReader(n, p, self.word_bits, self.buffers)
        wiring.connect(m, reader.rd, wiring.flipped(self.rd))
        m.d.comb += [reader.sel.eq(src), reader.count.eq(n)]

        with m.FSM():
            with m.State("idle"):
                m.d.comb += task.ready.eq(~abort)
                with m.If(task.valid & ~abort):
                    pl = task.payload
                    m.d.sync += [op.eq(pl.opcode), dst.eq(pl.dst), src.eq(pl.a), check.eq(pl.flags[0]),
                                 addr.eq(pl.imm), q.eq(self.slot_q[pl.slot]), error.eq(0), count.eq(0),
                                 aborted.eq(0)]
                    m.next = "command"
            with m.State("command"):
                m.d.comb += [self.mem.cmd.valid.eq(~abort), self.mem.cmd.payload.addr.eq(addr),
                             self.mem.cmd.payload.count.eq(beats), self.mem.cmd.payload.write.eq(is_store)]
                with m.If(abort):
                    m.next = "idle"
                with m.Elif(self.mem.cmd.ready):
                    m.d.comb += reader.start.eq(is_store)
                    m.next = "command_sent"
            with m.State("command_sent"):
                with m.If(abort):
                    m.d.sync += aborted.eq(1)
                with m.If(is_store):
                    wd = self.mem.wdata
                    m.d.comb += [wd.valid.eq(reader.o_stream.valid), wd.payload.data.eq(reader.o_stream.payload),
                                 wd.payload.last.eq(count == n - 1), reader.o_stream.ready.eq(wd.ready)]
                    with m.If(wd.valid & wd.ready):
                        m.d.sync += count.eq(count + 1)
                        with m.If(count == n - 1):
                            m.next = "finish"
                with m.Else():
                    rdt = self.mem.rdata
                    m.d.comb += rdt.ready.eq(1)
                    with m.If(rdt.valid):
                        word = rdt.payload.data
                        m.d.sync += count.eq(count + 1)
                        with m.If(check & (word >= q)):
                            m.d.sync += error.eq(1)
                        with m.If(is_seed):
                            with m.If(~aborted & ~abort):
                                for i in range(SEED_BEATS):
                                    with m.If(count == i):
                                        m.d.sync += self.seed[64 * i:64 * (i + 1)].eq(word)
                        with m.Else():
                            lane_k = count % p if p > 1 else Const(0)
                            m.d.comb += [self.wr.sel.eq(dst), self.wr.addr.eq(count // p),
                                         self.wr.lanes.eq(Mux(aborted | abort, 0, 1 << lane_k))]
                            for j in range(p):
                                m.d.comb += self.wr.data[j].eq(word[:self.word_bits])
                        with m.If(count == beats - 1):
                            m.next = "finish"
            with m.State("finish"):
                done = ~aborted & ~abort
                m.d.comb += [self.port.done.eq(done), self.port.error.eq(done & error)]
                m.next = "idle"
        return m
