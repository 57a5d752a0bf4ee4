"""``hhe-gen prove engine``: the task manager's scheduling proofs (formal/engine).  The quick
selection (each property on its own at window 4, the liveness bound and its tightness, covers,
one mutant per rule) runs by default; everything at once, window 8, in-order liveness, other
latencies and all seven units are slow.  Plus the harness's own specification (its read / write
sets) checked against ``isa.reads_writes`` without a solver.

Measured on this machine (2 cores shared with other jobs): quick proofs 5 - 45 s each (liveness
~35 s, the tightness BMC ~45 s, the rest under 12 s); slow ones in formal/engine/proofs.py.
"""

import random

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator

from hhe_gen.apps import prove
from hhe_gen.cores.engine import isa
from hhe_gen.cores.engine.decoder import instruction_layout

_ALL = [p for p in prove.proofs(["engine"])]
_PARAMS = [pytest.param(p.name, id=p.name, marks=() if p.quick else pytest.mark.slow) for p in _ALL]


def test_registry_has_every_property_mutants_and_covers():
    quick = [p for p in _ALL if p.quick]
    names = {p.name for p in quick}
    assert {"hazard-w4", "hazard-w4-inorder", "serial-w4", "completion-w4", "error-w4",
            "liveness-w4", "tight-retire-bound", "covers-w4"} <= names
    assert sum(p.expect == "FAIL" for p in quick) >= 5
    assert all(p.engine == "sby-prove" for p in quick if p.expect == "PASS" and p.name != "covers-w4")
    assert any(not p.quick for p in _ALL)


@pytest.mark.toolchain
@pytest.mark.parametrize("name", _PARAMS)
def test_proof(tmp_path, name):
    p = next(p for p in _ALL if p.name == name)
    record = prove.run_proof(p, tmp_path, quick=p.quick, timeout=1800 if p.quick else 7200)
    assert record["ok"], f"{name}: {record['status']} (expected {p.expect})\n{record['detail']}"


def test_retire_bound_formula():
    from hhe_gen.formal.engine.scheduler import induction_depth, retire_bound
    assert retire_bound(2, 1) == 7 and retire_bound(3, 0) == 7 and retire_bound(1, 2) == 6
    assert induction_depth(("liveness",), 7) == 9 and induction_depth(("hazard",), 7) == 2


@pytest.mark.parametrize("buffers", [4, 7])
def test_harness_specification_equals_reads_writes(buffers):
    """The harness's independent read / write sets, unit and serialising flag (spec_sets) equal
    ``isa.reads_writes`` / ``isa.OPCODES`` on random words of every opcode (restricted to the
    buffers and the seed, for words whose operands are in range - the only ones in a window)."""
    from hhe_gen.formal.engine.scheduler import spec_sets
    m = Module()
    word = Signal(instruction_layout())
    units = frozenset(isa.Unit) - {isa.Unit.NONE}
    r, w, unit, ser, known = spec_sets(m, word, buffers, "t", units)
    rng = random.Random(buffers)
    cases = []
    for code, info in isa.OPCODES.items():
        if info.requires not in units | {isa.Unit.NONE}:
            continue
        for _ in range(40):
            ins = isa.Instruction(code, dst=rng.randrange(buffers), a=rng.randrange(buffers),
                                  b=rng.randrange(buffers), c=rng.randrange(buffers),
                                  slot=rng.randrange(8), flags=rng.randrange(8),
                                  imm=rng.randrange(1, 1 + buffers) if code in (
                                      isa.Opcode.ENCODE, isa.Opcode.DECODE, isa.Opcode.SEND, isa.Opcode.RECV)
                                  else rng.getrandbits(32))
            base = {isa.Opcode.ENCODE: ins.dst, isa.Opcode.DECODE: ins.a, isa.Opcode.SEND: ins.a,
                    isa.Opcode.RECV: ins.dst}.get(code)
            if base is not None and base + ins.rows > buffers:
                continue
            cases.append(ins)
    got = []

    async def bench(ctx):
        for ins in cases:
            ctx.set(word.as_value(), isa.encode(ins))
            got.append(tuple(ctx.get(s) for s in (r, w, unit, ser, known)))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()

    def mask(res):
        at = {isa.SEED: buffers, isa.RUBATO_REGISTERS: buffers + 1, isa.NETWORK_REGISTERS: buffers + 2}
        return sum(1 << at.get(x, x) for x in res)

    for ins, g in zip(cases, got):
        reads, writes = isa.reads_writes(ins)
        assert g == (mask(reads), mask(writes), ins.info.unit, int(ins.opcode in isa.SERIALISING), 1), ins
