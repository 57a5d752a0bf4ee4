"""Text assembler and disassembler of the engine's instructions (:mod:`hhe_gen.cores.engine.isa`),
and the program image formats.

Syntax
------
One instruction per line.  ``;`` starts a comment that runs to the end of the line; blank lines
are ignored; mnemonics, operand names and keywords are case-insensitive.  An instruction is its
mnemonic, then its operands separated by commas, always in this order::

    mnemonic  destination, sources (a, b, c), prime slot, immediate, keywords

Operand forms:

- ``bN``: buffer N (0 .. B-1); ``sN``: prime slot N (0 .. S-1); ``pN``: built-in prime N;
- a number: decimal, ``0x`` hexadecimal or ``0b`` binary (``_`` may separate digits);
- ``name=value``: a keyword (``lift=``, ``domain=``, ``nonce=``, ``rows=``, ``low=``, ``of=``,
  ``words=``, ``blocks=``, ``counter=``);
- a bare word: ``check`` (``load``), ``signed`` (``encode``), ``integer`` (``add``), ``ntt``
  (``send``), ``noise`` (``rubato.stream`` / ``rubato.enc``), the sample kind (``uniform``, ``ternary``, ``hamming``, ``gaussian``) or the packet
  kind of ``send`` (``c0``, ``c1``, ``rubato``, ``slots``).

Keywords come after every positional operand, in any order, each at most once.  An operand in
brackets in :func:`syntax` may be left out: an omitted slot is ``s0``, omitted flags are 0.
``lift=`` names the sources (letters of ``a``, ``b``, ``c``) that hold small signed values to be
lifted modulo the slot's prime (flags bit 0 = a, bit 1 = b, bit 2 = c).  ``sample`` takes
``domain=`` as a number 0 .. 255 or a :class:`hhe_gen.models.sampler.Domain` name
(``domain=error0``).  ``cfg.prime s0, p1`` binds slot 0 to built-in prime 1; the assembler computes
the check bits imm[26:0] = q mod 2^27 from the primes it is given (an EngineShape or a list), or
takes them from ``low=`` (written by the disassembler when it has no primes).  ``cfg.net.ip``
takes a dotted IPv4 address.  Examples::

    cfg.prime s0, p0                  ; bind slot 0 to built-in prime 0
    load b3, s0, 0x1000, check        ; N words from 0x1000, each checked < q_s0
    sample b5, gaussian, domain=3, nonce=0
    ntt b1, b0, s0, lift=a            ; b0 holds small signed values
    mac b2, b1, b3, b4, s0            ; b2 = b1 * b3 + b4 mod q_s0
    encode b4, b0, s0, rows=3         ; b4 .. b6 <- residues mod q_s0 .. q_s2
    encode b0, b0, s0, rows=1, signed ; b0 <- the signed integer coefficients (in place)
    add b0, b0, b5, s0, integer       ; b0 <- b0 + b5, two's complement integers (no prime)
    cfg.net.message 7                 ; the packets that follow belong to message 7, numbered from 0
    send b2, c0, rows=3, ntt          ; b2 .. b4 as rows 0 .. 2 of c0 (NTT form), N words each
    send b7, s1, c1, rows=1, of=3     ; b7 as row 1 of a c1 of 3 rows
    cfg.rubato 3                      ; Rubato Par-128S
    rubato.key b1                     ; key, nonce, noise seed, counter base from b1
    rubato.enc b2, b3, blocks=4, counter=8, noise   ; b2 <- 4 blocks of Rubato ciphertext of b3
    store b2, 0x2000
    notify 1

``.word 0x0123456789abcdef`` places a raw 64-bit word, unchecked (this is how the disassembler
prints a malformed word, with the :func:`hhe_gen.cores.engine.isa.check` cause as a comment), so
``assemble(disassemble(words, shape), shape) == words`` for every list of words.

The assembler checks every instruction with ``isa.check`` on the given shape with every slot
counted as bound (binding is a run-time matter), and raises :class:`AssemblyError` naming the line
number, the line, the offending token and what is allowed.

Program images
--------------
Binary: the words as consecutive 64-bit little-endian integers (:func:`image_bytes`).  Hex: one
word per line, 16 hexadecimal digits, the form Verilog's ``$readmemh`` reads (:func:`image_hex`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.isa import ConvKind, EngineShape, ErrorCause, Instruction, Opcode, SampleKind, Unit
from hhe_gen.models.sampler import Domain
from hhe_gen.models.wire import Kind
from hhe_gen.params.errors import MAX_SHOWN, ParameterError, shown

__all__ = [
    "AssemblyError", "Operand", "SYNTAX", "CAUSE_MEANING", "SAMPLE_MEANING", "syntax",
    "assemble", "assemble_line", "disassemble", "disassemble_word", "prime_immediate",
    "image_bytes", "words_from_bytes", "IMAGE_HEADER", "image_hex", "image_about", "words_from_hex", "write_image", "read_image",
    "markdown_tables", "PACKET_KINDS",
]

PRIME_CHECK_BITS = 27
TOKEN_SHOWN = 32
"""At most this many characters of a refused token appear in an :class:`AssemblyError`'s message."""
_LOW_MASK = (1 << PRIME_CHECK_BITS) - 1
_ALL_UNITS = frozenset(u for u in Unit if u != Unit.NONE)


class AssemblyError(ParameterError):
    """A line the assembler (or a hex image reader) refuses.

    Members
    -------
    line_number : int   1-based line number
    text : str          the line as written
    token : str | None  the offending token (None: something is missing)
    allowed : str       what is allowed there

    The message echoes the line only when it is at most :data:`~hhe_gen.params.errors.MAX_SHOWN`
    characters long, and the token in at most :data:`TOKEN_SHOWN` characters.
    """

    def __init__(self, line_number: int, text: str, token, allowed: str):
        self.line_number, self.text, self.token = line_number, text, token
        self.name, self.value, self.allowed = f"line {line_number}", token, allowed
        line = text.strip()
        if len(line) > MAX_SHOWN:
            where = f"line {line_number} ({len(line):,} characters): "
        else:
            where = f"line {line_number}: {line!r}: "
        ValueError.__init__(self, where + (f"missing {allowed}" if token is None
                                           else f"{shown(token, TOKEN_SHOWN)} is not allowed: {allowed}"))


# -- the written form of every opcode ------------------------------------------------------------
@dataclass(frozen=True)
class Operand:
    """One operand of an instruction's written form.

    Members
    -------
    kind : str      "buffer" (``bN``), "slot" (``sN``), "prime" (``pN``), "number", "ipv4",
                    "kind" (sample kind word), "convkind" (conv kind word), "packet" (``send``'s packet
                    kind word), "flag" (bare keyword) or "keyword" (``name=value``)
    part : str      the piece of the word it sets (a key of :data:`_PARTS`)
    label : str     placeholder in :func:`syntax`
    optional : bool may be left out
    letters : str   for ``lift=``: the sources that may be lifted
    hex : bool      printed in hexadecimal
    """
    kind: str
    part: str
    label: str
    optional: bool = False
    letters: str = ""
    hex: bool = False

    @property
    def positional(self) -> bool:
        return self.kind not in ("flag", "keyword")

    @property
    def written(self) -> str:
        """How the operand appears in :func:`syntax`."""
        if self.kind == "keyword":
            return f"{self.part}={self.label}"
        return self.label


# part -> (field, low bit inside the field, width)
_PARTS = {
    "dst": ("dst", 0, 5), "a": ("a", 0, 5), "b": ("b", 0, 5), "c": ("c", 0, 5),
    "slot": ("slot", 0, 3), "imm": ("imm", 0, 32),
    "prime": ("imm", 27, 5), "low": ("imm", 0, 27),
    "domain": ("imm", 24, 8), "nonce": ("imm", 0, 24), "rows": ("imm", 0, 4),
    "src_port": ("imm", 16, 16), "dst_port": ("imm", 0, 16),
    "kind": ("flags", 0, 3), "check": ("flags", 0, 1), "lift": ("flags", 0, 3), "signed": ("flags", 0, 1),
    "integer": ("flags", 2, 1),
    "packet": ("imm", 4, 3), "ntt": ("imm", 7, 1), "of": ("imm", 8, 4), "words": ("imm", 16, 16),
    "blocks": ("imm", 24, 8), "counter": ("imm", 0, 24), "noise": ("flags", 0, 1),
    "to": ("imm", 0, 3), "centring": ("flags", 0, 3),
}
PACKET_KINDS = {"c0": Kind.CKKS_C0, "c1": Kind.CKKS_C1, "rubato": Kind.RUBATO, "slots": Kind.SLOTS}
"""``send``'s packet kinds by name (:class:`hhe_gen.models.wire.Kind`)."""


def _buf(part):
    return Operand("buffer", part, "b" + part[0].upper())


_SLOT = Operand("slot", "slot", "sK")
_OPT_SLOT = Operand("slot", "slot", "sK", optional=True)
_ADDR = Operand("number", "imm", "ADDR", hex=True)


def _lift(letters):
    return Operand("keyword", "lift", letters, optional=True, letters=letters)


_PAIR = (_buf("dst"), _buf("a"), _buf("b"), _SLOT, _lift("ab"))
_TRIPLE = (_buf("dst"), _buf("a"), _buf("b"), _buf("c"), _SLOT, _lift("abc"))
_CODEC = (_buf("dst"), _buf("a"), _SLOT, Operand("keyword", "rows", "R"))
_BLOCKS = (Operand("keyword", "blocks", "B"), Operand("keyword", "counter", "C", optional=True),
           Operand("flag", "noise", "noise", optional=True))

SYNTAX: dict[int, tuple[Operand, ...]] = {
    Opcode.NOP: (),
    Opcode.FENCE: (),
    Opcode.NOTIFY: (Operand("number", "imm", "CODE"),),
    Opcode.CFG_PRIME: (_SLOT, Operand("prime", "prime", "pI"),
                       Operand("keyword", "low", "LOW", optional=True, hex=True)),
    Opcode.CFG_SCALE: (Operand("number", "imm", "LOG_SCALE"),),
    Opcode.CFG_RUBATO: (Operand("number", "imm", "SET"),),
    Opcode.CFG_NET_IP: (Operand("ipv4", "imm", "A.B.C.D"),),
    Opcode.CFG_NET_PORTS: (Operand("number", "src_port", "SRC_PORT"), Operand("number", "dst_port", "DST_PORT")),
    Opcode.CFG_NET_SEGMENT: (Operand("number", "imm", "COEFFICIENTS"),),
    Opcode.CFG_NET_MESSAGE: (Operand("number", "imm", "MESSAGE"),),
    Opcode.LOAD: (_buf("dst"), _OPT_SLOT, _ADDR, Operand("flag", "check", "check", optional=True)),
    Opcode.STORE: (_buf("a"), _ADDR),
    Opcode.LDSEED: (_ADDR,),
    Opcode.SAMPLE: (_buf("dst"), _OPT_SLOT, Operand("kind", "kind", "KIND"),
                    Operand("keyword", "domain", "D"), Operand("keyword", "nonce", "NONCE")),
    Opcode.NTT: (_buf("dst"), _buf("a"), _SLOT, _lift("a")),
    Opcode.INTT: (_buf("dst"), _buf("a"), _SLOT),
    Opcode.ADD: _PAIR + (Operand("flag", "integer", "integer", optional=True),), Opcode.SUB: _PAIR,
    Opcode.MUL: _PAIR,
    Opcode.MAC: _TRIPLE, Opcode.MSUB: _TRIPLE,
    Opcode.MOVE: (_buf("dst"), _buf("a"), _OPT_SLOT, _lift("a")),
    Opcode.CONV: (_buf("dst"), _buf("a"), _SLOT, Operand("convkind", "centring", "KIND"),
                  Operand("keyword", "to", "sJ")),
    Opcode.ENCODE: _CODEC + (Operand("flag", "signed", "signed", optional=True),), Opcode.DECODE: _CODEC,
    Opcode.SEND: (_buf("a"), _OPT_SLOT, Operand("packet", "packet", "KIND"), Operand("keyword", "rows", "R"),
                  Operand("keyword", "of", "T", optional=True), Operand("keyword", "words", "W", optional=True),
                  Operand("flag", "ntt", "ntt", optional=True)),
    Opcode.RECV: (_buf("dst"), Operand("keyword", "rows", "R")),
    Opcode.RUBATO_KEY: (_buf("a"),),
    Opcode.RUBATO_STREAM: (_buf("dst"),) + _BLOCKS,
    Opcode.RUBATO_ENC: (_buf("dst"), _buf("a")) + _BLOCKS,
}
assert set(SYNTAX) == set(isa.OPCODES)

CAUSE_MEANING = {
    ErrorCause.NONE: "no error",
    ErrorCause.UNKNOWN_OPCODE: "the opcode is not in the table",
    ErrorCause.BUFFER_RANGE: "a buffer index (or the last buffer of a row range) >= the number of buffers",
    ErrorCause.SLOT_RANGE: "a prime slot (or the last slot of a row range) >= the number of slots",
    ErrorCause.SLOT_UNBOUND: "a prime slot the instruction needs was not bound by cfg.prime since the last soft reset",
    ErrorCause.NONZERO_UNUSED: "a field the opcode does not use is not zero",
    ErrorCause.BAD_IMMEDIATE: "immediate or flags out of range (prime id, rows, sample kind, lift bits, "
                              "load and encode flags, notify code, segment, scale, Rubato set)",
    ErrorCause.PRIME_MISMATCH: "cfg.prime's imm[26:0] differs from the built-in prime's q mod 2^27",
    ErrorCause.NOT_BUILT: "the engine was generated without the unit this instruction needs",
    ErrorCause.AFTER_ERROR: "not the instruction's own fault: dropped because an earlier one failed",
    ErrorCause.DATA_RANGE: "at run time: a checked load met a memory word >= q_slot (the load still completes)",
}
assert set(CAUSE_MEANING) == set(ErrorCause)

SAMPLE_MEANING = {
    SampleKind.UNIFORM: ("uniform in [0, q_slot): rejection sampling", "uniform_mod_q", True),
    SampleKind.TERNARY: ("uniform in {-1, 0, 1}", "ternary_uniform", False),
    SampleKind.HAMMING: ("{-1, 0, 1} with exactly h non-zero entries (h built in)", "ternary_hamming", False),
    SampleKind.GAUSSIAN: ("discrete Gaussian (CDT), the built-in sigma and tail cut", "gaussian_cdt", False),
}
assert set(SAMPLE_MEANING) == set(SampleKind)


def syntax(opcode: int) -> str:
    """The written form of an opcode, e.g. ``mac bD, bA, bB, bC, sK[, lift=abc]``."""
    out = isa.OPCODES[opcode].mnemonic
    for index, op in enumerate(SYNTAX[opcode]):
        sep = ", " if index else " "
        out += f"[{sep}{op.written}]" if op.optional else f"{sep}{op.written}"
    return out


def prime_immediate(prime_id: int, q: int) -> int:
    """imm of ``cfg.prime``: prime_id << 27 | (q mod 2^27)."""
    return (prime_id << PRIME_CHECK_BITS) | (q & _LOW_MASK)


# -- context: what the assembler knows about the engine ------------------------------------------
@dataclass(frozen=True)
class _Context:
    shape: EngineShape | None
    primes: tuple[int, ...] | None

    @classmethod
    def of(cls, shape_or_primes) -> "_Context":
        if shape_or_primes is None:
            return cls(None, None)
        if isinstance(shape_or_primes, EngineShape):
            return cls(shape_or_primes, shape_or_primes.primes)
        try:
            primes = tuple(shape_or_primes)
        except TypeError:
            raise ParameterError("shape", shape_or_primes, "an EngineShape, a list of primes or None") from None
        if not 1 <= len(primes) <= 32 or not all(isinstance(q, int) and q > 2 for q in primes):
            raise ParameterError("primes", shape_or_primes, "1 .. 32 built-in primes")
        return cls(None, primes)

    @property
    def buffers(self) -> int:
        return self.shape.buffers if self.shape else isa.MAX_BUFFERS

    @property
    def slots(self) -> int:
        return self.shape.slots if self.shape else isa.MAX_SLOTS

    def check_shape(self, ins: Instruction) -> EngineShape:
        """The real shape, or one that accepts whatever the missing knowledge could allow."""
        if self.shape is not None:
            return self.shape
        primes = self.primes or (ins.imm & _LOW_MASK,) * 32
        log_scale = ins.imm if ins.opcode == Opcode.CFG_SCALE and ins.imm <= 255 else 0   # > 255: malformed anywhere
        return EngineShape(isa.MAX_BUFFERS, isa.MAX_SLOTS, primes, log_scale, _ALL_UNITS)

    def cause(self, ins: Instruction) -> ErrorCause:
        return isa.check(ins, self.check_shape(ins), frozenset(range(isa.MAX_SLOTS)))


def _reads_slot(ins: Instruction) -> bool:
    """The instruction needs a bound prime slot (the rule isa.check applies)."""
    info = ins.info
    return bool(info.needs_slot or (ins.opcode == Opcode.LOAD and ins.flags & 1)
                or (ins.opcode == Opcode.SAMPLE and ins.flags == SampleKind.UNIFORM)
                or (ins.opcode == Opcode.MOVE and ins.flags & 1))


# -- assembler -------------------------------------------------------------------------------------
_INDEX = {"buffer": re.compile(r"b([0-9]+)$"), "slot": re.compile(r"s([0-9]+)$"), "prime": re.compile(r"p([0-9]+)$")}


def _number(tok: str):
    try:
        return int(tok, 0)
    except ValueError:
        return None


class _Line:
    """One source line being assembled (for error messages)."""

    def __init__(self, number: int, text: str, ctx: _Context):
        self.number, self.text, self.ctx = number, text, ctx

    def fail(self, token, allowed):
        raise AssemblyError(self.number, self.text, token, allowed)

    def value(self, op: Operand, tok: str, form: str) -> int:
        low = tok.lower()
        width = _PARTS[op.part][2]
        if op.kind in _INDEX:
            limit = {"buffer": self.ctx.buffers, "slot": self.ctx.slots,
                     "prime": len(self.ctx.primes) if self.ctx.primes else 32}[op.kind]
            m = _INDEX[op.kind].match(low)
            if not m or int(m.group(1)) >= limit:
                what = {"buffer": "buffers", "slot": "prime slots", "prime": "built-in primes"}[op.kind]
                self.fail(tok, f"{op.kind} {op.label[0]}0 .. {op.label[0]}{limit - 1} "
                               f"(the engine has {limit} {what}; {form})")
            return int(m.group(1))
        if op.kind == "packet":
            if low not in PACKET_KINDS:
                self.fail(tok, f"a packet kind: {', '.join(PACKET_KINDS)} ({form})")
            return PACKET_KINDS[low]
        if op.kind == "kind":
            names = [k.name.lower() for k in SampleKind]
            if low not in names:
                self.fail(tok, f"a sample kind: {', '.join(names)} ({form})")
            return SampleKind[low.upper()]
        if op.kind == "convkind":
            names = [k.name.lower() for k in ConvKind]
            if low not in names:
                self.fail(tok, f"a conversion kind: {', '.join(names)} ({form})")
            return ConvKind[low.upper()]
        if op.part == "to":
            m = _INDEX["slot"].match(low)
            if not m or int(m.group(1)) >= self.ctx.slots:
                self.fail(tok, f"to= a prime slot s0 .. s{self.ctx.slots - 1} ({form})")
            return int(m.group(1))
        if op.kind == "ipv4":
            parts = low.split(".")
            if len(parts) == 4 and all(re.fullmatch(r"[0-9]{1,3}", p) and int(p) < 256 for p in parts):
                return int.from_bytes(bytes(int(p) for p in parts), "big")
            value = _number(low)
            if value is None or not 0 <= value < 1 << 32:
                self.fail(tok, f"an IPv4 address a.b.c.d or a 32-bit number ({form})")
            return value
        if op.part == "lift":
            if not low or any(ch not in op.letters for ch in low) or len(set(low)) != len(low):
                self.fail(tok, f"lift= a selection of the sources {', '.join(op.letters)} (each at most once; {form})")
            return sum(1 << "abc".index(ch) for ch in low)
        if op.part == "domain" and low.upper() in Domain.__members__:
            return int(Domain[low.upper()])
        value = _number(low)
        low_limit = 1 if op.part in ("rows", "blocks") else 0
        if value is None or not low_limit <= value < 1 << width:
            extra = " or a sampler Domain name" if op.part == "domain" else ""
            self.fail(tok, f"{op.written} as a number {low_limit} .. {(1 << width) - 1}{extra} ({form})")
        return value

    def instruction(self, code: str) -> int | None:
        head, _, rest = code.partition(" ")
        mnemonic = head.lower()
        tokens = [t.strip() for t in rest.split(",")] if rest.strip() else []
        if mnemonic == ".word":
            value = _number(tokens[0]) if len(tokens) == 1 else None
            if value is None or not 0 <= value < 1 << isa.WORD_BITS:
                self.fail(rest.strip() or None, "one 64-bit value 0 .. 2^64-1 after .word")
            return value
        info = isa.by_mnemonic(mnemonic)
        if info is None:
            self.fail(head, "a mnemonic: " + ", ".join(i.mnemonic for i in isa.OPCODES.values()) + " or .word")
        form = "syntax: " + syntax(info.code)
        ops = SYNTAX[info.code]
        positional = [op for op in ops if op.positional]
        keywords = {op.part: op for op in ops if op.kind == "keyword"}
        flags = {op.part: op for op in ops if op.kind == "flag"}
        values: dict[str, int] = {}
        index, in_keywords = 0, False
        for tok in tokens:
            if not tok:
                self.fail("", f"an operand between commas ({form})")
            low = tok.lower()
            name, eq, text = (s.strip() for s in low.partition("="))
            if eq or low in flags:
                in_keywords = True
                op = keywords.get(name) if eq else flags[low]
                if op is None:
                    allowed = ", ".join(o.written for o in ops if not o.positional) or "none"
                    self.fail(tok, f"a keyword of {mnemonic} ({allowed}; {form})")
                if op.part in values:
                    self.fail(tok, f"each keyword once ({form})")
                values[op.part] = 1 if op.kind == "flag" else self.value(op, text, form)
                continue
            if in_keywords:
                self.fail(tok, f"positional operands before the keywords ({form})")
            while index < len(positional) and positional[index].optional and positional[index].kind in _INDEX \
                    and not _INDEX[positional[index].kind].match(low):
                index += 1
            if index == len(positional):
                self.fail(tok, f"no further operand ({form})")
            op = positional[index]
            values[op.part] = self.value(op, tok, form)
            index += 1
        for op in ops:
            if not op.optional and op.part not in values:
                self.fail(None, f"operand {op.written} ({form})")
        if info.code == Opcode.CFG_PRIME and "low" not in values:
            if self.ctx.primes is None:
                self.fail(code, "cfg.prime without low= needs the built-in primes: pass an EngineShape "
                                "or the list of primes to assemble()")
            values["low"] = self.ctx.primes[values["prime"]] & _LOW_MASK
        fields = dict.fromkeys(("dst", "a", "b", "c", "slot", "flags", "imm"), 0)
        for part, value in values.items():
            field, shift, _ = _PARTS[part]
            fields[field] |= value << shift
        ins = Instruction(info.code, **fields)
        cause = self.ctx.cause(ins)
        if cause != ErrorCause.NONE:
            self.fail(code, f"a well-formed instruction, isa.check says {cause.name}: {CAUSE_MEANING[cause]}"
                            + _hint(cause, ins, self.ctx))
        return isa.encode(ins)


def _hint(cause: ErrorCause, ins: Instruction, ctx: _Context) -> str:
    shape = ctx.shape
    if cause == ErrorCause.NOT_BUILT and shape is not None:
        return " (units built: " + ", ".join(sorted(u.name for u in shape.units)) + ")"
    if cause == ErrorCause.BAD_IMMEDIATE and ins.opcode == Opcode.CFG_SCALE and shape is not None:
        return f" (this engine: cfg.scale {shape.log_scale})"
    if cause in (ErrorCause.BUFFER_RANGE, ErrorCause.SLOT_RANGE):
        return f" ({ctx.buffers} buffers, {ctx.slots} slots)"
    return ""


def assemble_line(line: str, shape=None, number: int = 1) -> int | None:
    """One line's word (None for a blank or comment line); see :func:`assemble`."""
    code = line.split(";", 1)[0].strip()
    if not code:
        return None
    code = " ".join(code.split())
    return _Line(number, line, _Context.of(shape)).instruction(code)


def assemble(text: str, shape=None) -> list[int]:
    """Assemble a program.

    Parameters
    ----------
    text : str
        the source, syntax in the module docstring
    shape : EngineShape, list of primes or None
        an EngineShape checks every instruction against the engine (buffers, slots, units,
        cfg.scale) and gives ``cfg.prime`` its check bits; a list of primes gives only the
        latter; None checks only what needs no shape (cfg.prime then needs ``low=``)

    Returns
    -------
    list[int]   the 64-bit instruction words; raises :class:`AssemblyError` on the first bad line
    """
    ctx = _Context.of(shape)
    words = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split(";", 1)[0].strip()
        if code:
            words.append(_Line(number, line, ctx).instruction(" ".join(code.split())))
    return words


# -- disassembler ----------------------------------------------------------------------------------
def _format(op: Operand, value: int) -> str:
    if op.kind in _INDEX:
        return f"{op.label[0]}{value}"
    if op.kind == "kind":
        return SampleKind(value).name.lower()
    if op.kind == "convkind":
        return ConvKind(value).name.lower()
    if op.part == "to":
        return f"to=s{value}"
    if op.kind == "packet":
        return next(name for name, code in PACKET_KINDS.items() if code == value)
    if op.kind == "ipv4":
        return ".".join(str(b) for b in value.to_bytes(4, "big"))
    if op.kind == "flag":
        return op.part
    if op.part == "lift":
        text = "".join(ch for k, ch in enumerate("abc") if value >> k & 1)
        return f"lift={text}"
    text = f"{value:#x}" if op.hex else str(value)
    return f"{op.part}={text}" if op.kind == "keyword" else text


def _shown(op: Operand, ins: Instruction, value: int, ctx: _Context) -> bool:
    if not op.optional:
        return True
    if op.kind == "slot":
        return value != 0 or _reads_slot(ins)
    if op.part == "low":
        return ctx.primes is None
    return value != 0


def disassemble_word(word: int, shape=None) -> str:
    """One word as a line of assembly (a malformed word as ``.word`` with its cause)."""
    return _disassemble(word, _Context.of(shape))


def _disassemble(word: int, ctx: _Context) -> str:
    ins = isa.decode(word)
    cause = ctx.cause(ins)
    if cause != ErrorCause.NONE:
        return f".word {word:#018x} ; malformed: {cause.name} ({CAUSE_MEANING[cause]})"
    parts = []
    for op in SYNTAX[ins.opcode]:
        field, shift, width = _PARTS[op.part]
        if op.part == "lift":               # only the sources this opcode has (add's bit 2: integer)
            width = len(op.letters)
        value = (getattr(ins, field) >> shift) & ((1 << width) - 1)
        if _shown(op, ins, value, ctx):
            parts.append(_format(op, value))
    mnemonic = ins.info.mnemonic
    return f"{mnemonic} {', '.join(parts)}" if parts else mnemonic


def disassemble(words, shape=None) -> str:
    """The program as assembly text, one line per word (see :func:`disassemble_word`)."""
    ctx = _Context.of(shape)
    return "".join(_disassemble(w, ctx) + "\n" for w in words)


# -- program images --------------------------------------------------------------------------------
def _check_words(words) -> list[int]:
    words = list(words)
    for i, w in enumerate(words):
        if isinstance(w, bool) or not isinstance(w, int) or not 0 <= w < 1 << 64:
            raise ParameterError(f"words[{i}]", w, "a 64-bit instruction word 0 .. 2^64-1")
    return words


def image_bytes(words) -> bytes:
    """The binary image: every word as 8 bytes, little-endian."""
    return b"".join(w.to_bytes(8, "little") for w in _check_words(words))


def words_from_bytes(data: bytes) -> list[int]:
    """The words of a binary image (its length must be a multiple of 8)."""
    if len(data) % 8:
        raise ParameterError("image", f"<{len(data)} bytes>", "a multiple of 8 bytes (64-bit words)")
    return [int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8)]


IMAGE_HEADER = "// hhe-gen program image for "
"""The first line of a hex image that says what it was assembled for (:func:`image_hex`)."""


def image_hex(words, about: dict | None = None) -> str:
    """The hex image for ``$readmemh``: one word per line, 16 hexadecimal digits; with ``about``
    (JSON-ready: the accelerator it was assembled for), a first ``//`` comment line holding it
    (:func:`image_about` reads it back; ``$readmemh`` skips it)."""
    import json
    head = "" if about is None else IMAGE_HEADER + json.dumps(about, sort_keys=True) + "\n"
    return head + "".join(f"{w:016x}\n" for w in _check_words(words))


def image_about(text: str) -> dict | None:
    """What a hex image says it was assembled for (the ``about`` of :func:`image_hex`), or None."""
    import json
    first = text.split("\n", 1)[0]
    if not first.startswith(IMAGE_HEADER):
        return None
    try:
        about = json.loads(first[len(IMAGE_HEADER):])
    except ValueError:
        return None
    return about if isinstance(about, dict) else None


def words_from_hex(text: str) -> list[int]:
    """The words of a hex image (blank lines and ``//`` comments are skipped)."""
    words = []
    for number, line in enumerate(text.splitlines(), 1):
        code = line.split("//", 1)[0].strip()
        if not code:
            continue
        digits = code.replace("_", "")
        if not re.fullmatch(r"[0-9a-fA-F]{1,16}", digits):
            allowed = "one word of 1 .. 16 hexadecimal digits per line"
            if code[:1] in ("{", "["):   # a keys or ciphertext file: echo none of it
                raise AssemblyError(number, line, code[:1], allowed + " (this file holds JSON, not a program image)")
            raise AssemblyError(number, line, code, allowed)
        words.append(int(digits, 16))
    return words


def _is_hex_path(path: Path) -> bool:
    return path.suffix.lower() in (".hex", ".mem")


def write_image(path, words, about: dict | None = None) -> Path:
    """Write a program image: hex text for a ``.hex`` / ``.mem`` name (headed by ``about``, if
    given: :func:`image_hex`), else binary."""
    path = Path(path)
    if _is_hex_path(path):
        path.write_text(image_hex(words, about))
    else:
        path.write_bytes(image_bytes(words))
    return path


def read_image(path) -> list[int]:
    """Read a program image written by :func:`write_image` (format from the file name)."""
    path = Path(path)
    return words_from_hex(path.read_text()) if _is_hex_path(path) else words_from_bytes(path.read_bytes())


# -- documentation tables --------------------------------------------------------------------------
def _cell(text) -> str:
    return str(text).replace("|", "\\|")


def _class_of(info: isa.OpcodeInfo) -> str:
    if info.code in isa.SERIALISING:
        return "serialising"
    if info.unit == Unit.NONE:
        return "none"
    return info.unit.name.lower()


def markdown_tables() -> dict[str, list[str]]:
    """The tables of docs/isa.md, generated from :mod:`hhe_gen.cores.engine.isa` and this module:
    ``fields``, ``opcodes``, ``classes``, ``causes``, ``sample-kinds``."""
    fields = ["| field | bits | width | meaning |", "|---|---|---|---|"]
    for f in isa.FIELDS:
        bits = f"{f.low + f.width - 1}:{f.low}" if f.width > 1 else str(f.low)
        fields.append(f"| `{f.name}` | {bits} | {f.width} | {_cell(f.meaning)} |")
    opcodes = ["| mnemonic | code | unit | needs | syntax | meaning |", "|---|---|---|---|---|---|"]
    for info in sorted(isa.OPCODES.values(), key=lambda i: i.code):
        needs = info.requires.name.lower() if info.requires != Unit.NONE else "-"
        opcodes.append(f"| `{info.mnemonic}` | 0x{info.code:02X} | {_class_of(info)} | {needs} "
                       f"| `{_cell(syntax(info.code))}` | {_cell(info.summary)} |")
    classes = ["| class | opcodes | dispatch |", "|---|---|---|"]
    groups: dict[str, list[str]] = {}
    for info in sorted(isa.OPCODES.values(), key=lambda i: i.code):
        groups.setdefault(_class_of(info), []).append(f"`{info.mnemonic}`")
    for unit in Unit:
        name = unit.name.lower()
        if unit != Unit.NONE and name in groups:
            classes.append(f"| unit {name} | {', '.join(groups[name])} | out of order, when the scoreboard "
                           f"sees no hazard on its buffers (and the seed register) |")
    classes.append(f"| serialising | {', '.join(groups['serialising'])} | after every earlier instruction "
                   f"has completed; nothing later starts before it is done |")
    classes.append(f"| none | {', '.join(groups['none'])} | checked, then dropped |")
    causes = ["| code | cause | meaning |", "|---|---|---|"]
    for cause in ErrorCause:
        causes.append(f"| {int(cause)} | `{cause.name}` | {_cell(CAUSE_MEANING[cause])} |")
    kinds = ["| flags | kind | values | sampler function | needs a bound slot |", "|---|---|---|---|---|"]
    for kind in SampleKind:
        text, function, slot = SAMPLE_MEANING[kind]
        kinds.append(f"| {int(kind)} | `{kind.name.lower()}` | {_cell(text)} | `sampler.{function}` "
                     f"| {'yes' if slot else 'no'} |")
    return {"fields": fields, "opcodes": opcodes, "classes": classes, "causes": causes, "sample-kinds": kinds}
