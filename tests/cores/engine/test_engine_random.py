"""Random programs on the RTL engine equal the ISA model, whatever the dispatch order: random
well-formed instruction sequences over few buffers (loads, checked loads, samples of every kind,
ntt / intt with and without lift, every pointwise opcode, moves, fences, notifies), operands kept
within the ISA's contract (residues of the slot's prime, or small signed words where lifted), run
out of order and in order against memories of different latency and rate; every buffer is stored
at the end and the whole memory, the notify codes and the error status are compared; the same
programs on the shared datapath (the crypto unit)."""

import random

import pytest

from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.engine import ENGINE_UNITS, Engine
from hhe_gen.engine.model import EngineModel
from hhe_gen.params import ntt_primes
from hhe_gen.sim.engine import run_engine
from hhe_gen.sim.memory import MemoryModel

N, LANES, BUFFERS, SLOTS = 16, 2, 6, 2
PRIMES = tuple(ntt_primes(N, 30, 2))
SHAPE = isa.EngineShape(BUFFERS, SLOTS, PRIMES, 0, ENGINE_UNITS)
IN, OUT = 0x100, 0x400          # input polynomials, the final stores


def _program(rng, length):
    """Random instructions and the initial memory; state[b] = ("res", slot) | ("small",) | None."""
    words, memory = [], {}
    mem_kind = {}
    for k in range(4):                                      # inputs: 2 residue polys, 1 small, 1 junk
        addr = IN + k * N
        if k < 2:
            memory.update({addr + i: rng.randrange(PRIMES[k]) for i in range(N)})
            mem_kind[addr] = ("res", k)                      # slot k is bound to prime k below
        elif k == 2:
            memory.update({addr + i: rng.randint(-19, 19) & (2**64 - 1) for i in range(N)})
            mem_kind[addr] = ("small",)
        else:
            memory.update({addr + i: rng.getrandbits(64) for i in range(N)})
            mem_kind[addr] = (None,)
    seed = bytes(rng.getrandbits(8) for _ in range(32))
    memory.update({0x20 + i: int.from_bytes(seed[8 * i:8 * i + 8], "little") for i in range(4)})

    def emit(op, **f):
        words.append(isa.encode(isa.Instruction(op, **f)))

    emit(isa.Opcode.CFG_PRIME, slot=0, imm=0 << 27 | PRIMES[0] & (2**27 - 1))
    emit(isa.Opcode.CFG_PRIME, slot=1, imm=1 << 27 | PRIMES[1] & (2**27 - 1))
    emit(isa.Opcode.LDSEED, imm=0x20)
    state = [None] * BUFFERS
    for _ in range(length):
        choice = rng.random()
        dst = rng.randrange(BUFFERS)
        res = [b for b in range(BUFFERS) if state[b] and state[b][0] == "res"]
        small = [b for b in range(BUFFERS) if state[b] == ("small",)]
        if choice < 0.2:
            addr = IN + rng.randrange(4) * N
            kind = mem_kind[addr]
            check = kind[0] == "res" and rng.random() < 0.5
            emit(isa.Opcode.LOAD, dst=dst, slot=kind[1] if check else 0, flags=int(check), imm=addr)
            state[dst] = kind if kind[0] else None
        elif choice < 0.35:
            kind = rng.choice(list(isa.SampleKind))
            slot = rng.randrange(SLOTS)
            emit(isa.Opcode.SAMPLE, dst=dst, slot=slot if kind == isa.SampleKind.UNIFORM else 0, flags=kind,
                 imm=rng.randrange(1, 7) << 24 | rng.randrange(4))
            state[dst] = ("res", slot) if kind == isa.SampleKind.UNIFORM else ("small",)
        elif choice < 0.55 and (res or small):
            src = rng.choice(res + small)
            if state[src] == ("small",):
                slot = rng.randrange(SLOTS)
                emit(isa.Opcode.NTT, dst=dst, a=src, slot=slot, flags=1)
            else:
                slot = state[src][1]
                emit(rng.choice([isa.Opcode.NTT, isa.Opcode.INTT]), dst=dst, a=src, slot=slot)
            state[dst] = ("res", slot)
        elif choice < 0.85 and res:
            slot = state[rng.choice(res)][1]
            ops = [b for b in res if state[b][1] == slot]

            def operand():
                if small and rng.random() < 0.3:
                    return rng.choice(small), 1
                return rng.choice(ops), 0
            (a, la), (b, lb), (c, lc) = operand(), operand(), operand()
            op = rng.choice([isa.Opcode.ADD, isa.Opcode.SUB, isa.Opcode.MUL, isa.Opcode.MAC, isa.Opcode.MSUB])
            three = op in (isa.Opcode.MAC, isa.Opcode.MSUB)
            emit(op, dst=dst, a=a, b=b, c=c if three else 0, slot=slot, flags=la | lb << 1 | (lc << 2 if three else 0))
            state[dst] = ("res", slot)
        elif choice < 0.93:
            src = rng.randrange(BUFFERS)
            if state[src] == ("small",) and rng.random() < 0.5:
                slot = rng.randrange(SLOTS)
                emit(isa.Opcode.MOVE, dst=dst, a=src, slot=slot, flags=1)
                state[dst] = ("res", slot)
            else:
                emit(isa.Opcode.MOVE, dst=dst, a=src)
                state[dst] = state[src]
        elif choice < 0.97:
            emit(isa.Opcode.FENCE)
        else:
            emit(isa.Opcode.NOTIFY, imm=rng.randrange(1 << 16))
    for b in range(BUFFERS):
        emit(isa.Opcode.STORE, a=b, imm=OUT + b * N)
    emit(isa.Opcode.NOTIFY, imm=0xBEEF)
    return words, memory


@pytest.mark.parametrize("seed", range(6))
def test_random_program_equals_the_model(seed):
    rng = random.Random(seed)
    words, memory = _program(rng, 18)
    model = EngineModel(SHAPE, N, hamming_weight=N // 2)
    model.memory = dict(memory)
    cause = model.run(words)
    # the separate units out of order and in order; the shared butterfly array (the crypto unit:
    # ntt and the pointwise ops on one port), in place in the buffers or streaming
    for ooo, latency, rate, datapath in ((True, rng.randint(1, 9), 1, "separate"), (False, 3, rng.choice([1, 4]), "separate"),
                                         (True, rng.randint(1, 9), 1, "shared")):
        engine = Engine(N, PRIMES, lanes=LANES, buffers=BUFFERS, slots=SLOTS, ooo=ooo, window=8, codec=False,
                        datapath=datapath, ntt=dict(in_place=datapath == "shared" and seed % 2 == 0))
        run = run_engine(engine, words, MemoryModel(memory, latency=latency, cycles_per_beat=rate))
        assert (run.error_cause, run.error_position if run.error_cause else 0) == \
            (int(cause), model.error_position if cause else 0)
        for b in range(BUFFERS):
            addr = OUT + b * N
            assert run.memory.dump(addr, N) == [model.memory.get(addr + i, 0) for i in range(N)], (ooo, datapath, b)
        assert [c for _, c in run.notifies] == list(model.events)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6, 60))
def test_many_random_programs_equal_the_model(seed):
    test_random_program_equals_the_model(seed)
