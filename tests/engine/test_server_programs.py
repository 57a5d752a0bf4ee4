"""The server-side programs and ``conv`` on the ISA model, against hhe_gen.models.ckks_eval.

- ``conv``'s three centrings equal the model's basis conversions (the decomposition's one-prime
  digits, the rescale's rounding, ModDown's extension of one P prime with Lattigo's double-precision
  estimate) on both sides of every threshold, for DNA-HHE's 61-bit P where the estimate moves it;
- its malformed forms give their causes (kind, immediate, destination slot, the unit not built);
- hmult, relinearize, rescale and mul_relin_rescale on EngineModel equal the model step for step
  (toy, DNA-HHE and flexible-218 at N = 2^13, a ciphertext below the top level);
- bad parameters and shapes name what is wrong.
"""

import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.isa import ErrorCause, Instruction, Opcode, Unit
from hhe_gen.engine import asm
from hhe_gen.engine import server_memory as sm
from hhe_gen.engine import server_programs as sp
from hhe_gen.engine.model import EngineModel
from hhe_gen.models import ckks, ckks_eval
from hhe_gen.models.rns_basis import decompose, div_round_by_last, mod_down
from hhe_gen.params import preset
from hhe_gen.params.ckks import CKKSParams, RingParams
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.primes import ntt_primes

DNA = preset("dna-hhe")
N = 16


def _conv_model(q_src, q_dst, kind, values):
    shape = isa.EngineShape(4, 2, (q_src, q_dst), 0, isa.SERVER_UNITS, n=N)
    m = EngineModel(shape, N)
    m.buffers[0] = list(values)
    text = f"cfg.prime s0, p0\ncfg.prime s1, p1\nconv b1, b0, s0, {kind}, to=s1\n"
    assert m.run(asm.assemble(text, shape)) == ErrorCause.NONE
    return m.buffers[1]


def _around(threshold, q):
    values = [0, 1, q - 1, threshold - 2, threshold - 1, threshold, threshold + 1, (q - 1) // 2, (q + 1) // 2]
    return (values + [random.Random(q).randrange(q) for _ in range(N)])[:N]


@pytest.mark.parametrize("src, dst", [(0, 1), (1, 0), (2, 0)])
def test_digit_equals_the_decomposition(src, dst):
    qs = list(DNA.moduli)
    x = _around(qs[src] >> 1, qs[src])
    rows = [[v % q for v in x] for q in qs]          # x mod q_src in its own row; the others do not matter
    digits = decompose(rows, qs, DNA.special_moduli)
    assert _conv_model(qs[src], qs[dst], "digit", x) == digits[src][dst]


def test_round_equals_the_rescale():
    qs = list(DNA.moduli)
    q_last = qs[-1]
    x = _around((q_last + 1) // 2, q_last)
    rows = [[0] * N, [0] * N, x]                     # rows 0, 1 zero: the result is -t / q_last
    expected = div_round_by_last(rows, qs)
    for i in (0, 1):
        t = _conv_model(q_last, qs[i], "round", x)
        assert [(-v) * pow(q_last, -1, qs[i]) % qs[i] for v in t] == expected[i]


def test_extend_equals_moddown_with_lattigos_estimate():
    qs, p = list(DNA.moduli), DNA.special_moduli[0]
    half = (p - 1) // 2
    # 129 values below floor(P/2) + 1 are also centred down: x + (P - 1)/2 rounds to float64(P)
    edge = [x for x in range(half - 200, half + 2) if float(x + half) == float(p)][0]
    assert edge < half + 1
    x = _around(edge, p)
    rows = [[0] * N for _ in qs] + [x]               # the Q rows zero: the result is -[x]_P / P
    expected = mod_down(rows, qs, [p])
    for j, q in enumerate(qs):
        t = _conv_model(p, q, "extend", x)
        assert [(-v) * pow(p, -1, q) % q for v in t] == expected[j]
    got = _conv_model(p, qs[0], "extend", [edge - 1, edge] + [0] * (N - 2))[:2]
    assert got == [(edge - 1) % qs[0], (edge - p) % qs[0]]


def _word(**fields):
    base = dict(dst=1, a=0, b=0, c=0, slot=0, flags=0, imm=1)
    base.update(fields)
    return Instruction(Opcode.CONV, **base)


@pytest.mark.parametrize("fields, cause", [
    ({"flags": 3}, ErrorCause.BAD_IMMEDIATE),
    ({"imm": 9}, ErrorCause.BAD_IMMEDIATE),
    ({"imm": 3}, ErrorCause.SLOT_RANGE),
    ({"imm": 2}, ErrorCause.SLOT_UNBOUND),
    ({"b": 1}, ErrorCause.NONZERO_UNUSED),
    ({}, ErrorCause.NONE),
])
def test_malformed_conv(fields, cause):
    shape = isa.EngineShape(4, 3, (97, 193, 7681), 0, isa.SERVER_UNITS)
    assert isa.check(_word(**fields), shape, {0, 1}) == cause


def test_conv_needs_the_basis_unit():
    shape = isa.EngineShape(4, 3, (97, 193, 7681), 0, isa.CKKS_UNITS)
    assert isa.check(_word(), shape, {0, 1}) == ErrorCause.NOT_BUILT
    assert Unit.BASIS not in isa.CKKS_UNITS


def test_conv_assembles_and_disassembles():
    shape = isa.EngineShape(4, 3, (97, 193, 7681), 0, isa.SERVER_UNITS)
    line = "conv b2, b1, s2, extend, to=s0"
    words = asm.assemble(line, shape)
    assert asm.disassemble(words, shape).strip() == line
    with pytest.raises(asm.AssemblyError, match="conversion kind"):
        asm.assemble("conv b2, b1, s2, nearest, to=s0", shape)
    with pytest.raises(asm.AssemblyError, match="to= a prime slot"):
        asm.assemble("conv b2, b1, s2, digit, to=s3", shape)


def _run(params, level=None, buffers=32):
    """The three programs one by one (every intermediate checked), then mul_relin_rescale fused and
    through memory (the result checked)."""
    keys = ckks.keygen(params, seed=1)
    rng = random.Random(2)
    slots = [complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(params.slots)]
    a = ckks.encrypt_slots(params, keys, slots, seed=3, level=level)
    b = ckks.encrypt_slots(params, keys, slots, seed=4, mode="sk", level=level)
    rlk = ckks_eval.relin_keygen(params, keys.sk, seed=5)
    shape = sp.server_shape(params, buffers)
    layout = sm.ServerMemoryMap.for_params(params)
    memory = {}
    sm.write_server_ciphertext(memory, layout, params, a, ("a0", "a1"))
    sm.write_server_ciphertext(memory, layout, params, b, ("b0", "b1"))
    sm.write_relin_key(memory, layout, params, rlk)
    sm.write_constants(memory, layout, params)
    rows = a.level + 1
    t = ckks_eval.tensor(params, a, b)
    r = ckks_eval.relinearize(params, t, rlk)
    s = ckks_eval.rescale(params, r)
    model = EngineModel(shape, params.n)
    model.memory = dict(memory)
    for step, names, want, count in ((sp.hmult, ("d0", "d1", "d2"), t, rows), (sp.relinearize, ("c0", "c1"), r, rows),
                                     (sp.rescale, ("r0", "r1"), s, rows - 1)):
        program = step(params, shape, level=level)
        assert model.run(program.words) == ErrorCause.NONE and model.events[-1] == program.notify
        got = sm.read_server_ciphertext(model.memory, layout, params, names, count, want.scale)
        assert got.to_form(params, "coeff").components == want.components, names
    programs = {}
    for fused in (True, False):
        if fused and buffers < sp.fused_min_buffers(rows):
            continue
        program = programs[fused] = sp.mul_relin_rescale(params, shape, level=level, fused=fused)
        model = EngineModel(shape, params.n)
        model.memory = dict(memory)
        assert model.run(program.words) == ErrorCause.NONE and model.events == [program.notify]
        got = sm.read_server_ciphertext(model.memory, layout, params, ("r0", "r1"), rows - 1, s.scale)
        assert got.to_form(params, "coeff").components == s.components, fused
    return programs


def test_toy_program_equals_the_model():
    programs = _run(preset("toy"))
    for program in programs.values():
        convs = [line for line in program.text.splitlines() if line.startswith("conv")]
        # R = 2 rows: each digit into the other prime and P (R * R), ModDown (2 R), rescale (2 (R - 1))
        assert len(convs) == 2 * 2 + 2 * 2 + 2 * 1
    fused, through_memory = programs[True].text, programs[False].text
    assert "store" not in "".join(line for line in fused.splitlines() if "d0[" in line or "c0[" in line)
    assert fused.count("store") == 2 * 1 and "fence" not in fused        # r0, r1 only
    assert through_memory.count("fence") == 2


def test_dna_hhe_equals_the_model():
    _run(DNA)


def test_one_level_down_equals_the_model():
    _run(DNA, level=1)


def test_flexible_218_equals_the_model():
    programs = _run(preset("flexible-218"))
    assert list(programs) == [False]                  # 6 primes: the fused program needs 37 buffers


def test_bad_parameters_and_shapes():
    two_p = CKKSParams(RingParams(64, tuple(ntt_primes(64, 30, 2))), 20,
                       tuple(ntt_primes(64, 31, 2)), name="2p")
    with pytest.raises(ParameterError, match="P"):
        sp.server_shape(two_p)
    toy = preset("toy")
    with pytest.raises(ParameterError, match="buffers"):
        sp.relinearize(toy, sp.server_shape(toy, buffers=8))
    client = isa.EngineShape(32, 3, tuple(toy.moduli) + tuple(toy.special_moduli), toy.log_scale, isa.CKKS_UNITS)
    with pytest.raises(ParameterError, match="units"):
        sp.hmult(toy, client)
    with pytest.raises(ParameterError, match="level"):
        sp.rescale(toy, sp.server_shape(toy), level=0)
    assert sp.server_min_buffers("relinearize", 2) == 2 * 3 + 2 + 4
    assert sp.fused_min_buffers(6) == 3 * 6 + 2 * 7 + 1 + 4
    with pytest.raises(ParameterError, match="program"):
        sp.server_min_buffers("bootstrap", 2)
