"""The CKKS programs (hhe_gen.engine.programs) run on the ISA model equal hhe_gen.models.ckks with the
same seed and keys; buffer allocation; the memory map helpers."""

import cmath
import dataclasses
import math
import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.isa import ErrorCause, Opcode
from hhe_gen.engine import memory_map as mm
from hhe_gen.engine import programs
from hhe_gen.engine.model import DEFAULT_FORMAT, EngineModel, shape_for_params
from hhe_gen.models import ckks, ckks_fixed
from hhe_gen.models.ntt import ntt
from hhe_gen.params import CKKSParams, ParameterError, RingParams, ntt_primes, preset

FMT = DEFAULT_FORMAT
N256 = CKKSParams(RingParams(256, tuple(ntt_primes(256, 30, 3))), 25, name="n256-3x30")
PARAMS = {"toy": preset("toy"), "n256": N256}
SEED, KEY_SEED = 0xC0FFEE, 12345


def _slots(params, seed=3):
    rng = random.Random(seed)
    return [cmath.rect(math.sqrt(rng.random()) * 0.9, rng.uniform(-math.pi, math.pi)) for _ in range(params.slots)]


def _engine(params, buffers=32, keys=None):
    """A model with keys (already through key_setup), seed and slots in memory."""
    m = EngineModel.for_params(params, buffers=buffers)
    layout = mm.MemoryMap.for_params(params)
    keys = keys or ckks.keygen(params, KEY_SEED)
    mm.write_keys(m.memory, layout, params, keys)
    mm.write_seed(m.memory, layout, SEED)
    mm.write_slots(m.memory, layout, _slots(params), FMT)
    assert m.run(programs.key_setup(params, m.shape).words) == ErrorCause.NONE
    return m, layout, keys


def _run(m, program):
    before = len(m.events)
    assert m.run(program.words) == ErrorCause.NONE
    assert m.events[before:] == [program.notify]


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_key_setup_writes_the_keys_in_ntt_form(name):
    params = PARAMS[name]
    m, layout, keys = _engine(params)
    qs = params.moduli
    assert mm.read_rows(m.memory, layout, "sk_ntt", len(qs)) == [ntt([x % q for x in keys.sk], q) for q in qs]
    assert mm.read_rows(m.memory, layout, "pk0_ntt", len(qs)) == [ntt(r, q) for r, q in zip(keys.pk0, qs)]
    assert mm.read_rows(m.memory, layout, "pk1_ntt", len(qs)) == [ntt(r, q) for r, q in zip(keys.pk1, qs)]


CASES = [("toy", None), ("toy", 0), ("n256", None), ("n256", 1)]


@pytest.mark.parametrize("noise", ["once", "per-prime"])
@pytest.mark.parametrize("name,level", CASES)
@pytest.mark.parametrize("mode", ["pk", "sk"])
def test_encrypt_equals_the_ckks_model(name, level, mode, noise):
    """With the noise added to the signed message once (add ..., integer) and, on a shape that
    does not tell the message's bound, sampled and added mod q_i for every prime."""
    params = PARAMS[name]
    m, layout, keys = _engine(params)
    if noise == "per-prime":
        m.shape = dataclasses.replace(m.shape, message_bound=None)
    rows = params.check_level(level) + 1
    assert programs.noise_added_once(params, m.shape, rows) == (noise == "once")
    program = (programs.encrypt_pk if mode == "pk" else programs.encrypt_sk)(params, m.shape, level=level)
    integer_adds = [i for i in map(isa.decode, program.words) if isa.integer_add(i)]
    assert len(integer_adds) == (noise == "once")
    _run(m, program)
    got = mm.read_ciphertext(m.memory, layout, params, level)
    pt = ckks.encode(params, _slots(params), level=level, fmt=FMT)
    if mode == "pk":
        want = ckks.encrypt_pk(params, keys, pt, SEED, form="ntt")
    else:
        want = ckks.encrypt_sk(params, keys.sk, pt, SEED, form="ntt")
    assert got.level == want.level == params.check_level(level)
    assert got.c0 == want.c0
    assert got.c1 == want.c1


@pytest.mark.parametrize("name,level", CASES)
def test_decrypt_equals_the_ckks_model(name, level):
    params = PARAMS[name]
    m, layout, keys = _engine(params)
    pt = ckks.encode(params, _slots(params, 9), level=level, fmt=FMT)
    ct = ckks.encrypt_pk(params, keys, pt, 77)                       # coefficient form; the helper converts
    mm.write_ciphertext(m.memory, layout, params, ct)
    _run(m, programs.decrypt(params, m.shape, level=level))
    rows = ckks.decrypt(params, keys.sk, ct).rows
    want = ckks_fixed.decode_fixed(rows, list(params.moduli[:len(rows)]), FMT, params.log_scale)
    assert mm.read_fixed_slots(m.memory, layout, m.word_bits) == want


@pytest.mark.parametrize("name", sorted(PARAMS))
@pytest.mark.parametrize("mode", ["pk", "sk"])
def test_decrypt_of_encrypt_recovers_the_slots(name, mode):
    params = PARAMS[name]
    m, layout, keys = _engine(params)
    _run(m, (programs.encrypt_pk if mode == "pk" else programs.encrypt_sk)(params, m.shape))
    _run(m, programs.decrypt(params, m.shape))
    got = mm.read_slots(m.memory, layout, FMT, m.word_bits)
    # |slot error| <= sum_k |noise_k| / Delta (each slot is a sum of N coefficients times roots of
    # unity) plus the fixed-point codec's rounding (well below 2^-12 at 26 fraction bits)
    noise = ckks.noise_bound(params) if mode == "pk" else params.error.bound
    bound = params.n * noise / params.scale + 2.0 ** -12
    worst = max(abs(a - b) for a, b in zip(got, _slots(params)))
    assert worst < bound
    assert worst < 2.0 ** -6


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_fewest_buffers_give_the_same_result(name):
    params = PARAMS[name]
    rows = len(params.moduli)
    results = []
    for buffers in ("min", 32):
        big, layout, _ = _engine(params, 32)
        memory = dict(big.memory)
        outputs = []
        for make in (programs.encrypt_pk, programs.encrypt_sk, programs.decrypt):
            b = programs.min_buffers(make.__name__, rows) if buffers == "min" else buffers
            m = EngineModel.for_params(params, buffers=b)
            m.memory = dict(memory)
            _run(m, make(params, m.shape))
            memory = m.memory
            outputs.append(dict(memory))
        results.append(outputs)
    assert results[0] == results[1]


def test_minimum_buffers():
    assert [programs.min_buffers(n, 3) for n in ("key_setup", "encrypt_pk", "encrypt_sk", "decrypt")] == [4, 5, 4, 5]
    for name, make in (("key_setup", programs.key_setup), ("encrypt_pk", programs.encrypt_pk),
                       ("encrypt_sk", programs.encrypt_sk), ("decrypt", programs.decrypt)):
        need = programs.min_buffers(name, 3)
        make(N256, shape_for_params(N256, need))
        with pytest.raises(ParameterError, match="'buffers'") as info:
            make(N256, shape_for_params(N256, need - 1))
        assert str(need) in str(info.value) and name in str(info.value)


def _row_writes(program):
    """Buffers written by the single-row instructions of each prime slot."""
    per_row = {}
    for w in program.words:
        ins = isa.decode(w)
        if ins.opcode in (Opcode.ENCODE, Opcode.DECODE) or "slot" not in ins.info.uses:
            continue
        if ins.opcode in (Opcode.LOAD, Opcode.SAMPLE) and not ins.slot:
            continue                                        # slot field not meaningful there
        per_row.setdefault(ins.slot, set()).update(isa.reads_writes(ins)[1])
    return per_row


@pytest.mark.parametrize("make", [programs.key_setup, programs.encrypt_pk, programs.encrypt_sk, programs.decrypt],
                         ids=lambda f: f.__name__)
def test_more_buffers_make_the_primes_independent(make):
    rows = 3
    fewest = programs.min_buffers(make.__name__, rows)
    working = len(programs.PROGRAMS[make.__name__].working)
    wide = make(N256, shape_for_params(N256, fewest + (rows - 1) * working))
    writes = _row_writes(wide)
    assert len(writes) == rows
    for i in range(rows):
        for j in range(i):
            assert not writes[i] & writes[j], (i, j)
    assert len(wide.allocation.sets) == rows
    tight = _row_writes(make(N256, shape_for_params(N256, fewest)))
    assert tight[1] & tight[2]                              # with one working set the rows share it


def test_program_preconditions():
    toy = PARAMS["toy"]
    with pytest.raises(ParameterError, match="'slots'"):
        programs.encrypt_pk(N256, shape_for_params(N256, 16, slots=2))
    programs.encrypt_pk(N256, shape_for_params(N256, 16, slots=2), level=1)
    with pytest.raises(ParameterError, match="'log_scale'"):
        programs.decrypt(N256, isa.EngineShape(16, 3, N256.moduli, 20))
    with pytest.raises(ParameterError, match="'primes'"):
        programs.decrypt(N256, isa.EngineShape(16, 3, toy.moduli, 25))
    with pytest.raises(ParameterError, match="'units'"):
        programs.encrypt_sk(toy, shape_for_params(toy, 16, units={isa.Unit.MEMORY, isa.Unit.NTT}))


def test_program_text_assembles_to_its_words():
    from hhe_gen.engine import asm
    shape = shape_for_params(N256, 12)
    for make in (programs.key_setup, programs.encrypt_pk, programs.encrypt_sk, programs.decrypt):
        p = make(N256, shape)
        assert tuple(asm.assemble(p.text, shape)) == p.words
        assert tuple(asm.assemble(asm.disassemble(p.words, shape), shape)) == p.words
        assert isa.decode(p.words[-1]).opcode == Opcode.NOTIFY


def test_memory_map_addresses():
    layout = mm.MemoryMap(64, 2, base=0x1000)
    assert layout.address("seed") == 0x1000
    assert layout.address("slots_in") == 0x1000 + 64
    assert layout.address("pk0", 1) == 0x1000 + 5 * 64
    assert layout.address("c1", 1) == 0x1000 + (4 + 6 * 2 + 1) * 64
    assert layout.size == (4 + 7 * 2) * 64
    addresses = [a for _, _, a in layout.describe()]
    assert addresses == sorted(set(addresses)) and len(addresses) == layout.blocks
    with pytest.raises(ParameterError, match="row"):
        layout.address("c0", 2)
    with pytest.raises(ParameterError, match="region"):
        layout.address("nothing")


def test_memory_helpers_round_trip():
    params = PARAMS["toy"]
    layout = mm.MemoryMap.for_params(params)
    memory = {}
    mm.write_seed(memory, layout, 1 << 200 | 5)
    assert memory[0] == 5 and memory[3] == 1 << (200 - 192)
    mm.write_fixed_slots(memory, layout, [(-1, 2), (3, -4)])
    assert memory[64] == (1 << 64) - 1 and memory[64 + 32] == 2 and memory[65 + 32] == (1 << 64) - 4
    assert mm.read_fixed_slots(memory, layout, 64, "slots_in")[:3] == [(-1, 2), (3, -4), (0, 0)]
    ct = ckks.Ciphertext([[1] * 64, [2] * 64], [[3] * 64, [4] * 64], params.scale, "ntt")
    mm.write_ciphertext(memory, layout, params, ct)
    assert mm.read_ciphertext(memory, layout, params) == ct


def test_allocation_full_and_partial_working_sets():
    """Full working sets first; buffers left over make one more set owning its first names and
    sharing the rest with set 0; never more sets than rows; too few buffers name ``buffers``."""
    shared, working = (("m", 1),), ("t", "a", "s_hat")
    one = programs.allocate(4, "encrypt_sk", 3, shared, working)
    assert one.shared == {"m": 0} and one.sets == ({"t": 1, "a": 2, "s_hat": 3},) and one.used == 4
    part = programs.allocate(6, "encrypt_sk", 3, shared, working)
    assert part.sets == ({"t": 1, "a": 2, "s_hat": 3}, {"t": 4, "a": 5, "s_hat": 3}) and part.used == 6
    assert [part.work(i)["t"] for i in range(3)] == [1, 4, 1]
    full = programs.allocate(32, "encrypt_sk", 3, shared, working)
    assert len(full.sets) == 3 and full.used == 10
    assert len({b for s in full.sets for b in s.values()}) == 9
    with pytest.raises(ParameterError, match="'buffers'"):
        programs.allocate(3, "encrypt_sk", 3, shared, working)


@pytest.mark.parametrize("noise", ["once", "per-prime"])
@pytest.mark.parametrize("name, per_row", [("encrypt_pk", 2), ("encrypt_sk", 0)])
def test_samples_drawn_once_given_their_buffers_else_per_prime(name, per_row, noise):
    """From sampled_once_buffers(rows) on, every sample every prime reads (encrypt_pk's v and e1)
    is drawn once; below it, once per prime.  The noise added to the message (e0, e) is drawn once
    when the shape tells the message's bound, else once per prime; encrypt_sk's a_i always per
    prime."""
    rows = 3
    info = programs.PROGRAMS[name]
    once = info.sampled_once_buffers(rows)
    fmt = FMT if noise == "once" else None
    if per_row:
        assert once == info.min_buffers(rows) + per_row + (rows - 1) * len(info.working)
    else:
        assert once == 0
    make = getattr(programs, name)
    own = rows if name == "encrypt_sk" else 0                     # a_i, uniform per prime
    message_noise = 1 if noise == "once" else rows
    sizes = [(once, per_row), (once - 1, per_row * rows)] if per_row else []
    for buffers, draws in sizes + [(info.min_buffers(rows), per_row * rows)]:
        words = make(N256, shape_for_params(N256, buffers, fmt=fmt)).words
        samples = [isa.decode(w) for w in words if isa.decode(w).opcode == Opcode.SAMPLE]
        assert len(samples) == draws + own + message_noise, buffers


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_decrypt_on_a_one_row_decoder_decodes_q0_alone_with_the_same_slots(name):
    """An engine whose decoder takes 1 row: decrypt at the top level makes and decodes q_0's row
    only (one INTT, decode rows=1) and gets the slots of the full CRT decode."""
    import dataclasses
    params = PARAMS[name]
    m, layout, keys = _engine(params)
    m.shape = dataclasses.replace(m.shape, decode_rows=frozenset({1}))
    m.decode_rows = m.shape.decode_rows
    pt = ckks.encode(params, _slots(params, 9), fmt=FMT)
    ct = ckks.encrypt_pk(params, keys, pt, 77)
    mm.write_ciphertext(m.memory, layout, params, ct)
    program = programs.decrypt(params, m.shape)
    ops = [isa.decode(w) for w in program.words]
    assert sum(i.opcode == Opcode.INTT for i in ops) == 1 and [i.rows for i in ops if i.opcode == Opcode.DECODE] == [1]
    _run(m, program)
    rows = ckks.decrypt(params, keys.sk, ct).rows
    want = ckks_fixed.decode_fixed(rows, list(params.moduli[:len(rows)]), FMT, params.log_scale)
    assert len(rows) > 1 and mm.read_fixed_slots(m.memory, layout, m.word_bits) == want
    assert programs.decode_rows(params, m.shape, 3) == 1
    with pytest.raises(ParameterError, match="'decode_rows'"):
        programs.decode_rows(params, dataclasses.replace(m.shape, decode_rows=frozenset({2})), 3)
