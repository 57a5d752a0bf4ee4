"""Benchmarks of the Rubato keystream core (``hhe-gen bench rubato``).

Quick cases: cycles per keystream block for each parameter set and lane count, from the
documented formula (:func:`hhe_gen.cores.rubato.cycles_per_block`) for a fixed block (nonce
0x0123456789abcdef, counter 0: the rejection pattern comes from hashlib's SHAKE256), and - for
the lane counts that simulate quickly - the same block simulated (cycles and keystream checked
against the formula and the golden model).  The DNA-HHE reference (Par-128S/M/L: 1235 / 2087 /
3036 cycles per block, 2 MACs) and the ratio to it are listed.  The ``-ecp5`` cases (not quick)
synthesize and place the whole core (the shared XOF, noise path, multipliers) for ECP5-85F:
LUT4, FF, MULT18X18D, DP16KD and Fmax, and the resulting blocks per second.

Cycles per block (quick cases, the fixed block above, XOF included, noise off - with noise the
output of many-lane cores waits for the shared XOF's noise words, ``cycles_per_block(noise=True)``:
1 and 2 lanes unchanged, e.g. Par-128S L=8 250, L=16 231; DNA-HHE's 2-MAC figure in brackets;
targets 0.8 x: 988 / 1670 / 2429)::

    Par-80S    L=1 308   L=2 220   L=4 176   L=8 154   L=16 143
    Par-80M    L=1 593   L=2 395   L=4 296   L=6 275   L=12 260   L=36 258
    Par-80L    L=1 957   L=2 605   L=4 453   L=8 425   L=16 421   L=64 418
    Par-128S   L=1 572   L=2 388   L=4 296   L=8 250   L=16 229             [1235]
    Par-128M   L=1 761   L=2 491   L=4 356   L=6 335   L=12 320   L=36 318  [2087]
    Par-128L   L=1 957   L=2 605   L=4 453   L=8 425   L=16 421   L=64 418  [3036]

With n lanes the block is XOF-bound: the (r+1)*n round constants arrive one candidate per cycle
(plus 24 cycles per SHAKE256 permutation) while the 4r+3 phases take 1 + depth + 1 cycles each.

Area (Yosys 0.70 synth_ecp5, the core in hhe_gen.flow.synth's TimingHarness): Par-128S, 2 lanes,
noise on, with the two XOFs of before (``shared_xof=False``): 17531 LUT4, 6416 FF, 1014 CCU2C,
34 MULT18X18D, 51 TRELLIS_DPR16X4; with the Butterfly multipliers 17834 / 6702 / 1042 / 34 (case
``128s-l2-multipliers``, also xc7).  With the shared XOF (now the default), same flow: 10430
LUT4, 4797 FF, 1008 CCU2C, 34 MULT18X18D (-7101 LUT4, -1619 FF: one Keccak-f[1600] less).
The fully parallel Par-128S (16 lanes, noise on, shared XOF; case ``128s-l16-area``, Yosys
only): 21605 LUT4, 14053 FF, 4071 CCU2C, 202 MULT18X18D (two XOFs: 28687 LUT4, 15672 FF) -
more multipliers than the 85F's 156 (17 Barrett units of 10 tiles, and 2 tiles per lane for
the ``(s >> b) * q`` of the linear layers' reduction, which a shift-and-add by the sparse q
would free), so it cannot be placed on that device as built; 231 cycles per block with noise.

Place and route (nextpnr-ecp5 0.11.1, LFE5U-85F CABGA381, seed 1).  Why nothing routed before:
the SHAKE256 XOF's Keccak round.  Per module (the flattened netlist's cell names), Par-80S, 1
lane, noise off: XOF 6589 LUT4 + 1466 PFUMX + 1615 FF, datapath 1373 LUT4 + 1508 FF + 222
CCU2C + 12 MULT18X18D, round keys 1034 LUT4 + 505 FF + 10 MULT18X18D, message 8 LUT4 + 134 FF.
The XOF is about 4 LUT4 per state bit, and every state bit feeds LUT inputs in other lanes
(theta's column parities, rho/pi's lane moves), so nothing in it is local; HeAP packed it into
~1100 tiles at ~7.6 cells per tile, and router2's congestion map (``--router2-heatmap``) put 71%
of the overuse on the XOF state's nets, 8% on the XOF's absorb/enable control (a 2430-sink net)
and 6% on its 34:1 output word multiplexer; the datapath (a rotating register: every tap a fixed
wire, the largest fan-out the 416-bit state enables) had under 5%.  Most overused wires were the
tiles' local input multiplexers: a PFU-mux LUT5 is two LUT4s reading the same four signals, so
the wide-LUT mapping doubles the input pins the Keccak needs.  Measured on that core (router2
overused wires at iteration 5 / 18 / final): HeAP placer 6861 / 4728 / stopped after 18 min;
router1 after HeAP: 6900 arcs left after 16 min (plateau), stopped; ``--placer-heap-beta 0.5``:
the same placement (no effect); ``--placer static``: 5164 / 3519 at iteration 15 (plateau
~3400); ``static`` and ``synth_ecp5 -nowidelut``: 3223 / 813 (plateau ~650 at iteration 40);
``static``, ``-nowidelut``
and ``-nodffe`` (XOF 7030 LUT4, no PFUMX; the enables go into LUTs, spreading the round a little
more): routed at iteration 33, 356 s, **54.4 MHz** post-route (critical path: the Feistel
squarer's last Barrett stage into the datapath's ``x[i] + x[i-1]^2 mod q`` carry chains).  The
``-ecp5`` cases use that flow (:func:`rubato_synth`), and the core has one XOF in all
configurations now (``shared_xof``, :class:`~hhe_gen.cores.rubato.RubatoCore`), where noise
configurations had two.  Results (all routed to the end; blocks/s at the post-route Fmax and the
benchmark block's cycles; the reference software does 210k-350k blocks/s)::

    case                  LUT4    FF    MULT18  Fmax MHz  cycles  blocks/s   router2
    80S L1 noise off      10512  3799     22     54.39     297     183k     33 it., 356 s
    128s-l2-ecp5          11997  4797     34     51.79     365     142k     30 it., 419 s
    128s-l8-ecp5          16324  8764    106     51.61     231     223k     64 it., 790 s

(80S L1: the netlist of case ``80s-l1-nonoise-ecp5`` placed and routed by hand with this flow,
LUT4 with ``-nodffe``.)  At 1 and 2 lanes the critical path was the Feistel squarer's last
Barrett stage (``cores/arith`` modmul's final correction) followed by the datapath's modular
addition of ``x[i]`` (``lanes.mod_add``): about 31 carry segments in one cycle, 13.6 of its
19.3 ns routing; at 8 lanes the linear layers' reduction (``lin_sum`` -> ``lin``: the quotient
estimate's multiply-subtract and the conditional subtractions in one cycle) was as slow (19.4
ns).  Both are a register apart now (the square registered before the addition, the estimate
before its corrections: one cycle more per phase), measured by ``hhe-gen bench fmax``'s Rubato
rows (same flow, seed 1; docs/timing.md)::

    case                  LUT4    FF    MULT18  Fmax MHz  cycles  blocks/s
    rubato-128s-l2        12032  5013     34     58.60     388     151k
    rubato-128s-l8        16442  9622    106     47.38     250     190k

At 2 lanes the critical path moved to the XOF (its message unit's ``busy`` into the state's
select, 17.1 ns of which 15.2 routing); at 8 lanes (106 of the 156 MULT18X18D) it is now inside a
squarer (its product tiles into the reducer, 21.1 ns, 15.5 routing): 8 lanes lost 4.2 MHz and a
block costs 19 cycles more, so 190k blocks/s instead of 223k, while 2 lanes gained 6 %.  With
squarers of latency 4 (``mul_latency=4``: one more stage in the Barrett reducer) the 8-lane core
reaches 60.0 MHz at 274 cycles, 219k blocks/s (critical path: the round-key multiplier into its
LUT-RAM bank, 16.7 ns); the XOF's control fanout is the next step at 1 and 2 lanes.
"""

from __future__ import annotations

from hhe_gen.apps.bench import bench_case
from hhe_gen.cores.rubato.schedule import block_positions
from hhe_gen.cores.unused import mark_unused

DNA_HHE = {"Par-128S": 1235, "Par-128M": 2087, "Par-128L": 3036}
NONCE, COUNTER = 0x0123456789ABCDEF, 0
#: the reference software: ~6-10k cycles per block on a 2.1 GHz x86 core
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

    The flow that routes (module docstring): Yosys ``synth_ecp5 -nowidelut`` (no PFU-mux LUT5s:
    a LUT5 is two LUT4s reading the same four signals, which doubles the tile input pins the
    Keccak round needs), nextpnr's ``static`` placer and router2."""
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
