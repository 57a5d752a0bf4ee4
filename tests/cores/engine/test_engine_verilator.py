"""The engine in Verilator (hhe_gen.sim.engine_verilator): the same run as Amaranth's simulator, cycle
for cycle (cycles, every task's dispatch and completion, notifies, memory commands and contents),
for a whole program, an abort mid-program, a malformed word and the Wishbone-shaped memory; and,
under the slow marker, the CKKS programs at N = 2^13, 3 x 54 bits bit-exact with the ISA model
(which equals hhe_gen.models.ckks, tests/engine)."""

import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.engine import Engine
from hhe_gen.engine import memory_map, programs
from hhe_gen.engine.client_memory import client_memory
from hhe_gen.engine.model import EngineModel, shape_for_params
from hhe_gen.models import ckks
from hhe_gen.params import preset
from hhe_gen.sim.engine import run_engine
from hhe_gen.sim.engine_verilator import VerilatedEngine, verilate_engine
from hhe_gen.sim.memory import MemoryModel

pytestmark = pytest.mark.toolchain


def _prepared(params, shape, seed=3):
    """Memory with the keys after key_setup (the model's), a seed and random fixed-point slots."""
    keys = ckks.keygen(params, seed=11)
    layout = memory_map.MemoryMap.for_params(params)
    mem = client_memory(params, shape, keys, seed=seed, layout=layout)
    rng = random.Random(seed)
    for i in range(params.n // 2):
        mem[layout.address("slots_in") + i] = rng.getrandbits(isa.DEFAULT_FORMAT.width)
    return keys, layout, mem


def _by_position(run):
    return sorted(run.tasks, key=lambda t: t.position)


TOY = preset("toy")
TOY_SHAPE = shape_for_params(TOY, 12)


@pytest.fixture(scope="module")
def toy():
    return _prepared(TOY, TOY_SHAPE)


def _same(words, mem, **kw):
    latency, cpb = kw.pop("latency", 6), kw.pop("cycles_per_beat", 1)
    a, b = MemoryModel(mem, latency=latency, cycles_per_beat=cpb), MemoryModel(mem, latency=latency,
                                                                               cycles_per_beat=cpb)
    ra = run_engine(Engine.for_params(TOY, lanes=2, buffers=12), words, a, **kw)
    rb = verilate_engine(Engine.for_params(TOY, lanes=2, buffers=12), words, b, **kw)
    assert (rb.cycles, rb.error_cause, rb.error_position, rb.notifies) == \
           (ra.cycles, ra.error_cause, ra.error_position, ra.notifies)
    assert _by_position(rb) == _by_position(ra)
    assert b.words == a.words and b.commands == a.commands
    assert (b.reads, b.writes) == (a.reads, a.writes)
    return ra, rb


@pytest.mark.parametrize("name", ["encrypt_pk", "decrypt"])
def test_verilator_equals_amaranth(toy, name):
    _, layout, mem = toy
    if name == "decrypt":
        model = EngineModel(TOY_SHAPE, TOY.n)
        model.memory = dict(mem)
        model.run(programs.encrypt_sk(TOY, TOY_SHAPE, layout=layout).words)
        mem = dict(model.memory)
    ra, rb = _same(getattr(programs, name)(TOY, TOY_SHAPE, layout=layout).words, mem)
    assert ra.error_cause == 0 and len(ra.tasks) > 10 and ra.notifies


def test_verilator_abort_wishbone_and_error(toy):
    _, layout, mem = toy
    words = list(programs.encrypt_sk(TOY, TOY_SHAPE, layout=layout).words)
    _same(words, mem, abort_after=250)
    _same(words[:8], mem, cycles_per_beat=4, latency=3)
    bad = words[:6] + [isa.encode(isa.Instruction(isa.Opcode.ADD, dst=31, a=0, b=1, slot=0))] + words[6:]
    ra, _ = _same(bad, mem)
    assert ra.error_cause == isa.ErrorCause.BUFFER_RANGE and ra.error_position == 6


DNA = preset("dna-hhe")


@pytest.mark.slow
@pytest.mark.parametrize("lanes", [2])
def test_dna_hhe_programs_bit_exact(lanes):
    """N = 2^13, 3 x 54: encrypt_pk, encrypt_sk and decrypt on the RTL equal the ISA model (build
    ~1 min, each program 30-90 s in Verilator on this machine)."""
    rtl = VerilatedEngine(Engine.for_params(DNA, lanes=lanes, buffers=programs.client_buffers(3)))  # one build, three runs
    shape = rtl.engine.shape            # 5 buffers: the samples drawn per prime; a decoder of 1 and 3 rows
    _, layout, mem = _prepared(DNA, shape)
    for name in ("encrypt_pk", "encrypt_sk", "decrypt"):
        prog = getattr(programs, name)(DNA, shape, layout=layout)
        model = EngineModel(shape, DNA.n)
        model.memory = dict(mem)
        assert model.run(prog.words) == isa.ErrorCause.NONE
        run = rtl.run(prog.words, MemoryModel(mem))
        assert run.error_cause == 0 and [c for _, c in run.notifies] == [prog.notify]
        assert all(run.memory.words.get(a, 0) == v for a, v in model.memory.items())
        mem = dict(model.memory)            # decrypt reads encrypt_sk's ciphertext


def test_verilator_network_unit_equals_amaranth():
    """send and recv on an engine with the network unit: the same packets out, the same words taken
    in (a ciphertext among malformed packets), cycle for cycle."""
    from hhe_gen.models.wire import Kind, polynomial_packets

    rng = random.Random(12)
    rows = [[rng.randrange(q) for _ in range(TOY.n)] for q in TOY.moduli]
    good = polynomial_packets(Kind.CKKS_C0, 3, rows, segment=20) + \
        polynomial_packets(Kind.CKKS_C1, 3, rows, segment=20, first_sequence=8)
    incoming = [b for p in good for b in (p[:30], p)]                 # a cut copy before each packet
    from hhe_gen.engine import asm
    runs = []
    for simulate in (run_engine, verilate_engine):
        engine = Engine.for_params(TOY, lanes=2, buffers=6, net=dict(max_segment=16))
        words = asm.assemble("cfg.net.segment 9\ncfg.net.message 4\nrecv b0, rows=4\nsend b1, s1, c0, rows=3, of=4\n"
                             "store b3, 0x800", engine.shape)
        runs.append(simulate(engine, words, MemoryModel({}, latency=5), udp_in=incoming))
    ra, rb = runs
    assert (rb.cycles, rb.error_cause, _by_position(rb)) == (ra.cycles, ra.error_cause, _by_position(ra))
    assert rb.packets == ra.packets and len(ra.packets) > 10
    assert rb.memory.dump(0x800, TOY.n) == ra.memory.dump(0x800, TOY.n) == rows[1]
