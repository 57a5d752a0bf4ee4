"""The RTL instruction check: :func:`hhe_gen.cores.engine.isa.check` and
:func:`~hhe_gen.cores.engine.isa.reads_writes` in hardware (:class:`InstructionDecoder`).

The rules are generated from the same tables the Python check reads (:data:`isa.OPCODES`,
:data:`isa.FIELDS`): one ``Case`` per opcode of the table, inside it the rules of ``check`` that
apply to that opcode, in ``check``'s order (the first rule that fires gives the cause):

1. ``UNKNOWN_OPCODE``  - the opcode is not in the table (the ``Default`` case);
2. ``NONZERO_UNUSED``  - a field the opcode does not use (``uses``) is not zero;
3. ``NOT_BUILT``       - the opcode's ``requires`` unit is not in ``shape.units`` (static);
4. ``BAD_IMMEDIATE``   - ``encode`` / ``decode``: imm >= 16 or rows = imm[3:0] = 0; ``send``: rows
                         = 0, a kind imm[6:4] outside 1 .. 4, imm[15:12] not zero, slot + rows >
                         T (imm[11:8], 0: rows) or words imm[31:16] > N; ``recv``: imm >= 16, rows 0 or odd;
5. ``BUFFER_RANGE``    - an operand's base + span > B (span = rows for a ``+rows`` operand, else 1;
                         the seed is not a buffer);
6. ``SLOT_RANGE``      - the opcode uses ``slot`` and slot + (rows if it uses the prime else 1) > S;
                         ``conv``: also its destination slot imm[2:0] >= S;
7. ``SLOT_UNBOUND``    - the instruction uses the prime (``needs_slot`` but not ``add ..., integer``,
                         or ``load`` with flags bit 0, ``sample`` of kind UNIFORM, ``move`` with
                         flags bit 0) and one of the
                         slots slot .. slot+rows-1 is not set in ``bound``; ``conv``: also its
                         destination slot;
8. ``cfg.prime``: prime id imm[31:27] >= len(primes) -> ``BAD_IMMEDIATE``; imm[26:0] differs
   from the low 27 bits of that built-in prime -> ``PRIME_MISMATCH``;
9. the per-opcode flag / immediate rules -> ``BAD_IMMEDIATE`` (``load`` / ``move`` / ``ntt``
   flags >= 2, ``sub`` / ``mul`` flags >= 4, ``add`` flags >= 4 but not 4 (integer), ``sample``
   flags >= the number of sample kinds (4), ``conv`` flags >= 3 or imm[31:3] not zero, ``notify``
   imm >= 2^16, ``cfg.net.segment`` imm > 180, ``cfg.scale`` imm != log_scale, ``cfg.rubato`` imm >= 6
   or not the set built, ``rubato.stream``
   / ``rubato.enc`` blocks imm[31:24] = 0, flags >= 2 or blocks x l > N).

Resources: the read / write masks have :func:`isa.resource_count` bits, bit i = buffer i (i < B),
bit B = the seed register (``isa.SEED`` in the Python sets), with the Rubato unit bit B + 1 = its
key registers (``isa.RUBATO_REGISTERS``), with the network unit bit B + 2 = its packet numbering
(``isa.NETWORK_REGISTERS``; :func:`isa.register_bits`).  They are ``isa.reads_writes`` restricted to the
buffers 0 .. B-1 and the registers, for every word (for a well-formed word that is the whole set; for
an unknown opcode both are empty).
"""

from __future__ import annotations

from amaranth.hdl import Array, Const, Module, Mux
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hhe_gen.cores.unused import quiet_on_error
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.rubato import rubato_params

from . import isa
from .isa import ErrorCause, Opcode, SampleKind, Unit

__all__ = ["instruction_layout", "CAUSE_BITS", "UNIT_BITS", "RTL_UNITS", "InstructionDecoder", "check_shape"]

CAUSE_BITS = 4
UNIT_BITS = 4
assert max(ErrorCause) < (1 << CAUSE_BITS) and max(Unit) < (1 << UNIT_BITS)


def instruction_layout() -> data.StructLayout:
    """The 64-bit instruction word as a struct (fields of :data:`isa.FIELDS` at their bits)."""
    fields = sorted(isa.FIELDS, key=lambda f: f.low)
    at = 0
    for f in fields:
        assert f.low == at, "isa.FIELDS must tile the word"
        at += f.width
    assert at == isa.WORD_BITS
    return data.StructLayout({f.name: f.width for f in fields})


RTL_UNITS = frozenset(u for u in Unit if u != Unit.NONE)
"""The units the RTL engine can be built with."""


def check_shape(shape) -> isa.EngineShape:
    """``shape`` must be an :class:`isa.EngineShape` (its own checks ran when it was made)."""
    if not isinstance(shape, isa.EngineShape):
        raise ParameterError("shape", shape, "an hhe_gen.cores.engine.isa.EngineShape")
    return shape


_LOW27 = (1 << 27) - 1


class InstructionDecoder(wiring.Component):
    """Combinational instruction check and decode for an engine of ``shape``.

    Parameters
    ----------
    shape : isa.EngineShape    buffers B, slots S, the built-in primes, log_scale, the units built

    Members
    -------
    word : In(instruction_layout())   the 64-bit instruction word (fields of ``isa.FIELDS``)
    bound : In(S)                     bit s: prime slot s is bound (``cfg.prime`` decoded)
    cause : Out(4)                    ``isa.check(decode(word), shape, bound)`` (ErrorCause)
    unit : Out(UNIT_BITS)             the opcode's ``isa.Unit`` (NONE for the serialising ones,
                                      ``nop`` and unknown opcodes)
    serialising : Out(1)              the opcode is in ``isa.SERIALISING``
    nop : Out(1)                      the opcode is ``nop``
    reads, writes : Out(R)            resource masks, R = isa.resource_count(shape) (module docstring)

    Latency: combinational (no clock).
    """

    @quiet_on_error
    def __init__(self, shape):
        self.shape = check_shape(shape)
        self.resources = isa.resource_count(shape)
        super().__init__({
            "word": In(instruction_layout()),
            "bound": In(shape.slots),
            "cause": Out(CAUSE_BITS),
            "unit": Out(UNIT_BITS),
            "serialising": Out(1),
            "nop": Out(1),
            "reads": Out(self.resources),
            "writes": Out(self.resources),
        })

    # -- the rules of one opcode, in check()'s order ------------------------------------------
    def _rules(self, m, info: isa.OpcodeInfo):
        """``[(condition, cause), ...]`` for opcode ``info`` in the order of ``isa.check``."""
        shape, w = self.shape, self.word
        code = info.code
        rules = []
        unused = [w[f.name] != 0 for f in isa.FIELDS[1:] if f.name not in info.uses]
        if unused:
            rules.append((_any(unused), ErrorCause.NONZERO_UNUSED))
        if info.requires != Unit.NONE and info.requires not in shape.units:
            rules.append((Const(1), ErrorCause.NOT_BUILT))
        codec = code in (Opcode.ENCODE, Opcode.DECODE)
        rows = w.imm[:4] if code in isa.ROW_OPCODES else Const(1, 4)
        if codec:
            rules.append(((w.imm[4:] != 0) | (rows == 0), ErrorCause.BAD_IMMEDIATE))
        if code == Opcode.RECV:
            rules.append(((w.imm[4:] != 0) | (rows == 0) | rows[0], ErrorCause.BAD_IMMEDIATE))
        if code == Opcode.SEND:
            kind, total_rows, words = w.imm[4:7], Mux(w.imm[8:12] == 0, rows, w.imm[8:12]), w.imm[16:]
            bad_words = (words > shape.n) if shape.n is not None and shape.n < (1 << 16) else Const(0)
            rules.append(((rows == 0) | (kind < isa.SEND_KINDS.start) | (kind >= isa.SEND_KINDS.stop)
                          | (w.imm[12:16] != 0) | (w.slot + rows > total_rows) | bad_words,
                          ErrorCause.BAD_IMMEDIATE))
        spans = []
        for operand in info.reads + info.writes:
            if operand in isa.REGISTERS:
                continue
            name, _, span = operand.partition("+")
            spans.append(w[name] + (rows if span else 1) > shape.buffers)
        if spans:
            rules.append((_any(spans), ErrorCause.BUFFER_RANGE))
        uses_slot = self._uses_slot(info)
        target = w.imm[:isa.SLOT_BITS]
        if "slot" in info.uses:
            n = Mux(uses_slot, rows, 1) if codec else Const(1, 4)
            rules.append((w.slot + n > shape.slots, ErrorCause.SLOT_RANGE))
        if code == Opcode.CONV:
            rules.append((target >= shape.slots, ErrorCause.SLOT_RANGE))
        if not (isinstance(uses_slot, Const) and uses_slot.value == 0):
            missing = []
            for s in range(shape.slots):
                covered = (w.slot <= s) & (s < w.slot + rows)
                missing.append(covered & ~self.bound[s])
            rules.append((uses_slot & _any(missing), ErrorCause.SLOT_UNBOUND))
        if code == Opcode.CONV:
            bound = Array(self.bound[s] for s in range(shape.slots))
            rules.append((~bound[target], ErrorCause.SLOT_UNBOUND))
        if code == Opcode.CFG_PRIME:
            pid = w.imm[27:]
            lows = Array(Const(shape.primes[i] & _LOW27 if i < len(shape.primes) else 0, 27)
                         for i in range(32))
            rules.append((pid >= len(shape.primes), ErrorCause.BAD_IMMEDIATE))
            rules.append((lows[pid] != w.imm[:27], ErrorCause.PRIME_MISMATCH))
        bad = {Opcode.LOAD: w.flags[1:] != 0, Opcode.MOVE: w.flags[1:] != 0,
               Opcode.NTT: w.flags[1:] != 0, Opcode.ADD: w.flags[2] & (w.flags[:2] != 0),
               Opcode.ENCODE: (w.flags[1:] != 0) | (w.flags[0] & (rows != 1)),
               Opcode.SUB: w.flags[2:] != 0, Opcode.MUL: w.flags[2:] != 0,
               Opcode.SAMPLE: w.flags >= len(SampleKind),
               Opcode.CONV: (w.flags >= len(isa.ConvKind)) | (w.imm[isa.SLOT_BITS:] != 0),
               Opcode.NOTIFY: w.imm[16:] != 0, Opcode.CFG_NET_SEGMENT: w.imm > isa.MAX_SEGMENT,
               Opcode.CFG_SCALE: w.imm != shape.log_scale,
               Opcode.CFG_RUBATO: (w.imm >= len(isa.RUBATO_SET_IDS)) if shape.rubato_set is None
               else (w.imm != shape.rubato_set)}
        if code in (Opcode.RUBATO_STREAM, Opcode.RUBATO_ENC):
            blocks = w.imm[24:]
            bad[code] = (blocks == 0) | (w.flags[1:] != 0)
            if shape.n is not None and shape.rubato_set is not None:
                ell = rubato_params(isa.RUBATO_SET_IDS[shape.rubato_set]).l
                bad[code] = bad[code] | (blocks * ell > shape.n)
        if code in bad:
            rules.append((bad[code], ErrorCause.BAD_IMMEDIATE))
        return rules, rows

    def _uses_slot(self, info):
        """1 when the instruction uses its slot's prime (``uses_slot`` of ``isa.check``)."""
        w = self.word
        if info.code == Opcode.ADD:
            return w.flags != isa.INTEGER_ADD
        if info.needs_slot:
            return Const(1)
        if info.code in (Opcode.LOAD, Opcode.MOVE):
            return w.flags[0]
        if info.code == Opcode.SAMPLE:
            return w.flags == SampleKind.UNIFORM
        return Const(0)

    def _masks(self, info, rows):
        """(reads, writes) masks of opcode ``info`` (R bits each)."""
        w, nb = self.word, self.shape.buffers
        register_bit = isa.register_bits(self.shape)
        out = []
        for operands in (info.reads, info.writes):
            bits = [Const(0)] * self.resources
            for operand in operands:
                if operand in isa.REGISTERS:
                    if operand in register_bit:
                        bits[register_bit[operand]] = Const(1)
                    continue
                name, _, span = operand.partition("+")
                base = w[name]
                for i in range(nb):
                    hit = (base <= i) & (i < base + rows) if span else (base == i)
                    bits[i] = bits[i] | hit
            out.append(_cat(bits))
        return out

    def elaborate(self, platform):
        m = Module()
        w = self.word
        with m.Switch(w.opcode):
            for code, info in isa.OPCODES.items():
                with m.Case(code):
                    rules, rows = self._rules(m, info)
                    cause = Const(ErrorCause.NONE, 4)
                    for cond, why in reversed(rules):
                        cause = Mux(cond, why, cause)
                    reads, writes = self._masks(info, rows)
                    m.d.comb += [
                        self.cause.eq(cause),
                        self.unit.eq(info.unit),
                        self.serialising.eq(code in isa.SERIALISING),
                        self.nop.eq(code == Opcode.NOP),
                        self.reads.eq(reads),
                        self.writes.eq(writes),
                    ]
            with m.Default():
                m.d.comb += self.cause.eq(ErrorCause.UNKNOWN_OPCODE)
        return m


def _any(terms):
    out = terms[0]
    for t in terms[1:]:
        out = out | t
    return out


def _cat(bits):
    from amaranth.hdl import Cat
    return Cat(*bits)
