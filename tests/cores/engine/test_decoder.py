"""The RTL instruction check (:class:`InstructionDecoder`) against the Python rules it implements
(``isa.check``, ``isa.reads_writes``): thousands of random words biased towards every opcode and
the boundary of every rule, on several engine shapes with the bound slots varied per word, and a
hand-made word for every cause (each also confirmed by ``isa.check``)."""

import random

import pytest
from amaranth.sim import Simulator

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.decoder import InstructionDecoder, instruction_layout
from hhe_gen.cores.engine.isa import ErrorCause as E
from hhe_gen.cores.engine.isa import Instruction as I
from hhe_gen.cores.engine.isa import Opcode as O
from hhe_gen.cores.engine.isa import Unit
from hhe_gen.params.errors import ParameterError

from ._helpers import random_word, restricted, shapes

WORDS = 4000


def rtl_check(shape, cases):
    """(cause, unit, serialising, nop, reads, writes) of the decoder for each (word, bound set)."""
    dut = InstructionDecoder(shape)
    out = []

    async def bench(ctx):
        for word, bound in cases:
            ctx.set(dut.word.as_value(), word)
            ctx.set(dut.bound, sum(1 << s for s in bound))
            out.append(tuple(ctx.get(s) for s in (dut.cause, dut.unit, dut.serialising, dut.nop,
                                                  dut.reads, dut.writes)))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    return out


def python_check(shape, word, bound):
    """The decoder's outputs as the Python rules give them.  The masks are ``isa.reads_writes``
    restricted to buffers 0 .. B-1 and the registers (bit B the seed, B + 1 the Rubato registers).
    For a malformed word the register bits are taken from the opcode's operands: ``reads_writes``
    names buffers 32 and 33 of a row range that runs past b31 (e.g. ``encode dst=31 rows=7``) by the
    same numbers as the registers (``isa.SEED`` = 32, ``isa.RUBATO_REGISTERS`` = 33), so its sets
    cannot tell them apart there (only for words ``check`` refuses)."""
    ins = isa.decode(word)
    reads, writes = isa.reads_writes(ins)
    info = ins.info
    cause = isa.check(ins, shape, bound)
    if cause != E.NONE:
        regs = isa.REGISTERS
        reads = {r for r in reads if r not in regs.values()} | {regs[o] for o in (info.reads if info else ()) if o in regs}
        writes = {r for r in writes if r not in regs.values()} | {regs[o] for o in (info.writes if info else ())
                                                                  if o in regs}
    return (int(cause), int(info.unit) if info else 0,
            int(ins.opcode in isa.SERIALISING), int(ins.opcode == O.NOP),
            restricted(reads, shape), restricted(writes, shape))


def test_instruction_layout_matches_fields():
    layout = instruction_layout()
    assert layout.size == isa.WORD_BITS
    for f in isa.FIELDS:
        assert layout[f.name].offset == f.low and layout[f.name].width == f.width


@pytest.mark.parametrize("name", sorted(shapes()))
def test_random_words_equal_isa_check(name):
    shape = shapes()[name]
    rng = random.Random(name)
    cases = []
    for _ in range(WORDS):
        r = rng.random()
        if r < 0.2:
            bound = set(range(shape.slots))
        elif r < 0.3:
            bound = set()
        else:
            bound = {s for s in range(shape.slots) if rng.random() < 0.6}
        cases.append((random_word(rng, shape), bound))
    got = rtl_check(shape, cases)
    causes = set()
    for (word, bound), g in zip(cases, got):
        want = python_check(shape, word, bound)
        assert g == want, f"{isa.decode(word)} bound {sorted(bound)}: RTL {g}, isa {want}"
        causes.add(want[0])
    # the bias reaches every cause the shape can produce
    possible = set(E) - {E.AFTER_ERROR, E.DATA_RANGE}
    if shape.units >= {Unit.RUBATO, Unit.NETWORK}:
        possible.discard(E.NOT_BUILT)
    assert possible <= causes, sorted(possible - causes)


def _low(p):
    return p & ((1 << 27) - 1)


def hand_cases(shape):
    """(instruction, bound, expected cause) for every rule, on the b4s2 shape (B = 4, S = 2,
    two primes, log_scale 20, the CKKS units)."""
    q0, q1 = shape.primes
    allb = {0, 1}
    return [
        (I(0x3F), allb, E.UNKNOWN_OPCODE),
        (I(0x03), allb, E.UNKNOWN_OPCODE),
        (I(O.NOP), set(), E.NONE),
        (I(O.NOP, imm=1), allb, E.NONZERO_UNUSED),
        (I(O.FENCE, dst=1), allb, E.NONZERO_UNUSED),
        (I(O.STORE, a=1, b=2, imm=3), allb, E.NONZERO_UNUSED),
        (I(O.INTT, dst=0, a=1, slot=0, flags=1), allb, E.NONZERO_UNUSED),
        (I(O.ADD, dst=7, a=0, b=1, slot=0, c=1), allb, E.NONZERO_UNUSED),   # unused before range
        (I(O.CFG_RUBATO, imm=1), allb, E.NOT_BUILT),
        (I(O.CFG_NET_IP, imm=1, slot=1), allb, E.NONZERO_UNUSED),           # unused before built
        (I(O.CFG_NET_IP, imm=0x0A000001), allb, E.NOT_BUILT),
        (I(O.ENCODE, dst=0, a=1, slot=0, imm=0), allb, E.BAD_IMMEDIATE),
        (I(O.ENCODE, dst=0, a=1, slot=0, imm=0x12), allb, E.BAD_IMMEDIATE),
        (I(O.ENCODE, dst=2, a=1, slot=0, imm=2), allb, E.NONE),
        (I(O.ENCODE, dst=3, a=1, slot=0, imm=2), allb, E.BUFFER_RANGE),       # dst+rows > B
        (I(O.DECODE, dst=0, a=3, slot=0, imm=2), allb, E.BUFFER_RANGE),       # a+rows > B
        (I(O.ENCODE, dst=31, a=1, slot=7, imm=0), allb, E.BAD_IMMEDIATE),     # imm before range
        (I(O.LOAD, dst=4, slot=0), allb, E.BUFFER_RANGE),
        (I(O.LOAD, dst=3, slot=2), allb, E.SLOT_RANGE),
        (I(O.LOAD, dst=4, slot=2), allb, E.BUFFER_RANGE),                    # buffer before slot
        (I(O.MAC, dst=0, a=1, b=2, c=4, slot=0), allb, E.BUFFER_RANGE),
        (I(O.ENCODE, dst=0, a=1, slot=1, imm=2), allb, E.SLOT_RANGE),          # slot+rows > S
        (I(O.ENCODE, dst=0, a=1, slot=0, imm=2), {0}, E.SLOT_UNBOUND),
        (I(O.NTT, dst=0, a=1, slot=1), {0}, E.SLOT_UNBOUND),
        (I(O.NTT, dst=0, a=1, slot=2), set(), E.SLOT_RANGE),                   # range before bound
        (I(O.LOAD, dst=0, slot=1, flags=1), {0}, E.SLOT_UNBOUND),
        (I(O.LOAD, dst=0, slot=1, flags=0), set(), E.NONE),                    # no check: no prime
        (I(O.MOVE, dst=0, a=1, slot=1, flags=1), set(), E.SLOT_UNBOUND),
        (I(O.MOVE, dst=0, a=1, slot=1, flags=0), set(), E.NONE),
        (I(O.SAMPLE, dst=0, slot=1, flags=0), set(), E.SLOT_UNBOUND),           # uniform
        (I(O.SAMPLE, dst=0, slot=1, flags=1), set(), E.NONE),                   # ternary
        (I(O.SAMPLE, dst=0, slot=2, flags=1), set(), E.SLOT_RANGE),
        (I(O.CFG_PRIME, slot=1, imm=1 << 27 | _low(q1)), set(), E.NONE),
        (I(O.CFG_PRIME, slot=2, imm=1 << 27 | _low(q1)), set(), E.SLOT_RANGE),
        (I(O.CFG_PRIME, slot=0, imm=2 << 27 | _low(q1)), set(), E.BAD_IMMEDIATE),
        (I(O.CFG_PRIME, slot=0, imm=31 << 27), set(), E.BAD_IMMEDIATE),
        (I(O.CFG_PRIME, slot=0, imm=1 << 27 | _low(q0)), set(), E.PRIME_MISMATCH),
        (I(O.LOAD, dst=0, slot=0, flags=2), allb, E.BAD_IMMEDIATE),
        (I(O.LOAD, dst=0, slot=0, flags=3), set(), E.SLOT_UNBOUND),            # bound before flags
        (I(O.MOVE, dst=0, a=0, slot=0, flags=4), allb, E.BAD_IMMEDIATE),
        (I(O.NTT, dst=0, a=0, slot=0, flags=2), allb, E.BAD_IMMEDIATE),
        (I(O.NTT, dst=0, a=0, slot=0, flags=1), allb, E.NONE),
        (I(O.ENCODE, dst=0, a=0, slot=0, flags=1, imm=1), allb, E.NONE),           # signed, one row
        (I(O.ENCODE, dst=0, a=0, slot=0, flags=1, imm=2), allb, E.BAD_IMMEDIATE),  # signed needs rows = 1
        (I(O.ENCODE, dst=0, a=0, slot=0, flags=2, imm=1), allb, E.BAD_IMMEDIATE),
        (I(O.ENCODE, dst=0, a=0, slot=0, flags=1, imm=1), set(), E.SLOT_UNBOUND),  # bound before flags
        (I(O.ADD, dst=0, a=0, b=0, slot=0, flags=3), allb, E.NONE),
        (I(O.MUL, dst=0, a=0, b=0, slot=0, flags=4), allb, E.BAD_IMMEDIATE),
        (I(O.MAC, dst=0, a=0, b=0, c=0, slot=0, flags=7), allb, E.NONE),
        (I(O.NOTIFY, imm=0xFFFF), set(), E.NONE),
        (I(O.NOTIFY, imm=0x10000), set(), E.BAD_IMMEDIATE),
        (I(O.CFG_SCALE, imm=20), set(), E.NONE),
        (I(O.CFG_SCALE, imm=21), set(), E.BAD_IMMEDIATE),
        (I(O.LDSEED, imm=0xFFFFFFFF), set(), E.NONE),
        (I(O.LDSEED, imm=1, dst=1), set(), E.NONZERO_UNUSED),
    ]


def test_hand_made_cases():
    shape = shapes()["b4s2"]
    cases = hand_cases(shape)
    for ins, bound, cause in cases:
        assert isa.check(ins, shape, bound) == cause, (ins, bound)
    got = rtl_check(shape, [(isa.encode(ins), bound) for ins, bound, _ in cases])
    for (ins, bound, cause), g in zip(cases, got):
        assert g[0] == cause, f"{ins} bound {sorted(bound)}: RTL cause {E(g[0]).name}, want {cause.name}"
        assert g == python_check(shape, isa.encode(ins), bound)


def test_network_rubato_rules():
    shape = shapes()["b32s8"]
    cases = [(I(O.CFG_RUBATO, imm=5), E.NONE), (I(O.CFG_RUBATO, imm=6), E.BAD_IMMEDIATE),
             (I(O.RUBATO_KEY, a=31), E.NONE), (I(O.RUBATO_KEY, a=1, imm=1), E.NONZERO_UNUSED),
             (I(O.RUBATO_STREAM, dst=3, flags=1, imm=5 << 24 | 0xFFFFFF), E.NONE),
             (I(O.RUBATO_STREAM, dst=3, imm=7), E.BAD_IMMEDIATE),                 # 0 blocks
             (I(O.RUBATO_ENC, dst=3, a=4, flags=2, imm=1 << 24), E.BAD_IMMEDIATE),
             (I(O.RUBATO_ENC, dst=3, a=4, slot=1, imm=1 << 24), E.NONZERO_UNUSED),
             (I(O.CFG_NET_SEGMENT, imm=180), E.NONE), (I(O.CFG_NET_SEGMENT, imm=0), E.NONE),
             (I(O.CFG_NET_SEGMENT, imm=181), E.BAD_IMMEDIATE),
             (I(O.CFG_NET_SEGMENT, imm=0x10000), E.BAD_IMMEDIATE),
             (I(O.CFG_NET_MESSAGE, imm=0xFFFFFFFF), E.NONE),
             (I(O.SEND, a=29, imm=3 | 1 << 4 | 64 << 16), E.NONE),          # b29 .. b31, W = N = 64
             (I(O.SEND, a=30, imm=3 | 1 << 4), E.BUFFER_RANGE),
             (I(O.SEND, a=0, imm=1 | 4 << 4 | 1 << 7), E.NONE),
             (I(O.SEND, a=0, imm=1 | 5 << 4), E.BAD_IMMEDIATE),             # kind 5
             (I(O.SEND, a=0, imm=1 | 0 << 4), E.BAD_IMMEDIATE),             # kind 0
             (I(O.SEND, a=0, imm=0 | 1 << 4), E.BAD_IMMEDIATE),             # rows 0
             (I(O.SEND, a=0, imm=1 | 1 << 4 | 1 << 15), E.BAD_IMMEDIATE),   # imm[15:12]
             (I(O.SEND, a=0, imm=1 | 1 << 4 | 65 << 16), E.BAD_IMMEDIATE),  # W > N
             (I(O.SEND, a=0, slot=7, imm=1 | 1 << 4 | 8 << 8), E.NONE),     # row 7 of 8
             (I(O.SEND, a=0, slot=7, imm=2 | 1 << 4 | 8 << 8), E.BAD_IMMEDIATE),   # rows 7, 8 of 8
             (I(O.SEND, a=0, slot=1, imm=1 | 1 << 4), E.BAD_IMMEDIATE),     # row 1 of 1
             (I(O.SEND, a=0, flags=1, imm=1 | 1 << 4), E.NONZERO_UNUSED),
             (I(O.CFG_NET_PORTS, imm=0xFFFFFFFF), E.NONE),
             (I(O.ENCODE, dst=24, a=0, slot=0, imm=8), E.NONE),
             (I(O.ENCODE, dst=25, a=0, slot=0, imm=8), E.BUFFER_RANGE),
             (I(O.DECODE, dst=0, a=24, slot=0, imm=8), E.NONE),
             (I(O.DECODE, dst=0, a=1, slot=1, imm=8), E.SLOT_RANGE),
             (I(O.DECODE, dst=0, a=1, slot=0, imm=9), E.SLOT_RANGE),
             (I(O.SAMPLE, dst=0, slot=0, flags=3), E.NONE),
             (I(O.SAMPLE, dst=0, slot=0, flags=4), E.BAD_IMMEDIATE)]
    for ins, cause in cases:
        assert isa.check(ins, shape, set(range(8))) == cause
    got = rtl_check(shape, [(isa.encode(ins), set(range(8))) for ins, _ in cases])
    assert [E(g[0]) for g in got] == [c for _, c in cases]


def test_masks_of_well_formed_words_are_the_whole_sets():
    """For well-formed words the restriction to B buffers + seed loses nothing."""
    shape = shapes()["b7s3"]
    rng = random.Random(5)
    for _ in range(2000):
        word = random_word(rng, shape)
        ins = isa.decode(word)
        if isa.check(ins, shape, set(range(3))) == E.NONE:
            reads, writes = isa.reads_writes(ins)
            assert all(r < shape.buffers or r in isa.REGISTERS.values() for r in reads | writes)


def test_bad_shape_is_refused():
    with pytest.raises(ParameterError, match="shape"):
        InstructionDecoder((4, 2))
