"""Seeding: the write-only 256-bit seed, the XOF messages built from it, and a seeded sampler
(seed -> SHAKE256 -> sampler) in one component."""

from __future__ import annotations

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import validating
from hhe_gen.params.errors import ParameterError

from ._common import check_in_bytes

__all__ = ["MessageKind", "SeedMessage", "SeededSampler", "command_layout", "message_bytes"]


class MessageKind(enum.Enum, shape=2):
    """Which XOF input :class:`SeedMessage` builds for a command.

    SEEDED         ``seed (32 bytes) || domain (1) || nonce LE64`` (41 bytes):
                   :func:`hhe_gen.models.sampler.seeded_xof` (CKKS secrets, errors, ``a``)
    RUBATO_RC      ``nonce LE64 || counter LE64`` (16 bytes): Rubato's round constants
    RUBATO_NOISE   ``nonce LE64 || counter LE64 || seed[0:8] || 0^8`` (32 bytes): Rubato's
                   noise, with the low 64 bits of the seed register as Rubato's noise seed
    """
    SEEDED = 0
    RUBATO_RC = 1
    RUBATO_NOISE = 2


MESSAGE_BYTES = {MessageKind.SEEDED: 41, MessageKind.RUBATO_RC: 16, MessageKind.RUBATO_NOISE: 32}


def message_bytes(kind, seed: bytes, domain: int = 0, nonce: int = 0, counter: int = 0) -> bytes:
    """The bytes :class:`SeedMessage` emits for a command (the same as the models' XOF inputs)."""
    kind = MessageKind(kind)
    if kind == MessageKind.SEEDED:
        return bytes(seed) + bytes([domain]) + nonce.to_bytes(8, "little")
    if kind == MessageKind.RUBATO_RC:
        return nonce.to_bytes(8, "little") + counter.to_bytes(8, "little")
    return nonce.to_bytes(8, "little") + counter.to_bytes(8, "little") + bytes(seed[:8]) + bytes(8)


def command_layout() -> data.StructLayout:
    """A command: which message, and its domain byte, nonce and counter."""
    return data.StructLayout({"kind": MessageKind, "domain": 8, "nonce": 64, "counter": 64})


def _absorb_layout(w: int) -> data.StructLayout:
    # The same fields as hhe_gen.cores.keccak.absorb_layout (data, last, nbytes).
    return data.StructLayout({"data": 8 * w, "last": 1, "nbytes": range(w + 1)})


class SeedMessage(wiring.Component):
    """The 256-bit seed register (write-only) and the XOF messages built from it.

    The seed is written in eight 32-bit words (word i = seed bytes 4i..4i+3, little-endian) and
    can be zeroised; there is no port to read it back.  Each accepted command emits one message
    (:class:`MessageKind`) on ``o_stream``, W bytes per beat with the XOF absorb side's ``last``
    and ``nbytes`` fields, ready for :class:`hhe_gen.cores.keccak.ShakeXof` ``.i_stream``.
    ``o_stream`` carries seed bytes for the SEEDED and RUBATO_NOISE kinds: connect it to the XOF
    only (:class:`SeededSampler` does, and has no seed-carrying output at all).

    Parameters
    ----------
    beat_bytes : int   W, bytes per beat (1, 2, 4, 8)

    Members
    -------
    seed_we, seed_addr, seed_data : In   write seed word ``seed_addr`` (0..7) with ``seed_data``
    seed_clear : In(1)                   zeroise the seed (wins over a write)
    i_stream : In(stream.Signature(command_layout()))   commands
    o_stream : Out(stream.Signature({data, last, nbytes}))   message beats

    Timing: a command is taken when no message is being emitted; its message follows from the
    next cycle, one beat per cycle (``ceil(L/W)`` beats for an L-byte message), then the next
    command is taken in the cycle after the last beat leaves.  Do not write the seed while a
    message that contains it is being emitted.
    """

    def __init__(self, beat_bytes: int = 8):
        with validating(self):
            self.beat_bytes = check_in_bytes(beat_bytes)
        w = self.beat_bytes
        super().__init__({
            "seed_we": In(1), "seed_addr": In(range(8)), "seed_data": In(32), "seed_clear": In(1),
            "i_stream": In(stream.Signature(command_layout())),
            "o_stream": Out(stream.Signature(_absorb_layout(w))),
        })
        self.max_beats = -(-max(MESSAGE_BYTES.values()) // w)
        self._seed = Signal(256)

    def elaborate(self, platform):
        m = Module()
        w = self.beat_bytes
        seed = self._seed
        with m.If(self.seed_clear):
            m.d.sync += seed.eq(0)
        with m.Elif(self.seed_we):
            m.d.sync += seed.word_select(self.seed_addr, 32).eq(self.seed_data)

        cmd = Signal(command_layout())
        busy = Signal()
        beat = Signal(range(self.max_beats))
        pad = 8 * w * self.max_beats
        messages = {
            MessageKind.SEEDED: Cat(seed, cmd.domain, cmd.nonce),
            MessageKind.RUBATO_RC: Cat(cmd.nonce, cmd.counter),
            MessageKind.RUBATO_NOISE: Cat(cmd.nonce, cmd.counter, seed[:64], Const(0, 64)),
        }
        chunk = Signal(8 * w)
        last_beat = Signal(range(self.max_beats))
        tail = Signal(range(w + 1))
        with m.Switch(cmd.kind):
            for kind, bits in messages.items():
                length = MESSAGE_BYTES[kind]
                with m.Case(kind):
                    padded = Cat(bits, Const(0, pad - len(bits)))
                    m.d.comb += [last_beat.eq(-(-length // w) - 1),
                                 tail.eq(length - (-(-length // w) - 1) * w)]
                    with m.Switch(beat):     # constant slices: a plain mux, no barrel shifter
                        for b in range(-(-length // w)):
                            with m.Case(b):
                                m.d.comb += chunk.eq(padded[8 * w * b:8 * w * (b + 1)])
        is_last = beat == last_beat
        m.d.comb += [
            self.i_stream.ready.eq(~busy),
            self.o_stream.valid.eq(busy),
            self.o_stream.payload.data.eq(chunk),
            self.o_stream.payload.last.eq(is_last),
            self.o_stream.payload.nbytes.eq(Mux(is_last, tail, w)),
        ]
        with m.If(self.i_stream.valid & self.i_stream.ready):
            m.d.sync += [cmd.eq(self.i_stream.payload), busy.eq(1), beat.eq(0)]
        with m.If(self.o_stream.valid & self.o_stream.ready):
            with m.If(is_last):
                m.d.sync += busy.eq(0)
            with m.Else():
                m.d.sync += beat.eq(beat + 1)
        return m


class SeededSampler(wiring.Component):
    """Seed register -> SHAKE256 -> sampler, as one component with no seed-carrying output.

    Each accepted command restarts the XOF and clears the sampler (whatever was in flight is
    dropped), absorbs the command's message (:class:`SeedMessage`), and from then on the
    sampler's values come out of ``o_stream`` for as long as they are taken: take the vector's
    ``count`` values, then send the next command.  Equal to the models: e.g. command
    ``(SEEDED, domain, nonce)`` into a :class:`~.gaussian.GaussianCDT` gives
    ``gaussian_cdt(seeded_xof(seed, domain, nonce), count)``.

    Parameters
    ----------
    sampler : a sampler component of this package with ``in_bytes`` = W, or any component with
              a byte ``i_stream``, an ``o_stream`` and a ``clear`` input
    rounds_per_cycle : int   Keccak rounds per cycle of the XOF (1, 2, 3, 4, 6, 8, 12, 24)

    Members
    -------
    seed_we, seed_addr, seed_data, seed_clear : In   the write-only seed port (:class:`SeedMessage`)
    i_stream : In(stream.Signature(command_layout()))
    o_stream : Out(the sampler's o_stream signature)
    xof_beats : number of XOF output beats (W bytes each) taken by the sampler since the last
                command (a Signal, for tests and bandwidth counters)

    Latency: the first value appears ``beats + 2 + 24/k`` cycles after the command (message
    beats, the XOF's pad and permutation) plus the sampler's own latency; afterwards the XOF
    gives ``136 / (136/W + 24/k)`` bytes per cycle.
    """

    def __init__(self, sampler, *, rounds_per_cycle: int = 1):
        from hhe_gen.cores.keccak import ShakeXof

        with validating(self):
            w = getattr(sampler, "in_bytes", None)
            if w not in (1, 2, 4, 8) or "abort" not in sampler.signature.members:
                raise ParameterError("sampler", sampler, "a sampler of hhe_gen.cores.sampler (in_bytes, abort)")
        self.sampler = sampler
        self.beat_bytes = w
        self._message = SeedMessage(w)
        self._xof = ShakeXof(256, beat_bytes=w, rounds_per_cycle=rounds_per_cycle)
        super().__init__({
            "seed_we": In(1), "seed_addr": In(range(8)), "seed_data": In(32), "seed_clear": In(1),
            "i_stream": In(stream.Signature(command_layout())),
            "o_stream": Out(stream.Signature(sampler.o_stream.payload.shape())),
        })
        self.xof_beats = Signal(32)

    def elaborate(self, platform):
        m = Module()
        m.submodules.message = msg = self._message
        m.submodules.xof = xof = self._xof
        m.submodules.sampler = smp = self.sampler
        m.d.comb += [msg.seed_we.eq(self.seed_we), msg.seed_addr.eq(self.seed_addr),
                     msg.seed_data.eq(self.seed_data), msg.seed_clear.eq(self.seed_clear)]
        wiring.connect(m, wiring.flipped(self.i_stream), msg.i_stream)
        m.d.comb += [xof.i_stream.valid.eq(msg.o_stream.valid),
                     xof.i_stream.payload.data.eq(msg.o_stream.payload.data),
                     xof.i_stream.payload.last.eq(msg.o_stream.payload.last),
                     xof.i_stream.payload.nbytes.eq(msg.o_stream.payload.nbytes),
                     msg.o_stream.ready.eq(xof.i_stream.ready)]
        wiring.connect(m, xof.o_stream, smp.i_stream)
        wiring.connect(m, smp.o_stream, wiring.flipped(self.o_stream))
        start = self.i_stream.valid & self.i_stream.ready
        m.d.comb += [xof.abort.eq(start), smp.abort.eq(start)]
        with m.If(start):
            m.d.sync += self.xof_beats.eq(0)
        with m.Elif(xof.o_stream.valid & xof.o_stream.ready):
            m.d.sync += self.xof_beats.eq(self.xof_beats + 1)
        return m
