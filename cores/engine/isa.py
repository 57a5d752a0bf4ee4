"""The engine's instruction set: one 64-bit word per instruction, written down once here.

Every other part of the engine reads this module: the assembler and disassembler
(:mod:`hhe_gen.engine.asm`), the ISA-level golden model (:mod:`hhe_gen.engine.model`), the RTL
decoder and task manager (:mod:`hhe_gen.cores.engine`) and the documentation (docs/isa.md, whose
tables are generated from :data:`OPCODES` and :data:`FIELDS` and checked against them).

Machine state the instructions name
-----------------------------------
- **buffers** ``b0 .. b{B-1}``: on-chip polynomial buffers of N words of ``word_bits`` bits
  (``word_bits`` = the bit length of the largest prime, at least the slot format's width).  A
  buffer holds one residue polynomial (coefficients, or NTT values in Lattigo's bit-reversed
  order), small signed samples (two's complement in ``word_bits``), or N/2 complex slots (the real
  parts at words 0 .. N/2-1, the imaginary parts at N/2 .. N-1, two's complement).
- **prime slots** ``s0 .. s{S-1}``: bound by ``cfg.prime`` to one of the primes the accelerator was
  generated for (its reducer constants and twiddles are built in); a functional instruction that
  names an unbound slot is malformed.
- **seed register**: 32 secret bytes, written by ``ldseed`` from memory, read only by ``sample``.
- **memory port**: 64-bit words at word addresses 0 .. 2^32-1; ``load`` / ``store`` move N words.

Encoding (bit 63 is the most significant)::

    63     58 57  53 52  48 47  43 42  38 37 35 34  32 31                      0
    | opcode | dst  |  a   |  b   |  c   | slot| flags|          imm           |

Every field an instruction does not use must be zero (a non-zero unused field is malformed, so
that later extensions cannot be misread by older engines).  ``flags`` are per-opcode: for
``ntt`` / ``add`` / ``sub`` / ``mul`` / ``mac`` / ``msub`` / ``move`` bit k = "source k (a, b, c)
holds small signed values: lift them modulo the slot's prime on read"; for ``sample`` the
distribution (:class:`SampleKind`); for ``load`` bit 0 = "check every word < q_slot"; for ``encode``
bit 0 = "signed": the rounded integer coefficients themselves, two's complement in ``word_bits``,
into one buffer (rows = 1), for programs that lift them to each prime on read (``lift=``); for
``add`` bit 2 (alone) = "integer": a + b of the words as word_bits two's complement integers,
wrapping, with no prime (the slot is not used), so that small signed polynomials (a message and
its noise) are added once for every prime that lifts the sum; for ``rubato.stream`` /
``rubato.enc`` bit 0 = "with noise" (z + e mod t); for ``conv`` the centring (:class:`ConvKind`).

Scheduling classes
------------------
Functional instructions run on a unit (:class:`Unit`) and are dispatched out of order when the
scoreboard allows (no read-after-write, write-after-read or write-after-write hazard on a buffer
with an earlier unfinished instruction); configuration instructions, ``fence`` and ``notify`` are
*serialising*: they wait until every earlier instruction has completed and nothing after them
starts before they are done.

Error causes
------------
A malformed instruction is dropped, the engine records the first error's cause
(:class:`ErrorCause`) and position (the instruction's index since the last soft reset) and goes on
accepting instructions, which it also drops until a soft reset (so a broken program never
half-runs after its error).  Nothing hangs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from hhe_gen.models.fft import FixedPointFormat
from hhe_gen.models.wire import MAX_COUNT, Kind
from hhe_gen.params.checks import check_int, is_int
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import rubato_params

__all__ = [
    "WORD_BITS", "DEFAULT_FORMAT", "OPCODE_BITS", "BUFFER_BITS", "SLOT_BITS", "FLAG_BITS", "IMM_BITS",
    "MAX_BUFFERS", "MAX_SLOTS", "CKKS_UNITS", "SEED", "RUBATO_REGISTERS", "NETWORK_REGISTERS", "REGISTERS",
    "resource_count", "register_bits",
    "SERIALISING", "Field", "FIELDS", "Unit", "Opcode", "OpcodeInfo", "OPCODES",
    "SampleKind", "ErrorCause", "Instruction", "EngineShape", "encode", "decode", "check",
    "reads_writes", "by_mnemonic", "INTEGER_ADD", "integer_add", "ROW_OPCODES", "MAX_SEGMENT", "SEND_KINDS",
    "send_fields", "RUBATO_SET_IDS", "RUBATO_KEY_EXTRA", "RUBATO_HALF_BITS", "rubato_blocks",
    "ConvKind", "conv_target", "SERVER_UNITS",
]

WORD_BITS = 64
DEFAULT_FORMAT = FixedPointFormat(29, 26)
"""The slot format of ``encode`` / ``decode`` unless an engine is built with another (DNA-HHE's 29-bit
fixed point with 26 fraction bits)."""
OPCODE_BITS, BUFFER_BITS, SLOT_BITS, FLAG_BITS, IMM_BITS = 6, 5, 3, 3, 32
MAX_BUFFERS = 1 << BUFFER_BITS
MAX_SLOTS = 1 << SLOT_BITS


@dataclass(frozen=True)
class Field:
    """One bit field of the instruction word: bits ``low .. low + width - 1``."""
    name: str
    low: int
    width: int
    meaning: str

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def get(self, word: int) -> int:
        return (word >> self.low) & self.mask

    def put(self, value: int) -> int:
        return (value & self.mask) << self.low


FIELDS = (
    Field("opcode", 58, OPCODE_BITS, "operation (table of opcodes)"),
    Field("dst", 53, BUFFER_BITS, "destination buffer"),
    Field("a", 48, BUFFER_BITS, "first source buffer"),
    Field("b", 43, BUFFER_BITS, "second source buffer"),
    Field("c", 38, BUFFER_BITS, "third source buffer"),
    Field("slot", 35, SLOT_BITS, "prime slot"),
    Field("flags", 32, FLAG_BITS, "per-opcode flags (lift bits, sample kind, load check)"),
    Field("imm", 0, IMM_BITS, "immediate: memory word address, sample domain/nonce, code, value"),
)
FIELD = {f.name: f for f in FIELDS}
assert sum(f.width for f in FIELDS) == WORD_BITS


class Unit(IntEnum):
    """The unit a functional instruction runs on (``NONE``: serialising, runs in the manager)."""
    NONE = 0
    MEMORY = 1       # load / store / ldseed over the memory port
    SAMPLER = 2      # XOF + samplers
    NTT = 3          # NTT / INTT
    POINTWISE = 4    # butterfly lanes: add / sub / mul / mac / msub / move
    CODEC = 5        # encoder / decoder (special FFT)
    NETWORK = 6      # packetizer / depacketizer (dual-mode and network issue)
    RUBATO = 7       # Rubato keystream (dual-mode and network issue)
    BASIS = 8        # basis conversion of one prime into another (server-side CKKS)


CKKS_UNITS = frozenset({Unit.MEMORY, Unit.SAMPLER, Unit.NTT, Unit.POINTWISE, Unit.CODEC})
SERVER_UNITS = frozenset({Unit.MEMORY, Unit.NTT, Unit.POINTWISE, Unit.BASIS})
"""The units the server-side programs (multiplication, relinearisation, rescale) need."""
SEED = MAX_BUFFERS
"""The scoreboard's resource index of the seed register (buffers are 0 .. MAX_BUFFERS-1)."""
RUBATO_REGISTERS = MAX_BUFFERS + 1
"""The scoreboard's resource index of the Rubato unit's key registers (``rubato.key`` writes them,
``rubato.stream`` / ``rubato.enc`` read them)."""
NETWORK_REGISTERS = MAX_BUFFERS + 2
"""The scoreboard's resource index of the network unit's packet numbering (every ``send`` writes it,
so the packets leave in program order, numbered as the ISA model numbers them)."""
REGISTERS = {"seed": SEED, "rubato": RUBATO_REGISTERS, "net": NETWORK_REGISTERS}
"""The operand names of registers (not buffers) in :class:`OpcodeInfo` reads / writes."""


class SampleKind(IntEnum):
    """``flags`` of ``sample``: the distribution (:mod:`hhe_gen.models.sampler`)."""
    UNIFORM = 0      # uniform mod q_slot (rejection); needs a bound slot
    TERNARY = 1      # uniform in {-1, 0, 1}
    HAMMING = 2      # ternary with the fixed Hamming weight the accelerator was built with
    GAUSSIAN = 3     # discrete Gaussian (CDT) with the accelerator's sigma and bound


class ConvKind(IntEnum):
    """``flags`` of ``conv``: how the source residue x mod q_src is centred before it is reduced
    modulo q_dst (:data:`hhe_gen.models.rns_basis.CENTRE_KINDS`, Lattigo's single-prime cases)."""
    DIGIT = 0        # a gadget digit: x - q_src when x >= floor(q_src / 2)
    ROUND = 1        # rescale's rounding: x - q_src when x > (q_src - 1) / 2
    EXTEND = 2       # ModDown's extension of one P prime, with Lattigo's double-precision estimate


class ErrorCause(IntEnum):
    """Why an instruction was refused (the error status register's ``cause`` field)."""
    NONE = 0
    UNKNOWN_OPCODE = 1      # opcode not in the table
    BUFFER_RANGE = 2        # a buffer index >= the number of buffers (or a row range past it)
    SLOT_RANGE = 3          # a prime slot >= the number of slots (or a row range past it)
    SLOT_UNBOUND = 4        # a prime slot never bound by cfg.prime since the last soft reset
    NONZERO_UNUSED = 5      # a field this opcode does not use is not zero
    BAD_IMMEDIATE = 6       # immediate out of range (prime id, rows, sample kind, scale, ...)
    PRIME_MISMATCH = 7      # cfg.prime's check value differs from the built-in prime's low bits
    NOT_BUILT = 8           # the accelerator was generated without this unit or mode
    AFTER_ERROR = 9         # not an instruction's own fault: dropped because an earlier one failed
    DATA_RANGE = 10         # at run time: a checked load met a word >= q (the load still completes)


@dataclass(frozen=True)
class OpcodeInfo:
    """One row of the opcode table.

    ``uses`` names the fields the instruction reads (others must be zero); ``reads`` / ``writes``
    name its buffer operands (``dst``, ``a``, ``b``, ``c``; a ``+rows`` suffix means the operand
    spans ``rows`` consecutive buffers, rows from the immediate; ``seed`` is the seed register);
    ``requires`` is the unit that must be built for the instruction to be accepted.
    """
    mnemonic: str
    code: int
    unit: Unit
    uses: tuple[str, ...]
    reads: tuple[str, ...]
    writes: tuple[str, ...]
    needs_slot: bool
    summary: str
    requires: Unit = Unit.NONE


class Opcode(IntEnum):
    NOP = 0x00
    FENCE = 0x01
    NOTIFY = 0x02
    CFG_PRIME = 0x08
    CFG_SCALE = 0x09
    CFG_RUBATO = 0x0A
    CFG_NET_IP = 0x0B
    CFG_NET_PORTS = 0x0C
    CFG_NET_SEGMENT = 0x0D
    CFG_NET_MESSAGE = 0x0E
    LOAD = 0x10
    STORE = 0x11
    LDSEED = 0x12
    SAMPLE = 0x18
    NTT = 0x20
    INTT = 0x21
    ADD = 0x28
    SUB = 0x29
    MUL = 0x2A
    MAC = 0x2B
    MSUB = 0x2C
    MOVE = 0x2D
    CONV = 0x2E
    ENCODE = 0x30
    DECODE = 0x31
    SEND = 0x38
    RUBATO_KEY = 0x39
    RUBATO_STREAM = 0x3A
    RUBATO_ENC = 0x3B
    RECV = 0x3C


def _op(code, mnemonic, unit, uses, reads, writes, needs_slot, summary, requires=None):
    return OpcodeInfo(mnemonic, int(code), unit, tuple(uses), tuple(reads), tuple(writes),
                      needs_slot, summary, unit if requires is None else requires)


_PW = ("dst", "a", "b", "slot", "flags")
OPCODES: dict[int, OpcodeInfo] = {info.code: info for info in (
    _op(Opcode.NOP, "nop", Unit.NONE, (), (), (), False, "does nothing (not serialising)"),
    _op(Opcode.FENCE, "fence", Unit.NONE, (), (), (), False,
        "waits until every earlier instruction has completed"),
    _op(Opcode.NOTIFY, "notify", Unit.NONE, ("imm",), (), (), False,
        "after every earlier instruction: raises the notify event with code imm[15:0]"),
    _op(Opcode.CFG_PRIME, "cfg.prime", Unit.NONE, ("slot", "imm"), (), (), False,
        "binds slot to built-in prime imm[31:27] if imm[26:0] = q mod 2^27 (else PRIME_MISMATCH)"),
    _op(Opcode.CFG_SCALE, "cfg.scale", Unit.NONE, ("imm",), (), (), False,
        "Delta = 2^imm[7:0] for encode / decode (must be a scale the codec was built for)"),
    _op(Opcode.CFG_RUBATO, "cfg.rubato", Unit.NONE, ("imm",), (), (), False,
        "Rubato parameter set imm (0 .. 5: 80S, 80M, 80L, 128S, 128M, 128L; the one built)", Unit.RUBATO),
    _op(Opcode.CFG_NET_IP, "cfg.net.ip", Unit.NONE, ("imm",), (), (), False,
        "destination IPv4 address of outgoing packets", Unit.NETWORK),
    _op(Opcode.CFG_NET_PORTS, "cfg.net.ports", Unit.NONE, ("imm",), (), (), False,
        "UDP source port imm[31:16], destination port imm[15:0]", Unit.NETWORK),
    _op(Opcode.CFG_NET_SEGMENT, "cfg.net.segment", Unit.NONE, ("imm",), (), (), False,
        "coefficients per packet imm, 0 .. 180 (0: the network unit's largest)", Unit.NETWORK),
    _op(Opcode.CFG_NET_MESSAGE, "cfg.net.message", Unit.NONE, ("imm",), (), (), False,
        "message id imm of the packets sent next; their sequence numbers start again at 0", Unit.NETWORK),
    _op(Opcode.LOAD, "load", Unit.MEMORY, ("dst", "slot", "flags", "imm"), (), ("dst",), False,
        "dst <- N words from memory address imm (flags bit 0: check each word < q_slot)"),
    _op(Opcode.STORE, "store", Unit.MEMORY, ("a", "imm"), ("a",), (), False,
        "N words of a -> memory address imm"),
    _op(Opcode.LDSEED, "ldseed", Unit.MEMORY, ("imm",), (), ("seed",), False,
        "seed register <- 4 words (32 bytes, little-endian) from memory address imm"),
    _op(Opcode.SAMPLE, "sample", Unit.SAMPLER, ("dst", "slot", "flags", "imm"), ("seed",), ("dst",), False,
        "dst <- N samples of kind flags from SHAKE256(seed || imm[31:24] || imm[23:0] as u64le)"),
    _op(Opcode.NTT, "ntt", Unit.NTT, ("dst", "a", "slot", "flags"), ("a",), ("dst",), True,
        "dst <- NTT_q(a): natural order in, bit-reversed out"),
    _op(Opcode.INTT, "intt", Unit.NTT, ("dst", "a", "slot"), ("a",), ("dst",), True,
        "dst <- INTT_q(a): bit-reversed in, natural out, N^-1 folded in"),
    _op(Opcode.ADD, "add", Unit.POINTWISE, _PW, ("a", "b"), ("dst",), True,
        "dst <- a + b mod q (flags bit 2, integer: a + b as word_bits two's complement, no prime)"),
    _op(Opcode.SUB, "sub", Unit.POINTWISE, _PW, ("a", "b"), ("dst",), True, "dst <- a - b mod q"),
    _op(Opcode.MUL, "mul", Unit.POINTWISE, _PW, ("a", "b"), ("dst",), True, "dst <- a * b mod q"),
    _op(Opcode.MAC, "mac", Unit.POINTWISE, _PW[:3] + ("c",) + _PW[3:], ("a", "b", "c"), ("dst",), True,
        "dst <- a * b + c mod q"),
    _op(Opcode.MSUB, "msub", Unit.POINTWISE, _PW[:3] + ("c",) + _PW[3:], ("a", "b", "c"), ("dst",),
        True, "dst <- c - a * b mod q"),
    _op(Opcode.MOVE, "move", Unit.POINTWISE, ("dst", "a", "slot", "flags"), ("a",), ("dst",), False,
        "dst <- a (flags bit 0: lift a modulo q_slot on the way)"),
    _op(Opcode.CONV, "conv", Unit.BASIS, ("dst", "a", "slot", "flags", "imm"), ("a",), ("dst",), True,
        "dst <- centred(a mod q_slot) mod q_to: kind flags (digit, round, extend), destination slot imm[2:0]"),
    _op(Opcode.ENCODE, "encode", Unit.CODEC, ("dst", "a", "slot", "flags", "imm"), ("a",), ("dst+rows",), True,
        "dst .. dst+rows-1 <- residues of round(Delta * IFFT(slots in a)) mod q_slot .. q_slot+rows-1 "
        "(flags bit 0, rows = 1: dst <- the signed integers themselves)"),
    _op(Opcode.DECODE, "decode", Unit.CODEC, ("dst", "a", "slot", "imm"), ("a+rows",), ("dst",), True,
        "dst <- slots of FFT(CRT-centred a .. a+rows-1 over q_slot .. q_slot+rows-1) / Delta"),
    _op(Opcode.SEND, "send", Unit.NETWORK, ("a", "slot", "imm"), ("a+rows",), ("net",), False,
        "packets of a .. a+rows-1 (rows imm[3:0]) as rows slot .. slot+rows-1 of a polynomial of T rows "
        "(imm[11:8], 0: rows) and kind imm[6:4] (imm[7]: NTT form), words 0 .. W-1 of each "
        "(W = imm[31:16], 0: N)"),
    _op(Opcode.RECV, "recv", Unit.NETWORK, ("dst", "imm"), (), ("dst+rows", "net"), False,
        "dst .. dst+rows-1 <- the next CKKS ciphertext arriving on the UDP port: c0 rows 0 .. rows/2-1, then "
        "c1 rows (rows imm[3:0] even), N words each, packets taken in order"),
    _op(Opcode.RUBATO_KEY, "rubato.key", Unit.RUBATO, ("a",), ("a",), ("rubato",), False,
        "Rubato key block from a: key words 0 .. n-1 (each < t), nonce n, n+1, noise seed n+2, n+3, counter "
        "base n+4, n+5 (32-bit halves, low first) into write-only registers"),
    _op(Opcode.RUBATO_STREAM, "rubato.stream", Unit.RUBATO, ("dst", "flags", "imm"), ("rubato",), ("dst",), False,
        "dst words k*l .. k*l+l-1 <- keystream block k < B = imm[31:24] at counter base + imm[23:0] + k "
        "(flags bit 0: with noise, z + e mod t)"),
    _op(Opcode.RUBATO_ENC, "rubato.enc", Unit.RUBATO, ("dst", "a", "flags", "imm"), ("a", "rubato"), ("dst",), False,
        "as rubato.stream, plus word k*l+i of a (round(Delta*m) as a signed word, |x| < t) mod t: "
        "the Rubato ciphertext"),
)}
_BY_MNEMONIC = {info.mnemonic: info for info in OPCODES.values()}
SERIALISING = frozenset(c for c, info in OPCODES.items() if info.unit == Unit.NONE and c != Opcode.NOP)
ROW_OPCODES = frozenset({Opcode.ENCODE, Opcode.DECODE, Opcode.SEND, Opcode.RECV})
"""The opcodes whose imm[3:0] is a row count (1 .. 15) spanning consecutive buffers."""
MAX_SEGMENT = MAX_COUNT
"""The most coefficients of one packet (``cfg.net.segment``), 180: 1472 payload bytes with the
header and the CRC-32 trailer, docs/wire.md."""
SEND_KINDS = range(min(Kind), max(Kind) + 1)
"""``send``'s packet kinds, imm[6:4] (:class:`hhe_gen.models.wire.Kind`: c0, c1, Rubato, slots)."""


def send_fields(imm: int) -> tuple[int, int, bool, int, int]:
    """``send``'s immediate: (rows imm[3:0], kind imm[6:4], NTT form imm[7], the polynomial's rows T
    imm[11:8] (0 given as rows), words imm[31:16])."""
    rows = imm & 0xF
    return rows, (imm >> 4) & 0x7, bool(imm >> 7 & 1), (imm >> 8 & 0xF) or rows, imm >> 16


@dataclass(frozen=True)
class Instruction:
    """One decoded instruction (fields as in :data:`FIELDS`; the meaning is the opcode's)."""
    opcode: int
    dst: int = 0
    a: int = 0
    b: int = 0
    c: int = 0
    slot: int = 0
    flags: int = 0
    imm: int = 0

    @property
    def info(self) -> OpcodeInfo | None:
        return OPCODES.get(self.opcode)

    @property
    def rows(self) -> int:
        """Rows of ``encode`` / ``decode`` / ``send`` / ``recv`` (imm[3:0], 1 .. 15); 1 for every other
        opcode."""
        return self.imm & 0xF if self.opcode in ROW_OPCODES else 1


def encode(ins: Instruction) -> int:
    """The 64-bit word of an instruction; raises ParameterError if a field does not fit."""
    word = 0
    for f in FIELDS:
        value = getattr(ins, f.name)
        check_int(f.name, value, 0, f.mask, f"an integer 0 .. {f.mask} ({f.width}-bit field)")
        word |= f.put(value)
    return word


def decode(word: int) -> Instruction:
    """The fields of a 64-bit word (any word decodes; :func:`check` says if it is well formed)."""
    check_int("word", word, 0, (1 << WORD_BITS) - 1, "a 64-bit instruction word")
    return Instruction(**{f.name: f.get(word) for f in FIELDS})


@dataclass(frozen=True)
class EngineShape:
    """What a program may name: the sizes an engine was generated with.

    Parameters
    ----------
    buffers : int       number of polynomial buffers B, 1 .. 32
    slots : int         number of prime slots S, 1 .. 8
    primes : tuple      the built-in primes (``cfg.prime`` selects one by index, at most 32)
    log_scale : int     the codec's log2(Delta) (``cfg.scale`` must name it)
    units : frozenset   the units built (default: the CKKS units)
    decode_rows : frozenset | None   the row counts the codec's ``decode`` was built for (over
                        prefixes of the built-in primes; None: any); the programs decode within them
    message_bound : int | None   the largest magnitude of a signed ``encode``'s integers,
                        2^(W-1-F+log_scale) for the codec's slot format (None: unknown); the
                        programs add the noise to the message once when the sum stays a signed
                        word below every prime (:func:`hhe_gen.engine.programs.noise_added_once`)
    n : int | None      N, words per buffer (None: unknown; ``send``'s word count is then not
                        checked against it)
    rubato_set : int | None   the Rubato parameter set built (an index of :data:`RUBATO_SET_IDS`;
                        None: unknown, any is accepted)
    """
    buffers: int
    slots: int
    primes: tuple[int, ...]
    log_scale: int = 0
    units: frozenset = CKKS_UNITS
    decode_rows: frozenset | None = None
    message_bound: int | None = None
    n: int | None = None
    rubato_set: int | None = None

    def __post_init__(self):
        check_int("buffers", self.buffers, 1, MAX_BUFFERS)
        check_int("slots", self.slots, 1, MAX_SLOTS)
        if not isinstance(self.primes, tuple) or not 1 <= len(self.primes) <= 32:
            raise ParameterError("primes", self.primes, "a tuple of 1 .. 32 built-in primes")
        check_int("log_scale", self.log_scale, 0, 255, "an integer 0 .. 255 (cfg.scale's 8-bit immediate)")
        if not isinstance(self.units, frozenset) or not all(isinstance(u, Unit) and u != Unit.NONE
                                                            for u in self.units):
            raise ParameterError("units", self.units, "a frozenset of isa.Unit members other than NONE")
        if self.decode_rows is not None and (
                not isinstance(self.decode_rows, frozenset) or not self.decode_rows
                or not all(is_int(r) and 1 <= r <= len(self.primes) for r in self.decode_rows)):
            raise ParameterError("decode_rows", self.decode_rows,
                                 f"None or a non-empty frozenset of row counts 1 .. {len(self.primes)}")
        if self.message_bound is not None:
            check_int("message_bound", self.message_bound, 1, 1 << 64)
        if self.n is not None:
            check_int("n", self.n, 8, 1 << 16)
        if self.rubato_set is not None:
            check_int("rubato_set", self.rubato_set, 0, len(RUBATO_SET_IDS) - 1,
                      "an index of isa.RUBATO_SET_IDS (0 .. 5)")


def _operand_span(ins: Instruction, operand: str) -> tuple[str, int]:
    name, _, rows = operand.partition("+")
    return name, (ins.rows if rows else 1)


def resource_count(shape: EngineShape) -> int:
    """Bits of the scoreboard's read / write masks on an engine of ``shape``: B buffers, the seed
    (bit B), with the Rubato unit its key registers (bit B + 1), with the network unit its packet
    numbering (bit B + 2)."""
    if Unit.NETWORK in shape.units:
        return shape.buffers + 3
    return shape.buffers + 1 + (Unit.RUBATO in shape.units)


def register_bits(shape: EngineShape) -> dict[str, int]:
    """The mask bit of each register operand an engine of ``shape`` has (see :func:`resource_count`)."""
    bits = {"seed": shape.buffers, "rubato": shape.buffers + 1, "net": shape.buffers + 2}
    return {name: bit for name, bit in bits.items() if bit < resource_count(shape)}


def reads_writes(ins: Instruction) -> tuple[frozenset[int], frozenset[int]]:
    """The buffers an instruction reads and writes (what the scoreboard compares)."""
    info = ins.info
    if info is None:
        return frozenset(), frozenset()
    out = []
    for operands in (info.reads, info.writes):
        found = set()
        for operand in operands:
            if operand in REGISTERS:
                found.add(REGISTERS[operand])
                continue
            name, rows = _operand_span(ins, operand)
            base = getattr(ins, name)
            found.update(range(base, base + rows))
        out.append(frozenset(found))
    return out[0], out[1]


def check(ins: Instruction, shape: EngineShape, bound: set[int] | frozenset[int]) -> ErrorCause:
    """Why ``ins`` is malformed on an engine of ``shape`` with prime slots ``bound`` bound, or
    ``ErrorCause.NONE``.  The RTL decoder implements the same rules in the same order."""
    info = ins.info
    if info is None:
        return ErrorCause.UNKNOWN_OPCODE
    for f in FIELDS[1:]:
        if f.name not in info.uses and getattr(ins, f.name):
            return ErrorCause.NONZERO_UNUSED
    if info.requires != Unit.NONE and info.requires not in shape.units:
        return ErrorCause.NOT_BUILT
    rows = ins.rows
    if ins.opcode in (Opcode.ENCODE, Opcode.DECODE) and (ins.imm >> 4 or rows == 0):
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.SEND and _bad_send(ins.slot, ins.imm, shape.n):
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.RECV and (ins.imm >> 4 or rows == 0 or rows % 2):
        return ErrorCause.BAD_IMMEDIATE
    for operand in info.reads + info.writes:
        if operand in REGISTERS:
            continue
        name, span = _operand_span(ins, operand)
        if getattr(ins, name) + span > shape.buffers:
            return ErrorCause.BUFFER_RANGE
    uses_slot = (info.needs_slot and not integer_add(ins)) or (ins.opcode == Opcode.LOAD and ins.flags & 1) \
        or (ins.opcode == Opcode.SAMPLE and ins.flags == SampleKind.UNIFORM) \
        or (ins.opcode == Opcode.MOVE and ins.flags & 1)
    if "slot" in info.uses and ins.slot + (rows if uses_slot else 1) > shape.slots:
        return ErrorCause.SLOT_RANGE
    if ins.opcode == Opcode.CONV and conv_target(ins) >= shape.slots:
        return ErrorCause.SLOT_RANGE
    if uses_slot and not all(s in bound for s in range(ins.slot, ins.slot + rows)):
        return ErrorCause.SLOT_UNBOUND
    if ins.opcode == Opcode.CONV and conv_target(ins) not in bound:
        return ErrorCause.SLOT_UNBOUND
    if ins.opcode == Opcode.CFG_PRIME:
        pid = ins.imm >> 27
        if pid >= len(shape.primes):
            return ErrorCause.BAD_IMMEDIATE
        if shape.primes[pid] & ((1 << 27) - 1) != ins.imm & ((1 << 27) - 1):
            return ErrorCause.PRIME_MISMATCH
    if ins.opcode == Opcode.LOAD and ins.flags >> 1:
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.MOVE and ins.flags >> 1:
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode in (Opcode.NTT,) and ins.flags >> 1:
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.ENCODE and (ins.flags >> 1 or (ins.flags and rows != 1)):
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode in (Opcode.SUB, Opcode.MUL) and ins.flags >> 2:
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.ADD and ins.flags >> 2 and ins.flags != INTEGER_ADD:
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.SAMPLE and ins.flags >= len(SampleKind):
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.CONV and (ins.flags >= len(ConvKind) or ins.imm >> SLOT_BITS):
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.NOTIFY and ins.imm >> 16:
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.CFG_NET_SEGMENT and ins.imm > MAX_SEGMENT:
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.CFG_SCALE and ins.imm != shape.log_scale:
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode == Opcode.CFG_RUBATO and (ins.imm >= len(RUBATO_SET_IDS) or (
            shape.rubato_set is not None and ins.imm != shape.rubato_set)):
        return ErrorCause.BAD_IMMEDIATE
    if ins.opcode in (Opcode.RUBATO_STREAM, Opcode.RUBATO_ENC) and _bad_rubato_blocks(ins, shape):
        return ErrorCause.BAD_IMMEDIATE
    return ErrorCause.NONE


def _bad_send(first_row: int, imm: int, n: int | None) -> bool:
    rows, kind, _, total_rows, words = send_fields(imm)
    return rows == 0 or kind not in SEND_KINDS or bool(imm >> 12 & 0xF) or first_row + rows > total_rows \
        or (n is not None and words > n)


RUBATO_SET_IDS = ("Par-80S", "Par-80M", "Par-80L", "Par-128S", "Par-128M", "Par-128L")
"""``cfg.rubato``'s set numbers: the Rubato parameter sets in the order of
:data:`hhe_gen.params.rubato.RUBATO_SETS`."""
RUBATO_HALF_BITS = 32
"""Bits of a half in a Rubato key block: an engine with the Rubato unit has words of at least this."""
RUBATO_KEY_EXTRA = 6
"""Words of a Rubato key block after the n key words: nonce, noise seed and counter base, each as a
low and a high 32-bit half."""


def rubato_blocks(imm: int) -> tuple[int, int]:
    """``rubato.stream`` / ``rubato.enc``'s immediate: (blocks imm[31:24], counter offset imm[23:0])."""
    return imm >> 24, imm & 0xFFFFFF


def _bad_rubato_blocks(ins: Instruction, shape: EngineShape) -> bool:
    blocks, _ = rubato_blocks(ins.imm)
    if blocks == 0 or ins.flags >> 1:
        return True
    if shape.n is None or shape.rubato_set is None:
        return False
    return blocks * rubato_params(RUBATO_SET_IDS[shape.rubato_set]).l > shape.n


INTEGER_ADD = 0b100
"""``flags`` of ``add ..., integer`` (no lift bit may be set with it)."""


def integer_add(ins: Instruction) -> bool:
    """``add`` with the integer flag: no prime, words added as two's complement integers."""
    return ins.opcode == Opcode.ADD and ins.flags == INTEGER_ADD


def conv_target(ins: Instruction) -> int:
    """``conv``'s destination prime slot, imm[2:0]."""
    return ins.imm & (MAX_SLOTS - 1)


def by_mnemonic(mnemonic: str) -> OpcodeInfo | None:
    """The opcode row of a mnemonic (``None`` if unknown)."""
    return _BY_MNEMONIC.get(mnemonic)
