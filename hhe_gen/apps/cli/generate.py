"""``hhe-gen generate``: a core's Verilog, manifest, test vectors and testbench."""

from .common import SEED_RULE, int_list


def cmd_generate(args):
    if args.core != "ntt":
        return _generate_fft(args)
    from hhe_gen.apps.generate import generate_ntt
    from hhe_gen.apps.report import console, print_table
    from hhe_gen.params.ckks import check_ring_degree
    check_ring_degree(args.n, "--n")   # the NTT core's N rule, before any prime search
    primes = int_list(args.primes, "--primes") if args.primes else None
    res = generate_ntt(args.n, args.lanes, args.output, bits=args.bits, count=args.count, primes=primes,
                       reducer=args.reducer, banking=args.banking, twiddles=args.twiddles, arch=args.arch,
                       direction=args.direction, latency=args.latency, target=args.target, vectors=args.vectors,
                       seed=args.seed, name=args.name, keep_src=args.keep_src)
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
    primes = int_list(args.primes, "--primes") if args.primes else None
    res = generate_fft(args.core, args.n, args.lanes, args.output, width=args.width, frac_bits=args.frac_bits,
                       rounding=args.rounding, log_scale=args.log_scale, bits=args.bits,
                       count=args.count, primes=primes, latency=args.latency, target=args.target,
                       vectors=args.vectors, seed=args.seed, name=args.name, keep_src=args.keep_src)
    m = res["manifest"]
    cyc = m["cycles"]
    rows = [(k.replace("_", " "), v) for k, v in cyc.items() if isinstance(v, (int, float))]
    print_table(f"{args.core} N={args.n} P={args.lanes}", ["item", "value"],
                [*rows, *[(k, v) for k, v in res["paths"].items() if v]])
    console.print(f"written to {args.output}")
    return 0


def register(sub) -> None:
    """Add this module's sub-commands to the ``hhe-gen`` parser."""
    p = sub.add_parser("generate", help="write a core's Verilog, JSON manifest and model test vectors")
    p.add_argument("core", choices=["ntt", "ifft", "fft", "encoder", "decoder"], help="the core to generate")
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
    p.add_argument("--seed", default=1, help=f"seed of the test vectors, {SEED_RULE} (default 1)")
    p.add_argument("--name", help="Verilog module name")
    p.add_argument("--keep-src", action="store_true", help="keep Amaranth's src attributes (absolute paths of "
                   "this machine) in the Verilog; default: reproducible output without them")
    p.add_argument("-o", "--output", required=True, help="output directory")
    p.set_defaults(func=cmd_generate)
