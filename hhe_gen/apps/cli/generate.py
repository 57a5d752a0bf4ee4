"""``hhe-gen generate``: a core's Verilog, manifest, test vectors and testbench."""

from .common import NTT_MEMORY, SEED_RULE, int_list


def cmd_generate(args):
    if args.core == "accel":
        return _generate_accel(args)
    if args.n is None:
        from hhe_gen.params.errors import ParameterError
        raise ParameterError("--n", None, f"a ring degree (required for generate {args.core})")
    if args.core != "ntt":
        return _generate_fft(args)
    from hhe_gen.apps.generate import generate_ntt
    from hhe_gen.apps.report import console, print_table
    from hhe_gen.params.ckks import check_ring_degree
    check_ring_degree(args.n, "--n")   # the NTT core's N rule, before any prime search
    primes = int_list(args.primes, "--primes") if args.primes else None
    res = generate_ntt(args.n, args.lanes, args.output, bits=args.bits, count=args.count, primes=primes,
                       reducer=args.reducer or "barrett", banking=args.banking, twiddles=args.twiddles or "rom", arch=args.arch,
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
    res = generate_fft(args.core, args.n, args.lanes, args.output,
                       width=29 if args.width is None else args.width,
                       frac_bits=26 if args.frac_bits is None else args.frac_bits,
                       rounding=args.rounding or "half-up", log_scale=args.log_scale, bits=args.bits,
                       count=args.count, primes=primes, latency=args.latency, target=args.target,
                       vectors=args.vectors, seed=args.seed, name=args.name, keep_src=args.keep_src)
    m = res["manifest"]
    cyc = m["cycles"]
    rows = [(k.replace("_", " "), v) for k, v in cyc.items() if isinstance(v, (int, float))]
    print_table(f"{args.core} N={args.n} P={args.lanes}", ["item", "value"],
                [*rows, *[(k, v) for k, v in res["paths"].items() if v]])
    console.print(f"written to {args.output}")
    return 0


def _generate_accel(args):
    from hhe_gen.engine.generate_accel import generate_accel
    from hhe_gen.apps.report import console, print_table
    from hhe_gen.params.errors import ParameterError

    from .configure import config_from_args, option_names
    if args.n is not None:
        raise ParameterError("--n", args.n, "not used by generate accel: N comes from --params")
    config = config_from_args(args)
    fmt = config.slot_format
    with option_names():
        res = generate_accel(config, args.output, name=args.name, keep_src=args.keep_src,
                             testbench=args.vectors > 0, seed=args.seed)
    m = res["manifest"]
    par, plan = m["parameters"], m["memory_plan"]
    rows = [("N, primes", f"{par['n']}, " + " ".join(str(p["q"]) for p in m["primes"])),
            ("lanes, buffers, window", f"{par['lanes']}, {par['buffers']}, {par['window']} ({par['dispatch']})"),
            ("slot format W/F", f"{fmt[0]}/{fmt[1]}"),
            ("units", ", ".join(m["isa"]["shape"]["units"]) + (f" (Rubato {par['rubato']})" if par["rubato"] else "")),
            (f"block RAM on {plan['device']}", f"{plan['dp16kd']} DP16KD / {plan['bram36']} BRAM36: "
             f"{plan['left']} left ({'fits' if plan['fits'] else 'does NOT fit'})"),
            *[(f"program {k}", f"{v['instructions']} instructions") for k, v in m["programs"].items()],
            *[(k, v) for k, v in res["paths"].items() if v]]
    print_table(f"accel {par['preset'] or ''} N={par['n']} P={par['lanes']}", ["item", "value"], rows)
    console.print(f"written to {args.output}")
    return 0


def register(sub) -> None:
    """Add this module's sub-commands to the ``hhe-gen`` parser."""
    p = sub.add_parser("generate", help="write a core's Verilog, JSON manifest and model test vectors")
    p.add_argument("core", choices=["ntt", "ifft", "fft", "encoder", "decoder", "accel"],
                   help="the core to generate (accel: the whole CKKS client engine with its programs)")
    p.add_argument("--n", type=int, help="ring degree N (NTT 2^3 .. 2^16; FFT/codec 2^4 .. 2^16; "
                   "not for accel)")
    p.add_argument("--params", help="accel: preset name or parameters JSON file (default: dna-hhe)")
    p.add_argument("--buffers", type=int, help="accel: polynomial buffers (default: what every client "
                   "program needs at the top level)")
    p.add_argument("--window", type=int, default=16, help="accel: task window entries (default 16)")
    p.add_argument("--rubato", metavar="SET", help="accel: dual mode, with the Rubato unit for this set "
                   "(Par-80S .. Par-128L, or 128s ...; default: CKKS only)")
    p.add_argument("--in-order", action="store_true", help="accel: in-order dispatch (default out-of-order)")
    p.add_argument("--device", default="LFE5UM5G-85F", help="accel: the part of the block-RAM plan")
    p.add_argument("--lanes", type=int, default=2, help="butterfly lanes P (power of two)")
    p.add_argument("--bits", type=int, help="prime width (search --count primes of the reducer's form)")
    p.add_argument("--count", type=int, default=1, help="number of primes to search")
    p.add_argument("--primes", help="explicit primes, comma-separated (instead of --bits/--count)")
    p.add_argument("--reducer", help="barrett | montgomery | special-barrett | ntt-montgomery (default barrett; "
                   "accel: special-barrett when every prime has DNA-HHE's form, else barrett)")
    p.add_argument("--banking", default="dual", help="dual | single")
    p.add_argument("--twiddles", help="rom | otf (two small tables per prime and lane); default rom, "
                   "accel otf")
    p.add_argument("--ntt", default="auto", choices=list(NTT_MEMORY), help="accel: the NTT in place in "
                   "banked buffers or streaming through its own banks (default auto: in place when that "
                   "needs no more block RAM)")
    p.add_argument("--arch", default="iterative", help="NTT: iterative | sdf | mdc (pipelined, N/P cycles "
                   "per polynomial)")
    p.add_argument("--direction", default="both", help="sdf/mdc: both | forward | inverse (a pipelined core "
                   "has one direction: both writes <name>_fwd and <name>_inv)")
    p.add_argument("--width", type=int, help="FFT/codec/accel: fixed-point width W (default 29, accel 38)")
    p.add_argument("--frac-bits", type=int, help="FFT/codec/accel: fraction bits (default 26, accel 36)")
    p.add_argument("--rounding", default=None, choices=["half-up", "half-even", "truncate"],
                   help="FFT/codec/accel: how the shifts round (default half-up, accel half-even)")
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
