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
* ``synth-*`` (not quick): ECP5-85F area / Fmax (:func:`hhe_gen.flow.synth.synth_ecp5`, Yosys 0.70 +
  nextpnr-ecp5, LFE5U-85F, seed 1, 29/26, DNA-HHE's 3 x 54-bit primes and Delta = 2^50 for the
  encoder / decoder).  What they measured (and the N = 2^16 IFFT's synthesis, not finished) is in
  docs/figures.md, table ``fft-ecp5``.

  N = 2^16 (SpecialIfft n = 32768, P = 4, 33/31) by block RAM alone: the 512 x 36 / 1024 x 18 ...
  DP16KD packing that gives n = 4096, P = 2 its 30 DP16KD (16 for the banks + 14 for the two
  twiddle ROMs) gives 8 banks of 4096 x 66 bits = 128 DP16KD plus 4 twiddle ROMs of 8193 words =
  136, i.e. 264 > the 208 DP16KD of the LFE5U-85F (P = 8: 128 + 144).  N = 2^16 on this device
  needs smaller twiddle storage (shared / on-the-fly twiddles as in the NTT's ``twiddles="otf"``),
  or a bigger device.

  The encoder is a pure composition (``wiring.connect``) of the IFFT and a
  :class:`~hhe_gen.cores.ckks.encoder.ResidueStage` component, and the decoder the same
  (CrtCentre -> ScaleDownStage -> SpecialFft): as first written, with logic of its own (the
  residue stage) next to pass-through port assignments (``i_stream.ready =
  ifft.i_stream.ready``), the encoder made Yosys 0.70 (YoWASP) assert in synth_ecp5's ABC9
  reintegration (``Assert `count_id(wire->name) == 0' failed``, ABC_OPS_REINTEGRATE renaming the
  AIG output of the port ``i_stream__ready``; removing the ``i_stream__ready$5`` alias from the
  Verilog did not help).

The precision table with A / B / E is in :mod:`hhe_gen.cores.ckks`.

``precision-plot`` (not quick) sweeps N = 2^10 .. 2^16 and W = 24 .. 40 with F = W - 2 and W - 3
(disc slots, seed 1) and draws ``bench-results/fft-precision.png`` (E and A mean bits against W,
one line per N), and reports the narrowest format with >= 24 mean bits (E) per N; its figures are
in docs/figures.md, table ``fft-precision``.
"""

from __future__ import annotations

import cmath
import math
import random

from hhe_gen.apps.bench import bench_case

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

SWEEP_LOG_NS = (10, 11, 12, 13, 14, 15, 16)
SWEEP_WIDTHS = (24, 26, 28, 29, 30, 32, 33, 34, 36, 38, 40)


def precision_sweep(log_ns=SWEEP_LOG_NS, widths=SWEEP_WIDTHS, gaps=(3, 2)) -> list[dict]:
    """:func:`precision` ("disc", seed 1) for every N = 2^log_n, width W and F = W - gap."""
    rows = []
    for log_n in log_ns:
        for w in widths:
            for gap in gaps:
                rows.append({"log_n": log_n, "width": w, "frac_bits": w - gap, **precision(log_n, w, w - gap)})
    return rows


def plot_precision(rows, path) -> str:
    """Mean bits (paths E and A) against the width W, one line per N (F = W - 2 solid, W - 3
    dashed), with the 24-bit and 20-bit targets (PNG, Agg backend)."""
    from pathlib import Path

    from hhe_gen.flow.extras import require
    require("plots", "drawing a plot")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    log_ns = sorted({r["log_n"] for r in rows})
    for ax, path_name in zip(axes[0], "EA"):
        for i, log_n in enumerate(log_ns):
            for gap, style in ((2, "-"), (3, "--")):
                sel = sorted((r for r in rows if r["log_n"] == log_n and r["width"] - r["frac_bits"] == gap),
                             key=lambda r: r["width"])
                if sel:
                    ax.plot([r["width"] for r in sel], [r[f"{path_name}_mean_bits"] for r in sel], style,
                            marker="o", markersize=3, color=colours[i % len(colours)],
                            label=f"N = 2^{log_n}" + (f", F = W-{gap}" if gap == 3 else ""))
        for target in (20, 24):
            ax.axhline(target, linestyle=":", color="grey", linewidth=1)
        ax.set_xlabel("width W (bits)")
        ax.set_ylabel("mean precision (bits)")
        ax.set_title({"E": "E: hardware encode -> hardware decode", "A": "A: hardware encode -> Lattigo decode"}
                     [path_name])
        ax.grid(True, alpha=0.3)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=7)
    fig.subplots_adjust(right=0.85)
    fig.suptitle("CKKS fixed-point encode/decode precision (Delta = 2^50, unit-disc slots; solid F = W-2, "
                 "dashed F = W-3)")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return str(out)


@bench_case("fft", "precision-plot", quick=False, path="bench-results/fft-precision.png")
def precision_plot(path):
    """The precision sweep (:data:`SWEEP_LOG_NS` x :data:`SWEEP_WIDTHS`, F = W - 2 and W - 3) as a
    plot, with the narrowest W keeping >= 24 mean bits (E) per N."""
    rows = precision_sweep()
    narrowest = {}
    for log_n in SWEEP_LOG_NS:
        ok = [r for r in rows if r["log_n"] == log_n and r["E_mean_bits"] >= 24]
        best = min(ok, key=lambda r: (r["width"], -r["frac_bits"])) if ok else None
        narrowest[f"n{log_n}"] = f"{best['width']}/{best['frac_bits']}" if best else None
    return {"plot": plot_precision(rows, path), "points": len(rows), "narrowest_24_bits": narrowest,
            "rows": rows}


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
    from hhe_gen.sim.stream import run_stream
    fmt = FixedPointFormat(29, 26)
    dut = IterativeFft(n, lanes, fmt, inverse=inverse)
    vals = [quantize_complex(z, fmt) for z in _slots(n, 7, "disc")]
    beats = [[pack_complex(vals[b * lanes + l], fmt) for l in range(lanes)] for b in range(n // lanes)]
    r = run_stream(dut, beats)
    out = [unpack_complex(x, fmt) for b in r.outputs for x in b]
    assert out == dut.model(vals), "core differs from the model"
    compute = r.out_cycles[0] - r.in_cycles[-1] - (dut.first_output_delay - dut.compute_cycles)
    target = (n // (2 * lanes)) * (n.bit_length() - 1) + dut.delay
    return {"total_cycles": r.out_cycles[-1] - r.in_cycles[0] + 1, "total_doc": dut.cycles(),
            "compute_cycles": compute, "compute_doc": dut.compute_cycles, "target": target,
            "compute_over_target": round(compute / target, 4), "delay": dut.delay}


@bench_case("fft", "synth-ifft-n4096-p2-ecp5", quick=False, kind="ifft", n=4096, lanes=2)
@bench_case("fft", "synth-ifft-n4096-p4-ecp5", quick=False, kind="ifft", n=4096, lanes=4)
@bench_case("fft", "synth-encoder-n4096-p2-ecp5", quick=False, kind="encoder", n=4096, lanes=2)
@bench_case("fft", "synth-decoder-n4096-p2-ecp5", quick=False, kind="decoder", n=4096, lanes=2)
def synth(kind, n, lanes):
    """ECP5-85F post-place-and-route area and Fmax (29/26, DNA-HHE's 3 x 54-bit primes for the
    encoder, Delta = 2^50), and Yosys' Xilinx 7-series area of the same core built with
    Xilinx tiles (``xc7_*``; ``xc7_abc9`` False: Yosys 0.70's ABC9 reintegration asserted on the
    design, the classic ABC mapping was used, :func:`hhe_gen.flow.synth.synth_xilinx_any`)."""
    from hhe_gen.flow.synth import synth_ecp5, synth_xilinx_any
    res = synth_ecp5(_synth_core(kind, n, lanes, "ecp5"), name=f"{kind}_n{n}_p{lanes}", timeout=2400)
    out = {k: res.get(k) for k in ("LUT4", "FF", "MULT18X18D", "DP16KD", "DPR16X4", "CCU2C", "fmax_mhz")}
    xc7 = synth_xilinx_any(lambda: _synth_core(kind, n, lanes, "xilinx"), name=f"{kind}_n{n}_p{lanes}",
                           timeout=2400)
    out.update({f"xc7_{k}": xc7.get(k) for k in ("LUT", "FF", "DSP48E1", "RAMB18", "RAMB36", "LUTRAM", "abc9")})
    return out


def _synth_core(kind, n, lanes, target):
    from hhe_gen.models.fft import FixedPointFormat
    fmt = FixedPointFormat(29, 26)
    if kind == "ifft":
        from hhe_gen.cores.fft import SpecialIfft
        return SpecialIfft(n, lanes, fmt, target=target)
    from hhe_gen.params.presets import preset
    p = preset("dna-hhe")
    if kind == "encoder":
        from hhe_gen.cores.ckks import Encoder
        return Encoder(2 * n, lanes, fmt, p.log_scale, p.moduli, target=target)
    from hhe_gen.cores.ckks import Decoder                # the decoder over all three primes (CRT)
    return Decoder(2 * n, lanes, fmt, p.log_scale, p.moduli, target=target)
