"""``hhe-gen bench butterfly``: the multi-field butterfly (cores/arith/butterfly.py).

The configuration is DNA-HHE's (section III-B): Z_q with three 54-bit special primes
(q = 2^54 - 2N*bnd + 1, N = 2^13, 10-bit bnd; special-prime Barrett), Z_t with Rubato's 26-bit
t = 0x3EE0001 (generic Barrett, Karatsuba), complex fixed point 29 bits with 26 fraction bits.

Quick cases
-----------
* ``latency``: the full unit behind its stream wrapper, simulated at full rate over every op and
  field (results checked against the golden model): latency (first-in to first-out), operations
  per cycle, and the documented latency formula.
* ``tiles-<fields>-<target>``: for every combination of enabled fields, the DSP tiles of the
  shared unit (MULT18X18D on ecp5, DSP48E1 on xilinx) next to the sum of the fields' own
  multipliers (what separate units would use), the saving, per-field tiles and the sharing plan
  (unit -> (start, latency) inside the multiplier section).

Synthesis cases (not quick)
---------------------------
``synth-<fields>-<share>``: ECP5-85F (Yosys ``synth_ecp5`` + ``nextpnr-ecp5``, seed 1, 125 MHz
target) LUT4 / FF / MULT18X18D / post-route Fmax and the critical path, and Xilinx 7
(``synth_xilinx``, the unit built with xilinx tiles) LUT / FF / DSP48E1, for the shared unit with
all fields, the same with the sharing plan bounded to 8 ns stages (``max_stage_ns``), without
sharing, and each field alone.
"""

from __future__ import annotations

from itertools import combinations

from hhe_gen.apps.bench import bench_case

__all__ = ["FIELD_SETS", "build"]

FIELD_SETS = [c for n in (1, 2, 3) for c in combinations(("zq", "zt", "complex"), n)]
RUBATO_T = 0x3EE0001


def _configs():
    from hhe_gen.models.fft import FixedPointFormat
    from hhe_gen.params import dna_hhe_primes
    qs = [p.q for p in dna_hhe_primes(54, 1 << 13, 10, count=3)]
    return {"zq": dict(kind="special-barrett", moduli=qs, k=54, log_n=13),
            "zt": dict(moduli=[RUBATO_T], karatsuba=True),
            "complex": FixedPointFormat(29, 26)}


def build(fields=("zq", "zt", "complex"), *, plan=False, **kw):
    """The benchmark's butterfly with the given fields enabled (keywords go to Butterfly);
    ``plan``: its :class:`~hhe_gen.cores.arith.butterfly.ButterflyPlan` (tiles, latency; no hardware)."""
    from hhe_gen.cores.arith.butterfly import Butterfly, ButterflyPlan
    cfg = _configs()
    return (ButterflyPlan if plan else Butterfly)({f: cfg[f] for f in fields}, **kw)


@bench_case("butterfly", "latency", ops=400)
def butterfly_latency(ops):
    import random

    from hhe_gen.cores.arith.butterfly import ButterflyStream, pack_complex
    from hhe_gen.sim.stream import run_stream
    bf = build()
    rng = random.Random(1)
    vecs = []
    for i in range(ops):
        f = i % 3
        vec = {"op": (i // 3) % 6, "field": f, "sel": rng.randrange(3)}
        if bf.fields[f] == "complex":
            vec.update({k: pack_complex((rng.randint(bf.fmt.min_int, bf.fmt.max_int),
                                         rng.randint(bf.fmt.min_int, bf.fmt.max_int)), bf.fmt) for k in "abwc"})
        else:
            q = bf.moduli[bf.fields[f]][vec["sel"] % len(bf.moduli[bf.fields[f]])]
            vec["sel"] %= len(bf.moduli[bf.fields[f]])
            vec.update({k: rng.randrange(q) for k in "abwc"})
        vecs.append(vec)
    run = run_stream(ButterflyStream(bf), vecs)
    want = []
    for v in vecs:
        field = bf.fields[v["field"]]
        x, y = bf.model(v["op"], field, v["a"], v["b"], v["w"], v["c"], sel=v["sel"] if field != "complex" else 0)
        want.append({"x": x, "y": y})
    span = run.out_cycles[-1] - run.out_cycles[0]
    return {"latency_cycles": run.latency, "latency_formula": f"2*{bf.add_latency} + {bf.mul_latency}",
            "ops_per_cycle": round((ops - 1) / span, 4) if span else None,
            "all_equal_model": run.outputs == want, "tiles": bf.tiles}


def butterfly_tiles(fields, target):
    bf = build(tuple(fields), target=target, plan=True)
    saved = bf.tiles_separate - bf.tiles
    res = {"tiles": bf.tiles, "tiles_separate": bf.tiles_separate, "saved": saved,
           "saved_pct": round(100.0 * saved / bf.tiles_separate, 1), "latency": bf.latency}
    res.update({f"{f}_tiles": n for f, n in bf.tiles_by_field.items()})
    res["plan"] = " ".join(f"{u}:{s}+{lat}" for u, (s, lat) in bf.share_plan.items())
    return res


def _short(fields):
    return "+".join("cx" if f == "complex" else f for f in fields)


for _target in ("ecp5", "xilinx"):
    for _fields in FIELD_SETS:
        bench_case("butterfly", f"tiles-{_short(_fields)}-{_target}", fields=list(_fields),
                   target=_target)(butterfly_tiles)


def butterfly_synth(fields, share, max_stage_ns=None):
    from hhe_gen.flow.synth import synth_ecp5, synth_xilinx
    kw = dict(share=share, max_stage_ns=max_stage_ns)
    ecp5 = synth_ecp5(build(tuple(fields), **kw), name="butterfly")
    xc7 = synth_xilinx(build(tuple(fields), target="xilinx", **kw), name="butterfly")
    bf = build(tuple(fields), plan=True, **kw)
    res = {"tiles": bf.tiles, "latency": bf.latency}
    res.update({k: ecp5.get(k) for k in ("LUT4", "FF", "CCU2C", "MULT18X18D", "fmax_mhz")})
    crit = ecp5.get("critical_path") or {}
    res["crit_ns"] = crit.get("ns")
    res["crit_signals"] = " ".join(crit.get("signals", [])[:4])
    res.update({f"xc7_{k}": xc7.get(k) for k in ("LUT", "FF", "DSP48E1", "CARRY4")})
    return res


for _fields, _share, _ns in [(("zq", "zt", "complex"), True, None), (("zq", "zt", "complex"), True, 8.0),
                             (("zq", "zt", "complex"), False, None),
                             (("zq",), True, None), (("zt",), True, None), (("complex",), True, None)]:
    _tag = ("shared" if _share else "separate") + ("" if _ns is None else f"-{_ns:g}ns")
    bench_case("butterfly", f"synth-{_short(_fields)}-{_tag}", quick=False, fields=list(_fields), share=_share,
               max_stage_ns=_ns)(butterfly_synth)
