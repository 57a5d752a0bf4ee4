"""``hhe-gen generate fft|ifft|encoder|decoder``: Verilog, JSON manifest and model test vectors of the
CKKS special FFT / IFFT cores and the CKKS encoder / decoder (issue #5).

    hhe-gen generate {fft,ifft,encoder,decoder} --n N --lanes P [--width W --frac-bits F]
                     [--rounding half-up|half-even] [--log-scale S] [--bits B --count L | --primes q,..]
                     [--latency BL] [--target ecp5|xilinx|generic] [--vectors K] [--seed S]
                     [--name NAME] [--keep-src] -o DIR

``N`` is the ring degree for every kind (n = N/2 slots).  The files are written by
:func:`hhe_gen.flow.verilog.write_core` (``<name>.v``, ``<name>.json``, ``<name>_vectors.json``,
and with vectors the self-checking testbench ``<name>_tb.v`` replaying every case's
``input_beats`` into ``i_stream`` and expecting its ``output_beats`` from ``o_stream``, with its
hex files and ``<name>_README.txt``; :mod:`hhe_gen.flow.testbench`).  The Verilog carries no
absolute path unless ``keep_src``.

Vectors are computed by the golden models (:mod:`hhe_gen.models.fft`,
:mod:`hhe_gen.models.ckks_fixed`), in the port encoding: a beat is the integer the payload port
carries, lane l in bits [l*lane_bits, (l+1)*lane_bits).  Lanes carry

* FFT / IFFT / encoder input / decoder output: packed complex ``re | im << W`` (two's complement);
* encoder output: one residue (qbits = the widest prime's bits);
* decoder input: the L residues of one coefficient, ``r_0 | r_1 << qbits | ...``.

Vector inputs: IFFT / encoder: random slots in the unit disc with a few format corners (max / min
integers); FFT: the IFFT of such slots without corners (the special FFT of arbitrary inputs leaves
the format's range); decoder: the plaintext the encoder makes of random slots, over every prime
(``slots`` in each case).
"""

from __future__ import annotations

import cmath
import math
import random

from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

__all__ = ["generate_fft", "FFT_KINDS"]

FFT_KINDS = ("ifft", "fft", "encoder", "decoder")
ROUNDINGS = ("half-up", "half-even")


def _pack(values, lane_bits):
    return sum(v << (i * lane_bits) for i, v in enumerate(values))


def _slot_values(n, fmt, rng, corners=True):
    """n fixed-point slots: uniform in the unit disc, with a few format corners (``corners``)."""
    from hhe_gen.models.fft import quantize_complex
    out = []
    for _ in range(n):
        if corners and rng.random() < 0.05:
            out.append((rng.choice([fmt.max_int, fmt.min_int, 0]), rng.choice([fmt.max_int, fmt.min_int, 0])))
        else:
            out.append(quantize_complex(cmath.rect(math.sqrt(rng.random()), rng.random() * 2 * math.pi), fmt))
    return out


def _fft_memories(fft) -> dict:
    plan, cw = fft.plan, 2 * fft.fmt.width
    roms = [len(plan.twiddle_rom(lane)) for lane in range(fft.lanes)]
    return {"data_banks": plan.banks, "words_per_bank": plan.depth, "word_bits": cw,
            "bank_ports": "1 write (byte-lane granularity W: re / im halves) + 1 read, write-first",
            "twiddle_roms": {"count": fft.lanes, "words": roms, "word_bits": cw,
                             "detail": "one ROM per lane, the roots of models.fft.twiddle_table quantised "
                                       "once, packed re | im << W, stored in the order the lane reads them"}}


def _fft_cycles(fft) -> dict:
    return {"load_beats": fft.load_beats, "compute": fft.compute_cycles, "unload_beats": fft.unload_beats,
            "delay": fft.delay, "butterfly_latency": fft.bf_latency,
            "stage_starts": list(fft.plan.starts),
            "bound": (fft.n // (2 * fft.lanes)) * fft.plan.n_log + fft.delay,
            "output_register": int(fft.output_register),
            "first_output_after_last_input": fft.first_output_delay,
            "cycles": fft.cycles(),
            "cycles_formula": "load_beats + compute + 1 + output_register + unload_beats (first input beat "
                              "to last output beat, full rate; also the period of back-to-back transforms)"}


def generate_fft(kind: str, n: int, lanes: int, out_dir, *, width: int = 29, frac_bits: int = 26,
                 rounding: str = "half-up", log_scale: int | None = None, bits: int | None = None,
                 count: int = 1, primes=None, latency: int | None = None, target: str = "ecp5",
                 vectors: int = 2, seed: int = 1, name: str | None = None, keep_src: bool = False,
                 testbench: bool = True) -> dict:
    """Generate one core of ``kind`` (:data:`FFT_KINDS`); returns ``{"paths", "manifest"}``.

    Parameters
    ----------
    kind           "ifft" / "fft" (:class:`hhe_gen.cores.fft.SpecialIfft` / ``SpecialFft``),
                   "encoder" / "decoder" (:class:`hhe_gen.cores.ckks.Encoder` / ``Decoder``)
    n, lanes       ring degree N (2^4 .. 2^16; n = N/2 slots) and butterfly lanes P (1 .. N/8)
    width, frac_bits, rounding   the fixed-point format (:class:`hhe_gen.models.fft.FixedPointFormat`)
    log_scale      Delta = 2^log_scale (encoder / decoder; required there)
    bits, count    ``count`` NTT primes of ``bits`` bits for N (encoder / decoder; or ``primes``)
    primes         explicit moduli (encoder: odd; decoder: 1 .. 8 pairwise coprime)
    latency        the butterflies' latency (default: the Butterfly's)
    target         the butterflies' DSP target
    vectors        random test inputs (0: none), outputs by the model
    name           Verilog module name (default ``<kind>_n<N>_p<P>``)
    keep_src       keep Amaranth's ``src`` attributes (absolute paths) in the Verilog
    testbench      with vectors: also write the self-checking testbench (paths key ``"testbench"``)
    """
    from hhe_gen.cores.arith.butterfly import pack_complex
    from hhe_gen.cores.ckks import Decoder, Encoder
    from hhe_gen.cores.fft import SpecialFft, SpecialIfft
    from hhe_gen.models import ckks_fixed
    from hhe_gen.models import fft as fftm
    from hhe_gen.params import ntt_primes
    from hhe_gen.flow.verilog import check_name, write_core
    if kind not in FFT_KINDS:
        raise ParameterError("kind", kind, "one of " + ", ".join(FFT_KINDS))
    check_int("n", n, 16, 1 << 16, "a power of two 2^4 .. 2^16 (the ring degree N)")
    if n & (n - 1):
        raise ParameterError("n", n, "a power of two 2^4 .. 2^16 (the ring degree N)")
    check_int("width", width, 4, 64)
    check_int("frac_bits", frac_bits, 1, width - 2, f"1 .. width - 2 = {width - 2}")
    if rounding not in ROUNDINGS:
        raise ParameterError("rounding", rounding, "one of " + ", ".join(ROUNDINGS))
    check_int("vectors", vectors, 0, 64)
    check_int("seed", seed, 0, (1 << 256) - 1)
    fmt = fftm.FixedPointFormat(width, frac_bits, rounding)
    name = check_name(name or f"{kind}_n{n}_p{lanes}")
    slots = n // 2
    bf = {"target": target, "bf_latency": latency}
    rng = random.Random(seed)
    fmt_json = {"width": width, "frac_bits": frac_bits, "rounding": rounding,
                "encoding": "two's complement, value = integer / 2^frac_bits; complex lanes re | im << W"}
    manifest = {"core": kind, "parameters": {"N": n, "slots": slots, "lanes": lanes, "target": target},
                "format": fmt_json}
    cases = []
    cw = 2 * width

    if kind in ("ifft", "fft"):
        core = (SpecialIfft if kind == "ifft" else SpecialFft)(slots, lanes, fmt, **bf)
        fft = core
        model = fftm.special_ifft_fixed if kind == "ifft" else fftm.special_fft_fixed
        manifest["parameters"]["butterfly_latency"] = core.bf_latency
        manifest["interface"] = {
            "i_stream": f"n/P = {slots // lanes} beats of P = {lanes} packed complex values ({cw} bits "
                        "per lane), the model's input list in natural order",
            "o_stream": f"n/P = {slots // lanes} beats, the model's output list in order",
            "flow": "LOAD (i_stream.ready = 1) -> COMPUTE (fixed length) -> UNLOAD (back-pressure) -> LOAD"}
        manifest["model"] = ("hhe_gen.models.fft.special_ifft_fixed (GS, halving per stage, bit-reversed "
                             "output)" if kind == "ifft" else
                             "hhe_gen.models.fft.special_fft_fixed (bit-reversed input, CT)")
        manifest["cycles"] = _fft_cycles(core)
        for _ in range(vectors):
            x = _slot_values(slots, fmt, rng, corners=kind == "ifft")
            if kind == "fft":                  # the IFFT of slots: the FFT's results stay in range
                x = fftm.special_ifft_fixed(x, fmt)
            y = model(x, fmt)
            cases.append({"input": x, "output": y,
                          "input_beats": [_pack([pack_complex(v, fmt) for v in x[b * lanes:(b + 1) * lanes]], cw)
                                          for b in range(slots // lanes)],
                          "output_beats": [_pack([pack_complex(v, fmt) for v in y[b * lanes:(b + 1) * lanes]], cw)
                                           for b in range(slots // lanes)]})
    else:
        if log_scale is None:
            raise ParameterError("log_scale", log_scale, "Delta = 2^log_scale, 1 .. 62 (required for "
                                                          f"the {kind})")
        if primes is None:
            if bits is None:
                raise ParameterError("bits", bits, "a prime width (or give primes)")
            check_int("bits", bits, 10, 62)
            check_int("count", count, 1, 128 if kind == "encoder" else ckks_fixed.MAX_DECODER_PRIMES)
            primes = ntt_primes(n, bits, count)
        primes = list(primes)
        if kind == "encoder":
            core = Encoder(n, lanes, fmt, log_scale, primes, **bf)
            fft = core.ifft
            manifest["interface"] = {
                "i_stream": f"n/P = {slots // lanes} beats of P = {lanes} packed complex slots ({cw} bits per lane)",
                "o_stream": f"L*N/P = {len(primes) * n // lanes} beats of P residues ({core.qbits} bits per "
                            "lane): prime 0's N coefficients m_0 .. m_{N-1} in natural order, then prime 1's, ..."}
            manifest["model"] = "hhe_gen.models.ckks_fixed.encode_fixed"
            manifest["cycles"] = {"ifft": _fft_cycles(fft), "output_register": 1,
                                  "first_output_after_last_input": fft.first_output_delay + 1,
                                  "cycles": core.cycles(),
                                  "cycles_formula": "ifft.cycles() + 1 (first input beat to last output beat)"}
        else:
            core = Decoder(n, lanes, fmt, log_scale, primes, **bf)
            fft = core.fft
            crt = core.crt
            manifest["interface"] = {
                "i_stream": f"N/P = {n // lanes} beats of P coefficients, lane = the coefficient's L = "
                            f"{len(primes)} residues r_0 | r_1 << {core.qbits} | ... ({len(primes) * core.qbits} "
                            "bits); coefficients m_0 .. m_{N-1} in natural order",
                "o_stream": f"n/P = {slots // lanes} beats of P packed complex slots ({cw} bits per lane)"}
            manifest["model"] = "hhe_gen.models.ckks_fixed.decode_fixed (CRT: crt_centre)"
            big_q, invs, cof = ckks_fixed.crt_constants(core.moduli)
            manifest["crt"] = {"latency": crt.latency, "moduli": len(core.moduli), "Q_bits": big_q.bit_length(),
                               "centred_bits": crt.cbits, "inverses": invs,
                               "detail": "y_i = r_i * inv_i mod q_i (constant Barrett), x = sum y_i * Q/q_i, "
                                         "L-1 conditional subtractions of Q, centring"}
            manifest["cycles"] = {"fft": _fft_cycles(fft), "crt_latency": crt.latency, "input_register": 1,
                                  "first_output_after_last_input": crt.latency + fft.first_output_delay + 1,
                                  "cycles": core.cycles(),
                                  "cycles_formula": "fft.cycles() + 1 + crt_latency (first input beat to "
                                                    "last output beat)"}
        manifest["parameters"].update({"log_scale": log_scale, "butterfly_latency": fft.bf_latency})
        manifest["primes"] = [{"index": i, "q": q, "bits": q.bit_length()} for i, q in enumerate(core.moduli)]
        for _ in range(vectors):
            x = _slot_values(slots, fmt, rng, corners=kind == "encoder")
            rows = ckks_fixed.encode_fixed(x, fmt, log_scale, core.moduli) if kind == "encoder" else None
            if kind == "encoder":
                flat = [r for row in rows for r in row]
                cases.append({"input": x, "output": rows,
                              "input_beats": [_pack([pack_complex(v, fmt) for v in x[b * lanes:(b + 1) * lanes]], cw)
                                              for b in range(slots // lanes)],
                              "output_beats": [_pack(flat[b * lanes:(b + 1) * lanes], core.qbits)
                                               for b in range(len(flat) // lanes)]})
            else:
                # a plaintext the encoder would make (every prime), decoded through the CRT
                w = fftm.special_ifft_fixed(x, fmt)
                m = [ckks_fixed.scale_up(z[0], fmt, log_scale) for z in w] + \
                    [ckks_fixed.scale_up(z[1], fmt, log_scale) for z in w]
                rows = [[c % q for c in m] for q in core.moduli]
                y = core.model(rows)
                cases.append({"slots": x, "input": rows, "output": y,
                              "input_beats": [_pack(beat, len(core.moduli) * core.qbits) for beat in core.pack(rows)],
                              "output_beats": [_pack([pack_complex(v, fmt) for v in y[b * lanes:(b + 1) * lanes]], cw)
                                               for b in range(slots // lanes)]})
    manifest["memories"] = _fft_memories(fft)
    manifest["twiddles"] = {"table": f"models.fft.twiddle_table(n = {slots}, fmt): 4n+1 roots exp(2 pi i k / 4n) "
                                     "quantised to the format", "words": 4 * slots + 1,
                            "stored_words_per_lane": manifest["memories"]["twiddle_roms"]["words"]}
    vec = None
    if vectors:
        vec = {"kind": kind, "N": n, "lanes": lanes, "seed": seed, "format": fmt_json,
               "packing": "beat = the payload port's integer, lane l in bits [l*lane_bits, (l+1)*lane_bits); "
                          "complex values as [re, im] pairs of integers (value / 2^frac_bits)",
               "cases": cases}
    tb = None
    if vec is not None and testbench:
        tb = {"inputs": {"i_stream": [w for c in cases for w in c["input_beats"]]},
              "outputs": {"o_stream": [w for c in cases for w in c["output_beats"]]},
              "cycles": len(cases) * core.cycles()}
    paths = write_core(core, name, out_dir, manifest, vec, testbench=tb, keep_src=keep_src)
    return {"paths": {k: str(v) if v else None for k, v in paths.items()}, "manifest": manifest}

