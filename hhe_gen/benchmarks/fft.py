"""Benchmarks of the special FFT / IFFT core and the CKKS encoder/decoder (``hhe-gen bench fft``).

* ``cycles-*`` (quick): the cores simulated (Amaranth, full rate) on random slots, output checked
  against the model; measured cycles (first input beat -> last output beat, and the compute part)
  next to the documented formula and the target (n/2P) log2(n) + delay.
* ``precision-*`` (quick at N = 2^10 and 2^13, the rest not quick): bits of precision,
  -log2(mean |err|) and -log2(max |err|) of the complex slots against the float64 originals, on
  uniform random slots in the unit disc ("disc") and on real-only slots ("real"), for
  A  hardware encode (:func:`hhe_gen.models.ckks_fixed.encode_fixed`, bit-exact with the encoder
     core) -> float64 decode (:func:`hhe_gen.models.ckks.decode`, Lattigo's algorithm),
  B  float64 encode (:func:`hhe_gen.models.ckks.encode`, bit-exact with Lattigo v6) -> hardware
     decode (:func:`hhe_gen.models.ckks_fixed.decode_fixed`),
  E  hardware encode -> hardware decode (end to end),
  computed with the models (the cores equal them bit for bit; large N would take hours in
  simulation).  Delta = 2^50 and a 61-bit prime throughout, so the fixed point is the limit.
* ``synth-*`` (not quick): ECP5-85F area / Fmax of the IFFT core (:func:`hhe_gen.synth.synth_ecp5`).
  ``synth(kind="encoder", ...)`` builds the CKKS encoder instead, but Yosys 0.70 (YoWASP) stops
  in synth_ecp5's ABC9 reintegration on it (``Assert `count_id(wire->name) == 0' failed``, for
  P = 2 and 4 alike, while the IFFT alone goes through), so no encoder case is registered.  Measured (Yosys 0.70 + nextpnr-ecp5, LFE5U-85F, seed 1):
  SpecialIfft n = 4096 (N = 2^13), P = 2, 29/26: 6507 LUT4, 4702 FF, 640 CCU2C, 18 MULT18X18D
  (3 x 3 tiles per butterfly), 30 DP16KD, 79.0 MHz; the critical path is a bank's read data
  through the output lane multiplexer to the port (12.7 ns, 4 LUT levels), so an output register
  would be the next step.

The precision table is in :mod:`hhe_gen.cores.ckks`.
"""

from __future__ import annotations

import cmath
import math
import random

from . import bench_case

LOG_SCALE = 50


def _slots(n, seed, kind):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        z = cmath.rect(math.sqrt(rng.random()), rng.random() * 2 * math.pi)
        out.append(complex(z.real, 0.0) if kind == "real" else z)
    return out


def precision(log_n: int, width: int, frac_bits: int, kind: str = "disc", seeds=(1,), rounding="half-up") -> dict:
    """Bits of precision of paths A, B, E (module docstring), averaged over ``seeds`` (mean of the
    per-seed mean bits, min of the per-seed max bits)."""
    from hhe_gen.models import ckks, ckks_fixed
    from hhe_gen.models.fft import FixedPointFormat
    from hhe_gen.params import CKKSParams, RingParams, ntt_primes
    n_ring = 1 << log_n
    fmt = FixedPointFormat(width, frac_bits, rounding)
    q = ntt_primes(n_ring, 61, 1)[0]
    params = CKKSParams(RingParams(n_ring, (q,)), LOG_SCALE)
    acc = {p: ([], []) for p in "ABE"}
    for seed in seeds:
        slots = _slots(n_ring // 2, seed, kind)
        rows = ckks_fixed.encode_slots(slots, fmt, LOG_SCALE, (q,))
        got = {"A": ckks.decode(params, ckks.Plaintext(rows, params.scale)),
               "E": ckks_fixed.decode_slots(rows[0], q, fmt, LOG_SCALE)}
        ref = ckks.encode(params, slots)
        got["B"] = ckks_fixed.decode_slots(ref.rows[0], q, fmt, LOG_SCALE)
        for p, vals in got.items():
            mean, worst = ckks_fixed.precision_bits(slots, vals)
            acc[p][0].append(mean)
            acc[p][1].append(worst)
    out = {}
    for p, (means, worsts) in acc.items():
        out[f"{p}_mean_bits"] = round(sum(means) / len(means), 2)
        out[f"{p}_max_bits"] = round(min(worsts), 2)
    return out


def _precision_cases():
    widths = ((24, 21), (29, 26), (32, 29), (34, 31), (36, 33), (40, 37))
    for log_n in (10, 11, 12, 13, 14, 15, 16):
        for w, f in widths:
            for kind in ("disc", "real"):
                quick = log_n in (10, 13) and (w, f) in ((24, 21), (29, 26), (32, 29)) and kind == "disc"
                bench_case("fft", f"precision-n{log_n}-w{w}f{f}-{kind}", quick=quick,
                           log_n=log_n, width=w, frac_bits=f, kind=kind)(precision)


_precision_cases()


@bench_case("fft", "cycles-ifft-n128-p2", n=128, lanes=2, inverse=True)
@bench_case("fft", "cycles-ifft-n128-p4", n=128, lanes=4, inverse=True)
@bench_case("fft", "cycles-fft-n128-p4", n=128, lanes=4, inverse=False)
@bench_case("fft", "cycles-ifft-n512-p1", n=512, lanes=1, inverse=True)
@bench_case("fft", "cycles-ifft-n512-p8", n=512, lanes=8, inverse=True)
@bench_case("fft", "cycles-fft-n512-p8", n=512, lanes=8, inverse=False)
@bench_case("fft", "cycles-ifft-n4096-p4", n=4096, lanes=4, inverse=True, quick=False)
@bench_case("fft", "cycles-fft-n4096-p4", n=4096, lanes=4, inverse=False, quick=False)
def cycles(n, lanes, inverse):
    """Simulate one transform of n slots with P lanes (29/26); measured vs documented cycles."""
    from hhe_gen.cores.arith.butterfly import pack_complex, unpack_complex
    from hhe_gen.cores.fft import IterativeFft
    from hhe_gen.models.fft import FixedPointFormat, quantize_complex
    from hhe_gen.testing import run_stream
    fmt = FixedPointFormat(29, 26)
    dut = IterativeFft(n, lanes, fmt, inverse=inverse)
    vals = [quantize_complex(z, fmt) for z in _slots(n, 7, "disc")]
    beats = [[pack_complex(vals[b * lanes + l], fmt) for l in range(lanes)] for b in range(n // lanes)]
    r = run_stream(dut, beats)
    out = [unpack_complex(x, fmt) for b in r.outputs for x in b]
    assert out == dut.model(vals), "core differs from the model"
    compute = r.out_cycles[0] - r.in_cycles[-1] - 2
    target = (n // (2 * lanes)) * (n.bit_length() - 1) + dut.delay
    return {"total_cycles": r.out_cycles[-1] - r.in_cycles[0] + 1, "total_doc": dut.cycles(),
            "compute_cycles": compute, "compute_doc": dut.compute_cycles, "target": target,
            "compute_over_target": round(compute / target, 4), "delay": dut.delay}


@bench_case("fft", "synth-ifft-n4096-p2-ecp5", quick=False, kind="ifft", n=4096, lanes=2)
@bench_case("fft", "synth-ifft-n4096-p4-ecp5", quick=False, kind="ifft", n=4096, lanes=4)
def synth(kind, n, lanes):
    """ECP5-85F post-place-and-route area and Fmax (29/26, DNA-HHE's 3 x 54-bit primes for the
    encoder, Delta = 2^50)."""
    from hhe_gen.models.fft import FixedPointFormat
    from hhe_gen.synth import synth_ecp5
    fmt = FixedPointFormat(29, 26)
    if kind == "ifft":
        from hhe_gen.cores.fft import SpecialIfft
        dut = SpecialIfft(n, lanes, fmt)
    else:
        from hhe_gen.cores.ckks import Encoder
        from hhe_gen.params.presets import preset
        p = preset("dna-hhe")
        dut = Encoder(2 * n, lanes, fmt, p.log_scale, p.moduli)
    res = synth_ecp5(dut, name=f"{kind}_n{n}_p{lanes}")
    return {k: res.get(k) for k in ("LUT4", "FF", "MULT18X18D", "DP16KD", "DPR16X4", "CCU2C", "fmax_mhz")}
