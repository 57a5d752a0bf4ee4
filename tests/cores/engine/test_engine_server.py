"""The RTL engine with the basis-conversion unit runs the server-side programs (hmult,
relinearize, rescale in one program) bit-exact with the ISA model, and so with
hhe_gen.models.ckks_eval and Lattigo: every memory word the model writes, the RTL writes.

Two parameter sets: the key-switching prime P of Q's bit length, and a wider P (as DNA-HHE's 61-bit
P over 54-bit primes), which the NTT and pointwise units' Barrett reducers serve by scaling the
narrower primes (:class:`hhe_gen.cores.arith.barrett.BarrettMul`)."""

import random

import pytest

from hhe_gen.cores.engine.engine import Engine
from hhe_gen.engine import server_memory as sm
from hhe_gen.engine import server_programs as sp
from hhe_gen.engine.model import EngineModel
from hhe_gen.models import ckks, ckks_eval
from hhe_gen.params.ckks import CKKSParams, RingParams
from hhe_gen.params.errors import ParameterError
from hhe_gen.params.primes import ntt_primes
from hhe_gen.sim.engine import run_engine
from hhe_gen.sim.memory import MemoryModel

_PRIMES = ntt_primes(64, 30, 3)
PARAMS = CKKSParams(RingParams(64, tuple(_PRIMES[:2])), 20, (_PRIMES[2],), name="toy-p30")
WIDE_P = CKKSParams(RingParams(64, tuple(_PRIMES[:2])), 20, (ntt_primes(64, 36, 1)[0],), name="toy-p36")


def _engine():
    """The server engine's shape without the basis unit."""
    primes = tuple(PARAMS.moduli) + tuple(PARAMS.special_moduli)
    return Engine(PARAMS.n, primes, lanes=2, buffers=20, slots=len(primes), codec=False, log_scale=PARAMS.log_scale)


def _memory(params, layout):
    keys = ckks.keygen(params, seed=1)
    rng = random.Random(2)
    slots = [complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(params.slots)]
    mem = {}
    sm.write_server_ciphertext(mem, layout, params, ckks.encrypt_slots(params, keys, slots, seed=3), ("a0", "a1"))
    sm.write_server_ciphertext(mem, layout, params, ckks.encrypt_slots(params, keys, slots, seed=4, mode="sk"),
                               ("b0", "b1"))
    sm.write_relin_key(mem, layout, params, ckks_eval.relin_keygen(params, keys.sk, seed=5))
    sm.write_constants(mem, layout, params)
    return mem


@pytest.mark.parametrize("params, fused, beat_words", [(PARAMS, True, 1), (PARAMS, False, 1), (WIDE_P, True, 2)],
                         ids=["same-width-fused", "same-width-memory", "wide-p-fused-128bit"])
def test_mul_relin_rescale_on_rtl_equals_the_model(params, fused, beat_words):
    engine = sp.server_engine(params, buffers=20, beat_words=beat_words)
    layout = sm.ServerMemoryMap.for_params(params)
    mem = _memory(params, layout)
    program = sp.mul_relin_rescale(params, engine.shape, fused=fused)
    model = EngineModel(engine.shape, params.n)
    model.memory = dict(mem)
    assert model.run(program.words) == 0
    run = run_engine(engine, program.words, MemoryModel(mem, latency=6, beat_words=beat_words))
    assert run.notifies and run.notifies[-1][1] == program.notify
    written = {k for k in model.memory if model.memory[k] != mem.get(k)}
    r_rows = {layout.address(name, 0) + k for name in ("r0", "r1") for k in range(params.n)}
    assert len(written & r_rows) > params.n            # the result rows (a word may happen to be 0)
    assert {k: run.memory.words.get(k) for k in model.memory} == model.memory


def test_an_engine_without_the_unit_refuses_conv():
    engine = _engine()
    with pytest.raises(ParameterError, match="units"):
        sp.relinearize(PARAMS, engine.shape)


@pytest.mark.slow                 # a Verilator build and N = 2^13 runs: about 8 minutes per set here
@pytest.mark.parametrize("params", ["dna-hhe", "flexible-218"])
def test_server_programs_at_n_8192_in_verilator(params):
    """hmult, relinearize and rescale at N = 2^13 on the RTL in Verilator, every word the ISA model
    writes equal (the model equals hhe_gen.models.ckks_eval and Lattigo: tests/engine, tests/interop)."""
    from hhe_gen.apps.bench.server import server_cycles
    r = server_cycles(params, lanes=2, buffers=24 if params == "dna-hhe" else 28)
    assert r["bit_exact"]
    rows = r["rows"]
    assert r["relinearize"]["key_words"] == rows * 2 * (rows + 1) * 8192


def test_the_server_engine_has_no_sampler_and_refuses_sample():
    """The server engine is built without the sampling unit (its uniform sampler would need primes
    of one byte length; the server programs draw nothing): ``sample`` ends the run as NOT_BUILT."""
    from hhe_gen.cores.engine import isa
    engine = sp.server_engine(WIDE_P, buffers=20)
    assert engine.sampler_unit is None and engine.shape.units == isa.SERVER_UNITS
    word = isa.encode(isa.Instruction(isa.Opcode.SAMPLE, a=0, imm=0))
    assert isa.check(isa.decode(word), engine.shape, frozenset()) == isa.ErrorCause.NOT_BUILT
    run = run_engine(engine, [word], MemoryModel({}, latency=6))
    assert (run.error_cause, run.error_position) == (isa.ErrorCause.NOT_BUILT, 0)


@pytest.mark.toolchain
def test_wide_beats_in_verilator_equal_amaranth():
    """The Verilator driver's memory with 2 words per beat gives Amaranth's run cycle for cycle:
    cycles, tasks, commands (counted in beats) and every word."""
    from hhe_gen.sim.engine_verilator import verilate_engine
    layout = sm.ServerMemoryMap.for_params(WIDE_P)
    mem = _memory(WIDE_P, layout)
    runs = []
    for run in (run_engine, verilate_engine):
        engine = sp.server_engine(WIDE_P, buffers=20, beat_words=2)
        program = sp.hmult(WIDE_P, engine.shape, layout=layout)
        memory = MemoryModel(mem, latency=6, beat_words=2)
        runs.append((run(engine, program.words, memory), memory))
    (ra, a), (rb, b) = runs
    order = lambda run: sorted(run.tasks, key=lambda t: t.position)      # noqa: E731
    assert (rb.cycles, rb.error_cause, order(rb)) == (ra.cycles, ra.error_cause, order(ra))
    assert b.words == a.words and b.commands == a.commands and (b.reads, b.writes) == (a.reads, a.writes)
    assert a.commands[0][1] == WIDE_P.n // 2 and ra.error_cause == 0
