"""The engine's memory unit: ``load``, ``store`` and ``ldseed`` between the buffers and the memory
port (:mod:`.memory_port`).

- ``load dst, slot, addr[, check]``: one read command of N/W beats (W words per beat, the memory
  port's width); the low ``word_bits`` bits of memory word k go to word k of buffer ``dst`` (row
  k / P, lane k mod P), one beat per cycle at the memory's rate.  With ``check`` (flags bit 0) a
  word >= q_slot (compared on all 64 bits) marks the task's ``error`` (DATA_RANGE); the words are
  still written and the load completes.
- ``store a, addr``: one write command of N/W beats, word k of buffer ``a`` zero-extended to 64
  bits, read through a :class:`.row_reader.RowReader` (rows read ahead into a three-row FIFO), so
  the beats leave at one per cycle.
- ``ldseed addr``: one read command of 4/W beats (one at W = 8, its last 4 words ignored) into the
  256-bit seed register (word i = bytes 8i .. 8i+7, little-endian).  The seed goes to the sampling
  unit only: no readable register holds it.

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
beat_words : int W, 64-bit words per memory beat: a power of two 1 .. min(P, 8) (default 1)

Members
-------
port : In(UnitPort(tag_width))      the task manager's command / status port
mem : Out(MemoryPort(W))            the memory-master port
wr : Out(write_port_signature(...)) write port into the buffers
rd : Out(read_port_signature(...))  read port from the buffers
slot_q : In(ArrayLayout(64, S))     q of each prime slot (for checked loads)
seed : Out(256)                     the seed register (to the sampling unit)

Latency
-------
load: command in the cycle after the task transfer, then one cycle per beat (W words) after the
memory delivers it; ``done`` in the cycle after the last beat.  store: command in the cycle after the
task, beats from the third cycle at one per cycle while the memory takes them; ``done`` in the
cycle after the last beat's transfer.  ldseed: like a load of 4/W beats (at least one).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.checks import check_power_of_two

from . import isa
from .buffers import read_port_signature, write_port_signature
from .memory_port import MAX_BEAT_WORDS, MemoryPort
from .row_reader import RowReader
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["MemoryUnit", "SEED_WORDS"]

SEED_WORDS = 4
"""The seed's 64-bit words (256 bits)."""


class MemoryUnit(wiring.Component):
    """Load / store / ldseed over the memory port (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int,
                 beat_words: int = 1):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots)
        top = min(lanes, MAX_BEAT_WORDS)
        self.beat_words = check_power_of_two("beat_words", beat_words, 1, top,
                                             f"a power of two 1 .. {top} (min(P, {MAX_BEAT_WORDS}))")
        super().__init__({
            "port": In(UnitPort(tag_width)),
            "mem": Out(MemoryPort(beat_words)),
            "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
            "rd": Out(read_port_signature(buffers, self.rows, lanes, word_bits)),
            "slot_q": In(data.ArrayLayout(64, slots)),
            "seed": Out(256),
        })

    @property
    def declaration(self) -> UnitDeclaration:
        """Its kind and buffer ports (:mod:`.unit_ports`)."""
        return UnitDeclaration(isa.Unit.MEMORY, reads=("rd",), writes=("wr",))

    def elaborate(self, platform):
        m = Module()
        n, p, w = self.n, self.lanes, self.beat_words
        seed_beats = max(1, SEED_WORDS // w)
        task = self.port.task
        abort = self.port.abort
        op = Signal(isa.OPCODE_BITS)
        dst, src = Signal(isa.BUFFER_BITS), Signal(isa.BUFFER_BITS)
        check, addr = Signal(), Signal(isa.IMM_BITS)
        q = Signal(64)
        aborted = Signal()          # finish the memory transaction, no done
        error = Signal()
        count = Signal(range(n // w + 1))      # beats moved
        is_store = op == isa.Opcode.STORE
        is_seed = op == isa.Opcode.LDSEED
        beats = Mux(is_seed, seed_beats, n // w)

        # store: the buffer's words through the row reader
        reader = m.submodules.store_reader = RowReader(n, p, self.word_bits, self.buffers, w)
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
                    wb = self.word_bits
                    m.d.comb += [wd.valid.eq(reader.o_stream.valid),
                                 wd.payload.last.eq(count == n // w - 1), reader.o_stream.ready.eq(wd.ready)]
                    for j in range(w):          # word j zero-extended into its 64 bits
                        m.d.comb += wd.payload.data[64 * j:64 * (j + 1)].eq(
                            reader.o_stream.payload[wb * j:wb * (j + 1)])
                    with m.If(wd.valid & wd.ready):
                        m.d.sync += count.eq(count + 1)
                        with m.If(count == n // w - 1):
                            m.next = "finish"
                with m.Else():
                    rdt = self.mem.rdata
                    m.d.comb += rdt.ready.eq(1)
                    with m.If(rdt.valid):
                        words = [rdt.payload.data[64 * j:64 * (j + 1)] for j in range(w)]
                        m.d.sync += count.eq(count + 1)
                        with m.If(check & Cat(*(word >= q for word in words)).any()):
                            m.d.sync += error.eq(1)
                        with m.If(is_seed):
                            with m.If(~aborted & ~abort):
                                for i in range(SEED_WORDS):
                                    with m.If(count == i // w):
                                        m.d.sync += self.seed[64 * i:64 * (i + 1)].eq(words[i % w])
                        with m.Else():
                            groups = p // w                 # beats per row
                            group = count % groups if groups > 1 else Const(0)
                            mask = (1 << w) - 1
                            m.d.comb += [self.wr.sel.eq(dst), self.wr.addr.eq(count // groups),
                                         self.wr.lanes.eq(Mux(aborted | abort, 0, mask << (group * w)))]
                            for j in range(p):
                                m.d.comb += self.wr.data[j].eq(words[j % w][:self.word_bits])
                        with m.If(count == beats - 1):
                            m.next = "finish"
            with m.State("finish"):
                done = ~aborted & ~abort
                m.d.comb += [self.port.done.eq(done), self.port.error.eq(done & error)]
                m.next = "idle"
        return m
