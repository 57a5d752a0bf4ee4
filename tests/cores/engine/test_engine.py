"""The RTL engine runs the CKKS programs bit-exact with the ISA model (hhe_gen.engine.model) and so
with hhe_gen.models.ckks: key_setup, encrypt_pk, encrypt_sk (slots in, ciphertext out) and decrypt
(ciphertext in, slots out), with the NTT streaming and in place in banked buffers, on the
separate units and on the crypto unit's shared butterflies; out-of-order dispatch beats in-order
on the same program; a malformed
word is answered with the model's error cause and position and the engine goes idle; an abort
mid-program leaves it idle."""

import dataclasses

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.engine import ENGINE_UNITS, Engine
from hhe_gen.engine import asm, memory_map, programs
from hhe_gen.engine.model import EngineModel, shape_for_params
from hhe_gen.models import ckks, ckks_fixed
from hhe_gen.params import preset
from hhe_gen.sim.engine import run_engine
from hhe_gen.sim.memory import MemoryModel

PARAMS = preset("toy")
BUFFERS = 12
SHAPE = dataclasses.replace(shape_for_params(PARAMS, BUFFERS, units=ENGINE_UNITS | {isa.Unit.CODEC},
                                             fmt=isa.DEFAULT_FORMAT),
                            decode_rows=frozenset({1, len(PARAMS.moduli)}))     # the codec's default


def _engine(ooo=True, in_place=False, datapath="separate", **kw):
    return Engine.for_params(PARAMS, lanes=2, buffers=BUFFERS, ooo=ooo, ntt=dict(in_place=in_place),
                             datapath=datapath, **kw)


def _memory(keys, seed, layout, extra=None):
    mem = {}
    memory_map.write_keys(mem, layout, PARAMS, keys)
    memory_map.write_seed(mem, layout, seed)
    for addr, value in (extra or {}).items():
        mem[addr] = value
    return mem


def _model(shape, words, mem):
    model = EngineModel(shape, PARAMS.n, decode_rows={1, len(PARAMS.moduli)})
    model.memory = dict(mem)
    cause = model.run(words)
    return model, cause


def _both(program_words, mem, ooo=True, in_place=False, datapath="separate"):
    engine = _engine(ooo, in_place, datapath)
    assert engine.shape == SHAPE
    model, cause = _model(SHAPE, program_words, mem)
    memory = MemoryModel(mem, latency=6)
    run = run_engine(engine, program_words, memory)
    return model, cause, run


@pytest.fixture(scope="module")
def keys():
    return ckks.keygen(PARAMS, seed=11)


@pytest.fixture(scope="module")
def layout():
    return memory_map.MemoryMap.for_params(PARAMS)


def _setup_memory(keys, layout):
    """Memory after key_setup (the model's; the RTL's key_setup is checked separately)."""
    prog = programs.key_setup(PARAMS, SHAPE, layout=layout)
    model, _ = _model(SHAPE, prog.words, _memory(keys, 5, layout))
    return model.memory


def test_key_setup_bit_exact(keys, layout):
    shape = SHAPE
    prog = programs.key_setup(PARAMS, shape, layout=layout)
    mem = _memory(keys, 5, layout)
    model, cause, run = _both(prog.words, mem)
    assert cause == isa.ErrorCause.NONE and run.error_cause == 0
    for region in ("sk_ntt", "pk0_ntt", "pk1_ntt"):
        for i in range(len(PARAMS.moduli)):
            addr = layout.address(region, i)
            assert run.memory.dump(addr, PARAMS.n) == [model.memory.get(addr + k, 0) for k in range(PARAMS.n)]
    assert [code for _, code in run.notifies] == [1]


#: (NTT in place, datapath): the NTT streaming or in place, on its own units or on the crypto unit's
#: shared butterfly array
ARRANGEMENTS = [(False, "separate"), (True, "separate"), (True, "shared"), (False, "shared")]


@pytest.mark.parametrize("in_place, datapath", ARRANGEMENTS)
@pytest.mark.parametrize("name", ["encrypt_pk", "encrypt_sk"])
def test_encrypt_bit_exact_with_the_model_and_ckks(name, keys, layout, in_place, datapath):
    shape = SHAPE
    words = getattr(programs, name)(PARAMS, shape, layout=layout).words
    slots = [complex(0.5, -0.25), complex(0.125, 0.75), 1j, -1.5]
    pt = ckks.encode(PARAMS, slots, fmt=isa.DEFAULT_FORMAT)
    mem = _setup_memory(keys, layout)
    memory_map.write_seed(mem, layout, 7)
    memory_map.write_slots(mem, layout, slots, isa.DEFAULT_FORMAT)
    model, cause, run = _both(words, mem, in_place=in_place, datapath=datapath)
    assert cause == isa.ErrorCause.NONE and run.error_cause == 0
    got = memory_map.read_ciphertext(run.memory.words, layout, PARAMS)
    want = memory_map.read_ciphertext(model.memory, layout, PARAMS)
    assert got.c0 == want.c0 and got.c1 == want.c1
    ref = (ckks.encrypt_pk(PARAMS, keys, pt, seed=7, form="ntt") if name == "encrypt_pk"
           else ckks.encrypt_sk(PARAMS, keys.sk, pt, seed=7, form="ntt"))
    assert got.c0 == ref.c0 and got.c1 == ref.c1


@pytest.mark.parametrize("in_place, datapath", ARRANGEMENTS)
def test_decrypt_bit_exact(keys, layout, in_place, datapath):
    shape = SHAPE
    words = programs.decrypt(PARAMS, shape, layout=layout).words
    pt = ckks.encode(PARAMS, [0.25, -0.5j])
    ct = ckks.encrypt_pk(PARAMS, keys, pt, seed=3, form="ntt")
    mem = _setup_memory(keys, layout)
    memory_map.write_ciphertext(mem, layout, PARAMS, ct)
    model, cause, run = _both(words, mem, in_place=in_place, datapath=datapath)
    assert cause == isa.ErrorCause.NONE and run.error_cause == 0
    word_bits = model.word_bits
    got = memory_map.read_fixed_slots(run.memory.words, layout, word_bits)
    assert got == memory_map.read_fixed_slots(model.memory, layout, word_bits)
    rows = ckks.decrypt(PARAMS, keys.sk, ct).rows
    assert got == ckks_fixed.decode_fixed(rows, list(PARAMS.moduli), isa.DEFAULT_FORMAT, PARAMS.log_scale)


def test_out_of_order_beats_in_order(keys, layout):
    shape = SHAPE
    words = programs.encrypt_pk(PARAMS, shape, layout=layout).words
    mem = _setup_memory(keys, layout)
    memory_map.write_seed(mem, layout, 7)
    runs = {}
    for ooo in (True, False):
        run = run_engine(_engine(ooo), words, MemoryModel(mem, latency=6))
        runs[ooo] = run
    assert runs[True].memory.words == runs[False].memory.words
    assert runs[True].cycles < runs[False].cycles


def test_malformed_word_error_and_idle(keys, layout):
    shape = SHAPE
    good = asm.assemble("cfg.prime s0, p0\nload b1, 0x100\nntt b2, b1, s0", shape)
    bad = isa.encode(isa.Instruction(isa.Opcode.NTT, dst=2, a=1, slot=1))     # slot 1 never bound
    words = good + [bad] + asm.assemble("store b2, 0x300", shape)
    mem = _memory(keys, 5, layout)
    model, cause, run = _both(words, mem)
    assert cause == isa.ErrorCause.SLOT_UNBOUND and model.error_position == 3
    assert (run.error_cause, run.error_position) == (int(isa.ErrorCause.SLOT_UNBOUND), 3)
    assert run.memory.dump(0x300, 4) == [0, 0, 0, 0]         # the store after the error never ran


def test_abort_mid_program_goes_idle(keys, layout):
    """An abort while tasks are in flight: the engine is idle within a few cycles, the stores after
    the abort never happen, no error is left."""
    words = programs.encrypt_pk(PARAMS, SHAPE, layout=layout).words
    mem = _setup_memory(keys, layout)
    memory_map.write_seed(mem, layout, 7)
    full = run_engine(_engine(), words, MemoryModel(mem, latency=6))
    cut = run_engine(_engine(), words, MemoryModel(mem, latency=6), abort_after=full.cycles // 3)
    assert cut.error_cause == 0 and cut.cycles <= full.cycles // 3 + 3
    assert len(cut.tasks) < len(full.tasks)
    last_c1 = layout.address("c1", len(PARAMS.moduli) - 1)
    assert cut.memory.dump(last_c1, PARAMS.n) == [0] * PARAMS.n
    assert full.memory.dump(last_c1, PARAMS.n) != [0] * PARAMS.n
