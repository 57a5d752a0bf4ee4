"""The assembler and disassembler (hhe_gen.engine.asm): words of hand-written lines, round trips
over random programs and random words, error messages, program images."""

import dataclasses
import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.isa import EngineShape, ErrorCause, Instruction, Unit
from hhe_gen.engine import asm
from hhe_gen.engine.asm import AssemblyError
from hhe_gen.params import ParameterError

Q0, Q1, Q2 = 1073741441, 1073739649, 1073736961
SHAPE = EngineShape(buffers=16, slots=3, primes=(Q0, Q1, Q2), log_scale=20)
WIDE = EngineShape(buffers=32, slots=8, primes=(Q0, Q1, Q2), log_scale=20, units=frozenset(Unit) - {Unit.NONE})


def word(op, dst=0, a=0, b=0, c=0, slot=0, flags=0, imm=0):
    return op << 58 | dst << 53 | a << 48 | b << 43 | c << 38 | slot << 35 | flags << 32 | imm


# Each line with the word it must give (the fields written out by hand).
LINES = [
    ("nop", word(0x00)),
    ("fence", word(0x01)),
    ("notify 1", word(0x02, imm=1)),
    ("cfg.prime s0, p1", word(0x08, slot=0, imm=1 << 27 | Q1 % (1 << 27))),
    (f"cfg.prime s2, p0, low={Q0 % (1 << 27):#x}", word(0x08, slot=2, imm=Q0 % (1 << 27))),
    ("cfg.scale 20", word(0x09, imm=20)),
    ("load b3, s0, 0x1000, check", word(0x10, dst=3, slot=0, flags=1, imm=0x1000)),
    ("load b3, 0x1000", word(0x10, dst=3, imm=0x1000)),
    ("load b3, s2, 4096", word(0x10, dst=3, slot=2, imm=0x1000)),
    ("store b2, 0x2000", word(0x11, a=2, imm=0x2000)),
    ("ldseed 0x30", word(0x12, imm=0x30)),
    ("sample b5, gaussian, domain=3, nonce=0", word(0x18, dst=5, flags=3, imm=3 << 24)),
    ("sample b5, s1, uniform, domain=5, nonce=2", word(0x18, dst=5, slot=1, flags=0, imm=5 << 24 | 2)),
    ("sample b5, uniform, nonce=9, domain=uniform_a", word(0x18, dst=5, flags=0, imm=5 << 24 | 9)),
    ("sample b1, ternary, domain=2, nonce=0x123456", word(0x18, dst=1, flags=1, imm=2 << 24 | 0x123456)),
    ("sample b1, hamming, domain=1, nonce=0", word(0x18, dst=1, flags=2, imm=1 << 24)),
    ("ntt b1, b0, s0, lift=a", word(0x20, dst=1, a=0, slot=0, flags=1)),
    ("intt b1, b0, s2", word(0x21, dst=1, a=0, slot=2)),
    ("add b1, b2, b3, s1", word(0x28, 1, 2, 3, slot=1)),
    ("sub b1, b2, b3, s1, lift=b", word(0x29, 1, 2, 3, slot=1, flags=2)),
    ("mul b1, b2, b3, s1, lift=ab", word(0x2A, 1, 2, 3, slot=1, flags=3)),
    ("mac b2, b1, b3, b4, s0", word(0x2B, 2, 1, 3, 4, slot=0)),
    ("msub b2, b1, b3, b4, s0, lift=ca", word(0x2C, 2, 1, 3, 4, slot=0, flags=5)),
    ("move b1, b2", word(0x2D, 1, 2)),
    ("move b1, b2, s1, lift=a", word(0x2D, 1, 2, slot=1, flags=1)),
    ("encode b4, b0, s0, rows=3", word(0x30, 4, 0, slot=0, imm=3)),
    ("decode b4, b0, s1, rows=2", word(0x31, 4, 0, slot=1, imm=2)),
    ("  MAC   B2,B1 , b3,b4,S0   ; comment", word(0x2B, 2, 1, 3, 4)),
    (".word 0xffffffffffffffff", (1 << 64) - 1),
]


@pytest.mark.parametrize("line,expected", LINES, ids=[l for l, _ in LINES])
def test_a_line_gives_the_expected_word(line, expected):
    assert asm.assemble(line, SHAPE) == [expected]


def test_network_and_rubato_lines():
    assert asm.assemble("cfg.net.ip 10.0.0.2\ncfg.net.ports 49152, 4791\ncfg.net.segment 180\ncfg.rubato 2\n"
                        "cfg.net.message 0xdeadbeef", WIDE) == [
        word(0x0B, imm=0x0A000002), word(0x0C, imm=49152 << 16 | 4791), word(0x0D, imm=180), word(0x0A, imm=2),
        word(0x0E, imm=0xDEADBEEF)]


def test_send_lines_and_their_refusals():
    # imm: rows [3:0], kind [6:4] (c0 1, c1 2, rubato 3, slots 4), ntt [7], words [31:16]
    assert asm.assemble("send b2, c0, rows=3, ntt\nsend b0, rubato, rows=1, words=96\nsend b1, C1, rows=2",
                        WIDE) == [word(0x38, a=2, imm=3 | 1 << 4 | 1 << 7), word(0x38, imm=1 | 3 << 4 | 96 << 16),
                                  word(0x38, a=1, imm=2 | 2 << 4)]
    assert asm.disassemble([word(0x38, a=2, imm=3 | 1 << 4 | 1 << 7)], WIDE) == "send b2, c0, rows=3, ntt\n"
    n_shape = dataclasses.replace(WIDE, n=64)
    for line, why in [("cfg.net.segment 182", "BAD_IMMEDIATE"), ("send b0, c2, rows=1", "packet kind"),
                      ("send b0, c0, rows=0", "rows=R"), ("send b0, c0, rows=1, words=65", "BAD_IMMEDIATE"),
                      ("send b30, c0, rows=3", "BUFFER_RANGE")]:
        with pytest.raises(asm.AssemblyError, match=why):
            asm.assemble(line, n_shape)
    assert asm.assemble("send b0, c0, rows=1, words=64", n_shape) == [word(0x38, imm=1 | 1 << 4 | 64 << 16)]
    assert asm.assemble("send b7, s1, c1, rows=1, of=3\nsend b7, s2, c1, rows=1, of=3", n_shape) == [
        word(0x38, a=7, slot=1, imm=1 | 2 << 4 | 3 << 8), word(0x38, a=7, slot=2, imm=1 | 2 << 4 | 3 << 8)]
    assert asm.disassemble([word(0x38, a=7, slot=1, imm=1 | 2 << 4 | 3 << 8)], WIDE) == "send b7, s1, c1, rows=1, of=3\n"
    with pytest.raises(asm.AssemblyError, match="BAD_IMMEDIATE"):
        asm.assemble("send b7, s3, c1, rows=1, of=3", n_shape)                     # row 3 of 3
    # kind 5, imm[15:12], rows 0, W > N, slot + rows > T
    for slot, imm in ((0, 1 | 5 << 4), (0, 1 | 1 << 4 | 1 << 12), (0, 1 << 4), (0, 1 | 1 << 4 | 65 << 16),
                      (1, 1 | 1 << 4), (2, 2 | 1 << 4 | 3 << 8)):
        assert isa.check(isa.decode(word(0x38, slot=slot, imm=imm)), n_shape, frozenset()) == \
            isa.ErrorCause.BAD_IMMEDIATE


def test_comments_and_blank_lines_give_no_words():
    assert asm.assemble("\n; only a comment\n   \nnop ; x\n", SHAPE) == [0]


def _random_instruction(rng, shape):
    """A random instruction that isa.check accepts (all slots bound)."""
    while True:
        opcode = rng.choice(sorted(isa.OPCODES))
        info = isa.OPCODES[opcode]
        f = {}
        for name in ("dst", "a", "b", "c"):
            if name in info.uses:
                f[name] = rng.randrange(shape.buffers)
        if "slot" in info.uses:
            f["slot"] = rng.randrange(shape.slots)
        if "flags" in info.uses:
            f["flags"] = rng.choice([0, 1, rng.randrange(8)])
        if "imm" in info.uses:
            f["imm"] = rng.choice([1, rng.randrange(16), rng.randrange(1 << 16), rng.randrange(1 << 32)])
        if opcode == isa.Opcode.CFG_PRIME:
            pid = rng.randrange(len(shape.primes))
            f["imm"] = pid << 27 | shape.primes[pid] % (1 << 27)
        if opcode == isa.Opcode.CFG_SCALE:
            f["imm"] = shape.log_scale
        if opcode == isa.Opcode.SEND:
            f["imm"] = rng.randrange(1, 4) | rng.randrange(1, 5) << 4 | rng.randrange(2) << 7 | \
                rng.randrange(12, 16) << 8 | rng.randrange(1 << 16) << 16
        ins = Instruction(opcode, **f)
        if isa.check(ins, shape, frozenset(range(shape.slots))) == ErrorCause.NONE:
            return ins


@pytest.mark.parametrize("shape", [SHAPE, WIDE], ids=["ckks", "all-units"])
def test_round_trip_of_random_well_formed_programs(shape):
    rng = random.Random(11)
    words = [isa.encode(_random_instruction(rng, shape)) for _ in range(600)]
    assert {isa.decode(w).opcode for w in words} == {c for c, i in isa.OPCODES.items()
                                                     if i.requires in shape.units | {Unit.NONE}}
    text = asm.disassemble(words, shape)
    assert ".word" not in text
    assert asm.assemble(text, shape) == words
    assert asm.disassemble(asm.assemble(text, shape), shape) == text        # canonical text
    bare = asm.disassemble(words)                                           # no shape: cfg.prime keeps low=
    assert asm.assemble(bare) == words
    assert asm.assemble(asm.disassemble(words, list(shape.primes)), list(shape.primes)) == words


def test_round_trip_of_random_words_malformed_ones_as_word():
    rng = random.Random(5)
    words = [rng.randrange(1 << 64) for _ in range(300)]
    words += [rng.choice(sorted(isa.OPCODES)) << 58 | rng.randrange(1 << 40) for _ in range(300)]
    for shape in (SHAPE, None):
        text = asm.disassemble(words, shape)
        assert asm.assemble(text, shape) == words
        for w, line in zip(words, text.splitlines()):
            cause = isa.check(isa.decode(w), shape or WIDE, frozenset(range(8)))
            if line.startswith(".word"):
                assert int(line.split()[1], 16) == w
                assert f"malformed: {cause.name}" in line


def test_malformed_word_shows_its_cause():
    line = asm.disassemble([word(0x21, 1, 0, flags=1)], SHAPE).strip()
    assert line.startswith(".word 0x8420000100000000 ; malformed: NONZERO_UNUSED")
    assert "BUFFER_RANGE" in asm.disassemble([word(0x28, 20, 1, 2)], SHAPE)
    assert "PRIME_MISMATCH" in asm.disassemble([word(0x08, imm=5)], SHAPE)


ERRORS = [
    # (source, line number, token in the message, words in the "allowed" part)
    ("nop\nmac b2, b1, b33, b4, s0", 2, "b33", "b0 .. b15"),
    ("ntt b1, b0", 1, None, "sK"),
    ("nop\n\nfrob b1", 3, "frob", "mnemonic"),
    ("sample b5, normal, domain=3, nonce=0", 1, "normal", "gaussian"),
    ("add b1, b2, b3, s0, lift=c", 1, "c", "a, b"),
    ("ntt b1, b0, s3", 1, "s3", "s0 .. s2"),
    ("cfg.prime s0, p3", 1, "p3", "p0 .. p2"),
    ("cfg.scale 21", 1, "cfg.scale 21", "cfg.scale 20"),
    ("cfg.prime s2, p0, low=0x1234", 1, "cfg.prime s2, p0, low=0x1234", "PRIME_MISMATCH"),
    ("cfg.rubato 1", 1, "cfg.rubato 1", "NOT_BUILT"),
    ("load b1, s0, 0x100, check, check", 1, "check", "once"),
    ("load b1, s0, 0x1_0000_0000", 1, "0x1_0000_0000", "0 .. 4294967295"),
    ("encode b1, b0, s0, rows=0", 1, "0", "1 .. 15"),
    ("encode b14, b0, s0, rows=3", 1, "encode b14, b0, s0, rows=3", "BUFFER_RANGE"),
    ("notify 70000", 1, "notify 70000", "BAD_IMMEDIATE"),
    ("store b1, 0x10, lift=a", 1, "lift=a", "keyword"),
    ("add b1, lift=a, b2, b3, s0", 1, "b2", "before the keywords"),
    ("intt b1, b0, s0, b4", 1, "b4", "no further operand"),
    ("sample b1, ternary, domain=256, nonce=0", 1, "256", "0 .. 255"),
    (".word 0x1_0000_0000_0000_0000", 1, "0x1_0000_0000_0000_0000", "64-bit"),
    ("add b1,, b2, s0", 1, "", "between commas"),
]


@pytest.mark.parametrize("source,number,token,allowed", ERRORS, ids=[e[0].splitlines()[-1] for e in ERRORS])
def test_errors_name_the_line_the_token_and_what_is_allowed(source, number, token, allowed):
    with pytest.raises(AssemblyError) as info:
        asm.assemble(source, SHAPE)
    err = info.value
    text = source.splitlines()[number - 1]
    assert err.line_number == number and err.token == token
    message = str(err)
    assert message.startswith(f"line {number}: {text.strip()!r}: ")
    assert (f"{token!r} is not allowed" if token is not None else "missing") in message
    assert allowed in message
    assert isinstance(err, ValueError) and isinstance(err, ParameterError)


def test_cfg_prime_without_primes_needs_low():
    with pytest.raises(AssemblyError, match="primes"):
        asm.assemble("cfg.prime s0, p0")
    assert asm.assemble("cfg.prime s2, p0, low=0x1234") == [word(0x08, slot=2, imm=0x1234)]
    assert asm.assemble("cfg.prime s0, p0", [Q0, Q1]) == [word(0x08, imm=Q0 % (1 << 27))]


def test_image_formats():
    words = [0x0102030405060708, 0, (1 << 64) - 1]
    data = asm.image_bytes(words)
    assert data[:8] == bytes([8, 7, 6, 5, 4, 3, 2, 1]) and len(data) == 24
    assert asm.words_from_bytes(data) == words
    assert asm.image_hex(words) == "0102030405060708\n0000000000000000\nffffffffffffffff\n"
    assert asm.words_from_hex("// program\n0102030405060708\n\n0\nFFFFFFFFFFFFFFFF // last\n") == words
    with pytest.raises(ParameterError, match="multiple of 8"):
        asm.words_from_bytes(b"123")
    with pytest.raises(AssemblyError, match="line 2"):
        asm.words_from_hex("00\nxyz\n")
    with pytest.raises(ParameterError, match="64-bit"):
        asm.image_bytes([1 << 64])


def test_image_files(tmp_path):
    words = asm.assemble("cfg.prime s0, p0\nntt b1, b0, s0\nnotify 7", SHAPE)
    for name in ("prog.bin", "prog.hex"):
        path = asm.write_image(tmp_path / name, words)
        assert asm.read_image(path) == words
    assert (tmp_path / "prog.hex").read_text().splitlines()[2] == f"{word(0x02, imm=7):016x}"
    assert (tmp_path / "prog.bin").stat().st_size == 24


def test_syntax_strings():
    assert asm.syntax(isa.Opcode.MAC) == "mac bD, bA, bB, bC, sK[, lift=abc]"
    assert asm.syntax(isa.Opcode.LOAD) == "load bD[, sK], ADDR[, check]"
    assert asm.syntax(isa.Opcode.NOP) == "nop"
