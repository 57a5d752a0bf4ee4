"""The instruction word (cores/engine/isa.py): field placement written out here by hand from the
documented layout, encode/decode round trips, and one hand-made word per error cause."""

import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.isa import EngineShape, ErrorCause, Instruction, Opcode, Unit
from hhe_gen.params import ParameterError

Q0, Q1 = 1073741441, 1073739649          # the toy preset's primes (any two odd numbers would do)
SHAPE = EngineShape(buffers=8, slots=2, primes=(Q0, Q1), log_scale=20)


def word(op, dst=0, a=0, b=0, c=0, slot=0, flags=0, imm=0):
    """63:58 opcode | 57:53 dst | 52:48 a | 47:43 b | 42:38 c | 37:35 slot | 34:32 flags | 31:0 imm"""
    return op << 58 | dst << 53 | a << 48 | b << 43 | c << 38 | slot << 35 | flags << 32 | imm


def test_field_placement_matches_the_documented_layout():
    ins = Instruction(0x2B, dst=31, a=1, b=2, c=3, slot=5, flags=6, imm=0xDEADBEEF)
    assert isa.encode(ins) == 0xAFE1_10EE_DEAD_BEEF
    assert isa.encode(ins) == word(0x2B, 31, 1, 2, 3, 5, 6, 0xDEADBEEF)
    assert isa.decode(0xAFE1_10EE_DEAD_BEEF) == ins


@pytest.mark.parametrize("opcode", sorted(isa.OPCODES))
def test_encode_decode_round_trip_random_fields(opcode):
    rng = random.Random(opcode)
    for _ in range(50):
        fields = dict(dst=rng.randrange(32), a=rng.randrange(32), b=rng.randrange(32), c=rng.randrange(32),
                      slot=rng.randrange(8), flags=rng.randrange(8), imm=rng.randrange(1 << 32))
        ins = Instruction(opcode, **fields)
        w = isa.encode(ins)
        assert w == word(opcode, **fields)
        assert isa.decode(w) == ins


def test_fields_that_do_not_fit_are_refused():
    with pytest.raises(ParameterError, match="dst"):
        isa.encode(Instruction(0, dst=32))
    with pytest.raises(ParameterError, match="imm"):
        isa.encode(Instruction(0, imm=1 << 32))
    with pytest.raises(ParameterError, match="word"):
        isa.decode(1 << 64)


_LOW = (1 << 27) - 1
CASES = [
    # (cause, word, bound slots)
    (ErrorCause.NONE, word(0x28, 1, 2, 3, 0, 0), {0}),                       # add b1, b2, b3, s0
    (ErrorCause.NONE, word(0x08, slot=1, imm=1 << 27 | Q1 & _LOW), set()),   # cfg.prime s1, p1
    (ErrorCause.NONE, word(0x18, 4, slot=1, flags=3, imm=3 << 24), set()),   # sample gaussian, slot unused
    (ErrorCause.UNKNOWN_OPCODE, word(0x3F), {0}),
    (ErrorCause.UNKNOWN_OPCODE, 0xFFFF_FFFF_FFFF_FFFF, {0}),
    (ErrorCause.BUFFER_RANGE, word(0x28, 8, 2, 3), {0}),                     # dst b8 of 8 buffers
    (ErrorCause.BUFFER_RANGE, word(0x30, 6, 0, slot=0, imm=3), {0, 1}),      # encode b6 .. b8
    (ErrorCause.BUFFER_RANGE, word(0x31, 0, 7, slot=0, imm=2), {0, 1}),      # decode reads b7 .. b8
    (ErrorCause.SLOT_RANGE, word(0x20, 1, 0, slot=2), {0, 1}),               # ntt on s2 of 2 slots
    (ErrorCause.SLOT_RANGE, word(0x30, 2, 0, slot=1, imm=2), {0, 1}),        # encode over s1 .. s2
    (ErrorCause.SLOT_RANGE, word(0x10, 1, slot=3, imm=0x100), {0, 1}),       # unchecked load, slot field still < S
    (ErrorCause.SLOT_UNBOUND, word(0x20, 1, 0, slot=1), {0}),
    (ErrorCause.SLOT_UNBOUND, word(0x10, 1, slot=1, flags=1, imm=0x100), {0}),   # checked load
    (ErrorCause.SLOT_UNBOUND, word(0x18, 1, slot=1, flags=0, imm=5 << 24), {0}),  # uniform sample
    (ErrorCause.SLOT_UNBOUND, word(0x2D, 1, 0, slot=1, flags=1), {0}),      # move with lift
    (ErrorCause.NONZERO_UNUSED, word(0x21, 1, 0, slot=0, flags=1), {0}),    # intt has no flags
    (ErrorCause.NONZERO_UNUSED, word(0x11, dst=1, a=2, imm=0x40), {0}),     # store has no dst
    (ErrorCause.NONZERO_UNUSED, word(0x00, imm=1), {0}),                     # nop
    (ErrorCause.BAD_IMMEDIATE, word(0x30, 1, 0, slot=0, imm=0), {0}),        # rows = 0
    (ErrorCause.BAD_IMMEDIATE, word(0x30, 1, 0, slot=0, imm=0x11), {0}),     # imm above rows
    (ErrorCause.BAD_IMMEDIATE, word(0x18, 1, flags=4, imm=0), {0}),          # sample kind 4
    (ErrorCause.BAD_IMMEDIATE, word(0x08, slot=0, imm=2 << 27 | Q0 & _LOW), set()),   # prime id 2 of 2
    (ErrorCause.BAD_IMMEDIATE, word(0x02, imm=1 << 16), {0}),                # notify code > 16 bits
    (ErrorCause.BAD_IMMEDIATE, word(0x10, 1, flags=2, imm=0), {0}),          # load flags bit 1
    (ErrorCause.BAD_IMMEDIATE, word(0x20, 1, 0, slot=0, flags=2), {0}),      # ntt lifts only a
    (ErrorCause.BAD_IMMEDIATE, word(0x28, 1, 0, 2, slot=0, flags=5), {0}),   # add integer with a lift
    (ErrorCause.BAD_IMMEDIATE, word(0x2a, 1, 0, 2, slot=0, flags=4), {0}),   # mul has no c
    (ErrorCause.NONE, word(0x28, 1, 0, 2, slot=1, flags=4), {0}),            # add integer: slot unbound is fine
    (ErrorCause.SLOT_UNBOUND, word(0x28, 1, 0, 2, slot=1, flags=1), {0}),    # a modular add needs it
    (ErrorCause.BAD_IMMEDIATE, word(0x09, imm=19), {0}),                     # cfg.scale != 20
    (ErrorCause.PRIME_MISMATCH, word(0x08, slot=0, imm=0 << 27 | (Q0 + 2) & _LOW), set()),
    (ErrorCause.NOT_BUILT, word(0x0A, imm=1), {0}),                          # cfg.rubato
    (ErrorCause.NOT_BUILT, word(0x0B, imm=0x0A000001), {0}),                 # cfg.net.ip
]


@pytest.mark.parametrize("cause,w,bound", CASES, ids=[f"{c.name}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_check_gives_the_expected_cause(cause, w, bound):
    assert isa.check(isa.decode(w), SHAPE, frozenset(bound)) == cause


def test_every_static_cause_has_a_case():
    static = set(ErrorCause) - {ErrorCause.AFTER_ERROR, ErrorCause.DATA_RANGE}   # model-only causes
    assert {c for c, _, _ in CASES} == static


def test_not_built_depends_on_the_units():
    shape = EngineShape(8, 2, (Q0, Q1), 20, frozenset(Unit) - {Unit.NONE})
    assert isa.check(isa.decode(word(0x0A, imm=1)), shape, frozenset()) == ErrorCause.NONE
    no_codec = EngineShape(8, 2, (Q0, Q1), 20, frozenset({Unit.MEMORY}))
    assert isa.check(isa.decode(word(0x30, 1, 0, slot=0, imm=1)), no_codec, frozenset({0})) == ErrorCause.NOT_BUILT


def test_reads_writes_of_row_ranges_and_seed():
    enc = isa.decode(word(0x30, 4, 1, slot=0, imm=3))
    assert isa.reads_writes(enc) == ({1}, {4, 5, 6})
    dec = isa.decode(word(0x31, 1, 4, slot=0, imm=3))
    assert isa.reads_writes(dec) == ({4, 5, 6}, {1})
    assert isa.reads_writes(isa.decode(word(0x18, 2, flags=1))) == ({isa.SEED}, {2})
    assert isa.reads_writes(isa.decode(word(0x2B, 1, 2, 3, 4))) == ({2, 3, 4}, {1})
    assert Opcode.CFG_PRIME in isa.SERIALISING and Opcode.NOP not in isa.SERIALISING


@pytest.mark.parametrize("kwargs,name", [({"log_scale": 256}, "log_scale"), ({"log_scale": -1}, "log_scale"),
                                         ({"units": frozenset({isa.Unit.NONE})}, "units"),
                                         ({"units": {isa.Unit.NTT}}, "units"),
                                         ({"units": frozenset({3})}, "units")])
def test_engine_shape_refuses(kwargs, name):
    args = dict(buffers=4, slots=2, primes=(97,)) | kwargs
    with pytest.raises(ParameterError, match=f"'{name}'"):
        isa.EngineShape(**args)
