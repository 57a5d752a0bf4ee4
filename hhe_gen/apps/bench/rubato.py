"""Benchmarks of the Rubato keystream core (``hhe-gen bench rubato``).

Quick cases: cycles per keystream block for each parameter set and lane count, from the
documented formula (:func:`hhe_gen.cores.rubato.cycles_per_block`) for a fixed block (nonce
0x0123456789abcdef, counter 0: the rejection pattern comes from hashlib's SHAKE256, XOF included,
noise off), and - for the lane counts that simulate quickly - the same block simulated (cycles and
keystream checked against the formula and the golden model).  Each 128-bit case lists DNA-HHE's
cycles per block for its set and the ratio to them (:data:`DNA_HHE`: DNA-HHE Table
III, its 2-MAC core on a Kintex-7: Par-128S/M/L 1235 / 2087 / 3036 cycles; the target is 0.8 x).
With n lanes a block is XOF-bound: the (r+1)*n round constants arrive one candidate per cycle
(plus 24 cycles per SHAKE256 permutation) while the 4r+3 phases take 1 + depth + 1 cycles each;
with noise on, the output of many-lane cores also waits for the shared XOF's noise words
(``cycles_per_block(noise=True)``).

Not quick: the ``-ecp5`` cases (:func:`rubato_synth`) synthesize, place and route the whole core
(the shared XOF, noise path, multipliers) for the LFE5U-85F: LUT4, FF, MULT18X18D, DP16KD, Fmax,
and the blocks and keystream words per second at that Fmax; ``128s-l2-multipliers``
(:func:`rubato_multipliers`) the Yosys area of each multiplier kind on ECP5 and Xilinx 7;
``-area`` (:func:`rubato_area`) the Yosys area only and whether the MULT18X18D fit the 85F's 156.

The measured figures (cycles per block, areas, post-route Fmax, and the designs the current core
replaced) are tables in docs/figures.md, generated from docs/figures/bench-snapshot.json.
"""

from __future__ import annotations

from hhe_gen.apps.bench import bench_case
from hhe_gen.cores.rubato.schedule import block_positions
from hhe_gen.cores.unused import mark_unused

DNA_HHE = {"Par-128S": 1235, "Par-128M": 2087, "Par-128L": 3036}
"""DNA-HHE Table III: cycles per Rubato block of its 2-MAC core, by set."""
NONCE, COUNTER = 0x0123456789ABCDEF, 0
#: the reference software (Rubato's reference code): ~6-10k cycles per block on a 2.1 GHz x86 core
SOFTWARE_BLOCKS_PER_S = (round(2.1e9 / 10_000), round(2.1e9 / 6_000))
#: MULT18X18D tiles of an LFE5U-85F
ECP5_85F_MULT18 = 156


def _positions(p):
    return block_positions(p, NONCE, COUNTER)


def _cycles(params, lanes, simulate):
    name = params
    import random

    from hhe_gen.cores.rubato import RubatoCore
    from hhe_gen.sim.rubato import simulate_blocks
    from hhe_gen.models import rubato as model

    core = RubatoCore(name, lanes, noise=False)
    p = core.params
    res = {"n": p.n, "rounds": p.rounds, "lanes": lanes, "depth": core.depth,
           "cycles_per_block": core.cycles_per_block(_positions(p)),
           "cycles_no_rejection": core.cycles_per_block(None),
           "words_per_cycle": round(p.l / core.cycles_per_block(_positions(p)), 4),
           "squarers": lanes, "mod_multipliers": lanes + 1}
    if p.name in DNA_HHE:
        res["dna_hhe_cycles"] = DNA_HHE[p.name]
        res["ratio_to_dna_hhe"] = round(res["cycles_per_block"] / DNA_HHE[p.name], 3)
    if simulate:
        rng = random.Random(name)
        key = [rng.randrange(p.q) for _ in range(p.n)]
        run, = simulate_blocks(core, key, [(NONCE, COUNTER)])
        assert run.outputs == model.keystream(p, key, NONCE, COUNTER), "keystream differs from the model"
        assert run.cycles == res["cycles_per_block"], (run.cycles, res["cycles_per_block"])
        res["simulated_cycles"] = run.cycles
    else:
        mark_unused(core, deep=True)                     # built for its formula only, never elaborated
    return res


def _register():
    from hhe_gen.params.rubato import RUBATO_SETS
    for name, p in RUBATO_SETS.items():
        for lanes in sorted({1, 2, 4, p.v, 2 * p.v, p.n} & {d for d in range(1, p.n + 1) if p.n % d == 0}):
            simulate = lanes in (2, p.v)
            bench_case("rubato", f"{p.short_name.lower()}-l{lanes}", params=name, lanes=lanes,
                       simulate=simulate)(_cycles)


_register()


@bench_case("rubato", "80s-l1-nonoise-ecp5", quick=False, params="Par-80S", lanes=1, noise=False)
@bench_case("rubato", "80s-l2-nonoise-ecp5", quick=False, params="Par-80S", lanes=2, noise=False)
@bench_case("rubato", "128s-l2-ecp5", quick=False, params="Par-128S", lanes=2, noise=True)
@bench_case("rubato", "128s-l2-nonoise-ecp5", quick=False, params="Par-128S", lanes=2, noise=False)
@bench_case("rubato", "128m-l2-ecp5", quick=False, params="Par-128M", lanes=2, noise=True)
@bench_case("rubato", "128l-l2-ecp5", quick=False, params="Par-128L", lanes=2, noise=True)
@bench_case("rubato", "128l-l8-ecp5", quick=False, params="Par-128L", lanes=8, noise=True)
@bench_case("rubato", "128s-l8-ecp5", quick=False, params="Par-128S", lanes=8, noise=True)
@bench_case("rubato", "128s-l2-mul4-ecp5", quick=False, params="Par-128S", lanes=2, noise=True, mul_latency=4)
@bench_case("rubato", "128s-l16-ecp5", quick=False, params="Par-128S", lanes=16, noise=True)
def rubato_synth(params, lanes, noise, multiplier=None, mul_latency=None, router="router2",
                 placer="static", synth_args=("-nowidelut", "-nodffe"), timeout=3000):
    """ECP5-85F area and post-route Fmax of the whole core; blocks/s and keystream words/s at
    that Fmax (noise-on cases: blocks with noise, ``cycles_per_block(noise=True)``), and against
    the reference software (6-10k cycles per block at 2.1 GHz).

    The flow that routes the core's SHAKE256 round: Yosys ``synth_ecp5 -nowidelut -nodffe`` (no
    PFU-mux LUT5s: a LUT5 is two LUT4s reading the same four signals, which doubles the tile input
    pins the Keccak round needs; enables folded into LUTs), nextpnr's ``static`` placer and
    router2."""
    from hhe_gen.cores.rubato import RubatoCore
    from hhe_gen.flow.synth import synth_ecp5

    kwargs = {} if multiplier is None else {"multiplier": multiplier}
    core = RubatoCore(params, lanes, noise=noise, mul_latency=mul_latency, **kwargs)
    p = core.params
    tag = "" if noise else "_nonoise"
    tag += "" if multiplier is None else f"_{multiplier}"
    tag += "" if mul_latency is None else f"_mul{mul_latency}"
    r = synth_ecp5(core, name=f"rubato_{p.short_name.lower()}_l{lanes}{tag}", router=router,
                   timeout=timeout, synth_args=tuple(synth_args),
                   nextpnr_args=() if placer == "heap" else ("--placer", placer))
    res = {k: r.get(k) for k in ("LUT4", "FF", "CCU2C", "MULT18X18D", "DP16KD", "DPR16X4", "fmax_mhz")}
    res["nextpnr_s"] = r.get("nextpnr_s")
    res["critical_path"] = r.get("critical_path")
    cycles = core.cycles_per_block(_positions(p), noise=noise)
    res["cycles_per_block"] = cycles
    if r.get("fmax_mhz"):
        res["blocks_per_s"] = round(r["fmax_mhz"] * 1e6 / cycles)
        res["Mwords_per_s"] = round(r["fmax_mhz"] * p.l / cycles, 2)
        res["vs_software_blocks_per_s"] = [SOFTWARE_BLOCKS_PER_S[0], SOFTWARE_BLOCKS_PER_S[1]]
        res["speedup_vs_software"] = [round(res["blocks_per_s"] / SOFTWARE_BLOCKS_PER_S[1], 2),
                                      round(res["blocks_per_s"] / SOFTWARE_BLOCKS_PER_S[0], 2)]
    return res


@bench_case("rubato", "128s-l2-multipliers", quick=False, params="Par-128S", lanes=2)
def rubato_multipliers(params, lanes):
    """Yosys area (ECP5 synth_ecp5 and Xilinx synth_xilinx -family xc7) of the whole core (noise
    on) with each multiplier kind: "barrett" (modmul; the Feistel adds x[i] in the datapath) and
    "butterfly" (the multi-field Butterfly's Z_t field; op "mac" in the Feistel)."""
    from hhe_gen.cores.rubato import RubatoCore
    from hhe_gen.flow.synth import synth_ecp5, synth_xilinx

    res = {}
    for kind in ("barrett", "butterfly"):
        tag = f"rubato_{params.replace('Par-', '').lower()}_l{lanes}_{kind}"
        ecp5 = synth_ecp5(RubatoCore(params, lanes, multiplier=kind), name=tag, place_and_route=False,
                          timeout=3000)
        xc7 = synth_xilinx(RubatoCore(params, lanes, multiplier=kind), name=tag, timeout=3000)
        res[kind] = {"ecp5": {k: ecp5[k] for k in ("LUT4", "FF", "MULT18X18D", "CCU2C", "DPR16X4")},
                     "xc7": {k: xc7.get(k) for k in ("LUT", "FF", "DSP48E1", "CARRY4", "LUTRAM", "SRL")}}
    return res


@bench_case("rubato", "128s-l16-area", quick=False, params="Par-128S", lanes=16, noise=True)
@bench_case("rubato", "128s-l8-area", quick=False, params="Par-128S", lanes=8, noise=True)
def rubato_area(params, lanes, noise):
    """Yosys synth_ecp5 area only (no place and route) of the whole core, e.g. the fully
    parallel variant; ``fits_85f``: its MULT18X18D within the ECP5-85F's 156."""
    from hhe_gen.cores.rubato import RubatoCore
    from hhe_gen.flow.synth import synth_ecp5

    core = RubatoCore(params, lanes, noise=noise)
    p = core.params
    area = synth_ecp5(core, name=f"rubato_{p.short_name.lower()}_l{lanes}" + ("" if noise else "_nonoise"),
                      place_and_route=False, timeout=3000)
    return {**{k: area[k] for k in ("LUT4", "FF", "MULT18X18D", "CCU2C", "DPR16X4")},
            "fits_85f": area["MULT18X18D"] <= ECP5_85F_MULT18,
            "cycles_per_block": core.cycles_per_block(_positions(p), noise=noise)}
