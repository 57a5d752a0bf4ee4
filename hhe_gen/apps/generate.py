"""``hhe-gen generate``: a core's Verilog, JSON manifest and golden-model test vectors.

    hhe-gen generate ntt --n N --lanes P [--bits W --count C | --primes q1,q2,...]
                         [--reducer KIND] [--banking dual|single] [--twiddles rom|otf]
                         [--arch iterative|sdf|mdc] [--latency L] [--target ecp5|xilinx|generic]
                         [--vectors K] [--seed S] [--name NAME] [--keep-src] -o DIR

Each generator validates its parameters (a :class:`~hhe_gen.params.ParameterError` names the bad
one and its allowed range), builds the Amaranth component, and writes it with
:func:`hhe_gen.flow.verilog.write_core`: the Verilog (reproducible, no absolute paths, unless
``--keep-src``), the manifest, the vectors and - with vectors - a self-checking Verilog testbench
replaying them (``<name>_tb.v``, hex files, ``<name>_README.txt``; :mod:`hhe_gen.flow.testbench`).
The iterative core's testbench sends one ``cmd`` (inverse, sel) and N/P input beats per vector
case and expects the N/P output beats; the pipelined cores' testbenches send the polynomials back
to back and expect every output beat with its ``sel`` and ``last`` fields.
"""

from __future__ import annotations

import random

from hhe_gen.params.checks import check_int
from hhe_gen.params.errors import ParameterError

__all__ = ["ntt_primes_for", "generate_ntt", "NTT_ARCHS", "REDUCERS", "DIRECTIONS"]

NTT_ARCHS = ("iterative", "sdf", "mdc")
DIRECTIONS = ("both", "forward", "inverse")
REDUCERS = ("barrett", "montgomery", "special-barrett", "ntt-montgomery")


def ntt_primes_for(reducer: str, n: int, bits: int, count: int) -> list[int]:
    """``count`` primes of ``bits`` bits of the form ``reducer`` needs for ring degree ``n``:
    DNA-HHE special primes for "special-barrett", ABC-FHE sparse primes for "ntt-montgomery",
    the largest NTT primes otherwise."""
    from hhe_gen.params import abc_fhe_primes, dna_hhe_primes, ntt_primes
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 64:
        raise ParameterError("count", count, "1 .. 64 primes")
    if reducer == "special-barrett":
        found = [p.q for p in dna_hhe_primes(bits, n, 10)]
    elif reducer == "ntt-montgomery":
        found = [p.q for p in abc_fhe_primes(n, bits - 1) if p.q.bit_length() == bits]
    else:
        return ntt_primes(n, bits, count)
    if len(found) < count:
        raise ParameterError("count", count, f"at most {len(found)} ({reducer} primes of {bits} bits for N = {n})")
    return found[:count]


def ntt_reducer_params(reducer: str, bits: int, n: int) -> dict:
    if reducer not in REDUCERS:
        raise ParameterError("reducer", reducer, "one of " + ", ".join(REDUCERS))
    if reducer == "special-barrett":
        return {"k": bits}
    if reducer == "montgomery":
        # word-level Montgomery needs q = 1 (mod 2^w); NTT primes are 1 (mod 2N): w = log2(2N) (<= 18)
        return {"width": max(16, bits), "word_bits": min(18, n.bit_length())}
    return {"width": max(16, bits)}


def _pack(values, bits: int) -> int:
    return sum(int(v) << (i * bits) for i, v in enumerate(values))


def _beats(coeffs, lanes: int, bits: int) -> list[int]:
    return [_pack(coeffs[b * lanes:(b + 1) * lanes], bits) for b in range(len(coeffs) // lanes)]


def _twiddle_memory(core) -> dict:
    """What the core stores for its twiddles (per prime; ``word_bits`` wide words)."""
    if core.twiddles == "otf":
        h = (core.n_log + 1) // 2
        per_prime = (1 << (core.n_log + 1 - h)) + (1 << h)
        return {"kind": "otf", "words_per_prime": per_prime, "copies": core.lanes,
                "detail": "per lane: psi^e = hi[e >> h] * lo[e mod 2^h], h = (log2 N + 1) // 2"}
    return {"kind": "rom", "words_per_prime": 2 * core.n, "banks": core.lanes,
            "words_per_bank": core.rom_words, "pieces_per_bank": core.rom_pieces,
            "detail": "psi_brv (forward) and psi_inv_brv (inverse), banked P ways by index mod P; a bank "
                      "over one piece is built of registered pieces (X = tw_latency cycles)"}


def generate_ntt(n: int, lanes: int, out_dir, *, bits: int | None = None, count: int = 1,
                 primes=None, reducer: str = "barrett", banking: str = "dual", twiddles: str = "rom",
                 arch: str = "iterative", latency: int | None = None, target: str = "ecp5",
                 vectors: int = 2, seed: int = 1, name: str | None = None, direction: str = "both",
                 keep_src: bool = False, testbench: bool = True) -> dict:
    """Generate an NTT/INTT core; returns the paths written and the manifest.

    Parameters
    ----------
    n, lanes       ring degree N and butterfly lanes / paths P (see
                   :class:`hhe_gen.cores.ntt.IterativeNtt`, :class:`hhe_gen.cores.ntt.PipelinedNtt`)
    bits, count    search ``count`` primes of ``bits`` bits of the reducer's form (when ``primes``
                   is not given)
    primes         explicit RNS primes (each = 1 mod 2N)
    reducer        the butterfly's modular multiplier: one of :data:`REDUCERS`
    banking, twiddles   as :class:`~hhe_gen.cores.ntt.IterativeNtt` (iterative only; the pipelined
                   forms have per-stage twiddle ROMs and no banks)
    latency, target     butterfly latency and target
    arch           "iterative" (memory-based, run-time direction) or the pipelined streaming forms
                   "sdf" / "mdc" (:class:`~hhe_gen.cores.ntt.PipelinedNtt`, build-time direction)
    direction      pipelined only: "both" (two modules ``<name>_fwd`` and ``<name>_inv``, each with
                   its manifest and vectors; the returned manifest is the forward one and the paths
                   of the inverse are under keys ``*_inverse``), "forward" or "inverse" (one module)
    vectors        random test polynomials per prime and direction (0: none), model outputs
    name           Verilog module name (default ``ntt_n<N>_p<P>``, pipelined ``ntt_<arch>_n<N>_p<P>``)
    keep_src       keep Amaranth's ``src`` attributes (absolute paths) in the Verilog
    testbench      with vectors: also write the self-checking testbench replaying them
                   (paths key ``"testbench"``)
    """
    from hhe_gen.cores.ntt import check_n
    from hhe_gen.flow.verilog import check_name
    from hhe_gen.models.ntt import intt, ntt
    if arch not in NTT_ARCHS:
        raise ParameterError("arch", arch, "one of " + ", ".join(NTT_ARCHS))
    check_n(n)
    check_int("vectors", vectors, 0, 64, "0 .. 64 polynomials per prime and direction")
    check_int("seed", seed, 0, (1 << 256) - 1)
    if primes is None:
        if bits is None:
            raise ParameterError("bits", bits, "a prime width 16 .. 64 (or give --primes)")
        reducer_params = ntt_reducer_params(reducer, bits, n)
        primes = ntt_primes_for(reducer, n, bits, count)
    else:
        primes = list(primes)
        if not primes:
            raise ParameterError("primes", primes, "at least one prime")
        reducer_params = ntt_reducer_params(reducer, max(q.bit_length() for q in primes), n)
    if arch != "iterative":
        if direction not in DIRECTIONS:
            raise ParameterError("direction", direction, "one of " + ", ".join(DIRECTIONS))
        name = check_name(name or f"ntt_{arch}_n{n}_p{lanes}")
        return _generate_pipelined(n, lanes, out_dir, primes, reducer, reducer_params, arch, latency, target,
                                   vectors, seed, name, direction, keep_src, testbench)
    name = check_name(name or f"ntt_n{n}_p{lanes}")
    from hhe_gen.cores.ntt import IterativeNtt
    from hhe_gen.flow.verilog import write_core
    core = IterativeNtt(n, lanes, primes, kind=reducer, latency=latency, target=target,
                        twiddles=twiddles, banking=banking, **reducer_params)
    manifest = {
        "core": "ntt", "arch": arch,
        "parameters": {"n": n, "lanes": lanes, "reducer": reducer, "banking": banking,
                       "twiddles": twiddles, "target": target, "butterfly_latency": core.butterfly_latency,
                       **reducer_params},
        "primes": [{"index": i, "q": q, "bits": q.bit_length()} for i, q in enumerate(core.moduli)],
        "interface": {
            "cmd": "stream, payload bit 0 = inverse, bits 1.. = sel (prime index)",
            "i_stream": f"stream of N/P = {core.beats} beats, P = {lanes} coefficients of {core.qbits} bits "
                        "per beat, coefficient p in bits [p*qbits, (p+1)*qbits); forward: natural "
                        "order, inverse: bit-reversed order (the NTT's output order)",
            "o_stream": f"{core.beats} beats in the same packing; forward output bit-reversed, "
                        "inverse output natural",
            "busy": "a command is in progress", "done": "one-cycle pulse with the last output beat",
        },
        "cycles": {
            "bound": core.bound, "depth": core.depth,
            "load": core.load_cycles, "unload": core.unload_cycles,
            "transform_forward": core.transform_cycles(False),
            "transform_inverse": core.transform_cycles(True),
            "command_forward": core.command_cycles(False),
            "command_inverse": core.command_cycles(True),
            "ratio_to_bound": round(core.transform_cycles(False) / core.bound, 4),
            "stage_starts_forward": list(core.starts[False]),
            "stage_starts_inverse": list(core.starts[True]),
        },
        "memories": {"data_banks": core.banks, "words_per_bank": n // core.banks, "word_bits": core.qbits,
                     "twiddles": _twiddle_memory(core)},
    }
    vec = None
    if vectors:
        rng = random.Random(seed)
        cases = []
        for sel, q in enumerate(core.moduli):
            for _ in range(vectors):
                a = [rng.randrange(q) for _ in range(n)]
                fwd = ntt(a, q)
                cases.append({"sel": sel, "inverse": 0, "input": a, "output": fwd})
                cases.append({"sel": sel, "inverse": 1, "input": fwd, "output": intt(fwd, q)})
        vec = {"n": n, "lanes": lanes, "qbits": core.qbits, "seed": seed,
               "packing": "beat b holds coefficients b*P .. b*P+P-1; coefficient p in bits [p*qbits, (p+1)*qbits)",
               "cases": cases}
    tb = None
    if vec is not None and testbench:
        inv_off, sel_off = core.cmd_layout["inverse"].offset, core.cmd_layout["sel"].offset
        tb = {"inputs": {"cmd": [c["inverse"] << inv_off | c["sel"] << sel_off for c in cases],
                         "i_stream": [w for c in cases for w in _beats(c["input"], lanes, core.qbits)]},
              "outputs": {"o_stream": [w for c in cases for w in _beats(c["output"], lanes, core.qbits)]},
              "cycles": sum(core.command_cycles(bool(c["inverse"])) for c in cases)}
    paths = write_core(core, name, out_dir, manifest, vec, testbench=tb, keep_src=keep_src)
    return {"paths": {k: str(v) if v else None for k, v in paths.items()}, "manifest": manifest}


def _pipelined_memories(core) -> dict:
    """Delay lines and twiddle ROMs of a :class:`~hhe_gen.cores.ntt.PipelinedNtt` (words of
    ``word_bits``; the lines that carry the valid/sel tag are that many bits wider)."""
    lines, roms = [], []
    L = core.butterfly_latency
    for i, st in enumerate(core.stages):
        d = 1 << st.time_pos if st.time_pos >= 0 else 0
        if st.kind == "temporal":
            per = [d - L] if d > L else [d, d]
            lines.append({"stage": i, "kind": "feedback" if d > L else "feed-forward", "delays": per,
                          "copies": core.lanes})
        elif st.kind == "commutator":
            lines.append({"stage": i, "kind": "commutator", "delays": [d, d], "copies": core.lanes // 2})
        if st.kind != "commutator":
            words = [len(t) for t, _ in core.stage_tables(st)[0]]
            roms.append({"stage": i, "bit": st.k, "roms": len(words), "words": words,
                         "stored": [w > 1 for w in words]})
    for item in lines:
        item["in_memory"] = [dd >= core.memory_threshold for dd in item["delays"]]
    return {"word_bits": core.qbits, "memory_threshold": core.memory_threshold,
            "delay_words": core.delay_words, "memory_delay_words": core.memory_delay_words,
            "delay_lines": lines, "twiddle_words": core.twiddle_words, "twiddle_roms": roms,
            "twiddles_detail": "per butterfly: address = the beat-counter bits carrying index bits above "
                               "the stage's bit | sel << their count; one-word tables are constants"}


def _generate_pipelined(n, lanes, out_dir, primes, reducer, reducer_params, arch, latency, target,
                        vectors, seed, name, direction, keep_src=False, testbench=True) -> dict:
    from hhe_gen.cores.ntt import PipelinedNtt
    from hhe_gen.models.ntt import intt, ntt
    from hhe_gen.flow.verilog import check_name, write_core
    dirs = (False, True) if direction == "both" else (direction == "inverse",)
    cores = {inv: PipelinedNtt(n, lanes, primes, arch=arch, inverse=inv, kind=reducer, latency=latency,
                               target=target, **reducer_params) for inv in dirs}
    cores_lat = {inv: c.latency for inv, c in cores.items()}
    result = {"paths": {}, "manifest": None}
    rng = random.Random(seed)
    inputs = {}
    for sel, q in enumerate(primes):
        inputs[sel] = [[rng.randrange(q) for _ in range(n)] for _ in range(vectors)]
    for inv, core in cores.items():
        mod = check_name(f"{name}_{'inv' if inv else 'fwd'}") if direction == "both" else name
        beats = core.beats
        pos = core.output_positions()
        manifest = {
            "core": "ntt", "arch": arch, "direction": "inverse" if inv else "forward",
            "parameters": {"n": n, "lanes": lanes, "reducer": reducer, "target": target, "inverse": inv,
                           "butterfly_latency": core.butterfly_latency,
                           **reducer_params},
            "primes": [{"index": i, "q": q, "bits": q.bit_length()} for i, q in enumerate(core.moduli)],
            "interface": {
                "i_stream": f"stream, payload = data (P = {lanes} coefficients of {core.qbits} bits, "
                            f"coefficient p in bits [p*qbits, (p+1)*qbits)) | sel << (P*qbits); N/P = {beats} "
                            "beats per polynomial, beat b = positions b*P .. b*P+P-1 of the model's input "
                            "list (forward: natural order, inverse: bit-reversed order); sel read on the "
                            "first beat of each polynomial; polynomials back to back",
                "o_stream": "stream, payload = data | sel << (P*qbits) | last << (P*qbits + sel bits); "
                            f"{beats} beats per polynomial; beat b lane l = model output position "
                            "output_positions[b*P + l]" + (" (the identity: the model's order)" if arch == "sdf"
                                                           else ""),
                "flow": "one clock enable: a stalled output or an input gap inside a polynomial stalls "
                        "the whole pipeline; between polynomials the pipeline drains",
            },
            "cycles": {
                "latency": core.latency, "cycles_per_polynomial": core.cycles_per_polynomial,
                "latency_formula": "1 + X(inverse) + sum over stages (temporal d+L+1, spatial L+1, commutator d)",
                # the keys of the iterative manifest, with the pipelined meaning: first in -> first
                # out of each direction, and the initiation interval N/P as the bound
                "bound": core.cycles_per_polynomial,
                "transform_forward": cores_lat.get(False, core.latency),
                "transform_inverse": cores_lat.get(True, core.latency),
                "command_forward": core.cycles_per_polynomial,
                "command_inverse": core.cycles_per_polynomial,
                "ratio_to_bound": 1.0,
            },
            "stages": [{"kind": st.kind, "bit": st.k, "lane_pos": st.lane_pos, "time_pos": st.time_pos}
                       for st in core.stages],
            "output_positions": pos if arch == "mdc" else "identity",
            "butterflies": core.butterflies,
            "memories": _pipelined_memories(core),
        }
        vec = None
        if vectors:
            cases = []
            for sel, q in enumerate(core.moduli):
                for a in inputs[sel]:
                    x = ntt(a, q)
                    inp, out = (x, intt(x, q)) if inv else (a, x)
                    cases.append({"sel": sel, "inverse": int(inv), "input": inp, "output": out,
                                  "output_stream": [out[j] for j in pos]})
            vec = {"n": n, "lanes": lanes, "qbits": core.qbits, "seed": seed,
                   "packing": "beat b holds input coefficients b*P .. b*P+P-1; output beat b lane l holds "
                              "output_stream[b*P + l] (= output[output_positions[b*P + l]])",
                   "cases": cases}
        tb = None
        if vec is not None and testbench:
            qb, isel = core.qbits, core.i_layout["sel"].offset
            osel, olast = core.o_layout["sel"].offset, core.o_layout["last"].offset
            ins, outs = [], []
            for c in cases:
                ins += [w | c["sel"] << isel for w in _beats(c["input"], lanes, qb)]
                outs += [w | c["sel"] << osel | int(b == beats - 1) << olast
                         for b, w in enumerate(_beats(c["output_stream"], lanes, qb))]
            tb = {"inputs": {"i_stream": ins}, "outputs": {"o_stream": outs},
                  "cycles": len(cases) * (core.cycles_per_polynomial + core.latency)}
        paths = write_core(core, mod, out_dir, manifest, vec, testbench=tb, keep_src=keep_src)
        suffix = "_inverse" if (inv and direction == "both") else ""
        for k, v in paths.items():
            result["paths"][k + suffix] = str(v) if v else None
        if result["manifest"] is None:
            result["manifest"] = manifest
    return result
