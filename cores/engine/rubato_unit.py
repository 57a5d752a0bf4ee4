"""The engine's Rubato unit: the Rubato keystream core (:class:`hhe_gen.cores.rubato.RubatoCore`)
between the engine's buffers, so that one instruction stream runs CKKS and Rubato tasks (dual
mode; the units are separate, so the two modes' tasks also overlap).

- ``rubato.key a``: the key block of buffer a through a :class:`.row_reader.RowReader`: words
  0 .. n-1 into the core's write-only key memory, the nonce (words n, n+1) and the counter base
  (n+4, n+5) into registers of the unit, the noise seed (n+2, n+3) into the core's write-only seed
  register.  A key word >= t or a half >= 2^32 raises ``error`` (DATA_RANGE) with ``done``; the
  words are still written (the key word modulo 2^t_bits, a half modulo 2^32).
- ``rubato.stream dst, blocks=B, counter=C[, noise]``: B commands to the core (counter base + C
  + k, the noise flag), each block's l words written to dst words k*l .. k*l+l-1, one per cycle
  (one lane of a row), the next command accepted while the words of the previous leave.
- ``rubato.enc dst, a, ...``: the same, each word plus word x of a at the same index (read
  through the row reader): s = z + x' (x' = signed(x), + t when negative), - t when s >= t;
  a word with |signed(x)| >= t raises DATA_RANGE with ``done`` (the words are still written).
- Abort: the block in the core (and one accepted behind it) is finished and its words dropped
  (``task.ready`` low until the core is idle); no ``done``.  The key, nonce, seed and counter base
  stay.

The key and the seed have no path out but the keystream; nothing here reads them back.  No cycle
depends on the key, the seed, the state or the message (the core's only data-dependent timing,
the round constants' rejections, is a public function of the nonce and counter).

Model: :meth:`hhe_gen.engine.model.EngineModel._rubato_key` / ``_rubato_blocks``.

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width : the engine's sizes (:func:`.units.check_unit_sizes`)
params : RubatoParams or set name    the set built (``isa.RUBATO_SET_IDS``); its key block (n + 6
                                     words) must fit N
rubato_lanes : int                   the core's lanes (words per cycle in its layers, a divisor of n)
multiplier : str                     the core's multipliers, "barrett" or "butterfly"; "external":
                                     its Feistel squarers on the ``lanes_port`` (lanes 0 ..
                                     rubato_lanes - 1 of the crypto unit's array, its Z_t field)
mul_latency : int or None            the core's multipliers' latency ("external": the array's)
xof : str                            "own" (the core's SHAKE256) or "external": the engine's one XOF
                                     through the member ``xof`` (8-byte beats), held from a
                                     ``rubato.stream`` / ``rubato.enc`` task's start to its last
                                     block; the first block's command waits for the grant
xof_rounds_per_cycle : int           the XOF's Keccak rounds per cycle (the core's cycle formula)
xof_ring : bool                      the engine's XOF is a ring one (the core's cycle formula)

Members
-------
port : In(UnitPort(tag_width))       the task manager's command / status port
rd : Out(read_port_signature(...))   read port (key blocks, messages)
wr : Out(write_port_signature(...))  write port (keystream, ciphertext)
lanes_port : Out(butterfly lanes)    ``multiplier="external"`` only: the core's
xof : Out(xof_client_signature(8))   ``xof="external"`` only: the core's, requested for the whole task

Latency
-------
``rubato.key``: n + 6 words at one per cycle after the reader's two cycles, ``done`` in the cycle
after the last.  A block: the core's :meth:`~hhe_gen.cores.rubato.RubatoCore.cycles_per_block`
from its command (the first command two cycles after the task); the core takes the next command
once its last word is in the output register, so B blocks take about B times a block; ``done`` in
the cycle after the last word is written.
"""

from __future__ import annotations

from amaranth.hdl import Module, Mux, ResetInserter, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.rubato import RubatoCore
from hhe_gen.cores.rubato.core import CoreState
from hhe_gen.cores.unused import mark_unused, quiet_on_error
from hhe_gen.params.errors import ParameterError

from . import isa
from .buffers import read_port_signature, write_port_signature
from .row_reader import RowReader
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["RubatoUnit", "XOF_BEAT_BYTES"]

#: Bytes per beat of the engine's one XOF as the Rubato core sees it (the sampling unit's beats).
XOF_BEAT_BYTES = 8


def _times(value, constant: int):
    """value * constant as shifts and adds (a product with a constant would take a DSP tile)."""
    terms = [value << k for k in range(constant.bit_length()) if constant >> k & 1]
    out = terms[0]
    for term in terms[1:]:
        out = out + term
    return out


class RubatoUnit(wiring.Component):
    """``rubato.key`` / ``rubato.stream`` / ``rubato.enc`` (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int, *,
                 params="Par-128S", rubato_lanes: int = 2, multiplier: str = "barrett", mul_latency=None,
                 xof: str = "own", xof_rounds_per_cycle: int = 1, xof_ring: bool = False):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots)
        self.core = RubatoCore(params, rubato_lanes, noise=True, multiplier=multiplier, mul_latency=mul_latency,
                               xof=xof, xof_beat_bytes=XOF_BEAT_BYTES, xof_rounds_per_cycle=xof_rounds_per_cycle,
                               xof_ring=xof_ring)
        p = self.params = self.core.params
        mark_unused(self.core, deep=True)
        if p.name not in isa.RUBATO_SET_IDS:
            raise ParameterError("params", p.name, "one of " + ", ".join(isa.RUBATO_SET_IDS))
        self.set_id = isa.RUBATO_SET_IDS.index(p.name)
        if p.n + isa.RUBATO_KEY_EXTRA > n:
            raise ParameterError("n", n, f">= {p.n + isa.RUBATO_KEY_EXTRA}: a {p.name} key block (n + 6 words) "
                                         f"must fit a buffer")
        if word_bits < isa.RUBATO_HALF_BITS:
            raise ParameterError("word_bits", word_bits, f">= {isa.RUBATO_HALF_BITS} (the 32-bit halves of a "
                                                         f"key block; t and a signed message word)")
        super().__init__({
            "port": In(UnitPort(tag_width)),
            "rd": Out(read_port_signature(buffers, self.rows, lanes, word_bits)),
            "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
            **({"lanes_port": self.core.signature.members["lanes_port"]} if multiplier == "external" else {}),
            **({"xof": self.core.signature.members["xof"]} if self.core.external_xof else {}),
        })

    @property
    def declaration(self) -> UnitDeclaration:
        """Its kind and buffer ports (:mod:`.unit_ports`)."""
        return UnitDeclaration(isa.Unit.RUBATO, reads=("rd",), writes=("wr",))

    def elaborate(self, platform):
        m = Module()
        p, P, W = self.params, self.lanes, self.word_bits
        task, abort = self.port.task, self.port.abort
        m.submodules.core = core = self.core
        if "lanes_port" in self.signature.members:
            wiring.connect(m, core.lanes_port, wiring.flipped(self.lanes_port))
        holding = Signal()                          # a blocks task: the XOF stays the core's
        if self.core.external_xof:
            inner, outer = core.xof, self.xof
            m.d.comb += [outer.req.eq(inner.req | holding), inner.grant.eq(outer.grant),
                         outer.restart.eq(inner.restart),
                         outer.absorb.valid.eq(inner.absorb.valid), outer.absorb.payload.eq(inner.absorb.payload),
                         inner.absorb.ready.eq(outer.absorb.ready),
                         inner.squeeze.valid.eq(outer.squeeze.valid), inner.squeeze.payload.eq(outer.squeeze.payload),
                         outer.squeeze.ready.eq(inner.squeeze.ready)]
        reader = RowReader(self.n, P, W, self.buffers)
        m.submodules.reader = ResetInserter(abort)(reader)
        wiring.connect(m, reader.rd, wiring.flipped(self.rd))

        op = Signal(isa.OPCODE_BITS)
        dst = Signal(isa.BUFFER_BITS)
        noise = Signal()
        blocks = Signal(8)
        issued = Signal(8)
        offset = Signal(24)
        nonce, counter_base = Signal(64), Signal(64)
        word = Signal(range(self.n + 1))           # words taken (key) / written (blocks)
        total = Signal(range(self.n + 1))          # words of the task: blocks x l
        error = Signal()
        encrypt = op == isa.Opcode.RUBATO_ENC

        m.d.comb += [reader.sel.eq(task.payload.a),
                     reader.count.eq(Mux(task.payload.opcode == isa.Opcode.RUBATO_KEY, p.n + isa.RUBATO_KEY_EXTRA,
                                         _times(task.payload.imm[24:], p.l)))]
        cmd = core.i_stream.payload
        m.d.comb += [cmd.nonce.eq(nonce), cmd.counter.eq(counter_base + offset + issued), cmd.noise.eq(noise),
                     total.eq(_times(blocks, p.l))]

        # the key block's words
        x = reader.o_stream.payload
        half = Signal(32)
        m.d.comb += [half.eq(x[:32]), core.key_addr.eq(word), core.key_data.eq(x[:p.q_bits]),
                     core.seed_addr.eq(word - p.n - 2), core.seed_data.eq(half)]

        # a ciphertext word: z + x' - (t if z + x' >= t)
        xs = x.as_signed()
        lifted = Signal(signed(W + 1))
        total_word = Signal(signed(W + 2))
        value = Signal(W)
        m.d.comb += [lifted.eq(Mux(xs < 0, xs + p.q, xs)),
                     total_word.eq(core.o_stream.payload + lifted),
                     value.eq(Mux(encrypt, Mux(total_word >= p.q, total_word - p.q, total_word),
                                  core.o_stream.payload))]
        out_ok = core.o_stream.valid & (~encrypt | reader.o_stream.valid)
        write = Signal()
        lane = word[:P.bit_length() - 1] if P > 1 else 0
        m.d.comb += [self.wr.sel.eq(dst), self.wr.addr.eq(word >> (P.bit_length() - 1)),
                     self.wr.lanes.eq(Mux(write, 1 << lane, 0))]
        for j in range(P):
            m.d.comb += self.wr.data[j].eq(value)

        with m.FSM():
            with m.State("idle"):
                m.d.comb += task.ready.eq(~abort)
                with m.If(task.valid & ~abort):
                    pl = task.payload
                    m.d.sync += [op.eq(pl.opcode), dst.eq(pl.dst), noise.eq(pl.flags[0]), blocks.eq(pl.imm[24:]),
                                 offset.eq(pl.imm[:24]), issued.eq(0), word.eq(0), error.eq(0)]
                    with m.If(pl.opcode == isa.Opcode.RUBATO_KEY):
                        m.d.comb += reader.start.eq(1)
                        m.next = "key"
                    with m.Else():
                        m.d.comb += reader.start.eq(pl.opcode == isa.Opcode.RUBATO_ENC)
                        m.next = "blocks"
            with m.State("key"):
                m.d.comb += reader.o_stream.ready.eq(1)
                with m.If(abort):
                    m.next = "idle"
                with m.Elif(reader.o_stream.valid):
                    m.d.sync += word.eq(word + 1)
                    with m.If(word < p.n):
                        m.d.comb += core.key_we.eq(1)
                        with m.If(x >= p.q):
                            m.d.sync += error.eq(1)
                    with m.Elif(x >> 32 != 0):
                        m.d.sync += error.eq(1)
                    for k, (reg, at) in enumerate(((nonce, 0), (nonce, 32), (None, 0), (None, 32),
                                                   (counter_base, 0), (counter_base, 32))):
                        with m.If(word == p.n + k):
                            if reg is None:
                                m.d.comb += core.seed_we.eq(1)
                            else:
                                m.d.sync += reg[at:at + 32].eq(half)
                    with m.If(word == p.n + isa.RUBATO_KEY_EXTRA - 1):
                        m.next = "finish"
            with m.State("blocks"):
                m.d.comb += holding.eq(1)
                m.d.comb += core.i_stream.valid.eq((issued != blocks) & ~abort)
                with m.If(core.i_stream.valid & core.i_stream.ready):
                    m.d.sync += issued.eq(issued + 1)
                m.d.comb += [core.o_stream.ready.eq(out_ok & ~abort),
                             reader.o_stream.ready.eq(encrypt & out_ok & ~abort),
                             write.eq(out_ok & ~abort)]
                with m.If(abort):
                    m.next = "drain"
                with m.Elif(out_ok):
                    m.d.sync += word.eq(word + 1)
                    with m.If(encrypt & ((xs >= p.q) | (xs <= -p.q))):
                        m.d.sync += error.eq(1)
                    with m.If(word == total - 1):
                        m.next = "finish"
            with m.State("finish"):
                done = ~abort
                m.d.comb += [self.port.done.eq(done), self.port.error.eq(done & error)]
                m.next = "idle"
            with m.State("drain"):                 # an aborted block: its words are dropped
                m.d.comb += core.o_stream.ready.eq(1)
                with m.If((core.state == CoreState.IDLE) & ~core.o_stream.valid):
                    m.next = "idle"
        return m
