"""Benchmarks of the NTT cores (``hhe-gen bench ntt``): the iterative core and the pipelined SDF / MDC.

Quick cases:

* ``cycles-n<log N>-p<P>``: N = 2^10 .. 2^16, P = 1 .. 32: the controller's transform cycles
  (``IterativeNtt.transform_cycles``: ``stage_starts`` at depth D = L + 4, forward and inverse),
  their excess over and ratio to the butterfly bound (N/2) log2(N) / P, and the cycles of a whole
  command (load + transform + unload, ``command_cycles``), for the default 30-bit Barrett
  butterfly (L = 8, D = 12: T = bound + 11; D = 14 where a lane's twiddle ROM is built of
  registered pieces, 2N/P > 1024 words: bound + 13; N = 2^10 P = 32: + 15; all within the goal
  1.03 x bound + 64, hhe-gen's own); up to N = 2^14 also the single-port banking's transform cycles
  (D = 13, 15 with ROM pieces) and ratio, and the transform cycles with twiddles on the fly
  (D = 12 + the twiddle multiplier's latency).
* ``sim-n<N>-p<P>``: a forward and an inverse transform simulated in Amaranth's simulator, their
  measured cycles next to the formulas (and the outputs checked against the model).

Not quick (``synth-n<log N>-p<P>-<bits>b``): ECP5-85F area and Fmax (``synth_ecp5``, Yosys +
nextpnr-ecp5) and Xilinx 7-series LUT / FF / DSP / BRAM (``synth_xilinx``) at N = 2^12, 2^13, P = 2, 8,
32-bit (Barrett, two primes) and 54-bit (DNA-HHE's three special primes, special-prime Barrett,
k = 54, in the :data:`FAST_54` configuration: no Karatsuba, LUT-row q_est*bnd, MULT18X18D
primitives, butterfly latency 11; :data:`ROUTABLE_SYNTH`, :data:`ROUTABLE_PNR`, router2) primes;
these take long (their run times are with their figures in docs/figures.md).

Not quick (``area-n<log N>-p<P>-<bits>b``, N = 2^12, 2^13, 2^16 x P = 2, 8, 32 x 32, 54 bits: the
grid of sizes the project targets): Yosys-only ECP5 area and whether it fits an LFE5U-85F (LUT4 / MULT18X18D / DP16KD);
twiddles on the fly at N = 2^16.  Without synthesis it is already clear that P = 32 at 54 bits
cannot fit (32 butterflies x 12 MULT18X18D = 384 > 156) and that N = 2^16 at 54 bits is marginal
at best (the data banks alone hold 2^16 x 54 = 3.54 Mbit, the 85F's 208 DP16KD 3.83 Mbit:
2048 x 9 packing needs 192 DP16KD before any twiddle table).

What these cases measured is in docs/figures.md, section "Iterative NTT": post-route area, Fmax
and critical path of N = 2^12 and 2^13 at P = 2 (``ntt-ecp5``), where the LUT4 of N = 2^13,
P = 8, 54 bits go for each crossbar design (``ntt-ecp5-area``: every LUT4 charged to the
registers / memory inputs / ports its cone feeds), and router2's overused wires of that core,
which places but does not route (``ntt-ecp5-route``).

``plot`` (quick): ``bench-results/ntt.png``, cycles against P (iterative, bound, pipelined per
polynomial), the iterative transform's ratio to the bound against the goal, and the ECP5 area of
the synthesis cases run in the same invocation.

Pipelined (:class:`~hhe_gen.cores.ntt.PipelinedNtt`), quick:

* ``pipe-<arch>-n<log N>-p<P>``: N = 2^10 .. 2^16, SDF P = 1 .. 32, MDC P = 2 .. 32 (30-bit
  Barrett, L = 8): cycles per polynomial (N/P, the initiation interval), latency of the forward
  and the inverse core (first input beat -> first output beat), butterflies, delay-line words
  (and how many of them in memory) and twiddle ROM words (per direction) - from the formulas.
* ``pipe-sim-<arch>-n<N>-p<P>``: forward and inverse simulated in Amaranth (three polynomials
  back to back, different primes), measured latency and output spacing next to the formulas.

Not quick (``pipe-synth-<arch>-n12-54b``): N = 2^12, the three 54-bit DNA-HHE primes
(special-prime Barrett, k = 54), forward core, SDF P = 1 (4096 cycles per polynomial) and MDC
P = 2 (2048): ECP5-85F area / Fmax and Xilinx 7-series area (Proteus, the published reference:
SDF 4096 / MDC 2048 cycles per polynomial at N = 2^12; its MDC uses 384 MULT18X18D and does not
fit an ECP5-85F).
"""

from __future__ import annotations

from hhe_gen.apps.bench import bench_case
from hhe_gen.cores.unused import mark_unused

LANES = (1, 2, 4, 8, 16, 32)


def _primes(n, bits, count):
    from hhe_gen.params.primes import dna_hhe_primes, ntt_primes
    if bits == 54:
        return [p.q for p in dna_hhe_primes(54, n, count=count)]
    return ntt_primes(n, bits, count)


def _core(n, lanes, bits=30, count=1, target="ecp5", fast=False, twiddles="rom", plan=False):
    """The benchmarked core; ``fast`` (54 bits, synthesis only): the butterfly configuration measured
    fastest in isolation (:data:`FAST_54`; ``dsp="primitive"`` on ECP5 cannot be simulated by
    Amaranth, the tests use ``dsp="model"``, the same wiring); ``plan``: its plan only (the cycle
    formulas, no hardware: :class:`~hhe_gen.cores.ntt.iterative.IterativeNttPlan`)."""
    from hhe_gen.cores.ntt.iterative import IterativeNtt, IterativeNttPlan
    make = IterativeNttPlan if plan else IterativeNtt
    qs = _primes(n, bits, count)
    if bits == 54:
        extra = dict(FAST_54) if fast else {}
        if fast and target != "ecp5":
            extra.pop("dsp")
        return make(n, lanes, qs, kind="special-barrett", k=54, target=target, twiddles=twiddles, **extra)
    return make(n, lanes, qs, target=target, twiddles=twiddles)


#: ECP5 flow of the 54-bit cores, the one that made Rubato route (:mod:`.rubato`): Yosys without
#: wide-LUT muxes and clock-enable flip-flops, nextpnr's static placer, router2 (against Yosys'
#: defaults on the N = 2^13, P = 8 core: docs/figures.md, ntt-ecp5-route).
ROUTABLE_SYNTH = ("-nowidelut", "-nodffe")
ROUTABLE_PNR = ("--placer", "static")

#: 54-bit synthesis configuration: special-prime Barrett without Karatsuba, q_est*bnd as LUT
#: rows, MULT18X18D primitives taking the pipeline registers, butterfly latency 11 (the fastest
#: Z_q-only butterfly alone: docs/figures.md, butterfly-ecp5).
FAST_54 = {"karatsuba": False, "bnd_luts": True, "dsp": "primitive", "latency": 11}


def ntt_cycles(log_n, lanes):
    core = _core(1 << log_n, lanes, plan=True)
    fwd, inv = core.transform_cycles(False), core.transform_cycles(True)
    res = {"cycles": fwd, "inv_cycles": inv, "bound": core.bound, "over_bound": max(fwd, inv) - core.bound,
           "ratio": round(max(fwd, inv) / core.bound, 4), "depth": core.depth,
           "command": core.command_cycles(False)}
    if log_n <= 14:             # the single-port plan (its Python schedule is slow above 2^14)
        from hhe_gen.cores.ntt.iterative import IterativeNttPlan
        sp = IterativeNttPlan(1 << log_n, lanes, core.moduli, banking="single")
        cyc = max(sp.transform_cycles(False), sp.transform_cycles(True))
        res.update({"single_cycles": cyc, "single_ratio": round(cyc / core.bound, 4)})
        otf = IterativeNttPlan(1 << log_n, lanes, core.moduli, twiddles="otf")
        res["otf_cycles"] = max(otf.transform_cycles(False), otf.transform_cycles(True))
    return res


for _log_n in range(10, 17):
    for _p in LANES:
        bench_case("ntt", f"cycles-n{_log_n}-p{_p}", log_n=_log_n, lanes=_p)(ntt_cycles)


def ntt_sim(n, lanes):
    import random

    from hhe_gen.sim.ntt import simulate
    from hhe_gen.models.ntt import intt, ntt
    core = _core(n, lanes, count=2)
    rng = random.Random(n + lanes)
    q0, q1 = core.moduli
    a = [rng.randrange(q0) for _ in range(n)]
    b = [rng.randrange(q1) for _ in range(n)]
    fwd, inv = simulate(core, [(a, False, 0), (b, True, 1)])
    assert fwd.output == ntt(a, q0) and inv.output == intt(b, q1), "output differs from the model"
    res = {}
    for tag, r, inverse in (("fwd", fwd, False), ("inv", inv, True)):
        # first output = command + 1 + load + transform + 1
        res[f"{tag}_transform_measured"] = r.first_out - r.cmd - 2 - core.load_cycles
        res[f"{tag}_transform_formula"] = core.transform_cycles(inverse)
        res[f"{tag}_command_measured"] = r.done + 1 - r.cmd
        res[f"{tag}_command_formula"] = core.command_cycles(inverse)
    res["bound"] = core.bound
    return res


for _n, _p in ((64, 4), (256, 8), (1024, 8)):
    bench_case("ntt", f"sim-n{_n}-p{_p}", n=_n, lanes=_p)(ntt_sim)


def ntt_synth(log_n, lanes, bits):
    from hhe_gen.flow.synth import synth_ecp5, synth_xilinx
    n = 1 << log_n
    count = 3 if bits == 54 else 2
    fast = bits == 54
    core = _core(n, lanes, bits, count, fast=fast)
    mark_unused(core)
    name = f"ntt_n{n}_p{lanes}_l{core.butterfly_latency}_rom" if fast else "ntt"
    if fast:    # the flow that routes the 54-bit cores (see the module docstring)
        ecp5 = synth_ecp5(core, name=name, timeout=10800, router="router2", synth_args=ROUTABLE_SYNTH,
                          nextpnr_args=ROUTABLE_PNR)
    else:
        ecp5 = synth_ecp5(core, name=name, timeout=7200, router="router1")
    xc7 = synth_xilinx(_core(n, lanes, bits, count, target="xilinx", fast=fast), name=name, timeout=7200)
    res = {"latency": core.butterfly_latency, "cycles": core.transform_cycles(False), "bound": core.bound}
    res.update({k: ecp5.get(k) for k in ("LUT4", "FF", "MULT18X18D", "DP16KD", "fmax_mhz")})
    res.update({f"xc7_{k}": xc7.get(k) for k in ("LUT", "FF", "DSP48E1", "RAMB18", "RAMB36")})
    crit = ecp5.get("critical_path") or {}
    res["crit_ns"] = crit.get("ns")
    res["crit_signals"] = " ".join(crit.get("signals", [])[:3])
    if ecp5.get("fmax_mhz"):
        res["us_per_ntt"] = round(res["cycles"] / ecp5["fmax_mhz"], 2)
    _SYNTH_RESULTS[(log_n, lanes, bits)] = res
    return res


_SYNTH_RESULTS = {}     # (log N, P, bits) -> ntt_synth's result, for the plot of this run

for _log_n in (12, 13):
    for _p in (2, 8):
        for _bits in (32, 54):
            bench_case("ntt", f"synth-n{_log_n}-p{_p}-{_bits}b", quick=False, log_n=_log_n, lanes=_p,
                       bits=_bits)(ntt_synth)


#: LFE5U-85F capacity (LUT4, MULT18X18D, DP16KD) for the ``fits_85f`` verdicts.
ECP5_85F = {"LUT4": 83640, "MULT18X18D": 156, "DP16KD": 208}


def ntt_area(log_n, lanes, bits):
    """Yosys-only ECP5 area (``synth_ecp5(place_and_route=False)``) of one point of that grid;
    54 bits in the :data:`FAST_54` configuration, 32 bits Barrett (two primes), twiddles from the ROM
    up to N = 2^13 and on the fly at N = 2^16 (the ROM alone, 2N words per prime and direction,
    would exceed the 85F's block RAM).  ``fits_85f``: LUT4 (without the PFUMX / L6MUX wide-function
    muxes, which sit in the same slices), MULT18X18D and DP16KD within the LFE5U-85F's.  ``xc7_*``:
    the same core built for 7-series DSP48E1 (``target="xilinx"``) through Yosys ``synth_xilinx``
    (:func:`~hhe_gen.flow.synth.synth_xilinx_any`: ABC9, or the classic ABC where Yosys 0.70's ABC9
    stops)."""
    from hhe_gen.flow.synth import synth_ecp5, synth_xilinx_any
    n = 1 << log_n
    count = 3 if bits == 54 else 2
    twiddles = "otf" if log_n >= 16 else "rom"
    core = _core(n, lanes, bits, count, fast=bits == 54, twiddles=twiddles)
    mark_unused(core)
    name = f"ntt_n{n}_p{lanes}_{bits}b_{twiddles}"
    ecp5 = synth_ecp5(core, name=name, timeout=7200, place_and_route=False)
    xc7 = synth_xilinx_any(lambda: _core(n, lanes, bits, count, target="xilinx", fast=bits == 54,
                                         twiddles=twiddles), name=name, timeout=7200)
    res = {"twiddles": twiddles, "latency": core.butterfly_latency, "depth": core.depth,
           "cycles": core.transform_cycles(False), "bound": core.bound}
    res.update({k: ecp5.get(k) for k in ("LUT4", "FF", "MULT18X18D", "DP16KD", "CCU2C")})
    res["PFUMX"] = ecp5["cells"].get("PFUMX", 0)
    res["L6MUX21"] = ecp5["cells"].get("L6MUX21", 0)
    res["fits_85f"] = all((res[k] or 0) <= cap for k, cap in ECP5_85F.items())
    res["yosys_s"] = ecp5.get("yosys_s")
    res.update({f"xc7_{k}": xc7.get(k) for k in ("LUT", "FF", "DSP48E1", "RAMB18", "RAMB36", "yosys_s")})
    return res


for _log_n in (12, 13, 16):
    for _p in (2, 8, 32):
        for _bits in (32, 54):
            bench_case("ntt", f"area-n{_log_n}-p{_p}-{_bits}b", quick=False, log_n=_log_n, lanes=_p,
                       bits=_bits)(ntt_area)


# -- pipelined SDF / MDC --------------------------------------------------------------------------------
def _pipelined(n, lanes, arch, inverse, bits=30, count=1, target="ecp5"):
    from hhe_gen.cores.ntt import PipelinedNtt
    qs = _primes(n, bits, count)
    extra = {"kind": "special-barrett", "k": 54} if bits == 54 else {}
    core = PipelinedNtt(n, lanes, qs, arch=arch, inverse=inverse, target=target, **extra)
    mark_unused(core)
    return core


def pipelined_cycles(arch, log_n, lanes):
    fwd = _pipelined(1 << log_n, lanes, arch, False)
    inv = _pipelined(1 << log_n, lanes, arch, True)
    return {"cycles_per_poly": fwd.cycles_per_polynomial, "latency_fwd": fwd.latency, "latency_inv": inv.latency,
            "butterflies": fwd.butterflies, "delay_words": fwd.delay_words,
            "delay_words_in_memory": fwd.memory_delay_words, "twiddle_words": fwd.twiddle_words,
            "butterfly_latency": fwd.butterfly_latency}


for _log_n in range(10, 17):
    for _p in LANES:
        for _arch in ("sdf", "mdc"):
            if _arch == "mdc" and _p == 1:
                continue
            bench_case("ntt", f"pipe-{_arch}-n{_log_n}-p{_p}", arch=_arch, log_n=_log_n, lanes=_p)(pipelined_cycles)


def pipelined_sim(arch, n, lanes):
    import random

    from hhe_gen.sim.ntt_pipelined import simulate_pipelined
    from hhe_gen.models.ntt import intt, ntt
    res = {}
    for tag, inverse in (("fwd", False), ("inv", True)):
        core = _pipelined(n, lanes, arch, inverse, count=2)
        rng = random.Random(n + lanes)
        polys = [([rng.randrange(core.moduli[i % 2]) for _ in range(n)], i % 2) for i in range(3)]
        out = simulate_pipelined(core, polys)
        for (poly, sel), r in zip(polys, out):
            q = core.moduli[sel]
            assert r.output == (intt(poly, q) if inverse else ntt(poly, q)), "output differs from the model"
        res[f"{tag}_latency_measured"] = out[0].first_out - out[0].first_in
        res[f"{tag}_latency_formula"] = core.latency
        res[f"{tag}_spacing_measured"] = sorted({b.first_out - a.first_out for a, b in zip(out, out[1:])})
        res[f"{tag}_cycles_per_poly"] = core.cycles_per_polynomial
    return res


for _arch, _n, _p in (("sdf", 64, 1), ("sdf", 64, 4), ("mdc", 64, 2), ("mdc", 64, 8)):
    bench_case("ntt", f"pipe-sim-{_arch}-n{_n}-p{_p}", arch=_arch, n=_n, lanes=_p)(pipelined_sim)


def pipelined_synth(arch, log_n, lanes, bits):
    from hhe_gen.flow.synth import synth_ecp5, synth_xilinx
    n = 1 << log_n
    core = _pipelined(n, lanes, arch, False, bits, 3)
    res = {"cycles_per_poly": core.cycles_per_polynomial, "latency": core.latency,
           "butterflies": core.butterflies, "delay_words": core.delay_words}
    ecp5 = synth_ecp5(core, name=f"ntt_{arch}")
    res.update({k: ecp5.get(k) for k in ("LUT4", "FF", "MULT18X18D", "DP16KD", "fmax_mhz")})
    if ecp5.get("fmax_mhz"):
        res["us_per_poly"] = round(res["cycles_per_poly"] / ecp5["fmax_mhz"], 2)
    xc7 = synth_xilinx(_pipelined(n, lanes, arch, False, bits, 3, target="xilinx"), name=f"ntt_{arch}")
    res.update({f"xc7_{k}": xc7.get(k) for k in ("LUT", "FF", "DSP48E1", "RAMB18", "RAMB36")})
    return res


for _arch, _p in (("sdf", 1), ("mdc", 2)):
    bench_case("ntt", f"pipe-synth-{_arch}-n12-54b", quick=False, arch=_arch, log_n=12, lanes=_p,
               bits=54)(pipelined_synth)


# -- plots ----------------------------------------------------------------------------------------------
def plot(path="bench-results/ntt.png", log_ns=(10, 13, 16)):
    """Cycles against lanes P for N = 2^10, 2^13, 2^16: the iterative core's transform, the bound
    (N/2) log2(N) / P (dashed) and the pipelined forms' cycles per polynomial (N/P); the iterative
    transform's ratio to the bound against the goal (1.03 x bound + 64) / bound; and, for the synthesis cases of this run,
    ECP5 LUT4 / MULT18X18D against P (``bench-results/ntt.png``)."""
    from hhe_gen.apps.report import plot_series
    cycles, ratio = {}, {}
    for log_n in log_ns:
        n = 1 << log_n
        it, bound, pipe = [], [], []
        for p in LANES:
            core = _core(n, p, plan=True)
            it.append((p, max(core.transform_cycles(False), core.transform_cycles(True))))
            bound.append((p, core.bound))
            pipe.append((p, _pipelined(n, p, "sdf", False).cycles_per_polynomial))
        cycles[f"iterative N=2^{log_n}"] = it
        cycles[f"bound N=2^{log_n}"] = bound
        cycles[f"SDF/MDC per poly N=2^{log_n}"] = pipe
        ratio[f"iterative N=2^{log_n}"] = [(p, c / b) for (p, c), (_, b) in zip(it, bound)]
        ratio[f"goal N=2^{log_n}"] = [(p, (1.03 * b + 64) / b) for p, b in bound]
    panels = [{"series": cycles, "xlabel": "lanes P", "ylabel": "cycles", "logx": True, "logy": True,
               "dashed": [k for k in cycles if k.startswith("bound")]},
              {"series": ratio, "xlabel": "lanes P", "ylabel": "transform cycles / bound", "logx": True,
               "dashed": [k for k in ratio if k.startswith("goal")]}]
    for metric in ("LUT4", "MULT18X18D"):
        series = {}
        for (log_n, p, bits), r in sorted(_SYNTH_RESULTS.items()):
            series.setdefault(f"N=2^{log_n} {bits}b", []).append((p, r.get(metric)))
        if series:
            panels.append({"series": series, "xlabel": "lanes P", "ylabel": f"ECP5 {metric}", "logx": True})
    return {"plot": str(plot_series(panels, path, title="NTT: cycles and area against lanes")),
            "panels": len(panels), "area_points": len(_SYNTH_RESULTS)}


bench_case("ntt", "plot", path="bench-results/ntt.png")(plot)
