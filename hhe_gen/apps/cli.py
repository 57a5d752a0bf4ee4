"""``hhe-gen``: the command line of hhe-gen.

    hhe-gen params [PRESET] [--json]
    hhe-gen primes --n N --bits B --count C [--form ntt|dna-hhe|abc-fhe] [--json]
    hhe-gen kat rubato FILE... [--on model|rtl] [--trace] [--lanes L] [--multiplier M] [--verbose]
    hhe-gen ckks keygen  [--params P] [--seed S] -o keys.json
    hhe-gen ckks encrypt [--params P] --keys keys.json --in slots.json [--mode pk|sk] [--seed S] -o ct.json
    hhe-gen ckks decrypt [--params P] --keys keys.json --in ct.json -o slots.json
    hhe-gen generate ntt --n N --lanes P [--bits W --count C | --primes q,...] [--reducer KIND]
                         [--banking dual|single] [--twiddles rom|otf] [--arch iterative|sdf|mdc [--direction D]] -o DIR
    hhe-gen generate ifft|fft|encoder|decoder --n N --lanes P [--width W --frac-bits F]
                         [--log-scale S] [--bits B --count L | --primes q,...] -o DIR
    hhe-gen bench [GROUP...] [--quick] [--json FILE]
    hhe-gen prove [GROUP...] [--quick] [--json FILE] [--workdir DIR] [--timeout S] [--only NAME...]
    hhe-gen demo
    hhe-gen doctor

Every bad parameter ends the command with a one-line error naming it and exit status 2.
"""

import argparse
import json
import sys
from pathlib import Path

from hhe_gen.params import ParameterError

__all__ = ["main"]


# -- helpers ---------------------------------------------------------------------------------------
def _load_json(path: str, what: str):
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ParameterError(what, path, "an existing JSON file") from None
    except json.JSONDecodeError as exc:
        raise ParameterError(what, path, f"valid JSON ({exc})") from None


def _params(spec: str):
    """A preset name or a parameters JSON file in the interchange format."""
    from hhe_gen.params import CKKSParams, preset
    if spec.endswith(".json") or Path(spec).is_file():
        return CKKSParams.from_interchange(_load_json(spec, "--params"), name=Path(spec).stem)
    return preset(spec)


def _write(data, out: str | None):
    text = json.dumps(data) + "\n"
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(out).write_text(text)


def _seed(text: str | None) -> int:
    if text is None:
        import secrets
        return secrets.randbits(256)
    try:
        return int(text, 0)
    except ValueError:
        raise ParameterError("--seed", text, "an integer 0 .. 2^256 - 1 (decimal or 0x hex)") from None


def _check_on(on: str, allowed=("model",)):
    if on not in allowed:
        raise ParameterError("--on", on, " or ".join(repr(a) for a in allowed)
                             + ("" if "rtl" in allowed else " (the RTL path arrives with the hardware cores)"))


# -- commands --------------------------------------------------------------------------------------
def cmd_params(args):
    from hhe_gen.params import PRESETS, preset
    from hhe_gen.apps.report import print_table
    if not args.preset:
        rows = [(name, desc) for name, (_, desc) in PRESETS.items()]
        if args.json:
            _write({name: preset(name).summary() for name in PRESETS}, None)
        else:
            print_table("CKKS presets (hhe-gen params NAME for the primes)", ["name", "description"], rows)
        return 0
    p = preset(args.preset)
    if args.json:
        _write({**p.summary(), **p.interchange()}, None)
        return 0
    s = p.summary()
    print_table(f"preset {p.name}", ["field", "value"], [(k, v) for k, v in s.items()])
    print_table("primes", ["i", "q", "bits", "q mod 2N"],
                [(i, q, q.bit_length(), q % (2 * p.n)) for i, q in enumerate(p.moduli)])
    print(json.dumps(p.interchange()))
    return 0


def cmd_primes(args):
    from hhe_gen.params import abc_fhe_primes, dna_hhe_primes, ntt_primes
    from hhe_gen.apps.report import print_table
    if args.form == "ntt":
        rows = [{"q": q, "bits": q.bit_length()} for q in ntt_primes(args.n, args.bits, args.count)]
    elif args.form == "dna-hhe":
        found = dna_hhe_primes(args.bits, args.n)[:args.count]
        rows = [{"q": p.q, "bits": p.q.bit_length(), "bnd": p.bnd, "delta": p.delta, "mu": p.mu} for p in found]
    else:
        found = [p for e in (args.bits - 1, args.bits) for p in abc_fhe_primes(args.n, e)
                 if p.q.bit_length() == args.bits]
        found = sorted({p.q: p for p in found}.values(), key=lambda p: p.q)[:args.count]
        rows = [{"q": p.q, "bits": p.q.bit_length(), "exponent": p.exponent,
                 "kk": " ".join(f"{'+' if s > 0 else '-'}2^{e}" for s, e in p.kk_terms)} for p in found]
    if len(rows) < args.count:
        raise ParameterError("--count", args.count,
                             f"at most {len(rows)} primes of form {args.form} with {args.bits} bits at N = {args.n}")
    if args.json:
        _write(rows, None)
    else:
        print_table(f"{len(rows)} primes, form {args.form}, N = {args.n}", list(rows[0]),
                    [list(r.values()) for r in rows])
    return 0


def cmd_kat(args):
    from hhe_gen.host.kat import check_rubato_kat_files
    from hhe_gen.apps.report import console
    if args.cipher != "rubato":
        raise ParameterError("cipher", args.cipher, "'rubato'")
    _check_on(args.on, ("model", "rtl"))
    if args.on == "rtl":
        from hhe_gen.host.kat_rtl import check_rubato_kat_files_rtl
        report = check_rubato_kat_files_rtl(args.files, trace=args.trace, lanes=2 if args.lanes is None else args.lanes,
                                            multiplier=args.multiplier or "barrett")
    else:
        if args.trace or args.lanes is not None or args.multiplier is not None:
            raise ParameterError("--trace/--lanes/--multiplier", "given",
                                 "only with --on rtl (the model always checks every layer)")
        report = check_rubato_kat_files(args.files)
    if args.verbose or report.mismatches:
        for m in report.mismatches[:50]:
            console.print(f"mismatch: {m}")
    for note in getattr(report, "skipped", []) or []:
        console.print(f"skipped: {note}")
    print(f"{report.vectors_checked} vectors checked, {len(report.mismatches)} mismatches")
    return 1 if report.mismatches else 0


def cmd_ckks(args):
    from hhe_gen.models import ckks
    _check_on(args.on)
    p = _params(args.params)
    if args.op == "keygen":
        keys = ckks.keygen(p, _seed(args.seed))
        _write(keys.to_json(p), args.output)
        return 0
    keys = ckks.KeyPair.from_json(_load_json(args.keys, "--keys"), p)
    data = _load_json(args.input, "--in")
    if args.op == "encrypt":
        if not isinstance(data, dict) or "re" not in data:
            raise ParameterError("--in", args.input, 'slot values {"re": [...], "im": [...]}')
        re_, im_ = data["re"], data.get("im") or [0.0] * len(data["re"])
        if len(im_) != len(re_):
            raise ParameterError("im", f"<{len(im_)} values>", f"as many values as re ({len(re_)})")
        slots = [complex(a, b) for a, b in zip(re_, im_)]
        level = args.level if args.level is not None else None
        ct = ckks.encrypt_slots(p, keys, slots, _seed(args.seed), args.mode, level, args.form)
        _write(ct.to_json(), args.output)
        return 0
    ct = ckks.Ciphertext.from_json(data, p)
    slots = ckks.decrypt_slots(p, keys.sk, ct)
    _write({"re": [z.real for z in slots], "im": [z.imag for z in slots]}, args.output)
    return 0


def _int_list(text: str, what: str) -> list[int]:
    try:
        return [int(x, 0) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(what, text, "comma-separated integers (decimal or 0x hex)") from None


def cmd_generate(args):
    if args.core != "ntt":
        return _generate_fft(args)
    from hhe_gen.apps.generate import generate_ntt
    from hhe_gen.apps.report import console, print_table
    primes = _int_list(args.primes, "--primes") if args.primes else None
    res = generate_ntt(args.n, args.lanes, args.output, bits=args.bits, count=args.count, primes=primes,
                       reducer=args.reducer, banking=args.banking, twiddles=args.twiddles, arch=args.arch,
                       direction=args.direction, latency=args.latency, target=args.target, vectors=args.vectors,
                       seed=args.seed, name=args.name)
    m = res["manifest"]
    cyc = m["cycles"]
    rows = [("primes", ", ".join(str(p["q"]) for p in m["primes"]))]
    if "cycles_per_polynomial" in cyc:
        rows += [("cycles per polynomial (N/P)", cyc["cycles_per_polynomial"]),
                 ("bound (N/2)log2(N)/P", cyc["bound"]),
                 ("latency first in -> first out (fwd / inv)", f"{cyc['transform_forward']} / {cyc['transform_inverse']}")]
    elif "transform_forward" in cyc:
        rows += [("transform cycles (fwd / inv)", f"{cyc['transform_forward']} / {cyc['transform_inverse']}"),
                 ("bound (N/2)log2(N)/P", cyc["bound"]), ("ratio", cyc["ratio_to_bound"]),
                 ("command cycles (fwd)", cyc["command_forward"])]
    else:
        rows += [(k.replace("_", " "), v) for k, v in cyc.items() if isinstance(v, (int, float, str))]
    print_table(f"{m['core']} {args.arch} N={m['parameters']['n']} P={m['parameters']['lanes']} "
                f"({m['parameters']['reducer']})",
                ["item", "value"], [*rows, *[(k, v) for k, v in res["paths"].items() if v]])
    console.print(f"written to {args.output}")
    return 0


def _generate_fft(args):
    from hhe_gen.apps.generate_fft import generate_fft
    from hhe_gen.apps.report import console, print_table
    primes = _int_list(args.primes, "--primes") if args.primes else None
    res = generate_fft(args.core, args.n, args.lanes, args.output, width=args.width, frac_bits=args.frac_bits,
                       rounding=args.rounding, log_scale=args.log_scale, bits=args.bits,
                       count=args.count, primes=primes, latency=args.latency, target=args.target,
                       vectors=args.vectors, seed=args.seed, name=args.name)
    m = res["manifest"]
    cyc = m["cycles"]
    rows = [(k.replace("_", " "), v) for k, v in cyc.items() if isinstance(v, (int, float))]
    print_table(f"{args.core} N={args.n} P={args.lanes}", ["item", "value"],
                [*rows, *[(k, v) for k, v in res["paths"].items() if v]])
    console.print(f"written to {args.output}")
    return 0


def cmd_bench(args):
    from hhe_gen.apps import bench as benchmarks
    from hhe_gen.apps.report import bench_tables, console, write_json
    selected = benchmarks.cases(args.groups or None, quick=args.quick)
    results = []
    from rich.progress import Progress
    with Progress(console=console, transient=True) as progress:
        task = progress.add_task("benchmarks", total=len(selected))
        for case in selected:
            progress.update(task, description=f"{case.group}/{case.name}")
            results.append(benchmarks.run_case(case))
            progress.advance(task)
    for t in bench_tables(results):
        console.print(t)
    path = write_json(args.json, {"results": results})
    console.print(f"results written to {path}")
    return 1 if any("error" in r for r in results) else 0


def cmd_prove(args):
    from hhe_gen.apps import prove
    from hhe_gen.apps.report import console, write_json
    records = prove.run_proofs(args.groups or None, quick=args.quick, workdir=args.workdir,
                               timeout=args.timeout, names=args.only or None)
    # the table is wide: when writing to a file or pipe, do not squeeze it into 80 columns
    out = console
    if not console.is_terminal:
        from rich.console import Console
        out = Console(file=console.file, width=max(console.width, 200), highlight=False)
    out.print(prove.summary_table(records))
    path = write_json(args.json, {"results": records})
    console.print(f"results written to {path}")
    return 0 if all(r["ok"] for r in records) else 1


def cmd_demo(args):
    from hhe_gen.apps.demo import run_demo
    return run_demo(preset_name=args.preset, use_lattigo=not args.no_lattigo, seed=args.seed)


def cmd_doctor(args):
    from hhe_gen.apps.report import print_table
    from hhe_gen.flow.toolchain import check
    statuses = check()
    print_table("toolchain", ["tool", "found", "kind", "version", "compiled (YoWASP)", "note"],
                [(s.name, "yes" if s.found else "NO", s.kind or "-", s.version or "-",
                  {True: "yes", False: "not yet (first use compiles it)", None: "-"}.get(s.warm, "-"),
                  s.detail or "") for s in statuses])
    from hhe_gen.host.lattigo import LATTIGO_VERSION, go_available
    reason = go_available()
    print_table("Lattigo peer", ["item", "status"],
                [("go", "found" if reason is None else reason), ("lattigo", LATTIGO_VERSION)])
    return 0 if all(s.found for s in statuses) else 1


# -- parser ----------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="hhe-gen", description="Generator of client-side HHE hardware (RNS-CKKS + Rubato).")
    sub = ap.add_subparsers(dest="command", required=True)

    p = sub.add_parser("params", help="list presets, or show one preset's parameters and primes")
    p.add_argument("preset", nargs="?")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_params)

    p = sub.add_parser("primes", help="search primes of a given form")
    p.add_argument("--n", type=int, required=True, help="ring degree N")
    p.add_argument("--bits", type=int, required=True, help="bit length of the primes (k for dna-hhe)")
    p.add_argument("--count", type=int, default=4)
    p.add_argument("--form", choices=["ntt", "dna-hhe", "abc-fhe"], default="ntt")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_primes)

    p = sub.add_parser("kat", help="check known-answer-test files against the model")
    p.add_argument("cipher", choices=["rubato"])
    p.add_argument("files", nargs="+")
    p.add_argument("--on", default="model", help="model | rtl (the Rubato core in simulation)")
    p.add_argument("--trace", action="store_true", help="rtl: compare every layer's state too")
    p.add_argument("--lanes", type=int, help="rtl: lanes of the Rubato core (default 2)")
    p.add_argument("--multiplier", help="rtl: barrett (default) | butterfly (the multi-field butterfly's Z_t mode)")
    p.add_argument("--verbose", action="store_true")
    p.set_defaults(func=cmd_kat)

    p = sub.add_parser("ckks", help="CKKS key generation, encryption and decryption on interchange JSON")
    p.add_argument("op", choices=["keygen", "encrypt", "decrypt"])
    p.add_argument("--params", default="dna-hhe", help="preset name or parameters JSON file")
    p.add_argument("--keys", help="keys JSON (encrypt, decrypt)")
    p.add_argument("--in", dest="input", help="slots JSON (encrypt) or ciphertext JSON (decrypt)")
    p.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    p.add_argument("--seed", help="seed for reproducible randomness (default: fresh)")
    p.add_argument("--mode", choices=["pk", "sk"], default="pk", help="public- or secret-key encryption")
    p.add_argument("--form", choices=["coeff", "ntt"], default="coeff", help="ciphertext form")
    p.add_argument("--level", type=int, help="encryption level (default: top)")
    p.add_argument("--on", default="model", help="model (rtl arrives with the hardware)")
    p.set_defaults(func=cmd_ckks)

    p = sub.add_parser("generate", help="write a core's Verilog, JSON manifest and model test vectors")
    p.add_argument("core", choices=["ntt", "ifft", "fft", "encoder", "decoder"])
    p.add_argument("--n", type=int, required=True, help="ring degree N (NTT 2^3 .. 2^16; FFT/codec 2^4 .. 2^16)")
    p.add_argument("--lanes", type=int, default=2, help="butterfly lanes P (power of two)")
    p.add_argument("--bits", type=int, help="prime width (search --count primes of the reducer's form)")
    p.add_argument("--count", type=int, default=1, help="number of primes to search")
    p.add_argument("--primes", help="explicit primes, comma-separated (instead of --bits/--count)")
    p.add_argument("--reducer", default="barrett", help="barrett | montgomery | special-barrett | ntt-montgomery")
    p.add_argument("--banking", default="dual", help="dual | single")
    p.add_argument("--twiddles", default="rom", help="rom | otf (two small tables per prime and lane)")
    p.add_argument("--arch", default="iterative", help="NTT: iterative | sdf | mdc (pipelined, N/P cycles "
                   "per polynomial)")
    p.add_argument("--direction", default="both", help="sdf/mdc: both | forward | inverse (a pipelined core "
                   "has one direction: both writes <name>_fwd and <name>_inv)")
    p.add_argument("--width", type=int, default=29, help="FFT/codec: fixed-point width W")
    p.add_argument("--frac-bits", type=int, default=26, help="FFT/codec: fraction bits")
    p.add_argument("--rounding", default="half-up", help="FFT/codec: half-up | half-even")
    p.add_argument("--log-scale", type=int, help="encoder/decoder: Delta = 2^log_scale")
    p.add_argument("--latency", type=int, help="butterfly latency (default: the butterfly's)")
    p.add_argument("--target", default="ecp5", help="ecp5 | xilinx | generic (DSP tile size)")
    p.add_argument("--vectors", type=int, default=2, help="test polynomials per prime and direction")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--name", help="Verilog module name")
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.set_defaults(func=cmd_generate)

    p = sub.add_parser("bench", help="run benchmarks, write JSON and a table")
    p.add_argument("groups", nargs="*")
    p.add_argument("--quick", action="store_true", help="only the CI-sized cases")
    p.add_argument("--json", default="bench-results/bench.json")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("prove", help="run the formal proofs (z3 bounds, SymbiYosys harnesses), print a table")
    p.add_argument("groups", nargs="*")
    p.add_argument("--quick", action="store_true", help="only the CI-sized proofs")
    p.add_argument("--json", default="prove-results/prove.json")
    p.add_argument("--workdir", default="prove-results/work", help="harnesses, .sby files and traces")
    p.add_argument("--timeout", type=float, help="seconds per tool run")
    p.add_argument("--only", nargs="+", metavar="NAME", help="run only these proofs (name or group/name)")
    p.set_defaults(func=cmd_prove)

    p = sub.add_parser("demo", help="the main job: keys, CKKS encryption, decryption by Lattigo, a Rubato block")
    p.add_argument("--preset", default="dna-hhe")
    p.add_argument("--no-lattigo", action="store_true", help="decrypt with the model even if Go is present")
    p.add_argument("--seed", type=int, default=2026)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("doctor", help="check the external tools")
    p.set_defaults(func=cmd_doctor)
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if getattr(args, "op", None) in ("encrypt", "decrypt") and (not args.keys or not args.input):
        print(f"hhe-gen ckks {args.op}: error: --keys and --in are required", file=sys.stderr)
        return 2
    try:
        return args.func(args)
    except ParameterError as exc:
        print(f"hhe-gen: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
