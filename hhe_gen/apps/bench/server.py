"""Benchmarks of the server-side programs on the RTL engine (group ``accel``, cases ``server-*``).

Each case runs ``hmult``, ``relinearize`` (the key switch) and ``rescale`` one after another, then
``mul_relin_rescale`` from the same operands (fused when the buffers hold the intermediates), on the
RTL engine with the basis-conversion unit, in Verilator at N = 2^13 (Amaranth's simulator for the
quick toy case), every input in external memory behind the memory port (one beat per cycle after 8
cycles; a beat is 64 bits, or 512 in the ``-512bit`` cases: 512 bits per cycle at the paper's
181 MHz is 11.6 GB/s, less than one of its Alveo U280's 32 HBM pseudo-channels, 256 bits at 450 MHz
= 14.4 GB/s): the ciphertexts, the relinearisation key in NTT form (streamed row by row while it is
used) and the constant rows.  Every program is checked against the ISA model (``bit_exact``:
every word it writes), which equals :mod:`hhe_gen.models.ckks_eval` and Lattigo.

Figures per program: ``cycles``, ``butterfly_cycles`` (cycles x lanes, the design-time-flexible
paper's measure of equal resources), ``key_words`` (memory words of the key the program loads),
``memory_words`` (every word read or written), ``unit_busy`` (per unit, the cycles it held a task:
the run's task records), and for hmult and the key switch the paper's goals at equal resources
(Alveo U280, 96 butterflies: HMult 3,091 cycles and key switching 97,668 cycles at N = 2^13,
log QP = 218, i.e. at most 297k and 9.38M butterfly-cycles) with ``vs_paper`` = our
butterfly-cycles / the paper's.  hmult also gives ``arithmetic_cycles``: the pointwise unit's busy
cycles, what the tensor product takes when its operands are already in the buffers (the paper's
figure moves no operand), with ``arithmetic_vs_paper``.

Parameters: ``dna-hhe`` (3 x 54 bits and a 61-bit P) and ``flexible-218`` (the paper's ring:
6 x 31 bits and a 32-bit P); the reducers scale the narrower primes to P's width.
"""

from __future__ import annotations

import random

from hhe_gen.apps.bench import bench_case

__all__ = ["server_cycles", "basis_area", "PAPER"]

PAPER = {"hmult": 3_091 * 96, "relinearize": 97_668 * 96}
"""The design-time-flexible paper's butterfly-cycles (cycles x 96 butterflies), N = 2^13, log QP = 218."""


def server_cycles(params: str = "toy-p30", lanes: int = 2, buffers: int = 24, verilator: bool = True,
                  beat_words: int = 1) -> dict:
    """hmult, relinearize and rescale of ``params`` on the RTL engine (module docstring), its memory
    port ``beat_words`` 64-bit words wide."""
    from hhe_gen.cores.engine import isa
    from hhe_gen.engine import server_memory as sm
    from hhe_gen.engine import server_programs as sp
    from hhe_gen.engine.model import EngineModel
    from hhe_gen.models import ckks, ckks_eval
    from hhe_gen.params import preset
    from hhe_gen.params.ckks import CKKSParams, RingParams
    from hhe_gen.params.primes import ntt_primes
    from hhe_gen.sim.memory import MemoryModel

    if params == "toy-p30":
        primes = ntt_primes(64, 30, 3)
        p = CKKSParams(RingParams(64, tuple(primes[:2])), 20, (primes[2],), name="toy-p30")
    else:
        p = preset(params)
    keys = ckks.keygen(p, seed=1)
    rng = random.Random(2)
    slots = [complex(rng.uniform(-1, 1), rng.uniform(-1, 1)) for _ in range(p.slots)]
    layout = sm.ServerMemoryMap.for_params(p)
    mem: dict[int, int] = {}
    sm.write_server_ciphertext(mem, layout, p, ckks.encrypt_slots(p, keys, slots, seed=3), ("a0", "a1"))
    sm.write_server_ciphertext(mem, layout, p, ckks.encrypt_slots(p, keys, slots, seed=4, mode="sk"), ("b0", "b1"))
    sm.write_relin_key(mem, layout, p, ckks_eval.relin_keygen(p, keys.sk, seed=5))
    sm.write_constants(mem, layout, p)

    rlk_first, rlk_end = layout.address("rlk"), layout.address("p_inv")
    out = {"params": p.name, "lanes": lanes, "N": p.n, "rows": len(p.moduli), "beat_bits": 64 * beat_words}
    rows = len(p.moduli)
    fused = buffers >= sp.fused_min_buffers(rows)
    if verilator:                       # one build (cached), every program run on it
        from hhe_gen.sim.engine_verilator import VerilatedEngine
        rtl = VerilatedEngine(sp.server_engine(p, lanes, buffers=buffers, beat_words=beat_words),
                              progress=f"verilator build of the server engine ({p.name}, {lanes} lanes, "
                                       f"{64 * beat_words}-bit memory)")
        shape = rtl.engine.shape
    exact = True
    start = dict(mem)
    for name in ("hmult", "relinearize", "rescale", "mul_relin_rescale"):
        if name == "mul_relin_rescale":
            mem = start                     # from the operands again: fused when the buffers allow
        engine = None if verilator else sp.server_engine(p, lanes, buffers=buffers, beat_words=beat_words)
        if not verilator:
            shape = engine.shape
        program = (sp.mul_relin_rescale(p, shape, layout=layout, fused=fused) if name == "mul_relin_rescale"
                   else getattr(sp, name)(p, shape, layout=layout))
        model = EngineModel(shape, p.n)
        model.memory = dict(mem)
        model.run(program.words)
        memory = MemoryModel(mem, latency=8, beat_words=beat_words)
        if verilator:
            run = rtl.run(program.words, memory)
        else:
            from hhe_gen.sim.engine import run_engine
            run = run_engine(engine, program.words, memory)
        exact &= run.error_cause == 0 and all(run.memory.words.get(a) == v for a, v in model.memory.items())
        key_words = beat_words * sum(cmd[1] for cmd in memory.commands if not cmd[2] and rlk_first <= cmd[0] < rlk_end)
        busy = {isa.Unit(u).name.lower(): c for u, c in sorted(run.busy_cycles().items())}
        row = {"cycles": run.cycles, "butterfly_cycles": run.cycles * lanes, "key_words": key_words,
               "memory_words": beat_words * (memory.reads + memory.writes), "unit_busy": busy}
        if name == "mul_relin_rescale":
            row["fused"] = fused
        if name in PAPER:
            row["paper_butterfly_cycles"] = PAPER[name]
            row["vs_paper"] = round(run.cycles * lanes / PAPER[name], 3)
        if name == "hmult":
            row["arithmetic_cycles"] = busy["pointwise"]
            row["arithmetic_vs_paper"] = round(busy["pointwise"] * lanes / PAPER[name], 3)
        out[name] = row
        mem = dict(run.memory.words)
    out["bit_exact"] = exact
    return out


bench_case("accel", "server-toy", quick=True, params="toy-p30", verilator=False)(server_cycles)
for _params in ("dna-hhe", "flexible-218"):
    for _lanes, _words in ((2, 1), (8, 1), (8, 8)):
        bench_case("accel", f"server-{_params}-{_lanes}lanes" + ("-512bit" if _words > 1 else ""), quick=False,
                   params=_params, lanes=_lanes, buffers=24 if _params == "dna-hhe" else 28,
                   beat_words=_words)(server_cycles)


def basis_area(params: str = "dna-hhe", lanes: int = 2) -> dict:
    """Yosys ECP5 area (``synth_ecp5``, no place and route) of the basis-conversion unit alone, for
    the primes of ``params`` (Q and P) at ``lanes`` lanes and 16 buffers."""
    from hhe_gen.cores.engine.basis_unit import BasisUnit
    from hhe_gen.cores.unused import mark_unused
    from hhe_gen.flow.synth import synth_ecp5
    from hhe_gen.params import preset
    p = preset(params)
    primes = tuple(p.moduli) + tuple(p.special_moduli)
    unit = BasisUnit(p.n, lanes, max(q.bit_length() for q in primes), 16, len(primes), 3, primes)
    mark_unused(unit)
    # classic ABC: Yosys's ABC9 trips an internal assertion on this netlist at 8 lanes (YoWASP Yosys)
    r = synth_ecp5(unit, name=f"hhe_basis_{params.replace('-', '_')}_p{lanes}", timeout=3600,
                   place_and_route=False, abc9=False)
    return {k: r.get(k) for k in ("LUT4", "CCU2C", "FF", "MULT18X18D")}


for _lanes in (2, 8):
    for _params in ("dna-hhe", "flexible-218"):
        bench_case("accel", f"server-area-basis-{_params}-{_lanes}lanes", quick=False, params=_params,
                   lanes=_lanes)(basis_area)
