"""The engine's sampling unit: ``sample dst, kind, domain, nonce[, slot]`` through one SHAKE256 XOF
and the samplers of :mod:`hhe_gen.cores.sampler`.

A task starts on a restarted XOF and samplers (they restart in the cycle after the previous task
ended or an abort, and start clean after reset), absorbs ``seed (32 bytes) || domain (1) || nonce (8,
little-endian)`` (:func:`hhe_gen.models.sampler.seeded_xof`; the 24-bit nonce of the instruction
zero-extended), and routes the XOF's output to the sampler of the task's kind:

=========  =============================================  ==========================================
kind       sampler                                        word written
=========  =============================================  ==========================================
uniform    :class:`~hhe_gen.cores.sampler.UniformModQ`    the value (< q_slot)
ternary    :class:`~hhe_gen.cores.sampler.TernaryUniform` -1 / 0 / 1, two's complement in word_bits
hamming    :class:`~hhe_gen.cores.sampler.TernaryHamming` likewise, exactly h non-zero
gaussian   :class:`~hhe_gen.cores.sampler.GaussianCDT`    the sample, two's complement in word_bits
=========  =============================================  ==========================================

Value k goes to word k of ``dst`` (row k / P, lane k mod P), one per cycle at most, or with P >= 2
two per cycle from the ternary sampler (:class:`~hhe_gen.cores.sampler.TernaryUniform` with
``values_per_cycle=2``: words k, k + 1 of one row, k even); the task is done after the N-th.  The seed comes from the memory unit's seed register (``ldseed``) and goes
nowhere but into the XOF.  Which cycles a sampler rejects depends only on the random stream (the
uniform sampler's rejected candidates, the ternary sampler's rejected pieces), never on the
values kept; the Gaussian and ternary samples' timing does not depend on the values at all.

Parameters
----------
n, lanes, word_bits, buffers, slots, tag_width, primes : the engine's sizes
sigma, bound_sigmas : the Gaussian (default 3.2, 6)
hamming_weight : int or None   h of the Hamming sampler (None: N/2, as the ISA model)
rounds_per_cycle : int         Keccak rounds per cycle
xof : str                      "own" (a SHAKE256 of the unit's) or "external": the engine's one XOF
                               (:class:`~hhe_gen.cores.keccak.shared.SharedXof`) through the member
                               ``xof``, requested while a task runs (a task whose request finds
                               the XOF free starts as on an XOF of its own)

Members
-------
port : In(UnitPort(tag_width));  wr : Out(write port);  seed : In(256)
slot_prime : In(ArrayLayout(5, S))
xof : Out(xof_client_signature(BEAT_BYTES))   ("external" only) the unit's port on the one XOF
shake (None with "external"), uniform, ternary, hamming, gaussian : the cores (after construction)

Latency
-------
Depends on the random stream (rejection sampling) for uniform, ternary and hamming: the cycle
count of a task is a function of (seed, domain, nonce) only: ternary about N/2 cycles at P >= 2
(N at P = 1), uniform and hamming about N.  Gaussian: ``N`` samples at the XOF's rate (8 bytes
each).
"""

from __future__ import annotations

from amaranth.hdl import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.keccak import ShakeXof, check_rounds_per_cycle
from hhe_gen.cores.keccak.shared import xof_client_signature
from hhe_gen.cores.sampler import GaussianCDT, TernaryHamming, TernaryUniform, UniformModQ
from hhe_gen.cores.unused import mark_unused, quiet_on_error
from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

from . import isa
from .buffers import write_port_signature
from .units import UnitPort, check_unit_sizes
from .unit_ports import UnitDeclaration

__all__ = ["SamplerUnit", "MESSAGE_BYTES", "BEAT_BYTES"]

MESSAGE_BYTES = 41
BEAT_BYTES = 8


class SamplerUnit(wiring.Component):
    """XOF + samplers writing N samples into a buffer (see the module docstring)."""

    @quiet_on_error
    def __init__(self, n: int, lanes: int, word_bits: int, buffers: int, slots: int, tag_width: int,
                 primes, *, sigma=3.2, bound_sigmas=6, hamming_weight=None, rounds_per_cycle: int = 1,
                 xof: str = "own"):
        check_unit_sizes(self, n, lanes, word_bits, buffers, slots, primes)
        if len({-(-q.bit_length() // 8) for q in self.primes}) != 1:
            raise ParameterError("primes", primes, "primes of one byte length ceil(bitlen(q)/8) "
                                 "(the uniform sampler draws candidates of that many bytes)")
        self.hamming_weight = n // 2 if hamming_weight is None else check_int("hamming_weight", hamming_weight, 0, n)
        if xof not in ("own", "external"):
            raise ParameterError("xof", xof, "'own' or 'external'")
        check_rounds_per_cycle(rounds_per_cycle)
        self.rounds_per_cycle = rounds_per_cycle
        self.shake = ShakeXof(256, beat_bytes=BEAT_BYTES, rounds_per_cycle=rounds_per_cycle) if xof == "own" else None
        self.uniform = UniformModQ(list(self.primes) if len(self.primes) > 1 else self.primes[0],
                                   in_bytes=BEAT_BYTES)
        # two ternary values a cycle where a row has two lanes (the ternary sampler's bytes allow it)
        self.ternary = TernaryUniform(in_bytes=BEAT_BYTES, values_per_cycle=2 if lanes >= 2 else 1)
        self.hamming = TernaryHamming(n, self.hamming_weight, in_bytes=BEAT_BYTES)
        self.gaussian = GaussianCDT(sigma, bound_sigmas, in_bytes=BEAT_BYTES)
        mark_unused(*(c for c in (self.shake, self.uniform, self.ternary, self.hamming, self.gaussian) if c))
        if self.uniform.value_bits > word_bits:
            raise ParameterError("word_bits", word_bits, f">= {self.uniform.value_bits} (the primes' width)")
        super().__init__({
            "port": In(UnitPort(tag_width)),
            "wr": Out(write_port_signature(buffers, self.rows, lanes, word_bits)),
            "seed": In(256),
            "slot_prime": In(data.ArrayLayout(5, slots)),
            **({"xof": Out(xof_client_signature(BEAT_BYTES))} if xof == "external" else {}),
        })

    @property
    def declaration(self) -> UnitDeclaration:
        """Its kind and buffer ports (:mod:`.unit_ports`)."""
        return UnitDeclaration(isa.Unit.SAMPLER, writes=("wr",))

    def elaborate(self, platform):
        m = Module()
        p, wb, n = self.lanes, self.word_bits, self.n
        task, abort = self.port.task, self.port.abort
        samplers = {isa.SampleKind.UNIFORM: self.uniform, isa.SampleKind.TERNARY: self.ternary,
                    isa.SampleKind.HAMMING: self.hamming, isa.SampleKind.GAUSSIAN: self.gaussian}
        busy = Signal()
        if self.shake is not None:
            m.submodules.xof = self.shake
            absorb, squeeze, xof_abort = self.shake.i_stream, self.shake.o_stream, self.shake.abort
        else:                               # the one XOF, held while a task runs
            absorb, squeeze, xof_abort = self.xof.absorb, self.xof.squeeze, self.xof.restart
            m.d.comb += self.xof.req.eq(busy)
        for kind, smp in samplers.items():
            m.submodules[kind.name.lower()] = smp

        kind, done = Signal(2), Signal()
        dst, domain, nonce = Signal(isa.BUFFER_BITS), Signal(8), Signal(24)
        beat = Signal(range(6 + 1))                  # message beat 0 .. 5 (41 bytes in 8-byte beats)
        count = Signal(range(n + 1))                 # values written
        start = task.valid & task.ready
        m.d.comb += task.ready.eq(~busy & ~abort)
        # The XOF and the samplers restart in the cycle after a task ends or an abort, from a
        # register: they are clean whenever the unit is idle (after reset too), so a task starts
        # on them at once, and the XOF's 1600-bit state enable does not hang on the scheduler's
        # offer (``task.valid``).  Nothing moves between them and the unit while it is idle.
        restart = Signal()
        m.d.sync += restart.eq(done | abort)
        m.d.comb += xof_abort.eq(restart)
        for smp in samplers.values():
            m.d.comb += smp.abort.eq(restart)
        with m.If(abort):
            m.d.sync += busy.eq(0)
        with m.Elif(start):
            pl = task.payload
            m.d.sync += [busy.eq(1), kind.eq(pl.flags[:2]), dst.eq(pl.dst), domain.eq(pl.imm[24:32]),
                         nonce.eq(pl.imm[:24]), beat.eq(0), count.eq(0)]
            if len(self.primes) > 1:
                m.d.sync += self.uniform.modulus.eq(self.slot_prime[pl.slot])

        # the message: seed || domain || nonce (LE64), 8 bytes per beat, the last beat 1 byte
        message = Signal(8 * 48)
        m.d.comb += message.eq(self.seed | (domain << 256) | (nonce << 264))
        beats = -(-MESSAGE_BYTES // BEAT_BYTES)
        m.d.comb += [absorb.valid.eq(busy & (beat < beats) & ~abort),
                     absorb.payload.data.eq(message.word_select(beat, 64)),
                     absorb.payload.last.eq(beat == beats - 1),
                     absorb.payload.nbytes.eq(Mux(beat == beats - 1, MESSAGE_BYTES - BEAT_BYTES * (beats - 1),
                                                  BEAT_BYTES))]
        with m.If(absorb.valid & absorb.ready):
            m.d.sync += beat.eq(beat + 1)

        # XOF output to the selected sampler; its values (one, or a pair from the ternary sampler)
        # into the buffer: value k to word k, a pair to lanes k, k + 1 of one row (k even)
        values = [Signal(wb, name=f"value{i}") for i in range(2)]
        pair = Signal()
        valid = Signal()
        for k, smp in samplers.items():
            sel = kind == k
            m.d.comb += [smp.i_stream.valid.eq(squeeze.valid & sel & busy),
                         smp.i_stream.payload.eq(squeeze.payload),
                         smp.o_stream.ready.eq(sel & busy & ~abort)]
            with m.If(sel):
                m.d.comb += [squeeze.ready.eq(smp.i_stream.ready & busy), valid.eq(smp.o_stream.valid & busy)]
                v = smp.o_stream.payload
                if getattr(smp, "values_per_cycle", 1) == 2:
                    m.d.comb += [values[0].eq(v[0]), values[1].eq(v[1]), pair.eq(1)]
                else:
                    m.d.comb += values[0].eq(v.as_signed() if k != isa.SampleKind.UNIFORM else v)
        write = valid & ~abort
        lane = count % p if p > 1 else Const(0)
        lanes_mask = Mux(pair, 0b11 << lane, 1 << lane) if p > 1 else Const(1)
        m.d.comb += [self.wr.sel.eq(dst), self.wr.addr.eq(count // p),
                     self.wr.lanes.eq(Mux(write, lanes_mask, 0))]
        for j in range(p):
            m.d.comb += self.wr.data[j].eq(Mux(pair, values[j % 2], values[0]))
        step = Mux(pair, 2, 1)
        m.d.comb += done.eq(write & (count + step == n))
        with m.If(write):
            m.d.sync += count.eq(count + step)
        with m.If(done):
            m.d.sync += busy.eq(0)
        m.d.comb += [self.port.done.eq(done), self.port.error.eq(0)]
        return m
