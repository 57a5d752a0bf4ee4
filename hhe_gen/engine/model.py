"""The ISA-level golden model of the engine: every instruction executed in program order.

This is the reference semantics of :mod:`hhe_gen.cores.engine.isa`: an engine that dispatches out
of order must end with the same memory, buffers, seed, configuration registers, error status and
notify events as :meth:`EngineModel.run` on the same words.

State
-----
- ``memory``: 64-bit words by word address (a dict; a missing word reads 0); addresses wrap
  modulo 2^32 (``imm + k`` is taken mod 2^32).
- ``buffers``: B lists of N words, each < 2^word_bits.  A word holds a residue, or a small signed
  value in word_bits-bit two's complement, or a fixed-point slot part.
- ``bound``: prime slot -> bound prime (set by ``cfg.prime``); ``seed``: 32 bytes;
  ``config``: the configuration registers by name; ``events``: the notify codes, in order.
- ``error`` / ``error_position``: the first error's cause and the position of its instruction
  (index since the last soft reset); ``position``: instructions seen since the last soft reset.

Semantics (q = the prime bound to the slot; lift(x) = the word_bits-bit two's complement value of
x, reduced: ``signed(x) % q``; an operand that is not lifted is read as a residue - a word >= q
there is outside the contract: the model reduces it mod q, an engine may give any value)
-----------------------------------------------------------------------------------------------
- every instruction is first checked with ``isa.check(ins, shape, bound)``; a malformed one sets
  (cause, position) if no error is recorded yet and is dropped; once an error is recorded every
  later instruction is dropped (cause AFTER_ERROR in the trace) with no state change, until
  :meth:`EngineModel.soft_reset`.
- ``load``: dst[k] = mem[imm+k] mod 2^word_bits, k < N.  With ``check`` (flags bit 0) a memory
  word >= q (the full 64-bit word is compared) records DATA_RANGE at the load's position; the load
  still completes (dst is written in full), everything after it is dropped.
- ``store``: mem[imm+k] = a[k] (zero-extended to 64 bits).  ``ldseed``: seed = the 4 words at
  imm .. imm+3, each as 8 bytes little-endian (the first word gives seed bytes 0 .. 7).
- ``sample dst, KIND, domain=D, nonce=M``: xof = sampler.seeded_xof(seed, D, M); UNIFORM:
  uniform_mod_q(xof, q, N); TERNARY: ternary_uniform(xof, N); HAMMING: ternary_hamming(xof, N, h);
  GAUSSIAN: gaussian_cdt(xof, N, sigma, bound_sigmas).  Signed values are stored in two's
  complement (word_bits).
- ``add`` / ``sub`` / ``mul`` / ``mac`` (a*b + c) / ``msub`` (c - a*b): pointwise mod q, source k
  lifted when flags bit k is set (bit 0 = a, bit 1 = b, bit 2 = c).  ``add ..., integer`` (flags
  = 4): dst = (a + b) mod 2^word_bits, no prime.  ``move``: dst = a, or lift(a) with flags bit 0.
- ``conv dst, a, sK, to=sJ, KIND``: x = a mod q_K centred by
  :func:`hhe_gen.models.rns_basis.centre` (x - q_K at and above the kind's threshold), reduced
  mod q_J.
- ``ntt`` / ``intt``: :func:`hhe_gen.models.ntt.ntt` / :func:`~hhe_gen.models.ntt.intt` (natural
  order in, bit-reversed out, and back); ``ntt`` lifts a with flags bit 0.
- ``encode dst, a, s, rows=R``: the slots in a (Re at words 0 .. N/2-1, Im at N/2 .. N-1, each the
  low fmt.width bits as two's complement) ->
  :func:`hhe_gen.models.ckks_fixed.encode_fixed` (fmt, log_scale, the primes of slots s .. s+R-1)
  -> row j into buffer dst+j.  With ``signed`` (flags bit 0, rows = 1):
  :func:`hhe_gen.models.ckks_fixed.encode_integers` in word_bits two's complement into dst.
- ``decode dst, a, s, rows=R``: :func:`hhe_gen.models.ckks_fixed.decode_fixed` of buffers a ..
  a+R-1 over the primes of slots s .. s+R-1 -> dst holds Re / Im as above, in word_bits two's
  complement.  With ``decode_rows`` (an engine whose decoder was built for those row counts over
  prefixes of the built-in primes) a decode with another R, or with slots s .. s+R-1 not bound to
  the built-in primes 0 .. R-1 in order, records DATA_RANGE and writes nothing.
- ``send a, sK, KIND, rows=R, of=T, words=W[, ntt]``: buffers a .. a+R-1 as rows K .. K+R-1 of a
  polynomial of T rows (0: R) and kind KIND, words 0 .. W-1 of each (W = 0: N), cut into packets of
  ``net.segment``
  coefficients (0: ``max_segment``) by :func:`hhe_gen.models.wire.polynomial_packets` with the
  message id ``net.message``, log_scale the engine's for c0 / c1 (else 0), numbered on from the
  previous ``send``; each packet is appended to ``packets`` with ``net.ip`` and ``net.ports``.
- ``recv dst, rows=R``: payloads are taken from ``incoming`` (the packets the UDP port delivers,
  in arrival order) by :class:`hhe_gen.models.wire_in_order.InOrderReceiver` (R/2 rows of N words,
  kinds c0 then c1) until a message is complete; its writes go to dst + j (c0 row j) and
  dst + R/2 + j (c1 row j), word index, the coefficient modulo 2^word_bits; malformed or misplaced
  packets are dropped (``received_dropped`` counts them).  If ``incoming`` runs out first the
  engine would wait: the model raises RuntimeError (the caller supplies whole messages).
- ``rubato.key a``: the key block of a (words 0 .. n-1 the key, n .. n+5 the nonce, the noise seed
  and the counter base as 32-bit halves, low first) into the Rubato registers (a key word is kept
  modulo 2^t_bits, a half modulo 2^32); a key word >= t or a half >= 2^32 records DATA_RANGE (the
  registers are still written).  The set is the shape's ``rubato_set`` (else the last
  ``cfg.rubato``'s, else Par-128S).
- ``rubato.stream dst, blocks=B, counter=C[, noise]``: dst words k*l .. k*l+l-1 <- block k of
  :func:`hhe_gen.models.rubato.keystream` (key, nonce, counter base + C + k mod 2^64, the noise
  seed with ``noise``), k < B; the other words of dst keep their values.
- ``rubato.enc dst, a, ...``: the same, each word plus word x of a at the same index: s = z + x'
  with x' = signed(x) (+ t when negative), minus t when s >= t, kept modulo 2^word_bits; = (z +
  signed(x)) mod t, the Rubato ciphertext of the scaled message, when |signed(x)| < t, else
  DATA_RANGE (the words are still written).
- ``cfg.prime``: binds the slot; ``cfg.scale``: only checked (it stores ``config["scale"]``);
  ``cfg.rubato`` / ``cfg.net.*`` store their immediate in ``config`` ("rubato", "net.ip",
  "net.ports", "net.segment", "net.message"; ``cfg.net.message`` also numbers the next packets
  from 0 again) - isa.check refuses them (NOT_BUILT) without their unit;
  ``fence`` / ``nop``: nothing; ``notify``: appends imm to ``events``.
- :meth:`EngineModel.soft_reset` clears the error, the position counter and every slot binding;
  memory, buffers, seed, configuration and events stay.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.isa import CKKS_UNITS, EngineShape, ErrorCause, Instruction, Opcode, SampleKind, Unit
from hhe_gen.models import ckks_fixed, rubato, sampler, wire
from hhe_gen.models.wire_in_order import InOrderReceiver
from hhe_gen.models.fft import FixedPointFormat
from hhe_gen.models.ntt import intt, ntt
from hhe_gen.models.rns_basis import CENTRE_KINDS, centre_threshold
from hhe_gen.params.checks import check_int, check_power_of_two
from hhe_gen.params.ckks import CKKSParams
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import rubato_params

__all__ = ["DEFAULT_FORMAT", "ADDRESS_BITS", "Step", "Packet", "EngineModel", "shape_for_params", "signed",
           "to_word"]

DEFAULT_FORMAT = isa.DEFAULT_FORMAT
"""The fixed-point slot format of the DNA-HHE codec (hhe_gen/apps/bench/fft.py)."""
ADDRESS_BITS = 32
_ADDRESS_MASK = (1 << ADDRESS_BITS) - 1
_MEMORY_MASK = (1 << 64) - 1


def signed(x: int, bits: int) -> int:
    """x (< 2^bits) read as a ``bits``-bit two's complement number."""
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def to_word(value: int, bits: int) -> int:
    """A signed value as a ``bits``-bit two's complement word."""
    return value & ((1 << bits) - 1)


def shape_for_params(params: CKKSParams, buffers: int = 16, slots: int | None = None,
                     units=CKKS_UNITS, fmt: FixedPointFormat | None = None) -> EngineShape:
    """The shape of an engine generated for ``params``: its primes built in (in order), its
    log_scale; ``slots`` defaults to min(len(Q), 8); with its codec's slot format ``fmt``, the
    signed encode's ``message_bound``."""
    if slots is None:
        slots = min(len(params.moduli), isa.MAX_SLOTS)
    bound = None if fmt is None else 1 << (fmt.width - 1 - fmt.frac_bits + params.log_scale)
    return EngineShape(buffers, slots, tuple(params.moduli), params.log_scale, frozenset(units), message_bound=bound,
                       n=params.n)


@dataclass(frozen=True)
class Step:
    """One instruction as the model saw it.

    Members
    -------
    position : int       index since the last soft reset
    word : int           the instruction word
    cause : ErrorCause   NONE, its own cause, DATA_RANGE, or AFTER_ERROR (dropped)
    reads, writes : frozenset[int]   buffers (and isa.SEED) per isa.reads_writes
    """
    position: int
    word: int
    cause: ErrorCause
    reads: frozenset
    writes: frozenset


@dataclass(frozen=True)
class Packet:
    """One UDP packet a ``send`` put on the network: its addressing and its payload (docs/wire.md)."""
    ip_address: int
    src_port: int
    dst_port: int
    payload: bytes


class EngineModel:
    """The engine's state and the reference execution of its instructions (module docstring).

    Parameters
    ----------
    shape : EngineShape     buffers, slots, built-in primes, log_scale, units
    n : int                 ring degree N (words per buffer), a power of two 8 .. 2^16
    fmt : FixedPointFormat  the codec's slot format (default 29 bits, 26 fraction bits)
    log_scale : int         the codec's log2(Delta) (default ``shape.log_scale``)
    sigma, bound_sigmas     the Gaussian sampler's parameters (default 3.2, 6)
    hamming_weight : int    h of the Hamming sampler (default N/2)
    word_bits : int         buffer word width (default: the widest built-in prime, at least
                            fmt.width and, with the Rubato unit, 32)
    decode_rows : set       the row counts ``decode`` accepts (default ``shape.decode_rows``; None:
                            any)
    max_segment : int       the network unit's packet size when ``net.segment`` is 0 (1 .. 180)

    Members
    -------
    shape, n, fmt, log_scale, sigma, bound_sigmas, hamming_weight, word_bits : as given
    memory : dict[int, int]           64-bit words by address
    buffers : list[list[int]]         B buffers of N words
    bound : dict[int, int]            prime slot -> prime
    seed : bytes                      32 bytes
    config : dict[str, int]           configuration registers
    events : list[int]                notify codes
    error : ErrorCause                the first error since the last soft reset (NONE if none)
    error_position : int | None       its instruction's position
    position : int                    instructions seen since the last soft reset
    trace : list[Step]                every instruction seen (kept across soft resets)
    packets : list[Packet]            every packet sent, in order
    incoming : list[bytes]            the payloads the UDP port delivers to ``recv`` (consumed)
    received_dropped : int            payloads ``recv`` dropped
    """

    def __init__(self, shape: EngineShape, n: int, *, fmt: FixedPointFormat = DEFAULT_FORMAT,
                 log_scale: int | None = None, sigma=3.2, bound_sigmas=6, hamming_weight: int | None = None,
                 word_bits: int | None = None, decode_rows=None, max_segment: int = isa.MAX_SEGMENT):
        if not isinstance(shape, EngineShape):
            raise ParameterError("shape", shape, "an hhe_gen.cores.engine.isa.EngineShape")
        self.n = check_power_of_two("N", n, 8, 1 << 16)
        if shape.n is None:
            shape = dataclasses.replace(shape, n=n)
        elif shape.n != n:
            raise ParameterError("n", n, f"the shape's N = {shape.n}")
        self.shape = shape
        self.max_segment = check_int("max_segment", max_segment, 1, isa.MAX_SEGMENT)
        if not isinstance(fmt, FixedPointFormat):
            raise ParameterError("fmt", fmt, "a hhe_gen.models.fft.FixedPointFormat")
        self.fmt = fmt
        self.log_scale = shape.log_scale if log_scale is None else log_scale
        self.sigma, self.bound_sigmas = sigma, bound_sigmas
        sampler.gaussian_bound(sigma, bound_sigmas)                 # validates both
        self.hamming_weight = check_int("hamming_weight", n // 2 if hamming_weight is None else hamming_weight,
                                        0, n, f"0 .. N = {n}")
        widest = max(q.bit_length() for q in shape.primes)
        low = max(widest, fmt.width, isa.RUBATO_HALF_BITS if Unit.RUBATO in shape.units else 0)
        self.word_bits = check_int("word_bits", low if word_bits is None else word_bits, low, 64,
                                   f"{low} .. 64 (the widest prime and the slot format must fit)")
        if Unit.CODEC in shape.units:
            ckks_fixed.check_codec_params(n, fmt, self.log_scale, shape.primes)
        if decode_rows is None:
            decode_rows = shape.decode_rows
        if decode_rows is not None:
            decode_rows = frozenset(decode_rows)
            if not decode_rows or not all(isinstance(r, int) and 1 <= r <= len(shape.primes) for r in decode_rows):
                raise ParameterError("decode_rows", decode_rows, f"row counts 1 .. {len(shape.primes)}")
        self.decode_rows = decode_rows
        self._mask = (1 << self.word_bits) - 1
        self.memory: dict[int, int] = {}
        self.buffers = [[0] * n for _ in range(shape.buffers)]
        self.seed = bytes(32)
        self.config: dict[str, int] = {}
        self.events: list[int] = []
        self.trace: list[Step] = []
        self.bound: dict[int, int] = {}
        self.error = ErrorCause.NONE
        self.error_position: int | None = None
        self.position = 0
        self.packets: list[Packet] = []
        self._sequence = 0
        self.incoming: list[bytes] = []
        self.received_dropped = 0
        self.rubato_registers: dict | None = None      # key, nonce, seed, counter (rubato.key)

    @classmethod
    def for_params(cls, params: CKKSParams, *, buffers: int = 16, slots: int | None = None,
                   units=CKKS_UNITS, fmt: FixedPointFormat = DEFAULT_FORMAT,
                   hamming_weight: int | None = None) -> "EngineModel":
        """The model of an engine generated for a CKKS parameter set: its primes, N, log_scale,
        Gaussian, and the secret's Hamming weight when the secret is a Hamming one."""
        if not isinstance(params, CKKSParams):
            raise ParameterError("params", params, "a hhe_gen.params.CKKSParams")
        if hamming_weight is None and params.secret.kind == "hamming":
            hamming_weight = params.secret.hamming_weight
        codec_fmt = fmt if Unit.CODEC in units else None            # the signed encode's bound
        return cls(shape_for_params(params, buffers, slots, units, fmt=codec_fmt), params.n, fmt=fmt,
                   log_scale=params.log_scale, sigma=params.error.sigma,
                   bound_sigmas=params.error.bound_sigmas, hamming_weight=hamming_weight)

    # -- control ---------------------------------------------------------------------------------
    def soft_reset(self) -> None:
        """Clear the error status, the position counter and every prime-slot binding."""
        self.error = ErrorCause.NONE
        self.error_position = None
        self.position = 0
        self.bound = {}

    def run(self, words) -> ErrorCause:
        """Execute the words in program order; returns the error status afterwards."""
        for word in words:
            self.step(word)
        return self.error

    def step(self, word: int) -> ErrorCause:
        """Execute one word; returns what happened to it (NONE, its cause, or AFTER_ERROR)."""
        ins = isa.decode(word)
        position = self.position
        self.position += 1
        if self.error != ErrorCause.NONE:
            cause = ErrorCause.AFTER_ERROR
        else:
            cause = isa.check(ins, self.shape, frozenset(self.bound))
            if cause == ErrorCause.NONE:
                cause = self._execute(ins)
            if cause != ErrorCause.NONE:
                self.error, self.error_position = cause, position
        reads, writes = isa.reads_writes(ins)
        self.trace.append(Step(position, word, cause, reads, writes))
        return cause

    # -- helpers ---------------------------------------------------------------------------------
    def _add(self, ins: Instruction):
        if isa.integer_add(ins):            # two's complement words, wrapping, no prime
            mask = (1 << self.word_bits) - 1
            self.buffers[ins.dst] = [(a + b) & mask for a, b in zip(self.buffers[ins.a], self.buffers[ins.b])]
        else:
            _pointwise(lambda a, b: a + b, "ab")(self, ins)

    def lift(self, x: int, q: int) -> int:
        """The word x as a word_bits-bit signed value, reduced mod q."""
        return signed(x, self.word_bits) % q

    def read(self, address: int, count: int) -> list[int]:
        """``count`` memory words from ``address`` (missing words read 0)."""
        return [self.memory.get((address + k) & _ADDRESS_MASK, 0) for k in range(count)]

    def _operand(self, ins: Instruction, name: str, bit: int, q: int) -> list[int]:
        words = self.buffers[getattr(ins, name)]
        if ins.flags >> bit & 1:
            return [self.lift(x, q) for x in words]
        return [x % q for x in words]

    def _prime(self, slot: int) -> int:
        return self.bound[slot]

    def _signed_words(self, values) -> list[int]:
        return [v & self._mask for v in values]

    # -- execution ---------------------------------------------------------------------------------
    def _execute(self, ins: Instruction) -> ErrorCause:
        return _EXECUTE[ins.opcode](self, ins) or ErrorCause.NONE

    def _nop(self, ins):
        return None

    def _notify(self, ins):
        self.events.append(ins.imm)

    def _cfg_prime(self, ins):
        self.bound[ins.slot] = self.shape.primes[ins.imm >> 27]

    def _load(self, ins):
        raw = self.read(ins.imm, self.n)
        self.buffers[ins.dst] = [w & self._mask for w in raw]
        if ins.flags & 1:
            q = self._prime(ins.slot)
            if any(w >= q for w in raw):
                return ErrorCause.DATA_RANGE

    def _store(self, ins):
        for k, x in enumerate(self.buffers[ins.a]):
            self.memory[(ins.imm + k) & _ADDRESS_MASK] = x & _MEMORY_MASK

    def _ldseed(self, ins):
        self.seed = b"".join(w.to_bytes(8, "little") for w in self.read(ins.imm, 4))

    def _sample(self, ins):
        xof = sampler.seeded_xof(self.seed, ins.imm >> 24, ins.imm & 0xFFFFFF)
        kind = SampleKind(ins.flags)
        if kind == SampleKind.UNIFORM:
            values = sampler.uniform_mod_q(xof, self._prime(ins.slot), self.n)
        elif kind == SampleKind.TERNARY:
            values = sampler.ternary_uniform(xof, self.n)
        elif kind == SampleKind.HAMMING:
            values = sampler.ternary_hamming(xof, self.n, self.hamming_weight)
        else:
            values = sampler.gaussian_cdt(xof, self.n, self.sigma, self.bound_sigmas)
        self.buffers[ins.dst] = self._signed_words(values)

    def _ntt(self, ins):
        q = self._prime(ins.slot)
        self.buffers[ins.dst] = ntt(self._operand(ins, "a", 0, q), q)

    def _intt(self, ins):
        q = self._prime(ins.slot)
        self.buffers[ins.dst] = intt([x % q for x in self.buffers[ins.a]], q)

    def _move(self, ins):
        if ins.flags & 1:
            q = self._prime(ins.slot)
            self.buffers[ins.dst] = [self.lift(x, q) for x in self.buffers[ins.a]]
        else:
            self.buffers[ins.dst] = list(self.buffers[ins.a])

    def _conv(self, ins):
        q_src, q_dst = self._prime(ins.slot), self._prime(isa.conv_target(ins))
        threshold = centre_threshold(q_src, CENTRE_KINDS[ins.flags])
        self.buffers[ins.dst] = [(x - q_src if x >= threshold else x) % q_dst
                                 for x in (w % q_src for w in self.buffers[ins.a])]

    def _moduli(self, ins) -> list[int]:
        return [self._prime(s) for s in range(ins.slot, ins.slot + ins.rows)]

    def _encode(self, ins):
        half, width = self.n // 2, self.fmt.width
        words = self.buffers[ins.a]
        slots = [(signed(words[k], width), signed(words[k + half], width)) for k in range(half)]
        if ins.flags & 1:                 # signed: the integers themselves (|m| < every prime)
            ckks_fixed.check_codec_params(self.n, self.fmt, self.log_scale, self._moduli(ins))
            rows = [[to_word(c, self.word_bits) for c in ckks_fixed.encode_integers(slots, self.fmt, self.log_scale)]]
        else:
            rows = ckks_fixed.encode_fixed(slots, self.fmt, self.log_scale, self._moduli(ins))
        for j, row in enumerate(rows):
            self.buffers[ins.dst + j] = row

    def _decode(self, ins):
        if self.decode_rows is not None and (
                ins.rows not in self.decode_rows
                or [self.bound[s] for s in range(ins.slot, ins.slot + ins.rows)] != list(self.shape.primes[:ins.rows])):
            return ErrorCause.DATA_RANGE          # a decoder built for other rows / bindings refuses it
        moduli = self._moduli(ins)
        rows = [[x % q for x in self.buffers[ins.a + j]] for j, q in enumerate(moduli)]
        pairs = ckks_fixed.decode_fixed(rows, moduli, self.fmt, self.log_scale)
        self.buffers[ins.dst] = self._signed_words([p[0] for p in pairs] + [p[1] for p in pairs])


    def _rubato_params(self):
        index = self.shape.rubato_set if self.shape.rubato_set is not None else self.config.get("rubato", 3)
        return rubato_params(isa.RUBATO_SET_IDS[index])

    def _rubato_key(self, ins):
        p = self._rubato_params()
        words = self.buffers[ins.a][:p.n + isa.RUBATO_KEY_EXTRA]
        key, halves = words[:p.n], words[p.n:]
        value = [lo & 0xFFFFFFFF | (hi & 0xFFFFFFFF) << 32 for lo, hi in zip(halves[::2], halves[1::2])]
        self.rubato_registers = {"key": [w & ((1 << p.q_bits) - 1) for w in key], "nonce": value[0],
                                 "seed": value[1], "counter": value[2]}
        if any(w >= p.q for w in key) or any(h >> 32 for h in halves):
            return ErrorCause.DATA_RANGE
        return None

    def _rubato_blocks(self, ins, message: bool):
        p = self._rubato_params()
        regs = self.rubato_registers or {"key": [0] * p.n, "nonce": 0, "seed": 0, "counter": 0}
        blocks, offset = isa.rubato_blocks(ins.imm)
        out = list(self.buffers[ins.dst])
        source = self.buffers[ins.a]
        bad = False
        for k in range(blocks):
            counter = (regs["counter"] + offset + k) % (1 << 64)
            z = rubato.keystream(p, regs["key"], regs["nonce"], counter,
                                 noise_seed=regs["seed"] if ins.flags & 1 else None)
            for i, word in enumerate(z):
                at = k * p.l + i
                if message:
                    x = signed(source[at], self.word_bits)
                    bad |= not -p.q < x < p.q
                    s = word + (x + p.q if x < 0 else x)
                    word = (s - p.q if s >= p.q else s) & self._mask
                out[at] = word
        self.buffers[ins.dst] = out
        return ErrorCause.DATA_RANGE if bad else None

    def _recv(self, ins):
        half = ins.rows // 2
        rx = InOrderReceiver(half, self.n)
        rows = [list(self.buffers[ins.dst + j]) for j in range(2 * half)]
        while rx.messages == 0:
            if not self.incoming:
                raise RuntimeError("recv: the incoming packets end before a whole message")
            payload = self.incoming.pop(0)
            writes = rx.feed(payload)
            self.received_dropped += not writes
            for kind, row, index, value in writes:
                rows[kind * half + row][index] = value & self._mask
        for j, row in enumerate(rows):
            self.buffers[ins.dst + j] = row

    def _cfg_net_message(self, ins):
        self.config["net.message"] = ins.imm
        self._sequence = 0

    def _send(self, ins):
        rows, kind, ntt_form, total_rows, words = isa.send_fields(ins.imm)
        words = words or self.n
        kind = wire.Kind(kind)
        segment = self.config.get("net.segment", 0) or self.max_segment
        ckks = kind in (wire.Kind.CKKS_C0, wire.Kind.CKKS_C1)
        payloads = wire.polynomial_packets(
            kind, self.config.get("net.message", 0), [self.buffers[ins.a + j][:words] for j in range(rows)],
            segment=segment, log_scale=self.log_scale if ckks else 0, ntt=ntt_form,
            first_sequence=self._sequence, first_row=ins.slot, total_rows=total_rows)
        self._sequence += len(payloads)
        ports = self.config.get("net.ports", 0)
        self.packets += [Packet(self.config.get("net.ip", 0), ports >> 16, ports & 0xFFFF, p) for p in payloads]


def _config_register(name):
    def store(model: EngineModel, ins: Instruction):
        model.config[name] = ins.imm
    return store


def _pointwise(combine, sources):
    def run(model: EngineModel, ins: Instruction):
        q = model._prime(ins.slot)
        operands = [model._operand(ins, name, bit, q) for bit, name in enumerate(sources)]
        model.buffers[ins.dst] = [combine(*xs) % q for xs in zip(*operands)]
    return run


_EXECUTE = {
    Opcode.NOP: EngineModel._nop,
    Opcode.FENCE: EngineModel._nop,
    Opcode.NOTIFY: EngineModel._notify,
    Opcode.CFG_PRIME: EngineModel._cfg_prime,
    Opcode.CFG_SCALE: _config_register("scale"),
    Opcode.CFG_RUBATO: _config_register("rubato"),
    Opcode.CFG_NET_IP: _config_register("net.ip"),
    Opcode.CFG_NET_PORTS: _config_register("net.ports"),
    Opcode.CFG_NET_SEGMENT: _config_register("net.segment"),
    Opcode.CFG_NET_MESSAGE: EngineModel._cfg_net_message,
    Opcode.LOAD: EngineModel._load,
    Opcode.STORE: EngineModel._store,
    Opcode.LDSEED: EngineModel._ldseed,
    Opcode.SAMPLE: EngineModel._sample,
    Opcode.NTT: EngineModel._ntt,
    Opcode.INTT: EngineModel._intt,
    Opcode.ADD: EngineModel._add,
    Opcode.SUB: _pointwise(lambda a, b: a - b, "ab"),
    Opcode.MUL: _pointwise(lambda a, b: a * b, "ab"),
    Opcode.MAC: _pointwise(lambda a, b, c: a * b + c, "abc"),
    Opcode.MSUB: _pointwise(lambda a, b, c: c - a * b, "abc"),
    Opcode.MOVE: EngineModel._move,
    Opcode.CONV: EngineModel._conv,
    Opcode.ENCODE: EngineModel._encode,
    Opcode.DECODE: EngineModel._decode,
    Opcode.SEND: EngineModel._send,
    Opcode.RECV: EngineModel._recv,
    Opcode.RUBATO_KEY: EngineModel._rubato_key,
    Opcode.RUBATO_STREAM: lambda model, ins: model._rubato_blocks(ins, message=False),
    Opcode.RUBATO_ENC: lambda model, ins: model._rubato_blocks(ins, message=True),
}
assert set(_EXECUTE) == set(isa.OPCODES)
